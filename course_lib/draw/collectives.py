"""Collectives you watch: the ring, the double binary tree, NVLS and the two-level AllReduce.

Every drawing reads the schedule it shows from the model that defines it, so
a picture cannot disagree with a number:

* :func:`ring_allreduce` -- sends from :func:`course_lib.traffic.ring_allreduce_schedule`,
  how much of the sum each copy of each chunk holds from
  :func:`course_lib.traffic.ring_allreduce_contributions`;
* :func:`double_binary_tree` -- parents from :func:`course_lib.topology.double_binary_tree`;
* :func:`nvls` -- the in-switch AllReduce of :func:`course_lib.sim.schedules.in_switch`
  (up to the switch, reduced there, down to every GPU);
* :func:`hierarchical` -- the three phases of :func:`course_lib.sim.schedules.hierarchical`
  (ReduceScatter in each node, AllReduce on each rail, AllGather in each node),
  the sends of each phase taken from the simulator's own template.

Each takes ``step``: a whole number draws the state after that step with the
sends of that step as arrows; ``step=None`` returns the animated version (one
SMIL-animated SVG over every state, see :func:`course_lib.draw.svg.animate`),
which plays without a script in JupyterLab and in the static HTML edition.
:func:`ring_allreduce_strip` lays every state of the ring side by side, for
paper.

CSS classes for tests and the browser: ``ic-gpu`` (a GPU), ``ic-chunk`` (one
chunk slot; ``data-rank``, ``data-chunk``, ``data-have`` = how many GPUs'
data it holds), ``ic-send`` (one arrow; ``data-src``, ``data-dst``,
``data-chunk``), ``ic-frame`` (one state of an animation).

>>> d = ring_allreduce(4, step=1)
>>> d.svg.count('class="ic-send"'), d.svg.count('class="ic-gpu"')
(4, 4)
>>> ring_allreduce(4).svg.count('class="ic-frame"')
7
>>> ring_allreduce(4, step=7)
Traceback (most recent call last):
...
ValueError: step must be an integer >= 0 and <= 6, got 7
"""

from __future__ import annotations

import math

from .. import traffic
from ..analytic import (COLLECTIVES, busbw_factor, nvls_allreduce_bytes_per_port,
                        ring_allreduce_bytes_per_rank)
from ..topology import double_binary_tree as _dbt_parents
from ..units import check_int, check_positive
from .style import CHUNK_COLOURS, NETWORK_MACHINES, PLACES, ROADS
from .glyphs import chunk_boxes, gpu_glyph
from .svg import Canvas, Diagram, animate

__all__ = ["ring_allreduce", "ring_allreduce_strip", "ring_state",
           "double_binary_tree", "tree_steps", "tree_chain", "chain_steps", "nvls",
           "nvls_steps",
           "hierarchical", "hierarchical_phases", "two_way_tracks", "collective_effect",
           "MAX_RING_GPUS",
           "MAX_DRAWN_NODES"]

#: Most GPUs a ring drawing shows (one colour per chunk, readable slots).
MAX_RING_GPUS = len(CHUNK_COLOURS)
#: Most nodes a two-level drawing shows side by side at notebook width (more
#: nodes only repeat the pattern: one more district on every rail).
MAX_DRAWN_NODES = 4
_INK = "#222"
_MUTED = "#666"
_FRAME_S = 1.1          # seconds a state stays on screen in an animation


def _chunk_colour(k: int) -> str:
    return CHUNK_COLOURS[k % len(CHUNK_COLOURS)]


def _check_step(step, last: int) -> int:
    return check_int(step, "step", minimum=0, maximum=last)


def _curved_arrow(c: Canvas, x1, y1, x2, y2, bend, colour, width=3.0, head=9,
                  label=None, label_fill=None, cls="ic-send", **data):
    """A quadratic curve from (x1, y1) to (x2, y2) bulging ``bend`` px to its
    left, with an arrowhead and an optional label at the bulge."""
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length, dx / length
    qx, qy = mx + nx * bend, my + ny * bend
    ang = math.atan2(y2 - qy, x2 - qx)
    bx, by = x2 - head * math.cos(ang), y2 - head * math.sin(ang)
    with c.group(cls=cls, **data):
        c.path(f"M{x1:.1f},{y1:.1f} Q{qx:.1f},{qy:.1f} {bx:.1f},{by:.1f}",
               stroke=colour, width=width)
        c.polygon([(x2, y2),
                   (bx + head * 0.55 * math.sin(ang), by - head * 0.55 * math.cos(ang)),
                   (bx - head * 0.55 * math.sin(ang), by + head * 0.55 * math.cos(ang))],
                  fill=colour)
        if label:
            lx, ly = (mx + qx) / 2 + nx * 4, (my + qy) / 2 + ny * 4
            c.rect(lx - 13, ly - 8, 26, 16, fill=label_fill or "white", stroke=colour,
                   width=1, rx=3)
            c.text(lx, ly + 1, label, size=11, fill=_INK, weight="bold")


def _trim(x1, y1, x2, y2, hw, hh, gap=3.0):
    """The segment between two boxes' centres, cut back to the boxes' edges
    (half width ``hw``, half height ``hh``) plus ``gap``."""
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    cut = min(t * length + gap, 0.45 * length)
    ux, uy = dx / length, dy / length
    return x1 + ux * cut, y1 + uy * cut, x2 - ux * cut, y2 - uy * cut


def _chunk_key(c: Canvas, x, y, n, slot=14):
    """'chunk 0 1 2 ...' in the chunk colours, and what a slot's fill means."""
    c.text(x, y, "chunks:", size=11, anchor="start", fill=_MUTED)
    for k in range(n):
        xx = x + 50 + k * (slot + 4)
        c.rect(xx, y - 7, slot, 14, fill=_chunk_colour(k), stroke="none", rx=2)
        c.text(xx + slot / 2, y + 1, str(k), size=11, fill="white", weight="bold")


# ---------------------------------------------------------------------------
# what each collective does: every GPU's buffer before and after
# ---------------------------------------------------------------------------
_EFFECT = {
    "allreduce": "every GPU ends with the sum of all buffers",
    "reducescatter": "GPU r ends with chunk r of the sum",
    "allgather": "every GPU ends with every GPU's chunk",
    "broadcast": "the root's buffer is copied to every GPU",
    "reduce": "the root ends with the sum of all buffers",
    "alltoall": "GPU r sends its chunk j to GPU j: a transpose",
}


def _effect_rows(collective: str, n: int, root: int):
    """Per GPU, before and after: a list of ``(have, fraction, colour)`` per
    slot.  ``have`` = how many GPUs' data the slot holds (0 = empty)."""
    own = [[(1, 1 / n)] * n for _ in range(n)]          # each GPU's own contribution
    summed = [(n, 1.0)] * n
    empty, full = (0, 0.0), (1, 1.0)
    col = [[_chunk_colour(k) for k in range(n)] for _ in range(n)]
    if collective == "allreduce":
        before, after = own, [summed] * n
    elif collective == "reducescatter":
        before = own
        after = [[(n, 1.0) if k == r else empty for k in range(n)] for r in range(n)]
    elif collective == "allgather":
        before = [[full if k == r else empty for k in range(n)] for r in range(n)]
        after = [[full] * n for _ in range(n)]
    elif collective == "broadcast":
        before = [[full if r == root else empty for _ in range(n)] for r in range(n)]
        after = [[full] * n for _ in range(n)]
    elif collective == "reduce":
        before = own
        after = [summed if r == root else [empty] * n for r in range(n)]
    else:                                   # alltoall: colour = the sending GPU
        before = after = [[full] * n for _ in range(n)]
        col_before = [[_chunk_colour(r)] * n for r in range(n)]
        col_after = [[_chunk_colour(j) for j in range(n)] for _ in range(n)]
        return before, after, col_before, col_after
    return before, after, col, col


