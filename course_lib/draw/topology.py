"""Chapter 6's road maps: any :mod:`course_lib.topology` graph, a route on it, the bisection cut.

:func:`topology_map` draws every builder's graph (ring, full mesh, 2-D torus,
hybrid cube-mesh, NVSwitch, two-level cluster, PCIe, NVLink bridge) with a
fixed layout per kind, roads coloured by kind (:data:`course_lib.draw.ROADS`)
and thickened by their link count.  Given a pair of GPUs it highlights the
route the models take between them -- the widest of the shortest routes, as
:func:`course_lib.topology.path_bottleneck_bw_bytes_per_s` picks it -- with
its hop count; and it marks the bisection cut: the balanced split of the GPUs
whose crossing links carry the least bandwidth, the quantity
:func:`course_lib.topology.bisection_bw_bytes_per_s` returns (the links it
cuts are drawn in red, and their sum is that function's value).

Examples
--------
>>> from course_lib import topology as T
>>> d = topology_map(T.ring_topology(8), highlight_pair=(0, 4))
>>> d.svg.count('class="ic-gpu"'), d.svg.count('class="ic-cut-edge"')
(8, 2)
>>> "4 hops" in d.svg
True
"""

from __future__ import annotations

import itertools
import math

import networkx as nx

from .. import hardware
from .. import topology as T
from ..units import check_choice, check_int, check_positive, format_bandwidth
from .city import _fit, _place_marks, _wrap
from .style import NETWORK_MACHINES, PLACES, ROADS
from .glyphs import gpu_glyph
from .svg import Canvas, Diagram

__all__ = ["topology_map", "layout", "bisection_cut"]

_MARK = "#c2185b"
_HALO = "#ffd92f"


def _kind(topo) -> str:
    return str(topo.graph.get("name", "")).split("(")[0]


def _circle(items, r=1.0, start=math.pi / 2):
    k = len(items)
    angles = [start - 2 * math.pi * i / k for i in range(k)]
    return {v: (r * math.cos(a), -r * math.sin(a)) for v, a in zip(items, angles)}


