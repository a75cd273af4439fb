"""Closed-form models: one pure function per formula the course teaches.

Every function takes SI units (bytes, seconds, bytes per second), checks its
input, and carries its formula and the chapter that derives it.  Bandwidths
are **per direction** unless a name says otherwise.

The alpha-beta model: moving ``D`` bytes over a route costs
``T = alpha + D / B`` -- a fixed start-up time ``alpha`` (seconds) plus the
bytes over the bandwidth ``B`` (bytes per second, one way).

Examples
--------
The seeds' 7B-parameter, FP16, 8-GPU ring example, corrected:

>>> from course_lib.hardware import gpu
>>> grad = gradient_bytes(7e9, bytes_per_element=2)        # 14 GB
>>> ring_allreduce_bytes_per_rank(grad, 8) / 1e9           # each GPU sends
24.5
>>> round(ring_allreduce_time_s(grad, 8, gpu("H100").nvlink_bw_per_dir_bytes_per_s), 4)
0.0544
"""

from __future__ import annotations

import math

from .units import (SPEED_OF_LIGHT_M_PER_S, check_choice, check_fraction,
                    check_int, check_nonnegative, check_positive, check_real,
                    format_distance)

__all__ = [
    "COLLECTIVES", "ALGORITHMS",
    "transfer_time_s", "effective_bw_bytes_per_s", "crossover_bytes",
    "batched_transfer_time_s", "fibre_rtt_s", "fibre_one_way_s",
    "rdma_transfer_time_s",
    "nvlink_bw_bytes_per_s", "effective_utilisation", "compute_time_s",
    "ring_allreduce_time_s", "ring_allreduce_bytes_per_rank", "nvls_allreduce_bytes_per_port",
    "collective_time_s", "hierarchical_allreduce_time_s", "busbw_factor",
    "algbw_bytes_per_s", "busbw_bytes_per_s",
    "gradient_bytes", "iteration_time_s", "comm_speedup", "amdahl_speedup",
    "amdahl_limit", "scaling_efficiency", "bandwidth_growth_bytes_per_s",
    "max_gpus_at_efficiency",
]

#: The most ranks a collective formula accepts: far beyond any machine (the
#: simulator goes to 16,384), and small enough that no count overflows a float.
MAX_RANKS = 10**9

#: Collective names, as nccl-tests spells its binaries without ``_perf``.
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce",
               "alltoall")
#: Algorithm names for :func:`collective_time_s`.
ALGORITHMS = ("ring", "tree", "in-switch")

# ---------------------------------------------------------------------------
# point to point (chapters 1-5)
# ---------------------------------------------------------------------------


def transfer_time_s(n_bytes: float, bw_bytes_per_s: float,
                    latency_s: float = 0.0) -> float:
    """Time to move ``n_bytes`` over one route: ``T = alpha + D / B``.

    Parameters
    ----------
    n_bytes : float
        Message size D, bytes (>= 0).
    bw_bytes_per_s : float
        Bandwidth B of the route, per direction, bytes/s (> 0).
    latency_s : float
        Fixed start-up cost alpha, seconds (>= 0): for PCIe DMA the seeds'
        ``T_setup``, for RDMA the round trip ``T_rtt``.

    Notes
    -----
    ``T = alpha + D / B``.  Chapter 3 (PCIe vs NVLink), 4 (DMA), 5 (RDMA).

    >>> transfer_time_s(1e9, 50e9, 2e-6)
    0.020002
    """
    d = check_nonnegative(n_bytes, "n_bytes")
    b = check_positive(bw_bytes_per_s, "bw_bytes_per_s")
    a = check_nonnegative(latency_s, "latency_s")
    return a + d / b


def effective_bw_bytes_per_s(n_bytes: float, bw_bytes_per_s: float,
                             latency_s: float = 0.0) -> float:
    """Delivered bandwidth ``D / T`` of one transfer: small messages never
    see the link's bandwidth.

    Notes
    -----
    ``B_eff = D / (alpha + D/B)``; half the link bandwidth is reached at
    ``D = alpha * B`` (the "half-bandwidth size").  Chapter 3.

    >>> effective_bw_bytes_per_s(100e3, 50e9, 2e-6) / 50e9
    0.5
    """
    d = check_positive(n_bytes, "n_bytes")
    return d / transfer_time_s(d, bw_bytes_per_s, latency_s)


def crossover_bytes(latency_a_s: float, bw_a_bytes_per_s: float,
                    latency_b_s: float, bw_b_bytes_per_s: float) -> float:
    """Message size at which two routes take the same time.

    Below it the route with the smaller latency wins, above it the one with
    the larger bandwidth.  Returns ``inf`` when one route is better at every
    size (smaller latency *and* larger bandwidth) or the lines are parallel.

    Notes
    -----
    ``alpha_a + D/B_a = alpha_b + D/B_b``  =>
    ``D* = (alpha_b - alpha_a) / (1/B_a - 1/B_b)``.  Chapter 3.

    >>> round(crossover_bytes(1e-6, 10e9, 5e-6, 50e9))
    50000
    """
    aa = check_nonnegative(latency_a_s, "latency_a_s")
    ba = check_positive(bw_a_bytes_per_s, "bw_a_bytes_per_s")
    ab = check_nonnegative(latency_b_s, "latency_b_s")
    bb = check_positive(bw_b_bytes_per_s, "bw_b_bytes_per_s")
    gap = ab - aa
    # (1/B_a - 1/B_b) = (B_b - B_a) / (B_a B_b), written so that tiny or huge
    # bandwidths cannot turn into inf - inf
    if bb == ba or gap == 0 or (gap > 0) != (bb > ba):
        return math.inf
    return gap * (ba / (bb - ba)) * bb


