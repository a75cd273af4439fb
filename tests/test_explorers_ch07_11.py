"""Headless tests of the explorers of chapters 7-11.

Each explorer is driven through ``Explorer.update(**values)`` and the data it
would plot is checked against relations derived here from the definitions
(nccl-tests' busbw factor, the ring schedule's invariants, the barrier and
overlap inequalities, Amdahl, the NVLink lane arithmetic, the measured CSV
read with the csv module).  Bad control values must raise; every explorer
renders once to a PNG.
"""

import csv
import math
import pathlib
import re

import numpy as np
import pytest

import course_lib as cl

from course_lib import explorers

REPO = pathlib.Path(__file__).resolve().parents[1]
NAMES = ["ch07_allreduce.allreduce", "ch07_allreduce.ring_steps", "ch08_overlap.overlap",
         "ch08_overlap.stragglers", "ch09_scaling.scaling", "ch09_scaling.amdahl",
         "ch09_scaling.growth", "ch10_scenarios", "ch11_myths"]
FACTORIES = dict(explorers.iter_explorers())


def ex(name):
    return FACTORIES[name]()


def test_registry_has_every_chapter_7_11_explorer():
    for name in NAMES:
        assert name in FACTORIES
    for chapter in ("ch07", "ch08", "ch09", "ch10", "ch11"):
        assert any(n.startswith(chapter) for n in FACTORIES)


@pytest.mark.parametrize("name", NAMES)
def test_renders_png_and_readout(name):
    e = ex(name)
    data, png = e.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    text = e.readout(data)
    assert isinstance(text, str) and len(text) > 40


@pytest.mark.parametrize("name", NAMES)
def test_unknown_control_and_bad_dropdown_raise(name):
    e = ex(name)
    with pytest.raises(ValueError):
        e.update(no_such_control=1)
    dropdowns = [k for k, s in e.controls.items() if s["type"] in ("Dropdown", "ToggleButtons")]
    for k in dropdowns:
        with pytest.raises(ValueError):
            e.update(**{k: "not-an-option"})


# --- chapter 7 -----------------------------------------------------------------
def test_allreduce_busbw_is_algbw_times_nccl_factor():
    e = ex("ch07_allreduce.allreduce")
    for coll, factor in [("allreduce", 2 * 7 / 8), ("allgather", 7 / 8),
                         ("broadcast", 1.0)]:
        d = e.update(collective=coll, algorithm="ring", n_bytes=2.0**28,
                     system="8x A100, NVSwitch (one DGX A100)")
        p = d["prediction"]
        algbw = 2.0**28 / p.time_s
        assert p.busbw_bytes_per_s == pytest.approx(algbw * factor)
        assert p.algorithm in ("ring",)


def test_allreduce_busbw_below_link_and_grows_with_size():
    e = ex("ch07_allreduce.allreduce")
    d = e.update(algorithm="ring", system="8x A100, NVSwitch (one DGX A100)")
    busbw = d["busbw_bytes_per_s"]
    assert np.all(np.diff(busbw) > -1e-6 * busbw.max()), "busbw should not fall with size"
    a100_per_dir = 12 * 4 * 50e9 / 8             # 12 links x 4 lanes x 50 Gb/s
    assert busbw.max() < a100_per_dir            # a ring cannot beat the links


def test_allreduce_measured_points_come_from_the_csv():
    path = REPO / "course_lib" / "data" / "calibration_measurements.csv"
    rows = [r for r in csv.DictReader(path.open(encoding="utf-8"))
            if r["collective"] == "AllReduce" and r["system"].startswith("A100-SXM")]
    e = ex("ch07_allreduce.allreduce")
    d = e.update(system="8x A100, NVSwitch (one DGX A100)")
    assert sorted(d["measured_bytes"]) == sorted(float(r["bytes"]) for r in rows)
    assert max(d["measured_busbw_bytes_per_s"]) == pytest.approx(
        max(float(r["busbw_GBps"]) for r in rows) * 1e9)
    assert len(e.update(system="8x H100 on PCIe Gen5 only")["measured_bytes"]) == 0
    assert len(e.update(collective="allgather")["measured_bytes"]) == 0


