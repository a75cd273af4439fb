"""A small SVG canvas and the :class:`Diagram` a notebook cell displays.

SVG, not a raster: it stays sharp in JupyterLab, in the static HTML edition
and on slides, it costs well under a millisecond to write, and a browser test
can find what is in it (every element a renderer draws may carry a class).

>>> c = Canvas(120, 40, title="a road")
>>> c.line(10, 20, 110, 20, kind="nvlink", width=4)
>>> c.text(60, 12, "maglev <NVLink>")
>>> d = c.diagram()
>>> d.svg.startswith("<svg") and "maglev &lt;NVLink&gt;" in d.svg
True
>>> "ic-diagram" in d._repr_mimebundle_()["text/html"]
True
"""

from __future__ import annotations

import html
from contextlib import contextmanager

from ..units import check_positive
from .style import FONT, ROADS

__all__ = ["Canvas", "Diagram", "animate"]


def _num(v: float) -> str:
    """Short SVG number: 12, 12.5, 12.25 (no 12.000001)."""
    if type(v) is int:
        return str(v)
    r = round(float(v), 2)
    return str(int(r)) if r.is_integer() else f"{r:g}"


_ESCAPED: dict = {}      # short attribute values seen (colours, classes): escaped once


def _escape(s: str) -> str:
    e = _ESCAPED.get(s)
    if e is None:
        e = html.escape(s, quote=True)
        if len(s) <= 32 and len(_ESCAPED) < 4096:
            _ESCAPED[s] = e
    return e


def _attrs(**kw) -> str:
    out = []
    for k, v in kw.items():
        if v is None or v == "":
            continue
        name = _ATTR_NAMES.get(k) or _attr_name(k)
        t = type(v)
        if t is float or t is int:
            out.append(f'{name}="{_num(v)}"')      # a number needs no escaping
        elif t is str:
            out.append(f'{name}="{_escape(v)}"')
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f'{name}="{_num(v)}"')
        else:
            out.append(f'{name}="{_escape(str(v))}"')
    return " ".join(out)


_ATTR_NAMES: dict = {}


def _attr_name(k: str) -> str:
    name = "class" if k == "cls" else k.rstrip("_").replace("_", "-")
    _ATTR_NAMES[k] = name
    return name


