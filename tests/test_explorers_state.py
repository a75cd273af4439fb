"""An explorer's controls follow the model, and its pictures say what its readout says.

* Every label, count and rate on a drawing comes from the same state as the
  readout: the city map's maglev gives the NVLink links in use and their rate
  (chapters 2 and 3); chapter 7's AllToAll drawing says it is a sample of the
  machine's ranks; chapter 6 has one map, from the source GPU the readout uses.
* A slider's range follows the model: the NVLink-links sliders stop at the
  chosen GPU's links, chapter 6's source slider at its topology's GPU count;
  the follow happens before the redraw (one redraw a move).
* Words match numbers: chapter 8's readout places the step against max and
  sum as the printed numbers do; no readout or drawing writes a number in
  scientific notation or a distance other than the slider's way.
* What a learner reads is prose, not clipped or monospace: a dropdown is wide
  enough for its longest option; chapter 11's myth evidence is HTML.
"""

import re
import xml.etree.ElementTree as ET

import pytest

import course_lib as cl
from course_lib import hardware
from course_lib.explorers import (ch02_nvlink_generations, ch03_crossover, ch06_topology,
                                  ch07_allreduce, ch08_overlap, ch11_myths, iter_explorers)
from course_lib.widgets import _options, dropdown_text_px, slider_positions

SVG = "{http://www.w3.org/2000/svg}"
SLIDERS = ("FloatSlider", "FloatLogSlider", "IntSlider")


def _texts(svg, cls):
    root = ET.fromstring(svg)
    return ["".join(e.itertext()) for e in root.iter()
            if cls in (e.get("class") or "").split()]


def _walk(box):
    out, stack = [], [box]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(getattr(x, "children", ()))
    return out


@pytest.fixture
def quiet_display(monkeypatch):
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)


# --- the maglev on the map: the links in use, at their rate ----------------------
@pytest.mark.parametrize("module,control", [(ch02_nvlink_generations, "links_used"),
                                            (ch03_crossover, "nvlink_links")])
@pytest.mark.parametrize("gpu,links", [("H100", 1), ("H100", 9), ("A100", 5), ("A100", 12),
                                       ("B200", 18)])
def test_the_maps_nvlink_labels_are_the_links_in_use(module, control, gpu, links):
    ex = module.explorer()
    data = ex.update(gpu=gpu, **{control: links})
    svg = ex.svg(data)
    g = hardware.gpu(gpu)
    rate = cl.format_bandwidth(links * g.nvlink_per_link_per_dir_bytes_per_s)
    labels = " ".join(_texts(svg, "ic-nvlink-label") + _texts(svg, "ic-nvlink-count"))
    counts = set(re.findall(r"×(\d+)", labels))
    assert counts == {str(links)}, f"{gpu} with {links} links: the map says {labels!r}"
    assert rate in labels, f"{gpu} with {links} links: {rate} missing from {labels!r}"
    # the readout says the same rate
    assert cl.format_bandwidth(links * g.nvlink_per_link_per_dir_bytes_per_s) in \
        (ex.readout(data) + " ".join(_texts(svg, "ic-caption")))


def test_p100_mesh_label_is_the_links_in_use():
    ex = ch03_crossover.explorer()
    svg = ex.svg(ex.update(gpu="P100", nvlink_links=1))
    labels = " ".join(_texts(svg, "ic-nvlink-label"))
    assert "×1 per pair" in labels and "×4 per pair" not in labels


# --- sliders that follow the model --------------------------------------------------
@pytest.mark.parametrize("module,control,description",
                         [(ch02_nvlink_generations, "links_used", "links used"),
                          (ch03_crossover, "nvlink_links", "NVLink links")])
def test_links_slider_stops_at_the_gpus_links(quiet_display, module, control, description):
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import ipywidgets as w

    ex = module.explorer()
    calls = []
    png = ex.png
    ex.png = lambda **v: calls.append(v) or png(**v)
    widgets = _walk(ex.show())
    gpu = next(x for x in widgets if isinstance(x, w.Dropdown))
    links = next(x for x in widgets if getattr(x, "description", "") == description)
    assert links.options[-1][1] == hardware.gpu("H100").nvlink_links
    links.value = 18
    for name in ("A100", "P100", "V100", "H100"):
        calls.clear()
        gpu.value = name
        top = hardware.gpu(name).nvlink_links
        assert [v for _, v in links.options] == list(range(1, top + 1)), name
        assert links.value <= top
        assert len(calls) == 1, f"{name}: {len(calls)} redraws for one move"
        assert calls[0][control] == links.value


def test_source_slider_runs_over_the_topologys_gpus(quiet_display):
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import ipywidgets as w

    ex = ch06_topology.explorer()
    widgets = _walk(ex.show())
    kind = next(x for x in widgets if isinstance(x, w.Dropdown))
    n = next(x for x in widgets if getattr(x, "description", "") == "GPUs")
    source = next(x for x in widgets if getattr(x, "description", "") == "hops from GPU")
    for k, gpus in (("ring", 4), ("ring", 12), ("full-mesh", 6), ("cube-mesh", 4)):
        kind.value, n.value = k, gpus
        expect = 8 if k == "cube-mesh" else gpus
        assert [v for _, v in source.options] == list(range(expect)), (k, gpus)
        assert ex.update(kind=k, n_gpus=gpus, source=expect - 1)["note"] in (
            "", "the DGX-1 cube-mesh always has 8 GPUs. ")


