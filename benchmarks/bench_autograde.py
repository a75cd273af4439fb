"""Autograde throughput: seconds per submitted notebook, and the sandbox's overhead.

1. **Sandbox against a bare kernel**, per assignment, median of ``REPEAT`` runs of
   the full solution: a bare kernel (``nbclient``, no sandbox, no tests) against
   the grader's path without nbgrader (a fresh bubblewrap sandbox runs the
   notebook, then the judge runs every test cell in this process on the values the
   sandbox returns).
2. **The pipeline**: releases the course into a temporary directory, submits N
   copies of the full solution of each assignment (an honest class), autogrades
   each assignment in one nbgrader call and reports wall-clock seconds per notebook
   (target: at most 3 s), plus the fixed cost of one call (a batch of one).

Run: ``.venv/bin/python benchmarks/bench_autograde.py [N]``.
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
from autograder import judge  # noqa: E402
from autograder.guard import visible_part  # noqa: E402
from autograder.sandbox import Sandbox, describe  # noqa: E402
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


REPEAT = 3


def _gid(c):
    return c.metadata.get("nbgrader", {}).get("grade_id")


def bare_kernel_s(a) -> float:
    from nbclient import NotebookClient
    nb = solution_submission(a)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade"):
            c.source = visible_part(c.source)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    return time.perf_counter() - t0


def sandboxed_s(a) -> tuple[float, bool]:
    sol = nbformat.read(os.path.join(REPO_ROOT, "solutions", a, f"{a}.ipynb"), as_version=4)
    tests = {_gid(c): c.source for c in sol.cells if c.metadata.get("nbgrader", {}).get("grade")}
    setup = "\n".join(judge.instructor_imports(c.source) for c in sol.cells if c.cell_type == "code"
                      and c.metadata.get("nbgrader", {}).get("locked")
                      and not c.metadata.get("nbgrader", {}).get("grade"))
    nb = solution_submission(a)
    for c in nb.cells:
        if _gid(c) in tests:
            c.source = visible_part(c.source)
    t0 = time.perf_counter()
    with Sandbox() as box:
        box.execute(nb, 60, 300)
        res = judge.Judge(lambda op, items: box.ask(op, items, 60), setup).run(tests)
    return time.perf_counter() - t0, all(r.passed for r in res.values())


def overhead() -> None:
    print(describe())
    print(f"{'assignment':<20} {'bare kernel s':>14} {'sandbox+judge s':>16} {'overhead s':>11} "
          f"{'ratio':>6} {'all pass':>9}")
    ratios, extra = [], []
    for a in assignments_in():
        bare = statistics.median(bare_kernel_s(a) for _ in range(REPEAT))
        runs = [sandboxed_s(a) for _ in range(REPEAT)]
        boxed = statistics.median(t for t, _ in runs)
        ok = all(p for _, p in runs)
        ratios.append(boxed / bare)
        extra.append(boxed - bare)
        print(f"{a:<20} {bare:>14.2f} {boxed:>16.2f} {boxed - bare:>11.2f} {boxed / bare:>6.2f} "
              f"{str(ok):>9}")
    print(f"median overhead of the sandbox and the judge against a bare kernel: "
          f"{statistics.median(extra):+.2f} s per notebook (ratio {statistics.median(ratios):.2f}); "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main(n_students: int = 6) -> int:
    overhead()
    path = tempfile.mkdtemp(prefix="ag-bench-")
    try:
        course = Course(path, verbose=False)
        course.release(out_dir=os.path.join(path, "released"))
        per_nb, fixed = [], []
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
