"""Predictions: how long a collective takes on a given machine, the way NCCL plans it.

:func:`course_lib.clusters.cluster` describes a machine (GPU model, NVLink
fabric, nodes, NICs) and holds its calibrated link rates (re-exported here as
:func:`cluster`, with :class:`Cluster`, :func:`cluster_from_topo` and
:func:`cluster_from_spec`); :func:`predict_collective` returns the time, algbw and busbw of a collective
on it, choosing the algorithm (ring, tree, NVLS, hierarchical) and protocol
(LL, LL128, Simple) the way NCCL does: the fastest by its own model.

The model (chapter 7)
---------------------
For each algorithm ``a`` and protocol ``p`` the time of a collective of
``S`` bytes (the nccl-tests size) on ``n`` ranks is

``t = t_launch + L(a, p) + W / B(a, p) + F(a, p, S)``

* ``t_launch`` -- the fixed cost NCCL's own model leaves out: launching the
  kernels (``CALIBRATION["launch_s"]``, fitted: 28 us on runs where one
  process drove 8 GPUs, nccl-tests ``-g 8``, i.e. 3.5 us per GPU's kernel;
  ``launch_gpus=1`` for one process per GPU).  Measured small-message floors
  are 2-3x NCCL's estimates when one thread launches for many GPUs.
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
  well below its plateau, which a constant latency cannot do.  A
  calibrated Cluster may cut the share finer or coarser before the cap,
  ``min(c, S/(n k))`` with ``k = Cluster.pipeline_pieces`` (1 from spec;
  :mod:`course_lib.calibrating`).

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
network, ``S / min(B_node, B_net / k)`` with ``k`` what the busiest node of
NCCL's double binary tree sends (1 at 2 nodes, 1.5 at 3, 2 from 4:
:func:`course_lib.topology.tree_sends_per_node`) -- so a 2-node tree reports
a busbw above the network rate, as measured.  A tree's chains send
``2 (g-1)/g S`` per GPU (a chain's head talks to the network, its tail sends
nothing down); NVLS-tree's NVLink ports also relay what the network carries
(``S k / NICs`` more).  Each network level of a chunk's way exposes one
network step of the node (:meth:`Cluster.net_chunk_bytes`: NCCL's buffer
step on two channels per NIC, 8 MiB on 8 NICs), on top of the NVLink slice.
``hierarchical`` (ReduceScatter / AllReduce over rails / AllGather) overlaps
its phases the same way; it is not one of NCCL's algorithms and is modelled
only on request.  *Which*
algorithm runs is NCCL's choice, by its own estimate (``tuning.cc``:
:func:`_nccl_estimate_s`) on InfiniBand and RoCE; clouds ship tuner
plugins that pick what was measured fastest (EFA, TCPX/TCPXO: the model's
fastest), and Google's TCPX(O) profile allows only Ring and Tree with the
Simple protocol (``hardware.NETWORK_PROFILES``).

Validation.  :func:`validation_rows` predicts every row of
``course_lib/data/validation/nccl_tests_public.csv`` -- public nccl-tests runs, one
source per row, on machines that set no number of the model -- and
:func:`validation_errors` gives the busbw error per system
(``benchmarks/bench_calibration.py`` prints it).

What it does not capture: NCCL's exact channel and thread counts (it cuts
channels and chunks for mid-size messages), the thresholds inside a cloud's
tuner plugin (mid-size messages on TCPXO), older software and network
generations (2019 EFA waited about 35 us per network step; NCCL 2.8.3 on
p4d reached 60 % of what 2.9.9 did), Volta's NVLink running faster than
NCCL's 20 GB/s plan, PXN routing, rail-optimised vs fat-tree fabrics,
congestion beyond the NIC rate, clock/power throttling, and CollNet/SHARP in
the IB switches.  The
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
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache

from .analytic import COLLECTIVES, busbw_factor, hierarchical_allreduce_time_s
# the machine lives in course_lib.clusters; its names stay importable from here
from .clusters import (EXAMPLE_TOPO, FABRICS, TOPO_WORDS, Cluster, cluster,  # noqa: F401
                      cluster_from_spec, cluster_from_topo, parse_nccl_topo_xml,
                      parse_nvidia_smi_topo, split_launch_gpus, validation_data_dir)
from .hardware import calibration, gpu as _gpu, nccl_tuning
from .hardware import nic as _nic
from .hardware import calibration_curves, calibration_data_path  # noqa: F401
from .hardware import network_profile
from .topology import tree_sends_per_node
from .units import check_choice, check_int, check_positive

__all__ = ["FABRICS", "PREDICT_ALGORITHMS", "PROTOCOLS", "Cluster", "cluster",
           "cluster_from_topo", "parse_nvidia_smi_topo", "parse_nccl_topo_xml",
           "TOPO_WORDS", "EXAMPLE_TOPO", "validation_rows", "validation_errors",
           "cluster_from_spec", "validation_data_dir", "validation_report",
           "Prediction", "predict_collective", "predict_copy", "CopyPrediction",
           "calibration_curves", "calibration_data_path",
           "CALIBRATION_SYSTEMS", "busbw_range_factors", "spec_range_bands",
           "range_kind"]

#: Algorithms accepted by :func:`predict_collective`.
PREDICT_ALGORITHMS = ("auto", "ring", "tree", "nvls", "hierarchical", "direct")
#: NCCL's protocols.
PROTOCOLS = ("ll", "ll128", "simple")


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
    range_factors: tuple = field(default=(1.0, 1.0), compare=False, repr=False)

    @property
    def busbw_range_bytes_per_s(self) -> tuple:
        """(low, high) busbw, bytes/s: the band that held 80 % of the points
        this kind of prediction did not fit (:func:`busbw_range_factors`)."""
        lo, hi = self.range_factors
        return (self.busbw_bytes_per_s * lo, self.busbw_bytes_per_s * hi)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("candidates")
        d.pop("range_factors")
        d["busbw_range_bytes_per_s"] = self.busbw_range_bytes_per_s
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


def _proto_bw(bw: float, proto: str, clu: Cluster) -> float:
    """Bandwidth after protocol overheads (NCCL tuning.cc refinements)."""
    if proto == "ll":
        cap = nccl_tuning("ll_max_bw_sm80" if clu.gpu_record.sm_arch >= 80
                          else "ll_max_bw_sm70")
        return min(bw * clu.fitted("ll_efficiency"), cap)
    if proto == "ll128":
        return bw * clu.fitted("ll128_efficiency")
    return bw * clu.fitted("simple_efficiency")


def _protocols(clu: Cluster) -> tuple[str, ...]:
    # LL128 only over NVLink on SM70-SM90 and, across nodes, with the NIC on
    # the GPU's PCIe switch (tuning.cc v2.20.3: typeInter <= PATH_PXB, or
    # PXN on SM90; other cases "not tested and may cause silent data
    # corruption")
    sm = clu.gpu_record.sm_arch
    near_nic = clu.nodes == 1 or clu.nic_path == "switch" or (sm >= 90 and
                                                             clu.nic_path == "host")
    cal = clu.calibrated
    if clu.nodes > 1 and cal is not None and cal.ll128_across_nodes is not None:
        # what the run's NCCL did, found by the fit (a VM's topology, a NIC
        # path the spec does not say): course_lib.calibrating
        near_nic = cal.ll128_across_nodes
    if clu.intra_link_kind == "nvlink" and sm in (70, 80, 90) and near_nic:
        return PROTOCOLS
    return ("ll", "simple")


def _ring(coll, s, clu, proto):
    n, nodes = clu.n_ranks, clu.nodes
    bw = b_intra = clu.intra_bw_bytes_per_s()
    if nodes > 1:
        g = clu.gpus_per_node
        if clu.nics_per_node >= g > 1:
            # one ring per NIC, ring k leaving each node from GPU k: every GPU
            # sends 1/g of its ring traffic through its NIC, not its NVLinks
            b_intra = bw * g / (g - 1)
        bw = min(b_intra, clu.inter_bw_bytes_per_s())
    b = _proto_bw(bw, proto, clu)
    b_intra = _proto_bw(b_intra, proto, clu)
    c = clu.fitted("chunk_bytes")
    intra_kind = clu.intra_link_kind
    if coll == "allreduce":
        steps, inter = 2 * (n - 1), (2 * nodes if nodes > 1 else 0)
        wire, slice_ = 2 * (n - 1) / n * s, s / n
    elif coll in ("allgather", "reducescatter"):
        steps, inter = n - 1, nodes - 1
        wire, slice_ = (n - 1) / n * s, s / n
    else:  # broadcast, reduce: a pipelined chain
        steps, inter = n - 1, nodes - 1
        wire, slice_ = s, s
    k = clu.protocol_latency_scale(proto)
    lat_i = _hop("ring", proto, intra_kind) * k
    lat_x = _hop("ring", proto, "net") * k + clu.net_hop_s(proto)
    if proto == "ll" and inter:
        # a calibrated LL network step also pays for its bytes, up to one
        # channel's full load (a slice of S/n per channel: NCCL's Ring/LL
        # thread threshold is per rank); 0 from spec
        lat_x += clu.ll_net_step_s(slice_)
    hops = (steps - inter) * lat_i + inter * lat_x
    base = nccl_tuning(f"ring_{proto}_base") * k
    transfer = wire / b
    if inter == 0 or coll in ("broadcast", "reduce"):
        # every step exposes one slice (and its hop latency) in turn
        return base + hops, transfer, steps * min(c, slice_ / clu.pipeline_pieces) / b, b
    # Across nodes the hops differ.  A slice's way round the ring (its chain)
    # pays, per step, the hop's latency, its exposed slice and its transfer at
    # that hop's rate; the GPU that feeds a NIC is busy ``steps`` transfers at
    # the slower rate.  The ring takes the longer of the two: when the network
    # is much slower, the NVLink side's latencies and slices hide behind it.
    e = min(c, slice_ / clu.pipeline_pieces)
    t_i, t_x = slice_ / b_intra, slice_ / b
    chain = (steps - inter) * (lat_i + e / b_intra + t_i) + inter * (lat_x + e / b + t_x)
    queue = transfer + lat_x + e / b
    rest = max(chain, queue) - transfer
    lat_part = min(hops, rest)
    return base + lat_part, transfer, rest - lat_part, b


@lru_cache(maxsize=256)
def _net_traffic(nodes: int) -> float:
    """What the busiest node sends to the network per byte of a tree AllReduce
    (each way): :func:`course_lib.topology.tree_sends_per_node` of NCCL's
    double binary tree over the nodes.

    With 2 nodes each node is the other's only peer and sends S (half in each
    tree); with more, a node inner in one tree sends up and down in it, up to
    2 S (1.5 S with 3 nodes).  NCCL itself plans with ``bwInter`` for <= 2
    nodes and ``bwInter/2`` beyond (``NVLS_TREE`` in ``tuning.cc``, used by
    :func:`_nccl_estimate_s`).  A ring sends ``2 (n-1)/n S`` from every rank,
    all of which crosses a NIC at the node boundary, so at 2 nodes the tree
    moves half the ring's bytes.
    """
    return tree_sends_per_node(nodes)


def _tree(coll, s, clu, proto):
    """Tree AllReduce: reduce up a chain in each node and a tree over the
    nodes, broadcast back down; the phases are pipelined chunk by chunk, so
    the time is set by the slower of the node's links and the network, not
    their sum.  Over the node's links each GPU sends ``2 (g-1)/g S`` (a
    chain's head sends up to the network and its tail nothing down; the
    heads rotate over the channels); to the network the busiest node sends
    ``_net_traffic(nodes) S``.  :func:`course_lib.sim.schedules.nccl_tree`
    plays the same chains and trees transfer by transfer."""
    g, nodes = clu.gpus_per_node, clu.nodes
    eff = nccl_tuning("tree_efficiency")
    b_link = _proto_bw(clu.intra_bw_bytes_per_s(), proto, clu) * eff
    # per channel a chain's head sends up to the network (or is the root) and
    # its tail sends nothing down: over the node's links each GPU sends S up
    # and S down in g-1 of every g channels (the chains' heads rotate)
    b_alg = b_link / (2 * (g - 1) / g) if g > 1 else math.inf
    levels = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    if nodes > 1:
        b_net = _proto_bw(clu.inter_bw_bytes_per_s(), proto, clu) * eff
        b_alg = min(b_alg, b_net / _net_traffic(nodes))
        b_link = min(b_link, b_net)
    lat = clu.protocol_latency_scale(proto) * (nccl_tuning(f"tree_{proto}_base") + 2 * (
        (g - 1) * _hop_time("tree", proto, clu.intra_link_kind)
        + levels * _hop_time("tree", proto, "net"))) + 2 * levels * clu.net_hop_s(proto)
    if proto == "ll" and levels:
        # a calibrated LL network step also pays for its bytes, up to one
        # channel's full load (the whole message per channel on a tree); 0 from spec
        lat += 2 * levels * clu.ll_net_step_s(s)
    # each level of the (chain + tree) exposes one slice on the way up and one
    # on the way down; a slice is at most S/n, as on a ring
    k = clu.pipeline_pieces
    fill = 2 * max(g - 1 + levels, 1) * min(clu.fitted("chunk_bytes"),
                                            s / clu.n_ranks / k) / b_link
    if nodes > 1:  # and a network step at each level, up and down
        fill += 2 * levels * min(clu.net_chunk_bytes(), s / g / k) / b_net
    return lat, s / b_alg, fill, b_link


def _nvls_intra(coll, s, clu):
    n = clu.gpus_per_node
    b = clu.intra_bw_bytes_per_s() * calibration("nvls_efficiency")
    wire = s if coll == "allreduce" else (n - 1) / n * s
    fill = 3 * min(clu.fitted("chunk_bytes"), s / n / clu.pipeline_pieces) / b
    return (calibration("nvls_latency_s") * clu.protocol_latency_scale("simple"), wire / b,
            fill, b)


def _nvls_tree(coll, s, clu):
    """NVLS inside each node, a tree across nodes, pipelined (NCCL's NVLS_TREE)."""
    g, nodes = clu.gpus_per_node, clu.nodes
    levels = math.ceil(math.log2(nodes))
    # what crosses the network also crosses the NVLink port of the GPU at
    # its NIC: read out of the switch on the way out, pushed back in on the
    # way in -- per port S/nics more of each direction on top of NVLS's S
    relay = _net_traffic(nodes) / clu.nics_per_node
    b_in = clu.intra_bw_bytes_per_s() * calibration("nvls_efficiency") / (1 + relay)
    b_net = _proto_bw(clu.inter_bw_bytes_per_s(), "simple", clu)
    b = min(b_in, b_net / _net_traffic(nodes))
    lat = clu.protocol_latency_scale("simple") * (
        calibration("nvls_latency_s") + 2 * levels * nccl_tuning("nvls_tree_simple_hop_net")
    ) + 2 * levels * clu.net_hop_s("simple")
    k = clu.pipeline_pieces
    fill = (3 * min(clu.fitted("chunk_bytes"), s / g / k) / b
            + 2 * levels * min(clu.net_chunk_bytes(), s / g / k) / b_net)
    return lat, s / b, fill, b


def _hierarchical(coll, s, clu):
    """Intra-node ReduceScatter, inter-node AllReduce on S/g, intra-node AllGather.

    Pipelined as NCCL pipelines its multi-level algorithms: a chunk's
    inter-node step runs while the next chunk is reduced inside the node, so
    the transfer time is the slower phase, ``max(t_intra, t_inter)``
    (:func:`course_lib.analytic.hierarchical_allreduce_time_s` at the
    calibrated rates), and each phase adds its own fill.
    """
    g, nodes = clu.gpus_per_node, clu.nodes
    c = clu.fitted("chunk_bytes")
    proto = "simple"
    b_i = _proto_bw(clu.intra_bw_bytes_per_s(), proto, clu)
    steps = 2 * (g - 1)
    k = clu.protocol_latency_scale(proto)
    lat_i = steps * _hop("ring", proto, clu.intra_link_kind) * k
    fill_i = steps * min(c, s / g / clu.pipeline_pieces) / b_i
    # inter-node: g rails in parallel, each a ring over the nodes on S/g;
    # one rail gets nics_per_node/g of the node's network bandwidth
    b_x = _proto_bw(clu.inter_bw_bytes_per_s() / g, proto, clu)
    part = s / g
    steps_x = 2 * (nodes - 1)
    lat_x = steps_x * (_hop("ring", proto, "net") * k
                       + clu.net_hop_s(proto))
    fill_x = steps_x * min(c, part / nodes / clu.pipeline_pieces) / b_x
    lat = nccl_tuning("ring_simple_base") * k + lat_i + lat_x
    # the phases' bytes at these rates, pipelined: the slower road sets the time
    tr = hierarchical_allreduce_time_s(s, g, nodes, b_i, b_x)
    b_eff = s / tr * (2 * (clu.n_ranks - 1) / clu.n_ranks) if tr else 0.0
    return lat, tr, fill_i + fill_x, b_eff


def _direct_alltoall(s, clu):
    n, g, nodes = clu.n_ranks, clu.gpus_per_node, clu.nodes
    b_i = _proto_bw(clu.intra_bw_bytes_per_s(), "simple", clu)
    t_intra = (g - 1) / n * s / b_i
    t_inter = 0.0
    kind = clu.intra_link_kind
    if nodes > 1:
        b_x = _proto_bw(clu.inter_bw_bytes_per_s() / g, "simple", clu)
        t_inter = (n - g) / n * s / b_x
        kind = "net"
    lat = (nccl_tuning("ring_simple_base") + _hop("ring", "simple", kind)) * \
        clu.protocol_latency_scale("simple")
    b = s * (n - 1) / n / max(t_intra, t_inter) if max(t_intra, t_inter) > 0 else b_i
    return lat, max(t_intra, t_inter), 0.0, b


def _profile(clu):
    """The network kind's NCCL set-up (``hardware.NETWORK_PROFILES``) across
    nodes; None inside one node."""
    return network_profile(clu.network) if clu.nodes > 1 and clu.nic else None


def _candidates(coll, s, clu, algorithm):
    """(algorithm, protocol) -> (latency, transfer, fill, bandwidth)."""
    out = _candidates_all(coll, s, clu, algorithm)
    cal = clu.calibrated
    if cal is not None and cal.algorithms and algorithm == "auto":
        # the algorithms a calibrated run was found to use (course_lib.calibrating)
        out = {k: v for k, v in out.items() if k[0] in cal.algorithms} or out
    prof = _profile(clu)
    if prof is None or algorithm != "auto":
        return out
    keep = {k: v for k, v in out.items()
            if (prof["algorithms"] is None or k[0] in prof["algorithms"])
            and (prof["protocols"] is None or k[1] in prof["protocols"])}
    return keep or out


def _candidates_all(coll, s, clu, algorithm):
    n = clu.n_ranks
    out = {}
    # "hierarchical" is not one of NCCL's algorithms (the closest, CollNet,
    # needs SHARP switches): it is modelled when asked for, never chosen
    algos = [algorithm] if algorithm != "auto" else ["ring", "tree", "nvls", "direct"]
    for a in algos:
        if a == "direct":
            if coll == "alltoall":
                out[(a, "simple")] = _direct_alltoall(s, clu)
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
            for p in _protocols(clu):
                out[(a, p)] = _ring(coll, s, clu, p)
        elif a == "tree":
            if coll != "allreduce" or n < 3:
                if algorithm == "tree":
                    raise ValueError(f"algorithm='tree' supports collective="
                                     f"'allreduce' on >= 3 ranks (as NCCL); got "
                                     f"collective={coll!r}, {n} ranks")
                continue
            for p in _protocols(clu):
                out[(a, p)] = _tree(coll, s, clu, p)
        elif a == "nvls":
            if not clu.nvls_capable:
                if algorithm == "nvls":
                    raise ValueError(
                        f"algorithm='nvls' needs in-switch reduction (NVLink SHARP): "
                        f"fabric='nvswitch' with H100/H200/B200; this cluster is "
                        f"{clu.gpu} on {clu.fabric!r}")
                continue
            if coll not in ("allreduce", "allgather", "reducescatter"):
                if algorithm == "nvls":
                    raise ValueError(f"algorithm='nvls' supports allreduce, allgather "
                                     f"and reducescatter; got collective={coll!r}")
                continue
            if clu.nodes == 1:
                out[(a, "simple")] = _nvls_intra(coll, s, clu)
            elif coll == "allreduce":
                out[(a, "simple")] = _nvls_tree(coll, s, clu)
            elif algorithm == "nvls":
                raise ValueError("algorithm='nvls' across nodes is modelled for "
                                 "allreduce only")
        elif a == "hierarchical":
            if clu.nodes < 2 or coll != "allreduce":
                if algorithm == "hierarchical":
                    raise ValueError(f"algorithm='hierarchical' needs nodes > 1 and "
                                     f"collective='allreduce'; got nodes={clu.nodes}, "
                                     f"collective={coll!r}")
                continue
            out[(a, "simple")] = _hierarchical(coll, s, clu)
    return out


def _nccl_estimate_s(coll, s, clu, algo, proto) -> float:
    """NCCL's own time estimate for (algorithm, protocol) across nodes.

    After ``ncclTopoTuneModel`` in ``NVIDIA/nccl:src/graph/tuning.cc``
    (v2.20.3): the bus bandwidth of a multi-node graph is the node's
    bandwidth as NCCL plans it (NVLink or PCIe planning rates, NIC port
    rates), ``min(intra, inter)``; Ring turns busbw into algbw by
    ``n / nsteps`` (LL x 1/4, LL128 x 0.92, Simple's latency x 1.4 on SM80+
    or 1.9 before: the "plateau effect of ring"); Tree by x 0.92 x 0.5 (LL
    x 1/3.8, LL128 x 120/128); NVLS_TREE by x 5/6 of ``min(intra, inter)``
    (``inter/2`` beyond 2 nodes).  Latencies: ``baseLat + hwLat`` per step.
    Used only to *choose*; the time reported is the model's.  NCCL plans
    with its own numbers, so a calibrated Cluster is planned from spec.
    """
    clu = clu.from_spec
    n, g, nodes = clu.n_ranks, clu.gpus_per_node, clu.nodes
    inter = clu.nics_per_node * _nic(clu.nic).bw_per_dir_bytes_per_s
    bw = min(clu.intra_bw_bytes_per_s(), inter)
    levels = math.ceil(math.log2(nodes))
    kind = clu.intra_link_kind
    if algo == "ring":
        nsteps = 2 * (n - 1) if coll == "allreduce" else n - 1
        ninter = 2 * nodes if coll == "allreduce" else nodes - 1
        bus = {"ll": bw / 4, "ll128": bw * 0.92, "simple": bw}[proto]
        alg = bus * n / nsteps
        lat = nccl_tuning(f"ring_{proto}_base") + (nsteps - ninter) * _hop(
            "ring", proto, kind) + ninter * _hop("ring", proto, "net")
        if proto == "simple" and coll == "allreduce":
            lat *= 1.4 if clu.gpu_record.sm_arch >= 80 else 1.9
    elif algo == "tree":
        bus = bw * 0.92 * {"ll": 1 / 3.8, "ll128": 120 / 128, "simple": 1.0}[proto]
        alg = bus * 0.5
        lat = nccl_tuning(f"tree_{proto}_base") + 2 * (
            (g - 1) * _hop("tree", proto, kind) + levels * _hop("tree", proto, "net"))
    elif algo == "nvls":
        alg = 5 / 6 * min(clu.intra_bw_bytes_per_s(), inter / (1 if nodes <= 2 else 2))
        lat = nccl_tuning("nvls_simple_hop_nvlink") + 2 * levels * nccl_tuning(
            "nvls_tree_simple_hop_net")
    else:  # hierarchical, direct: only when asked for, never competing
        return math.inf
    return lat + s / alg


def predict_collective(collective: str, n_bytes: float, cluster: Cluster,
                       algorithm: str = "auto", *,
                       launch_gpus: int | None = None) -> Prediction:
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
    launch_gpus : int, optional
        GPUs whose kernels one host thread launches per collective (nccl-tests
        ``-g``; 1 for one process per GPU, as with MPI or PyTorch).  The launch
        cost is ``launch_s / CALIBRATION["launch_gpus"]`` (one kernel, 3.5 us)
        per GPU.  Default: as in the calibration runs (``-g 8``: 28 us).

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
    if cluster.n_ranks == 1:
        raise ValueError("cluster has a single GPU: a collective needs >= 2 ranks")
    if launch_gpus is not None:
        launch_gpus = check_int(launch_gpus, "launch_gpus", minimum=1, maximum=4096)
    p = _predict(coll, s, cluster, algo, launch_gpus)
    return replace(p, range_factors=busbw_range_factors(cluster, coll, s))


#: Sizes from which a prediction counts as "large" for its range (1 MiB).
RANGE_SPLIT_BYTES = 2.0**20
_SPEC_BANDS: dict = {}


def range_kind(cluster: Cluster, n_bytes: float) -> str:
    """The kind of system a from-spec range is taken from: ``"one node"`` or
    ``"across nodes"``, and ``"< 1 MiB"`` or ``">= 1 MiB"``.

    >>> range_kind(cluster("H100", nodes=2, nic="NDR"), 2**30)
    'across nodes, >= 1 MiB'
    """
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster from course_lib.cluster(...), "
                        f"got {type(cluster).__name__}")
    n_bytes = check_positive(n_bytes, "n_bytes")
    where = "one node" if cluster.nodes == 1 else "across nodes"
    size = ">= 1 MiB" if n_bytes >= RANGE_SPLIT_BYTES else "< 1 MiB"
    return f"{where}, {size}"