def layout(topo) -> dict:
    """Positions (x right, y down, about -1.2..1.2) of every vertex, fixed per kind.

    >>> from course_lib import topology as T
    >>> p = layout(T.nvswitch_topology(4))
    >>> p["nvswitch"]
    (0.0, 0.0)
    """
    kind = _kind(topo)
    ranks = T.gpus(topo)
    if kind == "hybrid-cube-mesh":
        outer = {0: (-1, -1), 1: (1, -1), 2: (1, 1), 3: (-1, 1)}
        pos = dict(outer)
        # the inner square turned a little, so that no road passes over a factory
        c, si = math.cos(0.35), math.sin(0.35)
        pos.update({r + 4: (0.5 * (x * c - y * si), 0.5 * (x * si + y * c))
                    for r, (x, y) in outer.items()})
        return pos
    if kind == "torus":
        rows = 1 + max(r // _torus_cols(topo) for r in ranks)
        cols = _torus_cols(topo)
        s = 2.0 / max(rows - 1, cols - 1, 1)
        return {r: (((r % cols) - (cols - 1) / 2) * s, ((r // cols) - (rows - 1) / 2) * s)
                for r in ranks}
    if kind == "two-level":
        nodes, per = topo.graph["nodes"], topo.graph["gpus_per_node"]
        pos = {"ib-switch": (0.0, -1.05)}
        width = 2.6 / nodes
        for k in range(nodes):
            cx = -1.3 + width * (k + 0.5)
            span = width * 0.8
            for j in range(per):
                pos[k * per + j] = (cx - span / 2 + span * (j + 0.5) / per, 0.25)
            nics = sorted((v for v, d in topo.nodes(data=True)
                           if d.get("kind") == "nic" and d.get("node") == k),
                          key=lambda v: int(str(v).rsplit("nic", 1)[1]))
            for j, v in enumerate(nics):
                pos[v] = (cx - span / 2 + span * (j + 0.5) / len(nics), -0.35)
            hub = f"node{k}/nvswitch"
            if hub in topo:
                pos[hub] = (cx, 0.9)
        return pos
    if kind == "bridge":
        return {ranks[0]: (-0.7, 0.0), ranks[1]: (0.7, 0.0)}
    pos = _circle(ranks)
    hubs = [v for v in topo.nodes if v not in set(ranks)]
    for i, v in enumerate(hubs):
        pos[v] = (0.0, 0.0) if len(hubs) == 1 else (0.3 * (i - (len(hubs) - 1) / 2), 0.0)
    return pos


def _torus_cols(topo) -> int:
    name = str(topo.graph.get("name", ""))
    try:
        return int(name.split("x")[1].rstrip(")"))
    except (IndexError, ValueError):
        return max(2, int(math.isqrt(len(T.gpus(topo)))))


def _cut_value(topo, left_gpus, right_gpus):
    """Least bandwidth separating two GPU sets (switches and NICs on whichever
    side is cheaper), and the vertices on the left side of that cut."""
    ranks = set(left_gpus) | set(right_gpus)
    if all(v in ranks for v in topo.nodes):
        left = set(left_gpus)
        val = sum(d["bw_bytes_per_s"] for u, v, d in topo.edges(data=True)
                  if (u in left) != (v in left))
        return float(val), left
    flow = nx.DiGraph()
    for u, v, d in topo.edges(data=True):
        flow.add_edge(u, v, capacity=d["bw_bytes_per_s"])
        flow.add_edge(v, u, capacity=d["bw_bytes_per_s"])
    for r in left_gpus:
        flow.add_edge("_S", r)           # no capacity: infinite
    for r in right_gpus:
        flow.add_edge(r, "_T")
    val, (s_side, _t_side) = nx.minimum_cut(flow, "_S", "_T")
    return float(val), set(s_side) - {"_S"}


def bisection_cut(topo, value: float | None = None):
    """The balanced split behind :func:`course_lib.topology.bisection_bw_bytes_per_s`.

    Returns ``(left, cut_edges, bw)``: the vertices on one side, the edges
    that cross, and their bandwidth per direction.  Splits that follow the
    drawing (GPUs sorted along several directions, whole nodes, rank halves)
    are tried first; when none of them reaches ``value`` (the model's
    bisection, computed when not given) every balanced split of up to 12
    GPUs is tried.

    >>> from course_lib import topology as T
    >>> left, cut, bw = bisection_cut(T.fully_connected_topology(4, gpu="A100"))
    >>> len(cut), bw == T.bisection_bw_bytes_per_s(T.fully_connected_topology(4, gpu="A100"))
    (4, True)
    """
    if not isinstance(topo, nx.Graph):
        raise TypeError(f"topo must be a topology graph, got {type(topo).__name__}")
    ranks = T.gpus(topo)
    if len(ranks) < 2:
        raise ValueError("topo needs at least 2 GPUs for a bisection")
    if value is None:
        value = T.bisection_bw_bytes_per_s(
            topo, exact_limit=2 if topo.graph.get("nodes", 1) > 1 else 16)
    half = len(ranks) // 2
    pos = layout(topo)
    cands = [ranks[:half]]
    for i in range(12):
        ang = math.pi * i / 12
        cx, sy = math.cos(ang), math.sin(ang)
        order = sorted(ranks, key=lambda r: (pos[r][0] * cx + pos[r][1] * sy, r))
        cands.append(order[:half])
    if "gpus_per_node" in topo.graph:
        per = topo.graph["gpus_per_node"]
        whole = [r for r in ranks if r // per < topo.graph["nodes"] // 2]
        cands.append(whole[:half] or ranks[:half])
    best = None
    seen = set()
    for left in cands:
        key = frozenset(left)
        if key in seen or len(left) != half:
            continue
        seen.add(key)
        val, side = _cut_value(topo, left, [r for r in ranks if r not in key])
        if best is None or val < best[0] - 1e-9:
            best = (val, side)
    if not math.isclose(best[0], value, rel_tol=1e-9) and len(ranks) <= 12:
        first, rest = ranks[0], ranks[1:]
        for combo in itertools.combinations(rest, half - 1):
            left = {first, *combo}
            val, side = _cut_value(topo, left, [r for r in ranks if r not in left])
            if val < best[0] - 1e-9:
                best = (val, side)
    val, side = best
    cut = [(u, v) for u, v in topo.edges if (u in side) != (v in side)]
    return side, cut, val


def _route(topo, a, b):
    """The widest of the shortest routes from a to b (as the models take it)."""
    best, best_bw = None, -1.0
    for path in nx.all_shortest_paths(topo, a, b):
        bw = min(topo.edges[u, v]["bw_bytes_per_s"] for u, v in zip(path, path[1:]))
        if bw > best_bw:
            best, best_bw = path, bw
    return best


_NAMES = {"nvswitch": "NVSwitch", "switch": "switch", "nic": "NIC"}


def topology_map(topo, *, highlight_pair=None, cut: bool = True, width: float = 460,
                 hops_from=None, count: str = "links", bisection: float | None = None) -> Diagram:
    """Draw a topology graph, a route between two GPUs and the bisection cut.

    Parameters
    ----------
    topo : networkx.Graph
        From a :mod:`course_lib.topology` builder (``ring_topology(8)``, ...).
    highlight_pair : tuple of int, optional
        Two GPU ranks: their route is drawn with its hop count.
    cut : bool
        Draw the bisection cut (red links, their total per direction).
    width : float
        Drawing width, px (280 to 900).
    hops_from : int, optional
        Write each GPU's hop count from this GPU beside it.
    count : {"links", "gpu-hops"}
        How hops are counted (:func:`course_lib.topology.hops`).
    bisection : float, optional
        The model's bisection bandwidth when the caller has it already
        (:func:`course_lib.topology.bisection_bw_bytes_per_s`); computed otherwise.

    Examples
    --------
    >>> from course_lib import topology as T
    >>> d = topology_map(T.two_level_topology(2, 4), highlight_pair=(0, 5))
    >>> d.svg.count('class="ic-nic"'), "4 hops" in d.svg
    (8, True)
    >>> topology_map(T.ring_topology(4), highlight_pair=(0, 9))
    Traceback (most recent call last):
    ...
    ValueError: highlight_pair must be two GPUs of the topology (0..3), got (0, 9)
    """
    if not isinstance(topo, nx.Graph):
        raise TypeError(f"topo must be a topology (a networkx.Graph from a *_topology "
                        f"builder), got {type(topo).__name__}")
    ranks = T.gpus(topo)
    if not ranks:
        raise ValueError("topo has no GPU nodes (nodes with kind='gpu')")
    if not isinstance(cut, bool):
        raise TypeError(f"cut must be True or False, got {cut!r}")
    W = check_positive(width, "width")
    if not 280 <= W <= 900:
        raise ValueError(f"width must lie in [280, 900] px, got {width!r}")
    if highlight_pair is not None:
        try:
            a, b = highlight_pair
        except (TypeError, ValueError):
            raise TypeError(f"highlight_pair must be two GPU ranks such as (0, 3), got "
                            f"{highlight_pair!r}") from None
        if a not in ranks or b not in ranks or a == b:
            raise ValueError(f"highlight_pair must be two GPUs of the topology "
                             f"(0..{len(ranks) - 1}), got {highlight_pair!r}")
    if hops_from is not None:
        hops_from = check_int(hops_from, "hops_from", minimum=0, maximum=len(ranks) - 1)
    count = check_choice(count, "count", ("links", "gpu-hops"))
    kind = _kind(topo)
    pos = layout(topo)
    n = len(ranks)
    gh = W * (0.62 if kind == "two-level" else 0.78)
    pad = 34
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx = (W - 2 * pad) / max(x1 - x0, 1e-9)
    sy = (gh - 2 * pad) / max(y1 - y0, 1e-9)
    s = min(sx, sy) if kind != "two-level" else None

    def P(v):
        x, y = pos[v]
        if s is None:
            return pad + (x - x0) * sx, 22 + pad + (y - y0) * sy
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        return W / 2 + (x - cx) * s, 22 + gh / 2 + (y - cy) * s

    r_gpu = max(8.0, min(16.0, 220 / max(n, 1)))
    # half the factory's side: no two factories touch (a gap of a tenth of their distance)
    pts = [P(r) for r in ranks]
    closest = min((math.dist(p, q) for i, p in enumerate(pts) for q in pts[:i]),
                  default=2 * r_gpu)
    r_gpu = max(7.0, min(r_gpu, 0.45 * closest))
    lines = []
    route = None
    if highlight_pair is not None:
        route = _route(topo, a, b)
        hops = T.hops(topo, a, b)
        gpu_hops = T.hops(topo, a, b, count="gpu-hops")
        bw = T.path_bottleneck_bw_bytes_per_s(topo, a, b)
        lines.append(f"GPU {a} → GPU {b}: {hops} hop{'s' if hops != 1 else ''} (links), "
                     f"{gpu_hops} counting the devices crossed, as the articles do; slowest link "
                     f"{format_bandwidth(bw)} "
                     f"per direction")
    side, cut_edges, cut_bw = (None, [], None)
    if cut and n >= 2:
        model = bisection if bisection is not None else T.bisection_bw_bytes_per_s(
            topo, exact_limit=2 if topo.graph.get("nodes", 1) > 1 else 16)
        side, cut_edges, cut_bw = bisection_cut(topo, model)
        lines.append(f"bisection (red): {len(cut_edges)} of {topo.number_of_edges()} roads cut, "
                     f"{format_bandwidth(model)} per direction")
    kinds = sorted({d.get("kind") for _, _, d in topo.edges(data=True)} & set(ROADS),
                   key=list(ROADS).index)
    # the first line is bold: wrapped as 12 px (11 px bold runs ~8 % wider)
    wrapped = [_wrap(line, W - 16, 12, sep=" ") for line in lines]
    n_bold = len(wrapped[0]) if wrapped else 0      # every part of the first line is bold
    lines = [part for parts in wrapped for part in parts]
    H = 22 + gh + 8 + 16 * len(lines) + 17 * len(kinds) + 8
    cv = Canvas(W, H, title=f"road map: {topo.graph.get('name', 'topology')}")
    cv.text(8, 11, f"{topo.graph.get('name', 'topology')}, {topo.graph.get('gpu', '')} · "
            f"{n} factories", size=12, anchor="start", weight="bold")
    # two-level: a box per city behind its vertices
    if kind == "two-level":
        per = topo.graph["gpus_per_node"]
        for k in range(topo.graph["nodes"]):
            members = [v for v, d in topo.nodes(data=True) if d.get("node") == k]
            px = [P(v)[0] for v in members]
            py = [P(v)[1] for v in members]
            cv.rect(min(px) - 22, min(py) - 16, max(px) - min(px) + 44, max(py) - min(py) + 32,
                    fill="#fbfbf8", stroke="#bbb", rx=8, cls="ic-city")
            cv.text(min(px) - 18, max(py) + 24,
                    f"city {k + 1} (GPUs {k * per}–{k * per + per - 1})", size=11,
                    anchor="start", italic=True, fill="#555")
    # roads
    cut_set = {frozenset(e) for e in cut_edges}
    step = 0.0
    if kind == "torus":                   # one grid step, px
        a0, a1 = P(ranks[0]), P(ranks[1])
        step = math.dist(a0, a1)
    for u, v, d in topo.edges(data=True):
        (xa, ya), (xb, yb) = P(u), P(v)
        w = 1.6 + 1.2 * math.log2(max(1, d.get("links", 1)))
        k = d.get("kind") if d.get("kind") in ROADS else None
        tip = (f"{ROADS[k].city} · {ROADS[k].machine} ×{d.get('links', 1)}, "
               f"{format_bandwidth(d['bw_bytes_per_s'])} per direction") if k else None
        # a torus's wrap-around links (longer than one grid step) bow outwards
        if kind == "torus" and max(abs(xa - xb), abs(ya - yb)) > 1.5 * step:
            mx, my = (xa + xb) / 2, (ya + yb) / 2
            if abs(xa - xb) > abs(ya - yb):
                qx, qy = mx, ya - 26 - 0.15 * abs(xa - xb)
            else:
                qx, qy = xa - 26 - 0.15 * abs(ya - yb), my
            d_ = f"M{xa:.1f},{ya:.1f} Q{qx:.1f},{qy:.1f} {xb:.1f},{yb:.1f}"
            cv.path(d_, kind=k, width=w, cls=f"ic-{k}", title=tip, opacity=0.8)
            if frozenset((u, v)) in cut_set:
                cv.path(d_, stroke=_MARK, width=2.6, dash="6,4", cls="ic-cut-edge")
            continue
        cv.line(xa, ya, xb, yb, kind=k, width=w, cls=f"ic-{k}" if k else None, title=tip,
                opacity=0.8)
        if frozenset((u, v)) in cut_set:
            cv.line(xa, ya, xb, yb, stroke=_MARK, width=2.6, dash="6,4", cls="ic-cut-edge",
                    title="a link the bisection cuts")
    # the route (its numbers go on top of the places, below)
    marks, hop_paths = [], []
    if route:
        pts = [P(v) for v in route]
        d_ = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        with cv.group(cls="ic-route ic-hop-path", data_hops=len(route) - 1):
            cv.path(d_, stroke=_HALO, width=11, opacity=0.85)
            for i, (p, q) in enumerate(zip(pts, pts[1:])):
                u, v = route[i], route[i + 1]
                k = topo.edges[u, v].get("kind")
                cv.arrow(p[0], p[1], q[0] - (q[0] - p[0]) * 0.18, q[1] - (q[1] - p[1]) * 0.18,
                         kind=k if k in ROADS else None, width=3.5, head=9)
                marks.append(((p[0] + q[0]) / 2, (p[1] + q[1]) / 2))
                hop_paths.append([p, q])
    # places
    for v, d in topo.nodes(data=True):
        x, y = P(v)
        kd = d.get("kind")
        if kd == "gpu":
            on_route = route is not None and v in (route[0], route[-1])
            # the city's factory at a road map's size: a square with the rank in it
            gpu_glyph(cv, x - r_gpu, y - r_gpu, 2 * r_gpu, 2 * r_gpu, str(v), story=False,
                      highlight=on_route, size=11 if r_gpu >= 11 else 9,
                      title=f"factory · GPU {v}", data_rank=v)
            if hops_from is not None:
                h = T.hops(topo, hops_from, v, count=count)
                cv.text(x + r_gpu + 2, y - r_gpu, f"{h}", size=11, anchor="start",
                        fill="#555", cls="ic-hop-count")
        elif kd == "nic":
            cv.rect(x - 12, y - 8, 24, 16, fill=PLACES["nic"][0], stroke="#2b5d8a", rx=3,
                    cls="ic-nic", title=f"rail station · NIC ({v})")
        else:
            place = ("nvswitch" if kd == "nvswitch" else
                     "network-switch" if any(dd.get("kind") == "network"
                                             for _, _, dd in topo.edges(v, data=True))
                     else "pcie-switch")
            fill, city, machine = PLACES[place]
            label = {"nvswitch": "NVSwitch", "network-switch": "network switch",
                     "pcie-switch": "PCIe switch"}[place]
            bw_ = max(70, 7 * len(label) + 12)
            cv.rect(x - bw_ / 2, y - 11, bw_, 22, fill=fill, stroke="#555", rx=5,
                    cls=f"ic-{place}", title=f"{city} · {machine}")
            cv.text(x, y + 1, label, size=11, weight="bold")
    marks = _place_marks(cv, hop_paths, marks, radius=8)    # on no word, no other number
    for i, (mx, my) in enumerate(marks):
        with cv.group(cls="ic-route-number"):
            cv.circle(mx, my, 8, fill=_MARK, stroke="white", width=1.2)
            cv.text(mx, my + 1, str(i + 1), size=11, weight="bold", fill="white")
    # the cut's own line, where one straight line separates the halves
    if side is not None and kind not in ("two-level",):
        left = [P(r) for r in ranks if r in side]
        right = [P(r) for r in ranks if r not in side]
        if left and right:
            lx = sum(p[0] for p in left) / len(left), sum(p[1] for p in left) / len(left)
            rx = sum(p[0] for p in right) / len(right), sum(p[1] for p in right) / len(right)
            nx_, ny_ = rx[0] - lx[0], rx[1] - lx[1]
            mx, my = (lx[0] + rx[0]) / 2, (lx[1] + rx[1]) / 2
            sides = [(p[0] - mx) * nx_ + (p[1] - my) * ny_ for p in left + right]
            if all(sv < 0 for sv in sides[:len(left)]) and all(sv > 0 for sv in sides[len(left):]):
                L = math.hypot(nx_, ny_) or 1.0
                dx, dy = -ny_ / L, nx_ / L
                ext = gh * 0.48
                cv.line(mx - dx * ext, my - dy * ext, mx + dx * ext, my + dy * ext,
                        stroke=_MARK, width=1.6, dash="8,5", cls="ic-cut",
                        title="the bisection cut")
    y = 22 + gh + 8
    for j, line in enumerate(lines):
        cv.text(8, y + 16 * j, line, size=11, anchor="start", cls="ic-caption",
                weight="bold" if j < n_bold else None)
    y += 16 * len(lines) + 6
    port = topo.graph.get("nic")          # the network of the graph's NICs, by name
    family = hardware.nic(port).family if port else None
    with cv.group(cls="ic-legend"):
        for i, k in enumerate(kinds):
            road = ROADS[k]
            machine = (NETWORK_MACHINES.get(family, road.machine) if k == "network"
                       else road.machine)
            cv.line(10, y + 17 * i, 32, y + 17 * i, kind=k, width=4)
            cv.text(38, y + 17 * i, _fit(f"{road.city} = {machine}", W - 44, 11),
                    size=11, anchor="start")
    return cv.diagram()


__all__ += ["topology_gallery"]


def topology_gallery(maps, *, columns: int = 3, width: float = 900, cut: bool = True) -> Diagram:
    """Several road maps side by side in one drawing, each with the route from
    GPU 0 to the GPU farthest from it and its bisection cut.

    Parameters
    ----------
    maps : dict
        ``{name: topology}`` (the name is written above each map).
    columns : int
        Maps per row.
    width : float
        Width of the whole drawing, px.
    cut : bool
        Draw each map's bisection cut.

    Examples
    --------
    >>> from course_lib import topology as T
    >>> d = topology_gallery({"ring": T.ring_topology(6), "mesh": T.fully_connected_topology(4)})
    >>> d.svg.count('class="ic-gpu"')
    10
    """
    if not isinstance(maps, dict) or not maps:
        raise TypeError(f"maps must be a non-empty dict of name -> topology, got {maps!r}")
    columns = check_int(columns, "columns", minimum=1, maximum=6)
    W = check_positive(width, "width")
    if not 300 <= W <= 1400:
        raise ValueError(f"width must lie in [300, 1400] px, got {width!r}")
    cell_w = W / min(columns, len(maps))
    if cell_w < 290:
        raise ValueError(f"columns: {columns} maps in {W:g} px leaves {cell_w:.0f} px a map; "
                         f"at least 290 px are needed (fewer columns or a wider width)")
    parts, heights = [], []
    for name, topo in maps.items():
        if not isinstance(topo, nx.Graph):
            raise TypeError(f"maps[{name!r}] must be a topology graph, got {type(topo).__name__}")
        ranks = T.gpus(topo)
        far = max(ranks, key=lambda r: (T.hops(topo, ranks[0], r), -r))
        d = topology_map(topo, highlight_pair=(ranks[0], far), cut=cut, width=cell_w - 10)
        svg = d.svg
        h = float(svg.split('height="', 1)[1].split('"', 1)[0])
        parts.append((str(name), svg, h))
        heights.append(h)
    rows = [parts[i:i + columns] for i in range(0, len(parts), columns)]
    row_h = [max(p[2] for p in row) + 20 for row in rows]
    cv = Canvas(W, sum(row_h) + 4, title="road maps: " + ", ".join(p[0] for p in parts))
    y = 0.0
    for row, rh in zip(rows, row_h):
        for j, (name, svg, h) in enumerate(row):
            x = j * cell_w
            cv.text(x + 8, y + 10, name, size=13, anchor="start", weight="bold",
                    cls="ic-map-name")
            inner = svg.replace("<svg ", f'<svg x="{x + 4:.1f}" y="{y + 18:.1f}" ', 1)
            cv.raw(inner)
        y += rh
    return cv.diagram()