def batched_transfer_time_s(n_messages: int, bytes_per_message: float,
                            bw_bytes_per_s: float, latency_s: float,
                            batched: bool = True,
                            gather_time_s: float = 0.0) -> float:
    """Time to send ``n_messages`` messages one by one or as one batch.

    Parameters
    ----------
    gather_time_s : float
        Seconds (>= 0) spent first copying the pieces into one contiguous,
        pinned buffer; only the batch pays it.  ``0`` assumes they already
        lie there, which real pieces (separate tensors) rarely do: on a host
        the gather is a CPU copy, about what the driver spends staging a
        pageable copy of the same size
        (:func:`course_lib.hardware.pageable_extra_time_s`).

    Notes
    -----
    Separately: ``N (alpha + d/B)``; merged ("transfer batching", 传输合并):
    ``T_gather + alpha + N d / B``.  Without the gather the saving is
    ``(N - 1) alpha``.  Chapter 4.

    >>> batched_transfer_time_s(1000, 4096, 25e9, 10e-6, batched=False) > \
        batched_transfer_time_s(1000, 4096, 25e9, 10e-6)
    True
    """
    n = check_int(n_messages, "n_messages", minimum=1)
    d = check_nonnegative(bytes_per_message, "bytes_per_message")
    g = check_nonnegative(gather_time_s, "gather_time_s")
    if batched:
        return g + transfer_time_s(n * d, bw_bytes_per_s, latency_s)
    return n * transfer_time_s(d, bw_bytes_per_s, latency_s)


def fibre_rtt_s(distance_m: float, velocity_factor: float = 0.7) -> float:
    """Round-trip propagation time over fibre: ``2 d / (v c)``.

    Parameters
    ----------
    distance_m : float
        One-way cable distance, metres.
    velocity_factor : float
        Signal speed as a fraction of c (about 0.67-0.7 in glass), in (0, 1].

    Notes
    -----
    ``T_rtt = 2 * distance / (0.7 * c)``: light in fibre covers about
    0.2 m per nanosecond, so 1 km costs ~10 us round trip.  This is only the
    wire; switches, NICs and software add their own latency.  Chapter 5.

    >>> round(fibre_rtt_s(1000) * 1e6, 2)
    9.53
    """
    d = check_nonnegative(distance_m, "distance_m")
    v = check_positive(velocity_factor, "velocity_factor")
    if v > 1:
        raise ValueError(f"velocity_factor must lie in (0, 1], got {v!r}")
    return 2 * d / (v * SPEED_OF_LIGHT_M_PER_S)


def fibre_one_way_s(distance_m: float, velocity_factor: float = 0.7) -> float:
    """One-way propagation time over fibre: ``d / (v c)``.

    Half of :func:`fibre_rtt_s`: what the first byte of a message needs to
    arrive.  Chapters 1 and 5.

    >>> round(fibre_one_way_s(100e3) * 1e6, 1)        # 100 km
    476.5
    """
    return fibre_rtt_s(distance_m, velocity_factor) / 2


def rdma_transfer_time_s(n_bytes: float, bw_bytes_per_s: float,
                         distance_m: float = 0.0, velocity_factor: float = 0.7,
                         endpoint_latency_s: float = 0.0,
                         completion: bool = False) -> float:
    """Time for an RDMA message to arrive, or for its sender to see it complete.

    Parameters
    ----------
    n_bytes, bw_bytes_per_s : float
        Message size D (bytes) and the port's one-way bandwidth B (bytes/s).
    distance_m, velocity_factor : float
        One-way cable length (m) and signal speed as a fraction of c.
    endpoint_latency_s : float
        One-way latency of the end points (NICs, switch, software), seconds:
        a catalog figure such as ``rdma_small_one_way``.
    completion : bool
        False: when the last byte *arrives*.  True: when the *sender* learns
        that it arrived -- the acknowledgement travels back, adding one more
        fibre leg and end-point latency, so a small message's completion
        costs a round trip.

    Notes
    -----
    Every term one way: ``T_arrive = alpha + d / (0.7 c) + D / B``.  The
    completion adds the acknowledgement's return, ``alpha + d / (0.7 c)``:
    ``T_complete = 2 alpha + 2 d / (0.7 c) + D / B``, the round trip the
    seeds' ``T_rtt + D / B`` has in mind.  Chapter 5.

    >>> from course_lib.units import gbit_per_s
    >>> round(rdma_transfer_time_s(1e9, gbit_per_s(400), 100) * 1e3, 4)  # 1 GB, NDR, 100 m
    20.0005
    >>> round(rdma_transfer_time_s(0, gbit_per_s(400), 1000, completion=True) * 1e6, 2)
    9.53
    """
    one_way = fibre_one_way_s(distance_m, velocity_factor)
    extra = check_nonnegative(endpoint_latency_s, "endpoint_latency_s")
    if not isinstance(completion, bool):
        raise TypeError(f"completion must be True or False, got {completion!r}")
    t = transfer_time_s(n_bytes, bw_bytes_per_s, one_way + extra)
    return t + (one_way + extra if completion else 0.0)


def nvlink_bw_bytes_per_s(lanes_per_link: int, lane_rate_gbit_per_s: float,
                          links: int = 1, bidirectional: bool = False) -> float:
    """NVLink bandwidth from its parts: lanes x lane rate x links (x 2 both ways).

    Notes
    -----
    ``B = lanes * rate / 8 * links`` per direction; marketing adds the two
    directions.  H100: 2 lanes x 100 Gb/s = 25 GB/s a link, x 18 = 450 GB/s
    per direction = 900 GB/s bidirectional.  Chapter 2.

    >>> nvlink_bw_bytes_per_s(2, 100, 18) / 1e9, nvlink_bw_bytes_per_s(2, 100, 18, True) / 1e9
    (450.0, 900.0)
    """
    lanes = check_int(lanes_per_link, "lanes_per_link", minimum=1)
    rate = check_positive(lane_rate_gbit_per_s, "lane_rate_gbit_per_s")
    links = check_int(links, "links", minimum=1)
    per_dir = lanes * rate * 1e9 / 8 * links
    return 2 * per_dir if bidirectional else per_dir


