"""Traffic lights and rush hours: barriers, stragglers, overlap, accumulation.

Small closed-form and array models for chapter 8 (the discrete-event
simulator in :mod:`course_lib.sim` replays the same situations event by
event; these functions are the pocket versions a chapter can reason with).

* A **barrier** makes every GPU wait for the slowest: with a barrier after
  every phase a step costs ``sum_phase max_gpu t``; with one barrier at the
  end it costs ``max_gpu sum_phase t`` -- never more, usually less.
* **Overlap** of gradient buckets with the backward pass: bucket ``k``'s
  AllReduce can start when its gradients exist and the previous bucket's
  AllReduce is done.  One overlap model for the whole course
  (:func:`overlap_step_time_s`): at best ``T_fwd + max(T_bwd, T_comm)``
  plus the last bucket's tail -- never ``max(T_comp, T_comm)``, since no
  gradient exists during the forward pass (true of DDP; FSDP's parameter
  prefetch and cross-iteration schedulers can hide traffic behind the next
  forward pass too).
* **Gradient accumulation** syncs once every ``k`` micro-batches.
* **Strong and weak scaling** of data-parallel training with a ring
  AllReduce (chapter 9): a fixed global batch split over ``N`` GPUs, or a
  batch per GPU that grows with ``N``.

Taught in chapters 8 (traffic lights) and 9 (how big can the city grow).

Examples
--------
>>> import numpy as np
>>> t = np.array([[1.0, 3.0], [3.0, 1.0]])     # 2 GPUs x 2 phases
>>> barrier_step_time_s(t, every_phase=True), barrier_step_time_s(t, every_phase=False)
(6.0, 4.0)
"""

from __future__ import annotations

import numpy as np

from .analytic import iteration_time_s, ring_allreduce_time_s
from .units import (check_fraction, check_int, check_nonnegative,
                    check_positive)

__all__ = ["barrier_step_time_s", "straggler_phase_times_s",
           "bucket_overlap_schedule", "accumulation_time_per_batch_s",
           "ring_allreduce_schedule", "ring_allreduce_contributions",
           "ring_allreduce_replay", "strong_scaling_speedup",
           "weak_scaling_speedup", "overlap_step_time_s", "BACKWARD_SHARE"]

#: Share of a training step's compute spent in the backward pass: backward
#: costs about twice the forward's arithmetic (two matrix products per layer
#: against one), so about 2/3 of ``T_comp``.  Chapter 8.
BACKWARD_SHARE = 2 / 3


def overlap_step_time_s(t_compute_s: float, t_comm_s: float,
                        overlap: float | bool = True,
                        backward_share: float = BACKWARD_SHARE,
                        tail_s: float = 0.0) -> float:
    """One data-parallel step with the gradient AllReduce overlapped with
    the backward pass -- the course's one overlap model (chapters 8 and 9).

    Parameters
    ----------
    t_compute_s, t_comm_s : float
        Forward + backward compute, and the AllReduce, seconds (>= 0).
    overlap : bool or float
        Fraction in [0, 1] of the hideable communication that is hidden
        (``True`` = 1, ``False`` = 0).
    backward_share : float
        Share of ``t_compute_s`` in the backward pass, in [0, 1].
    tail_s : float
        Communication that can never hide: the last bucket's AllReduce,
        which starts only when the backward pass ends (0 = ideal buckets).

    Notes
    -----
    Only the backward pass produces gradients, so only it can hide the
    AllReduce: ``T = T_comp + T_comm - f min(T_bwd, T_comm - T_tail)``; with
    ``f = 1`` and no tail, ``T = T_fwd + max(T_bwd, T_comm)``.  The seeds'
    ``max(T_comp, T_comm)`` (:func:`course_lib.iteration_time_s` with
    ``overlap=True``) is a bound no DDP step reaches.  Overlap is not free
    either: NCCL's kernels run on the GPU's SMs and share HBM with the
    compute, so measured overlapped steps are a little longer still.

    >>> round(overlap_step_time_s(0.9, 0.5), 3)          # 0.3 forward + max(0.6, 0.5)
    0.9
    >>> round(overlap_step_time_s(0.9, 0.8), 3), overlap_step_time_s(0.9, 0.8, overlap=False)
    (1.1, 1.7000000000000002)
    """
    tc = check_nonnegative(t_compute_s, "t_compute_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    f = (1.0 if overlap else 0.0) if isinstance(overlap, bool) else check_fraction(
        overlap, "overlap")
    b = check_fraction(backward_share, "backward_share")
    tail = check_nonnegative(tail_s, "tail_s")
    hideable = max(0.0, tm - tail)
    return tc + tm - f * min(b * tc, hideable)