def test_allreduce_more_nics_is_faster_across_nodes():
    e = ex("ch07_allreduce.allreduce")
    eight = e.update(system="16 nodes x 8 H100, 8 NDR NICs a node")["prediction"]
    one = e.update(system="16 nodes x 8 H100, 1 NDR NIC a node")["prediction"]
    assert one.time_s > eight.time_s and eight.n_ranks == one.n_ranks == 128


def test_allreduce_bad_size_raises_a_refused_algorithm_says_why():
    e = ex("ch07_allreduce.allreduce")
    with pytest.raises(ValueError):
        e.update(n_bytes=2.0**40)
    # NVLS needs an H100-class NVSwitch: no error, the readout says so and what runs
    d = e.update(algorithm="nvls", system="8x A100, NVSwitch (one DGX A100)")
    assert d["prediction"] is None and "NVLink SHARP" in d["refused"]
    assert "nvls" not in d["runs_with"] and "ring" in d["runs_with"]
    assert "nvls does not run allreduce" in e.readout(d)


def test_tree_for_another_collective_says_why_and_follows_the_other_controls():
    """Tree is AllReduce-only (in NCCL and the model): the readout says so and names
    the algorithms that run, read from predict for the machine on screen; moving
    the system or the size redraws it (the widget shows no stale error)."""
    e = ex("ch07_allreduce.allreduce")
    h100 = e.update(collective="allgather", algorithm="tree")
    text = e.readout(h100)
    assert "tree does not run allgather" in text and "'allreduce'" in text
    assert "Pick <b>ring or nvls</b>" in text                  # H100's NVSwitch has NVLS
    for a in h100["runs_with"]:                                # each one really runs
        cl.predict_collective("allgather", h100["n_bytes"], h100["cluster"], a)
    a100 = e.update(collective="allgather", algorithm="tree",
                    system="8x A100, NVSwitch (one DGX A100)")
    assert "Pick <b>ring</b>" in e.readout(a100) and "A100" in e.readout(a100)
    # on screen: the readout, the figure and the drawing follow the system
    shots = [e.png(collective="allgather", algorithm="tree", system=s)
             for s in ("8x H100, NVSwitch (one HGX/DGX H100)",
                       "8x A100, NVSwitch (one DGX A100)")]
    assert shots[0][1] != shots[1][1]
    assert 'data-phase="after"' in e.svg(a100)                 # what AllGather does
    # back to AllReduce: the tree runs again and is drawn
    back = e.update(collective="allreduce", algorithm="tree")
    assert back["refused"] is None and back["prediction"].algorithm == "tree"


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_ring_steps_invariants(n):
    e = ex("ch07_allreduce.ring_steps")
    start = e.update(n_ranks=n, step=0)["contributions"]
    assert np.all(start == 1)
    mid = e.update(n_ranks=n, step=n - 1)["contributions"]
    for r in range(n):     # after ReduceScatter rank r owns the full chunk (r+1) mod n
        assert mid[r, (r + 1) % n] == n
    end = e.update(n_ranks=n, step=14)
    assert end["step"] == 2 * (n - 1) and np.all(end["contributions"] == n)
    step1 = e.update(n_ranks=n, step=1)
    assert len(step1["sends"]) == n
    assert {(m["src"], m["dst"]) for m in step1["sends"]} == {(r, (r + 1) % n) for r in range(n)}


def test_ring_steps_bad_values():
    e = ex("ch07_allreduce.ring_steps")
    with pytest.raises(ValueError):
        e.update(n_ranks=1)
    with pytest.raises(ValueError):
        e.update(step=-1)


