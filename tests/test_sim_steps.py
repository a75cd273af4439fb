"""Tests for the step form of course_lib.sim: ring schedules kept as their
R x n arrays, the step engine shared by run_batched and run_steps, the lazy
trace, and the pair table that no longer sorts every transfer.

Each fast path is checked against the plain computation it replaces (the
per-op schedule played by the general batched engine, np.unique, a plain
gather), on inputs where the two could differ."""

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim import Network, ScheduleBuilder, run_batched, run_events, schedules
from course_lib.sim import network as network_mod
from course_lib.sim.ops import COLUMNS, Schedule
from course_lib.sim.steps import Step, _ShiftGather, run_steps

MIB = 2**20


def _calibrated_ring(nodes=2, chunks=3, channels=2, size=8 * MIB):
    c = cl.cluster("H100", nodes=nodes, nic="NDR")
    return cl.simulate_collective("allreduce", size, c, chunks=chunks, channels=channels)


def test_ring_is_kept_in_step_form():
    r = _calibrated_ring()
    n, steps = 16, 2 * 15
    assert r.schedule.steps is not None and len(r.schedule.steps) == steps * 3
    assert len(r.schedule) == r.n_transfers == steps * 3 * 2 * n
    assert len(r.trace) == len(r.schedule)
    # every step repeats the same arrays: one route table for the whole ring
    assert len({id(st.src) for st in r.schedule.steps}) == 1


