"""course_lib.traffic: barriers, stragglers, bucket overlap, accumulation and
the ring AllReduce schedule, checked against their defining properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from course_lib import traffic


@settings(max_examples=60, deadline=None)
@given(arrays(float, st.tuples(st.integers(1, 6), st.integers(1, 6)),
              elements=st.floats(0, 10, allow_nan=False)))
def test_max_of_sums_never_exceeds_sum_of_maxes(t):
    every = traffic.barrier_step_time_s(t, every_phase=True)
    once = traffic.barrier_step_time_s(t, every_phase=False)
    assert once <= every + 1e-9
    assert once == pytest.approx(max(row.sum() for row in t))


def test_barrier_bad_input():
    with pytest.raises(ValueError):
        traffic.barrier_step_time_s([1.0, 2.0])
    with pytest.raises(ValueError):
        traffic.barrier_step_time_s([[1.0, -1.0]])


def test_stragglers_deterministic_and_slowdown():
    a = traffic.straggler_phase_times_s(4, 5, 0.1, jitter=0.2, seed=3)
    b = traffic.straggler_phase_times_s(4, 5, 0.1, jitter=0.2, seed=3)
    assert np.array_equal(a, b) and a.shape == (4, 5) and np.all(a >= 0)
    t = traffic.straggler_phase_times_s(3, 2, 1.0, jitter=0.0, slow_gpus=1, slowdown=0.5)
    assert t.tolist() == [[1.5, 1.5], [1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ValueError):
        traffic.straggler_phase_times_s(2, 2, 1.0, slow_gpus=3)


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_bucket_schedule(k):
    s = traffic.bucket_overlap_schedule(1.0, 0.5, n_buckets=k, overlap=True)
    # comm is serial: buckets do not overlap each other and start only when ready
    for i, (a, b) in enumerate(s["comm"]):
        assert a >= (i + 1) / k - 1e-12
        assert b - a == pytest.approx(0.5 / k)
        if i:
            assert a >= s["comm"][i - 1][1] - 1e-12
    assert s["iteration_s"] == pytest.approx(1.0 + 0.5 / k)   # comm < compute: last tail
    off = traffic.bucket_overlap_schedule(1.0, 0.5, n_buckets=k, overlap=False)
    assert off["iteration_s"] == pytest.approx(1.5)


def test_bucket_schedule_comm_bound_and_latency():
    s = traffic.bucket_overlap_schedule(1.0, 4.0, n_buckets=4, bucket_latency_s=0.1)
    # first bucket ready at 0.25, then 4 back-to-back reductions of 1.1 s
    assert s["iteration_s"] == pytest.approx(0.25 + 4 * 1.1)
    with pytest.raises(TypeError):
        traffic.bucket_overlap_schedule(1.0, 1.0, overlap=0.5)


def test_accumulation():
    assert traffic.accumulation_time_per_batch_s(1.0, 2.0, 1) == pytest.approx(3.0)
    assert traffic.accumulation_time_per_batch_s(1.0, 2.0, 4) == pytest.approx(1.5)
    # only the last micro-batch's backward pass (2/3 of its compute) hides the AllReduce
    assert traffic.accumulation_time_per_batch_s(1.0, 2.0, 4, overlap=True) == pytest.approx(
        (4 + 2 - 2 / 3) / 4)
    with pytest.raises(ValueError):
        traffic.accumulation_time_per_batch_s(1.0, 1.0, 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(0, 10_000))
def test_ring_replay_sums(n, seed):
    x = np.random.default_rng(seed).normal(size=(n, n))
    assert np.allclose(traffic.ring_allreduce_replay(x), x.sum(axis=0))


@pytest.mark.parametrize("n", [2, 4, 7])
def test_ring_schedule_counts(n):
    steps = traffic.ring_allreduce_schedule(n)
    assert len(steps) == 2 * (n - 1)
    for step in steps:      # every rank sends exactly one chunk to its right neighbour
        assert sorted(m["src"] for m in step) == list(range(n))
        assert all(m["dst"] == (m["src"] + 1) % n for m in step)
    # in ReduceScatter each rank sends each chunk except one exactly once
    for r in range(n):
        sent = [steps[s][r]["chunk"] for s in range(n - 1)]
        assert len(set(sent)) == n - 1
    assert traffic.ring_allreduce_contributions(n, 2 * (n - 1)).min() == n
    with pytest.raises(ValueError):
        traffic.ring_allreduce_contributions(n, 2 * n)


# --- chapter 9: strong and weak scaling with a ring AllReduce --------------------
@pytest.mark.parametrize("n", [1, 2, 3, 8, 64, 1024, 100_000])
@pytest.mark.parametrize("t1,s,b", [(0.8, 14e9, 450e9), (2.0, 1e8, 50e9), (1e-3, 1e9, 25e9)])
def test_seeds_rule_is_strong_scaling_with_a_ring(n, t1, s, b):
    """N/(1+(N-1) T_comm/T_1) with T_comm = 2S/B is T_1 / (T_1/N + 2(N-1)/N S/B)."""
    import course_lib as cl

    rule = cl.comm_speedup(n, 2 * s / b, t1)
    strong = traffic.strong_scaling_speedup(n, t1, s, b)
    by_hand = t1 / (t1 / n + 2 * (n - 1) / n * s / b)
    assert strong == pytest.approx(rule, rel=1e-12)
    assert by_hand == pytest.approx(rule, rel=1e-12)


def test_weak_scaling_is_not_the_rule_and_latency_breaks_it():
    import course_lib as cl

    t, s, b = 0.8, 14e9, 450e9
    weak = traffic.weak_scaling_speedup(1024, t, s, b)
    assert weak == pytest.approx(1024 * t / (t + 2 * 1023 / 1024 * s / b), rel=1e-12)
    assert weak > 10 * cl.comm_speedup(1024, 2 * s / b, t)
    # the per-step latency 2(N-1) alpha makes strong scaling worse than the rule
    with_alpha = traffic.strong_scaling_speedup(1024, t, s, b, latency_s=1e-5)
    assert with_alpha < cl.comm_speedup(1024, 2 * s / b, t)
    # full overlap can only help
    assert traffic.strong_scaling_speedup(64, t, s, b, overlap=True) > \
        traffic.strong_scaling_speedup(64, t, s, b)
    with pytest.raises(ValueError, match="t1_compute_s"):
        traffic.strong_scaling_speedup(8, 0.0, s, b)
    with pytest.raises(ValueError, match="n"):
        traffic.weak_scaling_speedup(0, t, s, b)



def test_one_overlap_model_forward_never_hides_communication():
    """Issue 20: the course's overlap is T_fwd + max(T_bwd, T_comm), not max(T_comp, T_comm)."""
    tc, tm = 0.8, 0.6
    t = traffic.overlap_step_time_s(tc, tm)
    assert t == pytest.approx(tc / 3 + max(2 * tc / 3, tm))
    assert t > traffic.iteration_time_s(tc, tm, overlap=True)     # the seeds bound
    # communication longer than the backward pass: the forward pass still shows
    assert traffic.overlap_step_time_s(0.9, 0.8) == pytest.approx(0.3 + 0.8)
    assert traffic.overlap_step_time_s(0.9, 0.8, overlap=False) == pytest.approx(1.7)
    # the last bucket's tail never hides
    assert traffic.overlap_step_time_s(0.9, 0.5, tail_s=0.1) == pytest.approx(0.9 + 0.1)
    assert traffic.overlap_step_time_s(0.9, 0.5, overlap=0.5) == pytest.approx(0.9 + 0.5 - 0.25)
    with pytest.raises(ValueError, match="backward_share"):
        traffic.overlap_step_time_s(1.0, 1.0, backward_share=1.5)