def compute_time_s(flops: float, peak_flops_per_s: float,
                   efficiency: float = 1.0) -> float:
    """``T_compute = FLOPs / (peak x efficiency)``.  Chapter 1.

    >>> compute_time_s(1e15, 1e15, 0.5)
    2.0
    """
    f = check_nonnegative(flops, "flops")
    p = check_positive(peak_flops_per_s, "peak_flops_per_s")
    e = check_fraction(efficiency, "efficiency")
    if e == 0:
        raise ValueError("efficiency must be > 0")
    return f / p / e


def effective_utilisation(t_compute_s: float, t_comm_s: float) -> float:
    """Share of time spent computing when communication is not overlapped.

    Notes
    -----
    ``U = T_comp / (T_comp + T_comm)``.  Chapter 1.

    >>> effective_utilisation(3.0, 1.0)
    0.75
    """
    tc = check_nonnegative(t_compute_s, "t_compute_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    if tc + tm == 0:
        raise ValueError("t_compute_s and t_comm_s cannot both be 0")
    return tc / (tc + tm)


# ---------------------------------------------------------------------------
# collectives (chapter 7)
# ---------------------------------------------------------------------------


def busbw_factor(collective: str, n_ranks: int) -> float:
    """nccl-tests' factor from algorithm bandwidth to bus bandwidth.

    Notes
    -----
    ``busbw = algbw x factor``: AllReduce ``2(n-1)/n``; AllGather,
    ReduceScatter, AllToAll ``(n-1)/n``; Broadcast, Reduce ``1``
    (NVIDIA/nccl-tests:doc/PERFORMANCE.md).  Chapter 7.

    >>> busbw_factor("allreduce", 8)
    1.75
    """
    c = check_choice(collective, "collective", COLLECTIVES)
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=MAX_RANKS)
    if c == "allreduce":
        return 2 * (n - 1) / n
    if c in ("allgather", "reducescatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def ring_allreduce_bytes_per_rank(n_bytes: float, n_ranks: int) -> float:
    """Bytes each rank sends (and receives) in a ring AllReduce of ``n_bytes``.

    Notes
    -----
    ReduceScatter then AllGather, each ``n-1`` steps of ``S/n``:
    ``2 (n-1)/n x S``.  Chapter 7.

    >>> ring_allreduce_bytes_per_rank(14e9, 8) / 1e9
    24.5
    """
    s = check_nonnegative(n_bytes, "n_bytes")
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=MAX_RANKS)
    return 2 * (n - 1) / n * s


def nvls_allreduce_bytes_per_port(n_bytes: float, n_ranks: int) -> float:
    """Bytes each GPU's NVLink port carries, each way, in NCCL's NVLS AllReduce.

    Notes
    -----
    NCCL splits the buffer into ``n`` slices and makes each GPU the head of
    one (``NVIDIA/nccl:src/device/all_reduce.h``, ``NCCL_ALGO_NVLS``): the
    head's multimem load-reduce pulls its slice from all ``n`` GPUs through
    the NVSwitch, its own copy included, and its multimem store sends the sum
    back up for the switch to multicast to all ``n``.  Out of each port: its
    ``S`` (a slice to every head) plus the ``S/n`` it stores; into it: the
    ``S/n`` reduced slice plus the ``S`` multicast back.  ``(1 + 1/n) x S``
    each way -- under the ring's ``2 (n-1)/n x S`` from four GPUs on, and the
    textbook in-switch ``S`` (:func:`collective_time_s`, ``"in-switch"``)
    only for very many GPUs.  Chapter 7.

    >>> nvls_allreduce_bytes_per_port(8e9, 8) / 1e9
    9.0
    >>> ring_allreduce_bytes_per_rank(8e9, 8) / nvls_allreduce_bytes_per_port(8e9, 8)
    1.5555555555555556
    """
    s = check_nonnegative(n_bytes, "n_bytes")
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=MAX_RANKS)
    return (1 + 1 / n) * s if n > 1 else 0.0


def ring_allreduce_time_s(n_bytes: float, n_ranks: int, bw_bytes_per_s: float,
                          latency_s: float = 0.0) -> float:
    """Ideal ring AllReduce time.

    Parameters
    ----------
    n_bytes : float
        Buffer size S on every rank, bytes.
    n_ranks : int
        Ranks on the ring, >= 1.
    bw_bytes_per_s : float
        **One-way** bandwidth each rank can send to its ring neighbour.
    latency_s : float
        Per-step latency alpha.

    Notes
    -----
    ``t = 2 (n-1)/n x S/B + 2 (n-1) alpha`` -- a ReduceScatter (n-1 steps)
    followed by an AllGather (n-1 steps), each step moving S/n bytes.  The
    time per GPU does not grow with n: the seeds' "aggregate ring bandwidth
    N B / 2" is not the quantity that sets it.  Chapter 7.

    >>> ring_allreduce_time_s(1e9, 1, 1e9)
    0.0
    >>> ring_allreduce_time_s(1e9, 4, 1e9, latency_s=1e-6)
    1.500006
    """
    s = check_nonnegative(n_bytes, "n_bytes")
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=MAX_RANKS)
    b = check_positive(bw_bytes_per_s, "bw_bytes_per_s")
    a = check_nonnegative(latency_s, "latency_s")
    return 2 * (n - 1) / n * s / b + 2 * (n - 1) * a