@pytest.mark.parametrize("nodes,chunks,channels", [(2, 3, 2), (1, 1, 1), (4, 2, 8)])
def test_step_form_plays_like_the_per_op_schedule(nodes, chunks, channels):
    """The step engine and the lazy trace give, bit for bit, what the general
    batched engine gives on the same schedule written out op by op."""
    r = _calibrated_ring(nodes, chunks, channels)
    eager = Schedule(**r.schedule.columns())
    assert eager.steps is None and eager.batched
    ref = run_batched(eager, r.network)
    for name in ref.rows.dtype.names:
        assert np.array_equal(r.trace.rows[name], ref.rows[name]), name
    assert r.time_s == float(ref.rows["end_s"].max())
    assert r.trace.makespan_s == ref.makespan_s
    for i in (0, 7, len(ref) // 2, len(ref) - 1):
        assert r.trace.op_links(i) == ref.op_links(i)


def test_times_and_lengths_need_no_rows():
    r = _calibrated_ring(chunks=1)
    assert r.trace._rows is None  # nothing per transfer was assembled
    t, span = r.time_s, r.trace.makespan_s
    assert r.trace._rows is None
    rows = r.trace.rows  # now assembled: the same numbers
    assert t == float(rows["end_s"].max())
    assert span == float(rows["end_s"].max() - min(0.0, rows["start_s"].min()))


def test_step_form_and_trace_false_agree():
    c = cl.cluster("H100", nodes=4, nic="NDR")
    for chunks in (1, 4):
        full = cl.simulate_collective("allreduce", 64 * MIB, c, chunks=chunks)
        lean = cl.simulate_collective("allreduce", 64 * MIB, c, chunks=chunks, trace=False)
        assert lean.time_s == full.time_s and lean.n_transfers == full.n_transfers


def test_event_engine_reads_the_step_form():
    """run_events builds the per-op columns from the steps; with one send per
    link per step both engines give the same times."""
    topo = cl.nvswitch_topology(4, gpu="H100")
    r = cl.simulate_collective("allreduce", 8 * MIB, topo, chunks=2)
    ev = run_events(r.schedule, r.network)
    assert np.allclose(ev.rows["end_s"], r.trace.rows["end_s"], rtol=1e-12, atol=0)


def test_builder_mixes_steps_and_sends_with_global_ids():
    net = Network(cl.nvswitch_topology(4, gpu="H100"))
    orders = schedules.channel_orders(net, net.gpus, 1)
    b = ScheduleBuilder()
    first = b.add_sends([0], [1], [1e6], queue=[99])
    ids = schedules.ring(b, net, orders, "allgather", 4e6)
    last = b.add_sends([2], [3], [1e6], queue=[98], deps=ids[-1, -1, 0, :1])
    s = b.build()
    assert s.steps is None and len(s) == 1 + 3 * 4 + 1  # mixed: written out op by op
    assert ids.ravel().tolist() == list(range(1, 13)) and last.tolist() == [13]
    # step 1 (ops 5..8) waits for step 0 (ops 1..4) of the previous position
    assert s.deps[5:9, 0].tolist() == [1 + 3, 1 + 0, 1 + 1, 1 + 2]
    assert (s.deps[1:5, 0] == -1).all() and s.deps[13, 0] == ids[-1, -1, 0, 0]
    assert s.batch.tolist() == sorted(s.batch.tolist()) and first.tolist() == [0]
    tr = run_batched(s, net)
    assert tr.rows["start_s"][13] >= tr.rows["end_s"][ids[-1, -1, 0, 0]]


def test_ring_start_deps_written_out_match_ring_steps():
    """ring(start_deps=...) is ring_steps' sends plus the extra deps."""
    net = Network(cl.nvswitch_topology(4, gpu="A100"))
    orders = schedules.channel_orders(net, net.gpus, 1)
    b = ScheduleBuilder()
    pre = b.add_computes(np.arange(4), 1e-6, queue=50 + np.arange(4))
    ids = schedules.ring(b, net, orders, "allreduce", 1e6, chunks=2,
                         start_deps=pre[None, :])
    s = b.build()
    assert ids.shape == (6, 2, 1, 4)
    first = ids[0].ravel()
    assert sorted(s.deps[first, 1].tolist()) == sorted(np.tile(pre, 2).tolist())
    assert (s.deps[ids[1:].ravel(), 1] == -1).all()
    ref = Schedule.from_steps(schedules.ring_steps(net, orders, "allreduce", 1e6, 2))
    for name in ("src", "dst", "n_bytes", "queue", "extra_s", "tag"):
        assert np.array_equal(getattr(s, name)[4:], getattr(ref, name)), name


def test_shift_gather_matches_a_plain_gather():
    rng = np.random.default_rng(3)
    prev = rng.random(40)
    extra = rng.random(24)
    ring_dep = np.roll(np.arange(24).reshape(3, 8), 1, axis=1).ravel()
    holes = ring_dep.copy()
    holes[[0, 5, 23]] = -1
    cases = [ring_dep, holes, rng.integers(-1, 40, 24), np.full(24, -1),
             np.arange(24) + 16]
    for dep in cases:
        plain = np.where(dep >= 0, prev[np.maximum(dep, 0)], 0.0) + extra
        assert np.array_equal(_ShiftGather(dep)(prev, extra), plain)
        assert np.array_equal(_ShiftGather(dep)(prev, 0.5),
                              np.where(dep >= 0, prev[np.maximum(dep, 0)], 0.0) + 0.5)


@pytest.mark.parametrize("cells", [network_mod.PAIR_GRID_CELLS, 4])
def test_unique_pairs_match_np_unique(monkeypatch, cells):
    monkeypatch.setattr(network_mod, "PAIR_GRID_CELLS", cells)
    rng = np.random.default_rng(11)
    n = 50
    src = rng.integers(0, n, 5000)
    dst = rng.integers(0, 20, 5000) * 2
    uniq, inv = network_mod._unique_pairs(src, dst, n)
    ref_u, ref_i = np.unique(src * n + dst, return_inverse=True)
    assert np.array_equal(uniq, ref_u) and np.array_equal(inv, ref_i)
    empty = network_mod._unique_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64), n)
    assert len(empty[0]) == 0 and len(empty[1]) == 0


