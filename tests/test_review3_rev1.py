"""Review pass 3, chapters 0-3: the numbers the text, the readouts and the
drawings state are the ones the models compute."""

import re

import pytest

import course_lib as cl
from course_lib.explorers import ch01_transport_map, ch01_utilisation


@pytest.fixture(scope="module")
def ch01(notebook_text):
    return notebook_text("01_city_at_night", "markdown")


def _numbers(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", text)]


def _diagram_texts(diagram) -> str:
    return " ".join(re.sub("<[^>]+>", "", t) for t in
                    re.findall(r"<text[^>]*>(.*?)</text>", diagram.svg, re.S))


# --- chapter 1: the transport map's pageable copies --------------------------------
@pytest.mark.parametrize("route", ["h2d", "d2h"])
@pytest.mark.parametrize("n_bytes", [2.0 ** 10, 2.0 ** 20, 2.0 ** 30])
def test_pageable_readout_states_the_terms_of_the_time_it_prints(route, n_bytes):
    """The readout once said 'start-up + size / 18.9 GB/s' (one catalog ratio) beside a
    time computed with the measured, size-dependent staging: 158 ms for 1 GiB, where
    its own formula gives 56.8 ms.  Its terms must add up to the time it prints."""
    d = ch01_transport_map.compute(route, n_bytes, "H100", "NDR", 10.0, "pageable")
    model = cl.route_transfer_time_s(n_bytes, route, gpu="H100", memory="pageable")
    assert d["time_s"] == pytest.approx(model)
    p = d["params"][route]
    terms = (p["latency_s"] + n_bytes / d["pinned_bw_bytes_per_s"] + d["pageable_extra_s"])
    assert terms == pytest.approx(model, rel=1e-9)
    text = ch01_transport_map.readout(d)
    assert cl.format_time(model) in text
    assert cl.format_bandwidth(d["pinned_bw_bytes_per_s"]) in text
    if d["pageable_extra_s"] > 0:
        assert cl.format_time(d["pageable_extra_s"]) in text
    else:
        assert "no slower than pinned" in text
    # the one-ratio bandwidth no longer appears as the divisor of the size
    assert f"size / {cl.format_bandwidth(p['bw_bytes_per_s'])}" not in text


def test_pageable_drawing_caption_gives_the_model_time():
    """The map's caption for a pageable copy gave T = 2.7 us + D / 18.9 GB/s = 56.8 ms at
    1 GiB while the curve beside it said 158 ms."""
    for route, n in (("h2d", 2.0 ** 30), ("d2h", 2.0 ** 20)):
        d = ch01_transport_map.compute(route, n, "H100", "NDR", 10.0, "pageable")
        caption = _diagram_texts(ch01_transport_map.diagram(d))
        model = cl.route_transfer_time_s(n, route, gpu="H100", memory="pageable")
        assert f"= {cl.format_time(model)}" in caption
        one_ratio = cl.route_parameters(route, gpu="H100", memory="pageable")
        wrong = cl.transfer_time_s(n, one_ratio["bw_bytes_per_s"], one_ratio["latency_s"])
        assert abs(wrong / model - 1) > 0.2          # the two models really differ here
        assert f"= {cl.format_time(wrong)}" not in caption
    # pinned copies keep the plain alpha + D / B caption
    d = ch01_transport_map.compute("h2d", 2.0 ** 20, "H100", "NDR", 10.0, "pinned")
    caption = _diagram_texts(ch01_transport_map.diagram(d))
    assert f"= {cl.format_time(cl.route_transfer_time_s(2 ** 20, 'h2d'))}" in caption


# --- chapter 1: exercise 1 asks for what the slider reaches ------------------------
def test_exercise_one_uses_the_sliders_gib_and_its_numbers(ch01):
    """The exercise said 1 GB; the size slider moves in powers of two (1 GiB)."""
    sizes = ch01_utilisation.CONTROLS["n_bytes"]
    assert sizes["value"] == 2.0 ** 30 and sizes["base"] == 2
    exercise = ch01.split("## Exercises")[1]
    first = exercise.split("\n2. ")[0]
    assert "1 GiB of freight" in first and "1 GB of freight" not in first
    answer = exercise.split("<summary>")[1].split("\n2. ")[0]
    assert "route_transfer_time_s(2**30" in answer
    t = cl.route_transfer_time_s(2 ** 30, "p2p-staged", gpu="H100")
    ms = float(re.search(r"≈ ([\d.]+) ms", answer).group(1))
    assert ms == pytest.approx(t * 1e3, abs=0.05)
    t_comp = float(re.search(r"T_\{comp\}\$ ≈ ([\d.]+) s", answer).group(1))
    assert t_comp == pytest.approx(9 * t, abs=0.005)
    # the first slider step at or above 9 T_comm, and what the bars show either side
    steps = ch01_utilisation.CONTROLS["t_compute_s"]["values"]
    step = min(s for s in steps if s >= 9 * t)
    below = max(s for s in steps if s < 9 * t)
    u = {s: ch01_utilisation.compute(s, 2.0 ** 30, "H100")["utilisation"]["p2p-staged"]
         for s in (step, below)}
    assert u[step] >= 0.9 > u[below]
    assert f"{step:g} s ({u[step]:.0%}".replace("%", " %") in answer
    assert f"at {below:g} s it shows {u[below]:.0%}".replace("%", " %") in answer


def test_transport_map_try_asks_for_sizes_the_slider_reaches(ch01):
    spec = ch01_transport_map.CONTROLS["n_bytes"]
    reachable = {spec["base"] ** k for k in range(spec["min"], spec["max"] + 1)}
    tries = ch01.split("Try: (1)")[1].split("Takeaway")[0]
    assert "1 KiB message" in tries and "(2) 1 GiB" in tries
    assert 2 ** 10 in reachable and 2 ** 30 in reachable
    assert "1 kB message" not in tries and "(2) 1 GB " not in tries


def test_seed_figures_are_attributed_to_the_right_article(ch01):
    """The 0.8 s step is seed 003's demo program; "60 % to over 90 %" is seed 000's
    claim: chapter 1 called the 0.8 s "the seed's own" step of the article making the claim."""
    assert "With the seed's own 0.8 s step" not in ch01
    assert "other source article's demo" in ch01
    assert "A step of the demo program in the NVLink article" in " ".join(ch01.split())
    assert "The heterogeneous-communication article states this as a fact" in " ".join(ch01.split())
    for step, (staged, nvlink) in {0.8: (0.64, 0.96)}.items():
        grad = cl.gradient_bytes(7e9, bytes_per_element=2)
        u_s = cl.effective_utilisation(step, cl.route_transfer_time_s(grad, "p2p-staged"))
        u_n = cl.effective_utilisation(step, cl.route_transfer_time_s(grad, "p2p-nvlink"))
        assert u_s == pytest.approx(staged, abs=0.005) and u_n == pytest.approx(nvlink, abs=0.005)


# --- chapter 2: NVSwitch came with the V100 --------------------------------------
def test_chapter2_does_not_say_the_v100_generation_had_no_interchange(notebook_text):
    """'Two generations back there was no interchange' (V100): the V100's DGX-2
    already had NVSwitch (12 of them, 16 GPUs)."""
    md = notebook_text("02_maglev_line", "markdown")
    assert "Two generations back there was no interchange" not in md
    dgx2, dgx1 = cl.hardware.system("DGX-2"), cl.hardware.system("DGX-1")
    assert dgx2.gpu == dgx1.gpu == "V100" and dgx2.nvswitches > 0 == dgx1.nvswitches
    assert f"{dgx2.n_gpus}-GPU DGX-2" in md


def test_dgx1_note_matches_the_cube_mesh_model():
    """Each DGX-1 GPU reaches 4 others (not 6): 6 links on a V100, 2 pairs doubled."""
    note = cl.hardware.system("DGX-1").note
    for gpu, links in (("V100", 6), ("P100", 4)):
        t = cl.topology.hybrid_cube_mesh_topology(gpu)
        gpus = [n for n in t.nodes if isinstance(n, int)]
        for g in gpus:
            assert t.degree(g) == 4
            assert sum(t.edges[g, h]["links"] for h in t.neighbors(g)) == links
        assert f"{links} ({gpu})" in note
        missing = len(gpus) * (len(gpus) - 1) // 2 - t.number_of_edges()
        assert f"{missing} of the {len(gpus) * (len(gpus) - 1) // 2} pairs have no" in note
    assert "4 of the 7" in note


# --- chapters 2 and 3: terms defined where they are first used ---------------------
def test_chapter2_defines_nccl_and_names_the_sm_numbers_it_prints(notebook_text):
    md = notebook_text("02_maglev_line", "markdown")
    first = md.index("NCCL")
    assert "collective communication library" in md[first:first + 200]
    said = dict(re.findall(r"SM(\d+) (?:is )?the (\w+)", md))
    assert set(said) == {str(k) for k in cl.NCCL_LINK_BW}
    for sm, name in said.items():
        assert cl.gpu(name).sm_arch == int(sm)


def test_chapter3_says_what_an_allreduce_and_nccl_tests_are_before_using_them(notebook_text):
    md = notebook_text("03_arterial_roads", "markdown")
    first = md.index("AllReduce")
    assert "sum of all GPUs' gradients" in md[first:first + 200]
    assert "NVIDIA's benchmarks for\nNCCL" in md or "NVIDIA's benchmarks for NCCL" in md


def test_chapter1_quiz_one_explains_its_67_percent_distractor():
    q = cl.content.chapter_quiz(1)[0]
    wrong = q.options[1]
    assert wrong == f"{(300 - 100) / 300:.0%}"
    from course_lib.units import parse_time
    from course_lib.values import chapter_values
    v = chapter_values(1)                    # the quiz's step, as its values module prints it
    assert f"({v['q_comp']} - {v['q_comm']}) / {v['q_comp']}" in q.why_wrong[1]
    assert parse_time(v["q_comp"]) == pytest.approx(0.3) and parse_time(v["q_comm"]) == pytest.approx(0.1)
    assert q.options[0] == f"{cl.effective_utilisation(0.3, 0.1):.0%}"


# --- one pageable model: predict_copy agrees with host_copy_time_s ----------------
@pytest.mark.parametrize("n_bytes", [1024.0, 2.0 ** 16, 2.0 ** 20, 2.0 ** 30])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_predict_copy_pageable_is_the_size_dependent_model(n_bytes, direction):
    """predict_copy priced pageable copies at one ratio (0.3 of pinned) for every size;
    the course's model (and its H200 run) gives about 1 at 1 KiB and 0.12 at 1 GiB."""
    p = cl.predict_copy(n_bytes, "H100", direction, memory="pageable")
    model = cl.host_copy_time_s(n_bytes, 5, "pageable", direction, measured=True)
    assert p.time_s == pytest.approx(model, rel=1e-12)
    pinned = cl.predict_copy(n_bytes, "H100", direction).time_s
    assert pinned == pytest.approx(cl.host_copy_time_s(n_bytes, 5, "pinned", direction,
                                                       measured=True), rel=1e-12)
    if direction == "h2d":
        assert pinned / p.time_s == pytest.approx(
            cl.hardware.pageable_over_pinned(n_bytes), abs=0.03)


def test_glossary_does_not_call_pcie_a_shared_bus(notebook_text):
    """Chapter 3 says PCIe is point-to-point, not a shared bus; its glossary entry said
    'the general bus every device shares'."""
    assert "not a shared bus" in notebook_text("03_arterial_roads", "markdown")
    rows = [r for r in cl.content.glossary() if r[1].startswith("arterial road")]
    assert len(rows) == 1
    meaning = rows[0][2]
    assert "bus every device shares" not in meaning and "point-to-point" in meaning