def collective_effect(collective: str = "allgather", n: int = 4, root: int = 0,
                      of: int | None = None) -> Diagram:
    """What a collective leaves in every GPU's buffer: before and after, side by side.

    The textbook picture of a collective's *result* (not of its schedule:
    :func:`ring_allreduce` and the others draw how the data moves).

    Parameters
    ----------
    collective : str
        One of ``course_lib.analytic.COLLECTIVES`` (nccl-tests names).
    n : int
        GPUs, 2 to :data:`MAX_RING_GPUS`; each buffer is drawn as ``n`` chunks.
    root : int
        The root of Broadcast and Reduce, 0 to n-1.
    of : int, optional
        The machine's GPU count when the drawing shows a sample of it (``n``
        drawn of ``of``): the drawing says so, and its bus-bandwidth factor is
        the machine's.

    Returns
    -------
    Diagram

    Notes
    -----
    Slots are coloured by chunk (AllToAll: by the GPU that sent the chunk, so
    the transpose shows); the number in a slot is how many GPUs' data it
    holds.  The caption gives nccl-tests' bus-bandwidth factor
    (:func:`course_lib.analytic.busbw_factor`).  Chapter 7.

    >>> d = collective_effect("reducescatter", 4)
    >>> d.svg.count('data-have="4"')      # after: one summed chunk per GPU
    4
    >>> collective_effect("gossip")
    Traceback (most recent call last):
    ...
    ValueError: collective must be one of ['allreduce', 'allgather', 'reducescatter', 'broadcast', 'reduce', 'alltoall']; got 'gossip'
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {list(COLLECTIVES)}; got {collective!r}")
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    root = check_int(root, "root", minimum=0, maximum=n - 1)
    of = n if of is None else check_int(of, "of", minimum=n, maximum=10 ** 9)
    before, after, col_b, col_a = _effect_rows(collective, n, root)
    slot_w, slot_h, gap = 22, 24, 3
    row_w = n * (slot_w + gap)
    label_w = 100 if collective in ("broadcast", "reduce") else 70
    box_w, box_h, row_gap = row_w + label_w + 6, slot_h + 12, 10
    width = max(560.0, 2 * box_w + 150)
    top = 70
    height = top + n * (box_h + row_gap) + 62 + (16 if of > n else 0)
    name = {"allreduce": "AllReduce", "reducescatter": "ReduceScatter",
            "allgather": "AllGather", "broadcast": "Broadcast", "reduce": "Reduce",
            "alltoall": "AllToAll"}[collective]
    sample = f"{n} of {of:,} GPUs drawn" if of > n else f"{n} GPUs"
    c = Canvas(width, height, title=f"{name} of {sample}: every buffer before and after")
    c.text(width / 2, 18, f"{name}: {_EFFECT[collective]}", size=15, weight="bold")
    if of > n:
        c.text(width / 2, 38, f"a sample: the first {n} of the machine's {of:,} GPUs, each "
               f"buffer cut into {n} chunks here ({of:,} on the machine)", size=11,
               fill=_MUTED, cls="ic-sample")
    xs = (20, width - 20 - box_w)
    for x, label in zip(xs, ("before", "after")):
        c.text(x + box_w / 2, top - 14, label, size=13, weight="bold", fill=_MUTED)
    for r in range(n):
        y = top + r * (box_h + row_gap)
        for x, rows, cols, phase in ((xs[0], before, col_b, "before"),
                                     (xs[1], after, col_a, "after")):
            tag = f"GPU {r}" + (" (root)" if collective in ("broadcast", "reduce")
                                and r == root else "")
            gpu_glyph(c, x, y, box_w, box_h, tag, align="start",
                      title=f"factory · GPU {r}, {phase}", data_rank=r, data_phase=phase,
                      contents=lambda _top, x=x, y=y, rows=rows, cols=cols, r=r: chunk_boxes(
                          c, x + label_w, y + 6, rows[r], cols[r], slot_w, slot_h, rank=r,
                          gap=gap, numbers=True))
    mid = (xs[0] + box_w + xs[1]) / 2
    ymid = top + n * (box_h + row_gap) / 2
    _curved_arrow(c, xs[0] + box_w + 14, ymid, xs[1] - 14, ymid, bend=0,
                  colour=_INK, width=3, cls="ic-effect-arrow")
    c.text(mid, ymid - 14, name, size=12, weight="bold")
    f = busbw_factor(collective, of)
    key = ("colour = the GPU that sent the chunk" if collective == "alltoall"
           else "colour = chunk")
    c.text(16, height - 50, f"{key}; number = how many GPUs' data it holds;", size=11,
           anchor="start", fill=_MUTED)
    c.text(16, height - 34, f"✓ = complete; empty = nothing there.", size=11,
           anchor="start", fill=_MUTED)
    c.text(16, height - 14, f"nccl-tests: busbw = algbw × {f:.3g} "
           f"for {name} of {of:,} GPUs.", size=11, anchor="start", fill=_MUTED)
    return c.diagram()


# ---------------------------------------------------------------------------
# the ring
# ---------------------------------------------------------------------------
def ring_state(n: int, step: int) -> dict:
    """The ring AllReduce of ``n`` GPUs after ``step`` steps, as the drawing shows it.

    Returns
    -------
    dict
        ``have`` (n x n ints: how many GPUs' data rank r's copy of chunk k
        holds, :func:`course_lib.traffic.ring_allreduce_contributions`),
        ``sends`` (the sends of this step, from
        :func:`course_lib.traffic.ring_allreduce_schedule`; empty at step 0),
        ``phase`` (``"start"``, ``"reduce-scatter"`` or ``"all-gather"``) and
        ``last_step`` = 2(n-1).

    >>> s = ring_state(3, 2)
    >>> s["phase"], [m["chunk"] for m in s["sends"]], s["have"].tolist()
    ('reduce-scatter', [2, 0, 1], [[1, 3, 2], [2, 1, 3], [3, 2, 1]])
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    last = 2 * (n - 1)
    k = _check_step(step, last)
    sends = traffic.ring_allreduce_schedule(n)[k - 1] if k else []
    return {"n": n, "step": k, "last_step": last, "sends": sends,
            "phase": sends[0]["phase"] if sends else "start",
            "have": traffic.ring_allreduce_contributions(n, k)}


_PHASE_NAME = {"start": "before the first step", "reduce-scatter": "ReduceScatter",
               "all-gather": "AllGather"}


def _ring_caption(state) -> tuple[str, str, str]:
    n, k, last = state["n"], state["step"], state["last_step"]
    if k == 0:
        return (f"{n} GPUs on a ring, each buffer S cut into {n} chunks",
                "Every copy holds only its own GPU's data.", "")
    if state["phase"] == "reduce-scatter":
        what = "each GPU sends S/n to the next, which adds it to its copy"
    else:
        what = "each GPU forwards a finished chunk (S/n); the next one keeps it"
    head = f"Step {k} of {last}: {_PHASE_NAME[state['phase']]}"
    if k == n - 1:
        tail = "ReduceScatter done: every GPU holds one chunk fully summed."
    elif k == last:
        tail = "AllReduce done: every GPU holds every chunk fully summed."
    else:
        tail = ""
    return head, what, tail