def spec_range_bands(rows=None) -> dict:
    """``{kind: (low, high)}``: the 10th and 90th percentile of measured /
    predicted busbw over the held-out rows of the validation CSV, by
    :func:`range_kind` -- the band that held 80 % of the held-out points of
    that kind of system.  Computed once from the data (or from ``rows`` of
    :func:`validation_rows`, then not cached).

    >>> lo, hi = spec_range_bands()["one node, >= 1 MiB"]
    >>> lo < 1 < hi
    True
    """
    import numpy as np

    if rows is None and _SPEC_BANDS:
        return dict(_SPEC_BANDS)
    rs = validation_rows(split="heldout") if rows is None else _check_rows(rows)
    by: dict = {}
    for r in rs:
        kind = range_kind(cluster_from_spec(split_launch_gpus(r["cluster"])[0]),
                          r["n_bytes"])
        by.setdefault(kind, []).append(r["measured_busbw"] / r["predicted_busbw"])
    out = {k: tuple(float(q) for q in np.percentile(v, [10, 90])) for k, v in by.items()}
    if rows is None:
        _SPEC_BANDS.update(out)
    return out


def busbw_range_factors(cluster: Cluster, collective: str, n_bytes: float) -> tuple:
    """(low, high) factors on a predicted busbw.

    From spec: :func:`spec_range_bands` for the :func:`range_kind` of the
    prediction.  Calibrated (:func:`course_lib.calibrating.calibrate`): the
    calibration's own band, ``busbw_range`` on the machine the run ran on,
    ``what_if_range`` with other node or NIC counts.
    """
    kind = range_kind(cluster, n_bytes)
    check_choice(collective, "collective", COLLECTIVES)
    cal = cluster.calibrated
    if cal is not None:
        same = cal.nodes == cluster.nodes and cal.nics_per_node == cluster.nics_per_node
        return tuple(cal.busbw_range if same else cal.what_if_range)
    return spec_range_bands().get(kind, (1.0, 1.0))


