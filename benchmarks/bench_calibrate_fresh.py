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

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_calibrate import _size, by_size, table  # noqa: E402

from course_lib import calibrating as C  # noqa: E402


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
    points = C.holdout_points("fresh")          # the same split the tests and the docs read
    t1 = time.perf_counter()
    runs = list(C.fresh_runs())
    print("== fresh runs: sizes read, sizes fitted ==")
    for name, coll, _clu, rows in runs:
        fit = C.nearest_sizes([r["n_bytes"] for r in rows], C.FIT_SIZES)
        print(f"{name + ' (' + coll + ')':58.58s} {len(rows):3d} sizes, fit on "
              + ", ".join(_size(s) for s in fit))
    table(points, "fresh size split: fit ~4 sizes of a run, predict its other sizes")
    e = np.abs([1 / p["ratio"] - 1 for p in points])
    print(f"pooled: {len(e)} points, median {np.median(e):.1%}, p90 {np.percentile(e, 90):.1%}, "
          f"{np.mean(e <= 0.15):.0%} within 15 %, "
          f"{np.mean([p['low'] <= p['ratio'] <= p['high'] for p in points]):.0%} in range")
    by_size(points)
    worst(points)
    both = points + C.holdout_points("sizes")
    lo, hi = np.percentile([p["ratio"] for p in both], [10, 90])
    print(f"\n10-90 % band of held-out and fresh size splits together: ({lo:.3f}, {hi:.3f})")
    print(f"HELDOUT_BANDS in course_lib/calibrating.py: {C.HELDOUT_BANDS}")
    print(f"time: {t1 - t0:.1f} s for {len(runs)} runs")


if __name__ == "__main__":
    main()
