"""Tests for course_lib.plots: each plot returns Axes holding the data it was given."""

import os

import pytest

matplotlib = pytest.importorskip("matplotlib")  # a declared dependency; never absent in CI
os.environ.setdefault("MPLBACKEND", "Agg")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import course_lib as cl  # noqa: E402
from course_lib import plots, predict  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _sim():
    return cl.simulate_collective("allreduce", 1e8, cl.cluster("H100", gpus_per_node=4),
                                  chunks=2)


def test_timeline_by_gpu_and_by_link():
    r = _sim()
    ax = plots.plot_timeline(r)
    assert len(ax.get_yticks()) == 4  # one row per GPU
    assert sum(len(c.get_paths()) for c in ax.collections) == len(r.trace)
    ax = plots.plot_timeline(r.trace, by="link")
    # every send crosses GPU->switch and switch->GPU: 8 directed links in use
    assert len(ax.get_yticks()) == 8
    with pytest.raises(ValueError, match="by"):
        plots.plot_timeline(r, by="colour")
    with pytest.raises(TypeError, match="trace"):
        plots.plot_timeline([1, 2])


def test_link_utilisation_is_a_fraction():
    r = _sim()
    fig, ax = plt.subplots()
    out = plots.plot_link_utilisation(r, ax=ax, bins=20, top=3)
    assert out is ax and len(ax.lines) == 3
    for line in ax.lines:
        y = line.get_ydata()
        assert 0 <= y.min() and y.max() <= 1.0 + 1e-9
        assert y.max() > 0.5  # the ring keeps its links busy


def test_sim_vs_bound_bars():
    r = _sim()
    ax = plots.plot_sim_vs_bound(r)
    bound, simulated = [p.get_height() for p in ax.patches]
    assert bound <= simulated
    assert simulated == pytest.approx(r.time_s * 1e6)


def test_busbw_vs_measured():
    curve = predict.calibration_curves()[("H100-SXM (HGX 8-GPU)", "AllReduce")]
    ax = plots.plot_busbw_vs_measured(cl.cluster("H100"), measured=curve)
    predicted, measured = ax.lines
    assert list(measured.get_ydata()) == pytest.approx(
        [b / 1e9 for b in curve["busbw_bytes_per_s"]])
    assert len(predicted.get_xdata()) >= len(curve["n_bytes"])
    ax = plots.plot_busbw_vs_measured(cl.cluster("A100"), sizes=[1e6, 1e9])
    assert len(ax.lines) == 1


def test_import_course_lib_does_not_import_pyplot():
    import subprocess
    import sys

    code = ("import sys, course_lib, course_lib.plots; "
            "print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "MPLBACKEND": ""})
    assert out.stdout.strip() == "False", out.stderr
