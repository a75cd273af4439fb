"""Explorers redraw on every control change (headless side of tests/test_browser.py).

``Explorer.show()`` puts the figure, as PNG bytes, into an ``ipywidgets.Image``;
JupyterLab redraws an Image when its value changes.  Here: moving any control
of any explorer (five keyboard steps of a slider, or another option) changes
what the learner sees -- the figure, the readout or the drawing.  And every
slider is one a learner can read and use: readouts in units, never scientific
notation, few enough positions for a mouse, the default among them.
"""

import io
import re

import pytest

from course_lib.explorers import iter_explorers
from course_lib.widgets import (MAX_POSITIONS, Explorer, format_value, moved_value,
                                slider_positions)

SLIDERS = ("FloatSlider", "FloatLogSlider", "IntSlider")
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")

EXPLORERS = list(iter_explorers())


@pytest.mark.parametrize("name,factory", EXPLORERS, ids=[n for n, _ in EXPLORERS])
def test_every_control_changes_what_the_learner_sees(name, factory):
    ex = factory()
    base = ex.outputs()
    for control, spec in ex.controls.items():
        value = moved_value(spec)
        moved = ex.outputs(**{control: value})
        assert moved != base, (f"{name}: moving {control} to {value!r} left the figure, "
                               f"the readout and the drawing unchanged")


@pytest.mark.parametrize("name,factory", EXPLORERS, ids=[n for n, _ in EXPLORERS])
def test_sliders_read_in_units_and_fit_a_mouse(name, factory):
    ex = factory()
    for control, spec in ex.controls.items():
        if spec["type"] not in SLIDERS:
            continue
        positions = slider_positions(spec)
        assert 2 <= len(positions) <= MAX_POSITIONS, (name, control, len(positions))
        assert min(abs(p - spec["value"]) for p in positions) <= 1e-9 * abs(spec["value"]), \
            f"{name}: {control}'s default {spec['value']} is not one of its positions"
        labels = [format_value(spec, v) for v in positions]
        for text in labels:
            assert not SCIENTIFIC.search(text), f"{name}: {control} reads {text!r}"
        if spec["type"] == "FloatLogSlider":
            assert "unit" in spec, f"{name}: {control} spans decades; declare its unit"
        description = str(spec.get("description", control))
        assert len(description) <= 32, f"{name}: {control}'s description is long: {description!r}"


def test_a_slider_of_thousands_of_positions_is_refused():
    with pytest.raises(ValueError, match="slider positions"):
        Explorer("t", {"n": {"type": "IntSlider", "min": 1, "max": 10000, "value": 10}},
                 compute=lambda n: {}, plot=lambda d, fig: None)
    with pytest.raises(ValueError, match="unit must be one of"):
        Explorer("t", {"n": {"type": "IntSlider", "min": 1, "max": 9, "value": 1,
                             "unit": "furlongs"}},
                 compute=lambda n: {}, plot=lambda d, fig: None)


def test_show_redraws_the_image_widget_on_a_change():
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    ex = Explorer("double", {"x": {"type": "IntSlider", "min": 0, "max": 10, "value": 2}},
                  compute=lambda x: {"y": 2 * x},
                  plot=lambda data, fig: fig.add_subplot(1, 1, 1).bar([0], [data["y"]]),
                  readout=lambda d: f"y = {d['y']}")
    box = ex.show()
    slider = next(c for c in box.children if type(c).__name__ == "SelectionSlider")
    assert slider.label == "2" and slider.readout
    plot = next(c for c in box.children if "ic-plot" in c._dom_classes)
    image = plot.children[0]
    readout = next(c for c in box.children if "ic-readout" in c._dom_classes)
    first = image.value
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and readout.value == "y = 4"
    slider.value = 7
    assert image.value != first and readout.value == "y = 14"


def test_settings_text_lists_every_control():
    ex = Explorer("t", {"n": {"type": "IntSlider", "min": 1, "max": 9, "value": 3},
                        "on": {"type": "Checkbox", "value": True},
                        "f": {"type": "FloatLogSlider", "min": 0, "max": 3, "value": 10.0}},
                  compute=lambda **k: k, plot=lambda d, fig: None)
    assert ex.settings_text() == "n 3 · on on · f 10"
    assert ex.settings_text(n=5, on=False) == "n 5 · on off · f 10"
    with pytest.raises(ValueError, match="n must lie"):
        ex.settings_text(n=99)


def _explorers_with_replot():
    import importlib
    import pkgutil

    import course_lib.explorers as pkg

    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"course_lib.explorers.{info.name}")
        factory = getattr(mod, "explorer", None)
        if callable(factory) and getattr(factory(), "replot", None) is not None:
            found.append(info.name)
    return found


REPLOT_CHANGES = {"ch01_transport_map": [{"route": "rdma"}, {"n_bytes": 2 ** 30}],
                  "ch03_crossover": [{"n_bytes": 2 ** 30}, {"nvlink_links": 1}]}


@pytest.mark.parametrize("name", _explorers_with_replot())
def test_replot_draws_what_a_fresh_plot_draws(name):
    """An explorer that updates its artists in place must end with the picture a fresh
    figure would show for the same controls (the in-place path is only a speed-up)."""
    import importlib

    import numpy as np
    from PIL import Image

    mod = importlib.import_module(f"course_lib.explorers.{name}")
    changes = REPLOT_CHANGES.get(name, [{}])
    reused = mod.explorer()
    reused.png()
    for values in changes:
        _, after = reused.png(**values)
        assert reused._artists is not None, f"{name}: replot fell back to a full redraw"
        _, fresh = mod.explorer().png(**values)
        a = np.asarray(Image.open(io.BytesIO(after)).convert("RGB"), dtype=int)
        b = np.asarray(Image.open(io.BytesIO(fresh)).convert("RGB"), dtype=int)
        assert a.shape == b.shape
        differ = int((np.abs(a - b).sum(axis=2) > 60).sum())
        assert differ <= 20, f"{name} {values}: {differ} pixels differ from a fresh figure"