def _svg_sends(svg):
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    return [e for e in root.iter() if "ic-send" in (e.get("class") or "").split()]


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ring_steps_diagram_draws_the_same_step(n):
    e = ex("ch07_allreduce.ring_steps")
    for k in (0, 1, n - 1, 2 * (n - 1)):
        data = e.update(n_ranks=n, step=k)
        sends = _svg_sends(e.svg(data))
        assert len(sends) == len(data["sends"]) == (n if k else 0)
        assert {(int(s.get("data-src")), int(s.get("data-chunk"))) for s in sends} == {
            (m["src"], m["chunk"]) for m in data["sends"]}
        assert f"step {k} / {2 * (n - 1)}" in e.svg(data)


def test_ring_steps_play_button_stops_at_the_last_step():
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import ipywidgets as w

    e = ex("ch07_allreduce.ring_steps")
    box = e.show()
    widgets, stack = [], [box]
    while stack:
        x = stack.pop()
        widgets.append(x)
        stack.extend(getattr(x, "children", ()))
    play = next(x for x in widgets if isinstance(x, w.Play))
    # found by description: a slider may be an IntSlider or a SelectionSlider
    n_slider = next(x for x in widgets if getattr(x, "description", "") == "GPUs on the ring")
    step = next(x for x in widgets
                if getattr(x, "description", "") == "after step (0 = start)")
    drawing = next(x for x in widgets if "ic-drawing" in x._dom_classes)
    frames = drawing.children[0]            # a Stack: every step's drawing, drawn ahead
    assert isinstance(frames, w.Stack)
    assert "ic-play" in play._dom_classes
    for n in (2, 5, 8, 4):
        n_slider.value = n
        assert play.max == step.max == 2 * (n - 1)
        assert len(frames.children) == 2 * (n - 1) + 1
    for k, frame in enumerate(frames.children):
        assert f"step {k} / 6" in frame.value, k
    assert 'class="ic-send"' in frames.children[6].value


def test_ring_steps_play_starts_again_at_step_0_when_the_gpu_count_changes():
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import ipywidgets as w

    box = ex("ch07_allreduce.ring_steps").show()
    widgets, stack = [], [box]
    while stack:
        x = stack.pop()
        widgets.append(x)
        stack.extend(getattr(x, "children", ()))
    play = next(x for x in widgets if isinstance(x, w.Play))
    n_slider = next(x for x in widgets if getattr(x, "description", "") == "GPUs on the ring")
    step = next(x for x in widgets if getattr(x, "description", "") == "after step (0 = start)")
    stacks = [x for x in widgets if isinstance(x, w.Stack)]
    play.value = step.value = 6
    n_slider.value = 8
    assert play.value == step.value == 0
    assert all(s.selected_index == 0 for s in stacks)


@pytest.mark.parametrize("system, algorithm, expect", [
    ("8x H100, NVSwitch (one HGX/DGX H100)", "nvls", "NVSwitch"),
    ("8x H100, NVSwitch (one HGX/DGX H100)", "ring", "Ring AllReduce of 8 GPUs"),
    ("16 nodes x 8 H100, 8 NDR NICs a node", "tree", "Double binary tree over 16"),
    ("16 nodes x 8 H100, 8 NDR NICs a node", "hierarchical", "Two-level AllReduce"),
])
def test_allreduce_explorer_draws_the_algorithm_it_predicts(system, algorithm, expect):
    e = ex("ch07_allreduce.allreduce")
    data = e.update(system=system, algorithm=algorithm)
    assert data["prediction"].algorithm == algorithm
    assert expect in e.svg(data)


def test_allreduce_explorer_draws_the_ring_on_the_machines_road():
    e = ex("ch07_allreduce.allreduce")
    pcie = e.svg(e.update(system="8x H100 on PCIe Gen5 only", algorithm="ring"))
    assert 'data-kind="pcie"' in pcie and 'data-kind="nvlink"' not in pcie


# --- chapter 8 -----------------------------------------------------------------
def test_overlap_one_bucket_no_overlap_is_the_sum():
    d = ex("ch08_overlap.overlap").update(n_buckets=1, overlap=False, t_backward_s=0.5)
    assert d["iteration_s"] == pytest.approx(0.5 + d["t_comm_bucketed_s"])
    assert d["iteration_s"] == pytest.approx(d["sum_s"])