def _ring_frame(n: int, step: int, title: str = "", road: str = "nvlink",
                gpus_per_node: int | None = None, machine=None) -> Canvas:
    state = ring_state(n, step)
    gpn = gpus_per_node if gpus_per_node and gpus_per_node < n else None
    per_row = n if n <= 4 else math.ceil(n / 2) if n <= 8 else 4
    rows = math.ceil(n / per_row)
    slot_w, slot_h = (18, 24) if n <= 8 else (14, 20)
    box_w = per_row * (slot_w + 2) + 18
    box_h = 36 + rows * (slot_h + 4)           # "factory", "GPU r", the chunk boxes
    # adjacent boxes at least ~80 px apart along the chord, so arrows show
    chord = max(box_w, box_h) + (110 if n <= 8 else 70)
    radius = max(150.0, chord / (2 * math.sin(math.pi / n)) if n > 2 else 150.0)
    width = max(640.0, 2 * radius + box_w + 60)
    top = 78
    cx, cy = width / 2, top + radius + box_h / 2 + 10
    height = cy + radius + box_h / 2 + 84 + (18 if gpn else 0)
    c = Canvas(width, height, title=title or f"Ring AllReduce of {n} GPUs, step "
               f"{state['step']} of {state['last_step']}")
    head, what, tail = _ring_caption(state)
    c.text(width / 2, 18, head, size=15, weight="bold")
    c.text(width / 2, 40, what, size=12, fill=_INK)
    if tail:
        c.text(width / 2, 60, tail, size=12, weight="bold", fill="#1b6e4f")
    # the ring road: one kind, or NVLink inside each node and the network between
    if gpn is None:
        c.circle(cx, cy, radius, fill="none", stroke=ROADS[road].colour, width=5,
                 opacity=0.25, cls="ic-road", data_kind=road)
    else:
        for r in range(n):
            kind = "network" if (r + 1) % gpn == 0 else road
            a0, a1 = 2 * math.pi * r / n, 2 * math.pi * (r + 1) / n
            c.path(f"M{cx + radius * math.sin(a0):.1f},{cy - radius * math.cos(a0):.1f} "
                   f"A{radius:.1f},{radius:.1f} 0 0 1 {cx + radius * math.sin(a1):.1f},"
                   f"{cy - radius * math.cos(a1):.1f}", kind=kind, width=5,
                   opacity=0.25 if kind == road else 0.7, cls="ic-road", data_kind=kind,
                   data_src=r, data_dst=(r + 1) % n)
    pos = [(cx + radius * math.sin(2 * math.pi * r / n),
            cy - radius * math.cos(2 * math.pi * r / n)) for r in range(n)]
    received = {}
    for m in state["sends"]:
        received.setdefault(m["dst"], set()).add(m["chunk"])
    # sends: a curve along the ring from one box to the next
    half = math.hypot(box_w, box_h) / 2 + 4
    for m in state["sends"]:
        a0 = 2 * math.pi * m["src"] / n
        a1 = 2 * math.pi * (m["src"] + 1) / n
        if n == 2 and m["src"] == 1:           # two GPUs: the way back on the left
            a1 = 2 * math.pi
        pad = min(0.4 * (a1 - a0), 2 * math.asin(min(1.0, half / (2 * radius))))
        p0 = (cx + radius * math.sin(a0 + pad), cy - radius * math.cos(a0 + pad))
        p1 = (cx + radius * math.sin(a1 - pad), cy - radius * math.cos(a1 - pad))
        col = _chunk_colour(m["chunk"])
        _curved_arrow(c, *p0, *p1, bend=-22 if n > 2 else -110, colour=col,
                      width=3.5, label=f"c{m['chunk']}", data_src=m["src"],
                      data_dst=m["dst"], data_chunk=m["chunk"], data_phase=m["phase"])
    for r, (x, y) in enumerate(pos):
        where = f", node {r // gpn} GPU {r % gpn}" if gpn else ""
        got = received.get(r, set())

        def buffer(top, r=r, x=x, got=got):
            for row in range(rows):
                ks = list(range(row * per_row, min(n, (row + 1) * per_row)))
                fills = [(int(state["have"][r][k]), state["have"][r][k] / n) for k in ks]
                chunk_boxes(c, x - box_w / 2 + 9, top + row * (slot_h + 4), fills,
                            [_chunk_colour(k) for k in ks], slot_w, slot_h, rank=r,
                            received=got, chunks=ks, numbers=True)

        gpu_glyph(c, x - box_w / 2, y - box_h / 2, box_w, box_h, f"GPU {r}", size=12,
                  title=f"factory · GPU {r}{where}", contents=buffer, data_rank=r)
    # centre: where we are
    c.text(cx, cy - 22, f"step {state['step']} / {state['last_step']}", size=20,
           weight="bold", fill=_INK)
    phase = _PHASE_NAME[state["phase"]] if state["step"] else "start"
    c.text(cx, cy + 4, phase, size=14, fill=_MUTED)
    sent = state["step"]
    c.text(cx, cy + 26, f"sent so far: {sent}/{n} of S per GPU"
           if sent else "nothing sent yet", size=12, fill=_MUTED)
    # key (a second legend row, the network, needs one more row of height)
    kinds = [road] + (["network"] if gpn and road != "network" else [])
    if len(kinds) > 1:
        c.height = height = height + 16 * (len(kinds) - 1)
    y0 = height - 58 - 16 * (len(kinds) - 1)
    if gpn:
        nodes = n // gpn
        text = (f"Drawn: {nodes} nodes × {gpn} GPUs; NVLink inside a node, the network "
                f"between nodes ({nodes} of the ring's {n} hops)")
        if machine is not None and machine.n_ranks > n:
            text = (f"{machine.nodes} nodes × {machine.gpus_per_node} GPUs: one ring of "
                    f"{machine.n_ranks}, {machine.nodes} of its hops on the network; drawn: "
                    f"{nodes} nodes × {gpn} GPUs")
        c.text(16, y0 - 18, text, size=11, anchor="start", fill=_INK, cls="ic-ring-nodes")
    _chunk_key(c, 16, y0, n)
    c.text(16, y0 + 20, "Number and fill = how many GPUs' data that copy holds; "
           f"✓ = all {n}; black border = arrived this step.", size=11,
           anchor="start", fill=_MUTED)
    c.legend(16, y0 + 40, kinds,
             machines=_network_name(machine))
    return c


def _check_road(road) -> str:
    if road not in ROADS:
        raise ValueError(f"road must be one of {sorted(ROADS)}, got {road!r}")
    return road


