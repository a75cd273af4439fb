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


@pytest.mark.parametrize("chunks", [1, 2, 8, 32])
@pytest.mark.parametrize("size", [64 * MIB, 256 * MIB, 2**30])
def test_calibrated_ring_with_chunks_matches_predict(chunks, size):
    # NCCL already cuts the data in slices: the calibrated ring pays the
    # per-step costs once per step whatever the piece count (issue 13: before,
    # 8 pieces of an 8x H100 ring at 256 MiB ran 8% faster than predicted)
    c = cl.cluster("H100")
    pred = cl.predict_collective("allreduce", size, c, algorithm="ring")
    sim = cl.simulate_collective("allreduce", size, c, algorithm="ring", chunks=chunks,
                                 trace=False)
    assert sim.time_s == pytest.approx(pred.time_s, rel=0.05)
    if chunks <= 8 and size <= 256 * MIB:  # the event engine agrees too
        ev = cl.simulate_collective("allreduce", size, c, algorithm="ring", chunks=chunks)
        assert ev.time_s == pytest.approx(sim.time_s, rel=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(gpu="H100", nodes=2, nic="NDR"),
    dict(gpu="H100", nodes=4, nic="NDR"),
    dict(gpu="A100", nodes=2, nic="HDR", nics_per_node=4),
    dict(gpu="H100", gpus_per_node=4, nodes=2, nic="HDR", nics_per_node=4),
    dict(gpu="H100", nodes=2, nic="TCPXO-200"),
    dict(gpu="A100", nodes=2, nic="EFA-100", nics_per_node=4),
], ids=["h100x2-ndr", "h100x4-ndr", "a100x2-4hdr", "h100-4gpu-x2", "a3mega", "p4d-efa"])
@pytest.mark.parametrize("size", [MIB, 64 * MIB, 2**30])
def test_calibrated_multi_node_ring_matches_predict(kwargs, size):
    # one ring per NIC; the NIC side and the NVLink side of the ring pipeline
    # against each other -- predict's chain/queue terms and the simulator agree
    c = cl.cluster(**kwargs)
    sim = cl.simulate_collective("allreduce", size, c, algorithm="ring", trace=False)
    pred = cl.predict_collective("allreduce", size, c, algorithm="ring")
    assert sim.time_s == pytest.approx(pred.candidates["ring/simple"], rel=0.05)


def test_ideal_ring_still_pipelines_its_chunks():
    # without calibration (a bare topology) pieces overlap across steps as before
    topo = nvswitch_topology(8, gpu="H100")
    one = cl.simulate_collective("allreduce", 64 * MIB, topo, chunks=1).time_s
    eight = cl.simulate_collective("allreduce", 64 * MIB, topo, chunks=8).time_s
    assert eight < one


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
    # patch the limit where simulate_collective reads it (under --import-mode=importlib
    # a doctest run can load course_lib.sim a second time, as another module object)
    monkeypatch.setitem(cl.simulate_collective.__globals__, "MAX_SIM_RANKS", 16)
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


# --- several ring orders on directly wired GPUs (mesh, cube-mesh) -----------------
from course_lib.sim.schedules import ring_orders  # noqa: E402
from course_lib.topology import (fully_connected_topology,  # noqa: E402
                                 hybrid_cube_mesh_topology)


def _directed_use(topo, rings):
    """Check every ring is a Hamiltonian cycle on existing GPU-GPU edges;
    return how many rings use each directed link."""
    gpus = sorted(v for v, k in topo.nodes(data="kind") if k == "gpu")
    use = {}
    for r in rings:
        assert sorted(r) == gpus  # every GPU exactly once
        for i in range(len(r)):
            a, b = r[i], r[(i + 1) % len(r)]
            assert topo.has_edge(a, b), f"{a}->{b} is not a direct link"
            use[(a, b)] = use.get((a, b), 0) + 1
    return use


@pytest.mark.parametrize("topo", [fully_connected_topology(4),
                                  hybrid_cube_mesh_topology("V100"),
                                  hybrid_cube_mesh_topology("P100")],
                         ids=["K4", "dgx1-v100", "dgx1-p100"])
def test_ring_orders_cover_every_link_in_proportion(topo):
    rings = ring_orders(topo, 32)
    use = _directed_use(topo, rings)
    for r in rings:  # both directions of every ring are present
        rev = [r[0]] + r[:0:-1]
        assert rings.count(rev) == rings.count(r)
    # every directed GPU-GPU link used, in proportion to its NVLink count
    directed = [(a, b) for a, b in topo.edges] + [(b, a) for a, b in topo.edges]
    assert set(use) == set(directed)
    per_link = {use[(a, b)] / topo.edges[a, b]["links"] for a, b in directed}
    assert len(per_link) == 1


def test_ring_orders_known_decompositions():
    # K4: 3 undirected Hamiltonian cycles, each edge in 2 of them; both ways: 6 rings
    k4 = ring_orders(fully_connected_topology(4), 32)
    assert len(k4) == 6 and len({tuple(r) for r in k4}) == 6
    # DGX-1 V100: the doubled links form one 8-ring, the single links another;
    # links in proportion means the doubled ring twice per direction, the single once
    topo = hybrid_cube_mesh_topology("V100")
    rings = ring_orders(topo, 32)
    assert len(rings) == 6
    kinds = [{topo.edges[r[i], r[(i + 1) % 8]]["links"] for i in range(8)} for r in rings]
    assert sorted(map(sorted, kinds)) == [[1]] * 2 + [[2]] * 4


