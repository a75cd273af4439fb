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
    out.update(_exercise2(c16))
    out.update(_table_notes())
    return out


def _exercise2(c16) -> dict[str, str]:
    """Where 16 DGX H100 nodes switch algorithm (bisected), and NCCL's estimates at 4 GiB."""
    import math

    from ..hardware import nccl_tuning
    from ..predict import _nccl_estimate_s, predict_collective
    from ..units import GiB, MiB, format_time

    def algo(s):
        return predict_collective("allreduce", s, c16).algorithm

    def switch(lo, hi):
        """The size where the algorithm changes between ``lo`` and ``hi`` (bytes)."""
        a = algo(lo)
        while hi / lo > 1.001:
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if algo(mid) == a else (lo, mid)
        return hi

    sizes = [2.0 ** k for k in range(20, 36)]
    changes = [(a, b) for a, b in zip(sizes, sizes[1:]) if algo(a) != algo(b)]
    (t_lo, t_hi), (n_lo, n_hi) = changes[:2]
    est = {k: _nccl_estimate_s("allreduce", 4 * GiB, c16, *k)
           for k in (("ring", "simple"), ("tree", "simple"), ("nvls", "simple"))}
    return {"ex2_tree_to_nvls": f"{switch(t_lo, t_hi) / MiB:.0f} MiB",
            "ex2_nvls_to_ring": f"{switch(n_lo, n_hi) / GiB:.1f} GiB",
            "ex2_second": algo(n_lo), "ex2_third": algo(n_hi),
            "ex2_node_chain": str(c16.gpus_per_node - 1),
            "ex2_tree_levels": str(math.ceil(math.log2(c16.nodes))),
            "ex2_ring_steps": str(2 * (c16.n_ranks - 1)),
            "ex2_tree_eff": f"{nccl_tuning('tree_efficiency'):g} ×",
            "ex2_est_ring": format_time(est[("ring", "simple")]),
            "ex2_est_tree": format_time(est[("tree", "simple")]),
            "ex2_est_nvls_tree": format_time(est[("nvls", "simple")])}


def _table_notes() -> dict[str, str]:
    """The held-out table's notes, from the validation CSV and the model."""
    from ..clusters import split_launch_gpus
    from ..hardware import NETWORK, calibration, nccl_hop_s
    from ..predict import validation_rows
    from ..units import GiB, format_time

    rows = validation_rows(split="heldout")

    def at(prefix, n_bytes, nodes=None):
        return [r for r in rows if r["system"].startswith(prefix) and r["n_bytes"] == n_bytes
                and (nodes is None or int(r["nodes"]) == nodes) and r["collective"] == "AllReduce"]

    # same hardware, another cluster: gj-aion at 4 and 8 nodes against the four VMs, 8 GiB
    (vm,) = at("H100 x4 VMs", 8 * GiB, 4)
    other = [r for r in at("H100 x2/x4/x8 nodes", 8 * GiB) if int(r["nodes"]) in (4, 8)]
    less = [1 - r["measured_busbw"] / vm["measured_busbw"] for r in other]
    high = [r["rel_error"] for r in other]
    # software generations: two p4d on NCCL 2.8.3 (EKS) against 2.9.9, 2 nodes, 1 GiB
    (old,) = at("AWS p4d.24xlarge x2 on EKS", GiB, 2)
    (new,) = at("AWS p4d(n).24xlarge", GiB, 2)
    # the 2019 p3dn runs: going from 4 to 8 nodes adds 2 x 4 network steps and the rest
    # NVLink steps to an 8-byte ring (2(n - 1) steps, 2 per node across the network)
    p3dn = {int(r["nodes"]): r for r in at("AWS p3dn.24xlarge", 8)}
    a, b = p3dn[4], p3dn[8]
    steps = [2 * (int(r["gpus"]) - 1) for r in (a, b)]
    net = [2 * int(r["nodes"]) for r in (a, b)]
    added_net = net[1] - net[0]
    added_nvlink = (steps[1] - steps[0]) - added_net
    per_net = ((float(b["time_us"]) - float(a["time_us"])) * 1e-6
               - added_nvlink * nccl_hop_s("ring", "ll", "nvlink")) / added_net
    launch = calibration("launch_s") / calibration("launch_gpus")
    (dgx2,) = at("DGX-2, 12 of 16", 8)
    _, g = split_launch_gpus(dgx2["cluster"])
    return {"other_less": _span(less), "other_high": _span(high),
            "p4d_old_share": _pct(old["measured_busbw"] / new["measured_busbw"]),
            "p3dn_net_step": format_time(per_net, digits=2),
            "efa_hop": format_time(NETWORK["EFA_hop_s"].value, digits=2),
            "launch_one": format_time(launch, digits=2),
            "dgx2_launch_gpus": str(g),
            "dgx2_launch": format_time(g * launch, digits=2)}


def values() -> dict[str, str]:
    return dict(_compute())
