"""Tests of course_lib.measure.harness: timing, the alpha-beta fit, records, results."""

import csv
import io
import json
import math
import time

import numpy as np
import pytest

from course_lib.measure import harness
from course_lib.measure.harness import (AlphaBetaFit, LabResult, Timing,
                                        fit_alpha_beta, load_lab_result,
                                        plot_records, records_to_array,
                                        records_to_csv, time_call)


# --- Timing / time_call ------------------------------------------------------
def test_timing_quartiles_match_hand_computation():
    # 1..9: median 5; linear-interpolated quartiles at positions 2 and 6 -> 3 and 7
    t = Timing.from_samples([9, 1, 8, 2, 7, 3, 6, 4, 5])
    assert (t.median_s, t.q1_s, t.q3_s, t.min_s, t.max_s) == (5, 3, 7, 1, 9)
    assert t.spread_s == 4
    with pytest.raises(ValueError, match="samples_s"):
        Timing.from_samples([])


def test_time_call_counts_warmup_repeats_and_number():
    calls = []
    t = time_call(lambda: calls.append(1), warmup=2, repeats=5, number=3)
    assert len(calls) == (2 + 5) * 3
    assert t.n_repeats == 5 and len(t.samples_s) == 5
    assert not t.budget_exhausted


def test_time_call_setup_is_fresh_each_sample_and_untimed():
    made, torn = [], []

    def setup():
        time.sleep(0.02)            # untimed
        made.append(object())
        return made[-1]

    seen = []
    t = time_call(lambda s: seen.append(s), setup=setup,
                  teardown=lambda s: torn.append(s), warmup=1, repeats=4)
    assert len(made) == 5 and len(set(map(id, made))) == 5
    assert seen == made and torn == made
    assert t.max_s < 0.01           # the 20 ms of setup were not counted


def test_time_call_measures_a_known_sleep():
    t = time_call(lambda: time.sleep(0.005), warmup=0, repeats=3)
    assert 0.004 < t.median_s < 0.2


def test_time_call_budget_stops_and_says_so():
    t0 = time.monotonic()
    t = time_call(lambda: time.sleep(0.01), warmup=0, repeats=1000, budget_s=0.1,
                  min_repeats=3)
    assert time.monotonic() - t0 < 1.0
    assert t.budget_exhausted and 3 <= t.n_repeats < 1000


@pytest.mark.parametrize("kw, exc", [({"repeats": 0}, ValueError),
                                     ({"warmup": -1}, ValueError),
                                     ({"number": 1.5}, ValueError),
                                     ({"budget_s": 0}, ValueError)])
def test_time_call_rejects_bad_arguments(kw, exc):
    with pytest.raises(exc):
        time_call(lambda: None, **kw)
    with pytest.raises(TypeError, match="fn"):
        time_call(42)


# --- fit_alpha_beta ------------------------------------------------------------
def test_fit_recovers_exact_alpha_and_bandwidth():
    alpha, bw = 7e-6, 12e9
    sizes = np.geomspace(1e3, 1e9, 13)
    fit = fit_alpha_beta(sizes, alpha + sizes / bw)
    a, b = fit                                  # unpacks as a pair
    assert a == pytest.approx(alpha, rel=1e-9) and b == pytest.approx(bw, rel=1e-9)
    assert fit.r_squared == pytest.approx(1.0)
    assert np.allclose(fit.residuals_s, 0, atol=1e-15)
    assert fit.half_bw_bytes == pytest.approx(alpha * bw)
    assert fit.predict_s(1e6) == pytest.approx(alpha + 1e6 / bw)


def test_fit_is_robust_to_one_disturbed_point_and_ols_is_not():
    alpha, bw = 5e-6, 2e9
    sizes = np.geomspace(1e3, 1e8, 11)
    times = alpha + sizes / bw
    times[3] *= 5                              # another process interfered
    robust = fit_alpha_beta(sizes, times)
    plain = fit_alpha_beta(sizes, times, robust=False)
    assert robust.alpha_s == pytest.approx(alpha, rel=0.02)
    assert robust.bw_bytes_per_s == pytest.approx(bw, rel=0.02)
    assert abs(plain.alpha_s - alpha) > abs(robust.alpha_s - alpha)


def test_fit_relative_weighting_keeps_small_sizes_honest():
    # with noise proportional to the time, OLS loses alpha; relative keeps it
    rng = np.random.default_rng(1)
    sizes = np.repeat(np.geomspace(1e2, 1e9, 8), 5)
    times = (2e-6 + sizes / 10e9) * rng.lognormal(0, 0.02, sizes.size)
    rel = fit_alpha_beta(sizes, times)
    assert rel.alpha_s == pytest.approx(2e-6, rel=0.1)
    assert rel.bw_bytes_per_s == pytest.approx(10e9, rel=0.05)


def test_fit_negative_intercept_is_refitted_through_zero():
    sizes = np.array([1e6, 2e6, 4e6])
    fit = fit_alpha_beta(sizes, sizes / 1e9 - 1e-5 + np.array([0, 0, 0]))
    assert fit.alpha_s == 0.0 and fit.bw_bytes_per_s > 0
    assert "alpha fixed at 0" in fit.weighting