class Diagram:
    """An SVG drawing, shown inline by Jupyter (``text/html`` with the SVG in
    a ``<div class="ic-diagram">``, and ``image/svg+xml``).

    Parameters
    ----------
    svg : str
        The ``<svg ...>...</svg>`` text.
    title : str
        What the drawing shows (also the ``aria-label`` of its box).
    """

    def __init__(self, svg: str, title: str = ""):
        if not isinstance(svg, str) or not svg.lstrip().startswith("<svg"):
            raise TypeError("svg must be SVG text starting with '<svg'")
        self.svg = svg
        self.title = str(title)

    def html(self) -> str:
        """The SVG in a ``<div class="ic-diagram">`` (what notebooks and widgets show)."""
        label = html.escape(self.title, quote=True)
        return (f'<div class="ic-diagram" role="img" aria-label="{label}" '
                f'style="max-width:100%;overflow-x:auto">{self.svg}</div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "image/svg+xml": self.svg}

    def save(self, path) -> None:
        """Write the SVG to ``path``."""
        from pathlib import Path

        Path(path).write_text(self.svg, encoding="utf-8")

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"Diagram({self.title!r}, {len(self.svg)} characters of SVG)"


def text_width(s: str, size: float) -> float:
    """Rough width of ``s`` at ``size`` px in DejaVu Sans (em widths by kind of
    glyph): what the drawings use to fit and place their words."""
    em = 0.0
    for ch in str(s):
        if ch in " .,:;il|!'()[]/·":
            em += 0.34
        elif ch.isupper() or ch.isdigit() or ch in "×→≈mw":
            em += 0.68
        elif ch.islower():
            em += 0.58
        else:
            em += 0.7
    return em * size


def text_box(x, y, s, size=12, anchor="middle", bold=False):
    """``(x0, y0, x1, y1)``: where a text drawn by :meth:`Canvas.text` lies
    (estimated with :func:`text_width`; vertically centred on ``y``)."""
    w = text_width(s, size) * (1.08 if bold else 1.0)
    x0 = {"start": x, "end": x - w}.get(anchor, x - w / 2)
    return (x0, y - 0.6 * size, x0 + w, y + 0.6 * size)


class Canvas:
    """Elements appended in drawing order; :meth:`to_svg` closes the document.

    Coordinates are SVG user units (pixels at 100 %).  ``kind=`` on lines and
    paths picks the road's colour and dash from :data:`course_lib.draw.ROADS`.
    ``title=`` on any element becomes its tooltip.
    """

    def __init__(self, width: float, height: float, title: str = "",
                 background: str = "white"):
        self.width = check_positive(width, "width")
        self.height = check_positive(height, "height")
        self.title = str(title)
        self._parts: list[str] = []
        #: where every text drawn so far lies (:func:`text_box`), for placing
        #: marks that must not cover words
        self.text_boxes: list[tuple] = []
        if background:
            self._parts.append(f'<rect width="100%" height="100%" fill="{background}"/>')

    # -- elements ----------------------------------------------------------
    def _add(self, tag: str, attrs: str, title: str | None, body: str = "") -> None:
        tip = f"<title>{html.escape(title)}</title>" if title else ""
        if tip or body:
            self._parts.append(f"<{tag} {attrs}>{tip}{body}</{tag}>")
        else:
            self._parts.append(f"<{tag} {attrs}/>")

    @staticmethod
    def _stroke(kind, stroke, dash):
        if kind is not None:
            if kind not in ROADS:
                raise ValueError(f"kind must be one of {sorted(ROADS)}, got {kind!r}")
            road = ROADS[kind]
            return stroke or road.colour, dash if dash is not None else road.dash
        return stroke or "#333", dash or ""

    def rect(self, x, y, w, h, fill="white", stroke="#444", width=1.2, rx=6,
             cls=None, title=None, **extra):
        self._add("rect", _attrs(x=x, y=y, width=w, height=h, rx=rx, fill=fill,
                                 stroke=stroke, stroke_width=width, cls=cls, **extra), title)

    def circle(self, cx, cy, r, fill="white", stroke="#444", width=1.2, cls=None,
               title=None, **extra):
        self._add("circle", _attrs(cx=cx, cy=cy, r=r, fill=fill, stroke=stroke,
                                   stroke_width=width, cls=cls, **extra), title)

    def line(self, x1, y1, x2, y2, kind=None, stroke=None, width=2, dash=None,
             cls=None, title=None, opacity=None, **extra):
        colour, dash = self._stroke(kind, stroke, dash)
        self._add("line", _attrs(x1=x1, y1=y1, x2=x2, y2=y2, stroke=colour,
                                 stroke_width=width, stroke_dasharray=dash,
                                 stroke_linecap="round", opacity=opacity, cls=cls,
                                 **extra), title)

    def path(self, d, kind=None, stroke=None, width=2, fill="none", dash=None,
             cls=None, title=None, opacity=None, **extra):
        colour, dash = self._stroke(kind, stroke, dash)
        self._add("path", _attrs(d=d, stroke=colour, stroke_width=width, fill=fill,
                                 stroke_dasharray=dash, stroke_linecap="round",
                                 stroke_linejoin="round", opacity=opacity, cls=cls,
                                 **extra), title)

    def polygon(self, points, fill="#333", stroke="none", cls=None, title=None, **extra):
        pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self._add("polygon", _attrs(points=pts, fill=fill, stroke=stroke, cls=cls,
                                    **extra), title)

    def text(self, x, y, s, size=12, anchor="middle", weight=None, fill="#222",
             italic=False, cls=None, title=None, **extra):
        self.text_boxes.append(text_box(x, y, s, size, anchor,
                                        bold=weight in ("bold", "600", "700")))
        self._add("text", _attrs(x=x, y=y, font_size=size, text_anchor=anchor,
                                 font_weight=weight, fill=fill,
                                 font_style="italic" if italic else None,
                                 dominant_baseline="middle", cls=cls, **extra),
                  title, html.escape(str(s)))

    def raw(self, svg_fragment: str) -> None:
        """Append SVG text as it is (e.g. a ``<g>`` another renderer made)."""
        self._parts.append(str(svg_fragment))

    @contextmanager
    def group(self, cls=None, title=None, **attrs):
        """``with canvas.group(cls="route"):`` -- elements drawn inside go in one ``<g>``."""
        a = _attrs(cls=cls, **attrs)
        tip = f"<title>{html.escape(title)}</title>" if title else ""
        self._parts.append(f"<g {a}>{tip}" if a else f"<g>{tip}")
        try:
            yield self
        finally:
            self._parts.append("</g>")

    def arrow(self, x1, y1, x2, y2, kind=None, stroke=None, width=2.5, head=8,
              cls=None, title=None, dash=None, opacity=None):
        """A line from (x1, y1) to (x2, y2) with an arrowhead at the end."""
        import math

        colour, _ = self._stroke(kind, stroke, dash)
        ang = math.atan2(y2 - y1, x2 - x1)
        bx, by = x2 - head * math.cos(ang), y2 - head * math.sin(ang)
        with self.group(cls=cls, title=title, opacity=opacity):
            self.line(x1, y1, bx, by, kind=kind, stroke=stroke, width=width, dash=dash)
            left = (bx + head * 0.5 * math.sin(ang), by - head * 0.5 * math.cos(ang))
            right = (bx - head * 0.5 * math.sin(ang), by + head * 0.5 * math.cos(ang))
            self.polygon([(x2, y2), left, right], fill=colour)

    def legend(self, x, y, kinds, size=11, row=16, machines=None):
        """A legend of road kinds: a coloured stroke, the city name and the machine
        name (``machines``: a kind's machine name where the drawing knows it better,
        e.g. the network of a real NIC)."""
        machines = machines or {}
        with self.group(cls="ic-legend"):
            for i, k in enumerate(kinds):
                road = ROADS[k]
                yy = y + i * row
                self.line(x, yy, x + 22, yy, kind=k, width=4)
                self.text(x + 28, yy, f"{road.city} = {machines.get(k, road.machine)}",
                          size=size, anchor="start")

    # -- output ------------------------------------------------------------
    def to_svg(self) -> str:
        w, h = _num(self.width), _num(self.height)
        label = html.escape(self.title, quote=True)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="ic-svg" '
                f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                f'font-family="{FONT}" role="img" aria-label="{label}">'
                + (f"<title>{html.escape(self.title)}</title>" if self.title else "")
                + "".join(self._parts) + "</svg>")

    def diagram(self) -> Diagram:
        return Diagram(self.to_svg(), self.title)


