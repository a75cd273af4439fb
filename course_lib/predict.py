"""Predictions: how long a collective takes on a given machine, the way NCCL plans it.

:func:`cluster` describes a machine (GPU model, NVLink fabric, nodes, NICs);
:func:`predict_collective` returns the time, algbw and busbw of a collective
on it, choosing the algorithm (ring, tree, NVLS, hierarchical) and protocol
(LL, LL128, Simple) the way NCCL does: the fastest by its own model.

The model (chapter 7)
---------------------
For each algorithm ``a`` and protocol ``p`` the time of a collective of
``S`` bytes (the nccl-tests size) on ``n`` ranks is

``t = t_launch + L(a, p) + W / B(a, p) + F(a, p, S)``

* ``t_launch`` -- the fixed cost NCCL's own model leaves out: kernel launch
  and the start/end synchronisation of all ranks (``CALIBRATION["launch_s"]``,
  fitted: 28 us).  Measured small-message floors are 2-3x NCCL's estimates
  because of this term.
* ``L(a, p)`` -- NCCL's latency: ``base + steps x per-hop latency`` with the
  hop latency by link kind (NVLink, PCIe, network), from
  ``NVIDIA/nccl:src/graph/tuning.cc (v2.20.3)`` (``hardware.NCCL_TUNING``).
  A ring AllReduce has ``2(n-1)`` steps, ``2 x nodes`` of them across the
  network; a tree ``2 (gpus_per_node - 1)`` intra-node hops plus
  ``2 log2(nodes)`` network hops; NVLS one in-switch round
  (``CALIBRATION["nvls_latency_s"]``, fitted, 6 us -- NCCL plans 23 us).
* ``W / B`` -- the bytes each rank puts on its busiest link (ring AllReduce
  ``2(n-1)/n S``; AllGather/ReduceScatter ``(n-1)/n S``; tree ``2 S``; NVLS
  ``S``) over the bandwidth: links x NCCL's per-link planning rate
  (``hardware.NCCL_LINK_BW``: 20 GB/s per NVLink on A100, 20.6 on H100)
  x the protocol's efficiency (LL 1/4, LL128 0.92, Simple 0.98).  Across
  nodes a ring is limited by ``min(NVLink ring, NICs per node x NIC rate x
  0.96)``: NCCL runs one ring per NIC, each crossing the network once.
* ``F`` -- pipeline exposure: each of the algorithm's ``P`` sequential steps
  exposes the time of one slice, ``P x min(c, S/n) / B`` with
  ``c = CALIBRATION["chunk_bytes"]`` (fitted, 2 MB).  Small messages have
  small slices (no cost), large ones reach the cap ``c`` (a constant cost,
  negligible at GB sizes); in between (1-256 MB) it is what keeps busbw
  well below its plateau, which a constant latency cannot do.

"auto" evaluates every (algorithm, protocol) the cluster allows and keeps
the fastest, as NCCL does with its own table -- but with the terms above,
so it can pick differently from NCCL where NCCL's estimates are off.

What it does not capture: NCCL's exact channel and thread counts, its
runtime tuner plugins, PXN routing, rail-optimised vs fat-tree fabrics,
congestion in the network beyond the NIC rate, clock/power throttling,
and CollNet/SHARP in the IB switches.  Multi-node NVLS is modelled as
hierarchical (NVLS inside nodes, ring across).  The constants were fitted on
two single-node 8-GPU machines; across nodes the network terms come from
NCCL and the port rates, not from measurements.

Examples
--------
>>> h100 = cluster("H100")
>>> p = predict_collective("allreduce", 2**30, h100)
>>> p.algorithm, p.protocol
('nvls', 'simple')
>>> 440e9 < p.busbw_bytes_per_s < 500e9
True
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass, field

from .analytic import COLLECTIVES, busbw_factor
from .hardware import NCCL_LINK_BW, calibration, gpu as _gpu, latency_s, nccl_tuning
from .hardware import nic as _nic
from .hardware import pcie_bw_per_dir_bytes_per_s, pcie_generation
from .topology import BRIDGE_LINKS
from .units import (check_choice, check_int, check_positive, format_bytes,
                    parse_size)

__all__ = ["FABRICS", "PREDICT_ALGORITHMS", "PROTOCOLS", "Cluster", "cluster",
           "Prediction", "predict_collective", "predict_copy", "CopyPrediction",
           "main", "calibration_curves", "calibration_data_path",
           "CALIBRATION_SYSTEMS"]

#: Fabrics inside one node.
FABRICS = ("nvswitch", "mesh", "cube-mesh", "pcie", "bridge")
#: Algorithms accepted by :func:`predict_collective`.
PREDICT_ALGORITHMS = ("auto", "ring", "tree", "nvls", "hierarchical", "direct")
#: NCCL's protocols.
PROTOCOLS = ("ll", "ll128", "simple")

_NVLS_MIN_SM = 90


@dataclass(frozen=True)
class Cluster:
    """A machine or a cluster of identical nodes.  Build it with :func:`cluster`.

    Attributes are the arguments of :func:`cluster`, checked and normalised.
    """

    gpu: str
    gpus_per_node: int
    nodes: int
    fabric: str
    nic: str | None
    nics_per_node: int

    # --- derived quantities ----------------------------------------------
    @property
    def n_ranks(self) -> int:
        """Total number of GPUs (ranks)."""
        return self.gpus_per_node * self.nodes

    @property
    def gpu_record(self):
        return _gpu(self.gpu)

    @property
    def nvls_capable(self) -> bool:
        """True where the NVSwitch can reduce in the switch (NVLink SHARP: H100 and later)."""
        return self.fabric == "nvswitch" and self.gpu_record.sm_arch >= _NVLS_MIN_SM

    @property
    def intra_link_kind(self) -> str:
        """``"nvlink"`` or ``"pcie"``: what GPUs of one node talk over."""
        return "pcie" if self.fabric == "pcie" else "nvlink"

    def nvlinks_per_gpu_used(self) -> int:
        """NVLink links of one GPU that the node's rings can use."""
        g = self.gpu_record
        if self.fabric == "bridge":
            return BRIDGE_LINKS[g.name]
        if self.fabric == "mesh":
            return (g.nvlink_links // (self.gpus_per_node - 1)) * (self.gpus_per_node - 1)
        return g.nvlink_links

    def intra_bw_bytes_per_s(self) -> float:
        """NCCL's planning bandwidth of one GPU inside a node, per direction.

        NVLink fabrics: links used x NCCL's per-link rate (``NCCL_LINK_BW``);
        PCIe: NCCL's PCIe planning rate (width x speed / 80: 12/24/48 GB/s
        for Gen3/4/5 x16).
        """
        g = self.gpu_record
        if self.fabric == "pcie":
            rec = pcie_generation(g.pcie_gen)
            if rec.nccl_planning_x16_bytes_per_s is not None:
                return rec.nccl_planning_x16_bytes_per_s
            return rec.per_dir_bytes_per_s(16) * calibration("pcie_dma_efficiency")
        return self.nvlinks_per_gpu_used() * NCCL_LINK_BW[g.sm_arch].value

    def nic_bw_bytes_per_s(self) -> float:
        """Payload rate of one NIC, per direction: ``min(port x 0.96, PCIe x 0.87)``.

        A NIC sits on the GPU's PCIe link (GPUDirect RDMA), so an 800 Gb/s
        port behind PCIe Gen5 x16 is limited by PCIe.
        """
        if self.nic is None:
            return 0.0
        port = _nic(self.nic).bw_per_dir_bytes_per_s * calibration("net_efficiency")
        pcie = (pcie_bw_per_dir_bytes_per_s(self.gpu_record.pcie_gen)
                * calibration("pcie_dma_efficiency"))
        return min(port, pcie)

    def inter_bw_bytes_per_s(self) -> float:
        """What one node can send to the network, per direction (all its NICs)."""
        return self.nics_per_node * self.nic_bw_bytes_per_s()

    def topology(self):
        """This machine as a :mod:`course_lib.topology` graph (raw hardware rates)."""
        from . import topology as T

        g = self.gpu_record.name
        if self.nodes > 1:
            if self.fabric != "nvswitch":
                raise ValueError(f"topology() builds multi-node clusters only for "
                                 f"fabric='nvswitch'; got fabric={self.fabric!r}")
            return T.two_level_topology(self.nodes, self.gpus_per_node, gpu=g,
                                        nic=self.nic, nics_per_node=self.nics_per_node)
        if self.fabric == "nvswitch":
            return T.nvswitch_topology(self.gpus_per_node, gpu=g)
        if self.fabric == "mesh":
            per_pair = self.gpu_record.nvlink_links // (self.gpus_per_node - 1)
            return T.fully_connected_topology(self.gpus_per_node, per_pair, gpu=g)
        if self.fabric == "cube-mesh":
            return T.hybrid_cube_mesh_topology(gpu=g)
        if self.fabric == "pcie":
            return T.pcie_topology(self.gpus_per_node, gpu=g)
        return T.bridge_topology(gpu=g)

    def describe(self) -> str:
        net = "" if self.nodes == 1 else f", {self.nics_per_node}x {self.nic} per node"
        return (f"{self.nodes} node(s) x {self.gpus_per_node} {self.gpu} "
                f"({self.fabric}{net})")




def cluster(gpu: str = "H100", gpus_per_node: int = 8, nodes: int = 1,
            fabric: str = "nvswitch", nic: str | None = None,
            nics_per_node: int = 0) -> Cluster:
    """Describe a machine or a cluster of identical nodes.

    Parameters
    ----------
    gpu : str
        Catalog GPU (``"P100"`` ... ``"B200"``).
    gpus_per_node : int
        GPUs in one node (one NVLink domain).
    nodes : int
        Number of nodes, >= 1.
    fabric : {"nvswitch", "mesh", "cube-mesh", "pcie", "bridge"}
        How the GPUs of a node are wired: NVSwitch; NVLink full mesh (e.g.
        4x A100, links split evenly over the peers); the DGX-1 hybrid
        cube-mesh (8x P100/V100); PCIe only; two GPUs on an NVLink bridge.
    nic : str, optional
        NIC port type from ``hardware.NICS`` (``"EDR"``, ``"HDR"``,
        ``"NDR"``, ``"XDR"``, ``"RoCE-400"``...); needed when ``nodes > 1``.
    nics_per_node : int
        NICs per node; 0 with a ``nic`` means one per GPU (as on DGX H100).

    Examples
    --------
    >>> c = cluster("H100", nodes=4, nic="NDR", nics_per_node=8)
    >>> c.n_ranks, c.inter_bw_bytes_per_s() / 1e9
    (32, 384.0)
    >>> cluster("A100", nodes=2)
    Traceback (most recent call last):
    ...
    ValueError: nic must be given when nodes > 1 (one of ['EDR', 'HDR', 'NDR', 'XDR', 'RoCE-100', 'RoCE-200', 'RoCE-400'])
    """
    try:
        rec = _gpu(gpu)
    except ValueError:
        from .hardware import gpu_names
        raise ValueError(f"gpu must be one of {gpu_names()}; got {gpu!r}") from None
    g = check_int(gpus_per_node, "gpus_per_node", minimum=1, maximum=576)
    nodes = check_int(nodes, "nodes", minimum=1, maximum=65_536)
    fabric = check_choice(fabric, "fabric", FABRICS)
    nics_per_node = check_int(nics_per_node, "nics_per_node", minimum=0, maximum=576)
    from .hardware import nic_names

    if nic is None:
        if nodes > 1:
            raise ValueError(f"nic must be given when nodes > 1 (one of {nic_names()})")
        if nics_per_node:
            raise ValueError("nics_per_node > 0 needs a nic (e.g. nic='NDR')")
    else:
        nic = _nic(nic).name
        if nics_per_node == 0:
            nics_per_node = g
        if nics_per_node > g:
            raise ValueError(f"nics_per_node must be <= gpus_per_node ({g}); "
                             f"got {nics_per_node}")
    if fabric == "cube-mesh":
        if g != 8 or rec.name not in ("P100", "V100"):
            raise ValueError(f"fabric='cube-mesh' is the DGX-1: gpus_per_node=8 and "
                             f"gpu 'P100' or 'V100'; got gpus_per_node={g}, "
                             f"gpu={rec.name!r}")
    elif fabric == "bridge":
        if g != 2:
            raise ValueError(f"fabric='bridge' joins exactly 2 GPUs: gpus_per_node "
                             f"must be 2, got {g}")
        if rec.name not in BRIDGE_LINKS:
            raise ValueError(f"fabric='bridge' needs a GPU sold with an NVLink bridge "
                             f"(A100, H100); got gpu={rec.name!r}")
    elif fabric == "mesh":
        if g < 2 or rec.nvlink_links < g - 1:
            raise ValueError(f"fabric='mesh' needs 2 <= gpus_per_node <= "
                             f"{rec.nvlink_links + 1} ({rec.name} has "
                             f"{rec.nvlink_links} NVLinks); got {g}")
    elif fabric == "nvswitch" and rec.name == "P100":
        raise ValueError("fabric='nvswitch' needs V100 or later (there is no "
                         "P100 NVSwitch system); use fabric='cube-mesh'")
    return Cluster(rec.name, g, nodes, fabric, nic, nics_per_node)


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Prediction:
    """A predicted collective, in nccl-tests' terms.

    ``time_s`` = ``launch_s + latency_s + transfer_s + pipeline_s``.
    """

    collective: str
    n_bytes: float
    n_ranks: int
    time_s: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    algorithm: str
    protocol: str
    bw_bytes_per_s: float = 0.0
    launch_s: float = 0.0
    latency_s: float = 0.0
    transfer_s: float = 0.0
    pipeline_s: float = 0.0
    candidates: dict = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("candidates")
        return d


def _hop(algo: str, proto: str, kind: str) -> float:
    return nccl_tuning(f"{algo}_{proto}_hop_{kind}")


def _proto_bw(bw: float, proto: str, cl: Cluster) -> float:
    """Bandwidth after protocol overheads (NCCL tuning.cc refinements)."""
    if proto == "ll":
        cap = nccl_tuning("ll_max_bw_sm80" if cl.gpu_record.sm_arch >= 80
                          else "ll_max_bw_sm70")
        return min(bw * nccl_tuning("ll_efficiency"), cap)
    if proto == "ll128":
        return bw * nccl_tuning("ll128_efficiency")
    return bw * calibration("simple_efficiency")


def _protocols(cl: Cluster) -> tuple[str, ...]:
    # LL128 only over NVLink on SM70-SM90 (tuning.cc: other cases untested).
    if cl.intra_link_kind == "nvlink" and cl.gpu_record.sm_arch in (70, 80, 90):
        return PROTOCOLS
    return ("ll", "simple")


def _ring(coll, s, cl, proto):
    n, nodes = cl.n_ranks, cl.nodes
    bw = cl.intra_bw_bytes_per_s()
    if nodes > 1:
        bw = min(bw, cl.inter_bw_bytes_per_s())
    b = _proto_bw(bw, proto, cl)
    c = calibration("chunk_bytes")
    intra_kind = cl.intra_link_kind
    if coll == "allreduce":
        steps, inter = 2 * (n - 1), (2 * nodes if nodes > 1 else 0)
        wire, slice_ = 2 * (n - 1) / n * s, s / n
    elif coll in ("allgather", "reducescatter"):
        steps, inter = n - 1, nodes - 1
        wire, slice_ = (n - 1) / n * s, s / n
    else:  # broadcast, reduce: a pipelined chain
        steps, inter = n - 1, nodes - 1
        wire, slice_ = s, s
    lat = nccl_tuning(f"ring_{proto}_base") + (steps - inter) * _hop("ring", proto, intra_kind) \
        + inter * _hop("ring", proto, "net")
    fill = steps * min(c, slice_) / b
    return lat, wire / b, fill, b


def _tree(coll, s, cl, proto):
    g, nodes = cl.gpus_per_node, cl.nodes
    bw = cl.intra_bw_bytes_per_s()
    if nodes > 1:
        bw = min(bw, cl.inter_bw_bytes_per_s())
    b = _proto_bw(bw, proto, cl) * nccl_tuning("tree_efficiency")
    depth = (g - 1) + math.ceil(math.log2(nodes)) if nodes > 1 else g - 1
    lat = nccl_tuning(f"tree_{proto}_base") + 2 * (
        (g - 1) * _hop("tree", proto, cl.intra_link_kind)
        + math.ceil(math.log2(nodes)) * _hop("tree", proto, "net"))
    fill = 2 * max(depth, 1) * min(calibration("chunk_bytes"), s) / b
    return lat, 2 * s / b, fill, b


def _nvls_intra(coll, s, cl):
    n = cl.gpus_per_node
    b = cl.intra_bw_bytes_per_s() * calibration("nvls_efficiency")
    wire = s if coll == "allreduce" else (n - 1) / n * s
    fill = 3 * min(calibration("chunk_bytes"), s / n) / b
    return calibration("nvls_latency_s"), wire / b, fill, b


def _hierarchical(coll, s, cl, intra="ring"):
    """Intra-node ReduceScatter, inter-node AllReduce on S/g, intra-node AllGather."""
    g, nodes = cl.gpus_per_node, cl.nodes
    c = calibration("chunk_bytes")
    proto = "simple"
    if intra == "nvls":
        lat_i, tr_i, fill_i, b_i = _nvls_intra("reducescatter", s, cl)
        lat_i, tr_i, fill_i = 2 * lat_i, 2 * tr_i, 2 * fill_i
    else:
        b_i = _proto_bw(cl.intra_bw_bytes_per_s(), proto, cl)
        steps = 2 * (g - 1)
        lat_i = steps * _hop("ring", proto, cl.intra_link_kind)
        tr_i = 2 * (g - 1) / g * s / b_i
        fill_i = steps * min(c, s / g) / b_i
    # inter-node: g rails in parallel, each a ring over the nodes on S/g;
    # one rail gets nics_per_node/g of the node's network bandwidth
    b_x = _proto_bw(cl.inter_bw_bytes_per_s() / g, proto, cl)
    part = s / g
    steps_x = 2 * (nodes - 1)
    lat_x = steps_x * _hop("ring", proto, "net")
    tr_x = 2 * (nodes - 1) / nodes * part / b_x
    fill_x = steps_x * min(c, part / nodes) / b_x
    lat = nccl_tuning("ring_simple_base") + lat_i + lat_x
    b_eff = s / (tr_i + tr_x) * (2 * (cl.n_ranks - 1) / cl.n_ranks) if tr_i + tr_x else 0.0
    return lat, tr_i + tr_x, fill_i + fill_x, b_eff


def _direct_alltoall(s, cl):
    n, g, nodes = cl.n_ranks, cl.gpus_per_node, cl.nodes
    b_i = _proto_bw(cl.intra_bw_bytes_per_s(), "simple", cl)
    t_intra = (g - 1) / n * s / b_i
    t_inter = 0.0
    kind = cl.intra_link_kind
    if nodes > 1:
        b_x = _proto_bw(cl.inter_bw_bytes_per_s() / g, "simple", cl)
        t_inter = (n - g) / n * s / b_x
        kind = "net"
    lat = nccl_tuning("ring_simple_base") + _hop("ring", "simple", kind)
    b = s * (n - 1) / n / max(t_intra, t_inter) if max(t_intra, t_inter) > 0 else b_i
    return lat, max(t_intra, t_inter), 0.0, b


def _candidates(coll, s, cl, algorithm):
    """(algorithm, protocol) -> (latency, transfer, fill, bandwidth)."""
    n = cl.n_ranks
    out = {}
    algos = [algorithm] if algorithm != "auto" else ["ring", "tree", "nvls",
                                                     "hierarchical", "direct"]
    for a in algos:
        if a == "direct":
            if coll == "alltoall":
                out[(a, "simple")] = _direct_alltoall(s, cl)
            elif algorithm == "direct":
                raise ValueError("algorithm='direct' is for collective='alltoall'; "
                                 f"got collective={coll!r}")
            continue
        if coll == "alltoall":
            if algorithm == a:
                raise ValueError(f"collective='alltoall' uses algorithm 'direct' "
                                 f"(or 'auto'); got algorithm={a!r}")
            continue
        if a == "ring":
            for p in _protocols(cl):
                out[(a, p)] = _ring(coll, s, cl, p)
        elif a == "tree":
            if coll != "allreduce" or n < 3:
                if algorithm == "tree":
                    raise ValueError(f"algorithm='tree' supports collective="
                                     f"'allreduce' on >= 3 ranks (as NCCL); got "
                                     f"collective={coll!r}, {n} ranks")
                continue
            for p in _protocols(cl):
                out[(a, p)] = _tree(coll, s, cl, p)
        elif a == "nvls":
            if not cl.nvls_capable:
                if algorithm == "nvls":
                    raise ValueError(
                        f"algorithm='nvls' needs in-switch reduction (NVLink SHARP): "
                        f"fabric='nvswitch' with H100/H200/B200; this cluster is "
                        f"{cl.gpu} on {cl.fabric!r}")
                continue
            if coll not in ("allreduce", "allgather", "reducescatter"):
                if algorithm == "nvls":
                    raise ValueError(f"algorithm='nvls' supports allreduce, allgather "
                                     f"and reducescatter; got collective={coll!r}")
                continue
            if cl.nodes == 1:
                out[(a, "simple")] = _nvls_intra(coll, s, cl)
            elif coll == "allreduce":
                out[(a, "simple")] = _hierarchical(coll, s, cl, intra="nvls")
            elif algorithm == "nvls":
                raise ValueError("algorithm='nvls' across nodes is modelled for "
                                 "allreduce only")
        elif a == "hierarchical":
            if cl.nodes < 2 or coll != "allreduce":
                if algorithm == "hierarchical":
                    raise ValueError(f"algorithm='hierarchical' needs nodes > 1 and "
                                     f"collective='allreduce'; got nodes={cl.nodes}, "
                                     f"collective={coll!r}")
                continue
            out[(a, "simple")] = _hierarchical(coll, s, cl)
    return out


def predict_collective(collective: str, n_bytes: float, cluster: Cluster,
                       algorithm: str = "auto") -> Prediction:
    """Predict a collective's time, algbw and busbw on a cluster.

    Parameters
    ----------
    collective : str
        ``"allreduce"``, ``"allgather"``, ``"reducescatter"``, ``"broadcast"``,
        ``"reduce"`` or ``"alltoall"`` (nccl-tests names).
    n_bytes : float
        The nccl-tests size S, bytes (> 0).
    cluster : Cluster
        From :func:`cluster`.
    algorithm : {"auto", "ring", "tree", "nvls", "hierarchical", "direct"}
        ``"auto"`` picks the fastest (algorithm, protocol) by the model.

    Returns
    -------
    Prediction
        ``time_s``, ``algbw_bytes_per_s = S / t``, ``busbw_bytes_per_s =
        algbw x busbw_factor`` (nccl-tests), ``algorithm``, ``protocol`` and
        the parts of the time.

    Notes
    -----
    ``t = t_launch + L + W/B + P min(c, S/n)/B`` -- see the module docstring
    for each term and its source.  Chapter 7.

    Examples
    --------
    >>> a100 = cluster("A100")
    >>> p = predict_collective("allreduce", 16 * 2**30, a100)
    >>> p.algorithm, round(p.busbw_bytes_per_s / 1e9)
    ('ring', 235)
    """
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster from course_lib.cluster(...), "
                        f"got {type(cluster).__name__}")
    coll = check_choice(collective, "collective", COLLECTIVES)
    s = check_positive(n_bytes, "n_bytes")
    algo = check_choice(algorithm, "algorithm", PREDICT_ALGORITHMS)
    n = cluster.n_ranks
    if n == 1:
        raise ValueError("cluster has a single GPU: a collective needs >= 2 ranks")
    cands = _candidates(coll, s, cluster, algo)
    if not cands:
        raise ValueError(f"no algorithm available for collective={coll!r} on "
                         f"{cluster.describe()}")
    launch = calibration("launch_s")
    times = {k: launch + sum(v[:3]) for k, v in cands.items()}
    best = min(times, key=times.get)
    lat, tr, fill, bw = cands[best]
    t = times[best]
    algbw = s / t
    return Prediction(coll, s, n, t, algbw, algbw * busbw_factor(coll, n),
                      best[0], best[1], bw, launch, lat, tr, fill,
                      {f"{a}/{p}": v for (a, p), v in times.items()})


