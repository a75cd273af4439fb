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


US = 1e-6


# Course measurement on an NVIDIA H200, PCIe Gen5 x16 (gpu-copies lab):
# median time per copy, pinned host-to-device, copies queued back to back.
H200_PINNED_H2D = {1024: 2.746 * US, 65536: 3.919 * US, 262144: 7.380 * US,
                   1048576: 21.553 * US, 16777216: 305.49 * US,
                   1073741824: 19397.2 * US}


def lat(name):
    return cl.LATENCIES[name].value


# --- one alpha per route, of one kind -------------------------------------------
def test_nvlink_neighbour_starts_sooner_than_a_gpu_in_another_server():
    assert lat("nvlink_p2p") < lat("gpudirect_rdma_one_way")
    for nic in cl.nic_names():
        for d in (0.0, 2.0, 100.0):
            nv = cl.route_parameters("p2p-nvlink", gpu="H100")["latency_s"]
            rd = cl.route_parameters("rdma", gpu="H100", nic=nic, distance_m=d)["latency_s"]
            assert nv < rd


def test_routes_take_their_alpha_from_the_catalog():
    assert cl.route_parameters("h2d")["latency_s"] == lat("pcie_small_copy")
    assert cl.route_parameters("d2h")["latency_s"] == lat("pcie_small_copy")
    assert cl.route_parameters("p2p-staged")["latency_s"] == lat("pcie_staged_p2p")
    assert cl.route_parameters("p2p-nvlink")["latency_s"] == lat("nvlink_p2p")
    assert cl.route_parameters("p2p-pcie")["latency_s"] == lat("pcie_p2p")
    p = cl.route_parameters("rdma", distance_m=10.0)
    # one way: the fibre counts once (issue 20: it used to add the round trip)
    assert p["latency_s"] == pytest.approx(lat("gpudirect_rdma_one_way") + cl.fibre_one_way_s(10.0))
    assert p["latency_s"] < lat("gpudirect_rdma_one_way") + cl.fibre_rtt_s(10.0)


def test_small_copy_alpha_and_measured_rate_fit_the_h200_curve():
    bw = cl.host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    for size, measured in H200_PINNED_H2D.items():
        model = cl.transfer_time_s(size, bw, lat("pcie_small_copy"))
        assert model == pytest.approx(measured, rel=0.06), size
    # the spec rate misses the large copies by the DMA efficiency
    spec = cl.host_copy_bw_bytes_per_s(5, "pinned")
    assert spec / bw == pytest.approx(1 / 0.87, rel=1e-9)
    assert abs(cl.transfer_time_s(2**30, spec) / H200_PINNED_H2D[2**30] - 1) > 0.1


# --- what the seeds claim, computed -----------------------------------------------
def test_nvlink_half_bandwidth_size_h100():
    h100 = cl.gpu("H100")
    n_half = cl.half_bandwidth_bytes(lat("nvlink_p2p"), h100.nvlink_bw_per_dir_bytes_per_s)
    assert n_half == pytest.approx(0.9e6)          # 2 us x 450 GB/s


# --- issue 20: one latency bookkeeping, PCIe peer-to-peer, pageable by size ---------
H200_H2D_RATIO = {1024: 0.486 / 0.373, 65536: 10.023 / 16.724,
                  1048576: 17.062 / 48.652, 1073741824: 6.706 / 55.356}


def test_rdma_alpha_is_one_way_and_completion_is_a_separate_round_trip():
    p = cl.route_parameters("rdma", nic="NDR", distance_m=100e3)
    one_way = lat("gpudirect_rdma_one_way") + 100e3 / (0.7 * 299_792_458)
    assert p["latency_s"] == pytest.approx(one_way)                 # about 480 us
    assert 470e-6 < p["latency_s"] < 490e-6                          # not 957 us
    assert p["completion_rtt_s"] == pytest.approx(2 * one_way)
    assert 950e-6 < p["completion_rtt_s"] < 970e-6
    # the seeds' round trip is the completion, not the arrival
    ndr = cl.nic("NDR").bw_per_dir_bytes_per_s
    arrive = cl.rdma_transfer_time_s(0, ndr, 1000)
    done = cl.rdma_transfer_time_s(0, ndr, 1000, completion=True)
    assert arrive == pytest.approx(cl.fibre_one_way_s(1000))
    assert done == pytest.approx(cl.fibre_rtt_s(1000))
    with pytest.raises(TypeError, match="completion"):
        cl.rdma_transfer_time_s(0, ndr, 1000, completion="yes")


def test_pcie_peer_to_peer_is_a_route_one_leg_over_pcie():
    assert "p2p-pcie" in cl.ROUTES
    p = cl.route_parameters("p2p-pcie", gpu="A100")
    assert p["legs"] == 1
    assert p["bw_bytes_per_s"] == cl.pcie_bw_per_dir_bytes_per_s(4)
    staged = cl.route_parameters("p2p-staged", gpu="A100")
    for size in (1e3, 1e6, 1e9):
        assert (cl.route_transfer_time_s(size, "p2p-pcie", gpu="A100")
                < cl.route_transfer_time_s(size, "p2p-staged", gpu="A100"))
    # one NVLink 3 link (25 GB/s) against PCIe Gen4 peer-to-peer (31.5 GB/s): a crossover
    one_link = cl.route_parameters("p2p-nvlink", gpu="A100", nvlink_links=1)
    assert 0 < cl.route_crossover_bytes(one_link, p) < float("inf")
    assert cl.route_crossover_bytes(one_link, staged) == float("inf")


def test_pageable_ratio_depends_on_size_as_measured_on_the_h200():
    for size, measured in H200_H2D_RATIO.items():
        model = cl.pageable_over_pinned(size)
        if measured >= 1:            # small uploads: pageable is not penalised
            assert model == pytest.approx(1.0)
        else:
            assert model == pytest.approx(measured, rel=0.02), size
    assert cl.pageable_over_pinned(2048) > 0.95
    # one catalog ratio (0.3) for every size would miss both ends
    r = cl.MEASURED["pageable_over_pinned_x86"].value
    assert abs(r - H200_H2D_RATIO[65536]) > 0.2 and abs(r - H200_H2D_RATIO[2**30]) > 0.15
    # the time model follows the same curve
    t_pin = cl.host_copy_time_s(2**20, measured=True)
    t_pg = cl.host_copy_time_s(2**20, memory="pageable", measured=True)
    assert t_pg > t_pin
    assert cl.host_copy_time_s(1024, memory="pageable") == cl.host_copy_time_s(1024)
    with pytest.raises(ValueError, match="direction"):
        cl.host_copy_time_s(1024, direction="up")


def test_batching_with_the_gather_copy():
    n, piece = 256, 64e3
    bw = cl.host_copy_bw_bytes_per_s(5, measured=True)
    a = lat("pcie_small_copy_sync")
    as_is = n * (a + piece / bw) + n * cl.pageable_extra_time_s(piece)
    no_gather = cl.batched_transfer_time_s(n, piece, bw, a)
    gather = cl.pageable_extra_time_s(n * piece)
    with_gather = cl.batched_transfer_time_s(n, piece, bw, a, gather_time_s=gather)
    assert with_gather == pytest.approx(no_gather + gather)
    assert as_is / no_gather > 8                      # the old "about 9x"
    assert 1.5 < as_is / with_gather < 4              # once the pieces must be gathered
    with pytest.raises(ValueError, match="gather_time_s"):
        cl.batched_transfer_time_s(n, piece, bw, a, gather_time_s=-1)