def animate(frames, seconds_per_frame: float = 0.8, title: str = "",
            width: float | None = None, height: float | None = None) -> Diagram:
    """One SVG that plays ``frames`` (SVG documents of equal size) in a loop.

    Each frame becomes a group shown for ``seconds_per_frame`` by a discrete
    SMIL ``<animate>`` of its visibility: it plays in a browser with no script
    (JupyterLab, the static HTML edition, an ``<img>``), so the static edition
    animates too.

    >>> a = Canvas(10, 10); b = Canvas(10, 10)
    >>> d = animate([a.to_svg(), b.to_svg()], 0.5)
    >>> d.svg.count("<animate ") == 2 and 'dur="1s"' in d.svg
    True
    """
    import re

    frames = list(frames)
    if not frames:
        raise ValueError("frames must hold at least one SVG frame")
    secs = check_positive(seconds_per_frame, "seconds_per_frame")
    m = re.search(r'width="([\d.]+)" height="([\d.]+)"', frames[0])
    w = width if width is not None else float(m.group(1)) if m else 400
    h = height if height is not None else float(m.group(2)) if m else 300
    n = len(frames)
    total = _num(secs * n)
    body = []
    for i, f in enumerate(frames):
        inner = re.sub(r"^<svg[^>]*>", "", f.strip())
        inner = re.sub(r"</svg>$", "", inner)
        values = ";".join("visible" if j == i else "hidden" for j in range(n))
        key_times = ";".join(_num(j / n) for j in range(n))
        body.append(f'<g visibility="{"visible" if i == 0 else "hidden"}" '
                    f'class="ic-frame" data-frame="{i}">'
                    f'<animate attributeName="visibility" values="{values}" '
                    f'keyTimes="{key_times}" dur="{total}s" calcMode="discrete" '
                    f'repeatCount="indefinite"/>{inner}</g>')
    label = html.escape(title, quote=True)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="ic-svg ic-anim" '
           f'width="{_num(w)}" height="{_num(h)}" viewBox="0 0 {_num(w)} {_num(h)}" '
           f'font-family="{FONT}" role="img" aria-label="{label}">' + "".join(body)
           + "</svg>")
    return Diagram(svg, title)