def test_ring_orders_fall_back_to_one_order():
    assert ring_orders(nvswitch_topology(4), 8) == [[0, 1, 2, 3]]  # switched
    assert ring_orders(two_level_topology(2, 4), 8) == [list(range(8))]
    assert ring_orders(fully_connected_topology(17), 8) == [list(range(17))]  # > 16
    assert ring_orders(fully_connected_topology(4), 1) == [[0, 1, 2, 3]]
    with pytest.raises(ValueError, match="n_rings"):
        ring_orders(fully_connected_topology(4), 0)
    with pytest.raises(TypeError, match="topo"):
        ring_orders("mesh", 4)


def _gpu_out_bw(net, gpu):
    return sum(bw for name, bw in zip(net.link_names, net.link_bw)
               if name.startswith(f"{gpu}->"))


@pytest.mark.parametrize("kwargs", [dict(gpu="A100", gpus_per_node=4, fabric="mesh"),
                                    dict(gpu="V100", gpus_per_node=8, fabric="cube-mesh")],
                         ids=["a100-mesh4", "dgx1-v100"])
def test_mesh_rings_reach_predicted_busbw(kwargs):
    c = cl.cluster(**kwargs)
    s = 256 * MIB
    pred = cl.predict_collective("allreduce", s, c, algorithm="ring").busbw_bytes_per_s
    one = cl.simulate_collective("allreduce", s, c, channels=1)
    many = cl.simulate_collective("allreduce", s, c, channels=12)
    default = cl.simulate_collective("allreduce", s, c)
    assert many.busbw_bytes_per_s == pytest.approx(pred, rel=0.15)
    assert default.busbw_bytes_per_s == pytest.approx(pred, rel=0.15)
    # independent bound: a GPU cannot send faster than all its links together
    # (ring AllReduce busbw = what each GPU sends per second)
    bound = _gpu_out_bw(many.network, 0)
    assert many.busbw_bytes_per_s <= bound
    # one ring order uses one neighbour's links (or 2-hop routes): far below
    assert one.busbw_bytes_per_s < 0.5 * many.busbw_bytes_per_s


@pytest.mark.parametrize("coll", ["allreduce", "allgather", "reducescatter"])
@pytest.mark.parametrize("chunks, channels", [(1, 3), (4, 6), (2, 8)])
def test_streaming_equals_traced_on_mesh_rings(coll, chunks, channels):
    c = cl.cluster("A100", gpus_per_node=4, fabric="mesh")
    full = cl.simulate_collective(coll, 3e8, c, chunks=chunks, channels=channels)
    lean = cl.simulate_collective(coll, 3e8, c, chunks=chunks, channels=channels,
                                  trace=False)
    assert lean.time_s == pytest.approx(full.time_s, rel=1e-9)
    assert lean.n_transfers == full.n_transfers
    # the traced channels really run on different orders: more than one
    # neighbour of GPU 0 receives from it
    rows = full.trace.to_rows()
    assert len({r["dst"] for r in rows if r["src"] == 0}) == 3


def test_switched_channels_keep_one_order():
    # NVSwitch: every channel on the rank order, as before ring_orders existed
    topo = nvswitch_topology(8, gpu="H100")
    r = cl.simulate_collective("allreduce", 1e8, topo, channels=4)
    assert {(x["src"], x["dst"]) for x in r.trace.to_rows()} == {(i, (i + 1) % 8)
                                                                 for i in range(8)}


# --- the calibrated roads read the Cluster's rates (derived once) ------------
def test_calibrated_roads_read_the_clusters_rates():
    """Network.from_cluster takes every rate from the Cluster (course_lib.clusters):
    change a Cluster's rate and the simulator's roads follow, and predict's too."""
    import dataclasses

    from course_lib.hardware import calibration

    Cluster = cl.Cluster  # the class predict and sim check against

    @dataclasses.dataclass(frozen=True)
    class Odd(Cluster):
        def nvlink_bytes_per_s(self, links=1):
            return links * 1e9

        def pcie_dma_bytes_per_s(self):
            return 3e9

        def nic_bw_bytes_per_s(self):
            return 7e9

    base = cl.cluster("H100", nodes=2, nic="NDR")
    odd = Odd(*(getattr(base, f.name) for f in dataclasses.fields(Cluster)))
    simple = calibration("simple_efficiency")
    for clu in (base, odd):
        net = Network.from_cluster(clu)
        for i, kind in enumerate(net.link_kind):
            a, b = net.nodes[net.link_src[i]], net.nodes[net.link_dst[i]]
            want = {"nvlink": clu.nvlink_bytes_per_s(net.topo.edges[a, b]["links"]) * simple,
                    "pcie": clu.pcie_dma_bytes_per_s(),
                    "network": clu.nic_bw_bytes_per_s() * simple}[kind]
            assert net.link_bw[i] == pytest.approx(want, rel=1e-12), (kind, type(clu))
    assert odd.intra_bw_bytes_per_s() == 18e9   # predict's node rate: 18 NVLinks x 1 GB/s
    assert cl.predict_collective("allreduce", 2**30, odd).time_s > \
        cl.predict_collective("allreduce", 2**30, base).time_s
