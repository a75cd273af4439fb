"""How well calibrate() predicts what it did not fit, per public run.

Two splits over the held-out runs of course_lib/data/validation/nccl_tests_public.csv
(:func:`course_lib.calibrating.holdout_points`):

1. sizes -- every run with >= 8 sizes is calibrated on its sizes nearest
   4 KiB, 1 MiB, 64 MiB and 1 GiB and predicts its other sizes;
2. nodes -- the runs of one cluster at several node counts: calibrated on the
   2-node run, predicting 3/4/8 nodes.

Per system: points, the median and 90th percentile of |busbw error| of the
calibrated model, the same from spec (no calibration) on the same points, and
how many points fell inside the calibrated prediction's busbw range.  The
targets (issue 22): sizes median <= 5 %, p90 <= 15 %; nodes median <= 10 %;
ranges holding ~80 %.  Last, the 10-90 % band of measured/predicted over each
split: what ``calibrating.HELDOUT_BANDS`` must hold.

Run: .venv/bin/python benchmarks/bench_calibrate.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_lib import calibrating as C  # noqa: E402


def table(points, title):
    print(f"\n== {title} ==")
    print(f"{'system':58s} {'nodes':>5s} {'pts':>4s} {'med':>6s} {'p90':>6s}"
          f" {'spec med':>8s} {'spec p90':>8s} {'in range':>8s}")
    by = {}
    for p in points:
        by.setdefault((p["system"], p["nodes"]), []).append(p)
    for (system, nodes), ps in list(by.items()) + [(("all points", ""), points)]:
        e = np.abs([1 / p["ratio"] - 1 for p in ps])
        e0 = np.abs([1 / p["spec_ratio"] - 1 for p in ps])
        inside = np.mean([p["low"] <= p["ratio"] <= p["high"] for p in ps])
        print(f"{system[:58]:58s} {nodes!s:>5s} {len(ps):4d} {np.median(e):6.1%} "
              f"{np.percentile(e, 90):6.1%} {np.median(e0):8.1%} "
              f"{np.percentile(e0, 90):8.1%} {inside:8.0%}")
    ratios = [p["ratio"] for p in points]
    lo, hi = np.percentile(ratios, [10, 90])
    print(f"10-90 % band of measured/predicted busbw: ({lo:.3f}, {hi:.3f})")
    return lo, hi


def main():
    t0 = time.perf_counter()
    sizes = C.holdout_points("sizes")
    t1 = time.perf_counter()
    nodes = C.holdout_points("nodes")
    t2 = time.perf_counter()
    table(sizes, "size split: fit ~4 sizes of a run, predict its other sizes")
    table(nodes, "node split: fit the 2-node run, predict other node counts")
    print(f"\nHELDOUT_BANDS in course_lib/calibrating.py: {C.HELDOUT_BANDS}")
    print(f"time: size split {t1 - t0:.1f} s, node split {t2 - t1:.1f} s")


if __name__ == "__main__":
    main()
