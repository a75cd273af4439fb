"""Tests for course_lib.sim: the simulator against closed forms and against predict."""

import numpy as np
import pytest

import course_lib as cl
from course_lib.analytic import collective_time_s
from course_lib.sim import Network, ScheduleBuilder, run, run_batched, run_events
from course_lib.sim.workloads import data_parallel_step, shared_links, straggler_step
from course_lib.topology import (nvswitch_topology, ring_topology,
                                 two_level_topology)

MIB = 2**20
NV_LAT = 0.6e-6  # topology's per-link latency (NCCL NVLink hop), catalog


# --- agreement with the alpha-beta formulas --------------------------------
@pytest.mark.parametrize("coll", ["allreduce", "allgather", "reducescatter"])
@pytest.mark.parametrize("n", [2, 5, 8])
def test_ring_one_chunk_matches_analytic(coll, n):
    s = 3e8
    topo = nvswitch_topology(n, gpu="A100")  # 300 GB/s per GPU, 2 links per route
    sim = cl.simulate_collective(coll, s, topo)
    ref = collective_time_s(coll, s, n, 300e9, 2 * NV_LAT)
    assert sim.time_s == pytest.approx(ref, rel=0.01)
    topo = ring_topology(n, links_per_pair=2, gpu="H100")  # 50 GB/s per neighbour
    sim = cl.simulate_collective(coll, s, topo, engine="events")
    assert sim.time_s == pytest.approx(collective_time_s(coll, s, n, 50e9, NV_LAT), rel=0.01)


def test_chunks_hide_per_step_latency():
    topo = nvswitch_topology(8, gpu="H100")
    one = cl.simulate_collective("allreduce", 1e6, topo).time_s
    many = cl.simulate_collective("allreduce", 1e6, topo, chunks=8).time_s
    # pipelined: 14 steps of bandwidth plus the latency once per piece chain
    bw_only = 2 * 7 / 8 * 1e6 / 450e9
    assert one == pytest.approx(bw_only + 14 * 2 * NV_LAT, rel=1e-6)
    assert bw_only < many < one


def test_tree_pipelined_matches_analytic():
    s, n = 64 * MIB, 8
    sim = cl.simulate_collective("allreduce", s, nvswitch_topology(n, gpu="H100"),
                                 algorithm="tree", chunks=64)
    ref = collective_time_s("allreduce", s, n, 450e9, 2 * NV_LAT, algorithm="tree")
    assert sim.time_s == pytest.approx(ref, rel=0.02)
    one = cl.simulate_collective("allreduce", s, nvswitch_topology(n, gpu="H100"),
                                 algorithm="tree")
    assert one.time_s > 1.5 * ref  # without pipelining the levels serialise


def test_chain_broadcast_closed_form():
    s, n, m = 1e8, 6, 10
    topo = nvswitch_topology(n, gpu="H100")
    t1 = cl.simulate_collective("broadcast", s, topo).time_s
    assert t1 == pytest.approx((n - 1) * (s / 450e9 + 2 * NV_LAT), rel=1e-9)
    tm = cl.simulate_collective("broadcast", s, topo, chunks=m).time_s
    # a send holds its sender for piece/B; latency only delays arrival:
    # (m + n - 2) piece-times plus the latency of each of the n - 1 hops once
    assert tm == pytest.approx((n - 2 + m) * s / m / 450e9 + (n - 1) * 2 * NV_LAT,
                               rel=1e-9)


def test_in_switch_pipelined_approaches_s_over_b():
    s = 256 * MIB
    topo = nvswitch_topology(8, gpu="H100")
    one = cl.simulate_collective("allreduce", s, topo, algorithm="nvls").time_s
    many = cl.simulate_collective("allreduce", s, topo, algorithm="nvls", chunks=64).time_s
    assert one == pytest.approx(2 * s / 450e9 + 2 * NV_LAT, rel=1e-6)  # up 1 link, down 1
    assert many == pytest.approx(s / 450e9, rel=0.03)


def test_alltoall_direct_closed_form():
    s, n = 8e8, 8
    t = cl.simulate_collective("alltoall", s, nvswitch_topology(n, gpu="H100"),
                               algorithm="direct").time_s
    assert t == pytest.approx((n - 1) * (s / n / 450e9) + 2 * NV_LAT, rel=1e-6)


# --- agreement with predict on the calibrated clusters ------------------------
@pytest.mark.parametrize("gpu_name, algo", [("A100", "ring"), ("H100", "ring"),
                                            ("H100", "nvls")])
