"""Nothing on an explorer's pictures collides or is cut off, at every setting swept.

Every explorer is drawn at its defaults, at each control moved one learner's
move (:func:`course_lib.widgets.moved_value`, the sweep of
``tests/test_widgets_redraw.py``) and at every option of its dropdowns and
toggles.  Then:

* in its drawing (SVG): every word lies inside the drawing; no route number
  (the circled ①②③ badges, ``ic-route-number``) covers a word or another
  number; no legend word covers a word outside the legend.  Word extents are
  the drawings' own estimate (:func:`course_lib.draw.svg.text_box`);
* in its figure (matplotlib, as drawn to PNG): every tick label and text lies
  inside the figure; a legend covers no point of a curve and no bar.
"""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from course_lib.draw.svg import text_box
from course_lib.explorers import iter_explorers
from course_lib.widgets import _options, moved_value

SVG = "{http://www.w3.org/2000/svg}"
EXPLORERS = list(iter_explorers())


def settings(ex):
    """The defaults, one learner's move of each control, and every option of each
    dropdown and toggle (a setting the explorer refuses is left out)."""
    out = [{}]
    for name, spec in ex.controls.items():
        values = [moved_value(spec)]
        if spec["type"] in ("Dropdown", "ToggleButtons"):
            values = [v for v in _options(spec) if v != spec["value"]]
        for value in values:
            try:
                ex.update(**{name: value})
            except (ValueError, TypeError):
                continue
            out.append({name: value})
    return out


def _classes(e):
    return (e.get("class") or "").split()


def svg_problems(svg: str) -> list[str]:
    """What collides or leaves the drawing in one SVG drawing."""
    root = ET.fromstring(svg)
    width, height = float(root.get("width")), float(root.get("height"))
    problems = []
    words = []                      # (box, text, in a legend, in a route number)

    def walk(node, legend=False, badge=False):
        legend = legend or "ic-legend" in _classes(node)
        badge = badge or "ic-route-number" in _classes(node)
        if node.tag == f"{SVG}text":
            s = "".join(node.itertext())
            if s.strip():
                box = text_box(float(node.get("x")), float(node.get("y")), s,
                               float(node.get("font-size") or 12),
                               node.get("text-anchor") or "start",
                               bold=node.get("font-weight") == "bold")
                words.append((box, s, legend, badge))
        for child in node:
            if child.tag != f"{SVG}title":
                walk(child, legend, badge)

    walk(root)
    for (x0, y0, x1, y1), s, _l, _b in words:
        if x0 < -1 or x1 > width + 1 or y0 < -1 or y1 > height + 1:
            problems.append(f"text leaves the drawing ({width:.0f}x{height:.0f}): {s!r}")
    badges = []
    for g in root.iter(f"{SVG}g"):
        if "ic-route-number" in _classes(g):
            c = next(g.iter(f"{SVG}circle"))
            badges.append((float(c.get("cx")), float(c.get("cy")), float(c.get("r")),
                           "".join(g.itertext()).strip()))
    for i, (x, y, r, n) in enumerate(badges):
        for (x2, y2, r2, n2) in badges[:i]:
            if np.hypot(x - x2, y - y2) < r + r2 - 1:
                problems.append(f"route numbers {n2} and {n} overlap")
        for (bx0, by0, bx1, by1), s, _l, badge in words:
            if badge:
                continue
            dx = max(bx0 - x, 0.0, x - bx1)
            dy = max(by0 - y, 0.0, y - by1)
            if np.hypot(dx, dy) < r - 1:
                problems.append(f"route number {n} covers the words {s!r}")
    legend_words = [w for w in words if w[2]]
    for (a0, b0, a1, b1), s, _l, _b in legend_words:
        for (c0, d0, c1, d1), t, legend, _b2 in words:
            if legend:
                continue
            if min(a1, c1) - max(a0, c0) > 1 and min(b1, d1) - max(b0, d0) > 1:
                problems.append(f"legend words {s!r} cover {t!r}")
    return problems


