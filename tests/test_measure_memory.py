"""Tests of course_lib.measure.memory: the pageable / resident / locked lab."""

import mmap

import numpy as np
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


def test_staging_through_a_bounce_buffer_costs_a_second_pass(res):
    # the staged copy moves every byte twice (into the bounce buffer, out of it):
    # slower than the direct copy of the same resident source, but it faults no page
    staged = res.select("staged")[-1]["median_s"]
    resident = res.select("resident")[-1]["median_s"]
    fresh = res.select("fresh")[-1]["median_s"]
    assert resident < staged < fresh
    assert res.summary["staged_over_resident"] < 1
    assert res.metadata["bounce_bytes"] == memory.BOUNCE_BYTES


def test_staged_copy_delivers_every_byte():
    rng = np.random.default_rng(1)
    src = rng.integers(0, 256, 10_000, dtype=np.uint8)
    for chunk in (1, 7, 4096, 20_000):
        dst = np.zeros_like(src)
        memory.staged_copy(dst, src, np.empty(chunk, np.uint8))
        assert np.array_equal(dst, src)
    with pytest.raises(ValueError, match="dst"):
        memory.staged_copy(np.zeros(5, np.uint8), src, np.empty(8, np.uint8))


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
                                     ({"budget_s": -1}, "budget_s"),
                                     ({"bounce_bytes": 100}, "bounce_bytes")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        pageable_lab(**kw, progress=False)
