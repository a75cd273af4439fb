"""Workloads beyond one collective: overlap, stragglers, contention (chapter 8).

Each function builds a schedule with :class:`~course_lib.sim.ops.ScheduleBuilder`,
plays it with the event engine and returns a :class:`WorkloadResult`.
Rings here are the ideal ring schedule of :mod:`course_lib.sim.schedules`
(one chunk per step) on whatever network you pass -- a calibrated
``Network.from_cluster(cl.cluster(...))`` or an ideal ``Network(topo)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..units import check_int, check_nonnegative, check_positive
from . import schedules
from .events import run_events
from .ops import ScheduleBuilder, Trace
from .network import Network

__all__ = ["WorkloadResult", "data_parallel_step", "straggler_step", "shared_links"]


@dataclass
class WorkloadResult:
    """Time of a workload, the named parts and the trace."""

    time_s: float
    parts: dict = field(default_factory=dict)
    trace: Trace | None = None


def _ring_orders(net, ranks):
    return np.array([[net.index[r] for r in ranks]])


def data_parallel_step(network: Network, layer_grad_bytes, layer_backward_s,
                       bucket_bytes: float = 25e6, overlap: bool = True,
                       forward_s: float = 0.0) -> WorkloadResult:
    """One data-parallel training step with gradient buckets (PyTorch DDP style).

    Parameters
    ----------
    network : Network
        Every GPU of it is a data-parallel rank.
    layer_grad_bytes, layer_backward_s : sequences
        Per layer (input to output): gradient size (bytes) and backward time
        (seconds).  Backward runs from the last layer to the first.
    bucket_bytes : float
        Layers are packed into buckets of about this many bytes, last layer
        first; each bucket is ring-AllReduced as soon as its layers' backward
        is done (``overlap=True``) or after the whole backward (``False``).
    forward_s : float
        Forward time before the backward starts.

    Returns
    -------
    WorkloadResult
        ``parts``: ``compute_s`` (forward + backward), ``comm_exposed_s``
        (step time minus compute), ``buckets``.

    Notes
    -----
    Step time ``~ max(T_comp, T_comp_until_first_bucket + T_comm)`` with
    overlap, ``T_comp + T_comm`` without (``analytic.iteration_time_s``).
    Collectives of one rank run one after another (one NCCL stream).
    """
    sizes = [check_nonnegative(x, "layer_grad_bytes") for x in layer_grad_bytes]
    times = [check_nonnegative(x, "layer_backward_s") for x in layer_backward_s]
    if len(sizes) != len(times) or not sizes:
        raise ValueError("layer_grad_bytes and layer_backward_s must be non-empty "
                         "and of equal length")
    bucket_bytes = check_positive(bucket_bytes, "bucket_bytes")
    forward_s = check_nonnegative(forward_s, "forward_s")
    net = network
    ranks = net.gpus
    nodes = np.array([net.index[r] for r in ranks])
    b = ScheduleBuilder()
    b.batched = False
    nn = len(net.nodes)
    cq = 5 * nn + nodes  # compute stream per GPU
    prev = b.add_computes(nodes, forward_s, cq, tag=-1)
    done_layer = {}
    for layer in reversed(range(len(sizes))):
        prev = b.add_computes(nodes, times[layer], cq, deps=prev[:, None], tag=layer)
        done_layer[layer] = prev
    # buckets, last layer first
    buckets, cur, acc = [], [], 0.0
    for layer in reversed(range(len(sizes))):
        cur.append(layer)
        acc += sizes[layer]
        if acc >= bucket_bytes:
            buckets.append((cur, acc))
            cur, acc = [], 0.0
    if cur:
        buckets.append((cur, acc))
    orders = _ring_orders(net, ranks)
    last_comm = np.full(len(nodes), -1)
    for layers, nbytes in buckets:
        if nbytes <= 0:
            continue
        gate = done_layer[layers[-1]] if overlap else done_layer[0]
        start = np.stack([gate, last_comm], axis=1)  # after compute and previous bucket
        # ring() takes one start dep per rank; chain the previous bucket via a
        # zero-time compute on the comm queue
        join = b.add_computes(nodes, 0.0, 6 * nn + nodes, deps=start)
        ids = schedules.ring(b, net, orders, "allreduce", nbytes,
                             start_deps=join[None, :], job=0)
        last_comm = np.roll(ids[-1, -1, 0], 1)  # last piece into each rank
    tr = run_events(b.build(), net)
    t = float(tr.rows["end_s"].max())
    comp = forward_s + sum(times)
    return WorkloadResult(t, {"compute_s": comp, "comm_exposed_s": t - comp,
                              "buckets": len(buckets)}, tr)


def straggler_step(network: Network, n_bytes: float, compute_s: float,
                   slow_rank: int = 0, slow_by_s: float = 0.0) -> WorkloadResult:
    """Every rank computes, then all AllReduce ``n_bytes`` (a ring): the
    collective waits for the slowest rank, so one straggler delays everyone.

    ``parts["wait_s"]`` lists, per rank, the time from the end of its own
    compute to the end of the step: the straggler pays only the AllReduce,
    every other rank also waits for the straggler.
    """
    n_bytes = check_positive(n_bytes, "n_bytes")
    compute_s = check_nonnegative(compute_s, "compute_s")
    slow_by_s = check_nonnegative(slow_by_s, "slow_by_s")
    net = network
    ranks = net.gpus
    slow_rank = check_int(slow_rank, "slow_rank", minimum=0, maximum=len(ranks) - 1)
    nodes = np.array([net.index[r] for r in ranks])
    b = ScheduleBuilder()
    b.batched = False
    dur = np.full(len(nodes), compute_s)
    dur[slow_rank] += slow_by_s
    comp = b.add_computes(nodes, dur, 5 * len(net.nodes) + nodes)
    schedules.ring(b, net, _ring_orders(net, ranks), "allreduce", n_bytes,
                   start_deps=comp[None, :])
    tr = run_events(b.build(), net)
    t = float(tr.rows["end_s"].max())
    return WorkloadResult(t, {"compute_end_s": (comp_end := tr.rows["end_s"][:len(nodes)]),
                              "wait_s": t - comp_end}, tr)


def shared_links(network: Network, job_ranks, n_bytes: float) -> WorkloadResult:
    """Several jobs each ring-AllReduce ``n_bytes`` at the same time on one network.

    ``job_ranks`` lists the GPUs of each job.  Returns the makespan and, in
    ``parts``, each job's time together and alone: the slowdown is the
    contention on links the jobs share (e.g. one NIC per node).
    """
    n_bytes = check_positive(n_bytes, "n_bytes")
    net = network

    def build(jobs):
        b = ScheduleBuilder()
        b.batched = False
        for j, ranks in jobs:
            schedules.ring(b, net, _ring_orders(net, ranks), "allreduce", n_bytes,
                           queue_base=j * 7 * len(net.nodes), job=j)
        return run_events(b.build(), net)

    jobs = list(enumerate(job_ranks))
    tr = build(jobs)
    together = [float(tr.rows["end_s"][tr.rows["job"] == j].max()) for j, _ in jobs]
    alone = [float(build([(j, r)]).rows["end_s"].max()) for j, r in jobs]
    return WorkloadResult(max(together), {"together_s": together, "alone_s": alone}, tr)