def ring_allreduce(n: int = 4, step: int | None = None,
                   seconds_per_step: float = _FRAME_S, road: str = "nvlink",
                   gpus_per_node: int | None = None, cluster=None) -> Diagram:
    """The ring AllReduce of ``n`` GPUs drawn as chunks moving around a ring.

    Parameters
    ----------
    n : int
        GPUs on the ring, 2 to 12 (each buffer is cut into ``n`` chunks).
    step : int or None
        0 (the start) to 2(n-1): the state after that many steps, with that
        step's sends as arrows, coloured by chunk.  ``None``: the animation
        of all 2(n-1)+1 states.
    seconds_per_step : float
        How long each state stays on screen in the animation.
    road : str
        The kind of road the ring runs on (a key of
        :data:`course_lib.draw.ROADS`: ``"nvlink"``, ``"pcie"``, ``"network"``).
    gpus_per_node : int, optional
        A ring over nodes: ``road`` inside each node of this many GPUs, the
        network from the last GPU of a node to the first of the next (a
        divisor of ``n``, below ``n``).
    cluster : Cluster, optional
        The machine the ring stands for, when it has more GPUs than drawn:
        its nodes, GPUs and the ring's network hops are named under the ring.

    Returns
    -------
    Diagram

    Notes
    -----
    Steps 1..n-1 are the ReduceScatter (the receiver adds), steps n..2(n-1)
    the AllGather (the receiver keeps the finished chunk); every GPU sends
    S/n each step, 2(n-1)/n x S in all.  Chapter 7.

    >>> d = ring_allreduce(3, step=2)
    >>> d.svg.count('data-have="3"')      # after ReduceScatter: one full chunk per GPU
    3
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    road = _check_road(road)
    secs = check_positive(seconds_per_step, "seconds_per_step")
    if gpus_per_node is not None:
        gpus_per_node = check_int(gpus_per_node, "gpus_per_node", minimum=1, maximum=n)
        if n % gpus_per_node:
            raise ValueError(f"gpus_per_node must divide n={n}, got {gpus_per_node}")
    if cluster is not None and not isinstance(getattr(cluster, "n_ranks", None), int):
        raise TypeError("cluster must be a Cluster from course_lib.cluster(...) or None, "
                        f"got {type(cluster).__name__}")
    kw = {"road": road, "gpus_per_node": gpus_per_node, "machine": cluster}
    if step is not None:
        return _ring_frame(n, step, **kw).diagram()
    frames = [_ring_frame(n, k, **kw).to_svg() for k in range(2 * (n - 1) + 1)]
    return animate(frames, secs,
                   title=f"Ring AllReduce of {n} GPUs, animated: "
                   f"{2 * (n - 1)} steps")


def ring_allreduce_strip(n: int = 4, columns: int | None = None) -> Diagram:
    """Every state of the ring AllReduce side by side (small multiples, for paper).

    Each panel is a GPU x chunk grid of slots, filled by the share of the sum
    each copy holds, with the step's phase; rows are GPUs, columns chunks.

    >>> ring_allreduce_strip(3).svg.count('class="ic-panel"')
    5
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    last = 2 * (n - 1)
    slot = 12
    pw = 46 + n * (slot + 2) + 14
    cols = check_int(columns if columns is not None else
                     max(1, min(last + 1, int(860 // pw))), "columns",
                     minimum=1, maximum=last + 1)
    ph = 40 + n * (slot + 4) + 8
    rows = math.ceil((last + 1) / cols)
    width, height = cols * pw + 20, rows * ph + 40
    c = Canvas(width, height, title=f"Ring AllReduce of {n} GPUs, every step")
    c.text(10, 14, f"Ring AllReduce, {n} GPUs: rows = GPUs, columns = chunks; "
           "fill = share of the sum", size=12, anchor="start", weight="bold")
    for k in range(last + 1):
        s = ring_state(n, k)
        x0 = 10 + (k % cols) * pw
        y0 = 30 + (k // cols) * ph
        received = {}
        for m in s["sends"]:
            received.setdefault(m["dst"], set()).add(m["chunk"])
        with c.group(cls="ic-panel", data_step=k):
            c.rect(x0, y0, pw - 8, ph - 6, fill="white", stroke="#ccc", rx=5)
            phase = {"start": "start", "reduce-scatter": "RS",
                     "all-gather": "AG"}[s["phase"]]
            c.text(x0 + 8, y0 + 14, f"step {k}: {phase}", size=11, anchor="start",
                   weight="bold")
            for r in range(n):
                yy = y0 + 26 + r * (slot + 4)
                c.text(x0 + 8, yy + slot / 2, f"GPU {r}", size=11, anchor="start",
                       fill=_MUTED)
                chunk_boxes(c, x0 + 46, yy, [(int(h), h / n) for h in s["have"][r]],
                       [_chunk_colour(j) for j in range(n)], slot, slot, rank=r,
                       received=received.get(r, ()))
    return c.diagram()


# ---------------------------------------------------------------------------
# NCCL's double binary tree
# ---------------------------------------------------------------------------
def _depths(parent: dict) -> dict:
    depth = {}
    for v in parent:
        d, u = 0, v
        while parent[u] is not None:
            u = parent[u]
            d += 1
        depth[v] = d
    return depth


def tree_steps(nodes: int) -> dict:
    """The double binary tree AllReduce, level by level, as the drawing shows it.

    Both trees of :func:`course_lib.topology.double_binary_tree` run at once,
    each on half of the data.  Reduce: the deepest members send up first,
    one level a step; broadcast: the roots send down, one level a step.

    Returns
    -------
    dict
        ``trees`` (the two ``{member: parent}`` dicts), ``depth`` (per tree),
        ``last_step`` = 2 x the deeper tree's depth, ``sends`` (per step 1..last,
        a list of ``(tree, src, dst, "reduce" | "broadcast")``), ``have``
        (per step 0..last, per tree, per member: how many members' data its
        copy of that half holds) and ``sends_per_node`` (bytes each member
        sends per byte of S, both trees: 1/2 up to its parent and 1/2 down to
        each child -- the max is :func:`course_lib.topology.tree_sends_per_node`).

    >>> s = tree_steps(4)
    >>> s["last_step"], s["sends"][1]
    (4, [(0, 1, 2, 'reduce'), (0, 3, 2, 'reduce'), (1, 2, 1, 'reduce'), (1, 0, 1, 'reduce')])
    >>> max(s["sends_per_node"])
    2.0
    """
    nodes = check_int(nodes, "nodes", minimum=2, maximum=32)
    return _level_steps(nodes, _dbt_parents(nodes), share=0.5)


def chain_steps(n: int) -> dict:
    """NCCL's tree inside one node: a chain of ``n`` GPUs, level by level.

    With one node there is no tree over nodes: the tree algorithm reduces
    up a chain of the node's GPUs (GPU n-1 to GPU 0, the head) and
    broadcasts back down it (:func:`course_lib.predict` models the same
    chain, ``2 (g-1)/g S`` per GPU once NCCL rotates the head over its
    channels).  The chain carries all of S.  Same keys as :func:`tree_steps`.

    >>> s = chain_steps(4)
    >>> s["trees"], s["last_step"], s["sends"][1]
    ([{0: None, 1: 0, 2: 1, 3: 2}], 6, [(0, 3, 2, 'reduce')])
    >>> s["sends_per_node"]
    [1.0, 2.0, 2.0, 1.0]
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    return _level_steps(n, [{v: (v - 1 if v else None) for v in range(n)}], share=1.0)


def _level_steps(nodes: int, trees: list, share: float) -> dict:
    """Reduce up, then broadcast down ``trees`` one level a step; each tree
    carries ``share`` of S."""
    depths = [_depths(t) for t in trees]
    levels = max(max(d.values()) for d in depths)
    have = [[{v} for v in range(nodes)] for _ in trees]
    states = [[[len(s) for s in h] for h in have]]
    sends = [None]
    for s in range(1, 2 * levels + 1):
        step = []
        if s <= levels:          # reduce: members at depth levels - s + 1 send up
            lvl = levels - s + 1
            for t, parent in enumerate(trees):
                for v, p in parent.items():
                    if p is not None and depths[t][v] == lvl:
                        step.append((t, v, p, "reduce"))
        else:                    # broadcast: members at depth s - levels receive
            lvl = s - levels
            for t, parent in enumerate(trees):
                for v, p in parent.items():
                    if p is not None and depths[t][v] == lvl:
                        step.append((t, p, v, "broadcast"))
        snap = [[set(x) for x in h] for h in have]
        for t, a, b, kind in step:
            if kind == "reduce":
                have[t][b] |= snap[t][a]
            else:
                have[t][b] = set(snap[t][a])
        sends.append(step)
        states.append([[len(x) for x in h] for h in have])
    per_node = [0.0] * nodes
    for parent in trees:
        for v, p in parent.items():
            if p is not None:
                per_node[v] += share
                per_node[p] += share
    return {"nodes": nodes, "trees": trees, "depth": depths, "levels": levels,
            "last_step": 2 * levels, "sends": sends, "have": states,
            "sends_per_node": per_node, "chain": len(trees) == 1}


def _tree_frame(nodes: int, step: int, info: dict) -> Canvas:
    k = _check_step(step, info["last_step"])
    levels = info["levels"]
    width = max(620.0, min(880.0, 60 + nodes * 64))
    level_h = 56
    panel_h = 34 + (levels + 1) * level_h
    top = 54
    height = top + 2 * panel_h + 96
    chain = info.get("chain", False)
    height -= panel_h * (2 - len(info["trees"]))
    c = Canvas(width, height, title=(f"Tree AllReduce in one node: a chain of {nodes} GPUs"
                                     if chain else f"Double binary tree over {nodes} nodes")
               + f", step {k} of {info['last_step']}")
    if k == 0:
        head = (f"{nodes} GPUs in one node: NCCL's tree is a chain (reduce up, then "
                "broadcast down)" if chain else
                f"{nodes} nodes, two binary trees: each carries half of S "
                "(reduce up, then broadcast down)")
    elif k <= levels:
        head = (f"Step {k} of {info['last_step']}: reduce — children send their "
                "partial sums up, the parent adds")
    else:
        head = (f"Step {k} of {info['last_step']}: broadcast — parents send the "
                "finished sum down")
    c.text(width / 2, 18, head, size=13, weight="bold")
    if k == info["last_step"]:
        c.text(width / 2, 38, "Done: every GPU holds the full sum." if chain else
               "Done: every node holds both halves fully summed.", size=12, fill="#1b6e4f")
    elif chain:
        c.text(width / 2, 38, f"NCCL rotates the head over its channels: each GPU sends "
               f"2(g−1)/g × S = {2 * (nodes - 1)}/{nodes} S on average", size=12,
               fill=_MUTED)
    active = {(t, a, b) for t, a, b, _ in (info["sends"][k] or [])} if k else set()
    dx = (width - 60) / nodes
    xs = [30 + dx * (v + 0.5) for v in range(nodes)]
    node_w = min(52.0, dx - 8)
    for t, parent in enumerate(info["trees"]):
        y0 = top + t * panel_h
        col = _chunk_colour(t)
        c.text(14, y0 + 10, "the chain: carries all of S, head GPU 0" if chain else
               f"tree {t + 1}: carries the {'first' if t == 0 else 'second'} half of S",
               size=12, anchor="start", weight="bold", fill=col)
        ys = {v: y0 + 40 + info["depth"][t][v] * level_h for v in parent}
        for v, p in parent.items():            # roads first
            if p is None:
                continue
            c.line(xs[v], ys[v], xs[p], ys[p], stroke=col, width=2, opacity=0.35,
                   cls="ic-tree-edge", data_tree=t, data_child=v, data_parent=p,
                   data_road=info.get("road", "network"))
        for v, p in parent.items():            # this step's sends
            if p is None:
                continue
            for a, b in ((v, p), (p, v)):
                if (t, a, b) in active:
                    x1, y1, x2, y2 = _trim(xs[a], ys[a], xs[b], ys[b], node_w / 2, 19)
                    _curved_arrow(c, x1, y1, x2, y2, bend=0, colour=col, width=4,
                                  data_src=a, data_dst=b, data_tree=t)
        have = info["have"][k][t]
        bw = min(24.0, node_w - 8)
        for v in parent:
            x, y = xs[v], ys[v]
            star = f"{v}" + ("★" if parent[v] is None else "")
            role = (" (head)" if chain else " (root)") if parent[v] is None else ""

            def buffer(top, v=v, x=x):
                chunk_boxes(c, x - bw / 2, top, [(int(have[v]), have[v] / nodes)], [col], bw,
                            14, rank=v, chunks=[t], numbers=True)

            if chain:               # the chain's members are GPUs
                gpu_glyph(c, x - node_w / 2, y - 19, node_w, 38, star, story=False, size=12,
                          title=f"factory · GPU {v}{role}", contents=buffer, data_rank=v,
                          data_tree=t)
                continue
            with c.group(cls="ic-node", data_rank=v, data_tree=t):   # a node (a city)
                c.rect(x - node_w / 2, y - 19, node_w, 38, fill=PLACES["nic"][0],
                       stroke=ROADS[info.get("road", "network")].colour, width=1.4, rx=6,
                       title=f"node {v}{role}")
                c.text(x, y - 8, star, size=12, weight="bold")
                buffer(y + 0.5)
    y = top + len(info["trees"]) * panel_h + 4
    c.text(14, y, "Bytes each GPU sends per byte of S in this chain (S up and S down "
           "each edge):" if chain else
           "Bytes each node sends per byte of S (both trees, ½ up and ½ down "
           "each edge):", size=11, anchor="start", fill=_MUTED)
    busiest = max(info["sends_per_node"])
    for v in range(nodes):
        s = info["sends_per_node"][v]
        c.text(xs[v], y + 18, f"{s:g}", size=11, weight="bold" if s == busiest else None,
               fill="#b00" if s == busiest else _INK)
    c.text(14, y + 40, "★ = head; the box in a GPU = its copy of S: number and fill = how "
           "many GPUs' data it holds, ✓ = all." if chain else "★ = root; the box in a node = "
           "its copy of that half: number and fill = how many nodes' data, ✓ = all.",
           size=11, anchor="start", fill=_MUTED)
    c.legend(14, y + 60, [info.get("road", "network")])
    return c


def double_binary_tree(nodes: int = 8, step: int | None = None,
                       seconds_per_step: float = _FRAME_S) -> Diagram:
    """NCCL's double binary tree over ``nodes`` members, step by step.

    Parameters
    ----------
    nodes : int
        Members of the trees (nodes of a cluster), 2 to 32.
    step : int or None
        0 to 2 x depth (:func:`tree_steps`); ``None``: the animation.

    Notes
    -----
    The two trees are :func:`course_lib.topology.double_binary_tree`; a
    member inner in one tree is a leaf in the other, so no member sends more
    than 2 S (:func:`course_lib.topology.tree_sends_per_node`), and there
    are only about ``2 log2(nodes)`` steps instead of the ring's
    ``2 (nodes - 1)``.  Chapter 7.

    >>> d = double_binary_tree(4, step=1)
    >>> d.svg.count('class="ic-tree-edge"')
    6
    """
    nodes = check_int(nodes, "nodes", minimum=2, maximum=32)
    info = tree_steps(nodes)
    secs = check_positive(seconds_per_step, "seconds_per_step")
    if step is not None:
        return _tree_frame(nodes, step, info).diagram()
    frames = [_tree_frame(nodes, k, info).to_svg()
              for k in range(info["last_step"] + 1)]
    return animate(frames, secs,
                   title=f"Double binary tree over {nodes} nodes, animated")


def tree_chain(n: int = 8, step: int | None = None, road: str = "nvlink",
               seconds_per_step: float = _FRAME_S) -> Diagram:
    """NCCL's tree AllReduce inside one node: a chain of ``n`` GPUs, step by step.

    Parameters
    ----------
    n : int
        GPUs of the node, 2 to :data:`MAX_RING_GPUS`.
    step : int or None
        0 to 2 (n - 1) (:func:`chain_steps`); ``None``: the animation.
    road : {"nvlink", "pcie"}
        The node's road the chain runs on.

    Notes
    -----
    With one node the "tree" has no tree in it: the double binary tree
    (:func:`double_binary_tree`) only spans nodes.  Chapter 7.

    >>> d = tree_chain(4, step=1)
    >>> d.svg.count('class="ic-tree-edge"'), d.svg.count('class="ic-send"')
    (3, 1)
    """
    info = chain_steps(n)
    info["road"] = _check_road(road)
    secs = check_positive(seconds_per_step, "seconds_per_step")
    if step is not None:
        return _tree_frame(info["nodes"], step, info).diagram()
    frames = [_tree_frame(info["nodes"], k, info).to_svg()
              for k in range(info["last_step"] + 1)]
    return animate(frames, secs, title=f"Tree AllReduce in one node: a chain of {n} GPUs, "
                   "animated")


# ---------------------------------------------------------------------------
# NVLS: the switch adds
# ---------------------------------------------------------------------------
def nvls_steps(n: int) -> list[list[tuple]]:
    """The sends of the in-switch AllReduce of ``n`` GPUs, per step 1..3.

    As :func:`course_lib.sim.schedules.in_switch` schedules it: step 1 every
    GPU sends its buffer up to the NVSwitch; step 2 the switch adds the n
    buffers (no send); step 3 it multicasts the sum down to every GPU.

    >>> [len(s) for s in nvls_steps(4)]
    [4, 0, 4]
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    return [[(r, "switch") for r in range(n)], [], [("switch", r) for r in range(n)]]


def _nvls_frame(n: int, step: int, nodes: int = 1, memo: dict | None = None) -> Canvas:
    """One state of NVLS; ``memo`` (one dict for all frames of an animation)
    keeps the factories of frames 0-2 (they hold the same data) for reuse."""
    k = _check_step(step, 3)
    sends = nvls_steps(n)
    gpu_w = 76 if n <= 8 else 62
    # each buffer is S cut into n chunks, drawn as the ring draws it
    per_row = n if n <= 4 else math.ceil(n / 2) if n <= 8 else math.ceil(n / 4)
    rows = math.ceil(n / per_row)
    slot_w, slot_h = min(18.0, (gpu_w - 12) / per_row - 2), 16
    gpu_h = 36 + rows * (slot_h + 3) + 2           # "factory", "GPU r", the chunk boxes
    gy = 250                                       # the factories' top
    width = max(620.0, 40 + n * (gpu_w + 14))
    height = gy + gpu_h + 100 + (36 if nodes > 1 else 0)
    of = f" (one node of {nodes})" if nodes > 1 else ""
    c = Canvas(width, height, title=f"In-switch AllReduce (NVLS) of {n} GPUs{of}, "
               f"step {k} of 3")
    heads = [f"{n} GPUs, each with its own buffer S; the NVSwitch can add",
             "Step 1 of 3: every GPU sends its buffer up to the NVSwitch, once",
             "Step 2 of 3: the switch adds the buffers as they pass through",
             "Step 3 of 3: the switch sends the sum down to every GPU at once"]
    c.text(width / 2, 18, heads[k], size=13, weight="bold")
    port = nvls_allreduce_bytes_per_port(1.0, n)          # NCCL's NVLS: (1 + 1/n) S
    ring = ring_allreduce_bytes_per_rank(1.0, n)
    c.text(width / 2, 38, f"In NCCL each port carries (1+1/n)·S = {port:.3g} S each way, its own "
           f"slice too; a ring 2(n−1)/n·S = {ring:.3g} S", size=12,
           fill="#1b6e4f" if k == 3 else _MUTED)
    # the switch spans every GPU's road up to it (no road ends beside the switch)
    sw_w, sw_h = min(width - 32, max(420.0, (n - 1) * (gpu_w + 14) + gpu_w)), 70
    sx, sy = width / 2 - sw_w / 2, 70
    colours = [_chunk_colour(j) for j in range(n)]
    with c.group(cls="ic-switch"):
        c.rect(sx, sy, sw_w, sw_h, fill=PLACES["nvswitch"][0],
               stroke=ROADS["nvlink"].colour, width=2, rx=10,
               title="NVSwitch (the central interchange)")
        c.text(width / 2, sy + 18, "NVSwitch — " + PLACES["nvswitch"][1], size=12,
               weight="bold")
        # what has reached the switch: every GPU's data from step 1 on
        inside = n if k >= 1 else 0
        bw_ = 16
        bx = width / 2 - (n * (bw_ + 2) - 2) / 2
        chunk_boxes(c, bx, sy + 34, [(inside, inside / n)] * n, colours, bw_, 20,
                    rank="switch", received=range(n) if k == 1 else (), numbers=True)
        if k >= 2:
            c.text(bx + n * (bw_ + 2) + 8, sy + 45, "Σ", size=18, anchor="start",
                   weight="bold", fill="#1b6e4f")
    xs = [width / 2 + (r - (n - 1) / 2) * (gpu_w + 14) for r in range(n)]
    for r, x in enumerate(xs):                 # the roads up and down
        c.line(x, gy, x, sy + sw_h + 4, kind="nvlink", width=4, opacity=0.25)
    for a, b in (sends[k - 1] if k else []):
        up = b == "switch"
        x = xs[a if up else b]
        y_gpu, y_sw = gy - 2, sy + sw_h + 6
        y1, y2 = (y_gpu, y_sw) if up else (y_sw, y_gpu)
        off = -8 if up else 8
        # up: the GPU's whole buffer S (every chunk); down: the sum
        _curved_arrow(c, x + off, y1, x + off, y2, bend=0,
                      colour=_INK if up else "#1b6e4f", width=4,
                      label="S" if up else "Σ", data_src=a, data_dst=b,
                      data_chunk="all" if up else "sum")
    done = k == 3
    if memo is not None and done in memo:      # the same factories as an earlier frame
        parts, boxes = memo[done]
        c._parts.extend(parts)
        c.text_boxes.extend(boxes)
    first_part, first_box = len(c._parts), len(c.text_boxes)
    for r, x in enumerate(xs if memo is None or done not in memo else ()):
        have = n if done else 1

        def buffer(top, r=r, x=x, have=have):
            for row in range(rows):
                ks = list(range(row * per_row, min(n, (row + 1) * per_row)))
                chunk_boxes(c, x - gpu_w / 2 + 6, top + row * (slot_h + 3),
                            [(have, have / n)] * len(ks), [colours[j] for j in ks], slot_w,
                            slot_h, rank=r, chunks=ks, numbers=True,
                            received=ks if k == 3 else ())

        gpu_glyph(c, x - gpu_w / 2, gy, gpu_w, gpu_h, f"GPU {r}", size=12,
                  title=f"factory · GPU {r}", contents=buffer, data_rank=r)
    if memo is not None and done not in memo:
        memo[done] = (c._parts[first_part:], c.text_boxes[first_box:])
    if nodes > 1:          # NCCL's NVLS_TREE: the nodes' sums meet over the network
        with c.group(cls="ic-nvls-nodes", data_nodes=nodes):
            c.text(16, height - 100, f"One node of {nodes}: across nodes (NCCL's NVLS_TREE) "
                   "the node's sum also crosses the network, on a double", size=11,
                   anchor="start", fill=_INK)
            c.text(16, height - 84, f"binary tree over the {nodes} nodes, before the "
                   "switch sends the final sum down (step 3).", size=11, anchor="start",
                   fill=_INK)
    _chunk_key(c, 16, height - 64, n)
    c.text(16, height - 44, "Number and fill = how many GPUs' data that copy holds; "
           f"✓ = all {n}; black border = arrived this step.", size=11, anchor="start",
           fill=_MUTED)
    c.legend(16, height - 22, ["nvlink"] + (["network"] if nodes > 1 else []))
    return c


def nvls(n: int = 8, step: int | None = None,
         seconds_per_step: float = 1.4, nodes: int = 1) -> Diagram:
    """In-switch reduction (NVLink SHARP, NVLS): GPUs push, the switch adds and multicasts.

    Parameters
    ----------
    n : int
        GPUs on the NVSwitch, 2 to 12.
    step : int or None
        0 (start) to 3 (:func:`nvls_steps`); ``None``: the animation.
    nodes : int
        Nodes of the machine (1 to 4096); above 1 the drawing is one node's
        part of NCCL's NVLS_TREE and says that the node's sum also crosses
        the network on a tree over the nodes.

    >>> nvls(4, step=3).svg.count('data-have="4"')     # 4 chunks, in 4 GPUs and the switch
    20
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_RING_GPUS)
    secs = check_positive(seconds_per_step, "seconds_per_step")
    nodes = check_int(nodes, "nodes", minimum=1, maximum=4096)
    if step is not None:
        return _nvls_frame(n, step, nodes).diagram()
    memo: dict = {}
    return animate([_nvls_frame(n, k, nodes, memo).to_svg() for k in range(4)], secs,
                   title=f"In-switch AllReduce (NVLS) of {n} GPUs, animated")


# ---------------------------------------------------------------------------
# two levels: NVLink inside the node, rails between nodes
# ---------------------------------------------------------------------------
def hierarchical_phases(nodes: int, gpus_per_node: int) -> dict:
    """The three phases of the two-level AllReduce, as the drawing shows them.

    The sends of each phase are the distinct (src, dst) pairs of the
    simulator's own schedule (:func:`course_lib.sim.schedules.hierarchical`,
    its piece template); which shard each GPU owns after the ReduceScatter
    comes from :func:`course_lib.traffic.ring_allreduce_contributions`.

    Returns
    -------
    dict
        ``sends`` (per step 1..3: the ``(src, dst)`` rank pairs of
        ReduceScatter in every node, AllReduce on every rail, AllGather in every
        node), ``have`` (per step 0..3: a ranks x shards array of how many
        GPUs' data each copy of each shard holds, out of nodes x gpus_per_node)
        and ``owner`` (the shard each local GPU finishes).

    >>> p = hierarchical_phases(2, 4)
    >>> [len(s) for s in p["sends"][1:]], int(p["have"][2].max()), int(p["have"][3].min())
    ([8, 8, 8], 8, 8)
    """
    import numpy as np

    from ..sim.schedules import hierarchical_template

    N = check_int(nodes, "nodes", minimum=1, maximum=MAX_DRAWN_NODES)
    g = check_int(gpus_per_node, "gpus_per_node", minimum=1, maximum=8)
    if N * g < 2:
        raise ValueError("nodes x gpus_per_node must be at least 2 GPUs, got 1")
    src, dst, _deps, role, _frac = hierarchical_template(N, g)
    sends = [None, [], [], []]
    index = {"rs": 1, "ar": 2, "ag": 3}
    for a, b, key in zip(src, dst, role):
        pair = (int(a), int(b))
        lst = sends[index[key[0]]]
        if pair not in lst:
            lst.append(pair)
    local = (traffic.ring_allreduce_contributions(g, g - 1) if g > 1
             else np.ones((1, 1), dtype=int))
    owner = [int(np.argmax(local[i])) for i in range(g)]
    start = np.ones((N * g, g), dtype=int)
    after_rs = np.vstack([local] * N)
    after_ar = after_rs.copy()
    for v in range(N):
        for i in range(g):
            after_ar[v * g + i, owner[i]] = N * g
    done = np.full((N * g, g), N * g, dtype=int)
    return {"nodes": N, "gpus_per_node": g, "sends": sends, "owner": owner,
            "have": [start, after_rs, after_ar, done]}


def _hier_frame(info: dict, k: int, cluster=None) -> Canvas:
    from ..units import format_bandwidth

    N, g = info["nodes"], info["gpus_per_node"]
    k = _check_step(k, 3)
    total = N * g
    gap = 40 if N > 1 else 0
    node_w = max(150.0, min(230.0, (820 - (N - 1) * gap) / N))
    width = max(760.0, N * node_w + (N - 1) * gap + 70)
    if cluster is not None:     # the machine's line under the title fits the drawing
        from .city import _tw

        nics = cluster.nics_per_node if cluster.nic else cluster.gpus_per_node
        machine_line = (f"{cluster.describe()}: NVLink "
                        f"{format_bandwidth(cluster.intra_bw_bytes_per_s())} per GPU, network "
                        f"{format_bandwidth(cluster.inter_bw_bytes_per_s() / cluster.gpus_per_node)}"
                        " per GPU (per direction)"
                        + (f", {cluster.gpus_per_node} GPUs sharing {nics} NIC"
                           f"{'s' if nics > 1 else ''}" if nics < cluster.gpus_per_node else ""))
        width = max(width, _tw(machine_line, 11) + 24)
    row_h = 30
    top = 78
    node_h = 30 + g * row_h + 8
    height = top + node_h + 150
    c = Canvas(width, height, title=f"Two-level AllReduce, {N} nodes x {g} GPUs, "
               f"step {k} of 3")
    # the machine drawn: its nodes (N of them drawn), GPUs and NICs a node
    M = cluster.nodes if cluster is not None and cluster.nodes > N else N
    nics = cluster.nics_per_node if cluster is not None and cluster.nic else g
    rails = ("one rail (network) per GPU between nodes" if nics >= g else
             f"the {g} rails share {nics} NIC{'s' if nics > 1 else ''} a node")
    drawn_of = f" ({N} of {M} drawn)" if M > N else ""
    heads = [f"{M} node{'s' if M > 1 else ''}{drawn_of} × {g} GPUs: maglev (NVLink) "
             f"inside a node, {rails}",
             "Step 1 of 3: ReduceScatter inside each node, over NVLink",
             "Step 2 of 3: AllReduce of each shard across the nodes, on its rail",
             "Step 3 of 3: AllGather inside each node, over NVLink"]
    sub = ["Two levels: most bytes stay on the maglev; only shards take the rail.",
           f"each GPU ends with one shard (S/g) summed over its node; it sends "
           f"(g−1)/g × S = {g - 1}/{g} S",
           f"GPU i talks only to GPU i of the other nodes; each sends 2(N−1)/N × S/g"
           f" = {2 * (M - 1)}/{M * g} S over the network"
           + (f" (N = {M})" if M > N else ""),
           f"every GPU gets every finished shard; it sends (g−1)/g × S = {g - 1}/{g} S"]
    if N == 1:
        sub[2] = "one node: nothing crosses the network"
    c.text(width / 2, 18, heads[k], size=14, weight="bold")
    c.text(width / 2, 38, sub[k], size=12, fill=_MUTED)
    if cluster is not None:
        c.text(width / 2, 56, machine_line, size=11, fill=_MUTED)
    x_left = (width - (N * node_w + (N - 1) * gap)) / 2
    node_x = [x_left + v * (node_w + gap) for v in range(N)]
    ys = [top + 32 + i * row_h + row_h / 2 for i in range(g)]
    slot = min(14.0, (node_w - 96) / g - 2)

    def gpu_xy(rank):
        v, i = divmod(rank, g)
        return v, i, node_x[v], ys[i]

    for v in range(N):                         # node boxes ("districts")
        with c.group(cls="ic-node", data_node=v):
            c.rect(node_x[v], top, node_w, node_h, fill="#fafdfb",
                   stroke=ROADS["nvlink"].colour, width=1.8, rx=10)
            c.text(node_x[v] + node_w / 2, top + 14, f"node {v}", size=12,
                   weight="bold")
    if N > 1:                                  # rails
        for i in range(g):
            for v in range(N - 1):
                c.line(node_x[v] + node_w, ys[i], node_x[v + 1], ys[i],
                       kind="network", width=3, opacity=0.3)
    sends = info["sends"][k] if k else []
    for a, b in sends:
        va, ia, xa, ya = gpu_xy(a)
        vb, ib, xb, yb = gpu_xy(b)
        if va == vb:                            # inside a node: down the NVLink ring
            col = ROADS["nvlink"].colour
            x = xa + 14
            if ib == ia + 1:
                _curved_arrow(c, x, ya + 7, x, yb - 7, bend=0, colour=col, width=2.5,
                              head=7, data_src=a, data_dst=b)
            else:                               # wrap-around: back up the side
                _curved_arrow(c, x - 4, ya, x - 4, yb, bend=-16 - 6 * g, colour=col,
                              width=2.5, head=7, data_src=a, data_dst=b)
        else:                                   # on the rail
            col = _chunk_colour(info["owner"][ia])
            if vb == va + 1:
                _curved_arrow(c, xa + node_w - 2, ya, xb + 2, yb, bend=0, colour=col,
                              width=3, head=8, data_src=a, data_dst=b)
            elif N == 2:                        # the other way on a 2-node rail
                _curved_arrow(c, xa + 2, ya + 6, xb + node_w - 2, yb + 6, bend=0,
                              colour=col, width=3, head=8, data_src=a, data_dst=b)
            else:                               # wrap: out the right, in the left
                with c.group(cls="ic-send", data_src=a, data_dst=b):
                    c.line(xa + node_w, ya, xa + node_w + 14, ya, stroke=col, width=3)
                    c.line(xb - 14, yb, xb - 2, yb, stroke=col, width=3)
                    c.polygon([(xb + 2, yb), (xb - 6, yb - 5), (xb - 6, yb + 5)],
                              fill=col)
    have = info["have"][k]
    for r in range(total):
        v, i, x, y = gpu_xy(r)
        fills = [(int(h), h / total) for h in have[r]]
        received = set()
        if k and any(b == r for _, b in sends):
            received = ({info["owner"][i]} if k == 2 else set(range(g)))
        gpu_glyph(c, x + 24, y - 12, node_w - 32, 24, f"GPU {i}", align="start",
                  title=f"factory · node {v}, GPU {i} (rank {r})", data_rank=r,
                  contents=lambda _top, r=r, x=x, y=y, fills=fills, received=received:
                  chunk_boxes(c, x + 80, y - 8, fills, [_chunk_colour(j) for j in range(g)],
                              slot, 16, rank=r, received=received if k == 2 else (),
                              numbers=True))
    y0 = top + node_h + 24
    if k == 2 and N > 2:
        c.text(width - 16, top + node_h + 10, f"each rail is a ring: node {N - 1} "
               f"sends on to {'node 0' if M == N else 'the next node'}", size=11,
               anchor="end", fill=_MUTED)
    c.text(16, y0, f"Boxes = the {g} shards of a buffer; number and fill = how many of the "
           f"{total}{' drawn' if M > N else ''} GPUs' data that copy holds; ✓ = all.",
           size=11, anchor="start",
           fill=_MUTED)
    _chunk_key(c, 16, y0 + 22, g)
    c.text(16 + 60 + g * 18, y0 + 22, "(shard colours)", size=11, anchor="start",
           fill=_MUTED)
    c.legend(16, y0 + 46, ["nvlink", "network"], machines=_network_name(cluster))
    return c


def _network_name(cluster) -> dict:
    """The legend's name of a cluster's network (its NIC's kind), or {} for none."""
    if cluster is None or not getattr(cluster, "nic", None):
        return {}
    from ..hardware import nic

    family = nic(cluster.nic).family
    return {"network": NETWORK_MACHINES[family]} if family in NETWORK_MACHINES else {}


def hierarchical(nodes: int = 2, gpus_per_node: int = 4, step: int | None = None,
                 cluster=None, seconds_per_step: float = 1.6) -> Diagram:
    """The two-level AllReduce: NVLink inside each node, one rail per GPU between nodes.

    Parameters
    ----------
    nodes : int
        1 to 4 nodes side by side (:data:`MAX_DRAWN_NODES`).
    gpus_per_node : int
        1 to 8 (at least 2 GPUs in all).
    step : int or None
        0 (start), 1 (ReduceScatter in each node), 2 (AllReduce on each rail),
        3 (AllGather in each node); ``None``: the animation.
    cluster : Cluster, optional
        Adds its NVLink and per-GPU network rates under the title.

    Notes
    -----
    The network carries only ``2(N-1)/N x S/g`` per GPU, a g-th of a flat
    ring's; the NVLink phases carry ``2(g-1)/g x S``.  Chapters 7 and 9.

    >>> d = hierarchical(2, 2, step=2)
    >>> d.svg.count('class="ic-send"'), d.svg.count('class="ic-gpu"')
    (4, 4)
    """
    info = hierarchical_phases(nodes, gpus_per_node)
    if cluster is not None and not callable(getattr(cluster, "intra_bw_bytes_per_s", None)):
        raise TypeError("cluster must be a Cluster from course_lib.cluster(...) or None, "
                        f"got {type(cluster).__name__}")
    secs = check_positive(seconds_per_step, "seconds_per_step")
    if step is not None:
        return _hier_frame(info, step, cluster).diagram()
    return animate([_hier_frame(info, k, cluster).to_svg() for k in range(4)], secs,
                   title=f"Two-level AllReduce, {nodes} nodes x {gpus_per_node} GPUs, "
                   "animated")


# ---------------------------------------------------------------------------
# a road is two one-way tracks (chapter 11's "900 GB/s" myth)
# ---------------------------------------------------------------------------
def _article(name: str) -> str:
    """'an' before a name read with a vowel sound (A100, H100: "aitch"), else 'a'."""
    return "an" if name[:1].upper() in "AEFHILMNORSX" else "a"


def two_way_tracks(gpu: str = "H100") -> Diagram:
    """One road between two GPUs drawn as the two one-way tracks it is.

    The numbers are the catalog's (:func:`course_lib.hardware.gpu`): the
    NVLink and PCIe bandwidth **per direction**, and the "both ways" total that
    datasheets quote.  A copy from one GPU to another runs on one track only.

    >>> d = two_way_tracks("H100")
    >>> d.svg.count('class="ic-send"'), "450 GB/s" in d.svg and "900 GB/s" in d.svg
    (4, True)
    """
    from ..hardware import gpu as gpu_record
    from ..units import format_bandwidth

    g = gpu_record(gpu)
    per_dir = g.nvlink_bw_per_dir_bytes_per_s
    both = g.nvlink_bw_bidir_bytes_per_s
    pcie = g.pcie_bw_per_dir_bytes_per_s
    width, height = 760, 330
    c = Canvas(width, height, title=f"{g.name}: one road, two one-way tracks")
    c.text(width / 2, 18, f"“{format_bandwidth(both)} NVLink” on {_article(g.name)} {g.name} is two "
           f"one-way tracks of {format_bandwidth(per_dir)}", size=14, weight="bold")
    c.text(width / 2, 40, "A copy from GPU A to GPU B runs on one track; only traffic "
           "both ways at once (an AllReduce) fills both.", size=12, fill=_MUTED)
    ax, bx, bw, bh = 24, width - 124, 100, 200
    for x, name in ((ax, "A"), (bx, "B")):
        gpu_glyph(c, x, 70, bw, bh, f"GPU {name}", size=13,
                  title=f"factory · GPU {name}", data_rank=name)
    x1, x2 = ax + bw + 4, bx - 4
    rows = [("nvlink", per_dir, 140), ("pcie", pcie, 220)]
    for kind, rate, y in rows:
        road = ROADS[kind]
        c.text(width / 2, y - 30, f"{road.city} = {road.machine}: "
               f"{format_bandwidth(rate)} each way, {format_bandwidth(2 * rate)} "
               "“both ways”", size=12, weight="bold", fill=road.colour)
        for (a, b, yy, label) in (("A", "B", y - 12, f"A → B  {format_bandwidth(rate)}"),
                                  ("B", "A", y + 12, f"B → A  {format_bandwidth(rate)}")):
            xa, xb = (x1, x2) if a == "A" else (x2, x1)
            with c.group(cls="ic-send", data_src=a, data_dst=b, data_kind=kind):
                c.arrow(xa, yy, xb, yy, kind=kind, width=5 if kind == "nvlink" else 3.5,
                        head=12)
                c.rect(width / 2 - 78, yy - 8, 156, 16, fill="white", stroke="none", rx=3)
                c.text(width / 2, yy, label, size=11, fill=_INK)
    c.text(16, height - 42, f"Datasheets add the two directions ({format_bandwidth(both)}); "
           "nccl-tests' busbw and this course quote one direction.", size=11,
           anchor="start", fill=_MUTED)
    c.legend(16, height - 20, ["nvlink"])
    c.legend(300, height - 20, ["pcie"])
    return c.diagram()