def test_pair_table_of_a_ring():
    net = Network(cl.two_level_topology(2, 4, gpu="H100", nic="NDR"))
    src = np.tile(np.arange(8), 1000)
    dst = np.tile(np.roll(np.arange(8), -1), 1000)
    pair, links, lat, bw = net.pair_table(src, dst)
    assert len(lat) == 8 and pair.tolist()[:8] == list(range(8))
    for i in range(8):
        route = [int(x) for x in links[pair[i]] if x >= 0]
        assert route == list(net.route(net.nodes[src[i]], net.nodes[dst[i]]))
        assert bw[pair[i]] == net.route_bw(net.nodes[src[i]], net.nodes[dst[i]])


def test_bad_steps_are_refused_by_name():
    net = Network(cl.nvswitch_topology(4, gpu="H100"))
    src, dst = np.arange(4), np.roll(np.arange(4), -1)
    q, z = np.arange(4), np.zeros(4)
    with pytest.raises(ValueError, match="steps is empty"):
        Schedule.from_steps([])
    with pytest.raises(ValueError, match="steps is empty"):
        ScheduleBuilder().add_steps([])
    with pytest.raises(ValueError, match="Step.dep has 3 entries for 4 sends"):
        run_steps([Step(src, dst, 1e6, q, z), Step(src, dst, 1e6, q, z, np.arange(3))], net)
    with pytest.raises(ValueError, match="Step.dep points at send 6"):
        run_steps([Step(src, dst, 1e6, q, z),
                   Step(src, dst, 1e6, q, z, np.array([0, 1, 2, 6]))], net)
    with pytest.raises(ValueError, match="Step.back=2"):
        run_steps([Step(src, dst, 1e6, q, z), Step(src, dst, 1e6, q, z, q, back=2)],
                  net, window=2)
    with pytest.raises(ValueError, match="Step.back=2 reaches before the first step"):
        Schedule.from_steps([Step(src, dst, 1e6, q, z),
                             Step(src, dst, 1e6, q, z, q, back=2)]).columns()


def test_columns_of_a_step_schedule():
    s = Schedule.from_steps(schedules.ring_steps(
        Network(cl.nvswitch_topology(3, gpu="H100")), [[0, 1, 2]], "allgather", 3e6, 2))
    cols = s.columns()
    assert set(cols) == set(COLUMNS) and len(s) == 2 * 2 * 3
    assert s.batch.tolist() == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3
    assert s.tag.tolist() == [0] * 6 + [1] * 6
    # piece j of step 1 waits for piece j of step 0 from the previous position
    assert s.deps[6:, 0].tolist() == [2, 0, 1, 5, 3, 4]


@pytest.mark.parametrize("topo", [cl.ring_topology(20, gpu="H100"),
                                  cl.two_level_topology(2, 4, gpu="A100", nic="HDR")])
def test_pair_table_agrees_with_route_queries(topo):
    """Latency and bandwidth of every pair, computed for all pairs at once,
    are route_latency_s and route_bw to the last bit (ideal and calibrated
    roads, routes shorter and longer than 8 links)."""
    nets = [Network(topo)]
    if "nodes" in topo.graph:
        nets.append(Network.from_cluster(cl.cluster("A100", nodes=2, nic="HDR",
                                                    gpus_per_node=4)))
    for net in nets:
        g = net.gpus
        src = np.array([net.index[a] for a in g for b in g if a != b])
        dst = np.array([net.index[b] for a in g for b in g if a != b])
        pair, links, lat, bw = net.pair_table(src, dst)
        for i in range(len(src)):
            a, b = net.nodes[src[i]], net.nodes[dst[i]]
            assert lat[pair[i]] == net.route_latency_s(a, b)
            assert bw[pair[i]] == net.route_bw(a, b)


def test_step_columns_refuse_deps_outside_the_earlier_step():
    src, dst = np.arange(4), np.roll(np.arange(4), -1)
    q, z = np.arange(4), np.zeros(4)
    bad = Schedule.from_steps([Step(src[:2], dst[:2], 1e6, q[:2], z[:2]),
                               Step(src, dst, 1e6, q, z, np.array([0, 1, 2, -1]))])
    with pytest.raises(ValueError, match="step 1: Step.dep must hold 4 positions below 2"):
        bad.columns()
