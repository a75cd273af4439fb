"""Error of course_lib.predict on the fit data and on held-out public runs.

1. Calibration (fit) curves, course_lib/data/calibration_measurements.csv: per curve,
   the median and worst relative error of busbw (or of the copy bandwidth,
   for the PCIe curves) at >= 1 MiB and over all sizes.
2. Held-out systems, course_lib/data/validation/nccl_tests_public.csv rows with
   split=heldout (public nccl-tests results from machines no number of the
   model was set on): per system, the median and 90th percentile of
   |busbw error| at >= 1 MiB and the median over all sizes, then the same
   pooled over every held-out point.  Each run is predicted with its own
   nccl-tests ``-g`` (``launch_gpus=`` in the CSV's cluster column) where its
   source shows it.

``--fit`` re-runs the small grid search that chose the fitted constants in
``hardware.CALIBRATION`` (launch_s, nvls_latency_s, chunk_bytes) and prints
the best values; it does not change the catalog.

Run: .venv/bin/python benchmarks/bench_calibration.py [--fit]
"""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import course_lib as cl  # noqa: E402
from course_lib import hardware, predict  # noqa: E402

MIB = 2**20


def errors(curves=None):
    curves = curves or predict.calibration_curves()
    out = {}
    for (system, coll), c in curves.items():
        gpu, g, fabric = predict.CALIBRATION_SYSTEMS[system]
        sizes = np.array(c["n_bytes"])
        if coll == "AllReduce":
            clus = cl.cluster(gpu, g, fabric=fabric)
            pred = np.array([cl.predict_collective("allreduce", s, clus).busbw_bytes_per_s
                             for s in sizes])
            meas = np.array(c["busbw_bytes_per_s"])
        else:
            direction = coll.split("_")[0].lower()
            pred = np.array([cl.predict_copy(s, gpu, direction).bw_bytes_per_s
                             for s in sizes])
            meas = np.array(c["algbw_bytes_per_s"])
        rel = np.abs(pred / meas - 1)
        out[(system, coll)] = (sizes, rel)
    return out


def report():
    print(f"{'curve':55s} {'median>=1MiB':>12s} {'worst>=1MiB':>12s} "
          f"{'median all':>11s} {'worst all':>10s}")
    for (system, coll), (sizes, rel) in errors().items():
        big = sizes >= MIB
        print(f"{system + ' ' + coll:55s} {np.median(rel[big]):12.1%} "
              f"{rel[big].max():12.1%} {np.median(rel):11.1%} {rel.max():10.1%}")
    print("note: D2H_pinned above 2 MB drops to ~20.5 GB/s on that host (an anomaly "
          "the CSV flags); the model does not follow it.")
    print()
    heldout_report()


def _pct(x):
    return "    n/a" if np.isnan(x) else f"{x:7.1%}"


def heldout_report():
    rows = predict.validation_rows(split="heldout")
    print(f"held-out systems ({len(rows)} points; never used to set a number)")
    print(f"{'system':58s} {'n':>3s} {'n>=1MiB':>7s} {'median>=1MiB':>12s} "
          f"{'p90>=1MiB':>9s} {'median all':>10s}")
    for system, e in predict.validation_errors(rows).items():
        print(f"{system[:58]:58s} {e['n']:3d} {e['n_big']:7d} {_pct(e['median_big']):>12s} "
              f"{_pct(e['p90_big']):>9s} {_pct(e['median_all']):>10s}")
    for label, keep in (("pooled, every held-out point", lambda r: True),
                        ("pooled, without runs their reporters call anomalous",
                         lambda r: not r["note"].startswith("reporter-flagged"))):
        rs = [r for r in rows if keep(r)]
        err = np.abs([r["rel_error"] for r in rs])
        big = np.array([r["n_bytes"] >= MIB for r in rs])
        print(f"{label:58s} {len(rs):3d} {int(big.sum()):7d} "
              f"{_pct(np.median(err[big])):>12s} {_pct(np.percentile(err[big], 90)):>9s} "
              f"{_pct(np.median(err)):>10s}")
    per_sys = predict.validation_errors(rows)
    med = [e["median_big"] for e in per_sys.values() if not np.isnan(e["median_big"])]
    print(f"{'median over systems of the per-system median >= 1 MiB':58s} "
          f"{len(med):3d} {'':7s} {_pct(float(np.median(med))):>12s}")


def fit():
    curves = {k: v for k, v in predict.calibration_curves().items() if k[1] == "AllReduce"}
    best = []
    for launch in np.arange(20, 36, 1) * 1e-6:
        for nvls in np.arange(2, 12, 1) * 1e-6:
            for chunk in (0.5e6, 1e6, 2e6, 3e6, 4e6):
                patch = dict(hardware.CALIBRATION)
                for name, v in (("launch_s", launch), ("nvls_latency_s", nvls),
                                ("chunk_bytes", chunk)):
                    patch[name] = hardware.Fact(v, "x", "n/a", "grid")
                with mock.patch.dict(hardware.CALIBRATION, patch):
                    logerr = []
                    for (system, _), c in curves.items():
                        gpu, g, fabric = predict.CALIBRATION_SYSTEMS[system]
                        clus = cl.cluster(gpu, g, fabric=fabric)
                        for s, a in zip(c["n_bytes"], c["algbw_bytes_per_s"]):
                            t = cl.predict_collective("allreduce", s, clus).time_s
                            logerr.append(abs(np.log(t / (s / a))))
                best.append((float(np.mean(logerr)), launch, nvls, chunk))
    best.sort()
    for e, launch, nvls, chunk in best[:5]:
        print(f"mean |log error| {e:.4f}: launch_s={launch * 1e6:.0f} us, "
              f"nvls_latency_s={nvls * 1e6:.0f} us, chunk_bytes={chunk / 1e6:g} MB")


if __name__ == "__main__":
    fit() if "--fit" in sys.argv[1:] else report()
