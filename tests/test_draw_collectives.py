"""The collective drawings follow the algorithms they draw.

Each drawing is parsed as XML and read back through its CSS classes
(``ic-gpu``, ``ic-chunk`` with ``data-have``, ``ic-send`` with ``data-src`` /
``data-dst`` / ``data-chunk``, ``ic-frame``); what it shows is checked against
invariants of the algorithm derived here (an AllReduce ends with every chunk
summed over every GPU, a ReduceScatter leaves one finished chunk per GPU),
against the simulator's own trace of the ring, against
``topology.double_binary_tree`` and against the hierarchical schedule's
simulated sends.
"""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import course_lib as cl
from course_lib.draw import collectives as C
from course_lib.draw.svg import animate

SVG = "{http://www.w3.org/2000/svg}"


def parse(diagram):
    return ET.fromstring(diagram.svg)


def by_class(root, cls):
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def chunks(root):
    """(rank, chunk) -> how many GPUs' data that copy holds, from the drawing."""
    out = {}
    for e in by_class(root, "ic-chunk"):
        out[(e.get("data-rank"), int(e.get("data-chunk")))] = int(e.get("data-have"))
    return out


def sends(root):
    return [(e.get("data-src"), e.get("data-dst"), e.get("data-chunk"))
            for e in by_class(root, "ic-send")]


# --- the ring -------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 12])
def test_ring_end_state_every_gpu_holds_every_chunk_fully_reduced(n):
    root = parse(C.ring_allreduce(n, step=2 * (n - 1)))
    have = chunks(root)
    assert len(have) == n * n
    assert set(have.values()) == {n}
    assert len(by_class(root, "ic-gpu")) == n
    # every complete slot carries the tick a learner sees
    assert root.iter(f"{SVG}text") and sum(
        1 for t in root.iter(f"{SVG}text") if t.text == "✓") == n * n


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8])
def test_ring_after_reduce_scatter_each_gpu_holds_exactly_one_reduced_chunk(n):
    have = chunks(parse(C.ring_allreduce(n, step=n - 1)))
    full = {}
    for (rank, chunk), h in have.items():
        if h == n:
            full.setdefault(rank, []).append(chunk)
    assert sorted(full) == sorted(str(r) for r in range(n))
    assert all(len(v) == 1 for v in full.values())
    # and they are n different chunks: the sum is scattered, one shard per GPU
    assert sorted(v[0] for v in full.values()) == list(range(n))


@pytest.mark.parametrize("n", [3, 4, 7])
def test_ring_start_holds_only_own_data_and_no_arrows(n):
    root = parse(C.ring_allreduce(n, step=0))
    assert set(chunks(root).values()) == {1}
    assert sends(root) == []


@pytest.mark.parametrize("n", [2, 4, 5, 8])
def test_ring_arrows_each_step_are_n_sends_to_the_next_gpu(n):
    for k in range(1, 2 * (n - 1) + 1):
        got = sends(parse(C.ring_allreduce(n, step=k)))
        assert len(got) == n
        assert {(int(s), int(d)) for s, d, _ in got} == {(r, (r + 1) % n) for r in range(n)}
        # each GPU sends a different chunk in a step: all n chunks move
        assert sorted(int(c) for _, _, c in got) == list(range(n))


def test_ring_arrows_match_the_simulators_trace():
    """The simulator's ring (tag = step - 1) sends exactly what the drawing shows."""
    n = 4
    sim = cl.simulate_collective("allreduce", 64 * cl.MiB, cl.ring_topology(n, gpu="H100"),
                                 algorithm="ring")
    traced = {}
    for row in sim.trace.to_rows():
        traced.setdefault(row["tag"] + 1, set()).add((row["src"], row["dst"]))
    assert sorted(traced) == list(range(1, 2 * (n - 1) + 1))
    for k, pairs in traced.items():
        drawn = {(int(s), int(d)) for s, d, _ in sends(parse(C.ring_allreduce(n, step=k)))}
        assert drawn == pairs


