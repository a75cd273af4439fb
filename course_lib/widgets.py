"""Explorers: sliders and toggles over a pure model, with a plot that redraws.

An explorer is three things and nothing more (the mesa pattern):

* ``controls`` -- a dict that *declares* the controls as data, e.g.
  ``{"n_ranks": {"type": "IntSlider", "min": 2, "max": 64, "value": 8}}``;
* ``compute(**values) -> dict`` -- a pure function that calls ``course_lib``
  models and returns the data the plot shows (no physics here: widgets only
  pass values to model functions);
* ``plot(data, fig)`` -- a pure function that draws ``data`` on a matplotlib
  figure; and optionally ``readout(data) -> str`` for a one-line summary and
  ``diagram(data)`` -> a :class:`course_lib.draw.Diagram` (or SVG text): the
  route, topology or collective step the data describe, drawn on the city map
  beside the plot (pure drawing too: it only reads ``data``).

Optional fast redraw: ``plot`` may return a dict of the artists it drew,
and the explorer may be given ``replot(data, fig, artists)``, which updates
those artists in place for new data (no figure clear, no new axes or tick
objects: a redraw costs little more than the drawing itself).  ``replot``
returns ``False`` when it cannot (e.g. the set of artists would change);
the figure is then cleared and ``plot`` draws it afresh.  ``replot`` must
leave the figure as ``plot`` would have drawn it.

``Explorer.update(**values)`` checks the values against the declared controls
and returns the data -- that is what the headless tests call.
``Explorer.show()`` builds the ipywidgets and, on every change, draws the
figure to PNG and puts the bytes into an ``ipywidgets.Image`` (a plain widget
value: JupyterLab redraws it, whereas the inline matplotlib backend does not
redraw on widget changes and output captured into an ``Output`` widget from a
callback is not shown by every front end).  The last :data:`FRAME_CACHE`
settings' pictures are kept, so a control moved back to a setting shown
before costs no redraw.  When the
environment variable ``COURSE_STATIC=1`` is set (the static HTML edition),
``show()`` draws one static figure at the default values instead.

Control types: ``FloatSlider``, ``FloatLogSlider`` (``min``/``max`` are
exponents of ``base``, as in ipywidgets), ``IntSlider``, ``Dropdown``,
``ToggleButtons``, ``Checkbox``.  An ``IntSlider`` declared with
``"play": True`` gets a ▶ Play button beside it (an ``ipywidgets.Play`` linked
to the slider in the browser, ``"play_interval"`` ms a step, default 700) that
steps it from its minimum to its maximum: an animation's step control.  With
``"max_from": (other_control, function)`` (or a tuple of controls, their
values passed in order) the slider's (and its Play's) maximum follows
``function(value of other_control)`` in the notebook, e.g. a ring's last step
``2(n-1)`` when the GPU count changes, or a GPU's NVLink links when the GPU
changes; the slider offers only the positions up to it (its value moves to the
nearest of them), and a Play slider starts again at its first step.  The
follow happens before the redraw: one redraw a move.  An explorer with a Play
slider draws every step's figure, drawing and readout when another control
changes (the step on screen first), and the slider picks one of them in the
browser (an ``ipywidgets.Stack`` linked to it): ▶ Play steps at its interval,
and the picture is always the slider's step.

Read at a glance: a numeric slider may declare ``"unit"`` (one of
:data:`UNITS`: ``"bytes"``, ``"bytes/s"``, ``"s"``, ``"params"``, ``"count"``,
``"m"``, ``"x"``, ``"%"``), and its readout is written in that unit with
:mod:`course_lib.units` (``4 KiB``, ``7 B params``, ``100 km``, ``2.7 µs``;
never ``1.00e+07``).  In the notebook every numeric slider (except a Play
step slider) is an ``ipywidgets.SelectionSlider`` over its positions: the
declared ``"values"``, or ``min``..``max`` by ``step`` (the exponents of a
``FloatLogSlider``), so a learner lands on round values (1 KiB, 64 KiB,
1 MiB) and a mouse can reach each of them (:data:`MAX_POSITIONS` at most).
``check`` and ``update`` still accept any value in ``[min, max]``.

Examples
--------
>>> ex = Explorer(
...     "double", {"x": {"type": "FloatSlider", "min": 0, "max": 10, "step": 0.5, "value": 2}},
...     compute=lambda x: {"y": 2 * x}, plot=lambda data, fig: None)
>>> ex.update(x=3)["y"]
6.0
>>> ex.update(x=11)
Traceback (most recent call last):
...
ValueError: x must lie in [0, 10], got 11
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from .units import (check_real, format_bandwidth, format_bytes, format_count,
                    format_distance, format_time)

__all__ = ["Explorer", "CONTROL_TYPES", "UNITS", "MAX_POSITIONS", "static_mode",
           "format_value", "slider_positions", "moved_value"]

CONTROL_TYPES = ("FloatSlider", "FloatLogSlider", "IntSlider", "Dropdown",
                 "ToggleButtons", "Checkbox")
#: Keys of a control's declaration that the Explorer reads itself (not passed
#: to the ipywidgets constructor).
_OWN_KEYS = ("type", "play", "play_interval", "unit", "values", "max_from")
_SLIDERS = ("FloatSlider", "FloatLogSlider", "IntSlider")
#: The most positions a slider may have: at ~420 px of track, a mouse can still
#: pick each one (a slider of 10,000 positions jumps from 18 to 1 on a twitch).
MAX_POSITIONS = 61
#: Settings whose pictures an explorer on screen keeps (a move back to one of
#: them shows it again without a redraw); about 0.1 MB each.
FRAME_CACHE = 24
#: Figure resolution (pixels per inch): 8-point figure text is 13 px on screen,
#: i.e. 10 points of the page around it.
DPI = 120


def _plain(value: float) -> str:
    """A number without scientific notation: ``0.25``, ``12``, ``0.999``."""
    text = f"{value:.3g}"
    if "e" in text:
        text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text


#: Slider readouts in a learner's units: ``unit name -> value -> text``.
UNITS = {
    "bytes": lambda v: format_bytes(v, binary=True),
    "bytes/s": format_bandwidth,
    "s": format_time,
    "params": lambda v: format_count(v, "params"),
    "count": format_count,
    "m": format_distance,
    "x": lambda v: "×" + _plain(v),
    "%": lambda v: f"{_plain(v * 100)} %",
}


def format_value(spec: dict, value) -> str:
    """A control's value as its readout shows it (the declared ``unit``, or a
    plain number: never scientific notation).

    >>> format_value({"type": "FloatLogSlider", "unit": "bytes"}, 4096.0)
    '4 KiB'
    >>> format_value({"type": "FloatLogSlider", "unit": "params"}, 7e9)
    '7 B params'
    >>> format_value({"type": "FloatSlider"}, 0.999)
    '0.999'
    >>> format_value({"type": "IntSlider"}, 4096)
    '4,096'
    """
    unit = spec.get("unit")
    if unit is not None:
        return UNITS[unit](value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value) == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return _plain(float(value))


def slider_positions(spec: dict) -> list:
    """Every value a numeric slider offers: the declared ``"values"``, or
    ``min``..``max`` by ``step`` (for a ``FloatLogSlider``, ``base`` to those
    exponents).

    >>> slider_positions({"type": "FloatLogSlider", "base": 2, "min": 10, "max": 12,
    ...                   "step": 1})
    [1024.0, 2048.0, 4096.0]
    >>> slider_positions({"type": "IntSlider", "min": 1, "max": 4, "value": 2})
    [1, 2, 3, 4]
    """
    if "values" in spec:
        return list(spec["values"])
    kind = spec["type"]
    lo, hi = spec["min"], spec["max"]
    step = spec.get("step", 1 if kind == "IntSlider" else 0.1)
    count = int(round((hi - lo) / step)) + 1
    if kind == "IntSlider":
        return list(range(int(lo), int(hi) + 1, int(step)))
    if kind == "FloatLogSlider":
        base = spec.get("base", 10)
        return [float(base) ** round(lo + k * step, 12) for k in range(count)]
    return [round(lo + k * step, 12) for k in range(count)]


def moved_value(spec: dict):
    """The value one learner's move away from a control's default: five
    positions of a slider (toward the side with room), the next option of a
    dropdown or toggle, the other state of a checkbox.  The tests sweep every
    explorer over these settings.

    >>> moved_value({"type": "IntSlider", "min": 1, "max": 18, "value": 18})
    13
    >>> moved_value({"type": "Dropdown", "options": ["a", "b"], "value": "b"})
    'a'
    """
    kind, value = spec["type"], spec["value"]
    if kind == "Checkbox":
        return not value
    if kind in ("Dropdown", "ToggleButtons"):
        opts = _options(spec)
        return opts[(opts.index(value) + 1) % len(opts)]
    positions = slider_positions(spec)
    i = _nearest(positions, value)
    j = min(i + 5, len(positions) - 1) if i < len(positions) - 1 else max(i - 5, 0)
    return positions[j]


def _nearest(positions: list, value) -> int:
    """Index of the position closest to ``value`` (relative distance)."""
    return min(range(len(positions)),
               key=lambda i: abs(positions[i] - value) / max(abs(value), 1e-300))


def dropdown_text_px(label: str) -> int:
    """Width in px a dropdown needs to show ``label`` whole (JupyterLab's 13 px
    text, estimated as the drawings estimate theirs)."""
    from .draw.svg import text_width

    return int(math.ceil(text_width(label, 13)))


def static_mode() -> bool:
    """True when explorers should draw a static figure (``COURSE_STATIC=1``)."""
    return os.environ.get("COURSE_STATIC", "") not in ("", "0", "false", "False")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten_label(value, _pos=None) -> str:
    """'10³' for 1000: plain Unicode, no mathtext (which costs ~5 ms a label)."""
    if value <= 0:
        return ""
    exponent = math.log10(value)
    if abs(exponent - round(exponent)) > 1e-9:
        return ""
    return "10" + str(int(round(exponent))).translate(_SUPERSCRIPT)


def _fast_tick_labels(fig) -> None:
    """Swap matplotlib's default mathtext log labels for plain-text ones.

    Drawing is what makes an explorer slow, and on log axes most of the
    drawing time goes to typesetting "$10^{3}$" tick labels with mathtext.
    Only the *default* formatters are replaced; a plot that set its own keeps it.
    """
    from matplotlib.ticker import (FuncFormatter, LogFormatterSciNotation,
                                   NullFormatter)

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            if type(axis.get_major_formatter()) is LogFormatterSciNotation:
                axis.set_major_formatter(FuncFormatter(_power_of_ten_label))
            if type(axis.get_minor_formatter()) is LogFormatterSciNotation:
                axis.set_minor_formatter(NullFormatter())


def _options(spec):
    opts = spec["options"]
    # options may be a list of values or of (label, value) pairs
    return [o[1] if isinstance(o, (tuple, list)) else o for o in opts]


@dataclass
class Explorer:
    """A control spec, a pure compute function and a pure plot function.

    Parameters
    ----------
    title : str
        Shown above the controls.
    controls : dict
        ``name -> {"type": <one of CONTROL_TYPES>, ...ipywidgets kwargs}``;
        every control needs a ``value`` (its default).
    compute : callable
        ``compute(**values) -> dict``; must only call model functions.
    plot : callable
        ``plot(data, fig)``; draws on the given matplotlib Figure.
    readout : callable, optional
        ``readout(data) -> str``: a short summary shown under the plot.
    figsize : tuple
        Figure size in inches.
    replot : callable, optional
        ``replot(data, fig, artists) -> bool | None``: update, in place, the
        artists that ``plot`` returned (a dict) for new data; return
        ``False`` to ask for a full redraw instead.
    diagram : callable, optional
        ``diagram(data) -> Diagram | str``: a drawing (SVG) shown beside the
        plot and redrawn with it.
    """

    title: str
    controls: dict
    compute: Callable[..., dict]
    plot: Callable
    readout: Callable[[dict], str] | None = None
    figsize: tuple = (7.0, 3.6)
    replot: Callable | None = None
    diagram: Callable | None = None
    _fig: object = field(default=None, init=False, repr=False)
    _artists: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        for name, spec in self.controls.items():
            kind = spec.get("type")
            if kind not in CONTROL_TYPES:
                raise ValueError(f"control {name!r}: type must be one of "
                                 f"{CONTROL_TYPES}, got {kind!r}")
            if "value" not in spec:
                raise ValueError(f"control {name!r} needs a default 'value'")
            if spec.get("play") and kind != "IntSlider":
                raise ValueError(f"control {name!r}: 'play' needs an IntSlider, got {kind}")
            if spec.get("play") and spec.get("min") != 0:
                raise ValueError(f"control {name!r}: a 'play' slider counts steps from "
                                 f"min 0 (its step picks a frame), got min {spec.get('min')!r}")
            if spec.get("play") and sum(bool(s.get("play")) for s in self.controls.values()) > 1:
                raise ValueError("an explorer has at most one 'play' slider")
            if "max_from" in spec:
                src, fn = spec["max_from"]
                sources = (src,) if isinstance(src, str) else tuple(src)
                if (not sources or any(s not in self.controls or s == name for s in sources)
                        or not callable(fn)):
                    raise ValueError(f"control {name!r}: 'max_from' must be (one or a "
                                     f"tuple of the other controls {sorted(self.controls)}, "
                                     f"a function)")
            if "unit" in spec and spec["unit"] not in UNITS:
                raise ValueError(f"control {name!r}: unit must be one of "
                                 f"{sorted(UNITS)}, got {spec['unit']!r}")
            if ("unit" in spec or "values" in spec) and kind not in _SLIDERS:
                raise ValueError(f"control {name!r}: 'unit' and 'values' need a "
                                 f"slider ({', '.join(_SLIDERS)}), got {kind}")
            self.check(name, spec["value"])
            if kind in _SLIDERS:
                positions = slider_positions(spec)
                for v in positions:
                    self.check(name, v)
                if len(positions) > MAX_POSITIONS:
                    raise ValueError(
                        f"control {name!r}: {len(positions)} slider positions; at most "
                        f"{MAX_POSITIONS} (a mouse cannot pick more): declare 'values' "
                        f"or a coarser 'step'")

    # -- headless API ----------------------------------------------------
    def defaults(self) -> dict:
        """The default value of every control."""
        return {name: spec["value"] for name, spec in self.controls.items()}

    def check(self, name: str, value):
        """Check one control value against its declaration; return it normalised."""
        if name not in self.controls:
            raise ValueError(f"unknown control {name!r}; this explorer has "
                             f"{sorted(self.controls)}")
        spec = self.controls[name]
        kind = spec["type"]
        if kind in ("Dropdown", "ToggleButtons"):
            allowed = _options(spec)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
            return value
        if kind == "Checkbox":
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
            return value
        v = check_real(value, name)
        if kind == "FloatLogSlider":
            base = spec.get("base", 10)
            lo, hi = base ** spec["min"], base ** spec["max"]
        else:
            lo, hi = spec["min"], spec["max"]
        if not (lo * (1 - 1e-12) <= v <= hi * (1 + 1e-12)):
            raise ValueError(f"{name} must lie in [{lo:g}, {hi:g}], got {value!r}")
        if kind == "IntSlider":
            if v != int(v):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
            return int(v)
        return v

    def update(self, **values) -> dict:
        """Compute the data for these control values (defaults for the rest)."""
        merged = self.defaults()
        for name, value in values.items():
            merged[name] = self.check(name, value)
        return self.compute(**merged)

    def render(self, **values):
        """Compute and draw onto this explorer's figure; return (data, figure).

        The figure is reused between calls (cleared, not re-created), which
        keeps a redraw cheap; with a ``replot`` and the artists ``plot``
        returned, the artists are updated in place instead.
        """
        from matplotlib.figure import Figure

        data = self.update(**values)
        if self._fig is None:
            self._fig = Figure(figsize=self.figsize, dpi=DPI,
                               layout="constrained")
        if (self.replot is not None and self._artists is not None
                and self.replot(data, self._fig, self._artists) is not False):
            return data, self._fig
        self._artists = None
        self._fig.clear()
        artists = self.plot(data, self._fig)
        _fast_tick_labels(self._fig)
        self._artists = artists if isinstance(artists, dict) else None
        return data, self._fig

    def settings_text(self, **values) -> str:
        """The control values as one line in their units, e.g.
        ``"gpu H100 · n_bytes 8 MiB"`` (for logs and screenshots' names)."""
        merged = self.defaults()
        merged.update({k: self.check(k, v) for k, v in values.items()})
        parts = []
        for name, value in merged.items():
            if isinstance(value, bool):
                text = "on" if value else "off"
            else:
                text = format_value(self.controls[name], value)
            parts.append(f"{name} {text}")
        return " · ".join(parts)

    def png(self, **values) -> tuple[dict, bytes]:
        """Compute, draw and encode the figure as PNG bytes; return (data, png)."""
        import io

        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from PIL import Image

        data, fig = self.render(**values)
        # one canvas per explorer: its renderer, and so matplotlib's text-layout
        # cache, survive between redraws
        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        canvas.draw()
        image = Image.frombuffer("RGBA", canvas.get_width_height(),
                                 canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        # encode once, with light compression: a redraw must be fast
        buf = io.BytesIO()
        image.save(buf, format="png", compress_level=1)
        return data, buf.getvalue()

    def outputs(self, **values) -> tuple[bytes, str, str]:
        """What a learner sees for these values: ``(png, readout, svg)``.

        A control's move must change at least one of them (the headless and
        the browser tests check it)."""
        data, png = self.png(**values)
        return png, (self.readout(data) if self.readout else ""), self.svg(data)

    def svg(self, data: dict) -> str:
        """The diagram for ``data`` as SVG text ("" when this explorer has none)."""
        if self.diagram is None:
            return ""
        d = self.diagram(data)
        return d if isinstance(d, str) else d.svg

    def _diagram_html(self, data: dict) -> str:
        if self.diagram is None:
            return ""
        d = self.diagram(data)
        return d.html() if hasattr(d, "html") else f'<div class="ic-diagram">{d}</div>'

    def time_update(self, repeats: int = 20, **values) -> float:
        """Median seconds for compute + redraw (PNG encoded, and the diagram
        drawn when there is one), for benchmarks."""
        samples = []
        for _ in range(max(1, int(repeats))):
            t0 = time.perf_counter()
            data, _png = self.png(**values)
            self.svg(data)
            samples.append(time.perf_counter() - t0)
        samples.sort()
        return samples[len(samples) // 2]

    # -- notebook UI ------------------------------------------------------
    def _description_width(self) -> str:
        """One description width for all of this explorer's controls (aligned,
        and wide enough that no description is cut)."""
        longest = max((len(str(spec.get("description", name)))
                       for name, spec in self.controls.items()
                       if spec["type"] != "Checkbox"), default=0)
        return f"{min(max(8 * longest + 12, 110), 300)}px"

    def _widget(self, name, spec, description_width="initial"):
        import ipywidgets as w

        kind = spec["type"]
        kwargs = {k: v for k, v in spec.items() if k not in _OWN_KEYS}
        kwargs.setdefault("description", name)
        kwargs.setdefault("style", {"description_width": description_width})
        if isinstance(kwargs.get("layout"), dict):
            kwargs["layout"] = w.Layout(**kwargs["layout"])
        track = f"calc({description_width} + 520px)"
        if kind in _SLIDERS and not spec.get("play"):
            # a slider over its positions, labelled in the learner's units
            positions = slider_positions(spec)
            index = _nearest(positions, spec["value"])
            options = [(format_value(spec, v), v) for v in positions]
            for key in ("min", "max", "step", "base", "readout_format", "value"):
                kwargs.pop(key, None)
            kwargs.setdefault("continuous_update", False)
            kwargs.setdefault("layout", w.Layout(width=track, max_width="100%"))
            return w.SelectionSlider(options=options, index=index, **kwargs)
        if kind in _SLIDERS:
            kwargs.setdefault("continuous_update", False)
            kwargs.setdefault("layout", w.Layout(width=track, max_width="100%"))
        elif kind == "Checkbox":
            kwargs.pop("style", None)
            kwargs.setdefault("indent", False)
            kwargs.setdefault("layout", w.Layout(width="auto"))
        elif kind == "ToggleButtons":
            labels = [str(o[0] if isinstance(o, (tuple, list)) else o)
                      for o in spec["options"]]
            button = 8 * max(len(t) for t in labels) + 28
            # the description goes in a label beside the buttons (see show()):
            # a ToggleButtons' own description wraps above them and is cut
            kwargs["description"] = ""
            kwargs["style"] = {"button_width": f"{button}px"}
        elif kind == "Dropdown":
            labels = [str(o[0] if isinstance(o, (tuple, list)) else o)
                      for o in spec["options"]]
            # the longest option in full (13 px text in JupyterLab) and its arrow
            menu = min(max(dropdown_text_px(max(labels, key=len)) + 40, 160), 820)
            kwargs.setdefault("layout", w.Layout(width=f"calc({description_width} + {menu}px)",
                                                 max_width="100%"))
        return getattr(w, kind)(**kwargs)

    def show(self):
        """Display the explorer (widgets in JupyterLab, a static figure in
        the static edition) and return the widget box (or None)."""
        from IPython.display import HTML, Image, display

        if static_mode():
            data, png = self.png()
            display(HTML(f"<b>{self.title}</b> <i>(static view at the default "
                         f"settings; open the notebook to move the controls)</i>"))
            display(Image(data=png, format="png"))
            if self.diagram is not None:
                display(HTML(self._diagram_html(data)))
            if self.readout:
                display(HTML(f"<div class='ic-readout'>{self.readout(data)}</div>"))
            return None

        import ipywidgets as w

        width = self._description_width()
        controls = {name: self._widget(name, spec, width)
                    for name, spec in self.controls.items()}
        play_name = next((n for n, spec in self.controls.items() if spec.get("play")), None)
        # The figure travels as PNG bytes in an Image widget's value: a model
        # update that every front end (JupyterLab, Notebook 7, VS Code, Colab)
        # redraws, unlike an inline-backend figure or output captured into an
        # Output widget from a widget callback.
        image_layout = dict(max_width="100%", height="auto")
        if play_name is None:
            image = w.Image(format="png", layout=w.Layout(**image_layout))
            text, drawing = w.HTML(), w.HTML()
            plot = w.Box([image], layout=w.Layout(min_height="120px", max_width="100%"))
            readout_box, drawing_box = text, drawing
        else:
            # An animation: every step's figure, drawing and readout are drawn
            # in the kernel when another control changes, and the step slider
            # picks one of them in the browser (a Stack linked to the slider):
            # ▶ Play steps on time, the picture always the slider's step.
            spec = self.controls[play_name]
            pool = spec["max"] - spec["min"] + 1
            images = [w.Image(format="png", layout=w.Layout(**image_layout))
                      for _ in range(pool)]
            texts = [w.HTML() for _ in range(pool)]
            drawings = [w.HTML() for _ in range(pool)]
            stacks = [w.Stack(children=frames, selected_index=spec["value"] - spec["min"])
                      for frames in (images, texts, drawings)]
            for stack in stacks:
                w.jslink((controls[play_name], "value"), (stack, "selected_index"))
            plot = w.Box([stacks[0]], layout=w.Layout(min_height="120px", max_width="100%"))
            readout_box, drawing_box = w.Box([stacks[1]]), w.Box([stacks[2]])
        plot.add_class("ic-plot")
        readout_box.add_class("ic-readout")
        drawing_box.add_class("ic-drawing")
        error = w.HTML()
        busy = []                 # a control is being adjusted to follow another

        def show_error(exc):
            error.value = f"<span style='color:#b00'>{exc}</span>"

        seen = {}                  # the last FRAME_CACHE settings shown, in order of use

        def frame(values):
            """(png, readout, drawing) for these settings: drawn, or as drawn
            before when a learner comes back to a setting (a slider moved
            back and forth redraws nothing it has drawn)."""
            key = tuple(sorted(values.items()))
            if key in seen:
                seen[key] = seen.pop(key)                   # the most recent
                return seen[key]
            data, png = self.png(**values)
            message = self.readout(data) if self.readout else ""
            out = png, message, (self._diagram_html(data) if self.diagram is not None else "")
            seen[key] = out
            while len(seen) > FRAME_CACHE:
                seen.pop(next(iter(seen)))
            return out

        def redraw(_change=None):
            if busy:
                return
            values = {name: c.value for name, c in controls.items()}
            try:
                if play_name is None:
                    png, message, svg = frame(values)
                    image.value, text.value = png, message
                    if self.diagram is not None:
                        drawing.value = svg
                else:
                    ctl = controls[play_name]
                    lo, hi = ctl.min, ctl.max
                    now = values[play_name]
                    stacks_n = hi - lo + 1
                    for stack, frames in zip(stacks, (images, texts, drawings)):
                        if len(stack.children) != stacks_n:
                            stack.children = frames[:stacks_n]
                        stack.selected_index = now - lo
                    # the step on screen first, then the others in the order
                    # Play visits them
                    order = [now] + [k for k in range(now + 1, hi + 1)] + \
                        [k for k in range(lo, now)]
                    generation.append(None)
                    draw_frames(values, order, len(generation))
            except (ValueError, TypeError) as exc:
                show_error(exc)
                return
            error.value = ""

        generation = []            # one entry per redraw: later frames of an old one stop

        def draw_frame(values, k):
            lo = controls[play_name].min
            png, message, svg = frame(dict(values, **{play_name: k}))
            images[k - lo].value, texts[k - lo].value = png, message
            drawings[k - lo].value = svg

        def draw_frames(values, order, mine):
            """The first frame now; the others one at a time from the kernel's
            event loop when there is one (a learner's next move need not wait for
            all of them), else at once."""
            draw_frame(values, order[0])
            try:
                import asyncio

                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is None:
                for k in order[1:]:
                    draw_frame(values, k)
                return

            def next_frame(rest):
                if mine != len(generation) or not rest:
                    return                                  # a newer redraw took over
                try:
                    draw_frame(values, rest[0])
                except (ValueError, TypeError) as exc:
                    show_error(exc)
                    return
                loop.call_soon(next_frame, rest[1:])

            loop.call_soon(next_frame, order[1:])

        rows, follows = [], []
        for name, c in controls.items():
            spec = self.controls[name]
            play = None
            if spec["type"] == "ToggleButtons":
                label = w.HTML(f"<div style='text-align:right;padding-right:8px'>"
                               f"{spec.get('description', name)}</div>",
                               layout=w.Layout(width=width, min_width=width))
                label.add_class("ic-label")
                rows.append(w.HBox([label, c], layout=w.Layout(align_items="center")))
            elif spec.get("play"):
                play = w.Play(min=spec["min"], max=spec["max"], step=spec.get("step", 1),
                              value=spec["value"], interval=spec.get("play_interval", 700),
                              description="play")
                play.add_class("ic-play")
                w.jslink((play, "value"), (c, "value"))
                rows.append(w.HBox([play, c]))
            else:
                rows.append(c)
            if "max_from" in spec:
                source, fn = spec["max_from"]
                sources = [controls[s] for s in ((source,) if isinstance(source, str)
                                                 else source)]

                def follow(change=None, c=c, play=play, sources=sources, fn=fn,
                           spec=spec):
                    top = min(fn(*(s.value for s in sources)), spec["max"])
                    busy.append(1)
                    try:
                        if isinstance(c, w.SelectionSlider):
                            # the positions the source allows; the value the
                            # nearest of them (the model would clip to it too)
                            positions = [v for v in slider_positions(spec) if v <= top]
                            value = positions[_nearest(positions, min(c.value, top))]
                            c.options = [(format_value(spec, v), v) for v in positions]
                            c.value = value
                        else:
                            for widget in (c, play):
                                if widget is not None:
                                    widget.max = int(top)
                            if play is not None and change is not None:
                                # a new animation: it starts again at its first
                                # step (playing on, if it was playing)
                                play.value = c.value = spec["min"]
                    finally:
                        busy.pop()

                follows.append((sources, follow))
        # a control that follows others is adjusted before the redraw
        for sources, follow in follows:
            for source in sources:
                source.observe(follow, names="value")
            follow()
        for name, c in controls.items():
            if name != play_name:         # a step is picked in the browser
                c.observe(redraw, names="value")
        title = w.HTML(f"<b>{self.title}</b>")
        figure = plot
        if self.diagram is not None:
            figure = w.Box([plot, drawing_box], layout=w.Layout(flex_flow="row wrap",
                                                                align_items="flex-start"))
        box = w.VBox([title, *rows, figure, readout_box, error])
        box.add_class("ic-explorer")
        redraw()
        display(box)
        return box
