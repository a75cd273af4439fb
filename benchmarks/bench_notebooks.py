"""Run time and peak memory of every chapter, executed headless: a Markdown table.

    .venv/bin/python benchmarks/bench_notebooks.py [--repeat 3] [--src notebooks] [--json out.json]

Each notebook runs in its own fresh process (``--one`` mode of this script),
which executes it with nbclient in a ``python3`` kernel, as the notebook tests
do (``MPLBACKEND=Agg``, explorers interactive, quick labs).  Reported per
notebook:

* **wall** -- seconds from starting the process to its end (kernel start-up,
  every cell, shut-down); the median over ``--repeat`` runs;
* **kernel peak RSS** -- the largest resident set of any process the notebook
  ran in (the kernel, or an MPI rank it started and waited for), from
  ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` once the kernel is reaped; the
  maximum over the runs.  (Linux reports ``ru_maxrss`` in KiB.)

The budgets from the course design are checked at the end: the whole course
<= 120 s and <= 1.5 GB peak; chapters 0-6 <= 60 s and <= 1 GB.  The instructor
guide's schedule takes its measured timings from this table
(``docs/instructor_guide.md``, the ``TBD-measured`` marks).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GB = 1e9
MB = 1e6
BUDGETS = [  # (label, highest chapter number included, seconds, bytes)
    ("chapters 0-6", 6, 60.0, 1.0 * GB),
    ("whole course", 99, 120.0, 1.5 * GB),
]


def run_one(path: Path, timeout_s: float) -> dict:
    """Execute one notebook in this process's child kernel; return the measurements."""
    import nbformat
    from nbclient import NotebookClient

    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]]
                                                      if env.get("PYTHONPATH") else []))
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    error = ""
    try:
        NotebookClient(nb, timeout=timeout_s, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute(env=env)
    except Exception as exc:  # report it in the table
        error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', '')}"
    execute_s = time.perf_counter() - t0
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024.0
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    return {"notebook": path.name, "execute_s": execute_s, "kernel_peak_rss_bytes": children,
            "driver_peak_rss_bytes": own, "error": error.strip()}


def measure(path: Path, timeout_s: float) -> dict:
    """Run ``--one`` in a fresh process and add its wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--one", str(path),
                           "--timeout", str(timeout_s)],
                          capture_output=True, text=True)
    wall_s = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"notebook": path.name, "wall_s": wall_s, "execute_s": float("nan"),
                "kernel_peak_rss_bytes": float("nan"), "driver_peak_rss_bytes": float("nan"),
                "error": f"driver failed (exit {proc.returncode}): {tail}"}
    data = json.loads(lines[-1])
    data["wall_s"] = wall_s
    return data


def chapter_number(name: str) -> int:
    m = re.match(r"^(\d+)_", name)
    return int(m.group(1)) if m else 99


def table(rows: list[dict], repeat: int) -> str:
    out = [f"| notebook | wall (s, median of {repeat}) | kernel peak RSS (MB) | status |",
           "|---|---:|---:|---|"]
    for r in rows:
        status = "ok" if not r["error"] else f"FAILED: {r['error'][:80]}"
        out.append(f"| {r['notebook']} | {r['wall_s']:.1f} | "
                   f"{r['kernel_peak_rss_bytes'] / MB:.0f} | {status} |")
    total = sum(r["wall_s"] for r in rows)
    peak = max(r["kernel_peak_rss_bytes"] for r in rows)
    out.append(f"| **total** | **{total:.1f}** | **{peak / MB:.0f}** (max) | |")
    out.append("")
    for label, last, budget_s, budget_bytes in BUDGETS:
        part = [r for r in rows if chapter_number(r["notebook"]) <= last]
        if not part:
            continue
        t = sum(r["wall_s"] for r in part)
        m = max(r["kernel_peak_rss_bytes"] for r in part)
        verdict = "within" if (t <= budget_s and m <= budget_bytes) else "OVER"
        out.append(f"- {label}: {t:.1f} s (budget {budget_s:.0f} s), peak "
                   f"{m / GB:.2f} GB (budget {budget_bytes / GB:.1f} GB): **{verdict}** budget")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(REPO / "notebooks"))
    parser.add_argument("--repeat", type=int, default=1, help="runs per notebook (median wall)")
    parser.add_argument("--timeout", type=float, default=600.0, help="per-cell limit, s")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(Path(args.one), args.timeout)))
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    notebooks = sorted(Path(args.src).glob("*.ipynb"))
    if not notebooks:
        print(f"no notebooks in {args.src}", file=sys.stderr)
        return 1
    rows = []
    for nb in notebooks:
        runs = [measure(nb, args.timeout) for _ in range(args.repeat)]
        row = dict(runs[-1])
        row["wall_s"] = statistics.median(r["wall_s"] for r in runs)
        row["kernel_peak_rss_bytes"] = max(r["kernel_peak_rss_bytes"] for r in runs)
        row["error"] = next((r["error"] for r in runs if r["error"]), "")
        rows.append(row)
        print(f"  {nb.name}: {row['wall_s']:.1f} s, "
              f"{row['kernel_peak_rss_bytes'] / MB:.0f} MB", file=sys.stderr)
    print(table(rows, args.repeat))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
