"""Autograde throughput: seconds per submitted notebook, one nbgrader batch.

Releases the course into a temporary directory, submits N copies of the full
solution of each assignment (an honest class), autogrades each assignment in one
nbgrader call -- behind the full isolation when run as root (another user,
namespaces, hidden tests in a fresh interpreter) -- and reports wall-clock seconds
per notebook (target: at most 3 s), plus the fixed cost of one call (a batch of one).  Run: ``.venv/bin/python benchmarks/bench_autograde.py [N]``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
import zipfile

import nbformat

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from autograder import REPO_ROOT, assignments_in  # noqa: E402
from autograder.isolation import isolation  # noqa: E402
from autograder.pipeline import Course  # noqa: E402


def solution_submission(a):
    nb = nbformat.read(os.path.join(REPO_ROOT, "exercises", a, f"{a}.ipynb"), as_version=4)
    sol = nbformat.read(os.path.join(REPO_ROOT, "solutions", a, f"{a}.ipynb"), as_version=4)
    src = {c.metadata.nbgrader["grade_id"]: c.source for c in sol.cells}
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("solution"):
            c.source = "\n".join(line for line in src[meta["grade_id"]].splitlines()
                                 if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
    return nb


def main(n_students: int = 6) -> int:
    path = tempfile.mkdtemp(prefix="ag-bench-")
    try:
        course = Course(path, watch_repo=False, verbose=False)
        course.release(out_dir=os.path.join(path, "released"))
        per_nb, fixed = [], []
        print(isolation().describe())
        print(f"{'assignment':<20} {'batch':>6} {'wall s':>8} {'s/notebook':>11} {'score ok':>9}")
        for a in assignments_in():
            for n in (1, n_students):
                zpath = os.path.join(path, f"{a}-{n}.zip")
                with zipfile.ZipFile(zpath, "w") as z:
                    for i in range(n):
                        z.writestr(f"s{n}x{i:03d}/{a}.ipynb", nbformat.writes(solution_submission(a)))
                shutil.rmtree(os.path.join(path, "submitted"), ignore_errors=True)
                course.collect_zip(a, zpath)
                t0 = time.perf_counter()
                rows = course.autograde(a)
                wall = time.perf_counter() - t0
                ok = all(r.score == r.max_score for r in rows)
                print(f"{a:<20} {n:>6} {wall:>8.1f} {wall / n:>11.2f} {str(ok):>9}")
                (fixed if n == 1 else per_nb).append(wall if n == 1 else wall / n)
        print(f"median seconds per notebook in a batch of {n_students}: "
              f"{statistics.median(per_nb):.2f}; median cost of a batch of one: "
              f"{statistics.median(fixed):.1f} s  (machine: {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f})")
        return 0
    finally:
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 6))