def collective_time_s(collective: str, n_bytes: float, n_ranks: int,
                      bw_bytes_per_s: float, latency_s: float = 0.0,
                      algorithm: str = "ring") -> float:
    """Ideal time of a collective under the alpha-beta model.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    n_bytes : float
        The nccl-tests size S: the buffer each rank contributes to or
        receives from the collective (for AllGather the *output* size, for
        ReduceScatter the *input* size).
    n_ranks : int
        Number of ranks, >= 1.
    bw_bytes_per_s : float
        One-way bandwidth per rank (into the ring, tree or switch).
    latency_s : float
        Per-step latency alpha.
    algorithm : {"ring", "tree", "in-switch"}
        ``"tree"`` is a pipelined (double) binary tree, for allreduce,
        broadcast and reduce.  ``"in-switch"`` is reduction in the switch
        (NVLink SHARP, "NVLS") for allreduce, reducescatter and allgather:
        each rank sends its data once and the switch does the arithmetic.

    Notes
    -----
    With ``p = n - 1`` and ``L = ceil(log2 n)``:

    ======================  ======================  =====================  =================
    collective              ring                    tree                   in-switch
    ======================  ======================  =====================  =================
    allreduce               2p/n S/B + 2p alpha     2 S/B + 2L alpha       S/B + 2 alpha
    allgather/reducescatter p/n S/B + p alpha       --                     p/n S/B + alpha
    broadcast/reduce        S/B + p alpha           S/B + L alpha          --
    alltoall                p/n S/B + p alpha       --                     --
    ======================  ======================  =====================  =================

    Chapter 7.

    >>> collective_time_s("allgather", 8e9, 8, 1e9)
    7.0
    >>> collective_time_s("allreduce", 1e9, 8, 1e9, algorithm="in-switch")
    1.0
    """
    c = check_choice(collective, "collective", COLLECTIVES)
    alg = check_choice(algorithm, "algorithm", ALGORITHMS)
    s = check_nonnegative(n_bytes, "n_bytes")
    n = check_int(n_ranks, "n_ranks", minimum=1, maximum=MAX_RANKS)
    b = check_positive(bw_bytes_per_s, "bw_bytes_per_s")
    a = check_nonnegative(latency_s, "latency_s")
    if n == 1:
        return 0.0
    p = n - 1
    depth = math.ceil(math.log2(n))
    if alg == "ring":
        if c == "allreduce":
            return ring_allreduce_time_s(s, n, b, a)
        if c in ("allgather", "reducescatter", "alltoall"):
            return p / n * s / b + p * a
        return s / b + p * a
    if alg == "tree":
        if c == "allreduce":
            return 2 * s / b + 2 * depth * a
        if c in ("broadcast", "reduce"):
            return s / b + depth * a
        raise ValueError(f"algorithm='tree' supports allreduce, broadcast and "
                         f"reduce; got collective={collective!r}")
    if c == "allreduce":
        return s / b + 2 * a
    if c in ("allgather", "reducescatter"):
        return p / n * s / b + a
    raise ValueError(f"algorithm='in-switch' supports allreduce, allgather and "
                     f"reducescatter; got collective={collective!r}")


def hierarchical_allreduce_time_s(n_bytes: float, gpus_per_node: int, nodes: int,
                                  intra_bw_bytes_per_s: float,
                                  inter_bw_bytes_per_s: float,
                                  intra_latency_s: float = 0.0,
                                  inter_latency_s: float = 0.0,
                                  pipelined: bool = True) -> float:
    """Two-level AllReduce: ReduceScatter in the node, AllReduce across
    nodes on each GPU's shard (one NIC per GPU), AllGather in the node.

    Parameters
    ----------
    n_bytes : float
        Gradient buffer S on every GPU, bytes.
    gpus_per_node, nodes : int
        Cluster shape.
    intra_bw_bytes_per_s, inter_bw_bytes_per_s : float
        Per-direction bandwidth per GPU inside the node (NVLink or PCIe) and
        per GPU to the network (its NIC).
    intra_latency_s, inter_latency_s : float
        Per-step latency alpha inside the node and across it.
    pipelined : bool
        True (what NCCL does): the buffer is cut into chunks that flow
        through the three phases at once, so each road is busy for its own
        bytes and the slower road sets the time.  False: the phases run one
        after the other (a naive implementation).

    Notes
    -----
    Bytes per GPU: ``2 (g-1)/g S`` over the node's links (ReduceScatter and
    AllGather) and ``2 (m-1)/m S/g`` over its NIC, with ``g`` GPUs a node and
    ``m`` nodes.  Pipelined, ``t = max(2 (g-1)/g S/B_in, 2 (m-1)/m S/(g B_net))``
    plus every phase's latency steps; one after the other, ``t = RS_g(S) +
    AR_m(S/g) + AG_g(S)`` (each from :func:`collective_time_s`, ring).
    Chapters 7 and 10.

    See Also
    --------
    course_lib.predict.predict_collective : with ``algorithm="hierarchical"``,
        the same pipelined phases at NCCL's calibrated rates, plus launch,
        per-hop latencies and pipeline fill (it calls this for the transfer).
    course_lib.scenarios.roce_training_1024 : the line-rate bound of chapter 10.

    >>> round(hierarchical_allreduce_time_s(8e9, 8, 2, 100e9, 10e9), 4)  # max(0.14, 0.1)
    0.14
    >>> round(hierarchical_allreduce_time_s(8e9, 8, 2, 100e9, 10e9, pipelined=False), 4)
    0.24
    """
    g = check_int(gpus_per_node, "gpus_per_node", minimum=1)
    m = check_int(nodes, "nodes", minimum=1)
    if not isinstance(pipelined, bool):
        raise TypeError(f"pipelined must be True or False, got {pipelined!r}")
    rs = collective_time_s("reducescatter", n_bytes, g, intra_bw_bytes_per_s,
                           intra_latency_s)
    ar = collective_time_s("allreduce", n_bytes / g, m, inter_bw_bytes_per_s,
                           inter_latency_s)
    ag = collective_time_s("allgather", n_bytes, g, intra_bw_bytes_per_s,
                           intra_latency_s)
    if not pipelined:
        return rs + ar + ag
    latency = 2 * (g - 1) * intra_latency_s + 2 * (m - 1) * inter_latency_s
    intra = rs + ag - 2 * (g - 1) * intra_latency_s     # bandwidth parts only
    inter = ar - 2 * (m - 1) * inter_latency_s
    return max(intra, inter) + latency


def algbw_bytes_per_s(n_bytes: float, time_s: float) -> float:
    """nccl-tests' algorithm bandwidth ``S / t``.

    >>> algbw_bytes_per_s(1e9, 0.01)
    100000000000.0
    """
    s = check_nonnegative(n_bytes, "n_bytes")
    t = check_positive(time_s, "time_s")
    return s / t


