"""Analytic models: known values (the corrected seed figures), limits, monotonicity."""

import math

import pytest

import course_lib as cl

H100_DIR = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s


def test_7b_ring_example_corrected():
    grad = cl.gradient_bytes(7e9, 2)
    assert grad == 14e9
    assert cl.ring_allreduce_bytes_per_rank(grad, 8) == pytest.approx(24.5e9)
    ideal = cl.ring_allreduce_time_s(grad, 8, H100_DIR)
    assert ideal == pytest.approx(24.5 / 450, rel=1e-9)
    assert ideal == pytest.approx(0.054, abs=0.0006)
    # the seeds' 0.03 s is what you get with the bidirectional 900 GB/s: 2x optimistic
    wrong = cl.ring_allreduce_time_s(grad, 8, cl.gpu("H100").nvlink_bw_bidir_bytes_per_s)
    assert ideal / wrong == pytest.approx(2.0)
    # at the measured Ring busbw plateau
    realistic = cl.ring_allreduce_time_s(grad, 8, cl.MEASURED["busbw_allreduce_8xH100_ring"].value)
    assert realistic == pytest.approx(0.066, abs=0.002)
    # over PCIe Gen5 x16 per direction
    pcie = cl.ring_allreduce_time_s(grad, 8, cl.pcie_bw_per_dir_bytes_per_s(5))
    assert pcie == pytest.approx(0.39, abs=0.005)


def test_ring_allreduce_is_reducescatter_plus_allgather():
    for n in (2, 3, 8, 64):
        s, b, a = 1e9, 50e9, 3e-6
        rs = cl.collective_time_s("reducescatter", s, n, b, a)
        ag = cl.collective_time_s("allgather", s, n, b, a)
        assert cl.ring_allreduce_time_s(s, n, b, a) == pytest.approx(rs + ag)


def test_ring_time_limit_large_n():
    s, b = 1e9, 1e9
    assert cl.ring_allreduce_time_s(s, 10**6, b) == pytest.approx(2 * s / b, rel=1e-5)


def test_ring_time_monotone_in_n_and_size():
    times = [cl.ring_allreduce_time_s(1e8, n, 1e10, 1e-6) for n in range(1, 40)]
    assert all(a < b for a, b in zip(times, times[1:]))
    sizes = [cl.ring_allreduce_time_s(s, 8, 1e10) for s in (1e3, 1e6, 1e9)]
    assert sizes == sorted(sizes)


@pytest.mark.parametrize("collective, n, factor", [
    ("allreduce", 8, 1.75), ("allgather", 8, 0.875), ("reducescatter", 4, 0.75),
    ("alltoall", 2, 0.5), ("broadcast", 8, 1.0), ("reduce", 16, 1.0), ("allreduce", 1, 0.0),
])
def test_busbw_factors_from_nccl_tests(collective, n, factor):
    assert cl.busbw_factor(collective, n) == pytest.approx(factor)


def test_busbw_equals_link_bandwidth_for_ideal_ring():
    for collective in ("allreduce", "allgather", "reducescatter", "broadcast"):
        s, n, b = 4e9, 8, 100e9
        t = cl.collective_time_s(collective, s, n, b)
        assert cl.busbw_bytes_per_s(collective, s, t, n) == pytest.approx(b)


def test_in_switch_busbw_exceeds_wire():
    s, n, b = 4e9, 8, 100e9
    t = cl.collective_time_s("allreduce", s, n, b, algorithm="in-switch")
    assert cl.busbw_bytes_per_s("allreduce", s, t, n) == pytest.approx(1.75 * b)


def test_tree_beats_ring_for_small_messages_and_loses_for_large():
    n, b, a = 64, 25e9, 5e-6
    small, large = 1e3, 1e9
    assert cl.collective_time_s("allreduce", small, n, b, a, "tree") < cl.collective_time_s("allreduce", small, n, b, a, "ring")
    assert cl.collective_time_s("allreduce", large, n, b, a, "tree") > cl.collective_time_s("allreduce", large, n, b, a, "ring")


def test_collective_errors():
    with pytest.raises(ValueError, match="collective"):
        cl.collective_time_s("allsum", 1, 2, 1)
    with pytest.raises(ValueError, match="algorithm"):
        cl.collective_time_s("allreduce", 1, 2, 1, algorithm="butterfly")
    with pytest.raises(ValueError, match="tree"):
        cl.collective_time_s("allgather", 1, 4, 1, algorithm="tree")
    with pytest.raises(ValueError, match="in-switch"):
        cl.collective_time_s("broadcast", 1, 4, 1, algorithm="in-switch")
    with pytest.raises(ValueError, match="n_ranks"):
        cl.ring_allreduce_time_s(1, 0, 1)
    with pytest.raises(ValueError, match="bw_bytes_per_s"):
        cl.ring_allreduce_time_s(1, 2, 0)