@pytest.mark.parametrize("k", [2, 8, 32])
def test_overlap_bounds(k):
    d = ex("ch08_overlap.overlap").update(n_buckets=k, overlap=True, t_backward_s=0.2,
                                          system="8x H100, PCIe Gen5 only")
    per_bucket = d["t_comm_bucketed_s"] / k
    # the last bucket can only start when the backward pass ends
    assert d["iteration_s"] >= 0.2 + per_bucket - 1e-12
    assert d["iteration_s"] >= max(0.2, d["t_comm_bucketed_s"]) - 1e-12
    assert d["iteration_s"] <= 0.2 + d["t_comm_bucketed_s"] + 1e-12


def test_more_buckets_pay_more_start_ups():
    e = ex("ch08_overlap.overlap")
    few = e.update(n_buckets=2, n_params=1e8)
    many = e.update(n_buckets=64, n_params=1e8)
    assert many["t_comm_bucketed_s"] > few["t_comm_bucketed_s"]


def test_stragglers_without_noise_one_slow_gpu_sets_the_pace():
    d = ex("ch08_overlap.stragglers").update(jitter=0.0, slow_gpus=1, slowdown=0.5,
                                             step_s=0.1, n_phases=12)
    assert d["every_s"] == pytest.approx(0.15) and d["once_s"] == pytest.approx(0.15)
    assert d["wait_every_s"][1] == pytest.approx(0.05) and d["wait_every_s"][0] == pytest.approx(0)


def test_stragglers_barriers_never_help():
    e = ex("ch08_overlap.stragglers")
    for phases in (1, 6, 48):
        d = e.update(n_phases=phases, jitter=0.3)
        assert d["every_s"] >= d["once_s"] - 1e-15
        assert d["once_s"] == pytest.approx(d["busy_s"].max())
    one = e.update(n_phases=1, jitter=0.3)
    assert one["every_s"] == pytest.approx(one["once_s"])


# --- chapter 9 -----------------------------------------------------------------
def test_scaling_seeds_rule_recomputed():
    d = ex("ch09_scaling.scaling").update(regime="strong", t_compute_s=0.8, n_params=7e9,
                                          overlap=0.0)
    grad = 7e9 * 2
    i8 = d["n_gpus"].index(8)
    # the rule's B is a ring's wire bandwidth on one node, not NVLS's busbw (issue 20)
    ring8 = cl.predict_collective("allreduce", grad, cl.cluster("H100"), algorithm="ring")
    assert d["t_ring_node_s"] == pytest.approx(ring8.time_s)
    assert d["t_ring_node_s"] > d["t_comm_s"][i8]           # the predictor picks NVLS there
    busbw8 = 2 * 7 / 8 * grad / d["t_ring_node_s"]          # nccl-tests' busbw, ring, N = 8
    r = 2 * grad / busbw8 / 0.8                             # T_comm = 2S/B over T_comp
    for n, s in zip(d["n_gpus"], d["seeds_speedup"]):
        assert s == pytest.approx(n / (1 + (n - 1) * r), rel=1e-12)
    # strong scaling with a ring's 8-GPU AllReduce: the rule and that model are one formula
    assert 0.8 / (0.8 / 8 + d["t_ring_node_s"]) == pytest.approx(d["seeds_speedup"][i8],
                                                                 rel=1e-12)
    assert d["model_speedup"][i8] >= d["seeds_speedup"][i8]  # NVLS beats the ring a little
    assert d["model_speedup"][0] == pytest.approx(1.0)
    # past the node the road narrows: the model falls below the rule
    assert d["model_speedup"][-1] < d["seeds_speedup"][-1]
    assert d["seeds_m_total_bytes"] == pytest.approx(7e9 * 2 * 1024)
    assert d["sent_per_gpu_bytes"] == pytest.approx(2 * 1023 / 1024 * 7e9 * 2)


