"""Autograde throughput: seconds per submitted notebook, and the sandbox's overhead.

1. **Sandbox against a bare kernel**, per assignment, median of ``REPEAT`` runs of
   the full solution: a bare kernel (``nbclient``, no sandbox, no tests) against
   the grader's path without nbgrader (a fresh bubblewrap sandbox runs the
   notebook while the judge's own unprivileged process starts beside it; then the
   judge runs every test cell on the values the sandbox returns, in the data-only
   encoding).  The judge's own cost is reported: the seconds from the executed
   notebook to the verdicts (tests plus the sandbox's answers) and the judge
   process's CPU time and peak memory.
2. **The pipeline**: releases the course into a temporary directory, submits N
   copies of the full solution of each assignment (an honest class), autogrades
   each assignment in one nbgrader call and reports wall-clock seconds per notebook
   (target: at most 3.5 s in a batch of four), plus the fixed cost of one call (a
   batch of one).

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
from autograder.sandbox import JudgeBox, Sandbox, describe  # noqa: E402
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


def sandboxed_s(a) -> tuple[float, bool, float, float, float]:
    """(seconds, all passed, judge phase s, judge CPU s, judge peak MiB) for one notebook."""
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
    with JudgeBox() as referee, Sandbox() as box:
        referee.start(tests, setup, 64 * 2**20)
        box.execute(nb, 60, 300)
        t1 = time.perf_counter()
        verdicts, _ = referee.run(lambda op, items: box.ask(op, items, 60), time.monotonic() + 300)
        t2 = time.perf_counter()
    return (t2 - t0, all(v[0] for v in verdicts.values()) and len(verdicts) == len(tests), t2 - t1,
            referee.cost.get("cpu_s", float("nan")), referee.cost.get("peak_mib", float("nan")))


def overhead() -> None:
    print(describe())
    print(f"{'assignment':<20} {'bare kernel s':>14} {'sandbox+judge s':>16} {'overhead s':>11} "
          f"{'ratio':>6} {'judge phase s':>14} {'judge CPU s':>12} {'judge MiB':>10} {'all pass':>9}")
    ratios, extra, phases = [], [], []
    for a in assignments_in():
        bare = statistics.median(bare_kernel_s(a) for _ in range(REPEAT))
        runs = [sandboxed_s(a) for _ in range(REPEAT)]
        boxed = statistics.median(r[0] for r in runs)
        ok = all(r[1] for r in runs)
        phase, cpu, mib = (statistics.median(r[i] for r in runs) for i in (2, 3, 4))
        ratios.append(boxed / bare)
        extra.append(boxed - bare)
        phases.append(phase)
        print(f"{a:<20} {bare:>14.2f} {boxed:>16.2f} {boxed - bare:>11.2f} {boxed / bare:>6.2f} "
              f"{phase:>14.2f} {cpu:>12.2f} {mib:>10.0f} {str(ok):>9}")
    print(f"median overhead of the sandbox and the judge against a bare kernel: "
          f"{statistics.median(extra):+.2f} s per notebook (ratio {statistics.median(ratios):.2f}); "
          f"median judge phase {statistics.median(phases):.2f} s; "
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
