"""Tests for course_lib.plots: each plot returns Axes holding the data it was given."""

import os

import numpy as np
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


def test_timeline_puts_compute_and_sends_on_separate_lanes_in_ms():
    """Chapter 8's overlap figure: compute and communication never share a lane."""
    from course_lib.sim import Network
    from course_lib.sim.workloads import data_parallel_step

    net = Network.from_cluster(cl.cluster("H100", gpus_per_node=4, fabric="pcie"))
    r = data_parallel_step(net, [2.5e7] * 4, [0.005] * 4, bucket_bytes=5e7, overlap=True)
    ax = plots.plot_timeline(r)
    assert len(ax.get_yticks()) == 4                       # still one row per GPU
    assert ax.get_xlabel() == "time (ms)"                  # a 20 ms step reads in ms
    lanes = {"compute": [], "send": []}
    for coll in ax.collections:
        colours = {tuple(np.round(c, 3)) for c in coll.get_facecolor()}
        kind = "compute" if colours == {tuple(np.round(matplotlib.colors.to_rgba(
            "tab:orange"), 3))} else "send"
        for path in coll.get_paths():
            y = path.vertices[:, 1]
            lanes[kind].append((y.min(), y.max()))
    assert lanes["compute"] and lanes["send"]
    for c_lo, c_hi in lanes["compute"]:                    # no compute bar overlaps a send bar
        for s_lo, s_hi in lanes["send"]:
            assert c_hi <= s_lo + 1e-9 or s_hi <= c_lo + 1e-9
    # the bars still cover the trace, in ms
    widths = sum(p.get_extents().width for c in ax.collections for p in c.get_paths())
    busy = float((r.trace.rows["end_s"] - r.trace.rows["start_s"]).sum()) * 1e3
    assert widths == pytest.approx(busy, rel=1e-6)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["compute (upper lane)", "send (communication, lower lane)"]
    # a short collective stays in µs
    assert plots.plot_timeline(_sim()).get_xlabel() == "time (µs)"