def test_scaling_weak_regime_is_nearly_linear_and_not_the_rule():
    e = ex("ch09_scaling.scaling")
    weak = e.update(regime="weak", t_compute_s=0.8, n_params=7e9, overlap=0.0)
    n = np.array(weak["n_gpus"])
    steps = [0.8 + t for t in weak["t_comm_s"]]
    assert np.allclose(weak["model_speedup"], n * 0.8 / np.array(steps), rtol=1e-12)
    assert weak["model_speedup"][-1] > 0.8 * 1024          # throughput ~ N
    assert weak["model_speedup"][-1] > 50 * weak["seeds_speedup"][-1]
    strong = e.update(regime="strong")
    assert np.all(strong["model_speedup"][1:] < weak["model_speedup"][1:])
    with pytest.raises(ValueError, match="regime"):
        e.update(regime="gustafson")


def test_scaling_full_overlap_is_linear_when_comm_fits():
    d = ex("ch09_scaling.scaling").update(regime="weak", t_compute_s=10.0, n_params=1e8,
                                          overlap=1.0)
    assert np.allclose(d["model_speedup"], d["n_gpus"])
    eff = ex("ch09_scaling.scaling").update(view="efficiency")
    assert np.allclose(eff["efficiency_model"], eff["model_speedup"] / np.array(eff["n_gpus"]))


def test_scaling_overlap_hides_behind_the_backward_pass_only():
    """Issue 20: one overlap model, ch08's T_fwd + max(T_bwd, T_comm), not max(T_comp, T_comm)."""
    d = ex("ch09_scaling.scaling").update(regime="weak", t_compute_s=0.8, n_params=7e9,
                                          nics_per_node=1, overlap=1.0)
    n = np.array(d["n_gpus"])
    steps = [0.8 / 3 + max(0.8 * 2 / 3, t) for t in d["t_comm_s"]]
    assert np.allclose(d["model_speedup"], n * 0.8 / np.array(steps), rtol=1e-12)
    seeds_max = [max(0.8, t) for t in d["t_comm_s"]]
    bound = n * 0.8 / np.array(seeds_max)
    assert np.all(d["model_speedup"] <= bound * (1 + 1e-12))
    assert d["t_comm_s"][-1] > 0.8 * 2 / 3 and d["model_speedup"][-1] < bound[-1]


def test_scaling_fewer_nics_hurt_only_across_nodes():
    e = ex("ch09_scaling.scaling")
    eight = e.update(nics_per_node=8)["t_comm_s"]
    one = e.update(nics_per_node=1)["t_comm_s"]
    assert np.allclose(eight[:4], one[:4])             # N <= 8: inside the node
    assert np.all(one[4:] > eight[4:])


@pytest.mark.parametrize("p,n", [(0.99, 1000), (0.95, 64), (0.5, 1)])
def test_amdahl(p, n):
    d = ex("ch09_scaling.amdahl").update(parallel_fraction=p, n_gpus=n)
    assert d["speedup"] == pytest.approx(1 / ((1 - p) + p / n))
    assert d["limit"] == pytest.approx(1 / (1 - p))
    assert np.all(d["curve"] <= d["limit"] + 1e-9)


def test_amdahl_bad_values():
    with pytest.raises(ValueError):
        ex("ch09_scaling.amdahl").update(parallel_fraction=1.2)
    with pytest.raises(ValueError):
        ex("ch09_scaling.amdahl").update(n_gpus=0)


def test_growth_matches_lane_arithmetic():
    # links x lanes per direction x lane rate (Gb/s) / 8, per generation
    spec = {1: 4 * 8 * 20, 2: 6 * 8 * 25, 3: 12 * 4 * 50, 4: 18 * 2 * 100, 5: 18 * 2 * 200}
    d = ex("ch09_scaling.growth").update(base_generation=1, growth_per_generation=1.0)
    assert np.allclose(d["actual"], [spec[g] * 1e9 / 8 for g in d["generations"]])
    assert d["model"][-1] == pytest.approx(spec[1] * 1e9 / 8 * 2**4)
    assert d["fitted_g"] == pytest.approx((spec[5] / spec[1]) ** 0.25 - 1)


