"""The assignments' visible checks: what *Validate* tells a learner before they hand in.

Each graded part's visible checks (the test cell of the release in exercises/, hidden
tests removed) must catch the usual wrong answer of that part with its hint -- the
bidirectional bandwidth, the busbw factor, the average over n partners, Amdahl's
fractions swapped -- so that Validate does not say "Success" on a wrong part and the
learner finds out from the grade.  A part whose checks pass prints "Part X: passed".
The hidden tests stay out of the release.

Each case fills the release with the instructor's solutions (from solutions/),
swaps in the wrong answers, and runs nbgrader's own Validator on it (what the
Validate button runs), once per case.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")

#: assignment -> [(grade_id of a solution cell, right text, wrong text)], the parts that
#: must then fail and a piece of the hint each must show.
WRONG = {
    "ring_allreduce": (
        [("part_c", "h100.nvlink_bw_per_dir_bytes_per_s)", "h100.nvlink_bw_bidir_bytes_per_s)"),
         ("part_d", "return algbw_bytes_per_s(n_bytes, time_s) * 2 * (n_ranks - 1) / n_ranks",
          "return algbw_bytes_per_s(n_bytes, time_s)")],
        {"C": "bidirectional bandwidth", "D": "busbw is not algbw",
         "E": "article's method"}),       # E compares with C's time, which is now the article's
    "scaling_limits": (
        [("part_a", "return 1 / ((1 - p) + p / n)", "return 1 / (p + (1 - p) / n)"),
         ("part_d", "grad_bytes = cl.gradient_bytes(7e9, 2)",
          "grad_bytes = cl.gradient_bytes(7e9, 1)")],
        {"A": "the serial part is 1 - p", "D": "2x too small"}),
    "hop_counts": (
        [("part_b", "return n * n / (4 * (n - 1))", "return n / 4"),
         ("part_e", "4 * other_nodes", "2 * other_nodes")],
        {"B": "averaged over 8 partners", "E": "4 links"}),
    "pinned_vs_pageable": (
        [("part_b", "beta, alpha = np.polyfit(d, t, 1, w=1.0 / t)", "beta, alpha = np.polyfit(d, t, 1)"),
         ("part_e", "n_half_resident_bytes = alpha_resident_s * bw_resident_bytes_per_s",
          "n_half_resident_bytes = alpha_staged_s * bw_staged_bytes_per_s")],
        {"B": "weight each point by 1 / T", "E": "resident fit"}),
}
ALL = ("ring_allreduce", "hop_counts", "pinned_vs_pageable", "scaling_limits")


def _cells(nb):
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}


def parts_of(nb):
    """{letter: grade cell} of a notebook's graded parts."""
    out = {}
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code":
            out[re.match(r'"""Part (\w):', c.source).group(1)] = c
    return out


def filled_release(a, tmp_path, swaps=()):
    """The release of ``a`` with the solutions filled in and ``swaps`` applied, in a copy of
    its folder (data files beside it); its path."""
    folder = tmp_path / a
    shutil.copytree(REPO / "exercises" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    source = _cells(nbformat.read(REPO / "solutions" / a / f"{a}.ipynb", as_version=4))
    for gid, cell in _cells(nb).items():
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "\n".join(line for line in source[gid].source.splitlines()
                                    if line.strip() not in MARKERS)
    for gid, right, wrong in swaps:
        cell = _cells(nb)[gid]
        assert right in cell.source, f"{a}/{gid}: {right!r} is not in the solution"
        cell.source = cell.source.replace(right, wrong)
    nbformat.write(nb, path)
    return path


def validate(path):
    """nbgrader's Validator on ``path``: ({letter: error text} of failed parts, stdout)."""
    from nbgrader.validator import Validator

    v = Validator()
    nb = nbformat.read(path, as_version=4)
    import os
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        nb = v._preprocess(nb)            # executes it, as Validate does
    finally:
        os.chdir(cwd)
    failed = {}
    for cell in v._get_failed_cells(nb):
        letter = re.match(r'"""Part (\w):', cell.source)
        failed[letter.group(1) if letter else cell.source[:40]] = v._extract_error(cell)
    printed = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                        for o in c.outputs if o.get("name") == "stdout")
    return failed, printed


