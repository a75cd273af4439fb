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
  ``NVIDIA/nccl:src/graph/tuning.cc (v2.20.3)`` (``hardware.NCCL_TUNING``;
  Tree/Simple takes Ring/Simple's hop: NCCL's 28 us is a chunk's transfer,
  which ``F`` counts).
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

"auto" inside one node evaluates every (algorithm, protocol) the cluster
allows and keeps the fastest by the terms above.

Topology (issue 13).  Inside a node ``B`` is the slowest hop of the ring
NCCL builds, by the word ``nvidia-smi topo -m`` prints for it: ``NV#``
(# NVLinks), ``PIX``/``PXB`` (PCIe switches: the x16 PCIe planning rate),
``PHB``/``NODE`` (through the CPU root complex: the same, x5/6 on Intel),
``SYS`` (across the sockets: also held to NCCL's socket-link rate,
``hardware.CPU_LINKS``).  :func:`cluster_from_topo` reads a node's
``nvidia-smi topo -m`` text or NCCL's topology XML and finds that ring;
:func:`cluster` takes ``sockets``, ``pcie_path``, ``nic_path`` and ``cpu``.
A NIC on the other socket (SYS) is held to the socket link too.

Across nodes.  A ring runs one channel per NIC; its time is the longer of
a slice's way round the ring (each hop's latency, exposed slice and transfer
at that hop's rate) and the busy time of the GPUs that feed the NICs -- so
when the network is much slower, the NVLink side's latencies and slices
hide behind it (the simulator plays the same rings and agrees).  The NICs
deliver ``port x efficiency`` of the network kind
(``hardware.NETWORK``: InfiniBand/RoCE 0.96, EFA 0.67, TCPX(O) 0.90) and
every network step pays the kind's extra latency on top of NCCL's.  Tree and
NVLS-tree are pipelined: time is the slower of the node's links and the
network, ``S / min(B_node, B_net / k)`` with ``k = 1`` at 2 nodes (a double
binary tree sends S per node) and 2 beyond -- so a 2-node tree reports a
busbw above the network rate, as measured.  ``hierarchical`` (ReduceScatter
/ AllReduce over rails / AllGather) overlaps its phases the same way; it is
not one of NCCL's algorithms and is modelled only on request.  *Which*
algorithm runs is NCCL's choice, by its own estimate (``tuning.cc``:
:func:`_nccl_estimate_s`) on InfiniBand and RoCE; clouds ship tuner
plugins that pick what was measured fastest (EFA, TCPX/TCPXO: the model's
fastest), and Google's TCPX(O) profile allows only Ring and Tree with the
Simple protocol (``hardware.NETWORK_PROFILES``).

Validation.  :func:`validation_rows` predicts every row of
``data/validation/nccl_tests_public.csv`` -- public nccl-tests runs, one
source per row, on machines that set no number of the model -- and
:func:`validation_errors` gives the busbw error per system
(``benchmarks/bench_calibration.py`` prints it).

What it does not capture: NCCL's exact channel and thread counts, the
thresholds inside a cloud's tuner plugin (mid-size messages on TCPXO),
older network generations (2019 EFA waited several times longer per step),
PXN routing, rail-optimised vs fat-tree fabrics, congestion beyond the NIC
rate, clock/power throttling, and CollNet/SHARP in the IB switches.  The
constants were fitted on two single-node 8-GPU machines (and the EFA
latency on one 2-node run); the network terms come from NCCL, the port
rates and the sources in ``hardware.NETWORK``.

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

import math
from dataclasses import asdict, dataclass, field

from .analytic import COLLECTIVES, busbw_factor
from .hardware import NCCL_LINK_BW, calibration, gpu as _gpu, latency_s, nccl_tuning
from .hardware import nic as _nic
from .hardware import (PCIE_PATHS, cpu_link_bw_bytes_per_s, cpu_link_names,
                       network_efficiency, network_hop_s, network_profile,
                       pcie_bw_per_dir_bytes_per_s, pcie_generation)
from .topology import BRIDGE_LINKS
from .units import check_choice, check_int, check_positive