# --- chapter 10 ----------------------------------------------------------------
SCENARIOS = ["tp_inference_70b", "roce_training_1024", "edge_cloud_inference",
             "dgx_h100_175b", "tp_token_latency", "hpc_halo_exchange"]


@pytest.mark.parametrize("key", SCENARIOS)
def test_scenario_gain_is_ratio_of_step_times(key):
    r = ex("ch10_scenarios").update(scenario=key)["result"]
    for side in ("baseline", "improved"):
        s = r[side]
        assert s["total_s"] == pytest.approx(s["compute_s"] + s["comm_s"])
    assert r["model_gain"] == pytest.approx(r["baseline"]["total_s"] / r["improved"]["total_s"])
    assert r["plausible"] and r["depends_on"] and r["uncheckable"]


def test_tp_token_latency_recomputed_by_hand():
    r = ex("ch10_scenarios").update(scenario="tp_token_latency", load=1.0,
                                    efficiency=0.5)["result"]
    msg = 2048 * 8192 * 2
    nv = 12 * 4 * 50e9 / 8                      # A100 NVLink 3 per direction
    pcie = 16 * 16e9 * 128 / 130 / 8            # PCIe Gen4 x16 per direction

    def comm(b, alpha):
        return 160 * (2 * 7 / 8 * msg / b + 14 * alpha)

    assert r["improved"]["comm_s"] == pytest.approx(comm(nv, 0.6e-6))
    assert r["baseline"]["comm_s"] == pytest.approx(comm(pcie, 1.0e-6))
    # weights 2 P L plus attention 2 n_layer L^2 d (Kaplan et al. 2020), over 8 GPUs
    flops = 2 * 70e9 * 2048 + 2 * 80 * 2048 ** 2 * 8192
    assert r["improved"]["compute_s"] == pytest.approx(flops / (8 * 312e12 * 0.5))
    assert 0.05 < r["exchange_ratio"] < 0.15    # "a tenth", as the seed says


def test_scenario_load_scales_the_workload():
    e = ex("ch10_scenarios")
    small = e.update(scenario="hpc_halo_exchange", load=0.1)["result"]
    big = e.update(scenario="hpc_halo_exchange", load=10.0)["result"]
    assert big["model_gain"] < small["model_gain"]      # big domains are compute-bound


def test_scenario_bad_values():
    e = ex("ch10_scenarios")
    with pytest.raises(ValueError):
        e.update(load=0.0)
    with pytest.raises(ValueError):
        e.update(efficiency=1.5)


# --- chapter 11 ----------------------------------------------------------------
def test_myth_checker_covers_all_eight():
    e = ex("ch11_myths")
    options = [o[1] for o in e.controls["myth"]["options"]]
    assert len(options) == 8
    for key in options:
        d = e.update(myth=key)
        assert d["myth"].key == key
        assert d["myth"].claim in e.readout(d)
        assert math.isfinite(sum(v for _, v in d["evidence"]["bars"]))


def test_overlap_diagram_shows_the_explorers_schedule():
    import xml.etree.ElementTree as ET

    e = ex("ch08_overlap.overlap")
    for kw in ({"n_buckets": 3}, {"n_buckets": 12, "overlap": False},
               {"system": "4 nodes x 8 H100, 1 NDR NIC a node"}):
        data = e.update(**kw)
        root = ET.fromstring(e.svg(data))
        comm = [g for g in root.iter() if g.get("class") == "ic-comm"]
        assert len(comm) == data["schedule"]["n_buckets"]
        assert "backward + AllReduce = " in e.svg(data) and data["algorithm"] in e.svg(data)