def _validate_with(tmp_path, a, grade_id, right, wrong):
    """The instructor's solution of ``a`` (hidden tests in) with ``right`` replaced by
    ``wrong`` in its cell ``grade_id``, run through Validate: (failed parts, stdout)."""
    folder = tmp_path / a
    shutil.copytree(REPO / "solutions" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = _cells(nb)[grade_id]
    assert right in cell.source
    cell.source = cell.source.replace(right, wrong)
    nbformat.write(nb, path)
    return validate(path)


@pytest.mark.parametrize("a", ALL)
def test_hidden_tests_stay_out_of_the_release(a):
    release = (REPO / "exercises" / a / f"{a}.ipynb").read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in release
    src = nbformat.read(REPO / "solutions" / a / f"{a}.ipynb", as_version=4)
    for letter, cell in parts_of(src).items():
        hidden = cell.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
        lines = [ln.strip() for ln in hidden.splitlines() if len(ln.strip()) > 25]
        assert lines, f"{a} Part {letter} has no hidden tests"
        assert not [ln for ln in lines if ln in release], f"{a} Part {letter}: hidden line released"


@pytest.mark.parametrize("a", ALL)
def test_the_solution_passes_and_each_part_says_so(a, tmp_path):
    failed, printed = validate(filled_release(a, tmp_path))
    assert failed == {}, failed
    letters = sorted(parts_of(nbformat.read(REPO / "exercises" / a / f"{a}.ipynb", 4)))
    assert len(letters) >= 3
    for letter in letters:
        assert f"Part {letter}: passed" in printed, (letter, printed)


@pytest.mark.parametrize("a", sorted(WRONG))
def test_the_usual_wrong_answers_fail_with_their_hint(a, tmp_path):
    swaps, expect = WRONG[a]
    failed, printed = validate(filled_release(a, tmp_path, swaps))
    assert set(failed) == set(expect), {k: v[-300:] for k, v in failed.items()}
    for letter, hint in expect.items():
        assert hint in failed[letter], (letter, failed[letter][-500:])
        assert f"Part {letter}: passed" not in printed
    for letter in set(parts_of(nbformat.read(REPO / "exercises" / a / f"{a}.ipynb", 4))) - \
            set(expect):
        assert f"Part {letter}: passed" in printed, letter      # the right parts say so


def test_a_noisy_measurement_with_alpha_below_zero_loses_nothing(tmp_path):
    """pinned_vs_pageable asks for the fit as it comes ("do not clip alpha").  On a busy
    machine the resident fit's intercept can come out below zero, and Part E's check once
    required n_half > 0: an honest submission lost a point to noise (seen in CI).  Here the
    instructor's solution, hidden tests included, runs on such a measurement."""
    a = "pinned_vs_pageable"
    folder = tmp_path / a
    shutil.copytree(REPO / "solutions" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    run = next(c for c in nb.cells if "measure.run_lab(" in c.source)
    # resident: T = -20 us + D / 8 GB/s; staged: T = 5 us + D / 3 GB/s (sizes 1 MiB..64 MiB)
    run.source = (
        "from course_lib.measure.harness import LabResult\n"
        "_sizes = [2**20, 2**22, 2**24, 2**26]\n"
        "res = LabResult('pageable', records=[\n"
        "    dict(variant=v, n_bytes=d, median_s=a + d / b)\n"
        "    for v, a, b in (('resident', -20e-6, 8e9), ('staged', 5e-6, 3e9)) for d in _sizes])\n")
    nbformat.write(nb, path)
    failed, printed = validate(path)
    assert failed == {}, {k: v[-400:] for k, v in failed.items()}
    for letter in "ABCDEF":
        assert f"Part {letter}: passed" in printed, (letter, printed)
    assert "-" in printed.split("Part E: passed")[0].split("resident: alpha = ")[1].split(",")[0]


def test_ring_allreduce_accepts_chapter_7s_per_step_latency_in_the_ideal_times(tmp_path):
    """ring_allreduce Parts C and E ask for "ideal" times.  A student who keeps chapter 7's
    per-step NCCL hop latency in them (14 steps x a few microseconds on a 54 ms transfer) is
    off by ~0.2 %: defensible, so it must not lose the parts' 4 points (the hidden tests once
    asked for 1e-6)."""
    a = "ring_allreduce"
    folder = tmp_path / a
    shutil.copytree(REPO / "solutions" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cells = _cells(nb)
    hop = 'latency_s=cl.latency_s("nccl_hop_nvlink")'
    for gid, old in (("part_c", "h100.nvlink_bw_per_dir_bytes_per_s)"),
                     ("part_c", "cl.pcie_bw_per_dir_bytes_per_s(5))"),
                     ("part_e", "bidir_bw_bytes_per_s)")):
        assert old in cells[gid].source, (gid, old)
        cells[gid].source = cells[gid].source.replace(old, old[:-1] + ", " + hop + ")")
    nbformat.write(nb, path)
    failed, printed = validate(path)
    assert failed == {}, {k: v[-400:] for k, v in failed.items()}
    assert "Part C: passed" in printed and "Part E: passed" in printed


def test_scaling_limits_part_c_says_what_no_communication_returns():
    """Part C's tests (visible and hidden) call max_gpus with t_comm_s = 0; a closed form
    without a guard divides by zero and loses both points, so the prompt must say it."""
    nb = nbformat.read(REPO / "exercises" / "scaling_limits" / "scaling_limits.ipynb", as_version=4)
    prompt = _cells(nb)["part_c_md"].source
    assert "`t_comm_s = 0`" in prompt and "`n_max`" in prompt.split("`t_comm_s = 0`")[1]


ONE_LAP = ("return (reduce_scatter_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s)\n"
           "            + all_gather_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s))")


@pytest.mark.parametrize("grade_id,right,wrong,fails", [
    ("part_a", "steps = n_ranks - 1", "steps = n_ranks", {"A", "B"}),       # n steps for n - 1
    ("part_b", ONE_LAP,                                                    # ReduceScatter only
     "return reduce_scatter_time_s(n_bytes, n_ranks, bw_bytes_per_s, latency_s)", {"B"}),
    ("part_b", "return 2 * (n_ranks - 1) / n_ranks * n_bytes",             # 2S, not 2(n-1)/n S
     "return 2 * n_bytes", {"B"}),
], ids=["n-steps", "one-lap", "sent-2S"])
def test_ring_allreduce_one_slip_costs_only_its_own_part(tmp_path, grade_id, right, wrong, fails):
    """ring_allreduce: Parts C, D and E call the learner's own Part A/B functions.  One slip in
    Part A (n steps instead of n - 1) used to fail all five parts (0 of 10), and a one-lap
    Part B failed C with a false hint ('you used the bidirectional bandwidth').  Now C and E
    are checked against what the learner's own functions give (error carried forward, visible
    and hidden checks alike) and D against the course's ring time: only the slip's parts fail."""
    a = "ring_allreduce"
    failed, printed = _validate_with(tmp_path, a, grade_id, right, wrong)
    assert set(failed) == fails, {k: v[-300:] for k, v in failed.items()}
    for letter in sorted(set("CDE") - fails):
        assert f"Part {letter}: passed" in printed
    assert "bidirectional" not in " ".join(failed.values())


@pytest.mark.parametrize("wrong", ["beta, alpha = np.polyfit(d, t, 1)",
                                   "beta, alpha = np.polyfit(d, t, 1, w=1.0 / t**2)"],
                         ids=["unweighted", "variance-weights"])
def test_pinned_a_wrong_fit_costs_part_b_only_and_validate_says_so(tmp_path, wrong):
    """pinned_vs_pageable: Part B grades the fitting method; Parts C and F apply the learner's
    own fit_line (error carried forward) -- a wrong method used to cost B, C and F (5 of 10).
    And Validate catches w = 1/T**2 (it passed Part B's visible check: alpha alone was
    checked)."""
    a = "pinned_vs_pageable"
    folder = tmp_path / a
    shutil.copytree(REPO / "solutions" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = _cells(nb)["part_b"]
    right = "beta, alpha = np.polyfit(d, t, 1, w=1.0 / t)"
    assert right in cell.source
    cell.source = cell.source.replace(right, wrong)
    nbformat.write(nb, path)
    failed, printed = validate(path)
    assert set(failed) == {"B"}, {k: v[-300:] for k, v in failed.items()}
    assert "weight each point by 1 / T" in failed["B"] or "not 1 / T**2" in failed["B"]


@pytest.mark.parametrize("grade_id,right,wrong,fails", [
    ("part_a", "return n / (1 + (n - 1) * t_comm_s / t_comp_s)",       # the rule's N-1 as N
     "return n / (1 + n * t_comm_s / t_comp_s)", {"A"}),
    ("part_b", "return (t_comp_s - t_bwd_s) + max(t_bwd_s, t_comm_s)",  # the articles' max
     "return max(t_comp_s, t_comm_s)", {"B"}),
], ids=["rule-n", "articles-max"])
def test_scaling_limits_one_slip_costs_only_its_own_part(tmp_path, grade_id, right, wrong, fails):
    """scaling_limits: Parts C, D and E call the learner's Part A/B functions.  A slip in
    seeds_speedup failed A, C and E (7 of 9 points), the articles' max in step_time_s failed
    B and D; now C, D and E carry the error forward, so only the slip's own part fails."""
    a = "scaling_limits"
    failed, printed = _validate_with(tmp_path, a, grade_id, right, wrong)
    assert set(failed) == fails, {k: v[-300:] for k, v in failed.items()}


def test_scaling_limits_part_d_accepts_chapter_7s_per_step_latency(tmp_path):
    """Final reader: Part D said only 'use cl.ring_allreduce_time_s' and tested to 1e-6, so a
    learner who passed chapter 7's per-step latency (0.067131 s against 0.067123 s) failed,
    told 'should be 0.0671 s, you have 0.0671 s'.  The prompt now says 'bandwidth term only'
    and, as in ring_allreduce, the latency is accepted."""
    a = "scaling_limits"
    folder = tmp_path / a
    shutil.copytree(REPO / "solutions" / a, folder)
    path = folder / f"{a}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = _cells(nb)["part_d"]
    for bw in ('cl.MEASURED["busbw_allreduce_8xH100_ring"].value)', "cl.pcie_bw_per_dir_bytes_per_s(5))"):
        assert bw in cell.source
        cell.source = cell.source.replace(bw, bw[:-1] + ', latency_s=cl.latency_s("nccl_hop_nvlink"))')
    nbformat.write(nb, path)
    failed, printed = validate(path)
    assert failed == {}, {k: v[-300:] for k, v in failed.items()}
    assert "bandwidth term only" in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