@pytest.mark.parametrize("n", [3, 5])
def test_ring_fill_equals_the_replayed_numbers(n):
    """Fill levels = contributions; replaying real numbers gives the same count
    of finished chunks at every step (a chunk is finished when it equals the
    column sum of the initial buffers)."""
    rng = np.random.default_rng(1)
    buf = rng.integers(1, 1000, size=(n, n)).astype(float)
    total = buf.sum(axis=0)
    schedule = cl.traffic.ring_allreduce_schedule(n)
    for k in range(2 * (n - 1) + 1):
        if k:
            sent = [(m, buf[m["src"], m["chunk"]]) for m in schedule[k - 1]]
            for m, v in sent:
                if m["phase"] == "reduce-scatter":
                    buf[m["dst"], m["chunk"]] += v
                else:
                    buf[m["dst"], m["chunk"]] = v
        have = chunks(parse(C.ring_allreduce(n, step=k)))
        drawn_full = {(int(r), c) for (r, c), h in have.items() if h == n}
        real_full = {(r, c) for r in range(n) for c in range(n) if buf[r, c] == total[c]}
        assert drawn_full == real_full, k


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_ring_animation_has_one_frame_per_state(n):
    d = C.ring_allreduce(n)
    root = parse(d)
    frames = by_class(root, "ic-frame")
    assert len(frames) == 2 * (n - 1) + 1
    assert [int(f.get("data-frame")) for f in frames] == list(range(2 * (n - 1) + 1))
    # only the first frame is visible before the animation starts
    assert [f.get("visibility") for f in frames] == ["visible"] + ["hidden"] * (2 * (n - 1))
    # and frame k holds step k's arrows
    for k, f in enumerate(frames):
        assert len(by_class(f, "ic-send")) == (n if k else 0)
    assert "ic-anim" in root.get("class")


def test_ring_strip_has_every_state():
    root = parse(C.ring_allreduce_strip(5))
    panels = by_class(root, "ic-panel")
    assert [int(p.get("data-step")) for p in panels] == list(range(9))
    assert set(chunks(ET.fromstring(ET.tostring(panels[-1]))).values()) == {5}


def test_ring_diagram_fits_a_notebook_and_text_is_readable():
    for d in (C.ring_allreduce(8, step=3), C.ring_allreduce(12, step=3),
              C.double_binary_tree(16, step=1), C.nvls(8, step=1),
              C.hierarchical(4, 8, step=2), C.ring_allreduce_strip(8)):
        root = parse(d)
        assert float(root.get("width")) <= 900, d.title
        sizes = [float(t.get("font-size")) for t in root.iter(f"{SVG}text")]
        assert sizes and min(sizes) >= 11, d.title
        # a legend of road kinds on every collective drawing but the strip
        if "every step" not in d.title:
            assert by_class(root, "ic-legend"), d.title


@pytest.mark.parametrize("call, name", [
    (lambda: C.ring_allreduce(1), "n"), (lambda: C.ring_allreduce(13), "n"),
    (lambda: C.ring_allreduce(4, step=-1), "step"),
    (lambda: C.ring_allreduce(4, step=7), "step"),
    (lambda: C.ring_allreduce(4, step=2.5), "step"),
    (lambda: C.ring_allreduce_strip(4, columns=0), "columns"),
    (lambda: C.double_binary_tree(1), "nodes"),
    (lambda: C.double_binary_tree(8, step=7), "step"),
    (lambda: C.nvls(1), "n"), (lambda: C.nvls(8, step=4), "step"),
    (lambda: C.hierarchical(0, 8), "nodes"), (lambda: C.hierarchical(5, 8), "nodes"), (lambda: C.hierarchical(2, 9), "gpus_per_node"),
    (lambda: C.hierarchical(1, 1), "nodes x gpus_per_node"),
    (lambda: C.hierarchical(2, 4, step=4), "step"),
    (lambda: C.ring_allreduce(4, seconds_per_step=-1), "seconds_per_step"),
    (lambda: C.nvls(4, seconds_per_step=0), "seconds_per_step"),
    (lambda: C.ring_allreduce(4, road="canal"), "road"),
])
def test_bad_values_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("call", [lambda: C.hierarchical(2, 4, cluster="H100"),
                                  lambda: C.ring_allreduce("4"),
                                  lambda: C.ring_allreduce(4, step=True),
                                  lambda: C.nvls(None)])
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