@pytest.mark.parametrize("size", [64 * MIB, 2**30])
def test_calibrated_sim_matches_predict(gpu_name, algo, size):
    c = cl.cluster(gpu_name)
    sim = cl.simulate_collective("allreduce", size, c, algorithm=algo)
    pred = cl.predict_collective("allreduce", size, c, algorithm=algo)
    assert sim.time_s == pytest.approx(pred.time_s, rel=0.05)


# --- engines and sharing ---------------------------------------------------------
def test_engines_agree_on_a_two_level_ring_with_channels():
    topo = two_level_topology(2, 4, gpu="H100", nic="NDR")
    a = cl.simulate_collective("allreduce", 1e8, topo, channels=4, engine="events")
    b = cl.simulate_collective("allreduce", 1e8, topo, channels=4, engine="batched")
    assert a.time_s == pytest.approx(b.time_s, rel=1e-9)
    # four channels use all four NICs: about 4x one channel across the network
    one = cl.simulate_collective("allreduce", 1e8, topo)
    assert one.time_s / a.time_s == pytest.approx(4, rel=0.1)


def test_fair_sharing_on_one_link():
    net = Network(nvswitch_topology(4, gpu="A100"))  # 300 GB/s per GPU port
    b = ScheduleBuilder()
    b.add_sends([0, 0], [1, 2], [3e9, 3e9], queue=[0, 1])
    tr = run_events(b.build(), net)
    # both share 0->nvswitch: 150 GB/s each, 20 ms, plus 2 x 0.6 us
    assert tr.rows["end_s"] == pytest.approx([0.02 + 1.2e-6] * 2, rel=1e-9)
    # max-min: a third send 3->1 shares nvswitch->1 with 0->1; 0->1 is held to
    # 150 GB/s by its first link, so 3->1 gets the other 150, not 100
    b = ScheduleBuilder()
    b.add_sends([0, 0, 3], [1, 2, 1], [3e9, 3e9, 3e9], queue=[0, 1, 2])
    tr = run_events(b.build(), net)
    assert tr.rows["end_s"][2] == pytest.approx(0.02 + 1.2e-6, rel=1e-9)


def test_two_jobs_on_one_nic_take_twice_as_long():
    net = Network(two_level_topology(2, 8, gpu="H100", nic="NDR", nics_per_node=1))
    r = shared_links(net, [[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]], 1e8)
    for together, alone in zip(r.parts["together_s"], r.parts["alone_s"]):
        assert together / alone == pytest.approx(2.0, rel=0.05)


def test_straggler_delays_everyone():
    net = Network(nvswitch_topology(8, gpu="H100"))
    s, comp, slow = 1e8, 1e-3, 2e-3
    r = straggler_step(net, s, comp, slow_rank=3, slow_by_s=slow)
    ring = collective_time_s("allreduce", s, 8, 450e9, 2 * NV_LAT)
    assert r.time_s == pytest.approx(comp + slow + ring, rel=1e-6)
    assert r.parts["wait_s"][3] == pytest.approx(ring, rel=1e-6)
    assert r.parts["wait_s"][0] == pytest.approx(slow + ring, rel=1e-6)


def test_overlap_hides_communication():
    net = Network(nvswitch_topology(8, gpu="H100"))
    grads, times = [50e6] * 10, [1e-3] * 10
    on = data_parallel_step(net, grads, times, bucket_bytes=100e6, overlap=True)
    off = data_parallel_step(net, grads, times, bucket_bytes=100e6, overlap=False)
    bucket = collective_time_s("allreduce", 100e6, 8, 450e9, 2 * NV_LAT)
    assert off.time_s == pytest.approx(10e-3 + 5 * bucket, rel=1e-6)
    # with overlap only the last bucket (layers 1 and 0) is exposed
    assert on.time_s == pytest.approx(10e-3 + bucket, rel=1e-6)


# --- records, trace, errors ------------------------------------------------------
def test_trace_rows_and_record():
    r = cl.simulate_collective("allreduce", 1e6, cl.cluster("A100", gpus_per_node=4))
    rows = r.trace.to_rows()
    assert len(rows) == 2 * 3 * 4
    assert {"start_s", "end_s", "src", "dst", "link", "n_bytes"} <= set(rows[0])
    assert all(x["end_s"] > x["start_s"] for x in rows)
    assert r.busbw_bytes_per_s == pytest.approx(1e6 / r.time_s * 2 * 3 / 4)
    assert sum(x["n_bytes"] for x in rows) == pytest.approx(2 * 3 / 4 * 1e6 * 4)


def test_batched_rejects_general_schedules():
    net = Network(nvswitch_topology(4))
    b = ScheduleBuilder()
    b.batched = False
    b.add_sends([0], [1], [1e6], queue=[0])
    with pytest.raises(ValueError, match="step schedule"):
        run_batched(b.build(), net)
    assert len(run(b.build(), net)) == 1


