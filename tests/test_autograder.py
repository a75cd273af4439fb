"""The grading pipeline end to end, honest and hostile submissions.

One temporary course is released once (module fixture); the hostile batch for
``ring_allreduce`` is collected from an LMS-style zip and autograded in ONE
nbgrader call, so the defences are shown to work while the rest of the batch
finishes.  Expected scores are derived from the points in the source
notebooks (which parts a submission gets right), not from the grader's output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sqlite3
import tempfile
import zipfile

import nbformat
import pytest

from autograder import REPO_ROOT, STUDENT_DISABLED_EXTENSIONS, assignments_in
from autograder.pipeline import Course, normalise_notebook, scan_notebook

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_solutions import CLOSED as REF_CLOSED, LOOP as REF_LOOP, notebook as reference  # noqa: E402

pytestmark = pytest.mark.slow

RING = "ring_allreduce"
CELL_TIMEOUT_S = 5


# --- building submissions -----------------------------------------------------------
def _read(kind, a):
    return nbformat.read(os.path.join(REPO_ROOT, kind, a, f"{a}.ipynb"), as_version=4)


def _strip_markers(src):
    keep = ("### BEGIN SOLUTION", "### END SOLUTION")
    return "\n".join(line for line in src.splitlines() if line.strip() not in keep)


def _gid(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def submission(a, parts=None, edit=None):
    """The released notebook with the solution of ``parts`` (all if None) filled in;
    ``edit(nb)`` may then change it."""
    nb = _read("exercises", a)
    sol = {_gid(c): c.source for c in _read("solutions", a).cells}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and (parts is None or _gid(cell) in parts):
            cell.source = _strip_markers(sol[_gid(cell)])
    if edit:
        edit(nb)
    return nb


def points(a):
    """Points of each part, read from the source notebook: {"part_a": 2.0, ...}."""
    return {_gid(c)[:-5]: float(c.metadata.nbgrader["points"]) for c in _read("solutions", a).cells
            if c.metadata.get("nbgrader", {}).get("grade")}


def cell(nb, gid):
    return next(c for c in nb.cells if _gid(c) == gid)


def append_to(gid, code):
    def edit(nb):
        cell(nb, gid).source += "\n" + code
    return edit


def prepend_to(gid, code):
    def edit(nb):
        cell(nb, gid).source = code + "\n" + cell(nb, gid).source
    return edit


def chain(*edits):
    def edit(nb):
        for e in edits:
            e(nb)
    return edit


WRONG_C = append_to("part_c", "t_nvlink_ideal_s = ring_allreduce_time_s(grad_bytes, 8, "
                    "cl.gpu('H100').nvlink_bw_bidir_bytes_per_s)  # the bidirectional trap")


def _tests_to_assert_true(nb):
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade"):
            c.source = "assert True"


def delete_part_c_test(nb):
    nb.cells = [c for c in nb.cells if _gid(c) != "part_c_test"]


def edit_metadata(nb):
    cell(nb, "part_a_test").metadata.nbgrader["points"] = 100
    b = cell(nb, "part_b_test")
    b.metadata.nbgrader["locked"] = False
    b.source = "assert True"
    c = cell(nb, "part_c_test")
    c.metadata.nbgrader["grade"] = False
    c.metadata.nbgrader["checksum"] = "0" * 32
    c.source = "pass"
    e = cell(nb, "part_e_test")
    e.metadata.nbgrader["grade_id"] = "my_own_cell"
    e.source = "pass"


def spoof_outputs(nb):
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade"):
            c.outputs = [nbformat.v4.new_output("stream", text="All tests passed!\n")]
            c.execution_count = 1
    nb.cells.insert(1, nbformat.v4.new_code_cell('print("All tests passed! 10/10")'))


PATCHES = '''
import ast, builtins, math
builtins.abs = lambda x: 0
math.isclose = lambda *a, **k: True
cl.ring_allreduce_time_s = lambda *a, **k: t_nvlink_ideal_s
class _NoAsserts(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()
get_ipython().ast_transformers.append(_NoAsserts())
get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)
'''

TAMPER = '''
import os
_d = "@COURSE@"     # the attacker knows where the course lives
print(open(os.path.join(_d, "gradebook.db"), "rb").read()[:16])
open(os.path.join(_d, "gradebook.db"), "wb").write(b"all my grades are 100")
_src = os.path.join(_d, "solutions", "ring_allreduce", "ring_allreduce.ipynb")
open(_src, "w").write("{}")
open(os.path.join(_d, "solutions", "extra.py"), "w").write("evil = 1")
'''

LOOP = "while True:\n    pass"
SIGINT_LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
               "while True:\n    pass")
EXIT = "import os\nos._exit(1)"
MEMORY = "hog = []\nwhile True:\n    hog.append(bytearray(64 * 2**20))"


def raise_first(nb):
    nb.cells.insert(0, nbformat.v4.new_code_cell('raise RuntimeError("boom")'))


P = points(RING)
ALL = sum(P.values())
#: student -> (notebook, expected score, incident kinds expected, scan flags expected)
HOSTILE = {
    "good": (lambda: submission(RING), ALL, set()),
    "blank": (lambda: submission(RING, parts=set()), 0.0, set()),
    "partial": (lambda: submission(RING, parts={"part_a", "part_b"}), P["part_a"] + P["part_b"], set()),
    "loop": (lambda: submission(RING, edit=prepend_to("part_e", LOOP)), ALL - P["part_e"], {"timeout"}),
    "sigint": (lambda: submission(RING, edit=prepend_to("part_e", SIGINT_LOOP)), ALL - P["part_e"],
               {"timeout", "unresponsive"}),
    # the tests see the student's values, whatever the notebook's kernel had patched
    "patchedabs": (lambda: submission(RING, edit=append_to("part_e", "trap_factor = 3.0\n"
                                                           "def abs(x):\n    return 0")),
                   ALL - P["part_e"], set()),
    "exit": (lambda: submission(RING, edit=append_to("part_d", EXIT)),
             P["part_a"] + P["part_b"] + P["part_c"], {"dead-kernel"}),
    "raisefirst": (lambda: submission(RING, edit=raise_first), ALL, set()),
    "asserttrue": (lambda: submission(RING, edit=chain(WRONG_C, _tests_to_assert_true)),
                   ALL - P["part_c"] - P["part_e"], set()),
    "deleted": (lambda: submission(RING, edit=chain(WRONG_C, delete_part_c_test)),
                ALL - P["part_c"] - P["part_e"], set()),
    "metadata": (lambda: submission(RING, edit=chain(WRONG_C, edit_metadata)),
                 ALL - P["part_c"] - P["part_e"], {"metadata"}),
    "spoofout": (lambda: submission(RING, edit=chain(WRONG_C, spoof_outputs)),
                 ALL - P["part_c"] - P["part_e"], set()),
    "monkey": (lambda: submission(RING, edit=chain(WRONG_C, append_to("part_c", PATCHES))),
               ALL - P["part_c"] - P["part_e"], set()),
    # the sandbox holds no course files: every open fails, the answers count
    "tamper": (lambda: submission(RING, edit=append_to("part_a", TAMPER)), ALL, set()),
    "memory": (lambda: submission(RING, edit=prepend_to("part_e", MEMORY)), ALL - P["part_e"], set()),
}


def _sha(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.fixture(scope="module")
def course():
    # not under pytest's tmp_path: the course must not sit inside the repository
    path = tempfile.mkdtemp(prefix="ag-course-")
    c = Course(path, cell_timeout_s=CELL_TIMEOUT_S, notebook_timeout_s=120,
               kernel_memory_bytes=3 * 2**30, watch_repo=False, verbose=False)
    c.release_diff = c.release(out_dir=os.path.join(path, "released"), check=False)
    yield c
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def hostile():
    path = tempfile.mkdtemp(prefix="ag-hostile-")
    course = Course(path, cell_timeout_s=CELL_TIMEOUT_S, notebook_timeout_s=120,
                    kernel_memory_bytes=3 * 2**30, verbose=False)
    course.release([RING], out_dir=os.path.join(path, "released"))
    zpath = os.path.join(course.dir, "lms_download.zip")
    with zipfile.ZipFile(zpath, "w") as z:
        for i, (student, (make, _, _)) in enumerate(sorted(HOSTILE.items())):
            # both LMS naming styles: <student>_<id>_<nb>.ipynb and <student>/<nb>.ipynb
            name = (f"{student}_{1000 + i}_{RING}.ipynb" if i % 2 else f"{student}/{RING}.ipynb")
            z.writestr(name, nbformat.writes(make()).replace("@COURSE@", course.dir))
    collected = course.collect_zip(RING, zpath)
    solutions_sha = _sha(os.path.join(course.dir, "solutions", RING, f"{RING}.ipynb"))
    rows = {r.student: r for r in course.autograde(RING)}
    yield collected, rows, solutions_sha, course
    shutil.rmtree(path, ignore_errors=True)


# --- release ----------------------------------------------------------------------
def test_release_matches_committed_exercises(course):
    """exercises/ is exactly what the pipeline generates from solutions/."""
    released = os.path.join(course.dir, "released")
    for a in assignments_in():
        committed = os.path.join(REPO_ROOT, "exercises", a, f"{a}.ipynb")
        fresh = os.path.join(released, a, f"{a}.ipynb")
        assert os.path.exists(fresh), f"{a} was not released"
        with open(committed, encoding="utf-8") as f1, open(fresh, encoding="utf-8") as f2:
            assert f1.read() == f2.read(), (
                f"exercises/{a} differs from a fresh release: run `python -m autograder release`")


def test_release_hides_solutions_and_hidden_tests(course):
    for a in assignments_in():
        text = open(os.path.join(REPO_ROOT, "exercises", a, f"{a}.ipynb"), encoding="utf-8").read()
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
        assert "raise NotImplementedError()" in text


def test_normalise_is_idempotent():
    nb = _read("exercises", RING)
    once = normalise_notebook(nb)
    assert normalise_notebook(nbformat.reads(once, as_version=4)) == once


# --- honest submissions, all assignments -----------------------------------------------
@pytest.mark.parametrize("a", assignments_in())
def test_both_reference_solutions_get_full_marks(course, a, tmp_path):
    """A loop and a closed form (tests/reference_solutions) both earn every point.
    (Zero and partial marks: the hostile batches.)"""
    p = points(a)
    zpath = tmp_path / f"{a}.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr(f"loop/{a}.ipynb", nbformat.writes(reference(_read("exercises", a), a, REF_LOOP)))
        z.writestr(f"closed/{a}.ipynb", nbformat.writes(reference(_read("exercises", a), a, REF_CLOSED)))
    course.collect_zip(a, str(zpath))
    rows = {r.student: r for r in course.autograde(a)}
    assert rows["loop"].score == sum(p.values()) == rows["loop"].max_score, rows["loop"]
    assert rows["closed"].score == sum(p.values()), rows["closed"]
    assert not rows["loop"].incidents and not rows["closed"].incidents


# --- hostile batch ------------------------------------------------------------------
def test_zip_collect_finds_every_student(hostile):
    collected, rows, _, _ = hostile
    assert sorted(collected) == sorted(HOSTILE)


@pytest.mark.parametrize("student", sorted(HOSTILE))
def test_hostile_submission_graded_correctly(hostile, student):
    _, rows, _, _ = hostile
    _, expected, kinds = HOSTILE[student]
    row = rows[student]
    assert row.score == expected, (student, row.score, row.incidents)
    assert row.max_score == ALL, "points edited in a submission must not change the maximum"
    seen = {i.split(":")[0] for i in row.incidents}
    assert kinds <= seen, (student, row.incidents)


def test_honest_submissions_raise_no_incident_or_flag(hostile):
    _, rows, _, _ = hostile
    for s in ("good", "blank", "partial"):
        assert not rows[s].incidents and not rows[s].flags, (s, rows[s])


def test_tampering_never_reaches_the_course(hostile):
    _, rows, solutions_sha, course = hostile
    assert _sha(os.path.join(course.dir, "solutions", RING, f"{RING}.ipynb")) == solutions_sha
    assert not os.path.exists(os.path.join(course.dir, "solutions", "extra.py"))
    with sqlite3.connect(os.path.join(course.dir, "gradebook.db")) as db:
        n = db.execute("select count(*) from submitted_assignment").fetchone()[0]
    assert n >= len(HOSTILE)
    assert "reaches course files" in rows["tamper"].flags
    assert "patches builtins" in rows["monkey"].flags


def test_feedback_and_export(hostile, tmp_path):
    course = hostile[3]
    n = course.feedback(RING)
    assert n == len(HOSTILE)
    html = open(os.path.join(course.dir, "feedback", "asserttrue", RING, f"{RING}.html"),
                encoding="utf-8").read()
    assert "bidirectional" in html, "the student's feedback carries the test's hint"
    csv_path = course.export("grades.csv")
    import csv
    with open(csv_path, newline="") as fh:
        got = {(r["student_id"], r["assignment"]): float(r["raw_score"]) for r in csv.DictReader(fh)}
    for student, (_, expected, _) in HOSTILE.items():
        assert got[(student, RING)] == expected


# --- small units ----------------------------------------------------------------------
def test_scan_flags_only_student_cells():
    nb = submission(RING, edit=append_to("part_a", "import builtins"))
    assert scan_notebook(nb) == ["patches builtins"]
    assert scan_notebook(submission(RING)) == []


def test_student_disabled_extensions_are_nbgrader_plugins():
    assert "@jupyter/nbgrader:validate-assignment" not in STUDENT_DISABLED_EXTENSIONS
    for name in ("create-assignment", "formgrader", "course-list"):
        assert f"@jupyter/nbgrader:{name}" in STUDENT_DISABLED_EXTENSIONS


def test_validate_reports_failure(tmp_path):
    from autograder.pipeline import validate_notebook
    path = tmp_path / "blank.ipynb"
    nbformat.write(submission("hop_counts", parts=set()), str(path))
    ok, report = validate_notebook(str(path))
    assert not ok and "NotImplementedError" in report