def busbw_bytes_per_s(collective: str, n_bytes: float, time_s: float,
                      n_ranks: int) -> float:
    """nccl-tests' bus bandwidth ``algbw x busbw_factor``: comparable with the
    per-direction bandwidth of the bottleneck link.

    >>> busbw_bytes_per_s("allreduce", 1e9, 0.01, 8) / 1e9
    175.0
    """
    return algbw_bytes_per_s(n_bytes, time_s) * busbw_factor(collective, n_ranks)


# ---------------------------------------------------------------------------
# training steps, overlap and scaling (chapters 8-9)
# ---------------------------------------------------------------------------


def gradient_bytes(n_params: float, bytes_per_element: float = 2) -> float:
    """Gradient volume: parameters x bytes per element (FP16/BF16: 2, FP32: 4).

    >>> gradient_bytes(7e9) / 1e9
    14.0
    """
    p = check_nonnegative(n_params, "n_params")
    e = check_positive(bytes_per_element, "bytes_per_element")
    return p * e


def iteration_time_s(t_compute_s: float, t_comm_s: float,
                     overlap: bool | float = True) -> float:
    """Time of one training step with communication overlapped or not.

    Parameters
    ----------
    overlap : bool or float
        ``True`` (perfect overlap), ``False`` (none), or the fraction in
        [0, 1] of the shorter phase hidden behind the longer one.

    Notes
    -----
    No overlap: ``T = T_comp + T_comm``; perfect overlap:
    ``T = max(T_comp, T_comm)``; in between
    ``T = T_comp + T_comm - f min(T_comp, T_comm)``.  Chapter 8.

    >>> iteration_time_s(3.0, 2.0), iteration_time_s(3.0, 2.0, overlap=False)
    (3.0, 5.0)
    """
    tc = check_nonnegative(t_compute_s, "t_compute_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    if isinstance(overlap, bool):
        f = 1.0 if overlap else 0.0
    else:
        f = check_fraction(overlap, "overlap")
    return tc + tm - f * min(tc, tm)


def comm_speedup(n: int, t_comm_s: float, t_compute_s: float) -> float:
    """The seeds' speed-up rule ``N / (1 + (N-1) T_comm / T_comp)``.

    Notes
    -----
    Strong scaling with a ring AllReduce: a fixed job of ``T_comp`` (on one
    GPU) split over N GPUs takes ``T_comp/N + 2(N-1)/N S/B``, so
    ``T_1/T_N`` is exactly this rule with ``T_comm = 2S/B``
    (:func:`course_lib.traffic.strong_scaling_speedup`).  It leaves out the
    latency ``2(N-1) alpha``, slower links past the NVLink domain and
    overlap; under weak scaling (a batch per GPU) the speed-up stays nearly
    ``N``.  Chapter 9.

    >>> comm_speedup(8, 0.0, 1.0)
    8.0
    >>> round(comm_speedup(8, 0.1, 1.0), 3)
    4.706
    """
    n = check_int(n, "n", minimum=1)
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    tc = check_positive(t_compute_s, "t_compute_s")
    return n / (1 + (n - 1) * tm / tc)


def amdahl_speedup(parallel_fraction: float, n: int) -> float:
    """Amdahl's law: ``1 / ((1 - p) + p / n)``.

    >>> amdahl_speedup(0.95, 1_000_000) < 20
    True
    >>> amdahl_speedup(1.0, 8)
    8.0
    """
    p = check_fraction(parallel_fraction, "parallel_fraction")
    n = check_int(n, "n", minimum=1)
    return 1.0 / ((1 - p) + p / n)


def amdahl_limit(parallel_fraction: float) -> float:
    """The speed-up Amdahl allows with infinitely many workers: ``1 / (1 - p)``.

    >>> round(amdahl_limit(0.95), 6)
    20.0
    """
    p = check_fraction(parallel_fraction, "parallel_fraction")
    return math.inf if p == 1 else 1.0 / (1 - p)


def scaling_efficiency(t1_s: float, tn_s: float, n: int) -> float:
    """Strong-scaling efficiency ``T_1 / (N T_N)`` (1.0 = perfect).

    >>> scaling_efficiency(8.0, 1.25, 8)
    0.8
    """
    t1 = check_positive(t1_s, "t1_s")
    tn = check_positive(tn_s, "tn_s")
    n = check_int(n, "n", minimum=1)
    return t1 / (n * tn)


def max_gpus_at_efficiency(t_compute_s: float, t_comm_s: float,
                           threshold: float, n_max: int = 1_000_000) -> int:
    """Largest N for which the seeds' rule keeps efficiency >= ``threshold``.

    Efficiency under the seeds' rule is ``speedup / N = 1/(1 + (N-1) r)``
    with ``r = T_comm/T_comp``, which falls below the threshold once
    ``N > 1 + (1/threshold - 1) / r``.  Returns ``n_max`` when it never does.

    >>> max_gpus_at_efficiency(1.0, 0.01, 0.5)
    101
    """
    tc = check_positive(t_compute_s, "t_compute_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    e = check_fraction(threshold, "threshold")
    n_max = check_int(n_max, "n_max", minimum=1)
    if e == 0 or tm == 0:
        return n_max
    bound = 1 + (1 / e - 1) / (tm / tc)
    if not math.isfinite(bound) or bound >= n_max:
        return n_max
    return max(1, math.floor(bound + 1e-9))


def bandwidth_growth_bytes_per_s(b0_bytes_per_s: float, growth_per_year: float,
                                 years: float) -> float:
    """Compound growth of bandwidth: ``B0 (1 + g)^t``.  Chapter 9.

    >>> bandwidth_growth_bytes_per_s(100.0, 1.0, 3)
    800.0
    """
    b0 = check_positive(b0_bytes_per_s, "b0_bytes_per_s")
    g = check_real(growth_per_year, "growth_per_year")
    if g <= -1:
        raise ValueError(f"growth_per_year must be > -1, got {g!r}")
    t = check_nonnegative(years, "years")
    try:
        result = b0 * (1 + g) ** t
    except OverflowError:
        result = math.inf
    if not math.isfinite(result):
        raise ValueError(f"b0_bytes_per_s x (1 + growth_per_year)^years overflows "
                         f"for growth_per_year={g!r}, years={t!r}; use fewer years")
    return result


# ---------------------------------------------------------------------------
# routes through the city (chapters 1-5): which road a copy takes, and what
# that road costs.  Every number comes from the hardware catalog.
# ---------------------------------------------------------------------------

#: Routes of the transport map (chapter 1): host to device, device to host,
#: GPU to GPU staged through host memory over PCIe, GPU to GPU peer-to-peer
#: over PCIe (through a PCIe switch), GPU to GPU peer-to-peer over NVLink,
#: and GPU to GPU in another server by RDMA.
ROUTES = ("h2d", "d2h", "p2p-staged", "p2p-pcie", "p2p-nvlink", "rdma")
#: Host memory kinds for PCIe copies (chapter 4).
HOST_MEMORY = ("pinned", "pageable")

__all__ += ["ROUTES", "HOST_MEMORY", "half_bandwidth_bytes",
            "staged_transfer_time_s", "pageable_bw_bytes_per_s",
            "host_copy_bw_bytes_per_s", "host_copy_time_s", "route_parameters",
            "route_transfer_time_s", "route_crossover_bytes"]


def half_bandwidth_bytes(latency_s: float, bw_bytes_per_s: float) -> float:
    """Message size at which a route delivers half its bandwidth: ``alpha B``.

    Parameters
    ----------
    latency_s : float
        Start-up cost alpha of the route, seconds (>= 0).
    bw_bytes_per_s : float
        Bandwidth B of the route, per direction, bytes/s (> 0).

    Notes
    -----
    ``D / (alpha + D/B) = B/2``  =>  ``D_half = alpha B``.  Below it the
    start-up cost dominates, above it the bandwidth does.  Chapters 3 and 4.

    >>> half_bandwidth_bytes(2e-6, 50e9)
    100000.0
    """
    a = check_nonnegative(latency_s, "latency_s")
    b = check_positive(bw_bytes_per_s, "bw_bytes_per_s")
    return a * b


def staged_transfer_time_s(n_bytes: float, bw_bytes_per_s: float,
                           latency_s: float = 0.0, legs: int = 2,
                           chunk_bytes: float | None = None) -> float:
    """Time to move data through intermediate buffers (store and forward).

    Parameters
    ----------
    n_bytes : float
        Message size D, bytes (>= 0).
    bw_bytes_per_s : float
        Bandwidth B of each leg, per direction, bytes/s (> 0).
    latency_s : float
        Total start-up cost alpha of the route, seconds (>= 0).
    legs : int
        Copies in series (GPU -> host -> GPU is 2).
    chunk_bytes : float, optional
        Pipeline chunk size.  ``None``: each leg waits for the whole message.

    Notes
    -----
    Whole message: ``T = alpha + legs D / B``.  Pipelined in chunks of ``c``:
    ``T = alpha + (D + (legs - 1) c) / B`` -- the legs overlap and only the
    first chunk pays the extra legs.  Chapter 3 (staging through the host).

    >>> staged_transfer_time_s(1e9, 1e9)
    2.0
    >>> staged_transfer_time_s(1e9, 1e9, chunk_bytes=1e6)
    1.001
    """
    d = check_nonnegative(n_bytes, "n_bytes")
    b = check_positive(bw_bytes_per_s, "bw_bytes_per_s")
    a = check_nonnegative(latency_s, "latency_s")
    k = check_int(legs, "legs", minimum=1)
    if chunk_bytes is None:
        return a + k * d / b
    c = min(check_positive(chunk_bytes, "chunk_bytes"), d)
    return a + (d + (k - 1) * c) / b


def pageable_bw_bytes_per_s(pinned_bw_bytes_per_s: float,
                            ratio: float | None = None,
                            n_bytes: float | None = None) -> float:
    """Bandwidth of a copy from pageable (ordinary) host memory.

    Parameters
    ----------
    pinned_bw_bytes_per_s : float
        Bandwidth of the same copy from pinned (page-locked) memory, bytes/s.
    ratio : float, optional
        Pageable / pinned, in (0, 1]; default the catalog's one indicative
        x86 figure ``MEASURED["pageable_over_pinned_x86"]``, or, with
        ``n_bytes``, the measured ratio at that size.
    n_bytes : float, optional
        Copy size, bytes: use :func:`course_lib.hardware.pageable_over_pinned`
        (the H200 run, host to GPU) instead of one ratio for every size.

    Notes
    -----
    The driver cannot hand pageable pages to the DMA engine (the OS may move
    them), so it copies them into a small pinned staging buffer first and
    the two copies share the time: ``B_pageable = r B_pinned``.  ``r``
    depends on the size: about 1 up to 16 KiB (the CPU's copy of a few KiB
    into the staging buffer is cheaper than the fixed start-up both kinds
    pay), 0.6 at 64 KiB, 0.35 at 1 MiB, 0.12 at 1 GiB (the CPU copy runs at
    DRAM speed, not cache speed).  Chapter 4.

    >>> pageable_bw_bytes_per_s(50e9, 0.5) / 1e9
    25.0
    """
    from .hardware import MEASURED

    b = check_positive(pinned_bw_bytes_per_s, "pinned_bw_bytes_per_s")
    if ratio is None and n_bytes is not None:
        from .hardware import pageable_over_pinned
        ratio = pageable_over_pinned(n_bytes)
    r = MEASURED["pageable_over_pinned_x86"].value if ratio is None else ratio
    r = check_fraction(r, "ratio")
    if r == 0:
        raise ValueError("ratio must be > 0")
    return b * r


def host_copy_bw_bytes_per_s(pcie_gen: int, memory: str = "pinned",
                             lanes: int = 16, measured: bool = False) -> float:
    """Bandwidth of a host <-> GPU copy over PCIe, per direction, bytes/s.

    Parameters
    ----------
    pcie_gen : int
        PCIe generation of the GPU's host link (3-6).
    memory : {"pinned", "pageable"}
        Kind of host memory; pageable uses :func:`pageable_bw_bytes_per_s`.
    lanes : int
        Link width (16 for a GPU).
    measured : bool
        The spec rate (False) or what a measured copy reaches (True).

    Notes
    -----
    Pinned: the link rate ``lanes x rate x encoding / 8`` -- an upper bound
    -- or, with ``measured=True``, that times the DMA efficiency a measured
    pinned copy reaches (``CALIBRATION["pcie_dma_efficiency"]``, 0.87: 55 of
    63 GB/s on H100 and H200 Gen5 hosts).  Pageable: the catalog's
    pageable/pinned ratio times the pinned figure of the same kind.
    Chapter 4.

    >>> round(host_copy_bw_bytes_per_s(5) / 1e9, 1)
    63.0
    >>> round(host_copy_bw_bytes_per_s(5, measured=True) / 1e9, 1)
    54.8
    """
    from .hardware import calibration, pcie_bw_per_dir_bytes_per_s

    mem = check_choice(memory, "memory", HOST_MEMORY)
    if not isinstance(measured, bool):
        raise TypeError(f"measured must be True or False, got {measured!r}")
    bw = pcie_bw_per_dir_bytes_per_s(pcie_gen, lanes)
    if measured:
        bw *= calibration("pcie_dma_efficiency")
    return bw if mem == "pinned" else pageable_bw_bytes_per_s(bw)


def host_copy_time_s(n_bytes: float, pcie_gen: int = 5, memory: str = "pinned",
                     direction: str = "h2d", measured: bool = False,
                     latency_s: float | None = None) -> float:
    """Time of one host <-> GPU copy over a x16 PCIe link, size by size.

    Parameters
    ----------
    n_bytes : float
        Copy size D, bytes (>= 0).
    pcie_gen : int
        PCIe generation of the GPU's host link (3-6).
    memory : {"pinned", "pageable"}
        Kind of host memory.
    direction : {"h2d", "d2h"}
        Host to GPU or GPU to host.
    measured : bool
        Spec link rate (False) or the rate a measured pinned copy reaches.
    latency_s : float, optional
        Start-up alpha; default the catalog's ``pcie_small_copy`` (copies
        back to back).  Use ``pcie_small_copy_sync`` for a program that
        waits for every copy.

    Notes
    -----
    Pinned: ``T = alpha + D / B``.  Pageable: the same plus the time the
    driver spends staging the pages through its pinned buffer, read size by
    size from the course's H200 run
    (:func:`course_lib.hardware.pageable_extra_time_s`): nothing up to
    16 KiB host to GPU, then a CPU copy that grows with D.  Chapter 4.

    >>> host_copy_time_s(1024, memory="pageable") == host_copy_time_s(1024)
    True
    >>> t_pin = host_copy_time_s(2**30, measured=True)
    >>> round(t_pin / host_copy_time_s(2**30, memory="pageable", measured=True), 2)
    0.12
    """
    from .hardware import latency_s as _lat
    from .hardware import pageable_extra_time_s

    d = check_nonnegative(n_bytes, "n_bytes")
    mem = check_choice(memory, "memory", HOST_MEMORY)
    way = check_choice(direction, "direction", ("h2d", "d2h"))
    a = _lat("pcie_small_copy") if latency_s is None else check_nonnegative(
        latency_s, "latency_s")
    t = a + d / host_copy_bw_bytes_per_s(pcie_gen, "pinned", measured=measured)
    return t + (pageable_extra_time_s(d, way) if mem == "pageable" else 0.0)


def route_parameters(route: str, gpu: str = "H100", nic: str = "NDR",
                     distance_m: float = 10.0, memory: str = "pinned",
                     nvlink_links: int | None = None) -> dict:
    """Start-up latency, bandwidth and copy count of one route on the map.

    Parameters
    ----------
    route : str
        One of :data:`ROUTES`: ``"h2d"``, ``"d2h"`` (PCIe DMA between host
        and GPU), ``"p2p-staged"`` (GPU -> host -> GPU over PCIe),
        ``"p2p-pcie"`` (GPU -> GPU peer-to-peer over PCIe, through a PCIe
        switch or the root complex: one DMA, no stop in host memory),
        ``"p2p-nvlink"`` (GPU -> GPU over all its NVLinks, through NVSwitch),
        ``"rdma"`` (GPU -> GPU in another server, GPUDirect RDMA).
    gpu, nic : str
        Catalog names.
    distance_m : float
        Cable length between servers for ``"rdma"``, metres.
    memory : {"pinned", "pageable"}
        Host memory kind for ``"h2d"`` and ``"d2h"``.
    nvlink_links : int, optional
        NVLink links between the two GPUs for ``"p2p-nvlink"`` (1 up to the
        GPU's link count); default all of them, as through an NVSwitch.

    Returns
    -------
    dict
        ``latency_s`` (alpha, s, one way: until the last byte can arrive),
        ``bw_bytes_per_s`` (per direction), ``legs`` (copies in series),
        ``label``; for ``"rdma"`` also ``completion_rtt_s``: what a sender
        that waits for the acknowledgement pays for a small message, a round
        trip (twice the one-way alpha), kept apart from ``latency_s``.

    Notes
    -----
    Latencies are the catalog's indicative figures, all of one kind (one
    small message, one way, repeated back to back -- see
    ``hardware.LATENCIES``): ``pcie_small_copy``, ``pcie_staged_p2p``,
    ``nvlink_p2p``, ``pcie_p2p``, and for RDMA ``gpudirect_rdma_one_way``
    (GPU memory to GPU memory in another server) plus the fibre one way,
    ``d / (0.7 c)``.  So a neighbour over NVLink starts sooner than a GPU
    in another server, as it must.  The staged route is priced store and
    forward (two whole copies in series, as a program that calls
    ``cudaMemcpy`` twice gets); the driver's own staged peer copy pipelines
    the two legs -- pass ``chunk_bytes`` to :func:`route_transfer_time_s`.  The RDMA route's bandwidth
    is the smaller of the NIC port and the GPU's PCIe link (the NIC reads
    GPU memory over PCIe).  Chapter 1 (the map), 3, 4 and 5.

    >>> p = route_parameters("p2p-nvlink", gpu="H100")
    >>> p["bw_bytes_per_s"] / 1e9, p["legs"]
    (450.0, 1)
    """
    from .hardware import gpu as _gpu
    from .hardware import latency_s as _lat
    from .hardware import nic as _nic
    from .hardware import pcie_bw_per_dir_bytes_per_s

    r = check_choice(route, "route", ROUTES)
    g = _gpu(gpu)
    pcie = pcie_bw_per_dir_bytes_per_s(g.pcie_gen)
    if r in ("h2d", "d2h"):
        mem = check_choice(memory, "memory", HOST_MEMORY)
        arrow = "host -> GPU" if r == "h2d" else "GPU -> host"
        return {"route": r, "latency_s": _lat("pcie_small_copy"),
                "bw_bytes_per_s": host_copy_bw_bytes_per_s(g.pcie_gen, mem),
                "legs": 1,
                "label": f"{r.upper()} ({arrow}, PCIe Gen{g.pcie_gen}, {mem})"}
    if r == "p2p-staged":
        return {"route": r, "latency_s": _lat("pcie_staged_p2p"),
                "bw_bytes_per_s": pcie, "legs": 2,
                "label": f"GPU -> host -> GPU (PCIe Gen{g.pcie_gen}, staged)"}
    if r == "p2p-pcie":
        return {"route": r, "latency_s": _lat("pcie_p2p"),
                "bw_bytes_per_s": pcie, "legs": 1,
                "label": f"GPU -> GPU (PCIe Gen{g.pcie_gen} peer-to-peer)"}
    if r == "p2p-nvlink":
        k = g.nvlink_links if nvlink_links is None else check_int(
            nvlink_links, "nvlink_links", minimum=1, maximum=g.nvlink_links)
        return {"route": r, "latency_s": _lat("nvlink_p2p"),
                "bw_bytes_per_s": k * g.nvlink_per_link_per_dir_bytes_per_s,
                "legs": 1,
                "label": f"GPU -> GPU (NVLink {g.nvlink_gen}, {k} link{'s' if k > 1 else ''})"}
    port = _nic(nic)
    d = check_nonnegative(distance_m, "distance_m")
    one_way = _lat("gpudirect_rdma_one_way") + fibre_one_way_s(d)
    return {"route": r,
            "latency_s": one_way, "completion_rtt_s": 2 * one_way,
            "bw_bytes_per_s": min(port.bw_per_dir_bytes_per_s, pcie), "legs": 1,
            "label": (f"GPU -> remote GPU (RDMA, {port.family} {port.name}, "
                      f"{format_distance(d)})")}


def route_transfer_time_s(n_bytes: float, route: str,
                          chunk_bytes: float | None = None, **kwargs) -> float:
    """Time to move ``n_bytes`` along a route of the transport map.

    ``kwargs`` go to :func:`route_parameters`.  ``chunk_bytes`` pipelines
    the staged route's two legs (``None``: store and forward, the default).

    Notes
    -----
    ``T = alpha + legs x D / B`` with the route's catalog parameters
    (store-and-forward for the staged route; with ``chunk_bytes`` c,
    ``alpha + (D + c) / B``).  Copies from pageable host memory add the
    driver's staging time at that size
    (:func:`course_lib.hardware.pageable_extra_time_s`).  Chapter 1.

    >>> route_transfer_time_s(0, "p2p-nvlink") == route_parameters("p2p-nvlink")["latency_s"]
    True
    """
    p = route_parameters(route, **kwargs)
    if p["route"] in ("h2d", "d2h") and kwargs.get("memory") == "pageable":
        from .hardware import gpu as _gpu
        from .hardware import pageable_extra_time_s

        # the pinned copy plus the driver's staging (size-dependent, measured)
        pinned = host_copy_bw_bytes_per_s(_gpu(kwargs.get("gpu", "H100")).pcie_gen)
        return (transfer_time_s(n_bytes, pinned, p["latency_s"])
                + pageable_extra_time_s(n_bytes, p["route"]))
    return staged_transfer_time_s(n_bytes, p["bw_bytes_per_s"], p["latency_s"],
                                  legs=p["legs"], chunk_bytes=chunk_bytes)


def route_crossover_bytes(route_a: dict, route_b: dict) -> float:
    """Message size at which two routes (from :func:`route_parameters`) take
    the same time; ``inf`` when one is faster at every size.

    Notes
    -----
    ``alpha_a + k_a D / B_a = alpha_b + k_b D / B_b`` -- :func:`crossover_bytes`
    with each route's bandwidth divided by its number of legs ``k``
    (store and forward).  Chapter 3.

    One NVLink 4 link against an H100's PCIe Gen5 link used twice through
    host memory: 13 us / (1/25 GB/s - 2/63 GB/s) is about 1.57 MB.

    >>> a = route_parameters("p2p-nvlink", gpu="H100", nvlink_links=1)
    >>> b = route_parameters("p2p-staged", gpu="H100")
    >>> round(route_crossover_bytes(a, b) / 1e6, 2)
    1.57
    """
    for name, r in (("route_a", route_a), ("route_b", route_b)):
        if not isinstance(r, dict) or not {"latency_s", "bw_bytes_per_s", "legs"} <= set(r):
            raise TypeError(f"{name} must be a dict from route_parameters(), got {r!r}")
    return crossover_bytes(route_a["latency_s"], route_a["bw_bytes_per_s"] / route_a["legs"],
                           route_b["latency_s"], route_b["bw_bytes_per_s"] / route_b["legs"])