# --- the double binary tree -------------------------------------------------------
@pytest.mark.parametrize("nodes", [2, 3, 4, 5, 8, 16])
def test_tree_edges_are_topologys_double_binary_tree(nodes):
    root = parse(C.double_binary_tree(nodes, step=0))
    drawn = [set(), set()]
    for e in by_class(root, "ic-tree-edge"):
        drawn[int(e.get("data-tree"))].add((int(e.get("data-child")),
                                            int(e.get("data-parent"))))
    for t, parent in enumerate(cl.topology.double_binary_tree(nodes)):
        assert drawn[t] == {(v, p) for v, p in parent.items() if p is not None}


@pytest.mark.parametrize("nodes", [2, 3, 4, 7, 8])
def test_tree_steps_reduce_up_then_broadcast_down_and_end_complete(nodes):
    info = C.tree_steps(nodes)
    trees = cl.topology.double_binary_tree(nodes)
    edges = sum(sum(p is not None for p in t.values()) for t in trees)
    ups = [s for step in info["sends"][1:] for s in step if s[3] == "reduce"]
    downs = [s for step in info["sends"][1:] for s in step if s[3] == "broadcast"]
    # every edge carries its half once up and once down
    assert len(ups) == len(downs) == edges
    for t, a, b, _ in ups:
        assert trees[t][a] == b
    for t, a, b, _ in downs:
        assert trees[t][b] == a
    last = info["last_step"]
    assert all(h == nodes for tree in info["have"][last] for h in tree)
    # after the reduce half, each root holds all members' data
    for t, parent in enumerate(trees):
        root_ = next(v for v, p in parent.items() if p is None)
        assert info["have"][last // 2][t][root_] == nodes
    # the drawing shows the same: every node's bar full at the end
    have = chunks(parse(C.double_binary_tree(nodes, step=last)))
    assert set(have.values()) == {nodes}
    # per-node send counts: their max is what topology's cost model uses
    assert max(info["sends_per_node"]) == cl.topology.tree_sends_per_node(nodes)
    assert sum(info["sends_per_node"]) == pytest.approx(edges)


def test_tree_arrows_per_step_and_animation():
    info = C.tree_steps(8)
    for k in range(1, info["last_step"] + 1):
        got = {(int(s), int(d)) for s, d, _ in sends(parse(C.double_binary_tree(8, step=k)))}
        assert got == {(a, b) for _, a, b, _ in info["sends"][k]}
    assert len(by_class(parse(C.double_binary_tree(8)), "ic-frame")) == info["last_step"] + 1


# --- NVLS ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 4, 8])
def test_nvls_up_to_the_switch_then_the_sum_down(n):
    up = sends(parse(C.nvls(n, step=1)))
    assert sorted((int(s), d) for s, d, _ in up) == [(r, "switch") for r in range(n)]
    assert sends(parse(C.nvls(n, step=2))) == []             # the switch adds
    down = sends(parse(C.nvls(n, step=3)))
    assert sorted((s, int(d)) for s, d, _ in down) == [("switch", r) for r in range(n)]
    start = chunks(parse(C.nvls(n, step=0)))
    end = chunks(parse(C.nvls(n, step=3)))
    assert all(start[(str(r), 0)] == 1 for r in range(n))
    assert all(end[(str(r), 0)] == n for r in range(n))
    assert len(by_class(parse(C.nvls(n)), "ic-frame")) == 4


# --- two levels ---------------------------------------------------------------------
@pytest.mark.parametrize("nodes, g", [(1, 4), (2, 4), (3, 2), (4, 8)])
def test_hierarchical_phases_follow_the_simulated_schedule(nodes, g):
    info = C.hierarchical_phases(nodes, g)
    # phase 1 and 3 stay inside a node, phase 2 on a rail (same local index)
    for a, b in info["sends"][1] + info["sends"][3]:
        assert a // g == b // g
    for a, b in info["sends"][2]:
        assert a % g == b % g and a // g != b // g
    assert (len(info["sends"][2]) == 0) == (nodes == 1)
    # the owners are a permutation: every shard finished by one GPU of a node
    assert sorted(info["owner"]) == list(range(g))
    total = nodes * g
    assert int(info["have"][0].max()) == 1
    assert all(int(info["have"][1][r].max()) == g for r in range(total))
    assert all(int(info["have"][2][r].max()) == total for r in range(total))
    assert int(info["have"][3].min()) == total


def test_hierarchical_sends_match_the_simulator():
    """Every transfer the simulator makes in a two-level AllReduce is drawn, in its phase."""
    nodes, g = 2, 4
    clu = cl.cluster("H100", gpus_per_node=g, nodes=nodes, nic="NDR")
    sim = cl.simulate_collective("allreduce", 1 * cl.MiB, clu, algorithm="hierarchical")
    info = C.hierarchical_phases(nodes, g)
    drawn = set(info["sends"][1]) | set(info["sends"][2]) | set(info["sends"][3])
    gpu_pairs = {(int(r["src"]), int(r["dst"])) for r in sim.trace.to_rows()
                 if r["kind"] == "send"}
    assert gpu_pairs, "the simulator recorded no GPU-to-GPU sends"
    assert gpu_pairs == drawn


def test_hierarchical_drawing_shows_the_phase_and_cluster():
    clu = cl.cluster("H100", nodes=2, nic="NDR")
    root = parse(C.hierarchical(2, 8, step=2, cluster=clu))
    assert len(sends(root)) == len(C.hierarchical_phases(2, 8)["sends"][2])
    text = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert cl.format_bandwidth(clu.intra_bw_bytes_per_s()) in text
    assert len(by_class(parse(C.hierarchical(3, 2)), "ic-frame")) == 4


def test_animate_refuses_no_frames():
    with pytest.raises(ValueError, match="frames"):
        animate([])


# --- chapter 8: the training step as a timeline ---------------------------------------
def _rects(group):
    return [e for e in group.iter(f"{SVG}rect")]


@pytest.mark.parametrize("k, overlap", [(1, False), (4, True), (8, False), (16, True)])
def test_timeline_draws_every_bucket_where_the_schedule_puts_it(k, overlap):
    from course_lib.draw import timeline

    s = cl.traffic.bucket_overlap_schedule(0.6, 0.4, n_buckets=k, overlap=overlap,
                                           t_forward_s=0.2)
    root = parse(timeline.bucket_timeline([("x", s)], n_ranks=4))
    buckets = by_class(root, "ic-bucket")
    comms = by_class(root, "ic-comm")
    assert len(buckets) == len(comms) == k
    # pixels per second from the first bucket; every other bar must sit on the same scale
    b0 = _rects(buckets[0])[0]
    scale = float(b0.get("width")) / (s["compute"][1][1] - s["compute"][1][0])
    x0 = float(b0.get("x")) - s["compute"][1][0] * scale
    for i, (g, (a, e)) in enumerate(zip(comms, s["comm"])):
        halves = _rects(g)[:2]                  # first phase, second phase
        assert float(halves[0].get("x")) == pytest.approx(x0 + a * scale, abs=0.15)
        assert float(halves[0].get("width")) + float(halves[1].get("width")) == \
            pytest.approx((e - a) * scale, abs=0.15)
        # a bucket is reduced only after the backward pass produced it
        assert a >= s["compute"][i + 1][1] - 1e-12
    exposed = by_class(root, "ic-exposed")
    assert bool(exposed) == (s["exposed_comm_s"] > 0)


def test_timeline_ticks_one_per_ring_step_when_wide_enough():
    from course_lib.draw import timeline

    s = cl.traffic.bucket_overlap_schedule(0.1, 1.0, n_buckets=2, overlap=True)
    root = parse(timeline.bucket_timeline([("x", s)], n_ranks=4))
    for g in by_class(root, "ic-comm"):
        assert len(by_class(g, "ic-chunk-tick")) == 2 * (4 - 1) - 1
    nvls = parse(timeline.bucket_timeline([("x", s)], n_ranks=8, algorithm="nvls"))
    assert not by_class(nvls, "ic-chunk-tick")


def test_training_step_uses_the_predicted_bucket_time():
    from course_lib.draw import timeline

    clu = cl.cluster("H100", fabric="pcie")
    d = timeline.training_step(clu, 7e9, 0.5, n_buckets=4)
    p = cl.predict_collective("allreduce", cl.gradient_bytes(7e9, 2) / 4, clu)
    s = cl.traffic.bucket_overlap_schedule(0.5, 4 * p.time_s, 4, overlap=False)
    # no forward lane: the time it states is backward + AllReduce, not a whole step
    assert f"backward + AllReduce = {cl.format_time(s['iteration_s'])}" in d.svg
    assert "step = " not in d.svg
    assert len(by_class(parse(d), "ic-comm")) == 8        # without and with overlap


@pytest.mark.parametrize("call, err, name", [
    (lambda T: T.bucket_timeline([("x", {"comm": []})]), TypeError, "schedules"),
    (lambda T: T.bucket_timeline([]), ValueError, "schedules"),
    (lambda T: T.bucket_timeline(cl.traffic.bucket_overlap_schedule(1, 1), n_ranks=0),
     ValueError, "n_ranks"),
    (lambda T: T.bucket_timeline(cl.traffic.bucket_overlap_schedule(1, 1),
                                 algorithm="star"), ValueError, "algorithm"),
    (lambda T: T.bucket_timeline(cl.traffic.bucket_overlap_schedule(1, 1), width=2000),
     ValueError, "width"),
    (lambda T: T.training_step(cl.cluster("H100"), 7e9, 0.5, n_buckets=0), ValueError,
     "n_buckets"),
])
def test_timeline_bad_input(call, err, name):
    from course_lib.draw import timeline

    with pytest.raises(err, match=name):
        call(timeline)


# --- chapter 11: a road is two one-way tracks; barriers --------------------------------
@pytest.mark.parametrize("gpu", ["H100", "A100", "V100"])
def test_two_way_tracks_use_the_catalogs_per_direction_rates(gpu):
    rec = cl.gpu(gpu)
    d = C.two_way_tracks(gpu)
    root = parse(d)
    tracks = by_class(root, "ic-send")
    assert sorted((t.get("data-src"), t.get("data-dst"), t.get("data-kind")) for t in tracks) \
        == sorted([("A", "B", "nvlink"), ("B", "A", "nvlink"), ("A", "B", "pcie"),
                   ("B", "A", "pcie")])
    assert rec.nvlink_bw_bidir_bytes_per_s == pytest.approx(2 * rec.nvlink_bw_per_dir_bytes_per_s)
    assert f"A → B  {cl.format_bandwidth(rec.nvlink_bw_per_dir_bytes_per_s)}" in d.svg
    assert f"A → B  {cl.format_bandwidth(rec.pcie_bw_per_dir_bytes_per_s)}" in d.svg
    assert cl.format_bandwidth(rec.nvlink_bw_bidir_bytes_per_s) in d.svg


def test_two_way_tracks_unknown_gpu_raises():
    with pytest.raises(ValueError):
        C.two_way_tracks("no-such-gpu")


def test_barrier_timeline_step_times_and_waits():
    from course_lib.draw import timeline

    t = cl.traffic.straggler_phase_times_s(4, 5, 0.01, jitter=0.2, seed=3)
    d = timeline.barrier_timeline(t)
    every = cl.traffic.barrier_step_time_s(t, every_phase=True)
    once = cl.traffic.barrier_step_time_s(t, every_phase=False)
    assert f"step = {cl.format_time(every)}" in d.svg
    assert f"step = {cl.format_time(once)}" in d.svg
    root = parse(d)
    assert len(by_class(root, "ic-phase")) == 2 * t.size
    # with a barrier after every phase, every GPU but the slowest waits in every phase
    waits = by_class(root, "ic-wait")
    slowest_each_phase = (t == t.max(axis=0)).sum()
    once_waits = (t.sum(axis=1) < t.sum(axis=1).max()).sum()
    assert len(waits) == t.size - slowest_each_phase + once_waits
    with pytest.raises(ValueError, match="phase_times_s"):
        timeline.barrier_timeline([[1.0, -1.0]])
    with pytest.raises(ValueError, match="phase_times_s"):
        timeline.barrier_timeline("abc")


# --- bad input: only ValueError or TypeError escape --------------------------------------
def _draw_functions():
    import inspect

    from course_lib.draw import timeline

    for mod in (C, timeline):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                yield f"{mod.__name__}.{name}", obj


@pytest.mark.parametrize("qualname, func", list(_draw_functions()),
                         ids=[q for q, _ in _draw_functions()])
def test_fuzz_only_value_or_type_errors_escape(qualname, func):
    import inspect

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    values = st.one_of(st.integers(-3, 40), st.floats(allow_nan=True, allow_infinity=True),
                       st.text(max_size=4), st.none(), st.booleans(),
                       st.sampled_from(["H100", "ring", "nvlink", "pcie", (0, 1)]),
                       st.lists(st.floats(0, 1), max_size=3),
                       st.lists(st.lists(st.floats(-1, 1), min_size=1, max_size=3),
                                min_size=1, max_size=3))
    n_params = len([p for p in inspect.signature(func).parameters.values()
                    if p.default is inspect.Parameter.empty])

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(values, min_size=n_params, max_size=n_params + 2))
    def run(args):
        try:
            func(*args)
        except (ValueError, TypeError):
            pass

    run()


