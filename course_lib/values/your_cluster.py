"""The optional notebook your_cluster's named values: every number its prose prints, computed.

``values()`` returns ``{name: text}``; ``notebooks/your_cluster.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

The error figures are *statistics of the held-out points* (median and 90th
percentile of ``|predicted / measured - 1|`` of busbw), computed here from
``course_lib/data/validation/nccl_tests_public.csv`` with
:func:`course_lib.predict.validation_errors`: a median says that half the
points miss by less and half by more, not that every point lies within it.

>>> v = values()
>>> v["heldout_points"], v["heldout_median_big"], v["heldout_p90_big"]
('346', '17 %', '131 %')
"""

from __future__ import annotations

from functools import lru_cache

#: The notebook's groups of held-out systems (prefixes of the CSV's system names).
HOLDS = ("HGX H200", "HGX A100 x2", "A100 x8 node", "Dell XE9680", "H100 x4 VMs",
         "AWS p4d(n)", "Dell XE8545", "Lambda 4x H100")
VOLTA = ("8x V100-SXM2", "DGX-2")
#: "Big" messages: the notebook quotes errors from 1 MiB up.
MIN_BYTES = 2 ** 20


def _pct(x: float, decimals: int = 0) -> str:
    return f"{x:.{decimals}%}".replace("%", " %")


def _bench_pct(x: float) -> str:
    """As the calibration benchmarks print an error: one decimal below 10 %."""
    return f"{100 * x:.1f} %" if x < 0.1 else f"{100 * x:.0f} %"


def _span(values, decimals: int = 0) -> str:
    lo, hi = min(values), max(values)
    return f"{lo * 100:.{decimals}f}–{_pct(hi, decimals)}"


@lru_cache(maxsize=1)
def _compute() -> dict[str, str]:
    import numpy as np

    from ..clusters import cluster
    from ..hardware import NCCL_LINK_BW, nic
    from ..units import format_bandwidth
    from ..predict import predict_collective, validation_errors, validation_rows
    from ..units import MiB

    rows = validation_rows(split="heldout")
    errs = validation_errors(rows, MIN_BYTES)

    def group(prefixes):
        return [e for s, e in errs.items() if s.startswith(prefixes)]

    err = np.abs([r["rel_error"] for r in rows])
    big = np.array([r["n_bytes"] >= MIN_BYTES for r in rows])
    holds = group(HOLDS)
    volta = group(VOLTA)
    out = {
        "heldout_points": f"{len(rows)}",
        "heldout_big_points": f"{int(big.sum())}",
        "heldout_median_big": _pct(float(np.median(err[big]))),
        "heldout_p90_big": _pct(float(np.percentile(err[big], 90))),
        "heldout_median_all": _pct(float(np.median(err))),
        "holds_median": _span([e["median_big"] for e in holds]),
        "holds_p90": _span([e["p90_big"] for e in holds]),
        "volta_low": _span([e["median_big"] for e in volta]),
        "tcpxo_gbit": f"{nic('TCPXO-200').rate_gbit_per_s:g} Gb/s",
        "ib400_gbit": f"{nic('NDR').rate_gbit_per_s:g} Gb/s",
        "nccl_v100": format_bandwidth(NCCL_LINK_BW[70].value),
        "holds_max": _pct(max(e["median_big"] for e in holds)),
    }
    # the two tuned-on machines: the worst point of the model against their curves
    from ..hardware.fitted import CALIBRATION, SRC_CALIB
    from ..predict import calibration_curves

    curves = calibration_curves()
    worst = []
    for g, prefix in (("A100", "A100-SXM"), ("H100", "H100-SXM (HGX 8-GPU)")):
        c = curves[next(k for k in curves if k[0].startswith(prefix) and k[1] == "AllReduce")]
        worst += [abs(predict_collective("allreduce", n, cluster(g)).busbw_bytes_per_s / m - 1)
                  for n, m in zip(c["n_bytes"], c["busbw_bytes_per_s"])]
    out["tuned_worst"] = _pct(max(worst))
    # the constants fitted to those two machines' AllReduce curves
    fitted = [k for k, f in CALIBRATION.items()
              if f.source.startswith(SRC_CALIB) and "8x" in f.source]
    out["tuned_constants"] = f"{len(fitted)}"
    # calibrated on part of a public run, predicting the rest (benchmarks/bench_calibrate.py
    # and bench_calibrate_fresh.py print the same: calibrating.holdout_points)
    from .. import calibrating

    def stat(points, key="ratio"):
        e = np.abs([1 / q[key] - 1 for q in points])
        return _bench_pct(float(np.median(e))), _bench_pct(float(np.percentile(e, 90)))

    sizes, nodes = calibrating.holdout_points("sizes"), calibrating.holdout_points("nodes")
    fresh = calibrating.holdout_points("fresh")
    (out["cal_sizes_med"], out["cal_sizes_p90"]) = stat(sizes)
    (out["spec_sizes_med"], out["spec_sizes_p90"]) = stat(sizes, "spec_ratio")
    (out["cal_nodes_med"], out["cal_nodes_p90"]) = stat(nodes)
    out["spec_nodes_med"] = stat(nodes, "spec_ratio")[0]
    (out["fresh_med"], out["fresh_p90"]) = stat(fresh)
    out["fresh_runs"] = f"{len(list(calibrating.fresh_runs()))}"
    # the half-plateau answer (8x H100, NCCL's choice of algorithm): the predicted busbw
    # curve over 1 KiB .. 16 GiB and the measured one, each as a share of its own peak
    # (what chapter 7's explorer plots, computed here from predict and the calibration CSV)
    from ..hardware import calibration_rows

    h100 = cluster("H100")
    grid = 2.0 ** np.arange(10, 35)
    model = np.array([predict_collective("allreduce", s, h100).busbw_bytes_per_s for s in grid])
    share = dict(zip(grid, model / model.max()))
    rows_h = sorted((r for r in calibration_rows() if r["collective"] == "AllReduce"
                     and r["system"].startswith("H100-SXM (HGX 8-GPU)")),
                    key=lambda r: r["bytes"])
    meas = np.array([r["busbw_GBps"] for r in rows_h])
    mshare = dict(zip((r["bytes"] for r in rows_h), meas / meas.max()))
    out.update({"half_model_16": _pct(share[16 * MiB]), "half_model_8": _pct(share[8 * MiB]),
                "half_meas_16": _pct(mshare[16 * MiB]), "half_meas_64": _pct(mshare[64 * MiB])})
    # exercise 2: where 16 DGX H100 nodes switch algorithm
    c16 = cluster("H100", nodes=16, nic="NDR")
    sizes = [2.0 ** k for k in range(20, 36)]
    algos = [predict_collective("allreduce", s, c16).algorithm for s in sizes]
    out["ex2_ranks"] = f"{c16.n_ranks}"
    out["ex2_ring_tree_gap"] = _pct(1 / c16.n_ranks, 1)
    out["ex2_first"] = algos[0]
    return out


def values() -> dict[str, str]:
    return dict(_compute())
