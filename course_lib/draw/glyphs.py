"""One glyph per thing: the GPU (a factory) and a buffer (numbered chunk boxes).

Every drawing that shows a GPU draws it with :func:`gpu_glyph` -- the city's
factory box (chapter 0's map): a rounded box in the factory's colour with a
dark green outline, the italic story name ("factory") where there is room,
the GPU's name in bold, and, where the drawing shows it, the warehouse (HBM)
inside.  Only the size changes from drawing to drawing: a road map's 30 px
square with the rank in it, a ring's box with its chunks, a city's factory
with its warehouse.  Every buffer is drawn with :func:`chunk_boxes`: one box
per chunk, outlined in the chunk's colour, filled from the bottom by the
share of the sum the copy holds, with that count written in it (a tick when
complete).

Both carry the classes tests and the browser read: ``ic-gpu`` (the group,
with the caller's ``data-`` attributes) around an ``ic-gpu-body`` rectangle,
``ic-hbm`` for the warehouse, ``ic-chunk`` (``data-rank``, ``data-chunk``,
``data-have``) per chunk box.

>>> from course_lib.draw.svg import Canvas
>>> c = Canvas(200, 100)
>>> top = gpu_glyph(c, 10, 10, 90, 60, "GPU 0", data_rank=0)
>>> chunk_boxes(c, 16, top, [(1, 0.5), (2, 1.0)], ["#4477aa", "#ee6677"], 16, 18, rank=0)
>>> svg = c.to_svg()
>>> svg.count('class="ic-gpu-body"'), svg.count('class="ic-chunk"'), gpu_corner(90, 60)
(1, 2, 6.0)
"""

from __future__ import annotations

import html

from .style import PLACES
from .svg import Canvas, _num, text_width

__all__ = ["gpu_glyph", "gpu_corner", "chunk_boxes", "GPU_FILL", "GPU_STROKE",
           "GPU_HIGHLIGHT", "CHUNK_EMPTY", "fit_text"]

#: The factory's fill, outline and the outline of a highlighted factory.
GPU_FILL = PLACES["gpu"][0]
GPU_STROKE = "#2f6f57"
GPU_HIGHLIGHT = "#c2185b"
#: The grey of the empty part of a chunk box.
CHUNK_EMPTY = "#f4f4f4"
_HBM_STROKE = "#6aa88f"
_MUTED = "#555"
_INK = "#222"
_PITCH = 14              # px between lines of 11 px text


def gpu_corner(w: float, h: float) -> float:
    """The factory's corner radius, px: 6, or a fifth of its short side when smaller."""
    return round(min(6.0, min(w, h) / 5), 2)


def fit_text(s: str, width: float, size: float) -> str:
    """``s`` shortened with an ellipsis to fit ``width`` px (at ``size`` px)."""
    if text_width(s, size) <= width:
        return s
    while s and text_width(s + "…", size) > width:
        s = s[:-1]
    return s + "…"