def _predict(coll, s, cluster, algo, launch_gpus) -> Prediction:
    """:func:`predict_collective` on checked arguments, without its range."""
    n = cluster.n_ranks
    cands = _candidates(coll, s, cluster, algo)
    if not cands:
        raise ValueError(f"no algorithm available for collective={coll!r} on "
                         f"{cluster.describe()}")
    cal = cluster.calibrated
    if cal is not None and cal.launch_s is not None:
        launch = cal.launch_s
        if launch_gpus is not None:
            launch *= launch_gpus / cal.launch_gpus
    else:
        launch = calibration("launch_s")
        if launch_gpus is not None:
            launch *= launch_gpus / calibration("launch_gpus")
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
# the calibration data
# ---------------------------------------------------------------------------
#: Calibration curves (system name in the CSV) and the cluster each describes.
CALIBRATION_SYSTEMS = {
    "A100-SXM (8-GPU node, NVSwitch)": ("A100", 8, "nvswitch"),
    "H100-SXM (HGX 8-GPU)": ("H100", 8, "nvswitch"),
    "H100-SXM (HGX, PCIe Gen5 host link)": ("H100", 1, "pcie"),
}


# ---------------------------------------------------------------------------
# the validation data: public nccl-tests runs on machines the model never saw
# ---------------------------------------------------------------------------
_COLLECTIVE_OF = {"AllReduce": "allreduce", "AllGather": "allgather",
                  "ReduceScatter": "reducescatter", "Broadcast": "broadcast",
                  "Reduce": "reduce", "AllToAll": "alltoall"}



