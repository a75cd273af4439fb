"""Chapter 4's prose agrees with its models: the batching law, the two labs' start-ups,
the pageable close-up drawing (issue 30)."""

import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

import course_lib as cl
from course_lib.values import ch04 as values04

NB = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "04_freight_fleet.ipynb"


def _cell(cell_id: str) -> str:
    from course_lib.apps.prose import shown
    cells = json.loads(NB.read_text(encoding="utf-8"))["cells"]
    return shown("".join(next(c for c in cells if c.get("id") == cell_id)["source"]))


def _gain(n, d, alpha, bw):
    """T_sep / T_batch from first principles: N (alpha + d/B) over alpha + N d / B."""
    return n * (alpha + d / bw) / (alpha + n * d / bw)


def test_the_batching_gain_is_n_only_while_the_whole_batch_is_small(notebook_text):
    """Issue 30 (high): T_sep/T_batch -> N "when d << alpha B" is false; 1000 x 4 KiB gives ~90."""
    text = notebook_text("04_freight_fleet")
    assert r"\xrightarrow{d \ll \alpha B} N" not in text
    assert "up to a factor $N$ for tiny pieces" not in text
    alpha = cl.latency_s("pcie_small_copy_sync")
    bw = cl.host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    n, d = values04.N_PIECES, values04.PIECE_BYTES
    gain = _gain(n, d, alpha, bw)
    assert 50 < gain < n / 5                       # nowhere near N
    limit = 1 + alpha * bw / d
    assert gain < limit < n
    # the derivation and the takeaway both state the gain the model gives, and the law
    for cell in ("04-009", "04-012"):
        said = _cell(cell)
        assert f"{gain:.0f}×" in said, cell
        assert r"\min" in said, cell
    assert f"{limit:.0f}×" in _cell("04-009")
    assert r"\frac{N(\alpha B + d)}{\alpha B + Nd}" in _cell("04-009")


def test_the_two_labs_start_ups_are_said_to_measure_different_things(notebook_text):
    """Issue 30: the pageable lab's tens-of-µs start-ups beside the batching lab's
    sub-µs per call were unexplained."""
    text = notebook_text("04_freight_fleet")
    said = re.search(r"Two start-ups that measure different things\.\*\*(.*?)Now use", text, re.S)
    assert said, "the chapter explains the two labs' start-ups"
    said = said.group(1)
    for word in ("flushes the CPU's caches", "meets zero bytes", "cold", "one call",
                 "staging buffer"):
        assert word in said, word
    # ... and so does the pageable lab's own fits table
    from course_lib.measure.harness import LabResult
    from course_lib.measure.memory import _fit_and_summarise
    result = LabResult(name="pageable")
    for n in (2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22):
        t = 30e-6 + n / 8e9
        result.records.append({"lab": "pageable", "variant": "resident", "n_bytes": n,
                               "median_s": t, "bw_bytes_per_s": n / t})
    _fit_and_summarise(result)
    caption = cl.measure.fits_table(result).caption
    assert "caches flushed" in caption and "not the cost of one call" in caption
    assert "64 KiB" in caption


SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("width", [420, 600, 1000])
@pytest.mark.parametrize("n_bytes", [None, 1e9])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_the_pageable_close_ups_caption_lies_inside_and_its_last_line_is_bold(
        width, n_bytes, direction):
    """Issue 30: the close-up's bold caption line ran below the SVG's edge. Every word lies
    inside the drawing (the text-extent helpers of test_draw_text_extent), and every piece of
    the wrapped last line is bold, not only its last piece."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "_text_extent", pathlib.Path(__file__).with_name("test_draw_text_extent.py"))
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    svg_problems = helpers.svg_problems

    d = cl.draw.copy_path("pageable", gpu="H200", n_bytes=n_bytes, width=width,
                          direction=direction)
    assert svg_problems(d.svg) == []
    root = ET.fromstring(d.svg)
    captions = [t for t in root.iter(f"{SVG}text") if "ic-caption" in (t.get("class") or "")]
    bold = [t for t in captions if t.get("font-weight") == "bold"]
    last_line = " ".join("".join(t.itertext()) for t in bold)
    expected = ("ms (start-up" if n_bytes else "pinned at 1 GiB")
    assert expected in last_line and bold == captions[len(captions) - len(bold):]
    if n_bytes is None:
        assert last_line.startswith("two copies share the time")


def test_readers_pass_start_up_split_and_small_pageable_copies_are_hedged(notebook_text):
    """Readers: 7.3 us = 2.7 (queued, a throughput figure timed on the GPU) + 4.6 'host' is a
    split by subtraction, not two measured parts; and an early host return cannot shorten a
    GPU-event interval, so it cannot explain why small pageable copies were not penalised."""
    md = " ".join(notebook_text("04_freight_fleet", "markdown").split())
    assert "a split by subtraction, not two measured parts" in md
    assert "hand a tiny copy back before the DMA has run" not in md
    assert "it is measured, not explained" in md