# --- what each collective leaves in the buffers ------------------------------------
def _effect_state(root):
    """{phase: {(rank, chunk): (have, slot outline colour)}} read from the drawing."""
    out = {"before": {}, "after": {}}
    for g in by_class(root, "ic-gpu"):
        for e in by_class(g, "ic-chunk"):
            rect = next(e.iter(SVG + "rect"))
            out[g.get("data-phase")][(int(e.get("data-rank")), int(e.get("data-chunk")))] = (
                int(e.get("data-have")), rect.get("stroke"))
    return out


def _apply(collective, before, n, root):
    """The collective's definition on buffers of contributor sets (MPI/NCCL semantics)."""
    total = [set().union(*(before[g][k] for g in range(n))) for k in range(n)]
    if collective == "allreduce":
        return [[total[k] for k in range(n)] for _ in range(n)]
    if collective == "reducescatter":
        return [[total[k] if k == r else set() for k in range(n)] for r in range(n)]
    if collective == "allgather":
        return [[before[k][k] for k in range(n)] for _ in range(n)]
    if collective == "broadcast":
        return [[before[root][k] for k in range(n)] for _ in range(n)]
    if collective == "reduce":
        return [[total[k] if r == root else set() for k in range(n)] for r in range(n)]
    return [[before[j][r] for j in range(n)] for r in range(n)]          # alltoall


