"""Headless tests of the explorers of chapters 1-6 (and the models they call).

Each explorer is driven through ``Explorer.update(**values)``; the data it
would plot is checked against the formulas derived independently here (from
the definitions, with the catalog's inputs: lane counts, transfer rates,
latencies), not against the library's own output.  Bad control values must
raise; every explorer renders once to a PNG.
"""

import math

import numpy as np
import pytest

import course_lib as cl
from course_lib import explorers

C = 299_792_458.0
CH01_06 = ["ch01_transport_map", "ch01_utilisation", "ch02_nvlink_generations",
           "ch03_crossover", "ch04_batching", "ch05_rdma", "ch06_topology"]


def pcie_per_dir(gen):
    """PCIe x16 per direction from the spec: 16 lanes x GT/s x encoding / 8."""
    rate = {3: 8e9, 4: 16e9, 5: 32e9, 6: 64e9}[gen]
    eff = 242 / 256 if gen == 6 else 128 / 130
    return 16 * rate * eff / 8


def ex(name):
    return getattr(explorers, name).explorer()


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


# --- registry ----------------------------------------------------------------
def test_registry_finds_every_chapter_1_6_explorer():
    names = [n for n, _ in explorers.iter_explorers()]
    for name in CH01_06:
        assert name in names


def test_lazy_attribute_access():
    assert cl.explorers.ch03_crossover.explorer().title
    with pytest.raises(AttributeError):
        cl.explorers.ch99_nothing  # noqa: B018


@pytest.mark.parametrize("name", CH01_06)
def test_renders_png_and_readout(name):
    e = ex(name)
    data, png = e.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    text = e.readout(data)
    assert isinstance(text, str) and len(text) > 20


@pytest.mark.parametrize("name", CH01_06)
def test_bad_values_raise(name):
    e = ex(name)
    spec_name, spec = next(iter(e.controls.items()))
    bad = "no-such-option" if spec["type"] in ("Dropdown", "ToggleButtons") else 1e30
    with pytest.raises((ValueError, TypeError)):
        e.update(**{spec_name: bad})
    with pytest.raises(ValueError):
        e.update(no_such_control=1)


# --- chapter 1 ----------------------------------------------------------------
def test_transport_map_h2d_matches_alpha_beta():
    d = ex("ch01_transport_map").update(route="h2d", n_bytes=1e6, gpu="H100")
    expected = cl.LATENCIES["pcie_small_copy"].value + 1e6 / pcie_per_dir(5)
    assert close(d["time_s"], expected)
    assert close(d["effective_bw_bytes_per_s"], 1e6 / expected)


def test_transport_map_staged_route_pays_two_legs():
    d = ex("ch01_transport_map").update(route="p2p-staged", n_bytes=1e8, gpu="A100")
    expected = cl.LATENCIES["pcie_staged_p2p"].value + 2 * 1e8 / pcie_per_dir(4)
    assert close(d["time_s"], expected)


def test_transport_map_rdma_adds_fibre_one_way():
    d = ex("ch01_transport_map").update(route="rdma", n_bytes=1e9, nic="NDR",
                                        distance_m=1000.0, gpu="H100")
    rtt = 1000 / (0.7 * C)          # one way: every alpha of the map is one way (issue 20)
    # GPU memory to GPU memory in another server: the GPUDirect RDMA start-up
    expected = rtt + cl.LATENCIES["gpudirect_rdma_one_way"].value + 1e9 / (400e9 / 8)
    assert close(d["time_s"], expected)


def test_transport_map_pageable_is_slower_by_catalog_ratio():
    e = ex("ch01_transport_map")
    pinned = e.update(route="h2d", memory="pinned")["params"]["h2d"]["bw_bytes_per_s"]
    pageable = e.update(route="h2d", memory="pageable")["params"]["h2d"]["bw_bytes_per_s"]
    assert close(pageable / pinned, cl.MEASURED["pageable_over_pinned_x86"].value)


def test_transport_map_curves_are_monotone_and_nvlink_fastest_when_large():
    d = ex("ch01_transport_map").update(gpu="H100")
    for times in d["times_s"].values():
        assert np.all(np.diff(times) >= 0)
    last = {r: t[-1] for r, t in d["times_s"].items()}
    assert min(last, key=last.get) == "p2p-nvlink"


