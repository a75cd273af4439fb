"""Tests of course_lib.measure.batching: many small copies vs one big one."""

import pytest

from course_lib.analytic import batched_transfer_time_s
from course_lib.measure.batching import batching_lab


@pytest.fixture(scope="module")
def res():
    return batching_lab(2**16, (2**6, 2**10, 2**16), repeats=3, progress=False)


def test_records(res):
    assert sorted(res.variants()) == ["many-small", "one-big"]
    big = res.select("one-big")[0]
    assert big["n_bytes"] == 2**16 and big["n_calls"] == 1
    for r in res.select("many-small"):
        assert r["n_calls"] * r["n_bytes"] == 2**16
        assert r["per_call_s"] == pytest.approx(r["median_s"] / r["n_calls"])
        assert r["bw_bytes_per_s"] == pytest.approx(2**16 / r["median_s"])


def test_many_small_calls_cost_more_than_one_big(res):
    big = res.select("one-big")[0]["median_s"]
    small = res.select("many-small")[0]            # 1024 calls of 64 B
    assert small["median_s"] > 5 * big
    assert res.summary["per_call_overhead_s"] > 0
    assert res.summary["slowdown_smallest"] > 5


def test_model_uses_the_fitted_alpha_and_b(res):
    fit = res.fits["many-small"]
    assert fit.alpha_s > 0
    for r in res.select("many-small"):
        expected = batched_transfer_time_s(r["n_calls"], r["n_bytes"],
                                           fit.bw_bytes_per_s, fit.alpha_s,
                                           batched=False)
        assert r["model_time_s"] == pytest.approx(expected)


@pytest.mark.parametrize("kw, msg", [
    ({"total_bytes": 1000, "piece_sizes_bytes": [3]}, "does not divide"),
    ({"total_bytes": 2**20, "piece_sizes_bytes": [1]}, "at most 65536"),
    ({"total_bytes": 0}, "total_bytes"),
    ({"repeats": 0}, "repeats"),
])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        batching_lab(**kw, progress=False)
