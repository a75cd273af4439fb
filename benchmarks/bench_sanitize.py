"""The cost of sanitising a graded notebook (:mod:`autograder.sanitize`).

Per assignment, the median of ``REPEAT`` runs of :func:`sanitize_notebook` on the
full solution as released (Markdown only: what the course's assignments print is
text), on it with the outputs an honest student's run leaves (a PNG figure, an
SVG figure, an HTML table), and on the same notebook with the hostile cells of
``tests/test_grading_pages.py`` added; the ratio to the time the pipeline
spends per notebook is what matters (it runs twice: autograde and feedback).

Run: ``.venv/bin/python benchmarks/bench_sanitize.py``.
"""

from __future__ import annotations

import copy
import os
import statistics
import sys
import time

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from autograder import REPO_ROOT, assignments_in  # noqa: E402
from autograder.sanitize import sanitize_notebook  # noqa: E402
from test_grading_pages import HOSTILE_CODE, HOSTILE_MARKDOWN, PLAIN_SVG, PNG  # noqa: E402

REPEAT = 7


def plain(a):
    return nbformat.read(os.path.join(REPO_ROOT, "solutions", a, f"{a}.ipynb"), as_version=4)


def honest(a):
    nb = plain(a)
    table = "<table><tr><th>n</th><th>t</th></tr>" + "".join(
        f"<tr><td>{i}</td><td>{i * 1e-6:.2e}</td></tr>" for i in range(50)) + "</table>"
    for c in nb.cells:
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"):
            c.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG}),
                         nbformat.v4.new_output("display_data", data={"image/svg+xml": PLAIN_SVG}),
                         nbformat.v4.new_output("execute_result", data={"text/html": table},
                                                execution_count=1)]
    return nb


def hostile(a):
    nb = honest(a)
    code = nbformat.v4.new_code_cell(HOSTILE_CODE)
    code.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": "<img src=x onerror=alert(1)>" * 100, "application/javascript": "alert(1)"})]
    nb.cells[1:1] = [nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN), code]
    return nb


def median_ms(nb):
    sanitize_notebook(copy.deepcopy(nb))
    times = []
    for _ in range(REPEAT):
        x = copy.deepcopy(nb)
        t0 = time.perf_counter()
        sanitize_notebook(x)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main():
    print(f"{'assignment':<20} {'cells':>5} {'plain ms':>9} {'5 tables+figs ms':>17} {'hostile ms':>11}")
    rows = []
    for a in assignments_in():
        p, h, x = median_ms(plain(a)), median_ms(honest(a)), median_ms(hostile(a))
        rows.append((p, h, x))
        print(f"{a:<20} {len(plain(a).cells):>5} {p:>9.1f} {h:>17.1f} {x:>11.1f}")
    for i, what in enumerate(("plain", "with tables and figures")):
        med = statistics.median(r[i] for r in rows)
        print(f"median {what}: {med:.1f} ms per pass, {2 * med:.1f} ms per notebook (autograde + "
              f"feedback) = {2 * med / 3300:.1%} of the 3.3 s a notebook takes in a batch")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