def test_utilisation_is_compute_share():
    d = ex("ch01_utilisation").update(t_compute_s=0.1, n_bytes=1e9, gpu="H100")
    t_nv = cl.LATENCIES["nvlink_p2p"].value + 1e9 / (18 * 25e9)
    assert close(d["utilisation"]["p2p-nvlink"], 0.1 / (0.1 + t_nv))
    assert all(0 < u < 1 for u in d["utilisation"].values())


# --- chapter 2 ----------------------------------------------------------------
@pytest.mark.parametrize("gpu,lanes,rate_gbit,links", [
    ("P100", 8, 20, 4), ("V100", 8, 25, 6), ("A100", 4, 50, 12),
    ("H100", 2, 100, 18), ("B200", 2, 200, 18)])
def test_nvlink_generation_totals(gpu, lanes, rate_gbit, links):
    e = ex("ch02_nvlink_generations")
    d = e.update(gpu=gpu, links_used=18)
    assert d["links_used"] == links                       # clipped to the GPU
    assert close(d["selected_bw_bytes_per_s"], lanes * rate_gbit * 1e9 / 8 * links)
    both = e.update(gpu=gpu, links_used=18, both_directions=True)
    assert close(both["selected_bw_bytes_per_s"], 2 * d["selected_bw_bytes_per_s"])


def test_nvlink_h100_is_about_7x_pcie5_not_14x():
    d = ex("ch02_nvlink_generations").update(gpu="H100", links_used=18)
    assert close(d["ratio_to_pcie"], 450e9 / pcie_per_dir(5))
    assert 7.0 < d["ratio_to_pcie"] < 7.2
    one = ex("ch02_nvlink_generations").update(gpu="A100", links_used=1)
    assert one["selected_bw_bytes_per_s"] < pcie_per_dir(4)   # one NVLink3 link < PCIe4 x16


# --- chapter 3 ----------------------------------------------------------------
def test_crossover_one_link_matches_formula():
    d = ex("ch03_crossover").update(gpu="H100", nvlink_links=1)
    a_nv, a_pc = cl.LATENCIES["nvlink_p2p"].value, cl.LATENCIES["pcie_staged_p2p"].value
    b_nv, b_pc_eff = 25e9, pcie_per_dir(5) / 2       # staged: two legs in series
    expected = (a_pc - a_nv) / (1 / b_nv - 1 / b_pc_eff)
    assert close(d["crossover_bytes"], expected)
    # both routes take the same time there
    t_nv = a_nv + expected / b_nv
    t_pc = a_pc + 2 * expected / pcie_per_dir(5)
    assert close(t_nv, t_pc)


def test_crossover_infinite_when_nvlink_wins_everywhere():
    e = ex("ch03_crossover")
    assert math.isinf(e.update(gpu="H100", nvlink_links=18)["crossover_bytes"])
    assert math.isinf(e.update(gpu="A100", nvlink_links=1)["crossover_bytes"])


def test_crossover_clips_links_to_the_gpu_and_model_rejects_them():
    d = ex("ch03_crossover").update(gpu="P100", nvlink_links=18)
    assert d["nvlink_links"] == 4 and "4 NVLink links" in d["note"]
    assert close(d["nvlink"]["bw_bytes_per_s"], 4 * 8 * 20e9 / 8)
    with pytest.raises(ValueError, match="nvlink_links"):
        cl.route_parameters("p2p-nvlink", gpu="P100", nvlink_links=18)


def test_crossover_point_times():
    d = ex("ch03_crossover").update(gpu="H100", nvlink_links=1, n_bytes=1e8)
    assert d["t_pcie_s"] < d["t_nvlink_s"]                # above the crossover PCIe wins
    d = ex("ch03_crossover").update(gpu="H100", nvlink_links=1, n_bytes=1e4)
    assert d["t_nvlink_s"] < d["t_pcie_s"]