def gpu_glyph(cv: Canvas, x: float, y: float, w: float, h: float, label: str, *,
              story: bool = True, lines=(), warehouse=None, highlight: bool = False,
              title: str | None = None, align: str = "middle", size: float = 11,
              cls: str | None = None, contents=None, **data) -> float:
    """Draw one GPU as the city's factory in the box (x, y, w, h); return where
    its contents may start (the y under its words).

    Parameters
    ----------
    cv : Canvas
        Where to draw.
    x, y, w, h : float
        The factory's box, px (top-left corner and size).
    label : str
        The GPU's name, in bold ("GPU 3", "GPU 0 · H100", or a rank alone).
    story : bool
        Write the story's name ("factory", italic) above the label; leave it
        out where the box is too small for it.
    lines : sequence of str
        More lines under the label ("copy engine (DMA)").
    warehouse : sequence of str, optional
        Draw the warehouse (HBM) inside, at the bottom, with these lines (the
        first italic: ``["warehouse", "HBM", "3.35 TB/s"]``).
    highlight : bool
        Outline the factory in the highlight colour (a route's end, a chosen GPU).
    title : str, optional
        Tooltip (default: "factory · <label>").
    align : {"middle", "start"}
        ``"middle"``: words centred, from the top (in the middle of a box
        with nothing else in it).  ``"start"``: one row, the label at the left,
        vertically centred (a GPU drawn as a row of chunk boxes).
    size : float
        Font size of the label, px (11 or 12; 9 on the smallest road maps).
    cls : str, optional
        More classes for the group besides ``ic-gpu``.
    contents : callable, optional
        ``contents(top)`` draws what the GPU holds (its buffer's chunk boxes)
        inside the GPU's group; ``top`` is the y under its words (for
        ``align="start"``, the box's top).
    **data
        Attributes of the group (``data_rank=3`` -> ``data-rank="3"``).
    """
    city = PLACES["gpu"][1]
    group = "ic-gpu" + (f" {cls}" if cls else "")
    with cv.group(cls=group, **data):
        cv.rect(x, y, w, h, fill=GPU_FILL, stroke=GPU_HIGHLIGHT if highlight else GPU_STROKE,
                width=3 if highlight else 1.4, rx=gpu_corner(w, h), cls="ic-gpu-body",
                title=title or f"{city} · {label}")
        if align == "start":
            cv.text(x + 8, y + h / 2 + 1, fit_text(label, w - 12, size), size=size,
                    anchor="start", weight="bold", fill=_INK)
            if contents is not None:
                contents(y)
            return y
        rows = ([(city, "story")] if story else []) + [(label, "label")] + \
            [(s, "line") for s in lines]
        pitch = max(_PITCH, size + 3)
        block = pitch * (len(rows) - 1)
        if warehouse is None and contents is None:
            first = y + h / 2 + 1 - block / 2          # words alone: in the middle
        else:
            first = y + 11
        for i, (s, kind) in enumerate(rows):
            cv.text(x + w / 2, first + i * pitch, fit_text(s, w - 6, size if kind == "label"
                                                          else 11),
                    size=size if kind == "label" else 11, italic=kind == "story",
                    weight="bold" if kind == "label" else None,
                    fill=_MUTED if kind == "story" else _INK)
        below = first + block + pitch / 2 + 1
        if warehouse:
            wl = list(warehouse)
            wy = below
            wh = y + h - 5 - wy
            cv.rect(x + 5, wy, w - 10, wh, fill=PLACES["hbm"][0], stroke=_HBM_STROKE,
                    width=1, rx=4, cls="ic-hbm",
                    title=f"{PLACES['hbm'][1]} · " + " ".join(wl[1:]) if len(wl) > 1 else None)
            top = wy + wh / 2 - _PITCH * (len(wl) - 1) / 2
            for i, s in enumerate(wl):
                cv.text(x + w / 2, top + i * _PITCH, fit_text(s, w - 12, 11), size=11,
                        italic=i == 0, fill=_MUTED if i == 0 else _INK)
        if contents is not None:
            contents(below)
        return below


def chunk_boxes(c: Canvas, x, y, fills, colours, w, h, rank, received=(), gap=2,
                chunks=None, numbers=True):
    """A buffer: a row of chunk boxes.

    Each box is outlined in its chunk's colour and filled from the bottom by
    the share of the sum the copy holds; a full box gets a white tick, one
    that just received data a black border.  ``fills`` holds ``(have,
    fraction)`` pairs (``have`` = how many GPUs' data the copy holds);
    ``chunks`` the chunk numbers of the boxes (default 0, 1, ...),
    ``received`` those that arrived this step; ``numbers`` writes ``have`` in
    the boxes that are not complete (where it fits in the box).
    """
    # written as SVG text directly (the same elements Canvas.rect / Canvas.text
    # write): a ring's animation draws hundreds of these boxes a frame
    chunks = list(range(len(fills))) if chunks is None else list(chunks)
    received = set(received)
    rank_attr = html.escape(str(rank), quote=True)
    parts, boxes = c._parts, c.text_boxes
    W, H = _num(w), _num(h)
    tick_w = text_width("✓", 11) * 1.08
    for j, (f, col, k) in enumerate(zip(fills, colours, chunks)):
        xx = x + j * (w + gap)
        have, frac = f
        got = k in received
        X, Y = _num(xx), _num(y)
        parts.append(f'<g class="ic-chunk" data-rank="{rank_attr}" data-chunk="{_num(k)}" '
                     f'data-have="{_num(have)}">'
                     f'<rect x="{X}" y="{Y}" width="{W}" height="{H}" rx="2" '
                     f'fill="{CHUNK_EMPTY}" stroke="{_INK if got else col}" '
                     f'stroke-width="{"2.4" if got else "1.2"}"/>')
        fh = max(frac, 0.0) * (h - 2)
        if fh > 0:
            parts.append(f'<rect x="{_num(xx + 1)}" y="{_num(y + h - 1 - fh)}" '
                         f'width="{_num(w - 2)}" height="{_num(fh)}" rx="1" fill="{col}" '
                         f'stroke="none" stroke-width="0"/>')
        word, fill = None, "white"
        if frac >= 1 - 1e-9 and w >= 9:
            word = "✓"
        elif numbers and have and h >= 13:
            ww = text_width(str(have), 11) * 1.08
            if ww <= w - 2:
                word, fill = str(have), "white" if frac > 0.5 else _INK
        if word is not None:
            cx, cy = xx + w / 2, y + h / 2 + 1
            tw = tick_w if word == "✓" else ww
            boxes.append((cx - tw / 2, cy - 6.6, cx + tw / 2, cy + 6.6))
            parts.append(f'<text x="{_num(cx)}" y="{_num(cy)}" font-size="11" '
                         f'text-anchor="middle" font-weight="bold" fill="{fill}" '
                         f'dominant-baseline="middle">{word}</text>')
        parts.append("</g>")
