"""plots.plot_predicted_vs_measured draws the validation rows it is given."""

import pytest

matplotlib = pytest.importorskip("matplotlib")  # a declared dependency; never absent in CI
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from course_lib import plots, predict  # noqa: E402


def test_predicted_vs_measured_plots_every_row():
    rows = predict.validation_rows(split="heldout")
    fig, ax = plt.subplots()
    out = plots.plot_predicted_vs_measured(rows, ax=ax)
    assert out is ax
    systems = {r["system"] for r in rows}
    # one line per system plus the diagonal
    data_lines = [ln for ln in ax.lines if ln.get_linestyle() == "None"]
    assert len(data_lines) == len(systems)
    xs = np.concatenate([ln.get_xdata() for ln in data_lines])
    assert len(xs) == len(rows)
    assert np.allclose(sorted(xs), sorted(r["measured_busbw"] / 1e9 for r in rows))
    plt.close(fig)


def test_predicted_vs_measured_rejects_bad_input():
    with pytest.raises(ValueError, match="rows"):
        plots.plot_predicted_vs_measured([])
    rows = predict.validation_rows(split="fit")
    with pytest.raises(ValueError, match="band"):
        plots.plot_predicted_vs_measured(rows, band=1.5)


def test_error_by_size_plots_every_row_at_its_size():
    rows = predict.validation_rows(split="heldout")
    fig, ax = plt.subplots()
    assert plots.plot_validation_error_by_size(rows, ax=ax) is ax
    data_lines = [ln for ln in ax.lines if ln.get_linestyle() == "None"]
    assert len(data_lines) == len({r["system"] for r in rows})
    xs = np.concatenate([ln.get_xdata() for ln in data_lines])
    ys = np.concatenate([ln.get_ydata() for ln in data_lines])
    assert np.allclose(sorted(xs), sorted(r["n_bytes"] for r in rows))
    assert np.allclose(sorted(ys), sorted(r["rel_error"] for r in rows))
    plt.close(fig)
    with pytest.raises(ValueError, match="rows"):
        plots.plot_validation_error_by_size([])
    with pytest.raises(ValueError, match="band"):
        plots.plot_validation_error_by_size(rows, band=0)