# --- chapter 4 ----------------------------------------------------------------
def test_batching_matches_separate_and_merged_formulas():
    d = ex("ch04_batching").update(n_messages=1000, bytes_per_message=4096, memory="pinned",
                                   pcie_gen=5, latency="dma_setup_seed")
    a = cl.LATENCIES["dma_setup_seed"].value
    b = pcie_per_dir(5) * cl.CALIBRATION["pcie_dma_efficiency"].value   # measured DMA rate
    assert close(d["t_separate_s"], 1000 * (a + 4096 / b))
    assert close(d["t_batched_s"], a + 1000 * 4096 / b)
    assert close(d["t_separate_s"] - d["t_batched_s"], 999 * a)
    assert close(d["half_bw_bytes"], a * b)


def test_batching_pageable_uses_catalog_ratio():
    d = ex("ch04_batching").update(memory="pageable", pcie_gen=4)
    assert close(d["bw_bytes_per_s"],
                 pcie_per_dir(4) * cl.CALIBRATION["pcie_dma_efficiency"].value
                 * cl.MEASURED["pageable_over_pinned_x86"].value)


def test_batching_single_message_gains_nothing():
    d = ex("ch04_batching").update(n_messages=1)
    assert close(d["t_separate_s"], d["t_batched_s"])


# --- chapter 5 ----------------------------------------------------------------
def test_rdma_components_add_up():
    d = ex("ch05_rdma").update(distance_m=1000.0, nic="HDR", n_bytes=1e6,
                               endpoint="rdma_small_one_way")
    rtt = 2000 / (0.7 * C)
    serial = 1e6 / (200e9 / 8)
    assert close(d["rtt_s"], rtt)
    assert close(d["fibre_s"], rtt / 2)
    assert close(d["serialisation_s"], serial)
    one_way = rtt / 2 + cl.LATENCIES["rdma_small_one_way"].value
    assert close(d["time_s"], one_way + serial)
    assert close(d["completion_s"], 2 * one_way + serial)
    assert close(d["bw_bytes_per_s"], 25e9)               # 200 Gb/s = 25 GB/s


def test_rdma_kernel_path_costs_more_for_small_messages():
    d = ex("ch05_rdma").update(n_bytes=8)
    small = {k: v[0] for k, v in d["times_s"].items()}
    assert small["tcp_kernel_path"] > 5 * max(small["roce_small_one_way"], small["rdma_small_one_way"])
    # RoCE and InfiniBand start alike (issue 30): within a factor 1.5 of each other
    assert small["roce_small_one_way"] / small["rdma_small_one_way"] == pytest.approx(1, rel=0.5)


# --- chapter 6 ----------------------------------------------------------------
def test_topology_ring_hops_and_average():
    e = ex("ch06_topology")
    d = e.update(kind="ring", n_gpus=8, source=0)
    assert list(d["hops_from_source"]) == [0, 1, 2, 3, 4, 3, 2, 1]
    for n in (4, 6, 10, 12):
        d = e.update(kind="ring", n_gpus=n)
        assert close(d["average_hops"], n * n / (4 * (n - 1)))
        assert d["diameter"] == n // 2 and d["links"] == n


def test_topology_mesh_wiring_and_bisection():
    d = ex("ch06_topology").update(kind="full-mesh", n_gpus=8)
    assert d["links"] == 28 and d["average_hops"] == 1.0
    per_link = cl.gpu("A100").nvlink_per_link_per_dir_bytes_per_s
    assert close(d["bisection_bytes_per_s"], 16 * per_link)     # (N/2)^2 links cut


def test_topology_nvswitch_bisection_and_seed_hops():
    e = ex("ch06_topology")
    d = e.update(kind="nvswitch", n_gpus=12)
    assert close(d["bisection_bytes_per_s"], 6 * 18 * 25e9)
    assert set(d["hops_from_source"][1:]) == {2}
    d = e.update(kind="nvswitch", n_gpus=12, count="gpu-hops")
    assert set(d["hops_from_source"][1:]) == {1}