def test_scaling_diagram_draws_the_explorers_network():
    import course_lib as cl

    e = ex("ch09_scaling.scaling")
    for nics in (1, 8):
        data = e.update(nics_per_node=nics, nic="NDR")
        svg = e.svg(data)
        clu = cl.cluster("H100", nodes=2, nic="NDR", nics_per_node=nics)
        assert cl.format_bandwidth(clu.inter_bw_bytes_per_s() / 8) in svg
        assert "Step 2 of 3" in svg and 'class="ic-send"' in svg


def test_myth_checker_draws_each_myth():
    import course_lib as cl

    e = ex("ch11_myths")
    svgs = {k: e.svg(e.update(myth=k)) for k in cl.content.myth_keys()}
    ev = cl.content.myth("barriers").evidence()
    assert f"step = {cl.format_time(ev['every_phase_s'])}" in svgs["barriers"]
    assert f"step = {cl.format_time(ev['one_barrier_s'])}" in svgs["barriers"]
    assert "Two-level AllReduce" in svgs["no_domain_limit"] or "node 1" in svgs["no_domain_limit"]
    # "use NVLink for everything": the three roads of the evidence, each its own route
    assert 'data-route="h2d p2p-nvlink rdma"' in svgs["nvlink_everywhere"]
    assert "one-way tracks" in svgs["nvlink_is_pcie"]
    assert "staging buffer" in svgs["dma_cpu_idle"] and "CPU" in svgs["dma_cpu_idle"]
    assert svgs["hardware_is_enough"].count('class="ic-comm"') == 16   # without, with overlap
    assert len(set(svgs.values())) >= 6, "most myths get their own drawing"
    assert all(s.startswith("<svg") for s in svgs.values())


@pytest.mark.parametrize("key", ["tp_inference_70b", "roce_training_1024",
                                 "edge_cloud_inference", "dgx_h100_175b",
                                 "tp_token_latency", "hpc_halo_exchange"])
def test_scenario_diagram_is_the_scenarios_machine_with_both_routes(key):
    import xml.etree.ElementTree as ET

    import course_lib as cl
    from course_lib.explorers import ch10_scenarios

    e = ex("ch10_scenarios")
    data = e.update(scenario=key)
    svg = e.svg(data)
    root = ET.fromstring(svg)
    legs = [g for g in root.iter() if "ic-route-leg" in (g.get("class") or "").split()]
    assert legs, "no route drawn"
    params = cl.scenarios.scenario(key)["params"]
    clu, kw = ch10_scenarios.MACHINES[key](params)
    # the machine is built from the scenario's own parameters
    if "gpu" in params:
        assert clu.gpu == params["gpu"] and params["gpu"] in svg
    if "nic" in params:
        assert clu.nic == params["nic"]
    assert len(kw["route"]) == 2
    with pytest.raises(ValueError, match="scenario"):
        ch10_scenarios.machine("no_such_scenario")


def test_allreduce_explorer_draws_what_other_collectives_do_not_a_ring():
    from course_lib.explorers import ch07_allreduce as m
    e = ex("ch07_allreduce.allreduce")
    for coll in ("allgather", "alltoall", "broadcast"):
        d = e.update(collective=coll, system="8x A100, NVSwitch (one DGX A100)")
        svg = m.diagram(d).svg
        assert 'class="ic-effect-arrow"' in svg and 'data-phase="after"' in svg, coll
        assert "Ring AllReduce" not in svg


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_readout_has_no_scientific_notation(name):
    """Every explorer's readout, at its defaults and with its first dropdown's
    other options, reads in units (27.4 µs, 2.78 MB), never 2.74e-05."""
    e = ex(name)
    data = e.update()
    texts = [e.readout(data)]
    for key, spec in e.controls.items():
        if spec["type"] in ("Dropdown", "ToggleButtons"):
            for option in list(spec["options"])[1:3]:
                value = option[1] if isinstance(option, (tuple, list)) else option
                texts.append(e.readout(e.update(**{key: value})))
            break
    for text in texts:
        assert not re.search(r"\d[eE][+-]?\d", text), text
