"""Tests of course_lib.measure.memory: the pageable / resident / locked lab."""

import mmap

import pytest

from course_lib.measure import memory
from course_lib.measure.memory import lock_memory, pageable_lab

SIZES = (2**16, 2**20)


@pytest.fixture(scope="module")
def res():
    return pageable_lab(SIZES, repeats=3, budget_s=0.5, progress=False)


def test_records_cover_every_variant_and_size(res):
    variants = set(res.variants())
    assert {"fresh", "resident"} <= variants
    for v in variants:
        assert [r["n_bytes"] for r in res.select(v)] == list(SIZES)
    for r in res.records:
        assert r["median_s"] > 0 and r["spread_s"] >= 0
        assert r["q1_s"] <= r["median_s"] <= r["q3_s"]
        assert r["bw_bytes_per_s"] == pytest.approx(r["n_bytes"] / r["median_s"])
        assert r["repeats"] == len(r["samples_s"]) >= 3


def test_fresh_pages_cost_more_than_resident_ones(res):
    # 1 MiB fresh = 256 page faults (each ~0.1-1 us plus zeroing a page)
    # against one cached memcpy: the fault tax is large on any machine
    fresh = res.select("fresh")[-1]["median_s"]
    resident = res.select("resident")[-1]["median_s"]
    assert fresh > 2 * resident
    assert res.summary["fresh_over_resident"] < 0.5


def test_locked_variant_or_a_clear_note(res):
    if "locked" in res.variants():
        locked = res.select("locked")[-1]["median_s"]
        fresh = res.select("fresh")[-1]["median_s"]
        assert locked < fresh                   # locked pages are resident
        assert "pin-fresh" in res.variants()
    else:
        assert any("RLIMIT_MEMLOCK" in n for n in res.notes)


def test_fits_and_summary(res):
    for v in res.variants():
        fit = res.fits[v]
        assert fit.alpha_s >= 0 and fit.bw_bytes_per_s > 0
        assert res.summary[f"{v.replace('-', '_')}_bw_bytes_per_s"] > 0
    assert res.metadata["page_bytes"] == mmap.PAGESIZE


def test_lock_memory_checks_its_argument():
    with pytest.raises(TypeError, match="mmap"):
        lock_memory(bytearray(10))


def test_mlock_refusal_becomes_a_note(monkeypatch):
    def refuse(buf):
        raise OSError(12, "mlock refused: RLIMIT_MEMLOCK = 8 MiB")
    monkeypatch.setattr(memory, "lock_memory", refuse)
    res = pageable_lab((2**16,), variants=("resident", "locked"), repeats=1,
                       progress=False)
    assert res.variants() == ["resident"]
    assert any("RLIMIT_MEMLOCK" in n for n in res.notes)


@pytest.mark.parametrize("kw, msg", [({"sizes_bytes": [100]}, "sizes_bytes"),
                                     ({"variants": ["pinned"]}, "variants"),
                                     ({"repeats": 0}, "repeats"),
                                     ({"budget_s": -1}, "budget_s")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        pageable_lab(**kw, progress=False)