@pytest.mark.parametrize("kwargs, exc", [
    (dict(algorithm="nvls", cluster=cl.cluster("A100")), ValueError),
    (dict(algorithm="bogus"), ValueError),
    (dict(chunks=0), ValueError),
    (dict(cluster="H100"), TypeError),
    (dict(algorithm="hierarchical"), ValueError),
])
def test_simulate_rejects_bad_input(kwargs, exc):
    args = dict(collective="allreduce", n_bytes=1e6, cluster=cl.cluster("H100"))
    args.update(kwargs)
    with pytest.raises(exc):
        cl.simulate_collective(**args)


def test_hierarchical_beats_single_ring_across_nodes():
    c = cl.cluster("H100", nodes=2, gpus_per_node=4, nic="HDR", nics_per_node=4)
    flat = cl.simulate_collective("allreduce", 2**28, c).time_s
    hier = cl.simulate_collective("allreduce", 2**28, c, algorithm="hierarchical").time_s
    assert hier < flat
    assert np.isfinite(hier)


# --- trace=False: the ring played step by step, nothing per transfer kept ---------
@pytest.mark.parametrize("coll", ["allreduce", "allgather", "reducescatter"])
@pytest.mark.parametrize("where", ["nvswitch8", "two_level_4x8", "cluster_2x8"])
@pytest.mark.parametrize("chunks, channels", [(1, 1), (4, 1), (1, 2), (4, 2)])
def test_streaming_equals_traced(coll, where, chunks, channels):
    cluster = {"nvswitch8": nvswitch_topology(8, gpu="H100"),
               "two_level_4x8": two_level_topology(4, 8, gpu="H100", nic="NDR"),
               "cluster_2x8": cl.cluster("H100", nodes=2, nic="NDR")}[where]
    full = cl.simulate_collective(coll, 3e8, cluster, chunks=chunks, channels=channels)
    lean = cl.simulate_collective(coll, 3e8, cluster, chunks=chunks, channels=channels,
                                  trace=False)
    for k in ("time_s", "algbw_bytes_per_s", "busbw_bytes_per_s"):
        assert getattr(lean, k) == pytest.approx(getattr(full, k), rel=1e-9)
    n = full.n_ranks
    steps = 2 * (n - 1) if coll == "allreduce" else n - 1
    assert lean.n_transfers == full.n_transfers == steps * n * chunks * channels
    assert lean.trace is None and lean.schedule is None
    assert lean.to_dict()["traced"] is False and full.to_dict()["traced"] is True
    assert lean.to_dict()["time_s"] == pytest.approx(full.time_s, rel=1e-9)


def test_streaming_beyond_the_traced_limit_matches_analytic(monkeypatch):
    from course_lib import sim
    monkeypatch.setattr(sim, "MAX_SIM_RANKS", 16)
    topo = nvswitch_topology(32, gpu="A100")  # 300 GB/s per GPU, 2 links per route
    with pytest.raises(ValueError, match="trace=False"):
        cl.simulate_collective("allreduce", 1e9, topo)
    r = cl.simulate_collective("allreduce", 1e9, topo, trace=False)
    assert r.time_s == pytest.approx(collective_time_s("allreduce", 1e9, 32, 300e9,
                                                       2 * NV_LAT), rel=1e-9)


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(algorithm="tree"), ValueError, "algorithm='ring'"),
    (dict(collective="broadcast"), ValueError, "algorithm='ring'"),
    (dict(engine="events"), ValueError, "engine"),
    (dict(trace="no"), TypeError, "trace"),
    (dict(cluster=cl.cluster("H100", nodes=9000, nic="NDR")), ValueError, "predict_collective"),
])
def test_streaming_rejects_bad_input(kwargs, exc, words):
    args = dict(collective="allreduce", n_bytes=1e6, cluster=cl.cluster("H100"),
                trace=False)
    args.update(kwargs)
    with pytest.raises(exc, match=words):
        cl.simulate_collective(**args)


def test_traced_limits_suggest_trace_false():
    with pytest.raises(ValueError, match="trace=False"):
        cl.simulate_collective("allreduce", 1e6, cl.cluster("H100", nodes=1024, nic="NDR"))
    with pytest.raises(ValueError, match="trace=False"):  # 512 ranks: 67 M transfers
        cl.simulate_collective("allreduce", 1e6, cl.cluster("H100", nodes=64, nic="NDR"),
                               chunks=64, channels=2)


def test_plotting_a_result_without_trace_says_why():
    from course_lib import plots
    r = cl.simulate_collective("allreduce", 1e6, nvswitch_topology(4), trace=False)
    with pytest.raises(ValueError, match="trace=True"):
        plots.plot_timeline(r)
