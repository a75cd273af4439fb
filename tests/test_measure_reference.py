"""The H200 reference run shipped with the course, and its plot (chapters 3-4)."""

import json

import pytest

from course_lib import hardware
from course_lib.measure import h200_copies
from course_lib.measure.reference import reference_path
from course_lib.plots import plot_copy_reference

GIB, MIB = 2**30, 2**20


@pytest.fixture(scope="module")
def ref():
    return h200_copies()


def _bw(ref, variant, n):
    return next(r["bw_bytes_per_s"] for r in ref.select(variant) if r["n_bytes"] == n)


def test_the_machine_is_described_and_matches_the_catalog(ref):
    m = ref.metadata
    assert m["gpu"] == "H200" and m["pcie_gen"] == 5 and m["pcie_lanes"] == 16
    assert hardware.gpu("H200").pcie_gen == m["pcie_gen"]
    assert "H200" in m["machine"] and "PCIe Gen5 x16" in m["machine"]
    assert set(m["variants"]) == set(ref.variants())


def test_headline_numbers(ref):
    line = hardware.pcie_bw_per_dir_bytes_per_s(5)
    assert _bw(ref, "h2d-pinned", GIB) == pytest.approx(55.4e9, rel=2e-3)
    assert _bw(ref, "h2d-pinned", GIB) / line == pytest.approx(0.88, abs=0.005)
    assert _bw(ref, "d2h-pinned", GIB) == pytest.approx(55.3e9, rel=2e-3)
    s = ref.summary
    assert s["pageable_h2d_peak_n_bytes"] == MIB
    assert s["pageable_h2d_peak_bw_bytes_per_s"] == pytest.approx(17.1e9, rel=5e-3)
    assert _bw(ref, "h2d-pageable", GIB) == pytest.approx(6.7e9, rel=5e-3)
    assert s["d2h_pageable_bw_bytes_per_s"] == pytest.approx(16.1e9, rel=5e-3)
    assert s["d2d_bw_bytes_per_s"] == pytest.approx(2.12e12, rel=5e-3)
    assert s["small_copy_latency_s"] == pytest.approx(7.3e-6, rel=5e-3)
    # physics: no measured copy beats the link's line rate
    for v in ("h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable"):
        assert max(r["bw_bytes_per_s"] for r in ref.select(v)) < line


def test_the_file_is_the_lab_output_unchanged(ref):
    raw = json.loads(reference_path().read_text())
    assert raw == ref.records
    for r in raw:
        assert r["lab"] == "gpu-copies"
        assert r["bw_bytes_per_s"] == pytest.approx(r["n_bytes"] / r["median_s"])
    with pytest.raises(ValueError, match="name must be one of"):
        reference_path("a100")


def test_plot_draws_reference_own_run_and_models(ref):
    import matplotlib
    matplotlib.use("Agg")
    own = [{"variant": "h2d-pinned", "n_bytes": 4096, "bw_bytes_per_s": 1e9},
           {"variant": "h2d-pinned", "n_bytes": MIB, "bw_bytes_per_s": 20e9},
           {"variant": "pageable-fresh", "n_bytes": MIB, "bw_bytes_per_s": 5e9}]
    ax = plot_copy_reference(ref, own=own)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "H200: h2d-pinned" in labels and "H200: d2h-pageable" in labels
    assert "your run: h2d-pinned" in labels
    assert not any("pageable-fresh" in lab for lab in labels)
    assert "model: pinned (alpha + n/B)" in labels and "model: pageable (alpha + n/B)" in labels
    mine = ax.get_lines()[labels.index("your run: h2d-pinned")]
    assert list(mine.get_ydata()) == [1.0, 20.0]               # GB/s
    line = ax.get_lines()[labels.index("PCIe Gen5 x16 line rate, one way")]
    assert line.get_ydata()[0] == pytest.approx(hardware.pcie_bw_per_dir_bytes_per_s(5) / 1e9)
    ax2 = plot_copy_reference(ref, models=False, variants="d2d")
    assert [ln.get_label() for ln in ax2.get_lines()] == ["H200: d2d"]


def test_plot_bad_input():
    with pytest.raises(ValueError, match="variants"):
        plot_copy_reference(variants=("h2d-magic",))
    with pytest.raises(TypeError, match="records"):
        plot_copy_reference(own=42)
