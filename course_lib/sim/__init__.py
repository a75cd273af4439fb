"""A discrete-event simulator of collectives and training steps on GPU topologies.

Use :func:`simulate_collective` for one collective; build your own workloads
with the lower layers:

* :mod:`course_lib.sim.network` -- :class:`Network`: a topology as directed,
  bandwidth-limited links with latency, and routes between nodes;
* :mod:`course_lib.sim.ops` -- :class:`ScheduleBuilder` (ops: sends and
  computes, with dependencies and FIFO queues) and the :class:`Trace` an
  engine returns;
* :mod:`course_lib.sim.events` -- the reference engine (:func:`run_events`:
  a heap of events, max-min fair sharing of every link);
* :mod:`course_lib.sim.steps` -- the fast engine for step schedules
  (:func:`run_batched`, :func:`run_steps`: a whole ring step at once with
  numpy); :mod:`course_lib.sim.core` is the one-page overview and
  :func:`run`, which picks the engine;
* :mod:`course_lib.sim.schedules` -- ring, chain, double binary tree,
  in-switch reduction, hierarchical and direct all-to-all schedules;
* :mod:`course_lib.sim.workloads` -- a data-parallel training step with
  gradient buckets overlapping the backward pass, a straggler, two jobs
  sharing links.

Rings are built in step form (:func:`course_lib.sim.schedules.ring_steps`:
the ring's R x n arrays once, not a row per transfer) and played by the
step engine; the trace keeps each transfer's start time and assembles its
rows when they are first read.  1,024 ranks with one ring per NIC (16.8
million transfers) simulate in under a second on two cores
(``benchmarks/bench_sim.py``).

Big rings: ``simulate_collective(..., trace=False)`` plays a ring
collective step by step (:func:`course_lib.sim.schedules.ring_steps` and
:func:`course_lib.sim.steps.run_steps`), with the batched engine's
arithmetic and memory that grows with the ranks, not the transfers: up to
``MAX_STREAM_RANKS`` ranks, with ``trace`` and ``schedule`` left ``None``.

A custom workload in four lines::

    from course_lib.sim import Network, ScheduleBuilder, run
    net = Network(cl.nvswitch_topology(8, gpu="H100"))
    b = ScheduleBuilder(); first = b.add_sends([0], [1], [1e9], queue=[0])
    trace = run(b.build(), net)

What the simulator does not capture: protocol details below the message
level (NCCL's slices, flags and FIFO slots are folded into the calibrated
per-step costs), congestion control and packet loss in the network,
adaptive routing, the reduction arithmetic's use of SM and memory
bandwidth (in calibrated mode it is part of the effective link rate), and
multi-path routes (one shortest route per pair).

Rings on directly wired GPUs: with ``channels > 1`` on a full NVLink mesh,
the DGX-1 cube-mesh, a ring or a torus, each channel runs on its own ring
order from :func:`course_lib.sim.schedules.ring_orders` -- Hamiltonian
cycles over the direct links and their reverses, chosen greedily so that
every link carries rings in proportion to its NVLink count -- standing in
for NCCL's graph search; a single-node mesh or cube-mesh Cluster gets that
many channels by default.  Then the simulated ring agrees with
:func:`course_lib.predict.predict_collective` (256 MiB AllReduce busbw: 4x
A100 mesh ~224 vs ~221 GB/s predicted; DGX-1 V100 ~109 vs ~109 GB/s),
where one ring order alone reached ~75 and ~19 GB/s (``channels=1`` still
does: one ring in rank order, through 2-hop routes on the cube-mesh).  Not
modelled: NCCL's actual search (its bandwidth levels, PCI and NIC
placement, ring counts per GPU architecture), rings that mix
direct links with a switch, unequal shares per channel, and graphs over
``MAX_RING_GPUS`` (16) GPUs or where the greedy search finds no
Hamiltonian cycle, which keep the single order.  On switched fabrics
(NVSwitch, PCIe) all channels share one order, as before; across nodes
they leave through different NICs.  Sharing is fair
(processor sharing) on every directed link; see :mod:`course_lib.sim.events`.

Chapter 7 (collectives), chapter 8 (overlap, stragglers, contention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..analytic import COLLECTIVES, busbw_factor
from ..clusters import Cluster
from ..hardware import calibration, nccl_tuning
from ..units import check_choice, check_int, check_positive
from . import schedules
from .core import (COMPUTE, SEND, Engine, Schedule, ScheduleBuilder, Trace, run,
                   run_batched, run_events, run_steps)
from .network import Network

#: Limits that keep a simulation inside a laptop's (or Binder's) memory: with
#: ``trace=True`` the engine stores every transfer (~260 bytes each, schedule
#: and trace; a ring keeps its steps and 8 bytes a transfer, its start time,
#: until the trace's rows are read: ~53 bytes a row); with ``trace=False``
#: (ring only) memory grows with the ranks, not the transfers, and only the
#: run time limits the size.
MAX_SIM_RANKS = 4096
MAX_SIM_TRANSFERS = 40_000_000
MAX_STREAM_RANKS = 65536

__all__ = ["simulate_collective", "SimResult", "SIM_ALGORITHMS", "Network",
           "ScheduleBuilder", "Schedule", "Trace", "Engine", "run", "run_events",
           "run_batched", "SEND", "COMPUTE", "schedules"]

#: Algorithms :func:`simulate_collective` can schedule.
SIM_ALGORITHMS = ("ring", "tree", "nvls", "hierarchical", "direct")


@dataclass
class SimResult:
    """A simulated collective: its time, nccl-tests bandwidths and the trace.

    ``trace`` and ``schedule`` are ``None`` when it was simulated with
    ``trace=False`` (nothing per transfer was kept); ``n_transfers`` is the
    number of transfers played either way.
    """

    collective: str
    algorithm: str
    n_bytes: float
    n_ranks: int
    time_s: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    trace: Trace | None
    network: Network
    schedule: Schedule | None
    n_transfers: int = 0

    def to_dict(self) -> dict:
        """The numbers (no trace): collective, algorithm, sizes, time, bandwidths,
        ``n_transfers`` and ``traced`` (False after ``trace=False``)."""
        d = {k: getattr(self, k) for k in ("collective", "algorithm", "n_bytes",
                                           "n_ranks", "time_s", "algbw_bytes_per_s",
                                           "busbw_bytes_per_s", "n_transfers")}
        d["traced"] = self.trace is not None
        return d


def _network_and_overheads(cluster, overheads, algorithm):
    if isinstance(cluster, Cluster):
        calibrated = True if overheads is None else bool(overheads)
        if calibrated:
            net = Network.from_cluster(cluster, nvls=algorithm == "nvls",
                                       tree=algorithm == "tree")
            # the constants the predictor plans with: a calibrated Cluster's
            # launch, latency scale and slice where it carries them
            base = {"ring": nccl_tuning("ring_simple_base"),
                    "hierarchical": nccl_tuning("ring_simple_base"),
                    "direct": nccl_tuning("ring_simple_base"),
                    "tree": nccl_tuning("tree_simple_base"),
                    "nvls": calibration("nvls_latency_s")}[algorithm]
            ov = schedules.Overheads(
                cluster.fitted("launch_s") + base * cluster.protocol_latency_scale("simple"),
                cluster.fitted("chunk_bytes") if algorithm in ("ring", "hierarchical")
                else 0.0,
                algorithm == "nvls", cluster.pipeline_pieces)
            return net, ov, cluster
        return Network(cluster.topology()), None, cluster
    if isinstance(cluster, nx.Graph):
        if overheads:
            raise ValueError("overheads=True needs a Cluster (course_lib.cluster(...)); "
                             "a bare topology is simulated ideally")
        return Network(cluster), None, None
    raise TypeError(f"cluster must be a Cluster (course_lib.cluster(...)) or a "
                    f"topology graph; got {type(cluster).__name__}")


def simulate_collective(collective: str, n_bytes: float, cluster,
                        algorithm: str = "ring", chunks: int = 1, *,
                        channels: int | None = None, overheads: bool | None = None,
                        engine: str = "auto", trace: bool = True) -> SimResult:
    """Simulate one collective transfer by transfer.

    Parameters
    ----------
    collective : str
        ``"allreduce"``, ``"allgather"``, ``"reducescatter"``,
        ``"broadcast"``, ``"reduce"`` or ``"alltoall"``.
    n_bytes : float
        nccl-tests size S, bytes.
    cluster : Cluster or networkx.Graph
        A :func:`course_lib.cluster` (calibrated link rates and overheads by
        default) or a bare topology (ideal alpha-beta links).
    algorithm : {"ring", "tree", "nvls", "hierarchical", "direct"}
        ``"tree"``: double binary tree over the ranks (allreduce) on a bare
        topology; on a calibrated Cluster NCCL's tree -- a chain through each
        node's GPUs per channel and a double binary tree over the nodes,
        pipelined (:func:`course_lib.sim.schedules.nccl_tree`); ``"nvls"``:
        reduction in the NVSwitch (single-node NVSwitch, allreduce);
        ``"hierarchical"``: two-level allreduce on a multi-node cluster,
        pipelined on a calibrated Cluster
        (:func:`course_lib.sim.schedules.hierarchical_pipelined`);
        ``"direct"``: alltoall.  On a calibrated Cluster ring, tree and
        hierarchical agree with :func:`course_lib.predict.predict_collective`
        within 5 % (tests/test_sim_predict_agreement.py).
    chunks : int
        Pieces each step's message is cut into (pipelining).
    channels : int, optional
        Parallel rings (ring algorithm), each on S/channels; on a two-level
        cluster each leaves its node through a different NIC; on GPUs wired
        to each other (NVLink mesh, DGX-1 cube-mesh, ring, torus) channel k
        runs on the k-th order of :func:`course_lib.sim.schedules.ring_orders`
        (cycling), so several channels use every NVLink in both directions;
        ``channels=1`` is one ring in rank order (2-hop routes where ranks
        are not neighbours).  Default: on a single-node ``fabric="mesh"``
        or ``"cube-mesh"`` Cluster, as many as ``ring_orders`` finds (e.g.
        6 on 4x A100 mesh and on the DGX-1), as NCCL builds its rings;
        on a multi-node Cluster, one per NIC (``nics_per_node``), as NCCL
        runs one ring through each NIC; elsewhere 1.
    overheads : bool, optional
        Add the calibrated launch, base latency and exposed slices (default:
        yes for a Cluster, no for a topology).
    engine : {"auto", "events", "batched"}
        See :func:`course_lib.sim.core.run`.
    trace : bool
        ``True`` (default): build the whole schedule, play it and keep the
        trace (every transfer; up to ``MAX_SIM_RANKS`` ranks and
        ``MAX_SIM_TRANSFERS`` transfers).  ``False``: generate and play the
        ring step by step (:func:`course_lib.sim.schedules.ring_steps`,
        :func:`course_lib.sim.steps.run_steps`), the same arithmetic as the
        batched engine with memory O(ranks), up to ``MAX_STREAM_RANKS``
        ranks; only ``algorithm="ring"`` with allreduce, allgather or
        reducescatter, and the result's ``trace`` and ``schedule`` are
        ``None``.

    Returns
    -------
    SimResult
        ``time_s`` (last delivery), ``algbw``/``busbw``, ``n_transfers`` and
        the ``trace`` (``None`` with ``trace=False``).

    Notes
    -----
    Ideal ring, one chunk, no contention: ``t = steps (alpha + S/(n B))``,
    equal to ``analytic.collective_time_s``.  Chapter 7.

    Examples
    --------
    >>> from course_lib.topology import nvswitch_topology
    >>> r = simulate_collective("allreduce", 1e9, nvswitch_topology(8, gpu="H100"))
    >>> round(r.time_s * 1e3, 3)   # 2 (n-1)/n S/B + 14 x 2 x 0.6 us
    3.906
    """
    coll = check_choice(collective, "collective", COLLECTIVES)
    s = check_positive(n_bytes, "n_bytes")
    algo = check_choice(algorithm, "algorithm", SIM_ALGORITHMS)
    chunks = check_int(chunks, "chunks", minimum=1, maximum=4096)
    if channels is not None:
        channels = check_int(channels, "channels", minimum=1, maximum=64)
    if not isinstance(trace, (bool, np.bool_)):
        raise TypeError(f"trace must be True or False, got {type(trace).__name__}")
    if not trace:
        if algo != "ring" or coll not in ("allreduce", "allgather", "reducescatter"):
            raise ValueError(f"trace=False supports algorithm='ring' with allreduce, "
                             f"allgather or reducescatter; got algorithm={algo!r}, "
                             f"collective={coll!r} (use trace=True)")
        if engine not in ("auto", "batched"):
            raise ValueError(f"trace=False plays the ring step by step (the batched "
                             f"engine's arithmetic): engine must be 'auto' or 'batched', "
                             f"got {engine!r}")
    max_ranks = MAX_SIM_RANKS if trace else MAX_STREAM_RANKS
    if getattr(cluster, "n_ranks", 0) > max_ranks:
        raise ValueError(_too_many_ranks(cluster.n_ranks, trace))
    net, ov, clu = _network_and_overheads(cluster, overheads, algo)
    if channels is None:
        channels = _default_channels(algo, clu, net)
    ranks = net.gpus
    n = len(ranks)
    if n < 2:
        raise ValueError("a collective needs at least 2 GPUs")
    if n > max_ranks:
        raise ValueError(_too_many_ranks(n, trace))
    if trace and 2 * n * (n - 1) * chunks * channels > MAX_SIM_TRANSFERS:
        raise ValueError(
            f"{n} ranks x chunks={chunks} x channels={channels} make about "
            f"{2 * n * (n - 1) * chunks * channels:,} transfers; with trace=True the "
            f"simulator holds every transfer in memory (~260 bytes each) and accepts at "
            f"most {MAX_SIM_TRANSFERS:,}: pass trace=False (ring; keeps no trace), lower "
            f"chunks/channels or use predict_collective")
    if coll == "alltoall" and algo != "direct":
        raise ValueError(f"collective='alltoall' uses algorithm='direct'; got {algo!r}")
    if not trace:
        orders = schedules.channel_orders(net, ranks, channels)
        t, n_ops = run_steps(schedules.ring_steps(net, orders, coll, s, chunks, ov),
                             net, window=chunks)
        algbw = s / t
        return SimResult(coll, algo, s, n, t, algbw, algbw * busbw_factor(coll, n),
                         None, net, None, n_ops)
    b = ScheduleBuilder()
    _add_collective(b, coll, algo, net, s, chunks, channels, ov, clu)
    sched = b.build()
    tr = run(sched, net, engine)
    t = tr.last_end_s
    algbw = s / t
    return SimResult(coll, algo, s, n, t, algbw, algbw * busbw_factor(coll, n),
                     tr, net, sched, len(sched))


#: Transfers a calibrated tree is cut into at most (~260 bytes each in the
#: trace): enough pieces that the pipeline's own ramp stays a few per cent of
#: the transfer time, few enough for a Binder session.
TREE_TRANSFERS = 250_000
#: Most channels of a calibrated tree (a mesh's ring orders x its GPUs).
MAX_TREE_CHANNELS = 64
#: Smallest piece of a calibrated tree, bytes (below it, more pieces only
#: add transfers: the time is latency).
MIN_TREE_PIECE = 4096


def _pieces(s, sends_per_piece, split) -> int:
    """Pieces of a pipelined calibrated schedule: as many as
    ``TREE_TRANSFERS`` allows, none whose share per send (``S / split /
    pieces``) is under ``MIN_TREE_PIECE`` bytes."""
    most = max(1, TREE_TRANSFERS // sends_per_piece)
    return int(max(1, min(most, math.ceil(s / split / MIN_TREE_PIECE))))


def _tree_fill_s(s, clu) -> float:
    """NCCL's chunks a tree exposes on a piece's way (the predictor's fill):
    one slice of ``min(chunk_bytes, S/n)`` per level at the tree's link rate,
    and one network step (``Cluster.net_chunk_bytes``) per network level."""
    g, nodes = clu.gpus_per_node, clu.nodes
    levels = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    eff = clu.fitted("simple_efficiency") * nccl_tuning("tree_efficiency")
    b_link = clu.intra_bw_bytes_per_s() * eff
    k = clu.pipeline_pieces
    fill = 0.0
    if nodes > 1:
        b_net = clu.inter_bw_bytes_per_s() * eff
        b_link = min(b_link, b_net)
        fill = 2 * levels * min(clu.net_chunk_bytes(), s / g / k) / b_net
    return fill + 2 * max(g - 1 + levels, 1) * min(clu.fitted("chunk_bytes"),
                                                   s / clu.n_ranks / k) / b_link


def _hierarchical_fill_s(s, clu) -> float:
    """The two-level AllReduce's exposed slices (the predictor's fill): one
    per step inside the node and one per step over the rails."""
    g, nodes = clu.gpus_per_node, clu.nodes
    c = clu.fitted("chunk_bytes")
    simple = clu.fitted("simple_efficiency")
    b_i = clu.intra_bw_bytes_per_s() * simple
    b_x = clu.inter_bw_bytes_per_s() / g * simple
    k = clu.pipeline_pieces
    return (2 * (g - 1) * min(c, s / g / k) / b_i
            + 2 * (nodes - 1) * min(c, s / g / nodes / k) / b_x)


def _tree_pieces(s, clu, channels, chunks) -> int:
    """Pieces per channel of a calibrated tree: ``chunks`` if given, else as
    many as ``TREE_TRANSFERS`` allows, none under ``MIN_TREE_PIECE`` bytes.

    NCCL's chunks are exposed once per level on the way (the predictor's
    fill term, which :func:`course_lib.sim.schedules.nccl_tree` charges
    explicitly); many small pieces keep the simulated ramp from charging it
    a second time."""
    if chunks > 1:
        return chunks
    return _pieces(s, channels * 2 * (clu.n_ranks - 1), channels)


def _default_channels(algo, clu, net) -> int:
    """NCCL's ring count: every ring order of a single-node NVLink mesh or
    cube-mesh, one ring per NIC across nodes, else 1; a calibrated tree runs
    one channel per GPU of a node (each GPU heads one chain), two across
    nodes (one on each of the two node trees)."""
    most = int(nccl_tuning("max_channels"))
    if algo == "tree" and clu is not None:
        if clu.nodes == 1 and clu.fabric in ("mesh", "cube-mesh"):
            # every ring order cut at every GPU: chains over direct NVLinks
            return min(len(schedules.ring_orders(net.topo, most)) * clu.gpus_per_node,
                       MAX_TREE_CHANNELS)
        return clu.gpus_per_node * (2 if clu.nodes > 1 else 1)
    if algo != "ring" or clu is None:
        return 1
    if clu.nodes == 1 and clu.fabric in ("mesh", "cube-mesh"):
        return len(schedules.ring_orders(net.topo, most))
    if clu.nodes > 1:  # NCCL runs one ring per NIC across nodes (as predict_collective)
        return min(clu.nics_per_node, most)
    return 1


def _add_collective(b, coll, algo, net, s, chunks, channels, ov, clu) -> None:
    """Append ``algo``'s schedule of collective ``coll`` on ``s`` bytes to ``b``."""
    ranks = net.gpus
    n = len(ranks)
    if algo == "ring":
        if coll in ("allreduce", "allgather", "reducescatter"):
            # schedules.ring's sends, in step form, without an array of their ids
            orders = schedules.channel_orders(net, ranks, channels)
            b.add_steps(schedules.ring_steps(net, orders, coll, s, chunks, ov))
        elif coll == "broadcast":
            schedules.chain(b, net, ranks, s, chunks, ov)
        else:  # reduce: the chain runs towards rank 0
            schedules.chain(b, net, ranks[::-1], s, chunks, ov)
    elif algo == "tree":
        if coll != "allreduce":
            raise ValueError(f"algorithm='tree' simulates allreduce; got {coll!r}")
        if ov is not None:  # a calibrated cluster: NCCL's chains and node trees
            g = clu.gpus_per_node
            fill = _tree_fill_s(s, clu)
            orders = None
            if clu.nodes == 1 and clu.fabric in ("mesh", "cube-mesh"):
                # chains over direct NVLinks, as NCCL's search finds them
                orders = schedules.ring_orders(net.topo, int(nccl_tuning("max_channels")))
            schedules.nccl_tree(b, net, s, clu.nodes, g, channels,
                                _tree_pieces(s, clu, channels, chunks), ov,
                                fill_s=fill, chain_orders=orders)
        else:
            schedules.double_tree(b, net, ranks, s, chunks, ov)
    elif algo == "nvls":
        if coll != "allreduce" or "nvswitch" not in net.index:
            raise ValueError("algorithm='nvls' simulates allreduce on a single-node "
                             "NVSwitch machine")
        if clu is not None and not clu.nvls_capable:
            raise ValueError(f"algorithm='nvls' needs H100 or later on NVSwitch; "
                             f"cluster has {clu.gpu} on {clu.fabric!r}")
        if ov is not None and chunks == 1:
            piece = min(clu.fitted("chunk_bytes"), s / n / clu.pipeline_pieces)
            chunks = max(1, math.ceil(s / piece))
        schedules.in_switch(b, net, ranks, s, chunks, ov)
    elif algo == "hierarchical":
        g = net.topo.graph
        if coll != "allreduce" or "nodes" not in g:
            raise ValueError("algorithm='hierarchical' simulates allreduce on a "
                             "multi-node (two-level) cluster")
        if ov is not None:  # a calibrated cluster: the phases pipelined, as predicted
            per = g["gpus_per_node"]
            sends = 2 * n * (per - 1) + 2 * n * (g["nodes"] - 1)  # of one piece
            pieces = chunks if chunks > 1 else _pieces(s, sends, per)
            schedules.hierarchical_pipelined(b, net, s, g["nodes"], per, pieces, ov,
                                             fill_s=_hierarchical_fill_s(s, clu))
        else:
            schedules.hierarchical(b, net, s, g["nodes"], g["gpus_per_node"], chunks, ov)
    else:
        if coll != "alltoall":
            raise ValueError(f"algorithm='direct' is for alltoall; got {coll!r}")
        schedules.direct(b, net, ranks, s, ov)


def _too_many_ranks(n, trace):
    if trace:
        return (f"cluster has {n} ranks; with trace=True the simulator keeps every "
                f"transfer and is limited to {MAX_SIM_RANKS} ranks: pass trace=False "
                f"(ring, up to {MAX_STREAM_RANKS} ranks, no trace kept) or use "
                f"predict_collective")
    return (f"cluster has {n} ranks; trace=False simulates up to {MAX_STREAM_RANKS} "
            f"ranks: use predict_collective for larger clusters")