__all__ = ["FABRICS", "PREDICT_ALGORITHMS", "PROTOCOLS", "Cluster", "cluster",
           "cluster_from_topo", "parse_nvidia_smi_topo", "parse_nccl_topo_xml",
           "TOPO_WORDS", "EXAMPLE_TOPO", "validation_rows", "validation_errors",
           "cluster_from_spec", "validation_data_dir", "validation_report",
           "Prediction", "predict_collective", "predict_copy", "CopyPrediction",
           "calibration_curves", "calibration_data_path",
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
    cpu: str | None = None
    sockets: int = 1
    pcie_path: str = "switch"
    nic_path: str = "switch"
    ring_hops: tuple = ()

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
        """``"nvlink"`` or ``"pcie"``: what GPUs of one node talk over (a ring
        from a topology dump whose every hop is NVLink counts as NVLink)."""
        if self.ring_hops and all(h.startswith("NV") for h in self.ring_hops):
            return "nvlink"
        return "pcie" if self.fabric == "pcie" else "nvlink"

    def nvlinks_per_gpu_used(self) -> int:
        """NVLink links of one GPU that the node's rings can use."""
        g = self.gpu_record
        if self.fabric == "bridge":
            return BRIDGE_LINKS[g.name]
        if self.fabric == "mesh":
            return (g.nvlink_links // (self.gpus_per_node - 1)) * (self.gpus_per_node - 1)
        return g.nvlink_links

    @property
    def intel_cpu(self) -> bool:
        return self.cpu is not None and self.cpu.startswith("intel")

    def pcie_planning_bytes_per_s(self) -> float:
        """NCCL's rate for the GPU's x16 link (width x speed / 80: 12/24/48 GB/s
        for Gen3/4/5), per direction."""
        rec = pcie_generation(self.gpu_record.pcie_gen)
        if rec.nccl_planning_x16_bytes_per_s is not None:
            return rec.nccl_planning_x16_bytes_per_s
        return rec.per_dir_bytes_per_s(16) * calibration("pcie_dma_efficiency")

    def hop_bw_bytes_per_s(self, kind: str) -> float:
        """What NCCL plans for one ring hop between two GPUs of a node, by the
        ``nvidia-smi topo -m`` word for the pair, per direction.

        ``NV<k>``: k NVLinks x NCCL's per-link rate; ``PIX``/``PXB`` (one or
        more PCIe switches): the x16 PCIe rate; ``PHB``/``NODE`` (through a
        CPU root complex): the same, charged 6/5 on Intel CPUs
        (``INTEL_P2P_OVERHEAD``); ``SYS`` (across the socket-to-socket link):
        also limited by that link (``hardware.CPU_LINKS``).
        """
        if not isinstance(kind, str):
            raise TypeError(f"kind must be a topology word such as 'NV12' or 'SYS'; "
                            f"got {kind!r}")
        k = kind.strip().upper()
        if k.startswith("NV") and k[2:].isdigit() and int(k[2:]) > 0:
            return int(k[2:]) * NCCL_LINK_BW[self.gpu_record.sm_arch].value
        pcie = self.pcie_planning_bytes_per_s()
        if k in ("PIX", "PXB"):
            return pcie
        through_cpu = pcie / (PCIE_PATHS["intel_p2p_overhead"].value
                              if self.intel_cpu else 1.0)
        if k in ("PHB", "NODE"):
            return through_cpu
        if k == "SYS":
            if self.cpu is None:
                raise ValueError(f"a SYS hop crosses the socket-to-socket link: give "
                                 f"cpu= one of {cpu_link_names()}")
            return min(through_cpu, cpu_link_bw_bytes_per_s(self.cpu))
        raise ValueError(f"kind must be NV<k>, PIX, PXB, PHB, NODE or SYS; got {kind!r}")

    def intra_hops(self) -> tuple:
        """The hop words of the ring NCCL runs inside one node (``()`` on NVLink
        fabrics).  From a topology dump when there was one; for
        ``fabric='pcie'`` from ``pcie_path`` and ``sockets``: a ring over two
        sockets crosses the socket link twice (once each way)."""
        if self.ring_hops:
            return tuple(self.ring_hops)
        if self.fabric != "pcie" or self.gpus_per_node < 2:
            return ()
        word = "PIX" if self.pcie_path == "switch" else "NODE"
        return (word, "SYS") if self.sockets == 2 else (word,)

    def intra_bw_bytes_per_s(self) -> float:
        """NCCL's planning bandwidth of one GPU inside a node, per direction.

        NVLink fabrics: links used x NCCL's per-link rate (``NCCL_LINK_BW``);
        PCIe or a topology dump: the slowest hop of the node's ring
        (:meth:`hop_bw_bytes_per_s`), e.g. the socket link on a two-socket
        PCIe server.
        """
        g = self.gpu_record
        hops = self.intra_hops()
        if hops:
            return min(self.hop_bw_bytes_per_s(h) for h in hops)
        if self.fabric == "pcie":
            return self.pcie_planning_bytes_per_s()
        return self.nvlinks_per_gpu_used() * NCCL_LINK_BW[g.sm_arch].value

    @property
    def network(self) -> str | None:
        """The network kind of the NICs (``"InfiniBand"``, ``"RoCEv2"``,
        ``"EFA"``, ``"TCPX"``, ``"TCPXO"``), or None."""
        return None if self.nic is None else _nic(self.nic).family

    def net_hop_s(self) -> float:
        """What one network step costs on top of NCCL's NET latency (by network kind)."""
        return 0.0 if self.nic is None else network_hop_s(self.network)

    def nic_bw_bytes_per_s(self) -> float:
        """Payload rate of one NIC, per direction: ``min(port x efficiency, PCIe x 0.87)``.

        The efficiency is the network kind's (``hardware.NETWORK``: 0.96 on
        InfiniBand and RoCE, lower on EFA and TCPX).  A NIC sits on the
        GPU's PCIe link (GPUDirect RDMA), so an 800 Gb/s port behind PCIe
        Gen5 x16 is limited by PCIe; a NIC on the other socket
        (``nic_path='remote'``, SYS) is also limited by the socket link.
        """
        if self.nic is None:
            return 0.0
        port = _nic(self.nic).bw_per_dir_bytes_per_s * network_efficiency(self.network)
        pcie = (pcie_bw_per_dir_bytes_per_s(self.gpu_record.pcie_gen)
                * calibration("pcie_dma_efficiency"))
        bw = min(port, pcie)
        if self.nic_path == "host" and self.intel_cpu:
            bw /= PCIE_PATHS["intel_p2p_overhead"].value
        if self.nic_path == "remote":
            bw = min(bw, self.hop_bw_bytes_per_s("SYS"))
        return bw

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
        hops = self.intra_hops()
        ring = f", ring hops {'-'.join(hops)}" if hops else ""
        return (f"{self.nodes} node(s) x {self.gpus_per_node} {self.gpu} "
                f"({self.fabric}{ring}{net})")




def cluster(gpu: str = "H100", gpus_per_node: int = 8, nodes: int = 1,
            fabric: str = "nvswitch", nic: str | None = None,
            nics_per_node: int = 0, *, cpu: str | None = None, sockets: int = 1,
            pcie_path: str = "switch", nic_path: str = "switch",
            ring_hops=()) -> Cluster:
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
    cpu : str, optional
        The host CPU family, for its socket-to-socket link and PCIe peer
        path (``hardware.CPU_LINKS``: ``"intel-skl"``, ``"intel-spr"``,
        ``"amd-zen3"``...); needed when a ring or a NIC crosses sockets.
    sockets : {1, 2}
        Sockets the node's GPUs hang off (``fabric='pcie'``): with 2 the
        ring crosses the socket link (nvidia-smi topo: SYS).
    pcie_path : {"switch", "host"}
        How GPUs of one socket reach each other: through PCIe switches (PIX,
        PXB) or through the CPU's root complex (PHB, NODE).
    nic_path : {"switch", "host", "remote"}
        Where each NIC sits: on its GPU's PCIe switch (PIX/PXB), behind the
        same CPU (PHB/NODE), or on the other socket (SYS).
    ring_hops : tuple of str
        The hop words of the node's ring (``("NV12", "NODE", "NODE")``),
        normally filled in by :func:`cluster_from_topo`.

    Examples
    --------
    >>> c = cluster("H100", nodes=4, nic="NDR", nics_per_node=8)
    >>> c.n_ranks, c.inter_bw_bytes_per_s() / 1e9
    (32, 384.0)
    >>> cluster("A100", nodes=2)
    Traceback (most recent call last):
    ...
    ValueError: nic must be given when nodes > 1 (one of ['EDR', 'HDR', 'NDR', 'XDR', 'RoCE-100', 'RoCE-200', 'RoCE-400', 'EFA-100', 'EFA-200', 'EFA-400', 'TCPX-200', 'TCPXO-200'])
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
    if cpu is not None:
        cpu = check_choice(cpu, "cpu", cpu_link_names())
    sockets = check_int(sockets, "sockets", minimum=1, maximum=2)
    pcie_path = check_choice(pcie_path, "pcie_path", ("switch", "host"))
    nic_path = check_choice(nic_path, "nic_path", ("switch", "host", "remote"))
    if isinstance(ring_hops, str) or not all(isinstance(h, str) for h in ring_hops):
        raise TypeError(f"ring_hops must be a tuple of topology words such as "
                        f"('NV12', 'NODE'); got {ring_hops!r}")
    ring_hops = tuple(h.strip().upper() for h in ring_hops)
    if sockets == 2 and fabric != "pcie" and not ring_hops:
        raise ValueError("sockets=2 describes a PCIe ring across sockets: use "
                         "fabric='pcie' (NVLink rings do not cross the socket link)")
    if cpu is None and ((sockets == 2 and fabric == "pcie") or nic_path == "remote"
                        or "SYS" in ring_hops):
        raise ValueError(f"the ring or a NIC crosses the socket link: give cpu= one "
                         f"of {cpu_link_names()}")
    out = Cluster(rec.name, g, nodes, fabric, nic, nics_per_node, cpu, sockets,
                  pcie_path, nic_path, ring_hops)
    out.intra_bw_bytes_per_s()  # checks every hop word now, not at predict time
    return out


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
    """Per-hop latency of NCCL's table (hwLat), as NCCL plans it."""
    return nccl_tuning(f"{algo}_{proto}_hop_{kind}")


def _hop_time(algo: str, proto: str, kind: str) -> float:
    """Per-hop latency in the model's *time*: NCCL's table, except Tree/Simple,
    whose 28 us is "a 256 kB chunk" (tuning.cc) -- a chunk's transfer, which
    the model counts in its fill term -- so it takes Ring/Simple's hop."""
    if algo == "tree" and proto == "simple":
        return nccl_tuning(f"ring_simple_hop_{kind}")
    return _hop(algo, proto, kind)


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
    # LL128 only over NVLink on SM70-SM90 and, across nodes, with the NIC on
    # the GPU's PCIe switch (tuning.cc v2.20.3: typeInter <= PATH_PXB, or
    # PXN on SM90; other cases "not tested and may cause silent data
    # corruption")
    sm = cl.gpu_record.sm_arch
    near_nic = cl.nodes == 1 or cl.nic_path == "switch" or (sm >= 90 and
                                                             cl.nic_path == "host")
    if cl.intra_link_kind == "nvlink" and sm in (70, 80, 90) and near_nic:
        return PROTOCOLS
    return ("ll", "simple")


def _ring(coll, s, cl, proto):
    n, nodes = cl.n_ranks, cl.nodes
    bw = b_intra = cl.intra_bw_bytes_per_s()
    if nodes > 1:
        g = cl.gpus_per_node
        if cl.nics_per_node >= g > 1:
            # one ring per NIC, ring k leaving each node from GPU k: every GPU
            # sends 1/g of its ring traffic through its NIC, not its NVLinks
            b_intra = bw * g / (g - 1)
        bw = min(b_intra, cl.inter_bw_bytes_per_s())
    b = _proto_bw(bw, proto, cl)
    b_intra = _proto_bw(b_intra, proto, cl)
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
    lat_i = _hop("ring", proto, intra_kind)
    lat_x = _hop("ring", proto, "net") + cl.net_hop_s()
    hops = (steps - inter) * lat_i + inter * lat_x
    base = nccl_tuning(f"ring_{proto}_base")
    transfer = wire / b
    if inter == 0 or coll in ("broadcast", "reduce"):
        # every step exposes one slice (and its hop latency) in turn
        return base + hops, transfer, steps * min(c, slice_) / b, b
    # Across nodes the hops differ.  A slice's way round the ring (its chain)
    # pays, per step, the hop's latency, its exposed slice and its transfer at
    # that hop's rate; the GPU that feeds a NIC is busy ``steps`` transfers at
    # the slower rate.  The ring takes the longer of the two: when the network
    # is much slower, the NVLink side's latencies and slices hide behind it.
    e = min(c, slice_)
    t_i, t_x = slice_ / b_intra, slice_ / b
    chain = (steps - inter) * (lat_i + e / b_intra + t_i) + inter * (lat_x + e / b + t_x)
    queue = transfer + lat_x + e / b
    rest = max(chain, queue) - transfer
    lat_part = min(hops, rest)
    return base + lat_part, transfer, rest - lat_part, b


def _net_traffic(nodes: int) -> int:
    """What one node sends to the network per byte of a tree AllReduce (each way).

    NCCL's double binary tree: with 2 nodes each node is the other's only
    peer and sends S (half in each tree); beyond 2 a node is an inner node of
    one tree and sends up and down in it, 2 S in all.  NCCL's tuning says the
    same (``NVLS_TREE``: ``bwInter`` for <= 2 nodes, ``bwInter/2`` beyond).
    A ring sends ``2 (n-1)/n S`` from every rank, all of which crosses a NIC
    at the node boundary, so at 2 nodes the tree moves half the ring's bytes.
    """
    return 1 if nodes <= 2 else 2


def _tree(coll, s, cl, proto):
    """Tree AllReduce: reduce up a chain in each node and a tree over the
    nodes, broadcast back down; the phases are pipelined chunk by chunk, so
    the time is set by the slower of the node's links and the network, not
    their sum."""
    g, nodes = cl.gpus_per_node, cl.nodes
    eff = nccl_tuning("tree_efficiency")
    b_link = _proto_bw(cl.intra_bw_bytes_per_s(), proto, cl) * eff
    b_alg = b_link / 2  # every GPU sends S up and S down over its own links
    levels = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    if nodes > 1:
        b_net = _proto_bw(cl.inter_bw_bytes_per_s(), proto, cl) * eff
        b_alg = min(b_alg, b_net / _net_traffic(nodes))
        b_link = min(b_link, b_net)
    lat = nccl_tuning(f"tree_{proto}_base") + 2 * (
        (g - 1) * _hop_time("tree", proto, cl.intra_link_kind)
        + levels * (_hop_time("tree", proto, "net") + cl.net_hop_s()))
    # each level of the (chain + tree) exposes one slice on the way up and one
    # on the way down; a slice is at most S/n, as on a ring
    fill = 2 * max(g - 1 + levels, 1) * min(calibration("chunk_bytes"),
                                            s / cl.n_ranks) / b_link
    return lat, s / b_alg, fill, b_link


def _nvls_intra(coll, s, cl):
    n = cl.gpus_per_node
    b = cl.intra_bw_bytes_per_s() * calibration("nvls_efficiency")
    wire = s if coll == "allreduce" else (n - 1) / n * s
    fill = 3 * min(calibration("chunk_bytes"), s / n) / b
    return calibration("nvls_latency_s"), wire / b, fill, b


def _nvls_tree(coll, s, cl):
    """NVLS inside each node, a tree across nodes, pipelined (NCCL's NVLS_TREE)."""
    g, nodes = cl.gpus_per_node, cl.nodes
    levels = math.ceil(math.log2(nodes))
    b_in = cl.intra_bw_bytes_per_s() * calibration("nvls_efficiency")
    b_net = _proto_bw(cl.inter_bw_bytes_per_s(), "simple", cl)
    b = min(b_in, b_net / _net_traffic(nodes))
    lat = calibration("nvls_latency_s") + 2 * levels * (
        nccl_tuning("nvls_tree_simple_hop_net") + cl.net_hop_s())
    fill = (3 + 2 * levels) * min(calibration("chunk_bytes"), s / g) / b
    return lat, s / b, fill, b


def _hierarchical(coll, s, cl):
    """Intra-node ReduceScatter, inter-node AllReduce on S/g, intra-node AllGather.

    Pipelined as NCCL pipelines its multi-level algorithms: a chunk's
    inter-node step runs while the next chunk is reduced inside the node, so
    the transfer time is the slower phase, ``max(t_intra, t_inter)``, and
    each phase adds its own fill.
    """
    g, nodes = cl.gpus_per_node, cl.nodes
    c = calibration("chunk_bytes")
    proto = "simple"
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
    lat_x = steps_x * (_hop("ring", proto, "net") + cl.net_hop_s())
    tr_x = 2 * (nodes - 1) / nodes * part / b_x
    fill_x = steps_x * min(c, part / nodes) / b_x
    lat = nccl_tuning("ring_simple_base") + lat_i + lat_x
    tr = max(tr_i, tr_x)
    b_eff = s / tr * (2 * (cl.n_ranks - 1) / cl.n_ranks) if tr else 0.0
    return lat, tr, fill_i + fill_x, b_eff


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


def _profile(cl):
    """The network kind's NCCL set-up (``hardware.NETWORK_PROFILES``) across
    nodes; None inside one node."""
    return network_profile(cl.network) if cl.nodes > 1 and cl.nic else None


def _candidates(coll, s, cl, algorithm):
    """(algorithm, protocol) -> (latency, transfer, fill, bandwidth)."""
    out = _candidates_all(coll, s, cl, algorithm)
    prof = _profile(cl)
    if prof is None or algorithm != "auto":
        return out
    keep = {k: v for k, v in out.items()
            if (prof["algorithms"] is None or k[0] in prof["algorithms"])
            and (prof["protocols"] is None or k[1] in prof["protocols"])}
    return keep or out


def _candidates_all(coll, s, cl, algorithm):
    n = cl.n_ranks
    out = {}
    # "hierarchical" is not one of NCCL's algorithms (the closest, CollNet,
    # needs SHARP switches): it is modelled when asked for, never chosen
    algos = [algorithm] if algorithm != "auto" else ["ring", "tree", "nvls", "direct"]
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
                out[(a, "simple")] = _nvls_tree(coll, s, cl)
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


def _nccl_estimate_s(coll, s, cl, algo, proto) -> float:
    """NCCL's own time estimate for (algorithm, protocol) across nodes.

    After ``ncclTopoTuneModel`` in ``NVIDIA/nccl:src/graph/tuning.cc``
    (v2.20.3): the bus bandwidth of a multi-node graph is the node's
    bandwidth as NCCL plans it (NVLink or PCIe planning rates, NIC port
    rates), ``min(intra, inter)``; Ring turns busbw into algbw by
    ``n / nsteps`` (LL x 1/4, LL128 x 0.92, Simple's latency x 1.4 on SM80+
    or 1.9 before: the "plateau effect of ring"); Tree by x 0.92 x 0.5 (LL
    x 1/3.8, LL128 x 120/128); NVLS_TREE by x 5/6 of ``min(intra, inter)``
    (``inter/2`` beyond 2 nodes).  Latencies: ``baseLat + hwLat`` per step.
    Used only to *choose*; the time reported is the model's.
    """
    n, g, nodes = cl.n_ranks, cl.gpus_per_node, cl.nodes
    inter = cl.nics_per_node * _nic(cl.nic).bw_per_dir_bytes_per_s
    bw = min(cl.intra_bw_bytes_per_s(), inter)
    levels = math.ceil(math.log2(nodes))
    kind = cl.intra_link_kind
    if algo == "ring":
        nsteps = 2 * (n - 1) if coll == "allreduce" else n - 1
        ninter = 2 * nodes if coll == "allreduce" else nodes - 1
        bus = {"ll": bw / 4, "ll128": bw * 0.92, "simple": bw}[proto]
        alg = bus * n / nsteps
        lat = nccl_tuning(f"ring_{proto}_base") + (nsteps - ninter) * _hop(
            "ring", proto, kind) + ninter * _hop("ring", proto, "net")
        if proto == "simple" and coll == "allreduce":
            lat *= 1.4 if cl.gpu_record.sm_arch >= 80 else 1.9
    elif algo == "tree":
        bus = bw * 0.92 * {"ll": 1 / 3.8, "ll128": 120 / 128, "simple": 1.0}[proto]
        alg = bus * 0.5
        lat = nccl_tuning(f"tree_{proto}_base") + 2 * (
            (g - 1) * _hop("tree", proto, kind) + levels * _hop("tree", proto, "net"))
    elif algo == "nvls":
        alg = 5 / 6 * min(cl.intra_bw_bytes_per_s(), inter / _net_traffic(nodes))
        lat = nccl_tuning("nvls_simple_hop_nvlink") + 2 * levels * nccl_tuning(
            "nvls_tree_simple_hop_net")
    else:  # hierarchical, direct: only when asked for, never competing
        return math.inf
    return lat + s / alg


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
        ``"auto"`` picks (algorithm, protocol) as NCCL would: inside a node
        the fastest by this model; across nodes by NCCL's own estimate
        (:func:`_nccl_estimate_s`), which is what the measured curves follow.
        ``"nvls"`` across nodes is NCCL's NVLS_TREE; ``"hierarchical"``
        (ReduceScatter / AllReduce over rails / AllGather, pipelined) is
        modelled only when asked for.

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
    prof = _profile(cluster)
    if prof is not None and prof["chooser"] == "nccl" and len(cands) > 1:
        # across nodes NCCL picks by its own estimate, which is not always the
        # fastest in practice (2-node A100: ring, though the tree moves half
        # the bytes); the measured curves follow NCCL's pick
        est = {k: _nccl_estimate_s(coll, s, cluster, *k) for k in cands}
        best = min(est, key=est.get)
    else:
        best = min(times, key=times.get)
    lat, tr, fill, bw = cands[best]
    t = times[best]
    algbw = s / t
    return Prediction(coll, s, n, t, algbw, algbw * busbw_factor(coll, n),
                      best[0], best[1], bw, launch, lat, tr, fill,
                      {f"{a}/{p}": v for (a, p), v in times.items()})


# ---------------------------------------------------------------------------
# clusters described by a topology dump
# ---------------------------------------------------------------------------
#: Four A100 PCIe cards joined in pairs by NVLink bridges (NV12), the pairs
#: meeting in the CPU (NODE): the first half of the matrix posted in
#: NVIDIA/nccl-tests issue #178 (the full dump is in data/validation/topo/).
EXAMPLE_TOPO = """\
        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity
GPU0     X      NV12    NODE    NODE    0-31,64-95      0
GPU1    NV12     X      NODE    NODE    0-31,64-95      0
GPU2    NODE    NODE     X      NV12    0-31,64-95      0
GPU3    NODE    NODE    NV12     X      0-31,64-95      0
"""
#: The words ``nvidia-smi topo -m`` prints for a pair of devices, nearest first.
TOPO_WORDS = ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS")
_PCIE_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}


def _topo_word(cell: str) -> str:
    w = cell.strip().upper()
    if w.startswith("NV") and w[2:].isdigit():
        return w
    if w not in _PCIE_RANK:
        raise ValueError(f"dump: unknown topology word {cell!r}; expected one of "
                         f"{list(TOPO_WORDS)}")
    return w


def parse_nvidia_smi_topo(text: str) -> dict:
    """Read the matrix printed by ``nvidia-smi topo -m``.

    Returns ``{"gpus": ["GPU0", ...], "nics": ["NIC0" or "mlx5_0", ...],
    "pair": {(a, b): word}, "numa": {gpu: int or None}}``; a word is
    ``NV<k>``, ``PIX``, ``PXB``, ``PHB``, ``NODE`` or ``SYS``.  The legend
    and the NIC-name table that newer drivers print are ignored.

    >>> t = parse_nvidia_smi_topo(EXAMPLE_TOPO)
    >>> t["gpus"], t["pair"][("GPU0", "GPU1")], t["pair"][("GPU0", "GPU2")]
    (['GPU0', 'GPU1', 'GPU2', 'GPU3'], 'NV12', 'NODE')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the output of nvidia-smi topo -m as a str; "
                        f"got {type(text).__name__}")
    lines = [ln for ln in text.replace("\r", "").split("\n") if ln.strip()]
    header = None
    for i, ln in enumerate(lines):
        toks = ln.split()
        if toks and toks[0].startswith("GPU") and toks[0][3:].isdigit() and \
                (len(toks) < 2 or toks[1] != "X"):
            header, start = toks, i + 1
            break
    if header is None:
        raise ValueError("text: no nvidia-smi topo -m header line (GPU0 GPU1 ...) found")
    devices = []
    for t in header:
        if t in ("CPU", "NUMA", "GPU") or t.startswith("Affinity"):
            break
        devices.append(t)
    pair, numa, rows = {}, {}, set()
    for ln in lines[start:]:
        toks = ln.split()
        if not toks or toks[0] not in devices:
            if rows:
                break  # the legend or the NIC-name table
            continue
        name, cells = toks[0], toks[1:1 + len(devices)]
        if len(cells) < len(devices):
            raise ValueError(f"text: row {name!r} has {len(cells)} cells for "
                             f"{len(devices)} devices")
        rows.add(name)
        for other, cell in zip(devices, cells):
            if other != name:
                pair[(name, other)] = _topo_word(cell)
        rest = toks[1 + len(devices):]
        ints = [t for t in rest if t.isdigit()]
        numa[name] = int(ints[0]) if ints else None
    gpus = [d for d in devices if d.startswith("GPU")]
    missing = [g for g in gpus if g not in rows]
    if missing:
        raise ValueError(f"text: the matrix has no row for {missing}")
    return {"gpus": gpus, "nics": [d for d in devices if not d.startswith("GPU")],
            "pair": pair, "numa": {g: numa.get(g) for g in gpus}}


_CPU_MODELS = {  # NCCL topo XML (familyid, modelid) -> hardware.CPU_LINKS key
    ("GenuineIntel", 6, 79): "intel-bdw", ("GenuineIntel", 6, 85): "intel-skl",
    ("GenuineIntel", 6, 106): "intel-skl", ("GenuineIntel", 6, 143): "intel-spr",
    ("GenuineIntel", 6, 207): "intel-emr",
    ("AuthenticAMD", 23, None): "amd-zen2", ("AuthenticAMD", 25, None): "amd-zen3",
    ("AuthenticAMD", 26, None): "amd-zen5",
}


def parse_nccl_topo_xml(text: str) -> dict:
    """Read the system NCCL dumps with ``NCCL_TOPO_DUMP_FILE`` (XML).

    Returns the same dict as :func:`parse_nvidia_smi_topo`, plus ``"cpu"``
    (a ``hardware.CPU_LINKS`` key when the CPU model is known, else None) and
    ``"nic_gbps"`` (port speed of each NIC).  Pair words follow nvidia-smi:
    NVLink counts (through NVSwitches, or direct), else the PCIe path: one
    switch PIX, several PXB, the same CPU NODE, another CPU SYS.
    """
    import xml.etree.ElementTree as ET

    if not isinstance(text, str):
        raise TypeError(f"text must be an NCCL topology XML as a str; got "
                        f"{type(text).__name__}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"text: not well-formed NCCL topology XML ({exc})") from None
    gpus, nics, cpu_key = {}, {}, None

    def walk(node, path, numa):
        nonlocal cpu_key
        for child in node:
            if child.tag == "cpu":
                vendor = child.get("vendor", "")
                fam = int(child.get("familyid", "0") or 0)
                model = int(child.get("modelid", "0") or 0)
                cpu_key = _CPU_MODELS.get((vendor, fam, model),
                                          _CPU_MODELS.get((vendor, fam, None), cpu_key))
                walk(child, [], int(child.get("numaid", "0") or 0))
            elif child.tag == "pci":
                gpu = child.find("gpu")
                if gpu is not None:
                    links = {nv.get("target", ""): int(nv.get("count", "0"))
                             for nv in gpu.findall("nvlink")}
                    to_switch = sum(c for t, c in links.items()
                                    if t.lower().startswith("fffffff") or
                                    any(nv.get("tclass") == "0x068000"
                                        for nv in gpu.findall("nvlink")
                                        if nv.get("target") == t))
                    gpus[child.get("busid", "").lower()] = {
                        "dev": int(gpu.get("dev", len(gpus))), "path": path,
                        "numa": numa, "links": links, "nvswitch": to_switch}
                else:
                    net = child.find("nic/net")
                    if net is not None:
                        nics[net.get("name", f"NIC{len(nics)}")] = {
                            "path": path, "numa": numa,
                            "gbps": float(net.get("speed", "0") or 0) / 1000}
                    walk(child, path + [child.get("busid", "")], numa)
            elif child.tag == "nic":
                for net in child.findall("net"):
                    nics[net.get("name", f"NIC{len(nics)}")] = {
                        "path": path, "numa": numa,
                        "gbps": float(net.get("speed", "0") or 0) / 1000}
            else:
                walk(child, path, numa)

    walk(root, [], 0)
    if not gpus:
        raise ValueError("text: the NCCL topology XML has no <gpu> element")

    def pcie_word(a, b):
        if a["numa"] != b["numa"]:
            return "SYS"
        common = 0
        for x, y in zip(a["path"], b["path"]):
            if x != y:
                break
            common += 1
        if common == 0:
            return "NODE"
        return "PIX" if len(a["path"]) - common <= 1 and len(b["path"]) - common <= 1 \
            else "PXB"

    by_dev = sorted(gpus.items(), key=lambda kv: kv[1]["dev"])
    names = {bus: f"GPU{rec['dev']}" for bus, rec in by_dev}
    pair = {}
    for bus_a, a in by_dev:
        for bus_b, b in by_dev:
            if bus_a == bus_b:
                continue
            direct = a["links"].get(bus_b, 0)
            if a["nvswitch"] and b["nvswitch"]:
                word = f"NV{min(a['nvswitch'], b['nvswitch'])}"
            elif direct:
                word = f"NV{direct}"
            else:
                word = pcie_word(a, b)
            pair[(names[bus_a], names[bus_b])] = word
    for nic_name, n in nics.items():
        for bus, g in by_dev:
            word = pcie_word(g, n)
            pair[(names[bus], nic_name)] = pair[(nic_name, names[bus])] = word
    return {"gpus": [names[b] for b, _ in by_dev], "nics": list(nics), "pair": pair,
            "numa": {names[b]: g["numa"] for b, g in by_dev}, "cpu": cpu_key,
            "nic_gbps": {k: v["gbps"] for k, v in nics.items()}}


def _best_ring(names, pair, rate):
    """The ring order over ``names`` whose slowest hop is fastest (NCCL's
    search does the same on its graph); exhaustive up to 9 GPUs, greedy above."""
    import itertools

    def worst(order):
        return min(rate(pair[(order[i], order[(i + 1) % len(order)])])
                   for i in range(len(order)))

    first, rest = names[0], names[1:]
    if len(names) <= 9:
        best = max(((first,) + p for p in itertools.permutations(rest)), key=worst)
    else:
        best, left = [first], list(rest)
        while left:
            nxt = max(left, key=lambda g: rate(pair[(best[-1], g)]))
            best.append(nxt)
            left.remove(nxt)
        best = tuple(best)
    return tuple(pair[(best[i], best[(i + 1) % len(best)])] for i in range(len(best)))


def cluster_from_topo(dump: str, gpu: str, *, gpus=None, nodes: int = 1,
                      nic: str | None = None, cpu: str | None = None) -> Cluster:
    """A :class:`Cluster` from a node's topology dump.

    Parameters
    ----------
    dump : str
        The text of ``nvidia-smi topo -m``, or NCCL's topology XML
        (``NCCL_TOPO_DUMP_FILE``).
    gpu : str
        Catalog GPU model of the node (the dump names no model).
    gpus : list of int, optional
        The GPUs the job uses (``CUDA_VISIBLE_DEVICES``); all by default.
    nodes : int
        Identical nodes; ``> 1`` needs ``nic`` and uses the dump's NICs.
    nic : str, optional
        NIC port type (``hardware.NICS``); one per NIC row of the dump.
    cpu : str, optional
        ``hardware.CPU_LINKS`` key; needed when the ring or a NIC crosses
        sockets (SYS) and the dump does not say (nvidia-smi never does).

    Notes
    -----
    Every GPU pair NV<k> with k = all of the GPU's links: an NVSwitch node;
    every pair NV<k> with fewer links: a full NVLink mesh; otherwise the ring
    NCCL would build (the order whose slowest hop is fastest) gives the
    hops, e.g. NV12 bridges joined through the CPU (NODE) or across sockets
    (SYS).  NICs: the nearest NIC of each used GPU (PIX/PXB: on its switch;
    PHB/NODE: same CPU; SYS: other socket); the worst of them sets
    ``nic_path``.  Chapter 7.

    >>> c = cluster_from_topo(EXAMPLE_TOPO, "A100", gpus=[0, 1, 2])
    >>> c.intra_hops(), round(c.intra_bw_bytes_per_s() / 1e9)
    (('NV12', 'NODE', 'NODE'), 24)
    """
    rec = _gpu(gpu)
    info = (parse_nccl_topo_xml(dump) if isinstance(dump, str) and
            dump.lstrip().startswith("<") else parse_nvidia_smi_topo(dump))
    cpu = cpu if cpu is not None else info.get("cpu")
    names = info["gpus"]
    if gpus is not None:
        if isinstance(gpus, (str, bytes)) or not all(isinstance(i, int) for i in gpus):
            raise TypeError(f"gpus must be a list of GPU indices; got {gpus!r}")
        chosen = [f"GPU{i}" for i in gpus]
        bad = [g for g in chosen if g not in names]
        if bad or len(set(chosen)) != len(chosen):
            raise ValueError(f"gpus must be distinct indices of the dump's GPUs "
                             f"{names}; got {list(gpus)}")
        names = chosen
    if len(names) < 1:
        raise ValueError("gpus: the dump selects no GPU")
    pair = info["pair"]
    words = [pair[(a, b)] for a in names for b in names if a != b]
    nvl = [w for w in words if w.startswith("NV")]
    fabric, hops = "pcie", ()
    if words and len(nvl) == len(words) and len({int(w[2:]) for w in nvl}) == 1:
        k = int(nvl[0][2:])
        if len(names) > 2 and k >= rec.nvlink_links and rec.name != "P100":
            fabric = "nvswitch"
        elif len(names) > 2 and k * (len(names) - 1) <= rec.nvlink_links:
            fabric = "mesh"
        else:
            hops = (nvl[0],)
    elif len(names) > 1:
        probe = Cluster(rec.name, len(names), 1, "pcie", None, 0, cpu)
        hops = _best_ring(names, pair, probe.hop_bw_bytes_per_s)
    nic_path, nics_per_node = "switch", 0
    if nodes > 1 or nic is not None:
        if not info["nics"]:
            raise ValueError("dump: no NIC in the topology, but nodes > 1 or a nic "
                             "was given")
        worst = "PIX"
        for g in names:
            near = min((pair[(g, n)] for n in info["nics"]), key=_PCIE_RANK.get)
            worst = max(worst, near, key=_PCIE_RANK.get)
        nic_path = {"PIX": "switch", "PXB": "switch", "PHB": "host", "NODE": "host",
                    "SYS": "remote"}[worst]
        nics_per_node = min(len(info["nics"]), len(names))
    return cluster(rec.name, len(names), nodes, fabric, nic, nics_per_node, cpu=cpu,
                   pcie_path="switch", nic_path=nic_path, ring_hops=hops)


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
# the validation data: public nccl-tests runs on machines the model never saw
# ---------------------------------------------------------------------------
_SPEC_INTS = ("gpus_per_node", "nodes", "nics_per_node", "sockets")
_COLLECTIVE_OF = {"AllReduce": "allreduce", "AllGather": "allgather",
                  "ReduceScatter": "reducescatter", "Broadcast": "broadcast",
                  "Reduce": "reduce", "AllToAll": "alltoall"}


def validation_data_dir():
    """The repository folder ``data/validation`` (CSV and topology dumps)."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "data" / "validation"


def cluster_from_spec(spec: str, topo_dir=None) -> Cluster:
    """A :class:`Cluster` from the ``cluster`` column of the validation CSV:
    ``key=value`` pairs joined by ``;`` -- the arguments of :func:`cluster`,
    or ``topo=<file in data/validation/topo>`` (with ``gpu``, optional
    ``gpus=0,1,2``, ``nodes``, ``nic``, ``cpu``) for :func:`cluster_from_topo`.

    >>> cluster_from_spec("gpu=A100;gpus_per_node=8;nodes=2;nic=HDR;nics_per_node=4").n_ranks
    16
    """
    import os
    from pathlib import Path

    if not isinstance(spec, str) or "=" not in spec:
        raise ValueError(f"spec must be 'key=value;...' (e.g. 'gpu=H100;nodes=2;"
                         f"nic=NDR'); got {spec!r}")
    kw = {}
    for part in spec.split(";"):
        if not part.strip():
            continue
        key, _, value = part.partition("=")
        kw[key.strip()] = value.strip()
    try:
        for key in _SPEC_INTS:
            if key in kw:
                kw[key] = int(kw[key])
        gpus = kw.pop("gpus", None)
        if gpus is not None:
            gpus = [int(x) for x in gpus.split(",")]
    except ValueError:
        raise ValueError(f"spec: {', '.join(_SPEC_INTS)} and gpus take integers; "
                         f"got {spec!r}") from None
    if "topo" in kw:
        if topo_dir is None:
            folder = validation_data_dir() / "topo"
        elif isinstance(topo_dir, (str, os.PathLike)):
            folder = Path(topo_dir)
        else:
            raise TypeError(f"topo_dir must be a folder path; got {topo_dir!r}")
        try:
            text = (folder / kw.pop("topo")).read_text()
        except OSError as exc:
            raise ValueError(f"spec: cannot read the topology dump: {exc}") from None
        unknown = set(kw) - {"gpu", "nodes", "nic", "cpu"}
        if unknown:
            raise ValueError(f"spec: with topo= only gpu, gpus, nodes, nic, cpu are "
                             f"allowed; got {sorted(unknown)}")
        if "gpu" not in kw:
            raise ValueError(f"spec: topo= needs gpu= (the dump names no model); "
                             f"got {spec!r}")
        return cluster_from_topo(text, kw.pop("gpu"), gpus=gpus, **kw)
    if gpus is not None:
        raise ValueError("spec: gpus= selects GPUs of a topology dump; it needs topo=")
    return cluster(**kw)


def validation_rows(path=None, split: str | None = None) -> list[dict]:
    """The rows of ``data/validation/nccl_tests_public.csv`` with the model's
    prediction next to each measurement.

    Each row is the CSV's dict plus ``n_bytes``, ``measured_busbw``,
    ``predicted_busbw`` (bytes/s), ``rel_error`` (predicted / measured - 1),
    ``algorithm`` and ``protocol``.  ``split``: ``"heldout"`` (never used to
    set a number) or ``"fit"`` (used to set one, named in its note); None for
    both.
    """
    import csv
    import os

    path = validation_data_dir() / "nccl_tests_public.csv" if path is None else path
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    if split is not None:
        split = check_choice(split, "split", ("heldout", "fit"))
    out = []
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if split is not None and row["split"] != split:
                    continue
                cl = cluster_from_spec(row["cluster"])
                coll = _COLLECTIVE_OF[row["collective"]]
                size = float(row["bytes"])
                p = predict_collective(coll, size, cl)
                meas = float(row["busbw_GBps"]) * 1e9
                out.append({**row, "n_bytes": size, "measured_busbw": meas,
                            "predicted_busbw": p.busbw_bytes_per_s,
                            "rel_error": p.busbw_bytes_per_s / meas - 1,
                            "algorithm": p.algorithm, "protocol": p.protocol})
    except OSError as exc:
        raise ValueError(f"path: cannot read the validation CSV {str(path)!r}: "
                         f"{exc}") from None
    except (KeyError, ValueError) as exc:
        raise ValueError(f"path: {str(path)!r} is not a validation CSV with columns "
                         f"system, collective, bytes, busbw_GBps, split, cluster "
                         f"({exc})") from None
    return out


def _check_rows(rows):
    if not isinstance(rows, (list, tuple)) or not all(
            isinstance(r, dict) and {"system", "rel_error", "n_bytes"} <= set(r)
            for r in rows):
        raise TypeError("rows must be a list of dicts from validation_rows()")
    if not rows:
        raise ValueError("rows is empty")
    return rows


def validation_errors(rows=None, min_bytes: float = 2**20) -> dict:
    """Busbw error by system: ``{system: {"n", "n_big", "median_big", "p90_big",
    "median_all"}}`` (absolute relative errors; "big" = sizes >= ``min_bytes``,
    NaN where a system has none)."""
    import numpy as np

    rows = validation_rows(split="heldout") if rows is None else _check_rows(rows)
    min_bytes = check_positive(min_bytes, "min_bytes")
    by = {}
    for r in rows:
        by.setdefault(r["system"], []).append(r)
    out = {}
    for system, rs in by.items():
        err = np.abs([r["rel_error"] for r in rs])
        big = np.array([r["n_bytes"] >= min_bytes for r in rs])
        out[system] = {
            "n": len(rs), "n_big": int(big.sum()),
            "median_big": float(np.median(err[big])) if big.any() else float("nan"),
            "p90_big": float(np.percentile(err[big], 90)) if big.any() else float("nan"),
            "median_all": float(np.median(err))}
    return out


def validation_report(rows=None, min_bytes: float = 2**20) -> str:
    """:func:`validation_errors` as a text table, one line per system and a
    pooled line (every point of every system)."""
    import numpy as np

    rows = validation_rows(split="heldout") if rows is None else _check_rows(rows)
    min_bytes = check_positive(min_bytes, "min_bytes")

    def pct(x):
        return "   -  " if x != x else f"{x:6.0%}"

    lines = [f"{'system':56s} {'points':>6s} {'median':>7s} {'p90':>7s} {'median':>7s}",
             f"{'':56s} {'':6s} {'>=1MiB':>7s} {'>=1MiB':>7s} {'all':>7s}"]
    for system, e in validation_errors(rows, min_bytes).items():
        lines.append(f"{system[:56]:56s} {e['n']:6d} {pct(e['median_big']):>7s} "
                     f"{pct(e['p90_big']):>7s} {pct(e['median_all']):>7s}")
    err = np.abs([r["rel_error"] for r in rows])
    big = np.array([r["n_bytes"] >= min_bytes for r in rows])
    lines.append(f"{'all held-out points':56s} {len(rows):6d} "
                 f"{pct(float(np.median(err[big]))) if big.any() else pct(float('nan')):>7s} "
                 f"{pct(float(np.percentile(err[big], 90))) if big.any() else pct(float('nan')):>7s} "
                 f"{pct(float(np.median(err))):>7s}")
    return "\n".join(lines)


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
