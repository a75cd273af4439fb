"""Explorers redraw on every control change (headless side of tests/test_browser.py).

``Explorer.show()`` puts the figure, as PNG bytes, into an ``ipywidgets.Image``;
JupyterLab redraws an Image when its value changes.  Here: moving any control
of any explorer (one keyboard step of a slider, or another option) changes
those bytes -- the figure, or at least its settings strip.
"""

import math

import pytest

from course_lib.explorers import iter_explorers
from course_lib.widgets import Explorer

EXPLORERS = list(iter_explorers())


def _moved(spec):
    """The value one learner's move away from the default: five keyboard steps of a
    slider (toward the side with room), or the next option."""
    kind, value = spec["type"], spec["value"]
    if kind == "Checkbox":
        return not value
    if kind in ("Dropdown", "ToggleButtons"):
        opts = [o[1] if isinstance(o, (tuple, list)) else o for o in spec["options"]]
        return opts[(opts.index(value) + 1) % len(opts)]
    step = spec.get("step", 1 if kind == "IntSlider" else 0.1)
    if kind == "FloatLogSlider":
        base = spec.get("base", 10)
        e = math.log(value, base)
        e = min(e + 5 * step, spec["max"]) if e < spec["max"] else max(e - 5 * step, spec["min"])
        return base ** e
    lo, hi = spec["min"], spec["max"]
    v = min(value + 5 * step, hi) if value < hi else max(value - 5 * step, lo)
    return int(v) if kind == "IntSlider" else v


@pytest.mark.parametrize("name,factory", EXPLORERS, ids=[n for n, _ in EXPLORERS])
def test_every_control_changes_the_picture(name, factory):
    ex = factory()
    _, base = ex.png()
    for control, spec in ex.controls.items():
        value = _moved(spec)
        _, png = ex.png(**{control: value})
        assert png != base, f"{name}: moving {control} to {value!r} left the PNG unchanged"


def test_show_redraws_the_image_widget_on_a_change():
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    ex = Explorer("double", {"x": {"type": "IntSlider", "min": 0, "max": 10, "value": 2}},
                  compute=lambda x: {"y": 2 * x},
                  plot=lambda data, fig: fig.add_subplot(1, 1, 1).bar([0], [data["y"]]),
                  readout=lambda d: f"y = {d['y']}")
    box = ex.show()
    slider = next(c for c in box.children if type(c).__name__ == "IntSlider")
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