def validation_rows(path=None, split: str | None = None) -> list[dict]:
    """The rows of ``course_lib/data/validation/nccl_tests_public.csv`` with the model's
    prediction next to each measurement.

    Each row is the CSV's dict plus ``n_bytes``, ``measured_busbw``,
    ``predicted_busbw`` (bytes/s), ``rel_error`` (predicted / measured - 1),
    ``algorithm`` and ``protocol``.  A ``launch_gpus=N`` in the ``cluster``
    column is the run's nccl-tests ``-g`` (see :func:`predict_collective`).
    ``split``: ``"heldout"`` (never used to set a number) or ``"fit"`` (used
    to set one, named in its note); None for both.
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
                spec, launch_gpus = split_launch_gpus(row["cluster"])
                clu = cluster_from_spec(spec)
                coll = _COLLECTIVE_OF[row["collective"]]
                size = float(row["bytes"])
                p = _predict(coll, size, clu, "auto", launch_gpus)
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
    (0.87, fitted on H100 Gen5 H2D).  Pageable memory goes through the
    driver's staging buffer: the same copy plus the staging time measured
    size by size on an H200 (:func:`course_lib.hardware.pageable_extra_time_s`,
    nothing up to 16 KiB host to GPU, about 0.35 of pinned at 1 MiB and 0.12
    at 1 GiB) -- the one model of :func:`course_lib.host_copy_time_s`, not
    one ratio for every size.  Does not capture NUMA placement (a far socket
    loses most of the bandwidth) or the D2H drop seen on some hosts.
    Chapters 3 and 4.

    >>> round(predict_copy(64e6).bw_bytes_per_s / 1e9, 1)
    54.7
    >>> predict_copy(1024, memory="pageable").time_s == predict_copy(1024).time_s
    True
    """
    from .analytic import host_copy_time_s

    s = check_positive(n_bytes, "n_bytes")
    direction = check_choice(direction, "direction", ("h2d", "d2h"))
    memory = check_choice(memory, "memory", ("pinned", "pageable"))
    rec = _gpu(gpu)
    t = host_copy_time_s(s, rec.pcie_gen, memory, direction, measured=True)
    return CopyPrediction(s, t, s / t, direction, memory)