@pytest.mark.parametrize("kind,source", [("ring", 3), ("two-level", 5), ("nvswitch", 6)])
def test_chapter_6_draws_one_map_from_the_readouts_source(kind, source):
    ex = ch06_topology.explorer()
    data = ex.update(kind=kind, n_gpus=8, source=source)
    _, fig = ex.render(kind=kind, n_gpus=8, source=source)
    ax = fig.axes[0]
    assert f"from GPU {source}" in ax.get_xlabel()
    assert not ax.collections, "the figure draws a second map (a node collection)"
    counts = [int(round(p.get_height())) for p in ax.patches]
    assert sum(counts) == len(data["ranks"]) - 1
    svg = ex.svg(data)
    assert f"GPU {source} → GPU {data['target']}" in " ".join(_texts(svg, "ic-caption"))


# --- words that match the numbers ---------------------------------------------------
def test_chapter_8_never_calls_a_step_above_the_sum_between():
    ex = ch08_overlap.explorer()
    checked = 0
    for n_buckets in (2, 8, 64):
        for t_backward_s in (0.01, 0.5):
            for overlap in (True, False):
                for system in _options(ex.controls["system"]):
                    d = ex.update(n_buckets=n_buckets, t_backward_s=t_backward_s,
                                  overlap=overlap, system=system)
                    words = ex.readout(d)
                    if d["iteration_s"] > d["sum_s"] * (1 + 1e-9):
                        checked += 1
                        assert "between" not in words and "sum" in words, words
                    if "between" in words:
                        assert d["max_s"] <= d["iteration_s"] <= d["sum_s"], words
    assert checked, "no setting put the step above the sum: the check checked nothing"


SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize("name,factory", list(iter_explorers()),
                         ids=[n for n, _ in iter_explorers()])
def test_no_number_in_scientific_notation_at_any_slider_position(name, factory):
    """Every position of every slider (the others at their defaults): the readout
    and the drawing's words read in units, never ``1e+03``; distances as the
    slider writes them (:func:`course_lib.format_distance`)."""
    ex = factory()
    base = {"route": "rdma"} if "route" in ex.controls else {}     # a route with fibre
    for control, spec in ex.controls.items():
        if spec["type"] not in SLIDERS:
            continue
        for value in slider_positions(spec):
            data = ex.update(**{**base, control: value})
            words = (ex.readout(data) if ex.readout else "") + " " + " ".join(
                "".join(e.itertext()) for e in ET.fromstring(ex.svg(data) or "<svg/>").iter()
                if e.tag == f"{SVG}text")
            assert not SCIENTIFIC.search(words), (name, control, value,
                                                  SCIENTIFIC.findall(words))
            if control == "distance_m" and re.search(r"fibre|RDMA", words):
                assert cl.format_distance(value) in words, (name, value)
                assert not re.search(r"\d{4,} m\b", words.replace(",", "")), (name, value)


def test_alltoall_drawing_says_it_is_a_sample_of_the_machine():
    system = next(s for s, (kw, _) in ch07_allreduce.SYSTEMS.items()
                  if kw.get("nodes", 1) * kw.get("gpus_per_node", 8) > 12)
    ex = ch07_allreduce.FACTORIES["allreduce"]()
    data = ex.update(collective="alltoall", system=system)
    n_ranks = data["prediction"].n_ranks
    svg = ex.svg(data)
    words = " ".join("".join(e.itertext()) for e in ET.fromstring(svg).iter(f"{SVG}text"))
    drawn = svg.count('data-phase="after"')
    assert drawn < n_ranks
    assert f"{drawn} of the machine's {n_ranks:,} GPUs" in words
    factor = cl.busbw_factor("alltoall", n_ranks)
    assert f"× {factor:.3g} for AllToAll of {n_ranks:,} GPUs" in words
    assert f"{n_ranks} ranks" in ex.readout(data)


# --- what a learner reads ---------------------------------------------------------------
@pytest.mark.parametrize("name,factory", list(iter_explorers()),
                         ids=[n for n, _ in iter_explorers()])
def test_every_dropdown_shows_its_longest_option_whole(name, factory):
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    ex = factory()
    width = ex._description_width()
    for control, spec in ex.controls.items():
        if spec["type"] != "Dropdown":
            continue
        widget = ex._widget(control, spec, width)
        labels = [str(o[0] if isinstance(o, (tuple, list)) else o) for o in spec["options"]]
        need = dropdown_text_px(max(labels, key=len)) + 30
        got = re.fullmatch(r"calc\((\d+)px \+ (\d+)px\)", widget.layout.width)
        assert got, f"{name}: {control}'s width is {widget.layout.width!r}"
        assert int(got.group(2)) >= need, (f"{name}: {control} is {got.group(2)} px for "
                                           f"{max(labels, key=len)!r} ({need} px)")


def test_myth_evidence_is_html_prose():
    cards = ch11_myths.evidence_cards().data
    assert "<pre" not in cards and cards.count("class='ic-myth'") == len(cl.content.MYTHS)
    for m in cl.content.MYTHS:
        assert "Verdict: " + m.verdict in cards
    with pytest.raises(TypeError, match="myths"):
        ch11_myths.evidence_cards(["not a myth"])