def test_topology_two_level_crosses_network():
    d = ex("ch06_topology").update(kind="two-level", n_gpus=8, source=0)
    # nodes of 4: GPUs 1-3 through the node's NVSwitch (2 links), 4-7 through NICs (4)
    assert list(d["hops_from_source"]) == [0, 2, 2, 2, 4, 4, 4, 4]
    assert close(d["bisection_bytes_per_s"], 1 * 4 * 50e9)


def test_topology_adjustments_and_errors():
    e = ex("ch06_topology")
    d = e.update(kind="cube-mesh", n_gpus=5)
    assert len(d["ranks"]) == 8 and "8 GPUs" in d["note"]
    d = e.update(kind="ring", n_gpus=4, source=11)
    assert d["source"] == 3 and "GPU 11" in d["note"]
    with pytest.raises(ValueError, match="torus"):
        e.update(kind="torus", n_gpus=7)
    with pytest.raises(ValueError, match="two-level"):
        e.update(kind="two-level", n_gpus=9)


# --- models added for these chapters -----------------------------------------------
def test_staged_pipelined_formula():
    assert close(cl.staged_transfer_time_s(1e9, 1e9, 1e-5, legs=3, chunk_bytes=1e6),
                 1e-5 + (1e9 + 2e6) / 1e9)
    with pytest.raises(ValueError, match="legs"):
        cl.staged_transfer_time_s(1, 1, legs=0)


def test_route_parameters_rejects_bad_input():
    with pytest.raises(ValueError, match="route"):
        cl.route_parameters("teleport")
    with pytest.raises(ValueError, match="memory"):
        cl.route_parameters("h2d", memory="swap")
    with pytest.raises(TypeError, match="route_a"):
        cl.route_crossover_bytes({"latency_s": 1}, cl.route_parameters("h2d"))


def test_ring_bottleneck_placement():
    t = cl.two_level_topology(2, 4)
    assert cl.ring_bottleneck_bw_bytes_per_s(t, [0, 1, 2, 3]) == 450e9
    assert cl.ring_bottleneck_bw_bytes_per_s(t, [0, 4]) == 50e9
    with pytest.raises(ValueError, match="repeat"):
        cl.ring_bottleneck_bw_bytes_per_s(t, [0, 0])


def test_star_bisection_fast_path_agrees_with_enumeration():
    # a star whose spokes differ: the cheapest cut takes the n/2 thinnest spokes
    t = cl.nvswitch_topology(6)
    for r, bw in zip(range(6), [1, 2, 3, 4, 5, 6]):
        t.edges[r, "nvswitch"]["bw_bytes_per_s"] = bw * 1e9
    assert close(cl.bisection_bw_bytes_per_s(t), (1 + 2 + 3) * 1e9)


def test_quiz_bank_every_wrong_option_explained():
    from course_lib.content import chapter_quiz

    for chapter in range(1, 7):
        qs = chapter_quiz(chapter)
        assert len(qs) >= 3
        for q in qs:
            assert set(q.why_wrong) | set(q.answer) == set(range(len(q.options)))
            ok, _ = cl.quiz.check(q, q.answer)
            assert ok
    with pytest.raises(ValueError):
        chapter_quiz(0)


# --- the drawing beside each plot (course_lib.draw): it follows the controls ----------
def _svg_tree(e, **values):
    import xml.etree.ElementTree as ET

    return ET.fromstring(e.svg(e.update(**values)))


def _classes(root, cls):
    return [el for el in root.iter() if cls in (el.get("class") or "").split()]


def _text(root):
    return " ".join("".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}text"))


@pytest.mark.parametrize("name", CH01_06)
def test_every_explorer_draws_a_diagram(name):
    e = ex(name)
    assert e.diagram is not None
    root = _svg_tree(e)
    assert root.tag.endswith("svg") and float(root.get("width")) <= 900
    assert "ic-diagram" in e._diagram_html(e.update())


@pytest.mark.parametrize("route", [r for _, r in explorers.ch01_transport_map.ROUTE_LABELS])
def test_ch01_map_draws_the_chosen_route(route):
    root = _svg_tree(ex("ch01_transport_map"), route=route)
    assert _classes(root, "ic-route")[0].get("data-route") == route
    p = cl.route_parameters(route, gpu="H100", nic="NDR")
    assert cl.format_bandwidth(p["bw_bytes_per_s"]) in _text(root)