# ---------------------------------------------------------------------------
# the calibration data
# ---------------------------------------------------------------------------
#: Calibration curves (system name in the CSV) and the cluster each describes.
CALIBRATION_SYSTEMS = {
    "A100-SXM (8-GPU node, NVSwitch)": ("A100", 8, "nvswitch"),
    "H100-SXM (HGX 8-GPU)": ("H100", 8, "nvswitch"),
    "H100-SXM (HGX, PCIe Gen5 host link)": ("H100", 1, "pcie"),
}


def calibration_data_path():
    """Path of the repository's copy of the calibration CSV."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "data" / "calibration_measurements.csv"


def calibration_curves(path=None) -> dict:
    """The calibration measurements, one curve per (system, collective).

    Returns ``{(system, collective): {"n_bytes": [...], "algbw_bytes_per_s":
    [...], "busbw_bytes_per_s": [...]}}`` in SI units (the CSV is in GB/s).
    """
    import csv
    import os

    path = calibration_data_path() if path is None else path
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    out: dict = {}
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                c = out.setdefault((row["system"], row["collective"]),
                                   {"n_bytes": [], "algbw_bytes_per_s": [],
                                    "busbw_bytes_per_s": []})
                c["n_bytes"].append(float(row["bytes"]))
                c["algbw_bytes_per_s"].append(float(row["algbw_GBps"]) * 1e9)
                c["busbw_bytes_per_s"].append(float(row["busbw_GBps"]) * 1e9)
    except OSError as exc:
        raise ValueError(f"path: cannot read the calibration CSV {str(path)!r}: {exc}") from exc
    except (KeyError, TypeError) as exc:
        raise ValueError(f"path: {str(path)!r} is not a calibration CSV with columns "
                         f"system, collective, bytes, algbw_GBps, busbw_GBps ({exc})") from exc
    return out


# ---------------------------------------------------------------------------
# host <-> device copies over PCIe
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CopyPrediction:
    """A predicted cudaMemcpy between host and GPU."""

    n_bytes: float
    time_s: float
    bw_bytes_per_s: float
    direction: str
    memory: str

    def to_dict(self) -> dict:
        return asdict(self)


def predict_copy(n_bytes: float, gpu: str = "H100", direction: str = "h2d",
                 memory: str = "pinned") -> CopyPrediction:
    """Predict a host<->device copy over the GPU's PCIe x16 link.

    Notes
    -----
    ``t = alpha + S / (eta B_pcie)`` with ``alpha`` the small-copy latency
    (``LATENCIES["pcie_small_copy"]``, 2.7 us), ``B_pcie`` the x16
    per-direction rate and ``eta = CALIBRATION["pcie_dma_efficiency"]``
    (0.87, fitted on H100 Gen5 H2D).  Pageable memory goes through a
    staging buffer: ``MEASURED["pageable_over_pinned_x86"]`` (0.3) of the
    pinned rate.  Does not capture NUMA placement (a far socket loses most
    of the bandwidth) or the D2H drop seen on some hosts.  Chapter 3.

    >>> round(predict_copy(64e6).bw_bytes_per_s / 1e9, 1)
    54.7
    """
    from .hardware import MEASURED

    s = check_positive(n_bytes, "n_bytes")
    direction = check_choice(direction, "direction", ("h2d", "d2h"))
    memory = check_choice(memory, "memory", ("pinned", "pageable"))
    rec = _gpu(gpu)
    bw = pcie_bw_per_dir_bytes_per_s(rec.pcie_gen) * calibration("pcie_dma_efficiency")
    if memory == "pageable":
        bw *= MEASURED["pageable_over_pinned_x86"].value
    t = latency_s("pcie_small_copy") + s / bw
    return CopyPrediction(s, t, s / t, direction, memory)


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------
class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # no traceback, exit status 2
        raise _ArgError(message)


def _sizes(lo: float, hi: float, factor: float) -> list[int]:
    out, s = [], lo
    while s <= hi * (1 + 1e-12):
        out.append(int(round(s)))
        s *= factor
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib predict COLLECTIVE [options]``: an nccl-tests-style table."""
    p = _Parser(prog="python -m course_lib predict",
                description="Predict a collective's time and bandwidth "
                            "(nccl-tests columns).")
    p.add_argument("collective", help=f"one of {list(COLLECTIVES)}")
    p.add_argument("--gpu", default="H100")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--fabric", default="nvswitch", help=f"one of {list(FABRICS)}")
    p.add_argument("--nic", default=None)
    p.add_argument("--nics-per-node", type=int, default=0)
    p.add_argument("--min", default="8", help="smallest size, e.g. 8, 1M, 1GiB")
    p.add_argument("--max", default="16G", help="largest size")
    p.add_argument("--step-factor", type=float, default=2.0)
    p.add_argument("--algorithm", default="auto", help=f"one of {list(PREDICT_ALGORITHMS)}")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        a = p.parse_args(argv)
        cl = cluster(a.gpu, a.gpus_per_node, a.nodes, a.fabric, a.nic, a.nics_per_node)
        lo, hi = parse_size(a.min, "--min"), parse_size(a.max, "--max")
        if lo <= 0 or hi < lo:
            raise ValueError(f"need 0 < --min <= --max; got {a.min!r}, {a.max!r}")
        if not a.step_factor > 1:
            raise ValueError(f"--step-factor must be > 1, got {a.step_factor}")
        recs = [predict_collective(a.collective, s, cl, a.algorithm)
                for s in _sizes(lo, hi, a.step_factor)]
    except (_ArgError, ValueError, TypeError) as exc:
        print(f"predict: error: {exc}", file=sys.stderr)
        print(p.format_usage().strip(), file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps([r.to_dict() for r in recs], indent=1))
        return 0
    elem = 4  # nccl-tests' default float
    print(f"# {recs[0].collective} on {cl.describe()}: {cl.n_ranks} ranks "
          f"(predicted by course_lib; sizes in bytes, count in float32 elements)")
    print(f"# {'size':>12} {'count':>12} {'time(us)':>10} {'algbw(GB/s)':>12} "
          f"{'busbw(GB/s)':>12}  algorithm/protocol")
    for r in recs:
        print(f"  {int(r.n_bytes):>12} {int(r.n_bytes) // elem:>12} "
              f"{r.time_s * 1e6:>10.2f} {r.algbw_bytes_per_s / 1e9:>12.2f} "
              f"{r.busbw_bytes_per_s / 1e9:>12.2f}  {r.algorithm}/{r.protocol}")
    print(f"# largest size {format_bytes(recs[-1].n_bytes, binary=True)}")
    return 0