@pytest.mark.parametrize("collective", cl.analytic.COLLECTIVES)
@pytest.mark.parametrize("n, root", [(2, 0), (4, 0), (5, 3), (8, 7)])
def test_collective_effect_after_is_the_collectives_definition_of_before(collective, n, root):
    state = _effect_state(parse(C.collective_effect(collective, n, root=root)))
    assert len(state["before"]) == len(state["after"]) == n * n
    # the drawn "before" as contributor sets: a slot holding h GPUs' data
    if collective in ("allreduce", "reducescatter", "reduce"):
        before = [[{r} for _ in range(n)] for r in range(n)]
    elif collective == "allgather":
        before = [[{r} if k == r else set() for k in range(n)] for r in range(n)]
    elif collective == "broadcast":
        before = [[{root} if r == root else set() for _ in range(n)] for r in range(n)]
    else:
        before = [[{r} for _ in range(n)] for r in range(n)]
    for (r, k), (have, _) in state["before"].items():
        assert have == len(before[r][k]), (collective, "before", r, k)
    after = _apply(collective, before, n, root)
    for (r, k), (have, colour) in state["after"].items():
        assert have == len(after[r][k]), (collective, "after", r, k)
        if collective == "alltoall":          # coloured by the GPU that sent it
            assert colour == C._chunk_colour(next(iter(after[r][k])))


def test_collective_effect_states_nccl_tests_busbw_factor_and_rejects_bad_input():
    assert "algbw × 1.75 for AllReduce of 8 GPUs" in C.collective_effect("allreduce", 8).svg
    assert "algbw × 0.75 for AllToAll of 4 GPUs" in C.collective_effect("alltoall", 4).svg
    for kwargs, name in [({"collective": "gossip"}, "collective"), ({"n": 1}, "n"),
                         ({"n": 13}, "n"), ({"n": 4, "root": 4}, "root")]:
        with pytest.raises(ValueError, match=name):
            C.collective_effect(**kwargs)
