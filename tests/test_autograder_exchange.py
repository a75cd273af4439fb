"""The exchange route of the grading pipeline, end to end.

In a temporary course the instructor releases ``ring_allreduce`` to an nbgrader
exchange (``course/exchange``, the exchange root set in
``autograder/nbgrader_config.py``), two students fetch it into their own
folders (each with their own ``HOME``, so their own nbgrader cache and no
instructor config), one fills in the full solution and one hands in the blank
release, both submit, and then the pipeline's ``collect --exchange``,
``autograde`` and ``export`` run.  The expected scores come from the points in
the source notebook, not from the grader's output.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile

import nbformat
import pytest

from autograder import COURSE_ID, REPO_ROOT
from autograder.__main__ import main as autograder_main
from autograder.pipeline import Course

pytestmark = pytest.mark.slow

RING = "ring_allreduce"
STUDENTS = {"alice": "full", "bob": "blank"}


def _gid(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _source_nb():
    return nbformat.read(os.path.join(REPO_ROOT, "solutions", RING, f"{RING}.ipynb"), as_version=4)


def max_points():
    """The assignment's maximum, summed from the graded cells of the source notebook."""
    return sum(float(c.metadata.nbgrader["points"]) for c in _source_nb().cells
               if c.metadata.get("nbgrader", {}).get("grade"))


def fill_in_solutions(nb):
    """Put the instructor's solution into every solution cell of a fetched notebook."""
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    sol = {_gid(c): c.source for c in _source_nb().cells if _gid(c)}
    n = 0
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "\n".join(line for line in sol[_gid(cell)].splitlines()
                                    if line.strip() not in markers)
            n += 1
    assert n >= 3, "the fetched notebook should have the assignment's solution cells"


def student_nbgrader(home, *args):
    """Run ``nbgrader ARGS`` as a student: own HOME and working folder, no course config."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUPYTER_", "INTERCONNECT_"))}
    env["HOME"] = home
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=home, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def exchange_run():
    # not under pytest's tmp_path: the course must not sit inside the repository
    root = tempfile.mkdtemp(prefix="ag-exchange-")
    course = Course(os.path.join(root, "course"), notebook_timeout_s=120,
                    watch_repo=False, verbose=False)
    course.release([RING], out_dir=os.path.join(root, "released"), check=False)
    exchange = os.path.join(course.dir, "exchange")
    course.nbgrader("release_assignment", RING, "--force", check=True)
    common = [f"--course={COURSE_ID}", f"--Exchange.root={exchange}",
              "--Exchange.path_includes_course=True"]
    fetched = {}
    for student, kind in STUDENTS.items():
        home = os.path.join(root, "students", student)
        os.makedirs(home)
        student_nbgrader(home, "fetch_assignment", RING, *common)
        nb_path = os.path.join(home, COURSE_ID, RING, f"{RING}.ipynb")
        fetched[student] = open(nb_path, encoding="utf-8").read()
        if kind == "full":
            nb = nbformat.read(nb_path, as_version=4)
            fill_in_solutions(nb)
            nbformat.write(nb, nb_path)
        student_nbgrader(home, "submit", RING, f"--student={student}", *common)
    inbound = sorted(os.listdir(os.path.join(exchange, COURSE_ID, "inbound")))
    # the pipeline's own entry point, as the instructor types it
    assert autograder_main(["--course", course.dir, "collect", RING, "--exchange"]) == 0
    collected = course.students(RING)
    rows = {r.student: r for r in course.autograde(RING)}
    csv_path = os.path.join(root, "grades.csv")
    assert autograder_main(["--course", course.dir, "export", "--to", csv_path]) == 0
    with open(csv_path, newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    yield dict(course=course, fetched=fetched, inbound=inbound, collected=collected,
               rows=rows, exported=exported)
    shutil.rmtree(root, ignore_errors=True)


def test_students_fetch_the_release_without_solutions(exchange_run):
    for student, text in exchange_run["fetched"].items():
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, student
        assert "raise NotImplementedError()" in text, student


def test_both_submissions_reach_the_exchange_and_are_collected(exchange_run):
    submitted_by = sorted(name.split("+")[0] for name in exchange_run["inbound"])
    assert submitted_by == sorted(STUDENTS)
    assert exchange_run["collected"] == sorted(STUDENTS)
    for student in STUDENTS:
        folder = os.path.join(exchange_run["course"].dir, "submitted", student, RING)
        assert os.path.exists(os.path.join(folder, f"{RING}.ipynb"))
        assert os.path.exists(os.path.join(folder, "timestamp.txt"))


def test_full_solution_gets_the_maximum_and_blank_gets_zero(exchange_run):
    rows = exchange_run["rows"]
    top = max_points()
    assert top > 0
    assert rows["alice"].max_score == top
    assert rows["alice"].score == top, rows["alice"]
    assert rows["bob"].score == 0, rows["bob"]
    for r in rows.values():
        assert not r.incidents and not r.flags, r


def test_export_writes_both_students(exchange_run):
    got = {(r["student_id"], r["assignment"]): float(r["raw_score"])
           for r in exchange_run["exported"]}
    assert got[("alice", RING)] == max_points()
    assert got[("bob", RING)] == 0