def test_transfer_and_crossover():
    a1, b1, a2, b2 = 1e-6, 10e9, 20e-6, 100e9
    d = cl.crossover_bytes(a1, b1, a2, b2)
    assert cl.transfer_time_s(d, b1, a1) == pytest.approx(cl.transfer_time_s(d, b2, a2))
    assert cl.transfer_time_s(d / 2, b1, a1) < cl.transfer_time_s(d / 2, b2, a2)
    assert cl.transfer_time_s(d * 2, b1, a1) > cl.transfer_time_s(d * 2, b2, a2)
    assert math.isinf(cl.crossover_bytes(1e-6, 100e9, 2e-6, 10e9))  # dominated
    assert cl.effective_bw_bytes_per_s(1e12, 50e9, 1e-6) == pytest.approx(50e9, rel=1e-6)


def test_batching_saves_n_minus_one_latencies():
    n, d, b, a = 1000, 4096, 25e9, 10e-6
    saving = cl.batched_transfer_time_s(n, d, b, a, batched=False) - cl.batched_transfer_time_s(n, d, b, a)
    assert saving == pytest.approx((n - 1) * a)


def test_fibre_and_rdma():
    # light in fibre ~ 0.2 m/ns: 1 km one way is ~ 4.8 us, so ~9.5 us round trip
    assert cl.fibre_rtt_s(1000) == pytest.approx(2 * 1000 / (0.7 * 299_792_458))
    assert cl.fibre_rtt_s(0) == 0
    t = cl.rdma_transfer_time_s(50e9, cl.nic("NDR").bw_per_dir_bytes_per_s, distance_m=10)
    assert t == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(ValueError, match="velocity_factor"):
        cl.fibre_rtt_s(10, velocity_factor=1.5)


def test_nvlink_from_lanes_matches_catalog():
    for gen, rec in cl.NVLINK_GENERATIONS.items():
        b = cl.nvlink_bw_bytes_per_s(rec.lanes_per_link_per_dir, rec.lane_rate_gbit_per_s, rec.links)
        assert b == pytest.approx(cl.gpu(rec.gpu).nvlink_bw_per_dir_bytes_per_s)


def test_utilisation_and_overlap():
    assert cl.effective_utilisation(1.0, 0.0) == 1.0
    assert cl.effective_utilisation(1.0, 1.0) == 0.5
    assert cl.iteration_time_s(2.0, 3.0, True) == 3.0
    assert cl.iteration_time_s(2.0, 3.0, False) == 5.0
    assert cl.iteration_time_s(2.0, 3.0, 0.5) == 4.0
    with pytest.raises(ValueError, match="overlap"):
        cl.iteration_time_s(1, 1, 1.5)


def test_speedup_laws():
    assert cl.comm_speedup(1, 5.0, 1.0) == 1.0
    assert cl.comm_speedup(64, 0.0, 1.0) == 64
    # seeds' rule saturates at T_comp / T_comm as N grows
    assert cl.comm_speedup(10**6, 0.1, 1.0) == pytest.approx(10.0, rel=1e-3)
    assert cl.amdahl_speedup(0.9, 10**7) == pytest.approx(10.0, rel=1e-4)
    assert cl.amdahl_speedup(0.0, 64) == 1.0
    s = [cl.amdahl_speedup(0.95, n) for n in (1, 2, 4, 8, 16)]
    assert s == sorted(s)
    assert cl.scaling_efficiency(10.0, 10.0 / 8, 8) == pytest.approx(1.0)
    n = cl.max_gpus_at_efficiency(1.0, 0.02, 0.8)
    eff = lambda k: cl.comm_speedup(k, 0.02, 1.0) / k
    assert eff(n) >= 0.8 > eff(n + 1)


def test_bandwidth_growth():
    assert cl.bandwidth_growth_bytes_per_s(100e9, 0.5, 2) == pytest.approx(225e9)
    with pytest.raises(ValueError, match="growth_per_year"):
        cl.bandwidth_growth_bytes_per_s(1, -1, 1)


def test_rank_counts_beyond_any_machine_are_refused_not_overflowed():
    """A fuzzed n_ranks of 9e307 overflowed a float (OverflowError escaped)."""
    import course_lib.analytic as A

    for call in (lambda n: A.ring_allreduce_time_s(0, n, 1, 0),
                 lambda n: A.collective_time_s("allreduce", 0, n, 1, 0)):
        with pytest.raises(ValueError, match="n_ranks"):
            call(8.98846567431158e307)
        assert call(A.MAX_RANKS) >= 0
