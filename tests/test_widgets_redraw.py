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
    return [name for name, factory in EXPLORERS if factory().replot is not None]


REPLOT_CHANGES = {"ch01_transport_map": [{"route": "rdma"}, {"n_bytes": 2 ** 30}],
                  "ch03_crossover": [{"n_bytes": 2 ** 30}, {"nvlink_links": 1}],
                  "ch09_scaling.scaling": [{"n_params": 7e10}, {"regime": "weak"},
                                           {"t_compute_s": 0.01, "overlap": 1.0}],
                  "ch09_scaling.amdahl": [{"parallel_fraction": 0.5}, {"n_gpus": 4096}],
                  "ch09_scaling.growth": [{"base_generation": 3},
                                          {"growth_per_generation": 1.5}],
                  "ch07_allreduce.ring_steps": [{"step": 3}, {"step": 6}]}


@pytest.mark.parametrize("name", _explorers_with_replot())
def test_replot_draws_what_a_fresh_plot_draws(name):
    """An explorer that updates its artists in place must end with the picture a fresh
    figure would show for the same controls (the in-place path is only a speed-up)."""
    import numpy as np
    from PIL import Image

    factory = dict(EXPLORERS)[name]
    changes = REPLOT_CHANGES.get(name, [{}])
    reused = factory()
    reused.png()
    for values in changes:
        _, after = reused.png(**values)
        assert reused._artists is not None, f"{name}: replot fell back to a full redraw"
        _, fresh = factory().png(**values)
        a = np.asarray(Image.open(io.BytesIO(after)).convert("RGB"), dtype=int)
        b = np.asarray(Image.open(io.BytesIO(fresh)).convert("RGB"), dtype=int)
        assert a.shape == b.shape
        differ = int((np.abs(a - b).sum(axis=2) > 60).sum())
        assert differ <= 20, f"{name} {values}: {differ} pixels differ from a fresh figure"


def _count_redraws(ex):
    calls = []
    png = ex.png
    ex.png = lambda **v: calls.append(v) or png(**v)
    return calls


def _all_widgets(box):
    out, stack = [], [box]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(getattr(x, "children", ()))
    return out


def test_a_move_back_shows_the_picture_again_without_a_redraw(monkeypatch):
    """What makes a slider moved back and forth fast: a setting shown before is
    not drawn again (the kernel's work per move is then one lookup)."""
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    from course_lib.explorers import ch09_scaling

    ex = ch09_scaling.explorer()
    calls = _count_redraws(ex)
    widgets = _all_widgets(ex.show())
    slider = next(x for x in widgets if getattr(x, "description", "") == "model (BF16 gradients)")
    image = next(x for x in widgets if type(x).__name__ == "Image")
    first = image.value
    start = slider.value
    slider.value = slider.options[0][1]
    assert len(calls) == 2 and image.value != first
    slider.value = start                     # back: the picture as drawn before
    assert len(calls) == 2 and image.value == first


def test_the_ring_steps_cost_the_kernel_nothing(monkeypatch):
    """▶ Play steps in the browser: a step's move draws nothing in the kernel
    (its frame was drawn ahead), so it cannot lag behind the slider."""
    pytest.importorskip("ipywidgets", reason="ipywidgets is part of the course extra")
    import IPython.display
    import ipywidgets as w

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)
    from course_lib.explorers import ch07_allreduce

    ex = ch07_allreduce.ring_steps_explorer()
    calls = _count_redraws(ex)
    widgets = _all_widgets(ex.show())
    step = next(x for x in widgets if getattr(x, "description", "") == "after step (0 = start)")
    n = next(x for x in widgets if getattr(x, "description", "") == "GPUs on the ring")
    assert len(calls) == 2 * (n.value - 1) + 1          # every step drawn ahead
    drawn = len(calls)
    for k in range(step.max + 1):
        step.value = k
    assert len(calls) == drawn
    stacks = [x for x in widgets if isinstance(x, w.Stack)]
    assert len(stacks) == 3 and all(len(s.children) == step.max + 1 for s in stacks)
