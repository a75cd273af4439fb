"""Structure of the graded assignments (the nbgrader source in solutions/).

The grading itself (solution = full marks, blank = 0, partial credit) is run
end to end in tests/test_autograder.py.
"""

from __future__ import annotations

import json
import os
import pathlib
import re

import nbformat
import numpy as np
import pytest

import course_lib as cl
from autograder import ASSIGNMENTS, REPO_ROOT, assignments_in

SOLUTIONS = assignments_in()


def _nb(a):
    return nbformat.read(os.path.join(REPO_ROOT, "solutions", a, f"{a}.ipynb"), as_version=4)


def test_the_four_assignments_exist():
    assert set(ASSIGNMENTS) <= set(SOLUTIONS)


@pytest.mark.parametrize("a", SOLUTIONS)
def test_three_to_six_graded_parts_each_with_hidden_tests(a):
    tests = [c for c in _nb(a).cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert 3 <= len(tests) <= 6
    for c in tests:
        assert c.metadata.nbgrader["locked"] and c.metadata.nbgrader["points"] > 0
        assert c.source.lstrip().startswith('"""'), "a test cell opens with a one-line docstring"
        assert "### BEGIN HIDDEN TESTS" in c.source and "### END HIDDEN TESTS" in c.source


@pytest.mark.parametrize("a", SOLUTIONS)
def test_every_solution_cell_has_markers(a):
    sols = [c for c in _nb(a).cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert sols
    for c in sols:
        assert c.source.count("### BEGIN SOLUTION") == c.source.count("### END SOLUTION") >= 1


@pytest.mark.parametrize("a", SOLUTIONS)
def test_no_hardware_number_typed_in_solutions(a):
    """Catalog numbers come from course_lib, never typed (e.g. 450e9, 900 GB/s, 63e9)."""
    typed = re.compile(r"\b(?:450|900|600|300|365|370|63|126|25|50)(?:\.\d+)?\s*(?:e9|\*\s*1e9|GB/s)")
    for c in _nb(a).cells:
        if c.metadata.get("nbgrader", {}).get("solution"):
            assert not typed.search(c.source), (a, c.metadata.nbgrader["grade_id"], typed.search(c.source))


@pytest.mark.parametrize("a", SOLUTIONS)
def test_cell_ids_are_stable(a):
    """Cell ids derive from grade ids, so a release is reproducible."""
    for c in _nb(a).cells:
        assert c.id == c.metadata.nbgrader["grade_id"].replace("_", "-")


_WORDS = {"three": 3, "four": 4, "five": 5, "six": 6}


@pytest.mark.parametrize("a", SOLUTIONS)
def test_stated_parts_and_points_match_the_graded_cells(a):
    """The intro's "N parts, P points" and docs/grading.md's table say what the test cells hold."""
    tests = [c for c in _nb(a).cells if c.metadata.get("nbgrader", {}).get("grade")]
    parts, total = len(tests), sum(c.metadata.nbgrader["points"] for c in tests)
    intro = _nb(a).cells[0].source
    m = re.search(r"\*\* (\w+) parts, (\d+) points", intro)
    assert m, f"{a}: the intro states no 'N parts, P points'"
    assert (_WORDS[m.group(1).lower()], int(m.group(2))) == (parts, total), (a, m.group(0))
    with open(os.path.join(REPO_ROOT, "docs", "grading.md"), encoding="utf-8") as fh:
        row = re.search(rf"^\| `{a}` \| [^|]+ \| (\d+) \((\d+)\) \|", fh.read(), re.MULTILINE)
    assert row, f"docs/grading.md has no row for {a}"
    assert (int(row.group(1)), int(row.group(2))) == (parts, total), (a, row.group(0))


def test_pinned_fit_pins_alpha_on_a_learners_four_sizes():
    """pinned_vs_pageable Part B: the instructor's ``fit_line`` on what a learner measures --
    four sizes 64 KiB..4 MiB, 3 % noise -- recovers a 1 us start-up.  An unweighted
    least-squares fit leaves it undetermined there (the 4 MiB copy's noise is ~10x alpha):
    its alpha came out negative in 25 % of 400 such runs (5th..95th percentile -1.7..+4.0 us);
    weighted by 1/T it is pinned."""
    nb = _nb("pinned_vs_pageable")
    src = next(c.source for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("grade_id") == "part_b")
    ns = {"np": np}
    exec(src, ns)
    rng = np.random.default_rng(2026)
    alpha, bw = 1e-6, 10e9
    d = np.array([2.0 ** 16, 2.0 ** 18, 2.0 ** 20, 2.0 ** 22])
    fits = np.array([ns["fit_line"](d, (alpha + d / bw) * (1 + 0.03 * rng.standard_normal(4)))[0]
                     for _ in range(400)])
    assert np.mean(fits < 0) < 0.02, f"alpha < 0 in {np.mean(fits < 0):.0%} of runs"
    lo, hi = np.percentile(fits, [5, 95])
    assert 0.5 * alpha < lo and hi < 1.5 * alpha, (lo, hi)


ROOT = pathlib.Path(__file__).resolve().parents[1]


def _cell(path: pathlib.Path, cell_id: str) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c.get("id") == cell_id)


# ---------------------------------------------------------------------------
# ring_allreduce, part C: the "one link instead of 18" diagnosis must fire
# ---------------------------------------------------------------------------
def _run_part_c_test(bw_bytes_per_s):
    """The hidden test of part C on an answer computed with ``bw_bytes_per_s``
    as B (everything else right); returns the assertion message or None."""
    source = _cell(ROOT / "solutions" / "ring_allreduce" / "ring_allreduce.ipynb",
                   "part-c-test")
    grad = cl.gradient_bytes(7e9, bytes_per_element=2)
    ns = {"math": __import__("math"), "cl": cl, "grad_bytes": grad,
          "sent_bytes": cl.ring_allreduce_bytes_per_rank(grad, 8),
          "t_nvlink_ideal_s": cl.ring_allreduce_time_s(grad, 8, bw_bytes_per_s),
          "t_nvlink_real_s": cl.ring_allreduce_time_s(
              grad, 8, cl.MEASURED["busbw_allreduce_8xH100_ring"].value),
          "t_pcie_s": cl.ring_allreduce_time_s(grad, 8, cl.pcie_bw_per_dir_bytes_per_s(5)),
          # the learner's own (right) Part A/B functions, which Part C's checks call
          "ring_allreduce_time_s": cl.ring_allreduce_time_s,
          "bytes_sent_per_rank": cl.ring_allreduce_bytes_per_rank}
    try:
        exec(compile(source, "part-c-test", "exec"), ns)
    except AssertionError as e:
        return str(e)
    return None


def test_ring_allreduce_part_c_names_the_one_link_mistake():
    """A student who divides by one NVLink link (25 GB/s) gets a time 18x too
    large; the hidden test compared the ratio with 1/18, so its message never
    fired and the student read only the generic 'should be 0.0544 s'."""
    h100 = cl.gpu("H100")
    one_link = h100.nvlink_per_link_per_dir_bytes_per_s
    assert h100.nvlink_bw_per_dir_bytes_per_s / one_link == pytest.approx(18)
    msg = _run_part_c_test(one_link)
    assert msg is not None and "18x too large" in msg and "one link" in msg
    # the bidirectional trap keeps its own message, and the right answer passes
    assert "bidirectional" in _run_part_c_test(h100.nvlink_bw_bidir_bytes_per_s)
    assert _run_part_c_test(h100.nvlink_bw_per_dir_bytes_per_s) is None


def test_assignments_are_numbered_in_chapter_order():
    """A reader: 'Assignment 2 (chapter 6)' and 'Assignment 4 (chapter 4)' ran against the
    chapters' order on the hub's list; numbered by the first chapter each one follows."""
    found = {}
    for a in ASSIGNMENTS:
        title = _nb(a).cells[0].source.splitlines()[0]
        m = re.match(r"# Assignment (\d) — .*\(chapters? (\d+)", title)
        assert m, title
        found[int(m.group(1))] = int(m.group(2))
    assert sorted(found) == [1, 2, 3, 4]
    chapters = [found[k] for k in sorted(found)]
    assert chapters == sorted(chapters), found


def test_hop_counts_part_f_says_which_model_of_a_hop_it_grades():
    """Final reader: Part F defined a hop by its slowest link and called
    cl.ring_bottleneck_bw_bytes_per_s 'the answer' -- which also divides a link shared by
    several hops (chapter 6).  The prompt now says sharing is ignored and why the two agree on
    the graded cases; those cases indeed share no link."""
    import course_lib as cl
    nb = _nb("hop_counts")
    md = next(c.source for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade_id") == "part_f_md")
    assert "is the answer" not in md and "ignoring links shared by" in md
    topo = cl.two_level_topology(2, 4)
    for ranks in ([0, 1, 2, 3], [0, 4, 1, 5], [0, 1, 4, 5]):
        assert max(cl.ring_link_flows(topo, ranks).values()) == 1
