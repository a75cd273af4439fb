"""calibrate() on public nccl-tests runs it was never developed on (issue 22).

The held-out runs of course_lib/data/validation/nccl_tests_public.csv have been
looked at while the calibration was built, so they no longer test it honestly.
This bench runs the same size-split protocol as benchmarks/bench_calibrate.py on
the fresh logs in course_lib/data/validation/fresh_logs/ (their sources and
machines in SOURCES.md there, the machine of each as a ``cluster_from_spec``
string in index.json):

* each log is read by the course's own reader (``cl.read_nccl_tests``);
* the run is calibrated (``cl.calibrate``) on its sizes nearest 4 KiB, 1 MiB,
  64 MiB and 1 GiB (``calibrating.nearest_sizes`` of ``calibrating.FIT_SIZES``);
* the calibrated cluster predicts the run's other sizes
  (``calibrating.compare``), and so does the uncalibrated cluster (from spec).

Printed per run and pooled: points, median and 90th percentile of |busbw error|
(predicted / measured - 1) calibrated and from spec, the share of measurements
inside the calibrated prediction's busbw range, the share within 15 %; then the
pooled error by size band (signed and absolute), and the sizes where each run's
calibrated error is largest.  The issue's target: median <= 5 %, p90 <= 15 %.

Run: .venv/bin/python benchmarks/bench_calibrate_fresh.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_calibrate import _size, by_size, table  # noqa: E402

from course_lib import calibrating as C  # noqa: E402
from course_lib.clusters import cluster_from_spec  # noqa: E402
from course_lib.hardware import data_path  # noqa: E402
from course_lib.nccl_log import read_nccl_tests  # noqa: E402


def fresh_runs():
    """(file name, index entry, Cluster, rows) for every fresh log."""
    folder = data_path("validation", "fresh_logs")
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    for name, entry in index.items():
        text = (folder / name).read_text(encoding="utf-8")
        rows = read_nccl_tests(text, collective=entry["collective"])
        yield name, entry, cluster_from_spec(entry["cluster"]), rows


def size_split(clu, rows):
    """Calibrate on the sizes nearest FIT_SIZES; compare the others.

    Returns (calibrated Cluster, fitted sizes, calibrated comparison, spec
    comparison) -- the comparisons as ``calibrating.compare`` gives them."""
    fit = C.nearest_sizes([r["n_bytes"] for r in rows], C.FIT_SIZES)
    cal = C.calibrate(clu, [r for r in rows if r["n_bytes"] in fit])
    held = [r for r in rows if r["n_bytes"] not in fit]
    return cal, fit, C.compare(cal, held), C.compare(clu, held)


def as_points(system, nodes, cal_cmp, spec_cmp):
    """compare() rows in bench_calibrate's point form (ratio = measured /
    predicted busbw; low/high = the calibrated range as factors)."""
    out = []
    for a, b in zip(cal_cmp, spec_cmp):
        pred, meas = a["predicted_busbw"], a["measured_busbw"]
        out.append({"system": system, "nodes": nodes, "n_bytes": a["n_bytes"],
                    "ratio": meas / pred, "spec_ratio": meas / b["predicted_busbw"],
                    "low": a["low"] / pred, "high": a["high"] / pred,
                    "algorithm": a["algorithm"], "protocol": a["protocol"]})
    return out


def worst(points, k=3):
    """The k held-out sizes with the largest calibrated |error|, per run."""
    print("\n== where each run's calibrated error is largest (predicted/measured - 1) ==")
    by: dict = {}
    for p in points:
        by.setdefault(p["system"], []).append(p)
    for system, ps in by.items():
        ps = sorted(ps, key=lambda p: -abs(1 / p["ratio"] - 1))[:k]
        cells = ", ".join(f"{_size(p['n_bytes'])} {1 / p['ratio'] - 1:+.0%} "
                          f"({p['algorithm']}/{p['protocol']})" for p in ps)
        print(f"{system[:48]:48s} {cells}")


def main():
    t0 = time.perf_counter()
    points, fits = [], []
    for name, entry, clu, rows in fresh_runs():
        _cal, fit, cal_cmp, spec_cmp = size_split(clu, rows)
        system = f"{Path(name).stem} ({entry['collective']})"
        points += as_points(system, clu.nodes, cal_cmp, spec_cmp)
        fits.append((system, len(rows), fit))
    t1 = time.perf_counter()

    print("== fresh runs: sizes read, sizes fitted ==")
    for system, n, fit in fits:
        print(f"{system[:58]:58s} {n:3d} sizes, fit on "
              + ", ".join(_size(s) for s in fit))
    table(points, "fresh size split: fit ~4 sizes of a run, predict its other sizes")
    e = np.abs([1 / p["ratio"] - 1 for p in points])
    print(f"pooled: {len(e)} points, median {np.median(e):.1%}, p90 {np.percentile(e, 90):.1%}, "
          f"{np.mean(e <= 0.15):.0%} within 15 %, "
          f"{np.mean([p['low'] <= p['ratio'] <= p['high'] for p in points]):.0%} in range")
    by_size(points)
    worst(points)
    print(f"\nHELDOUT_BANDS in course_lib/calibrating.py: {C.HELDOUT_BANDS}")
    print(f"time: {t1 - t0:.1f} s for {len(fits)} runs")


if __name__ == "__main__":
    main()
