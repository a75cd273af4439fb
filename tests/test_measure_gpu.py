"""Tests of course_lib.measure.gpu: the skip path and pure helpers everywhere,
the real lab where CuPy and a GPU exist (marked gpu)."""

import pytest

from course_lib.measure import gpu
from course_lib.measure.gpu import (PINNED_TARGET_FRACTION, copies_per_sample,
                                    gpu_available, gpu_copies_lab,
                                    summarise_gpu_records)

OK, WHY, N_DEV = gpu_available()


def test_gpu_available_never_raises_and_explains():
    assert isinstance(OK, bool) and isinstance(N_DEV, int)
    if not OK:
        assert WHY and N_DEV == 0


def test_no_gpu_gives_a_skipped_result(monkeypatch):
    monkeypatch.setattr(gpu, "gpu_available",
                        lambda: (False, "CuPy is not available", 0))
    res = gpu_copies_lab(quick=True, progress=False)
    assert res.skipped == "CuPy is not available"
    assert res.records == [] and "skipped" in res.table()


def test_missing_cupy_is_reported(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cupy(name, *a, **k):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    ok, why, n = gpu_available()
    assert (ok, n) == (False, 0) and "pip install cupy" in why


def test_copies_per_sample():
    assert copies_per_sample(1) == 50
    assert copies_per_sample(2**20) == 50
    assert copies_per_sample(2**22) == 16          # 64 MiB / 4 MiB
    assert copies_per_sample(2**30) == 1
    with pytest.raises(ValueError, match="n_bytes"):
        copies_per_sample(0)


def test_summary_checks_the_pinned_target():
    recs = [{"variant": "h2d-pinned", "n_bytes": 2**20, "bw_bytes_per_s": 20e9},
            {"variant": "h2d-pinned", "n_bytes": 2**30, "bw_bytes_per_s": 44e9},
            {"variant": "d2h-pinned", "n_bytes": 2**30, "bw_bytes_per_s": 50e9},
            {"variant": "h2d-pageable", "n_bytes": 2**30, "bw_bytes_per_s": 11e9},
            {"variant": "d2d", "n_bytes": 2**30, "bw_bytes_per_s": 2000e9},
            {"variant": "small-h2d-pinned-wall", "n_bytes": 8, "median_s": 3e-6,
             "bw_bytes_per_s": 8 / 3e-6}]
    s = summarise_gpu_records(recs)
    assert s["best_copy_bw_bytes_per_s"] == 50e9           # d2d is not a copy over PCIe
    # the best pinned H2D (44, at 1 GiB) over the best copy (50, D2H)
    assert s["pinned_h2d_fraction_of_best"] == pytest.approx(0.88)
    assert s["pinned_h2d_target_met"] is (0.88 >= PINNED_TARGET_FRACTION)
    recs.append({"variant": "h2d-pinned", "n_bytes": 2**28, "bw_bytes_per_s": 47e9})
    s = summarise_gpu_records(recs)
    assert s["pinned_h2d_fraction_of_best"] == pytest.approx(0.94)
    assert s["pinned_h2d_target_met"] is True
    assert s["h2d_pinned_bw_bytes_per_s"] == 44e9          # still the largest size
    assert s["pageable_over_pinned_h2d"] == pytest.approx(0.25)
    assert s["h2d_pinned_bw_bytes_per_s"] == 44e9          # the largest size
    assert s["small_copy_latency_s"] == 3e-6


def test_bad_arguments():
    with pytest.raises(ValueError, match="variants"):
        gpu_copies_lab(variants=["h2d-magic"], progress=False)
    with pytest.raises(ValueError, match="sizes_bytes"):
        gpu_copies_lab(sizes_bytes=[1], progress=False)


@pytest.mark.gpu
@pytest.mark.skipif(not OK, reason=f"no GPU lab here: {WHY}")
def test_gpu_copies_on_a_real_gpu():
    res = gpu_copies_lab(sizes_bytes=(2**10, 2**20, 2**26), repeats=3,
                         progress=False, multi_gpu=True)
    assert res.skipped is None
    for v in ("h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable", "d2d"):
        rows = res.select(v)
        assert [r["n_bytes"] for r in rows] == [2**10, 2**20, 2**26]
        assert rows[-1]["bw_bytes_per_s"] > rows[0]["bw_bytes_per_s"]
    assert 0 < res.summary["pinned_h2d_fraction_of_best"] <= 1
    assert res.summary["small_copy_latency_s"] < 1e-3
    if N_DEV >= 2:
        nccl = [r for r in res.records if r["variant"].startswith("nccl")]
        assert not nccl or all(r["wrong"] == 0 for r in nccl)