def test_fit_flat_times_give_infinite_bandwidth():
    fit = fit_alpha_beta([1e3, 1e4, 1e5], [3e-6, 3e-6, 2.9e-6])
    assert math.isinf(fit.bw_bytes_per_s)
    assert fit.alpha_s == pytest.approx(2.95e-6, rel=0.03)


@pytest.mark.parametrize("n, t, exc, msg", [
    ([1, 2], [1.0], ValueError, "same length"),
    ([5, 5, 5], [1.0, 1.0, 1.0], ValueError, "two distinct"),
    ([1, 2], [1.0, 0.0], ValueError, "times_s"),
    ([-1, 2], [1.0, 2.0], ValueError, "n_bytes"),
    (["a", "b"], [1.0, 2.0], TypeError, "sequences"),
])
def test_fit_rejects_bad_input(n, t, exc, msg):
    with pytest.raises(exc, match=msg):
        fit_alpha_beta(n, t)
    with pytest.raises(ValueError, match="weighting"):
        fit_alpha_beta([1, 2], [1, 2], weighting="log")


# --- records -----------------------------------------------------------------
RECS = [{"variant": "a", "n_bytes": 8, "median_s": 1e-6, "ok": True,
         "samples_s": [1e-6, 2e-6]},
        {"variant": "b", "n_bytes": 16, "extra": "x"}]


def test_records_to_csv_round_trip(tmp_path):
    path = tmp_path / "sub" / "r.csv"
    text = records_to_csv(RECS, path)
    assert path.read_text() == text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["variant"] for r in rows] == ["a", "b"]
    assert rows[0]["n_bytes"] == "8" and rows[1]["median_s"] == ""
    assert json.loads(rows[0]["samples_s"]) == [1e-6, 2e-6]
    with pytest.raises(TypeError):
        records_to_csv({"variant": "a"})


def test_records_to_array_types_and_missing_values():
    a = records_to_array(RECS)
    assert a.dtype.names == ("variant", "n_bytes", "median_s", "ok", "extra")
    assert a["n_bytes"].tolist() == [8.0, 16.0]
    assert math.isnan(a["median_s"][1])
    assert a["ok"].dtype == bool and a["extra"][1] == "x"
    sub = records_to_array(RECS, fields=["n_bytes"])
    assert sub.dtype.names == ("n_bytes",)


def test_plot_records_returns_axes_with_one_line_per_variant():
    import matplotlib
    matplotlib.use("Agg")
    recs = [{"variant": v, "n_bytes": n, "median_s": n / 1e9 + 1e-6,
             "q1_s": n / 1e9, "q3_s": n / 1e9 + 2e-6,
             "bw_bytes_per_s": n / (n / 1e9 + 1e-6)}
            for v in ("x", "y") for n in (1e3, 1e6)]
    fits = {"x": fit_alpha_beta([1e3, 1e6], [1e3 / 1e9 + 1e-6, 1e6 / 1e9 + 1e-6])}
    ax = plot_records(recs, fits=fits)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["x", "y"]
    assert ax.get_xscale() == "log"
    import matplotlib.pyplot as plt
    plt.close(ax.figure)


# --- LabResult -----------------------------------------------------------------
def _result():
    recs = [harness.rate_record("demo", "v", n, Timing.from_samples([n / 1e9 + 1e-6] * 3))
            for n in (1e3, 1e5, 1e7)]
    res = LabResult(name="demo", records=recs)
    res.fits["v"] = fit_alpha_beta([r["n_bytes"] for r in recs],
                                   [r["median_s"] for r in recs])
    res.summary["x_bw_bytes_per_s"] = 1e9
    return res


def test_lab_result_save_and_load(tmp_path):
    res = _result()
    path = res.save(tmp_path)
    assert path == tmp_path / "demo.csv" and path.is_file()
    back = load_lab_result("demo", tmp_path)
    assert back.name == "demo" and len(back.records) == 3
    assert back.fits["v"].bw_bytes_per_s == pytest.approx(1e9, rel=1e-6)
    assert back.fits["v"].alpha_s == pytest.approx(1e-6, rel=1e-6)
    assert back.summary == res.summary
    with pytest.raises(FileNotFoundError, match="no saved result"):
        load_lab_result("nothing", tmp_path)


def test_lab_result_table_and_default_dir(tmp_path, monkeypatch):
    res = _result()
    text = res.table()
    assert "demo" in text and "IQR" in text and "fit v" in text
    monkeypatch.setenv("COURSE_LAB_RESULTS", str(tmp_path / "lr"))
    assert harness.default_results_dir() == tmp_path / "lr"
    assert res.save().parent == tmp_path / "lr"
    assert isinstance(res.fits["v"], AlphaBetaFit)
    assert res.to_dict()["records"][0]["variant"] == "v"


def test_plot_records_error_bars_survive_a_quartile_equal_to_the_median():
    """Rounding used to turn a zero-width error bar negative (matplotlib raised)."""
    import matplotlib
    matplotlib.use("Agg")
    from course_lib.measure.harness import plot_records

    m = 0.0001985931932048044                # m - m * m / m < 0 in floating point
    recs = [{"variant": "v", "n_bytes": n, "median_s": m, "q1_s": m, "q3_s": m * 1.1,
             "bw_bytes_per_s": n / m} for n in (8, 64, 512)]
    for y in ("median_s", "bw_bytes_per_s"):
        ax = plot_records(recs, y=y)
        assert ax.get_lines()
