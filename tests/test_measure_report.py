"""What a lab measured, as a learner reads it (course_lib/measure/report.py):
tables with units and a sentence, never the summary's internal keys."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from course_lib import measure
from course_lib.measure.harness import LabResult
from course_lib.measure.memory import _fit_and_summarise

REPO = pathlib.Path(__file__).resolve().parents[1]
#: A key of a lab's summary or a record (``staged_over_resident``, ``bw_bytes_per_s``).
INTERNAL = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")
UNIT = re.compile(r"\d(?:\.\d+)? ?(?:[kMGT]?B/s|[nµm]?s|[KMG]iB|B)\b")


def _fake_pageable() -> LabResult:
    """A pageable run with made-up times: resident 10 GB/s, staged at 60 % of it."""
    result = LabResult(name="pageable")
    sizes = [2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22]
    for variant, bw in (("resident", 10e9), ("staged", 6e9), ("locked", 9.8e9), ("fresh", 0.5e9)):
        for n in sizes:
            t = 2e-6 + n / bw
            result.records.append({"lab": "pageable", "variant": variant, "n_bytes": n,
                                   "median_s": t, "bw_bytes_per_s": n / t})
    _fit_and_summarise(result)          # the lab's own summary of those records
    return result


def test_pageable_summary_reads_as_a_table_with_units():
    t = measure.summary_table(_fake_pageable())
    text, page = str(t), t._repr_html_()
    assert "<table>" in page and "<th>bandwidth</th>" in page
    assert len(t.rows) == 4 and all(UNIT.search(row[1]) for row in t.rows)
    staged = next(row for row in t.rows if "bounce buffer" in row[0])
    # the staged copy's share is the measured ratio, said in the caption too
    share = staged[2].split()[0]
    ratio = _fake_pageable().summary["staged_over_resident"]
    assert float(share) == pytest.approx(ratio, abs=0.006)
    assert f"{ratio:.0%}" in t.caption and "twice" in t.caption
    assert not INTERNAL.search(text), INTERNAL.search(text)


def test_fits_batching_and_reference_tables_name_no_internal_key():
    ref = measure.h200_copies()
    tables = [measure.fits_table(_fake_pageable()), measure.summary_table(ref)]
    batching = measure.run_lab("batching", quick=True, progress=False)
    tables.append(measure.summary_table(batching))
    for t in tables:
        assert t.caption.endswith(".") and len(t.caption.split()) >= 10
        assert t.rows and all(UNIT.search(" ".join(map(str, row))) or "x" in " ".join(row)
                              for row in t.rows)
        assert not INTERNAL.search(str(t)), (t.caption, INTERNAL.search(str(t)))
    # the H200 table says what the data says
    pinned = ref.summary["h2d_pinned_bw_bytes_per_s"]
    assert measure.summary_table(ref).rows[0][1] == measure.harness.format_bandwidth(pinned)


def test_an_unknown_lab_is_refused_by_name():
    with pytest.raises(ValueError, match="lab 'allreduce'"):
        measure.summary_table(LabResult(name="allreduce"))
    assert "skipped" in measure.summary_table(LabResult(name="gpu-copies", skipped="no GPU")).caption


def test_chapter_4_shows_its_lab_results_as_tables():
    """Chapter 4's lab cells end in a table (or a plot), not a dict of the summary."""
    cells = json.loads((REPO / "notebooks" / "04_freight_fleet.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lab = [c for c in code if re.search(r"\b(pageable|batching|ref)\.(summary|fits)\b", c)]
    assert not lab, f"chapter 4 cells still build dicts of the lab's keys: {lab}"
    assert sum("measure.summary_table(" in c for c in code) == 3
    assert sum("measure.fits_table(" in c for c in code) == 1