def test_ch01_utilisation_draws_the_slowest_route():
    e = ex("ch01_utilisation")
    data = e.update(n_bytes=1e9)
    assert data["slowest_route"] == min(data["utilisation"], key=data["utilisation"].get)
    root = _svg_tree(e, n_bytes=1e9)
    assert _classes(root, "ic-route")[0].get("data-route") == data["slowest_route"]


def test_ch02_drawing_carries_the_links_used():
    root = _svg_tree(ex("ch02_nvlink_generations"), gpu="A100", links_used=5)
    assert "NVLink ×5" in _text(root) and f"{cl.format_bandwidth(5 * 25e9)} per direction" \
        in _text(root)
    assert "8 × A100" in _text(root)


def test_ch03_drawing_shows_three_routes_for_the_chosen_gpu():
    root = _svg_tree(ex("ch03_crossover"), gpu="A100", nvlink_links=3)
    assert _classes(root, "ic-route")[0].get("data-route") == "p2p-nvlink p2p-pcie p2p-staged"
    assert len(_classes(root, "ic-route-leg")) == 4          # 1 + 1 + 2 legs
    assert "NVLink ×3" in _text(root) and "A100" in _text(root)
    p100 = _svg_tree(ex("ch03_crossover"), gpu="P100", nvlink_links=4)
    assert "NVLink ×4" in _text(p100)


def test_ch04_drawing_follows_the_memory_kind():
    e = ex("ch04_batching")
    pinned, pageable = _svg_tree(e, memory="pinned"), _svg_tree(e, memory="pageable")
    assert not _classes(pinned, "ic-staging") and _classes(pageable, "ic-staging")
    for memory in ("pinned", "pageable"):
        data = e.update(memory=memory, pcie_gen=4)
        # the drawing's one copy is the readout's: its time is N copies' time / N
        one = cl.format_time(data["t_separate_s"] / data["n_messages"])
        assert one in _text(_svg_tree(e, memory=memory, pcie_gen=4)), memory


@pytest.mark.parametrize("endpoint,legs", [("tcp_kernel_path", 5), ("rdma_small_one_way", 3),
                                           ("gpudirect_rdma_one_way", 3)])
def test_ch05_drawing_follows_the_end_points(endpoint, legs):
    e = ex("ch05_rdma")
    root = _svg_tree(e, endpoint=endpoint, distance_m=1000, n_bytes=1e6)
    assert len(_classes(root, "ic-route-leg")) == legs
    t = e.update(endpoint=endpoint, distance_m=1000, n_bytes=1e6)["time_s"]
    assert cl.format_time(t) in _text(root)


@pytest.mark.parametrize("kind", ["ring", "full-mesh", "torus", "cube-mesh", "nvswitch",
                                  "two-level"])
def test_ch06_drawing_shows_the_topology_route_and_cut(kind):
    e = ex("ch06_topology")
    data = e.update(kind=kind, n_gpus=8, source=1)
    root = _svg_tree(e, kind=kind, n_gpus=8, source=1)
    assert len(_classes(root, "ic-gpu")) == len(data["ranks"])
    path = _classes(root, "ic-hop-path")[0]
    assert int(path.get("data-hops")) == cl.hops(data["topo"], 1, data["target"])
    assert int(path.get("data-hops")) == int(data["hops_from_source"].max())
    assert cl.format_bandwidth(data["bisection_bytes_per_s"]) in _text(root)


@pytest.mark.parametrize("name", ["ch01_transport_map", "ch03_crossover", "ch05_rdma"])
def test_size_curves_span_the_size_sliders_range(name):
    """The marked point never sits past the end of its curve."""
    import importlib

    mod = importlib.import_module(f"course_lib.explorers.{name}")
    spec = mod.CONTROLS["n_bytes"]
    lo, hi = spec["base"] ** spec["min"], spec["base"] ** spec["max"]
    assert mod.SIZES_BYTES.min() <= lo * (1 + 1e-9) and mod.SIZES_BYTES.max() >= hi * (1 - 1e-9)