def barrier_step_time_s(phase_times_s, every_phase: bool = True) -> float:
    """Step time of GPUs that meet at barriers.

    Parameters
    ----------
    phase_times_s : array_like, shape (n_gpus, n_phases)
        Seconds each GPU spends in each phase.
    every_phase : bool
        True: a barrier after every phase.  False: one barrier at the end.

    Notes
    -----
    With barriers everywhere ``T = sum_p max_g t[g, p]``; with one at the
    end ``T = max_g sum_p t[g, p]``.  Because a max of sums is at most the
    sum of maxes, extra barriers can only add time.  Chapter 8.

    >>> barrier_step_time_s([[1.0, 1.0]])
    2.0
    """
    t = np.asarray(phase_times_s, dtype=float)
    if t.ndim != 2 or t.size == 0:
        raise ValueError("phase_times_s must be a non-empty 2-D array "
                         f"(n_gpus, n_phases), got shape {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("phase_times_s must hold finite times >= 0")
    if every_phase:
        return float(t.max(axis=0).sum())
    return float(t.sum(axis=1).max())


def straggler_phase_times_s(n_gpus: int, n_phases: int, phase_s: float,
                            jitter: float = 0.1, slow_gpus: int = 0,
                            slowdown: float = 0.0, seed: int = 0) -> np.ndarray:
    """Random per-phase times: mean ``phase_s``, relative noise ``jitter``,
    and ``slow_gpus`` GPUs that are ``slowdown`` (e.g. 0.2 = 20 %) slower.

    Notes
    -----
    ``t[g, p] = phase_s (1 + s_g) max(0, 1 + jitter z)``, ``z ~ N(0, 1)``,
    with ``s_g = slowdown`` for the first ``slow_gpus`` GPUs and 0 otherwise.
    Chapter 8.

    >>> float(straggler_phase_times_s(4, 3, 1.0, jitter=0.0).sum())
    12.0
    """
    g = check_int(n_gpus, "n_gpus", minimum=1, maximum=65_536)
    p = check_int(n_phases, "n_phases", minimum=1, maximum=10_000)
    base = check_positive(phase_s, "phase_s")
    j = check_nonnegative(jitter, "jitter")
    k = check_int(slow_gpus, "slow_gpus", minimum=0, maximum=g)
    s = check_nonnegative(slowdown, "slowdown")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    noise = np.maximum(0.0, 1.0 + j * rng.standard_normal((g, p)))
    factor = np.ones((g, 1))
    factor[:k] += s
    return base * factor * noise


def bucket_overlap_schedule(t_backward_s: float, t_comm_s: float,
                            n_buckets: int = 4, overlap: bool = True,
                            t_forward_s: float = 0.0,
                            bucket_latency_s: float = 0.0) -> dict:
    """When each gradient bucket is computed and reduced in one training step.

    Parameters
    ----------
    t_backward_s : float
        Backward pass of the whole model, seconds.
    t_comm_s : float
        AllReduce of all gradients as one message, seconds.
    n_buckets : int
        Gradient buckets of equal size; bucket k is ready when the backward
        pass has produced its share.
    overlap : bool
        True: reduce each bucket as soon as it is ready (one at a time).
        False: reduce all after the backward pass ends.
    t_forward_s : float
        Forward pass before the backward pass.
    bucket_latency_s : float
        Fixed start-up cost of each bucket's AllReduce (why buckets cannot
        be arbitrarily small).

    Returns
    -------
    dict
        ``compute`` and ``comm``: lists of ``(start_s, end_s)``;
        ``iteration_s``; ``exposed_comm_s`` (communication not hidden).

    Notes
    -----
    Bucket k is ready at ``r_k = t_fwd + (k+1) t_bwd / K``; its AllReduce
    runs from ``s_k = max(r_k, e_{k-1})`` to ``e_k = s_k + t_comm/K + alpha``.
    The step ends at ``max(t_fwd + t_bwd, e_{K-1})``: between the sum (no
    overlap) and ``max(T_comp, T_comm)`` plus the last bucket's tail.
    Chapter 8.

    >>> s = bucket_overlap_schedule(1.0, 1.0, n_buckets=4)
    >>> s["iteration_s"]
    1.25
    >>> bucket_overlap_schedule(1.0, 1.0, n_buckets=4, overlap=False)["iteration_s"]
    2.0
    """
    tb = check_nonnegative(t_backward_s, "t_backward_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    k = check_int(n_buckets, "n_buckets", minimum=1, maximum=100_000)
    tf = check_nonnegative(t_forward_s, "t_forward_s")
    a = check_nonnegative(bucket_latency_s, "bucket_latency_s")
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be True or False, got {overlap!r}")
    compute = [(0.0, tf)] if tf > 0 else []
    comm = []
    end_prev = 0.0
    for i in range(k):
        start_c = tf + i * tb / k
        ready = tf + (i + 1) * tb / k
        compute.append((start_c, ready))
        s = max(ready if overlap else tf + tb, end_prev)
        end_prev = s + tm / k + a
        comm.append((s, end_prev))
    iteration = max(tf + tb, end_prev)
    return {"compute": compute, "comm": comm, "iteration_s": iteration,
            "exposed_comm_s": iteration - (tf + tb), "n_buckets": k,
            "overlap": overlap}


def accumulation_time_per_batch_s(t_compute_s: float, t_comm_s: float,
                                  accumulation_steps: int = 1,
                                  overlap: float | bool = False) -> float:
    """Time per micro-batch when gradients are synced every ``k`` micro-batches.

    Notes
    -----
    ``k`` micro-batches of compute, then one AllReduce (the gradient volume
    does not grow with ``k``): ``T_k = (k-1) T_comp + overlap_step(T_comp,
    T_comm)`` -- only the last micro-batch's backward pass can hide it
    (:func:`overlap_step_time_s`, overlap fraction ``f``); per micro-batch
    ``T_k / k``.  The price is a larger effective batch.  Chapter 8.

    >>> accumulation_time_per_batch_s(1.0, 1.0, 4)
    1.25
    """
    tc = check_nonnegative(t_compute_s, "t_compute_s")
    tm = check_nonnegative(t_comm_s, "t_comm_s")
    k = check_int(accumulation_steps, "accumulation_steps", minimum=1, maximum=1_000_000)
    return ((k - 1) * tc + overlap_step_time_s(tc, tm, overlap)) / k


# ---------------------------------------------------------------------------
# strong and weak scaling with a ring AllReduce (chapter 9)
# ---------------------------------------------------------------------------
def strong_scaling_speedup(n: int, t1_compute_s: float, n_bytes: float,
                           bw_bytes_per_s: float, latency_s: float = 0.0,
                           overlap: float | bool = False) -> float:
    """Speed-up ``T_1 / T_N`` of a fixed job (global batch) split over N GPUs.

    Parameters
    ----------
    n : int
        GPUs, >= 1.
    t1_compute_s : float
        Compute of the whole step on one GPU, seconds.
    n_bytes : float
        Gradient buffer S that every GPU all-reduces (does not shrink with N).
    bw_bytes_per_s, latency_s : float
        One-way bandwidth B and per-step latency alpha of the ring.
    overlap : bool or float
        Share of the shorter phase hidden (:func:`iteration_time_s`).

    Notes
    -----
    ``T_N = T_1/N + 2(N-1)/N S/B + 2(N-1) alpha``.  With ``alpha = 0`` and no
    overlap, ``T_1/T_N = N / (1 + (N-1) 2S/(B T_1))``: exactly the seeds'
    rule (:func:`course_lib.comm_speedup`) with ``T_comm = 2S/B`` and
    ``T_comp = T_1``.  Chapter 9.

    >>> strong_scaling_speedup(1, 2.0, 1e9, 1e9)
    1.0
    >>> round(strong_scaling_speedup(8, 2.0, 1e9, 1e9), 6)   # 2 / (0.25 + 1.75)
    1.0
    """
    n = check_int(n, "n", minimum=1)
    t1 = check_positive(t1_compute_s, "t1_compute_s")
    t_comm = ring_allreduce_time_s(n_bytes, n, bw_bytes_per_s, latency_s)
    return t1 / iteration_time_s(t1 / n, t_comm, overlap=overlap)


def weak_scaling_speedup(n: int, t_compute_per_gpu_s: float, n_bytes: float,
                         bw_bytes_per_s: float, latency_s: float = 0.0,
                         overlap: float | bool = False) -> float:
    """Throughput of N GPUs over one when each keeps its own batch (weak scaling).

    Notes
    -----
    Every GPU computes ``T`` per step whatever N, then all-reduce S:
    ``speed-up = N T / (T + 2(N-1)/N S/B + 2(N-1) alpha)`` (less with
    overlap).  The communication per GPU is nearly flat in N, so the
    speed-up stays nearly proportional to N (Gustafson's view).  Chapter 9.

    >>> weak_scaling_speedup(1, 1.0, 1e9, 1e9)
    1.0
    >>> round(weak_scaling_speedup(8, 1.0, 1e9, 1e9), 4)     # 8 / 2.75
    2.9091
    """
    n = check_int(n, "n", minimum=1)
    t = check_positive(t_compute_per_gpu_s, "t_compute_per_gpu_s")
    t_comm = ring_allreduce_time_s(n_bytes, n, bw_bytes_per_s, latency_s)
    return n * t / iteration_time_s(t, t_comm, overlap=overlap)


# ---------------------------------------------------------------------------
# the ring AllReduce step by step (chapter 7)
# ---------------------------------------------------------------------------
def ring_allreduce_schedule(n_ranks: int) -> list[list[dict]]:
    """Who sends which chunk to whom at every step of a ring AllReduce.

    The buffer is cut into ``n`` chunks.  Chapter 7 numbers the steps
    ``1 .. 2(n-1)``; step ``s`` is ``schedule[s - 1]``.  ReduceScatter,
    steps ``s = 1 .. n-1``: rank ``r`` sends chunk ``(r - s + 1) mod n`` to
    rank ``r + 1``, which adds it to its own copy.  After it rank ``r`` holds
    the full sum of chunk ``(r + 1) mod n``.  AllGather, steps
    ``n .. 2(n-1)``: rank ``r`` forwards chunk ``(r + 2 - s') mod n``
    (``s'`` counting from 1 again) and the receiver overwrites its copy.

    Returns
    -------
    list of steps; each step a list of ``{"src", "dst", "chunk", "phase"}``
    with ``phase`` ``"reduce-scatter"`` or ``"all-gather"``.

    Notes
    -----
    ``2(n-1)`` steps, each moving ``S/n`` bytes per rank: ``2(n-1)/n x S``
    sent by every rank (:func:`course_lib.ring_allreduce_bytes_per_rank`).
    Chapter 7.

    >>> steps = ring_allreduce_schedule(4)
    >>> len(steps), steps[0][0]
    (6, {'src': 0, 'dst': 1, 'chunk': 0, 'phase': 'reduce-scatter'})
    """
    n = check_int(n_ranks, "n_ranks", minimum=2, maximum=1024)
    steps = []
    for s in range(n - 1):
        steps.append([{"src": r, "dst": (r + 1) % n, "chunk": (r - s) % n,
                       "phase": "reduce-scatter"} for r in range(n)])
    for s in range(n - 1):
        steps.append([{"src": r, "dst": (r + 1) % n, "chunk": (r + 1 - s) % n,
                       "phase": "all-gather"} for r in range(n)])
    return steps


def ring_allreduce_replay(buffers) -> np.ndarray:
    """Run the schedule on real numbers: ``buffers`` has shape
    ``(n_ranks, n_ranks)`` (rank x chunk); returns every rank's buffer
    after the AllReduce -- each row equals the column sums.

    >>> import numpy as np
    >>> ring_allreduce_replay(np.arange(9.0).reshape(3, 3))[0].tolist()
    [9.0, 12.0, 15.0]
    """
    buf = np.array(buffers, dtype=float)
    if buf.ndim != 2 or buf.shape[0] != buf.shape[1] or buf.shape[0] < 2:
        raise ValueError("buffers must have shape (n_ranks, n_ranks) with "
                         f"n_ranks >= 2, got {buf.shape}")
    for step in ring_allreduce_schedule(buf.shape[0]):
        sent = [(m, buf[m["src"], m["chunk"]]) for m in step]  # all send at once
        for m, value in sent:
            if m["phase"] == "reduce-scatter":
                buf[m["dst"], m["chunk"]] += value
            else:
                buf[m["dst"], m["chunk"]] = value
    return buf


def ring_allreduce_contributions(n_ranks: int, after_step: int) -> np.ndarray:
    """How many ranks' data each rank's copy of each chunk holds after
    ``after_step`` steps (0 = before the first): an ``(n, n)`` int array.

    Starts at all ones and ends at all ``n``.  Chapter 7.

    >>> int(ring_allreduce_contributions(4, 6).min())
    4
    """
    n = check_int(n_ranks, "n_ranks", minimum=2, maximum=256)
    k = check_int(after_step, "after_step", minimum=0, maximum=2 * (n - 1))
    have = [[{r} for _ in range(n)] for r in range(n)]  # sets of contributors
    for step in ring_allreduce_schedule(n)[:k]:
        sent = [(m, set(have[m["src"]][m["chunk"]])) for m in step]
        for m, contrib in sent:
            if m["phase"] == "reduce-scatter":
                have[m["dst"]][m["chunk"]] |= contrib
            else:
                have[m["dst"]][m["chunk"]] = contrib
    return np.array([[len(c) for c in row] for row in have], dtype=int)