def figure_problems(fig) -> list[str]:
    """What is cut off or hidden in a drawn matplotlib figure."""
    from matplotlib.container import BarContainer
    from matplotlib.patches import Rectangle

    renderer = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    problems = []

    def inside(artist, what):
        if not artist.get_visible() or not artist.get_text().strip():
            return
        bb = artist.get_window_extent(renderer)
        if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > W + 1 or bb.y1 > H + 1:
            problems.append(f"{what} {artist.get_text()!r} is cut off by the figure's edge")

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                loc = tick.get_loc()
                if not (lo - 1e-9 * abs(lo) <= loc <= hi + 1e-9 * abs(hi)):
                    continue
                for label in (tick.label1, tick.label2):
                    inside(label, "tick label")
        for t in ax.texts:
            inside(t, "text")
        inside(ax.title, "title")
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        lb = legend.get_window_extent(renderer)
        for line in ax.get_lines():
            if line.get_label().startswith("_") and len(line.get_xdata()) < 3:
                continue                      # a vertical or horizontal marker line
            xy = line.get_transform().transform(
                np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
            xy = xy[np.isfinite(xy).all(axis=1)]
            hit = ((xy[:, 0] > lb.x0) & (xy[:, 0] < lb.x1) & (xy[:, 1] > lb.y0)
                   & (xy[:, 1] < lb.y1))
            if hit.any():
                problems.append(f"the legend covers {int(hit.sum())} point(s) of the "
                                f"curve {line.get_label()!r}")
        bars = [p for c in ax.containers if isinstance(c, BarContainer) for p in c]
        for patch in bars:
            if not isinstance(patch, Rectangle) or patch.get_height() == 0:
                continue
            pb = patch.get_window_extent(renderer)
            ox = min(pb.x1, lb.x1) - max(pb.x0, lb.x0)
            oy = min(pb.y1, lb.y1) - max(pb.y0, lb.y0)
            if ox > 2 and oy > 2:
                problems.append("the legend covers a bar")
    return problems


@pytest.mark.parametrize("name,factory", EXPLORERS, ids=[n for n, _ in EXPLORERS])
def test_nothing_collides_or_is_cut_off(name, factory):
    ex = factory()
    found = []
    for values in settings(ex):
        data, _png = ex.png(**values)          # drawn as the learner's figure is
        where = ex.settings_text(**values)
        found += [f"{where}: figure: {p}" for p in figure_problems(ex._fig)]
        if ex.diagram is not None:
            found += [f"{where}: drawing: {p}" for p in svg_problems(ex.svg(data))]
    assert not found, f"{name}:\n" + "\n".join(sorted(set(found)))


def test_the_checks_catch_what_they_look_for():
    """The checks can fail: a number over a word, a word past the edge, a legend
    over a curve and a tick label past the figure's edge are all reported."""
    from matplotlib.figure import Figure

    from course_lib.draw.svg import Canvas

    cv = Canvas(200, 100)
    cv.text(50, 50, "a label under a badge", size=12)
    with cv.group(cls="ic-route-number"):
        cv.circle(50, 50, 10)
        cv.text(50, 51, "2", size=12)
    cv.text(190, 20, "past the edge", size=12, anchor="start")
    found = svg_problems(cv.to_svg())
    assert any("covers the words 'a label under a badge'" in p for p in found)
    assert any("leaves the drawing" in p and "past the edge" in p for p in found)

    fig = Figure(figsize=(4, 3), dpi=100)
    fig.set_layout_engine("none")
    fig.subplotpars.update(left=0.0, right=1.0)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1, 2, 3], [3, 3, 3, 3], label="a flat curve")
    ax.set_ylim(0, 3.2)
    ax.legend(loc="upper left")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    found = figure_problems(fig)
    assert any("covers" in p and "a flat curve" in p for p in found)
    assert any("tick label" in p and "cut off" in p for p in found)
