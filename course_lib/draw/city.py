"""The city map: any :class:`course_lib.clusters.Cluster` drawn as the city, and routes on it.

:func:`city_map` draws every node of a cluster as a *city*: city hall (the
CPU, one per socket) with its depot (host memory), the road junctions (PCIe
switches, or the CPU's root complex), the factories (GPUs) with their
warehouses (HBM), the maglev (NVLink) and its central interchange
(NVSwitch), the rail stations (NICs) and the high-speed rail to the other
cities (the network switch).  Every count, rate and name is read from the
Cluster, its :mod:`course_lib.topology` graph and the hardware catalog; the
renderer types no numbers of its own.

``route=`` draws a route over the map (numbered legs, a caption with each
leg's rate and, given ``n_bytes``, the time the model computes):

* chapter 1's routes (:data:`course_lib.analytic.ROUTES`): ``"h2d"``,
  ``"d2h"``, ``"p2p-staged"``, ``"p2p-nvlink"``, ``"rdma"``;
* ``"p2p-pcie"``: GPU to GPU peer-to-peer over PCIe, through the switch (or
  the root complex) without touching host memory (chapter 3);
* ``"h2d-pinned"``, ``"h2d-pageable"``: chapter 4's two copy paths (pageable
  pages are first copied by the CPU into a locked staging buffer);
* ``"tcp"``: chapter 5's kernel path, through each city's city hall.

:func:`copy_path` (chapter 4) and :func:`network_path` (chapter 5) draw the
same routes as close-ups in the same visual language.

Examples
--------
>>> from course_lib.clusters import cluster
>>> d = city_map(cluster("H100", 8, 2, "nvswitch", "NDR"))
>>> d.svg.count('class="ic-gpu"')
16
>>> "450 GB/s per direction" in d.svg
True
>>> city_map(cluster("H100", 8), route="p2p-pcie").svg.count('class="ic-route-leg"')
1
"""

from __future__ import annotations

import math
import re

from .. import analytic, hardware
from ..clusters import Cluster
from ..clusters import cluster as _cluster
from ..units import check_choice, check_int, check_nonnegative, check_positive
from ..units import format_bandwidth, format_bytes, format_distance, format_size, format_time
from .style import NETWORK_MACHINES, PLACES, ROADS
from .glyphs import fit_text, gpu_glyph
from .svg import Canvas, Diagram, text_width

__all__ = ["city_map", "copy_path", "network_path", "CITY_ROUTES", "route_legs"]

#: Routes :func:`city_map` can draw.
CITY_ROUTES = ("h2d", "d2h", "p2p-staged", "p2p-nvlink", "rdma", "p2p-pcie",
               "h2d-pinned", "h2d-pageable", "tcp")

_ROUTE_HALO = "#ffd92f"          # the highlighter under a route
_MARK = "#c2185b"                # numbered markers, cut lines, highlights
_NUMS = "①②③④⑤⑥⑦⑧⑨⑩"
_FACTORY_H = 92
_ROW_GAP = 26                    # city hall to its junction when there are no stations


def _tw(s: str, size: float) -> float:
    """Rough width of ``s`` at ``size`` px (:func:`course_lib.draw.svg.text_width`)."""
    return text_width(s, size)


def _fit(s: str, width: float, size: float) -> str:
    """``s`` shortened with an ellipsis to fit ``width`` px (:func:`.glyphs.fit_text`)."""
    return fit_text(s, width, size)


def _per_dir(bw: float) -> str:
    return f"{format_bandwidth(bw)} per direction"


def _wrap(text: str, width: float, size: float, sep: str = " · ") -> list[str]:
    """Split ``text`` at ``sep`` into lines no wider than ``width`` px."""
    lines, line = [], ""
    for part in text.split(sep):
        trial = f"{line}{sep}{part}" if line else part
        if line and _tw(trial, size) > width:
            lines.append(line)
            line = part
        else:
            line = trial
    lines.append(line)
    return lines


def _place(kind: str):
    fill, city, machine = PLACES[kind]
    return fill, city, machine


def _hbm_text(gpu: str) -> str:
    """The warehouse's rate from the catalog, or '' where the catalog has none."""
    try:
        return format_bandwidth(hardware.hbm_bw_bytes_per_s(gpu))
    except ValueError:
        return ""


def _check_cluster(cluster) -> Cluster:
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster from course_lib.cluster(...), got "
                        f"{type(cluster).__name__}")
    return cluster


def _node_topology(c: Cluster):
    """One node of ``c`` as a topology graph (the builder the models use)."""
    if c.gpus_per_node < 2:
        return None
    one = _cluster(c.gpu, c.gpus_per_node, 1, c.fabric, None, 0, cpu=c.cpu,
                   sockets=c.sockets, pcie_path=c.pcie_path, nic_path=c.nic_path,
                   ring_hops=c.ring_hops)
    return one.topology()


class _Layout:
    """Positions of every place of one drawn city (filled by :func:`_draw_city`)."""

    def __init__(self):
        self.gpu = {}        # local index -> (x, y, w, h)
        self.cpu = {}        # socket -> (x, y, w, h)
        self.mem = {}        # socket -> (x, y, w, h)
        self.bar = {}        # socket -> (x0, x1, y)
        self.nic = {}        # k -> (x, y, w, h)
        self.bus_y = None
        self.nvswitch = None  # (x, y, w, h)
        self.socket_of = {}  # local gpu -> socket
        self.drop = {}       # socket -> x where city hall's road goes down
        self.nic_of = {}     # local gpu -> nic index
        self.right = 0.0
        self.longest = 1     # longest NVLink arc, in columns


def _free_x(x, lo, hi, boxes, pad=8):
    """An x near ``x`` within [lo, hi] that no box (x, y, w, h) covers."""
    spans = sorted((bx - pad, bx + bw + pad) for bx, _, bw, _ in boxes)

    def free(v):
        return all(not (a <= v <= b) for a, b in spans)

    if free(x):
        return x
    cands = [v for a, b in spans for v in (a - 1, b + 1) if lo <= v <= hi and free(v)]
    cands += [(b1 + a2) / 2 for (_, b1), (a2, _) in zip(spans, spans[1:])
              if a2 > b1 and lo <= (b1 + a2) / 2 <= hi]
    return min(cands, key=lambda v: abs(v - x)) if cands else x


def _sockets_drawn(c: Cluster) -> int:
    return 2 if (c.sockets == 2 or (c.nic_path == "remote" and c.nic)) else 1


def _city_height(c: Cluster, shown: int, topo) -> float:
    h = 26 + 48                                   # title, city hall row
    h += 64 if c.nic else _ROW_GAP                # rail bus and stations
    h += 26 + _FACTORY_H + 4                      # junction bar, factories
    if c.fabric == "nvswitch" and shown > 1:
        h += 82
    elif c.fabric in ("mesh", "cube-mesh") and topo is not None:
        longest = _longest_arc(topo, shown)
        h += _arc_depth(longest, longest) * 0.75 + 48
    elif c.fabric == "bridge":
        h += 24
    return h + 8


def _arc_depth(longest: int, span: int) -> float:
    """Depth of an arc spanning ``span`` columns when the longest spans ``longest``."""
    return 18 + 80 * (span - 1) / max(1, longest - 1)


def _longest_arc(topo, shown) -> int:
    spans = [abs(a - b) for a, b in topo.edges if isinstance(a, int) and isinstance(b, int)
             and a < shown and b < shown]
    return max(spans, default=1)


def _arc(L, a, b, shown):
    """Start, two control points and end of the NVLink arc between GPUs a and b."""
    (ax, ay, aw, ah), (bx, by, bw_, bh) = L.gpu[a], L.gpu[b]
    x1 = ax + aw * (0.2 + 0.6 * b / max(1, shown - 1))
    x2 = bx + bw_ * (0.2 + 0.6 * a / max(1, shown - 1))
    yb = ay + ah
    depth = _arc_depth(L.longest, abs(b - a))
    return (x1, yb), (x1, yb + depth), (x2, yb + depth), (x2, yb)


def _box(cv, x, y, w, h, kind, lines, cls, title, bold_line=1, rx=6, stroke="#555"):
    """A place: a filled box with one italic story line and machine lines."""
    fill, city, machine = _place(kind)
    cv.rect(x, y, w, h, fill=fill, stroke=stroke, width=1.2, rx=rx, cls=cls, title=title)
    n = len(lines)
    top = y + h / 2 - (n - 1) * 13 / 2
    for i, s in enumerate(lines):
        cv.text(x + w / 2, top + i * 13, _fit(s, w - 6, 11), size=11,
                italic=(i == 0), weight="bold" if i == bold_line else None,
                fill="#555" if i == 0 else "#222")


def _draw_city(cv: Canvas, c: Cluster, node: int, x0: float, y0: float, w: float,
               shown: int, topo, highlight, nvlink_links=None) -> _Layout:
    """Draw node ``node`` of ``c`` in the box (x0, y0, w); return its layout.
    ``nvlink_links``: the links in use per GPU (the maglev's labels give that
    count and its rate; default all)."""
    L = _Layout()
    g = c.gpu_record
    ns = _sockets_drawn(c)
    gpu_sockets = 2 if c.sockets == 2 else 1
    H = _city_height(c, shown, topo)
    fab = {"nvswitch": "NVSwitch", "mesh": "NVLink full mesh",
           "cube-mesh": "NVLink hybrid cube-mesh", "pcie": "PCIe only",
           "bridge": "NVLink bridge pair"}[c.fabric]
    with cv.group(cls="ic-city", data_node=node):
        cv.rect(x0, y0, w, H, fill="#fbfbf8", stroke="#bbb", width=1, rx=10)
        more = (f" (the first {shown} drawn)" if shown < c.gpus_per_node else "")
        simple = " (simplified map)" if _simplified_system(c) is not None else ""
        cv.text(x0 + 10, y0 + 14, f"city {node + 1} · node {node}: {c.gpus_per_node} × "
                f"{g.name}{more}, {fab}{simple}", size=13, anchor="start", weight="bold")
        inner0, inner1 = x0 + 12, x0 + w - 12
        colw = (inner1 - inner0) / shown
        # which socket each GPU hangs off, and which NIC it uses
        for i in range(shown):
            L.socket_of[i] = _socket(c, i) if gpu_sockets == 2 else 0
            if c.nic:
                L.nic_of[i] = i % c.nics_per_node      # as topology.two_level_topology
        y = y0 + 26
        # --- city halls and depots ------------------------------------------
        half = (inner1 - inner0) / ns
        for s in range(ns):
            sx = inner0 + s * half
            cpu_w, mem_w = 150, 112
            if s == 0:
                mx, cx = sx, sx + mem_w + 10
            else:
                cx = inner1 - cpu_w - mem_w - 10 if ns == 2 else sx
                mx = cx + cpu_w + 10
            cpu_name = f"CPU {s}" + (f" · {c.cpu}" if c.cpu else "")
            _box(cv, cx, y, cpu_w, 40, "cpu", ["city hall", cpu_name], "ic-cpu",
                 f"city hall · CPU socket {s}" + (f" ({c.cpu})" if c.cpu else ""))
            _box(cv, mx, y, mem_w, 40, "host-memory", ["depot", "host memory"],
                 "ic-host-memory", "city hall's depot · host memory (DRAM)")
            L.cpu[s] = (cx, y, cpu_w, 40)
            L.mem[s] = (mx, y, mem_w, 40)
            a, b = (mx + mem_w, cx) if s == 0 else (cx + cpu_w, mx)
            cv.line(a, y + 20, b, y + 20, kind="memory", width=4, cls="ic-memory",
                    title=ROADS["memory"].machine)
        if ns == 2:
            (ax, ay, aw, ah), (bx, _, _, _) = L.cpu[0], L.cpu[1]
            if c.cpu:
                rate = hardware.cpu_link_bw_bytes_per_s(c.cpu)
                tip = f"{ROADS['cpu-link'].city} · {ROADS['cpu-link'].machine}, {_per_dir(rate)}"
            else:
                rate, tip = None, ROADS["cpu-link"].machine
            cv.line(ax + aw, ay + ah / 2, bx, ay + ah / 2, kind="cpu-link", width=5,
                    cls="ic-cpu-link", title=tip)
            mid = (ax + aw + bx) / 2
            cv.text(mid, ay + ah / 2 - 9, "socket link", size=11, fill="#6b5324")
            if rate:
                cv.text(mid, ay + ah / 2 + 10, _per_dir(rate), size=11, fill="#6b5324")
        y += 48
        # --- rail stations (NICs) ---------------------------------------------
        if c.nic:
            port = hardware.nic(c.nic)
            L.bus_y = y + 14
            sy = y + 28
            nic_sock = ns - 1 if c.nic_path == "remote" else None
            xs = []
            for k in range(c.nics_per_node):
                users = [i for i in range(shown) if L.nic_of.get(i) == k]
                if not users:
                    continue
                cx = inner0 + colw * (sum(users) / len(users) + 0.5) + colw * 0.18
                if c.nic_path == "remote":
                    cx = inner0 + half * nic_sock + 40 + k * min(colw, 60)
                xs.append(cx)
                nw = min(54, colw * 0.62)
                L.nic[k] = (cx - nw / 2, sy, nw, 24)
                tip = (f"rail station · NIC {k} ({port.family} {port.name}, "
                       f"{format_bandwidth(port.bw_per_dir_bytes_per_s, bits=True)})")
                fill = _place("nic")[0]
                cv.rect(cx - nw / 2, sy, nw, 24, fill=fill, stroke="#2b5d8a", cls="ic-nic",
                        title=tip)
                cv.text(cx, sy + 12, _fit(f"NIC {k}", nw - 4, 11), size=11)
                cv.line(cx, sy, cx, L.bus_y, kind="network", width=2.5, cls="ic-network")
            if xs:
                cv.line(min(xs), L.bus_y, x0 + w, L.bus_y, kind="network", width=4,
                        cls="ic-network", title=f"{ROADS['network'].city} · {port.family}")
                cv.text(x0 + w - 8, L.bus_y - 8, "rail stations (NICs) → high-speed rail",
                        size=11, anchor="end", italic=True, fill="#2b5d8a")
            y += 64
        # --- road junctions (PCIe) -------------------------------------------
        bar_y = y + 12 + (0 if c.nic else _ROW_GAP)
        gen = g.pcie_gen
        pcie = hardware.pcie_bw_per_dir_bytes_per_s(gen)
        for s in range(gpu_sockets):
            members = [i for i in range(shown) if L.socket_of[i] == s]
            if members:
                bx0 = inner0 + colw * min(members) + 6
                bx1 = inner0 + colw * (max(members) + 1) - 6
            else:                         # none of this socket's GPUs is drawn
                cx, _, cw, _ = L.cpu[s]
                bx0, bx1 = cx, cx + cw
            if c.pcie_path == "switch":
                label = "road junction · PCIe switch"
            else:
                label = "road junction · CPU root complex (PCIe root ports)"
            fill = "#f2b27f" if c.pcie_path == "switch" else "#c9b7e2"
            cv.rect(bx0, bar_y - 4, bx1 - bx0, 8, fill=fill, stroke="#a0522d", rx=3,
                    cls="ic-pcie-switch", title=label)
            cv.text(bx0 + 4, bar_y + 12, _fit(label, bx1 - bx0, 11), size=11,
                    anchor="start", italic=True, fill="#8a4a12")
            L.bar[s] = (bx0, bx1, bar_y)
            # city hall to its junction
            cx, cy, cw, ch = L.cpu[s]
            L.drop[s] = _free_x(cx + cw / 2, cx + 12, cx + cw - 12, L.nic.values())
            jx = min(max(L.drop[s], bx0 + 10), bx1 - 10)
            top = cy + ch
            dx = L.drop[s]
            if c.pcie_path == "switch":
                cv.path(f"M{dx:.1f},{top:.1f} L{dx:.1f},{bar_y - 18:.1f} "
                        f"L{jx:.1f},{bar_y - 18:.1f} L{jx:.1f},{bar_y - 4:.1f}",
                        kind="pcie", width=3, cls="ic-pcie",
                        title=f"arterial road · PCIe Gen{gen} (root port to switch)")
            else:
                cv.path(f"M{dx:.1f},{top:.1f} L{dx:.1f},{bar_y - 18:.1f} "
                        f"L{jx:.1f},{bar_y - 18:.1f} L{jx:.1f},{bar_y - 4:.1f}",
                        stroke="#7a5fa8", width=3, cls="ic-root-complex",
                        title="the CPU's own PCIe root complex")
        # NICs to the junction (or to city hall)
        for k, (nx_, ny, nw, nh) in L.nic.items():
            ncx = nx_ + nw / 2
            users = [i for i in range(shown) if L.nic_of.get(i) == k]
            s = L.socket_of[users[0]] if users else 0
            if c.nic_path == "switch":
                b0, b1, by = L.bar[s]
                cv.line(ncx, ny + nh, ncx, by - 4, kind="pcie", width=2.5, cls="ic-pcie",
                        title=f"arterial road · PCIe Gen{gen} x16, NIC {k} on the switch")
            else:
                hs = ns - 1 if c.nic_path == "remote" else s
                cx, cy, cw, ch = L.cpu[hs]
                yy = ny + nh + 6
                cv.path(f"M{ncx:.1f},{ny + nh:.1f} L{ncx:.1f},{yy:.1f} "
                        f"L{cx + cw - 10:.1f},{yy:.1f} L{cx + cw - 10:.1f},{cy + ch:.1f}",
                        kind="pcie", width=2, cls="ic-pcie",
                        title=f"arterial road · NIC {k} on city hall {hs}'s root complex")
        y = bar_y + 26
        # --- factories and warehouses ----------------------------------------
        hbm = _hbm_text(g.name)
        fw = min(colw - 10, 150)
        for i in range(shown):
            rank = node * c.gpus_per_node + i
            fx = inner0 + colw * i + (colw - fw) / 2
            fy = y
            hl = highlight is not None and rank in highlight
            label = f"factory · GPU {rank} ({g.name})"
            name = f"GPU {rank} · {g.name}"
            if _tw(name, 11) * 1.08 > fw - 6:
                name = f"GPU {rank}"
            gpu_glyph(cv, fx, fy, fw, _FACTORY_H, name, highlight=hl,
                      warehouse=["warehouse", "HBM"] + ([hbm] if hbm else []),
                      title=label + (", warehouse · HBM " + hbm if hbm else ""),
                      data_rank=rank)
            L.gpu[i] = (fx, fy, fw, _FACTORY_H)
            b0, b1, by = L.bar[L.socket_of[i]]
            gx = fx + fw * 0.3
            cv.line(gx, by + 4, gx, fy, kind="pcie", width=3, cls="ic-pcie",
                    title=f"arterial road · PCIe Gen{gen} x16, {_per_dir(pcie)}")
        y += _FACTORY_H + 4
        # --- the maglev -------------------------------------------------------
        _draw_maglev(cv, c, L, topo, shown, x0, y, w, inner0, inner1, nvlink_links)
    L.right = x0 + w
    return L


def _draw_maglev(cv, c, L, topo, shown, x0, y, w, inner0, inner1, used=None):
    g = c.gpu_record
    if c.fabric == "pcie" or topo is None or shown < 2:
        return
    if c.fabric == "nvswitch":
        bw = topo.edges[0, "nvswitch"]["bw_bytes_per_s"]
        links = topo.edges[0, "nvswitch"]["links"]
        if used is not None and used != links:     # the links in use, at their rate
            bw, links = bw * used / links, used
        need = 14 + max(_tw(t, 11.5) for t in (f"maglev · NVLink ×{links}", _per_dir(bw)))
        sw_w = min(300, max(150, inner1 - inner0 - 2 * need))
        sx = (inner0 + inner1) / 2 - sw_w / 2
        sy = y + 40
        systems = [s for s in hardware.SYSTEMS.values()
                   if s.gpu == g.name and s.wiring == "nvswitch" and s.n_gpus == c.gpus_per_node]
        chips = f" ×{systems[0].nvswitches} chips ({systems[0].name})" if systems else ""
        for i in range(shown):
            fx, fy, fw, fh = L.gpu[i]
            gx = fx + fw * 0.6
            ex_ = min(max(gx, sx + 8), sx + sw_w - 8)
            cv.line(gx, fy + fh, ex_, sy, kind="nvlink", width=4, cls="ic-nvlink",
                    title=f"maglev · NVLink ×{links}, {_per_dir(bw)}")
            if i == 0:                    # the link count on the first factory's spoke
                mx, my = gx + (ex_ - gx) * 0.3, fy + fh + (sy - fy - fh) * 0.3
                cv.text(mx, my + 13, f"×{links}", size=11, weight="bold", fill="#11684f",
                        cls="ic-nvlink-count")
        cv.rect(sx, sy, sw_w, 32, fill=_place("nvswitch")[0], stroke="#1b6e55", width=1.6,
                cls="ic-nvswitch", title=f"central interchange · NVSwitch{chips}")
        cv.text(sx + sw_w / 2, sy + 10, "central interchange", size=11, italic=True,
                fill="#555")
        name = next((t for t in (f"NVSwitch{chips}", f"NVSwitch{chips.split(' (')[0]}")
                     if _tw(t, 12) <= sw_w - 6), "NVSwitch")
        cv.text(sx + sw_w / 2, sy + 23, name, size=11,
                weight="bold")
        lx = sx + sw_w + 10
        room = inner1 - lx
        for lines in ([f"maglev · NVLink ×{links} per factory, {_per_dir(bw)}"],
                      [f"maglev · NVLink ×{links} per factory", _per_dir(bw)],
                      [f"maglev · NVLink ×{links}", "per factory,", _per_dir(bw)]):
            if max(_tw(t, 11.5) for t in lines) <= room:
                break
        for j, s in enumerate(lines):
            cv.text(lx, sy + 16 - 6.5 * (len(lines) - 1) + 13 * j, s, size=11,
                    anchor="start", fill="#11684f",
                    weight="bold", cls="ic-nvlink-label")
        L.nvswitch = (sx, sy, sw_w, 32)
        return
    if c.fabric == "bridge":
        (ax, ay, aw, ah), (bx, by, bw_, bh) = L.gpu[0], L.gpu[1]
        e = dict(topo.edges[0, 1])
        if used is not None and used < e["links"]:
            e.update(bw_bytes_per_s=e["bw_bytes_per_s"] * used / e["links"], links=used)
        cv.line(ax + aw, ay + 20, bx, by + 20, kind="nvlink", width=7, cls="ic-nvlink",
                title=f"maglev · NVLink bridge ×{e['links']}, {_per_dir(e['bw_bytes_per_s'])}")
        cv.text((inner0 + inner1) / 2, y + 8,
                f"maglev · NVLink bridge ×{e['links']}, {_per_dir(e['bw_bytes_per_s'])}",
                size=11, weight="bold", fill="#11684f", cls="ic-nvlink-label")
        return
    # mesh and cube-mesh: arcs under the factories, one per GPU pair
    counts = {}
    L.longest = _longest_arc(topo, shown)
    for a, b, d in topo.edges(data=True):
        if not (isinstance(a, int) and isinstance(b, int)) or a >= shown or b >= shown:
            continue
        p0, p1, p2, p3 = _arc(L, a, b, shown)
        cv.path(f"M{p0[0]:.1f},{p0[1]:.1f} C{p1[0]:.1f},{p1[1]:.1f} {p2[0]:.1f},{p2[1]:.1f} "
                f"{p3[0]:.1f},{p3[1]:.1f}", kind="nvlink", width=1.2 + 1.4 * d["links"],
                cls="ic-nvlink", opacity=0.85,
                title=f"maglev · NVLink ×{d['links']} between GPU {a} and GPU {b}, "
                      f"{_per_dir(d['bw_bytes_per_s'])}")
        counts[d["links"]] = d["bw_bytes_per_s"]
    per_link = g.nvlink_per_link_per_dir_bytes_per_s
    if c.fabric == "mesh":
        k = next(iter(counts))
        bw_k = counts[k]
        if used is not None and used < k:          # the links in use, at their rate
            k, bw_k = used, bw_k * used / k
        text = (f"maglev · NVLink full mesh: ×{k} per pair, {_per_dir(bw_k)} "
                f"({g.nvlink_links} links per factory)")
    else:
        text = (f"maglev · NVLink hybrid cube-mesh: {g.nvlink_links} links per factory, "
                f"{format_bandwidth(per_link)} per link per direction; thick = ×2")
    cv.text((inner0 + inner1) / 2, y + _arc_depth(L.longest, L.longest) * 0.75 + 22, text,
            size=11,
            weight="bold", fill="#11684f", cls="ic-nvlink-label")


def _legend_label(entry) -> str:
    """``(kind, text)`` or ``(kind, text, machine)``: the legend's words for one road."""
    kind, text, *machine = entry
    return f"{ROADS[kind].city} = {machine[0] if machine else ROADS[kind].machine}{text}"


def _legend_cols(entries, width) -> int:
    return 2 if all(_tw(_legend_label(e), 11) + 34 < width / 2 for e in entries) else 1


def _legend(cv, x, y, entries, width):
    """Road kinds with this map's rates: ``entries`` is [(kind, text)] or
    [(kind, text, machine name)] where the map names the machine itself."""
    cols = _legend_cols(entries, width)
    col_w = width / cols
    with cv.group(cls="ic-legend"):
        for i, entry in enumerate(entries):
            kind = entry[0]
            xx = x + (i % cols) * col_w
            yy = y + (i // cols) * 17
            cv.line(xx, yy, xx + 22, yy, kind=kind, width=4)
            cv.text(xx + 28, yy, _fit(_legend_label(entry), col_w - 34, 11),
                    size=11, anchor="start")
    return y + ((len(entries) + cols - 1) // cols) * 17


def _legend_entries(c: Cluster, topo, extra=()):
    g = c.gpu_record
    out = []
    if c.fabric != "pcie" and topo is not None:
        per_link = format_bandwidth(g.nvlink_per_link_per_dir_bytes_per_s)
        out.append(("nvlink", f" {g.nvlink_gen}: {per_link} per link per direction"))
    out.append(("pcie", f" Gen{g.pcie_gen} x16: "
                        f"{_per_dir(hardware.pcie_bw_per_dir_bytes_per_s(g.pcie_gen))}"))
    if c.nic:
        port = hardware.nic(c.nic)
        out.append(("network", f": {port.name} "
                               f"{format_bandwidth(port.bw_per_dir_bytes_per_s, bits=True)} = "
                               f"{_per_dir(port.bw_per_dir_bytes_per_s)} a station",
                    NETWORK_MACHINES.get(port.family, ROADS["network"].machine)))
    if _sockets_drawn(c) == 2:
        rate = f": {_per_dir(hardware.cpu_link_bw_bytes_per_s(c.cpu))}" if c.cpu else ""
        out.append(("cpu-link", rate))
    out.append(("memory", ""))
    for k in extra:
        if k not in [e[0] for e in out]:
            out.append((k, ""))
    return out


# ---------------------------------------------------------------------------
# routes: which places a route passes, and the rate of each leg (from the models)
# ---------------------------------------------------------------------------
def route_legs(cluster: Cluster, route: str, *, pair=(0, 1), memory: str = "pinned",
               nvlink_links: int | None = None, distance_m: float = 10.0) -> dict:
    """The legs of ``route`` on ``cluster``, each with its road and rate.

    Parameters
    ----------
    cluster : Cluster
        The machine (:func:`course_lib.cluster`).
    route : str
        One of :data:`CITY_ROUTES`.
    pair : tuple of int
        Local indices of the two GPUs of a GPU-to-GPU route (the first GPU
        is the one a host copy uses; ``rdma`` and ``tcp`` go from GPU or
        host of node 0 to the same GPU or host of node 1).
    memory : {"pinned", "pageable"}
        Host memory of ``h2d`` and ``d2h`` (as in :func:`course_lib.route_parameters`).
    nvlink_links : int, optional
        NVLink links of ``p2p-nvlink`` (default: all of the GPU's).
    distance_m : float
        Cable length for ``rdma`` and ``tcp``, metres.

    Returns
    -------
    dict
        ``legs``: list of ``{"text", "kind", "bw_bytes_per_s"}`` (in order);
        ``copies``: copies in series (what the time formula multiplies);
        ``bw_bytes_per_s`` and ``latency_s``: the route's numbers in the
        model; ``label``: one line.

    Examples
    --------
    >>> from course_lib.clusters import cluster
    >>> r = route_legs(cluster("H100", 8), "p2p-staged")
    >>> [round(leg["bw_bytes_per_s"] / 1e9) for leg in r["legs"]], r["copies"]
    ([63, 63], 2)
    >>> route_legs(cluster("H100", 8), "teleport")
    Traceback (most recent call last):
    ...
    ValueError: route must be one of ['h2d', 'd2h', 'p2p-staged', 'p2p-nvlink', 'rdma', 'p2p-pcie', 'h2d-pinned', 'h2d-pageable', 'tcp']; got 'teleport'
    """
    c = _check_cluster(cluster)
    r = check_choice(route, "route", CITY_ROUTES)
    memory = check_choice(memory, "memory", analytic.HOST_MEMORY)
    a, b = _check_pair(c, pair, both=r.startswith("p2p"))
    g = c.gpu_record
    gen = g.pcie_gen
    pcie = hardware.pcie_bw_per_dir_bytes_per_s(gen)
    if r in ("h2d-pinned", "h2d-pageable"):
        memory = r.split("-")[1]
        r = "h2d"
    if r in ("rdma", "tcp"):
        if c.nodes < 2 or c.nic is None:
            raise ValueError(f"route {route!r} goes between two cities: the cluster needs "
                             f"nodes >= 2 and a nic; got nodes={c.nodes}, nic={c.nic!r}")
        distance_m = check_nonnegative(distance_m, "distance_m")
    if r in ("h2d", "d2h"):
        p = analytic.route_parameters(r, gpu=g.name, memory=memory)
        way = (f"host memory → GPU {a}" if r == "h2d" else f"GPU {a} → host memory")
        if memory == "pinned":
            legs = [{"text": f"{way}: DMA over PCIe Gen{gen} x16 from pinned pages",
                     "kind": "pcie", "bw_bytes_per_s": p["bw_bytes_per_s"]}]
        else:
            ratio = p["bw_bytes_per_s"] / analytic.host_copy_bw_bytes_per_s(gen, "pinned")
            cpu_leg = ("the CPU copies pageable pages into a locked staging buffer"
                       if r == "h2d" else "the CPU copies the staging buffer out to pageable pages")
            ends = "staging → GPU" if r == "h2d" else "GPU → staging"
            dma = {"text": f"DMA over PCIe Gen{gen} x16 ({ends})",
                   "kind": "pcie", "bw_bytes_per_s": hardware.pcie_bw_per_dir_bytes_per_s(gen)}
            cpu = {"text": cpu_leg, "kind": "memory", "bw_bytes_per_s": None}
            legs = [cpu, dma] if r == "h2d" else [dma, cpu]
            p = dict(p, note=f"the two copies share the time: {_per_dir(p['bw_bytes_per_s'])} "
                             f"in all, {ratio:.2g} × pinned (catalog ratio)",
                     memory="pageable", gpu=g.name)
        return dict(p, legs=legs, copies=1, pair=(a, b))
    if r == "p2p-staged":
        p = analytic.route_parameters(r, gpu=g.name)
        second, way = p["bw_bytes_per_s"], f"over PCIe Gen{gen}"
        if _socket(c, a) != _socket(c, b):
            # the second copy reads host memory on the first GPU's socket: it
            # crosses the socket link (nvidia-smi topo: SYS), which may be slower
            way = f"over the socket link and PCIe Gen{gen}"
            if c.cpu:
                second = min(second, hardware.cpu_link_bw_bytes_per_s(c.cpu))
        legs = [{"text": f"GPU {a} → host memory over PCIe Gen{gen}", "kind": "pcie",
                 "bw_bytes_per_s": p["bw_bytes_per_s"]},
                {"text": f"host memory → GPU {b} {way}", "kind": "pcie",
                 "bw_bytes_per_s": second}]
        return dict(p, legs=legs, copies=p["legs"], pair=(a, b),
                    bw_bytes_per_s=min(p["bw_bytes_per_s"], second))
    if r == "p2p-nvlink":
        if c.fabric == "pcie":
            raise ValueError("route 'p2p-nvlink' needs NVLink between the pair; this "
                             "cluster has fabric='pcie' (try 'p2p-pcie' or 'p2p-staged')")
        topo = _node_topology(c)
        if c.fabric != "nvswitch" and not topo.has_edge(a, b):
            raise ValueError(f"pair: GPU {a} and GPU {b} have no NVLink between them on "
                             f"this {c.fabric}; pick neighbours {sorted(topo[a])}")
        pair_links = g.nvlink_links if c.fabric == "nvswitch" else topo.edges[a, b]["links"]
        if nvlink_links is None:
            nvlink_links = pair_links
        nvlink_links = check_int(nvlink_links, "nvlink_links", minimum=1, maximum=pair_links)
        p = analytic.route_parameters(r, gpu=g.name, nvlink_links=nvlink_links)
        via = " through the central interchange (NVSwitch)" if c.fabric == "nvswitch" else ""
        legs = [{"text": f"GPU {a} → GPU {b} over NVLink ×{nvlink_links}{via}",
                 "kind": "nvlink", "bw_bytes_per_s": p["bw_bytes_per_s"]}]
        return dict(p, legs=legs, copies=1, pair=(a, b), nvlink_links=nvlink_links)
    if r == "p2p-pcie":
        junction = "PCIe switch" if c.pcie_path == "switch" else "CPU root complex"
        word = "PIX" if c.pcie_path == "switch" else "PHB"
        bw, via = pcie, junction
        if _socket(c, a) != _socket(c, b):
            word, via = "SYS", f"{junction}, both city halls and the socket link"
            if c.cpu:
                bw = min(pcie, hardware.cpu_link_bw_bytes_per_s(c.cpu))
        real = _simplified_system(c)
        if real is not None:
            # the map draws one switch; the real board's GPUs meet only at the CPU
            word = _real_topo_word(c, a, b)
            if word is None:
                path = "through PCIe switches and root complexes this map does not draw"
            else:
                where = ("the CPU's root complex" if word == "NODE"
                         else "both CPUs' root complexes and the socket link")
                path = f"through {where}, a PCIe path nvidia-smi calls {word}"
            legs = [{"text": f"GPU {a} → GPU {b} over PCIe Gen{gen}, peer-to-peer (no host "
                             f"memory: on a real {real.name} {path}: an upper bound there)",
                     "kind": "pcie", "bw_bytes_per_s": bw}]
        else:
            legs = [{"text": f"GPU {a} → {via} → GPU {b} over PCIe Gen{gen}, peer-to-peer "
                             f"(no host memory, nvidia-smi topo: {word})",
                     "kind": "pcie", "bw_bytes_per_s": bw}]
        p = analytic.route_parameters(r, gpu=g.name)
        return {"route": r, "latency_s": p["latency_s"], "bw_bytes_per_s": bw, "legs": legs,
                "copies": 1, "pair": (a, b), "topo_word": word,
                "label": f"GPU -> GPU peer-to-peer over PCIe Gen{gen} ({junction})"}
    port = hardware.nic(c.nic)
    if r == "rdma":
        p = analytic.route_parameters("rdma", gpu=g.name, nic=port.name, distance_m=distance_m)
        way, road, note = "over PCIe", pcie, "no city hall's kernel on the way"
        if c.nic_path == "host":
            way = "over PCIe through the CPU's root complex"
        elif c.nic_path == "remote":
            # the NIC sits on the other socket: the way crosses the socket link (SYS)
            road = min(pcie, hardware.cpu_link_bw_bytes_per_s(c.cpu))
            way = "over PCIe and the socket link (nvidia-smi topo: SYS)"
            note = "the NIC sits on the other socket, so the socket link limits the way"
            p = dict(p, bw_bytes_per_s=min(p["bw_bytes_per_s"], road))
        how = "GPUDirect RDMA"
        if port.family in ("TCPX", "TCPXO"):   # TCP, not RDMA: only the payload skips host memory
            how = (f"GPUDirect-{port.family}: TCP, the payload stays in GPU memory, the "
                   + ("headers go through city hall's kernel" if port.family == "TCPX"
                      else "NIC does the TCP work"))
            if port.family == "TCPX":
                note = "the payload skips host memory (TCP headers through city hall's kernel)"
        if c.nic_path in ("host", "remote"):
            # NCCL's default GPUDirect RDMA limit is PXB (ncclTopoCheckGdr,
            # NVIDIA/nccl src/graph/paths.cc): through the CPU it stages instead
            note += ("; NCCL itself would not use GPUDirect RDMA this far (PHB/SYS is "
                     "beyond its default NCCL_NET_GDR_LEVEL=PXB) and stages through "
                     "host memory")
        legs = [{"text": f"NIC reads GPU {a}'s memory {way} ({how})",
                 "kind": "pcie", "bw_bytes_per_s": road},
                {"text": _rail_text(f"{port.family} {port.name}", distance_m),
                 "kind": "network", "bw_bytes_per_s": port.bw_per_dir_bytes_per_s},
                {"text": f"NIC writes GPU {a + c.gpus_per_node}'s memory {way}",
                 "kind": "pcie", "bw_bytes_per_s": road}]
        return dict(p, legs=legs, copies=1, pair=(a, b),
                    note=f"one pipelined copy, {note}: the slowest road sets the rate, "
                         f"{_per_dir(p['bw_bytes_per_s'])}")
    lat = hardware.latency_s("tcp_kernel_path")
    legs = [{"text": "city hall's kernel copies the data into a socket buffer (TCP/IP stack)",
             "kind": "kernel", "bw_bytes_per_s": None},
            {"text": "NIC reads the socket buffer over PCIe", "kind": "pcie",
             "bw_bytes_per_s": pcie},
            {"text": _rail_text(_tcp_link(port), distance_m), "kind": "network",
             "bw_bytes_per_s": port.bw_per_dir_bytes_per_s},
            {"text": "the NIC writes into the kernel's buffers over PCIe; an interrupt "
                     "wakes city hall", "kind": "pcie", "bw_bytes_per_s": pcie},
            {"text": "the other city hall's kernel copies it out to the program",
             "kind": "kernel", "bw_bytes_per_s": None}]
    return {"route": "tcp", "latency_s": lat + analytic.fibre_one_way_s(distance_m),
            "bw_bytes_per_s": min(port.bw_per_dir_bytes_per_s, pcie), "legs": legs,
            "copies": 1, "pair": (a, b),
            "label": f"host -> remote host through both kernels (TCP over {_tcp_link(port)})",
            "note": f"the kernel path costs {format_time(lat)} at the end points (catalog)"}


def _tcp_link(port) -> str:
    """The link TCP really runs on through a catalog NIC: IP over InfiniBand on an
    InfiniBand port, plain Ethernet on the Ethernet-based ones (RoCE, EFA, TCPX)."""
    return (f"IP over InfiniBand (IPoIB), {port.name}" if port.family == "InfiniBand"
            else f"Ethernet ({port.name} port)")


def _rail_text(link: str, distance_m: float) -> str:
    """The network leg of a route to the other city, with its fibre."""
    return (f"{link} rail to the other city, {format_distance(distance_m)} of fibre "
            f"({format_time(analytic.fibre_one_way_s(distance_m))} one way)")


def _simplified_system(c: Cluster):
    """The real system a single-socket NVSwitch node stands for (``SYSTEMS``), or None.

    Every NVSwitch system of the catalog (DGX-2, DGX A100, DGX/HGX H100, ...) has two
    CPU sockets and a tree of PCIe switches; the city map draws such a node with one city
    hall and one road junction, so it says so: it is a simplified map.  On HGX/DGX H100
    and later each GPU shares a switch with its own NIC only, so the PCIe words between
    two of its GPUs are NODE (one socket) or SYS (across the sockets), never PIX."""
    if c.fabric != "nvswitch" or c.sockets != 1:
        return None
    systems = [s for s in hardware.SYSTEMS.values()
               if s.gpu == c.gpu_record.name and s.wiring == "nvswitch"
               and s.n_gpus == c.gpus_per_node]
    return systems[0] if systems else None


#: Boards where each GPU shares a PCIe switch with its own NIC only (HGX/DGX H100 and
#: later): two GPUs meet at a root complex.  Older NVSwitch boards (DGX-2, DGX A100) share
#: a switch between a few GPUs and NICs; the map does not name their PCIe words.
_OWN_SWITCH_GPUS = ("H100", "H200", "B200")


def _real_topo_word(c: Cluster, a: int, b: int) -> str | None:
    """``nvidia-smi topo -m``'s PCIe word for GPUs ``a`` and ``b`` on the real two-socket
    board a simplified NVSwitch node stands for: NODE on one socket, SYS across (None
    for a board whose GPUs share PCIe switches: its layout is not drawn)."""
    if c.gpu_record.name not in _OWN_SWITCH_GPUS:
        return None
    half = c.gpus_per_node // 2
    return "NODE" if (a < half) == (b < half) else "SYS"


def _socket(c: Cluster, local: int) -> int:
    """The socket GPU ``local`` hangs off (the first half of the GPUs on socket 0)."""
    return (local * c.sockets) // c.gpus_per_node


def _check_pair(c: Cluster, pair, both: bool = True):
    """The pair's local GPU indices; only the first must exist unless ``both``
    (a route from one GPU: host copies, RDMA and TCP to the other city)."""
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise TypeError(f"pair must be two GPU indices such as (0, 1), got {pair!r}") from None
    a = check_int(a, "pair", minimum=0, maximum=c.gpus_per_node - 1)
    if not both:
        return a, a
    b = check_int(b, "pair", minimum=0, maximum=c.gpus_per_node - 1)
    if a == b:
        raise ValueError(f"pair must be two different GPUs, got {pair!r}")
    return a, b


_ROUTE_NAMES = {"h2d": "host → GPU", "d2h": "GPU → host", "p2p-staged":
                "staged through host memory", "p2p-nvlink": "NVLink peer-to-peer",
                "rdma": "RDMA to the other city", "p2p-pcie": "PCIe peer-to-peer",
                "tcp": "TCP through the kernels"}


def _route_caption(info: dict, n_bytes, first: int = 0, header: bool = False) -> list[str]:
    parts = []
    if header:
        parts.append(f"{_ROUTE_NAMES.get(info['route'], info['route'])}:")
    for i, leg in enumerate(info["legs"]):
        rate = f": {_per_dir(leg['bw_bytes_per_s'])}" if leg["bw_bytes_per_s"] else ""
        parts.append(f"{_NUMS[first + i]} {leg['text']}{rate}")
    tail = []
    if info.get("memory") == "pageable" and n_bytes is not None:
        # the time the models give (route_transfer_time_s): the pinned DMA plus the
        # CPU's staging copy measured size by size, not one catalog ratio
        t = analytic.route_transfer_time_s(n_bytes, info["route"], gpu=info["gpu"],
                                           memory="pageable")
        pinned = analytic.host_copy_bw_bytes_per_s(hardware.gpu(info["gpu"]).pcie_gen)
        extra = hardware.pageable_extra_time_s(n_bytes, info["route"])
        t_pin = t - extra
        tail.append(f"at {format_size(n_bytes)} pageable delivers {t_pin / t:.2g} × pinned "
                    f"(staging measured size by size on an H200)")
        cpu = (f" + CPU copy {format_time(extra)}" if extra > 0
               else " (the CPU's copy measured as free at this size)")
        tail.append(f"{format_size(n_bytes)}: T = {format_time(info['latency_s'])} + "
                    f"D / {format_bandwidth(pinned)}{cpu} = {format_time(t)}")
        return parts + tail
    if info.get("note"):
        tail.append(info["note"])
    rates = [leg["bw_bytes_per_s"] for leg in info["legs"] if leg["bw_bytes_per_s"]]
    if (n_bytes is not None and info.get("latency_s") is not None and info["copies"] > 1
            and len(set(rates)) > 1):
        # copies in series at different rates: T = alpha + sum of D / B_i
        t = info["latency_s"] + sum(analytic.transfer_time_s(n_bytes, b) for b in rates)
        terms = " + ".join(f"D / {format_bandwidth(b)}" for b in rates)
        tail.append(f"{format_size(n_bytes)}: T = {format_time(info['latency_s'])} + "
                    f"{terms} = {format_time(t)}")
    elif n_bytes is not None and info.get("latency_s") is not None:
        t = analytic.staged_transfer_time_s(n_bytes, info["bw_bytes_per_s"],
                                            info["latency_s"], legs=info["copies"])
        k = f"{info['copies']} × " if info["copies"] > 1 else ""
        tail.append(f"{format_size(n_bytes)}: T = {format_time(info['latency_s'])} + "
                    f"{k}D / {format_bandwidth(info['bw_bytes_per_s'])} = {format_time(t)}")
    elif n_bytes is not None:
        t = n_bytes / info["bw_bytes_per_s"]
        tail.append(f"{format_size(n_bytes)} / {format_bandwidth(info['bw_bytes_per_s'])}"
                    f" = {format_time(t)} (plus a start-up the catalog does not list)")
    return parts + tail


def _polyline_at(pts, frac=0.5):
    """The point a fraction ``frac`` of the way along a polyline."""
    seg = [math.dist(p, q) for p, q in zip(pts, pts[1:])]
    half, acc = sum(seg) * frac, 0.0
    for (p, q), s in zip(zip(pts, pts[1:]), seg):
        if acc + s >= half and s > 0:
            f = (half - acc) / s
            return p[0] + f * (q[0] - p[0]), p[1] + f * (q[1] - p[1])
        acc += s
    return pts[-1]


def _clean(pts):
    """``pts`` without repeated points and without points in the middle of a straight run."""
    out = []
    for p in pts:
        p = (float(p[0]), float(p[1]))
        if out and math.dist(out[-1], p) < 0.5:
            continue
        if len(out) >= 2:
            (ax, ay), (bx, by) = out[-2], out[-1]
            if abs((bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax)) < 1e-6 and \
                    (bx - ax) * (p[0] - bx) + (by - ay) * (p[1] - by) >= 0:
                out[-1] = p
                continue
        out.append(p)
    return out


def _offset(pts, d):
    """The polyline ``pts`` moved ``d`` px to its left (two legs on one road)."""
    pts = _clean(pts)
    normals = []
    for p, q in zip(pts, pts[1:]):
        n = math.dist(p, q) or 1.0
        normals.append(((q[1] - p[1]) / n, -(q[0] - p[0]) / n))
    out = []
    for i, (x, y) in enumerate(pts):
        n1 = normals[i - 1] if i else normals[0]
        n2 = normals[i] if i < len(normals) else normals[-1]
        mx, my = n1[0] + n2[0], n1[1] + n2[1]
        m = math.hypot(mx, my)
        if m < 1e-6:                      # a U-turn: use one side
            mx, my, m = n1[0], n1[1], 1.0
        mx, my = mx / m, my / m
        k = d / max(0.3, mx * n1[0] + my * n1[1])
        out.append((x + mx * k, y + my * k))
    return out


def _draw_legs(cv, legs, at=None, halo=13):
    """Draw route legs ``[(points, road kind, title)]``: every leg's highlighted
    road and arrow first, then the numbers on top (none hidden under a later leg)."""
    marks = [_draw_leg(cv, pts, kind, i + 1, title, at=at, halo=halo)
             for i, (pts, kind, title) in enumerate(legs)]
    marks = _place_marks(cv, [_clean(pts) for pts, _k, _t in legs], marks)
    for i, (mx, my) in enumerate(marks):
        with cv.group(cls="ic-route-number"):
            cv.circle(mx, my, 10, fill=_MARK, stroke="white", width=1.5)
            cv.text(mx, my + 1, str(i + 1), size=12, weight="bold", fill="white")


_MARK_R = 10                     # a route number's circle, px


def _overlap(box, cx, cy, r):
    """How far a circle (cx, cy, r) reaches into a box (0: not at all)."""
    x0, y0, x1, y1 = box
    dx = max(x0 - cx, 0.0, cx - x1)
    dy = max(y0 - cy, 0.0, cy - y1)
    return max(0.0, r - math.hypot(dx, dy))


def _place_marks(cv, paths, wanted, pad=2.0, radius=_MARK_R):
    """Where each leg's number goes: its wanted place when that covers no word
    and no earlier number, else the nearest free place along its leg (or beside
    it): route numbers never pile up or hide a label."""
    placed = []
    r = radius + pad
    width, height = cv.width, cv.height

    def cost(x, y):
        words = sum(_overlap(b, x, y, r) for b in cv.text_boxes)
        marks = sum(max(0.0, 2 * r - math.dist((x, y), p)) for p in placed)
        edge = max(0.0, r - x) + max(0.0, x + r - width) + max(0.0, r - y) + \
            max(0.0, y + r - height)
        return words + 2 * marks + 2 * edge

    for pts, (mx, my) in zip(paths, wanted):
        best, best_cost = (mx, my), cost(mx, my)
        if best_cost > 0 and len(pts) >= 2:
            candidates = []
            for k in range(1, 20):
                x, y = _polyline_at(pts, k / 20)
                candidates.append((x, y))
                for dx, dy in ((0, -15), (0, 15), (-15, 0), (15, 0)):
                    candidates.append((x + dx, y + dy))
            for x, y in sorted(candidates, key=lambda p: math.dist(p, (mx, my))):
                c = cost(x, y)
                if c < best_cost - 1e-9:
                    best, best_cost = (x, y), c
                    if c == 0:
                        break
        placed.append(best)
    return placed


def _draw_leg(cv, pts, kind, number, title, at=None, halo=13):
    """One leg; returns where its number goes."""
    pts = _clean(pts)
    d = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    with cv.group(cls="ic-route-leg", title=title):
        cv.path(d, stroke=_ROUTE_HALO, width=halo, opacity=0.85)
        cv.path(d, kind=kind, width=4.5, dash="" if kind != "kernel" else None)
        (x1, y1), (x2, y2) = pts[-2], pts[-1]
        ang = math.atan2(y2 - y1, x2 - x1)
        hx, hy = x2 - 4 * math.cos(ang), y2 - 4 * math.sin(ang)
        bx, by = hx - 12 * math.cos(ang), hy - 12 * math.sin(ang)
        colour = ROADS[kind].colour
        cv.polygon([(hx, hy), (bx + 6 * math.sin(ang), by - 6 * math.cos(ang)),
                    (bx - 6 * math.sin(ang), by + 6 * math.cos(ang))], fill=colour)
        length = sum(math.dist(p, q) for p, q in zip(pts, pts[1:]))
        if at is None:                   # near the start of a leg; mid-way on a long one
            at = 0.5 if length > 150 or not length else min(0.5, 24 / length)
        mx, my = _polyline_at(pts, at)
        if length < 70:                  # a short leg: put its number beside it
            (px, py), (qx, qy) = pts[0], pts[-1]
            n = math.dist(pts[0], pts[-1]) or 1.0
            mx, my = mx + 15 * (qy - py) / n, my - 15 * (qx - px) / n
    return mx, my


def _c(box, fx=0.5, fy=0.5):
    x, y, w, h = box
    return x + w * fx, y + h * fy


def _route_paths(c: Cluster, info: dict, cities: list, route: str):
    """Polylines (one per leg) of a route over the drawn cities."""
    L = cities[0]
    a, b = info["pair"]
    ga, gb = L.gpu.get(a), L.gpu.get(b)
    if ga is None or gb is None:
        raise ValueError(f"pair: GPU {max(a, b)} is not drawn (raise max_gpus)")
    sa = L.socket_of[a]
    bar = L.bar[sa]
    cpu, mem = L.cpu[sa], L.mem[sa]
    pa = (ga[0] + ga[2] * 0.3, ga[1])

    def cpu_to_bar(s):
        cx, cy, cw, ch = L.cpu[s]
        b0, b1, by = L.bar[s]
        dx = L.drop[s]
        jx = min(max(dx, b0 + 10), b1 - 10)
        return [(dx, cy + ch), (dx, by - 18), (jx, by - 18), (jx, by)]

    def mem_to_cpu(s):
        mx, my, mw, mh = L.mem[s]
        cx, cy, cw, ch = L.cpu[s]
        near = 0.8 if mx < cx else 0.2
        return [(mx + mw * near, my + mh), (mx + mw * near, my + mh + 7),
                (L.drop[s], cy + ch + 7)]

    def socket_hop(s0, s1):
        """From under city hall s0, along the socket link, to under city hall s1."""
        (c0x, c0y, c0w, c0h), (c1x, c1y, c1w, c1h) = L.cpu[s0], L.cpu[s1]
        ym = c0y + c0h / 2
        left, right = (c0x + c0w, c1x) if c0x < c1x else (c0x, c1x + c1w)
        return [(left, c0y + c0h), (left, ym), (right, ym), (right, c1y + c1h),
                (L.drop[s1], c1y + c1h)]

    down = mem_to_cpu(sa) + cpu_to_bar(sa)[1:] + [(pa[0], bar[2]), pa]
    r = route.split("-")[0] if route.startswith("h2d-") else route
    if r in ("h2d", "d2h"):
        legs = info["legs"]
        if len(legs) == 1:
            path = down if r == "h2d" else down[::-1]
            return [path]
        mx, my, mw, mh = mem
        loop = [(mx + mw * 0.1, my + mh), (mx + mw * 0.1, my + mh + 9),
                (mx + mw * 0.5, my + mh + 9), (mx + mw * 0.5, my + mh)]
        if r == "h2d":
            return [loop, down]
        return [down[::-1], loop[::-1]]
    if r == "p2p-staged":
        pb = (gb[0] + gb[2] * 0.3, gb[1])
        sb = L.socket_of[b]
        up = ([pa, (pa[0], bar[2])] + cpu_to_bar(sa)[::-1][:-1] + mem_to_cpu(sa)[::-1])
        if sb == sa:
            down_b = (mem_to_cpu(sb) + cpu_to_bar(sb)[1:] + [(pb[0], L.bar[sb][2]), pb])
        else:                             # from this socket's depot over the socket link
            cx, cy, cw, ch = L.cpu[sa]
            down_b = (mem_to_cpu(sa) + [(L.drop[sa], cy + ch)] + socket_hop(sa, sb)
                      + cpu_to_bar(sb)[1:] + [(pb[0], L.bar[sb][2]), pb])
        return [_offset(up, -5), _offset(down_b, -5)]
    if r == "p2p-pcie":
        pb = (gb[0] + gb[2] * 0.3, gb[1])
        sb = L.socket_of[b]
        if sb == sa:
            return [[pa, (pa[0], bar[2]), (pb[0], bar[2]), pb]]
        return [[pa, (pa[0], bar[2])] + cpu_to_bar(sa)[::-1] + socket_hop(sa, sb)
                + cpu_to_bar(sb)[1:] + [(pb[0], L.bar[sb][2]), pb]]
    if r == "p2p-nvlink":
        qa = (ga[0] + ga[2] * 0.6, ga[1] + ga[3])
        qb = (gb[0] + gb[2] * 0.6, gb[1] + gb[3])
        if c.fabric == "nvswitch" and L.nvswitch:
            sx, sy, sw, sh = L.nvswitch
            ca = (min(max(qa[0], sx + 8), sx + sw - 8), sy)
            cb = (min(max(qb[0], sx + 8), sx + sw - 8), sy)
            return [[qa, ca, (ca[0], sy + sh / 2), (cb[0], sy + sh / 2), cb, qb]]
        if c.fabric == "bridge":
            return [[(ga[0] + ga[2], ga[1] + 20), (gb[0], gb[1] + 20)]]
        lo, hi = min(a, b), max(a, b)
        p0, p1, p2, p3 = _arc(L, lo, hi, len(L.gpu))
        pts = []
        for j in range(17):
            t = j / 16
            u = 1 - t
            pts.append(tuple(u ** 3 * p0[k] + 3 * u * u * t * p1[k] + 3 * u * t * t * p2[k]
                             + t ** 3 * p3[k] for k in (0, 1)))
        return [pts if a < b else pts[::-1]]
    # rdma / tcp: node 0 -> node 1
    R = cities[1]
    k = L.nic_of[a]

    def to_nic(Lx, s, start, from_gpu=True):
        """From a GPU's top (or, for TCP, city hall's bottom) to NIC k, along the
        roads the drawing has: the PCIe switch, or the CPU's root complex (and,
        for a NIC on the other socket, the socket link)."""
        nx_, ny, nw, nh = Lx.nic[k]
        ncx = nx_ + nw / 2
        by = Lx.bar[s][2]
        if c.nic_path == "switch":
            return [start, (start[0], by), (ncx, by), (ncx, ny + nh)]
        cx, cy, cw, ch = Lx.cpu[s]
        dx = Lx.drop[s]
        jx = min(max(dx, Lx.bar[s][0] + 10), Lx.bar[s][1] - 10)
        pts = ([start, (start[0], by), (jx, by), (jx, by - 18), (dx, by - 18), (dx, cy + ch)]
               if from_gpu else [start])
        hs = len(Lx.cpu) - 1 if c.nic_path == "remote" else s
        if hs != s:                       # across the socket link to the other city hall
            hx, hy, hw, hh = Lx.cpu[hs]
            a_x, b_x = (cx + cw, hx) if cx < hx else (cx, hx + hw)
            pts += [(a_x, cy + ch), (a_x, cy + ch / 2), (b_x, cy + ch / 2), (b_x, hy + hh)]
            cx, cy, cw, ch = hx, hy, hw, hh
        return pts + [(cx + cw - 10, cy + ch), (cx + cw - 10, ny + nh + 6),
                      (ncx, ny + nh + 6), (ncx, ny + nh)]

    def rail(Lx, Rx):
        nx_, ny, nw, nh = Lx.nic[k]
        rx, ry, rw, rh = Rx.nic[k]
        hub_x = Lx.right + 30
        return [(nx_ + nw / 2, ny), (nx_ + nw / 2, Lx.bus_y), (hub_x, Lx.bus_y),
                (hub_x, Rx.bus_y), (rx + rw / 2, Rx.bus_y), (rx + rw / 2, ry)]

    if r == "rdma":
        gb2 = R.gpu[a]
        pb = (gb2[0] + gb2[2] * 0.3, gb2[1])
        return [to_nic(L, sa, pa), rail(L, R), to_nic(R, R.socket_of[a], pb)[::-1]]
    # tcp: depot -> city hall's kernel -> NIC ... NIC -> city hall's kernel -> depot
    def kernel(Lx):
        mx, my, mw, mh = Lx.mem[sa]
        cx, cy, cw, ch = Lx.cpu[sa]
        near = 0.8 if mx < cx else 0.2
        kx = cx + cw * 0.3
        return [(mx + mw * near, my + mh), (mx + mw * near, my + mh + 7),
                (kx, cy + ch + 7), (kx, cy + ch)]

    def nic_leg(Lx):
        start = (Lx.drop[sa], Lx.cpu[sa][1] + Lx.cpu[sa][3])
        if c.nic_path != "switch":
            return to_nic(Lx, sa, start, from_gpu=False)
        return [start] + _via_bar(Lx, sa, k, start)

    return [kernel(L), nic_leg(L), rail(L, R), nic_leg(R)[::-1], kernel(R)[::-1]]


def _via_bar(Lx, s, k, start):
    """From a city hall's bottom to NIC ``k`` through the socket's PCIe junction."""
    b0, b1, by = Lx.bar[s]
    nx_, ny, nw, nh = Lx.nic[k]
    ncx = nx_ + nw / 2
    return [(start[0], by - 18), (ncx, by - 18), (ncx, ny + nh)]


def city_map(cluster, *, route: str | None = None, highlight=None, max_nodes: int = 4,
             width: float | None = None, n_bytes: float | None = None, pair=(0, 1),
             memory: str = "pinned", nvlink_links: int | None = None,
             distance_m: float = 10.0, max_gpus: int = 8) -> Diagram:
    """Draw ``cluster`` as the city, optionally with a route on it.

    Parameters
    ----------
    cluster : Cluster
        From :func:`course_lib.cluster` (one node or several).
    route : str or list of str, optional
        One of :data:`CITY_ROUTES` to draw over the map (see the module text), or
        a list of up to four to compare (legs numbered in order).
    highlight : iterable of int, optional
        GPU ranks to outline (e.g. a group placed together).
    max_nodes : int
        Cities drawn in full; the rest are summarised ("… N more cities").
    width : float, optional
        Drawing width in px (default 880; 600 to 900 reads well in a notebook).
    n_bytes : float, optional
        With a route: also give the model's time for this many bytes.
    pair : tuple of int
        The two GPUs (local indices) of a GPU-to-GPU route.
    memory : {"pinned", "pageable"}
        Host memory of ``h2d``/``d2h``.
    nvlink_links : int, optional
        NVLink links used by ``p2p-nvlink`` (default all).
    distance_m : float
        Cable length of ``rdma``/``tcp``, metres.
    max_gpus : int
        Factories drawn per city; more are summarised.

    Returns
    -------
    Diagram
        SVG; elements carry classes (``ic-gpu``, ``ic-hbm``, ``ic-cpu``,
        ``ic-nvlink``, ``ic-nvswitch``, ``ic-pcie``, ``ic-nic``,
        ``ic-network``, ``ic-cpu-link``, ``ic-route-leg``, ...).

    Examples
    --------
    >>> from course_lib.clusters import cluster
    >>> d = city_map(cluster("A100", 4, fabric="mesh"), route="p2p-nvlink", n_bytes=1e9)
    >>> d.svg.count('class="ic-gpu"'), "100 GB/s per direction" in d.svg
    (4, True)
    >>> city_map(cluster("H100"), max_nodes=0)
    Traceback (most recent call last):
    ...
    ValueError: max_nodes must be an integer >= 1 and <= 64, got 0
    """
    c = _check_cluster(cluster)
    max_nodes = check_int(max_nodes, "max_nodes", minimum=1, maximum=64)
    max_gpus = check_int(max_gpus, "max_gpus", minimum=2, maximum=16)
    W = 880.0 if width is None else check_positive(width, "width")
    if not 480 <= W <= 1400:
        raise ValueError(f"width must lie in [480, 1400] px, got {width!r}")
    if n_bytes is not None:
        n_bytes = check_nonnegative(n_bytes, "n_bytes")
    if highlight is not None:
        try:
            highlight = {check_int(r, "highlight", minimum=0, maximum=c.n_ranks - 1)
                         for r in highlight}
        except TypeError:
            raise TypeError(f"highlight must be GPU ranks such as [0, 1], got "
                            f"{highlight!r}") from None
    if route is None or isinstance(route, str):
        routes = [] if route is None else [route]
    elif isinstance(route, (list, tuple)):
        routes = list(route)
    else:
        routes = None
    if routes is None or len(routes) > 4 or not all(isinstance(r, str) for r in routes):
        raise TypeError(f"route must be a route name or a list of up to 4 of "
                        f"{list(CITY_ROUTES)}, got {route!r}")
    infos = [route_legs(c, r, pair=pair, memory=memory, nvlink_links=nvlink_links,
                        distance_m=distance_m) for r in routes]
    shown = min(c.gpus_per_node, max_gpus)
    topo = _node_topology(c)
    drawn = min(c.nodes, max_nodes)
    if any(r in ("rdma", "tcp") for r in routes):
        drawn = max(drawn, 2)
    hub_w = 150 if c.nic else 0
    city_w = W - 20 - (hub_w + 40 if c.nic else 0)
    ch = _city_height(c, shown, topo)
    y = 30
    more = c.nodes - drawn
    legend_entries = _legend_entries(c, topo, extra=[leg["kind"] for info in infos
                                                     for leg in info["legs"]])
    caption, first = [], 0
    for info in infos:
        for line in _route_caption(info, n_bytes, first, header=len(infos) > 1):
            for part in _wrap(line, W - 30, 12, sep="; "):    # then at spaces: no clipping
                room = 0.9 * (W - 30)                       # bold lines run wider
                if _tw(part, 12) <= room:
                    caption.append(part)
                    continue
                glued = re.sub(r"(\d) (?=[A-Za-zµ%])", "\\1\u00a0", part)   # "63 GB/s" stays whole
                caption += [w.replace("\u00a0", " ") for w in _wrap(glued, room, 12, sep=" ")]
        first += len(info["legs"])
    real = _simplified_system(c)
    if real is not None:
        if c.gpu_record.name in _OWN_SWITCH_GPUS:
            note = (f"Simplified map: one city hall and one road junction drawn. A real "
                    f"{real.name} has 2 CPU sockets, and each GPU shares a PCIe switch with its "
                    f"own NIC only (the PCIe path between two GPUs is NODE or SYS, not PIX; "
                    f"topo -m itself shows NV{c.gpu_record.nvlink_links} between them: NVLink).")
        else:
            note = (f"Simplified map: one city hall and one road junction drawn. A real "
                    f"{real.name} has 2 CPU sockets and several PCIe switches, each shared by "
                    f"a few GPUs and NICs: its PCIe paths are not drawn.")
        room = 0.9 * (W - 30)
        caption += _wrap(note, room, 12, sep=" ")
    height = (y + drawn * (ch + 14) + (40 if more else 0)
              + 17 * math.ceil(len(legend_entries) / _legend_cols(legend_entries, W - 28))
              + 20 * len(caption) + 24)
    title = f"The city: {c.describe()}" + (f", route {', '.join(routes)}" if routes else "")
    cv = Canvas(W, height, title=title)
    head = ("city hall = CPU · depot = host memory · road junction = PCIe switch · "
            "factory = GPU · warehouse = HBM · central interchange = NVSwitch · "
            "rail station = NIC")
    for j, line in enumerate(_wrap(head, W - 20, 11)):
        cv.text(10, 10 + 13 * j, line, size=11, anchor="start", fill="#555",
                cls="ic-key")
    cities = []
    for node in range(drawn):
        cities.append(_draw_city(cv, c, node, 10, y, city_w, shown, topo, highlight,
                                 nvlink_links))
        y += ch + 14
    if more:
        with cv.group(cls="ic-more-cities"):
            cv.rect(10, y, city_w, 30, fill="#f6f6f2", stroke="#999",
                    stroke_dasharray="5,4")
            cv.text(10 + city_w / 2, y + 15,
                    (f"… {more} more cities (nodes {drawn}–{c.nodes - 1})" if more > 1 else
                     f"… 1 more city (node {drawn})") + f", each like city 1: "
                    f"{more * c.gpus_per_node} more factories", size=12, italic=True)
        y += 40
    if c.nic:
        port = hardware.nic(c.nic)
        hx = 10 + city_w + 40
        ys = [L.bus_y for L in cities]
        if more:
            ys.append(y - 25)
            cv.line(10 + city_w, y - 25, hx, y - 25, kind="network", width=4,
                    cls="ic-network", dash="6,4")
        for L in cities:
            cv.line(L.right, L.bus_y, hx, L.bus_y, kind="network", width=4, cls="ic-network")
        top, bot = min(ys) - 30, max(max(ys) + 30, min(ys) + 120)
        label = ["rail hub", "network switch", f"{port.family} {port.name}",
                 f"{format_bandwidth(port.bw_per_dir_bytes_per_s, bits=True)} a port",
                 "(a fat tree drawn" if c.nodes > 1 else "to other cities", "as one box)"
                 if c.nodes > 1 else ""]
        label = [s for s in label if s]
        cv.rect(hx, top, hub_w, bot - top, fill=_place("network-switch")[0],
                stroke="#2b5d8a", width=1.6, cls="ic-network-switch",
                title=f"rail hub · network switch ({port.family} {port.name})")
        mid = (top + bot) / 2 - (len(label) - 1) * 7
        for j, s in enumerate(label):
            cv.text(hx + hub_w / 2, mid + 14 * j, _fit(s, hub_w - 6, 11), size=11,
                    italic=(j == 0), weight="bold" if j == 1 else None)
    if infos:
        legs = []
        for r, info in zip(routes, infos):
            paths = _route_paths(c, info, cities, r)
            if r == "p2p-pcie" and "p2p-staged" in routes:
                paths = [_offset(p, 7) for p in paths]
            for pts, leg in zip(paths, info["legs"]):
                rate = f", {_per_dir(leg['bw_bytes_per_s'])}" if leg["bw_bytes_per_s"] else ""
                legs.append((pts, leg["kind"], f"{len(legs) + 1}. {leg['text']}{rate}"))
        with cv.group(cls="ic-route", data_route=" ".join(routes)):
            _draw_legs(cv, legs, at=0.5 if len(legs) == 1 else None,
                       halo=9 if "p2p-staged" in routes else 13)
    ly = y + 6
    ly = _legend(cv, 14, ly, legend_entries, W - 28) + 4
    for j, line in enumerate(caption):
        cv.text(12, ly + 8 + 20 * j, line, size=12, anchor="start",
                weight="bold" if (j == 0 and len(infos) == 1) or line.endswith(":") else None,
                cls="ic-caption")
    return cv.diagram()


# ---------------------------------------------------------------------------
# close-ups: chapter 4's copy paths and chapter 5's network paths
# ---------------------------------------------------------------------------
def copy_path(memory: str = "pageable", *, gpu: str | None = "H100", pcie_gen: int | None = None,
              measured: bool = True, n_bytes: float | None = None,
              direction: str = "h2d", latency_s: float | None = None,
              width: float = 600) -> Diagram:
    """Close-up of one host ↔ GPU copy: pinned DMA or the pageable bounce buffer.

    Parameters
    ----------
    memory : {"pinned", "pageable"}
        Pinned: the DMA engine reads the locked pages directly (one copy).
        Pageable: the CPU first copies the pages into a locked staging
        buffer, then the DMA engine copies that (two copies sharing the time).
    gpu : str or None
        Catalog GPU (its PCIe generation unless ``pcie_gen`` is given); None
        draws a GPU of no particular model (then ``pcie_gen`` is needed).
    pcie_gen : int, optional
        PCIe generation of the host link (3-6).
    measured : bool
        Rates as a measured copy reaches them (True) or the link rate
        (:func:`course_lib.host_copy_bw_bytes_per_s`).
    n_bytes : float, optional
        Also give the time of a copy of this size.
    direction : {"h2d", "d2h"}
        Host to GPU or back.
    latency_s : float, optional
        Start-up of the copy for ``n_bytes``'s time (default: as
        :func:`course_lib.analytic.host_copy_time_s`).
    width : float
        Drawing width, px.

    Examples
    --------
    >>> d = copy_path("pageable", pcie_gen=5)
    >>> d.svg.count('class="ic-route-leg"'), "staging buffer" in d.svg
    (2, True)
    >>> copy_path("paged")
    Traceback (most recent call last):
    ...
    ValueError: memory must be one of ['pinned', 'pageable']; got 'paged'
    """
    memory = check_choice(memory, "memory", analytic.HOST_MEMORY)
    direction = check_choice(direction, "direction", ("h2d", "d2h"))
    if gpu is None and pcie_gen is None:
        raise ValueError("pcie_gen must be given when gpu is None")
    g = None if gpu is None else hardware.gpu(gpu)
    gen = g.pcie_gen if pcie_gen is None else check_int(pcie_gen, "pcie_gen", minimum=3,
                                                        maximum=6)
    gpu_name = "GPU" if g is None else f"GPU · {g.name}"
    if not isinstance(measured, bool):
        raise TypeError(f"measured must be True or False, got {measured!r}")
    W = check_positive(width, "width")
    if not 420 <= W <= 1000:
        raise ValueError(f"width must lie in [420, 1000] px, got {width!r}")
    pinned_bw = analytic.host_copy_bw_bytes_per_s(gen, "pinned", measured=measured)
    bw = analytic.host_copy_bw_bytes_per_s(gen, memory, measured=measured)
    H = 300
    cv = Canvas(W, H, title=f"{direction.upper()} copy from {memory} memory over PCIe Gen{gen}")
    # the host: city hall with its depot
    hx, hy, hw, hh = 10, 28, W * 0.58, 170
    cv.rect(hx, hy, hw, hh, fill="#fbfbf8", stroke="#bbb", rx=10)
    cv.text(hx + 10, hy - 12, "the host: city hall and its depot", size=12, anchor="start",
            weight="bold")
    _box(cv, hx + 12, hy + 12, hw - 24, 40, "cpu", ["city hall", "CPU (runs memcpy)"],
         "ic-cpu", "city hall · CPU")
    dep_y = hy + 66
    cv.text(hx + 14, dep_y + 6, "depot · host memory (DRAM)", size=11, anchor="start",
            italic=True, fill="#555")
    pw = (hw - 36) / 2
    pg = (hx + 12, dep_y + 16, pw, 74)
    st = (hx + 24 + pw, dep_y + 16, pw, 74)
    fill = _place("host-memory")[0]
    if memory == "pageable":
        cv.rect(*pg, fill=fill, stroke="#7570b3", rx=5, cls="ic-pageable",
                title="pageable pages: the OS may move or swap them")
        cv.text(pg[0] + pw / 2, pg[1] + 20, "your array", size=11, weight="bold")
        cv.text(pg[0] + pw / 2, pg[1] + 36, "pageable pages", size=11)
        cv.text(pg[0] + pw / 2, pg[1] + 52, "(the OS may move them)", size=11, fill="#555")
        cv.rect(*st, fill="#e4dcf3", stroke="#4b3f8f", width=2, rx=5, cls="ic-staging",
                title="the driver's small page-locked staging buffer")
        cv.text(st[0] + pw / 2, st[1] + 20, "locked staging", size=11, weight="bold")
        cv.text(st[0] + pw / 2, st[1] + 36, "buffer (pinned,", size=11)
        cv.text(st[0] + pw / 2, st[1] + 52, "the driver's)", size=11, fill="#555")
        src = st
    else:
        cv.rect(pg[0], pg[1], hw - 24, 74, fill="#e4dcf3", stroke="#4b3f8f", width=2, rx=5,
                cls="ic-pinned", title="pinned (page-locked) pages: the DMA engine may read them")
        cv.text(hx + hw / 2, pg[1] + 22, "your array, pinned (page-locked)", size=11,
                weight="bold")
        cv.text(hx + hw / 2, pg[1] + 40, "cudaHostAlloc / pin_memory()", size=11)
        cv.text(hx + hw / 2, pg[1] + 56, "the DMA engine reads it directly", size=11,
                fill="#555")
        src = (pg[0], pg[1], hw - 24, 74)
    # the GPU
    gx, gy, gw, gh = W - 10 - W * 0.3, 60, W * 0.3, 120
    gw = min(gw, W - 40 - hx - hw)
    gx = W - 10 - gw
    gpu_glyph(cv, gx, gy, gw, gh, gpu_name, lines=["copy engine (DMA)"],
              warehouse=["warehouse", "HBM"], title=f"factory · {gpu_name}")
    road_y = hy + hh + 26
    cv.path(f"M{src[0] + src[2] / 2:.1f},{src[1] + src[3]:.1f} "
            f"L{src[0] + src[2] / 2:.1f},{road_y:.1f} L{gx + gw / 2:.1f},{road_y:.1f} "
            f"L{gx + gw / 2:.1f},{gy + gh:.1f}", kind="pcie", width=5, cls="ic-pcie",
            title=f"arterial road · PCIe Gen{gen} x16")
    cv.text((src[0] + gx + gw) / 2 + 30, road_y + 14,
            f"arterial road · PCIe Gen{gen} x16", size=11, fill="#8a4a12")
    legs = []
    dma_pts = [(src[0] + src[2] * 0.65, src[1] + src[3]), (src[0] + src[2] * 0.65, road_y - 8),
               (gx + gw * 0.35, road_y - 8), (gx + gw * 0.35, gy + gh)]
    dma_bw = pinned_bw
    if memory == "pageable":
        cpu_y = hy + 12 + 40
        cpu_pts = [(pg[0] + pw / 2, pg[1]), (pg[0] + pw / 2, cpu_y),
                   (st[0] + pw / 2, cpu_y), (st[0] + pw / 2, st[1])]
        legs.append((cpu_pts, "memory", "the CPU copies the pages into the staging buffer "
                                        "(memcpy, chunk by chunk)", None))
    legs.append((dma_pts, "pcie", f"DMA over PCIe Gen{gen} x16 to the GPU", dma_bw))
    if direction == "d2h":
        legs = [(pts[::-1], k, t.replace("to the GPU", "from the GPU")
                 .replace("copies the pages into the staging buffer",
                          "copies the staging buffer out to the pages"), b)
                for pts, k, t, b in legs[::-1]]
    with cv.group(cls="ic-route", data_route=f"{direction}-{memory}"):
        _draw_legs(cv, [(pts, kind, text) for pts, kind, text, _ in legs])
    lines = []
    for i, (_, _, text, b) in enumerate(legs):
        lines.append(f"{_NUMS[i]} {text}" + (f": {_per_dir(b)}" if b else ""))
    # the DMA efficiency was measured on Gen5 hosts (H100, H200); other
    # generations get that share of their link rate, which nobody measured here
    ref_gen = hardware.gpu("H200").pcie_gen
    kind = ("link rate" if not measured else "measured" if gen == ref_gen else
            f"the link rate × {hardware.calibration('pcie_dma_efficiency'):.2f}, the share "
            f"measured on Gen{ref_gen}")
    if memory == "pageable":
        # the staging cost depends on the size (the course's H200 run)
        r = {s: hardware.pageable_over_pinned(s, direction) for s in (2**20, 2**30)}
        lines.append("two copies share the time; how much it costs depends on the size "
                     "(H200 run): nothing up to 16 KiB, "
                     + ", ".join(f"{v:.2g} × pinned at {format_size(s)}"
                                 for s, v in r.items()))
    else:
        lines.append(f"one copy: {_per_dir(bw)} ({kind})")
    if n_bytes is not None:
        n = check_nonnegative(n_bytes, "n_bytes")
        t = analytic.host_copy_time_s(n, gen, memory, direction=direction, measured=measured,
                                      latency_s=latency_s)
        lines.append(f"{format_size(n)}: {format_time(t)} (start-up + size / "
                     f"{format_bandwidth(pinned_bw)}"
                     + (" + the CPU's staging copy)" if memory == "pageable" else ")"))
    wrapped = []                           # (text, bold): the last line of a pageable copy is bold
    for j, line in enumerate(lines):
        bold = j == len(lines) - 1 and memory == "pageable"
        wrapped += [(part, bold) for part in _wrap(line, W - 20, 12 if bold else 11, sep=" ")]
    for j, (line, bold) in enumerate(wrapped):   # every piece of the bold line bold (it was
        cv.text(10, road_y + 36 + 16 * j, line, size=11, anchor="start",   # wrapped wider)
                cls="ic-caption", weight="bold" if bold else None)
    # the drawing ends below the lowest word drawn (its box, not a baseline guessed)
    cv.height = max(H, max(box[3] for box in cv.text_boxes) + 6)
    return cv.diagram()


#: End points of chapter 5's explorer and how each is drawn: (path, memory).
ENDPOINT_PATHS = {
    "rdma_small_one_way": ("rdma", "host"),
    "gpudirect_rdma_one_way": ("rdma", "gpu"),
    "roce_small_one_way": ("rdma", "host"),
    "tcp_kernel_path": ("tcp", "host"),
}


def network_path(kind: str = "rdma", *, nic: str = "NDR", memory: str = "host",
                 distance_m: float = 100.0, n_bytes: float | None = None,
                 endpoint: str | None = None, width: float = 620) -> Diagram:
    """Close-up of two cities joined by the rail: the kernel (TCP) path or RDMA's bypass.

    Parameters
    ----------
    kind : {"tcp", "rdma"}
        ``"tcp"``: the program's data goes through city hall's kernel (a
        system call, a copy into a socket buffer, the TCP/IP stack) at both
        ends.  ``"rdma"``: the NIC reads and writes the registered memory
        itself (kernel bypass).
    nic : str
        Catalog NIC (port rate, network family).
    memory : {"host", "gpu"}
        Where RDMA reads and writes: host memory, or GPU memory (GPUDirect RDMA;
        the NIC then reads it over the GPU's PCIe link, so the rate is the
        smaller of the port and that link, as in
        :func:`course_lib.route_parameters`).
    distance_m : float
        Fibre length between the cities, metres.
    n_bytes : float, optional
        Also give the model's one-way time for this many bytes.
    endpoint : str, optional
        The catalog latency of the end points (a key of
        ``hardware.LATENCIES``, e.g. ``"roce_small_one_way"``); by default the
        one that matches ``kind``, ``memory`` and the NIC's family.
    width : float
        Drawing width, px.

    Examples
    --------
    >>> d = network_path("tcp")
    >>> d.svg.count('class="ic-route-leg"'), "kernel" in d.svg
    (5, True)
    >>> network_path("udp")
    Traceback (most recent call last):
    ...
    ValueError: kind must be one of ['tcp', 'rdma']; got 'udp'
    """
    kind = check_choice(kind, "kind", ("tcp", "rdma"))
    memory = check_choice(memory, "memory", ("host", "gpu"))
    if kind == "tcp" and memory == "gpu":
        raise ValueError("memory='gpu' needs kind='rdma' (TCP goes through host memory)")
    port = hardware.nic(nic)
    d = check_nonnegative(distance_m, "distance_m")
    W = check_positive(width, "width")
    if not 480 <= W <= 1000:
        raise ValueError(f"width must lie in [480, 1000] px, got {width!r}")
    key = {"tcp": "tcp_kernel_path", "rdma": "gpudirect_rdma_one_way" if memory == "gpu"
           else ("roce_small_one_way" if port.family.startswith("RoCE")
                 else "rdma_small_one_way")}[kind]
    if endpoint is not None:
        key = check_choice(endpoint, "endpoint", tuple(hardware.LATENCIES))
    lat = hardware.latency_s(key)
    one_way = analytic.fibre_one_way_s(d)
    bw = port.bw_per_dir_bytes_per_s
    if memory == "gpu":     # GPU memory is read over the GPU's PCIe link
        bw = analytic.route_parameters("rdma", nic=port.name)["bw_bytes_per_s"]
    H = 330
    rail = f"{port.family} {port.name}" if kind == "rdma" else _tcp_link(port)
    cv = Canvas(W, H, title=f"{'TCP through the kernel' if kind == 'tcp' else 'RDMA'}: "
                            f"two cities, {rail}")
    cw = (W - 20 - 90) / 2
    cities = []
    for j, x0 in enumerate((10, 10 + cw + 90)):
        y0 = 20
        cv.rect(x0, y0, cw, 232, fill="#fbfbf8", stroke="#bbb", rx=10, cls="ic-city")
        cv.text(x0 + 10, y0 + 12, f"city {j + 1}", size=12, anchor="start", weight="bold")
        app = (x0 + 10, y0 + 26, cw - 20, 34)
        cv.rect(*app, fill="white", stroke="#888", rx=5, cls="ic-app",
                title="the program (user space)")
        cv.text(app[0] + app[2] / 2, app[1] + 17, "program (user space)", size=11)
        kern = (x0 + 10, y0 + 70, cw - 20, 52)
        _box(cv, *kern, "cpu", ["city hall's kernel", "socket buffer, TCP/IP stack"],
             "ic-kernel", "city hall · operating-system kernel")
        mem = (x0 + 10, y0 + 132, (cw - 56) / 2, 44)
        _box(cv, *mem, "host-memory", ["depot", "host memory"], "ic-host-memory",
             "city hall's depot · host memory")
        gpu = (x0 + 46 + (cw - 56) / 2, y0 + 132, (cw - 56) / 2, 44)
        gpu_glyph(cv, *gpu, "GPU · HBM", title="factory · GPU and its warehouse (HBM)")
        nic_w = max(100.0, _tw(f"NIC ({port.name})", 12) + 16)   # the port's name fits
        nic_box = (x0 + cw / 2 - nic_w / 2, y0 + 192, nic_w, 30)
        _box(cv, *nic_box, "nic", ["rail station", f"NIC ({port.name})"], "ic-nic",
             f"rail station · NIC ({port.family} {port.name})")
        cities.append({"app": app, "kern": kern, "mem": mem, "gpu": gpu, "nic": nic_box})
    # the rail between them
    a, b = cities[0]["nic"], cities[1]["nic"]
    ry = a[1] + a[3] / 2
    cv.line(a[0] + a[2], ry, b[0], ry, kind="network", width=5, cls="ic-network",
            title=f"high-speed rail · {rail}")
    cv.text(W / 2, ry + 24, f"fibre, {format_distance(d)}", size=11, fill="#2b5d8a")
    legs = []
    A, B = cities
    if kind == "tcp":
        legs.append(([_c(A["app"], 0.3, 1), _c(A["kern"], 0.3, 0)], "kernel",
                     "system call: the kernel copies the data into a socket buffer"))
        legs.append(([_c(A["kern"], 0.5, 1), _c(A["nic"], 0.5, 0)], "pcie",
                     "the NIC reads the socket buffer over PCIe"))
        legs.append(([_c(A["nic"], 1, 0.5), _c(B["nic"], 0, 0.5)], "network",
                     f"{rail} rail"))
        legs.append(([_c(B["nic"], 0.5, 0), _c(B["kern"], 0.5, 1)], "pcie",
                     "the NIC writes into kernel buffers; an interrupt wakes the kernel"))
        legs.append(([_c(B["kern"], 0.3, 0), _c(B["app"], 0.3, 1)], "kernel",
                     "the kernel copies the data out to the program"))
    else:
        src = A["gpu"] if memory == "gpu" else A["mem"]
        dst = B["gpu"] if memory == "gpu" else B["mem"]
        what = "GPU memory (GPUDirect RDMA)" if memory == "gpu" else "registered host memory"
        legs.append(([_c(src, 0.5, 1), (_c(src, 0.5, 1)[0], A["nic"][1] - 8),
                      _c(A["nic"], 0.25 if memory == "host" else 0.75, 0)], "pcie",
                     f"the NIC reads {what} itself (DMA over PCIe), no kernel"))
        legs.append(([_c(A["nic"], 1, 0.5), _c(B["nic"], 0, 0.5)], "network",
                     f"{rail} rail"))
        legs.append(([_c(B["nic"], 0.25 if memory == "host" else 0.75, 0),
                      (_c(dst, 0.5, 1)[0], B["nic"][1] - 8), _c(dst, 0.5, 1)], "pcie",
                     "the remote NIC writes it straight into memory"))
        for C in cities:
            x, y, w, h = C["kern"]
            cv.line(x + 6, y + 6, x + w - 6, y + h - 6, stroke="#999", width=1.5,
                    cls="ic-bypassed")
            cv.line(x + 6, y + h - 6, x + w - 6, y + 6, stroke="#999", width=1.5,
                    cls="ic-bypassed")
    with cv.group(cls="ic-route", data_route=kind):
        _draw_legs(cv, legs)
    lines = [f"{_NUMS[i]} {t}" for i, (_, _, t) in enumerate(legs)]
    lines.append(f"arrival, all one way: end points {format_time(lat)} (catalog {key}) + "
                 f"fibre {format_time(one_way)} + size / {format_bandwidth(bw)} per direction"
                 + (f" (the GPU's PCIe link caps the {format_bandwidth(port.bw_per_dir_bytes_per_s)}"
                    " port)" if bw < port.bw_per_dir_bytes_per_s else ""))
    if n_bytes is not None:
        n = check_nonnegative(n_bytes, "n_bytes")
        t = analytic.rdma_transfer_time_s(n, bw, d, endpoint_latency_s=lat)
        lines.append(f"{format_size(n)} over {format_distance(d)}: {format_time(t)}")
    wrapped = []
    for line in lines:
        wrapped += _wrap(line, W - 20, 11, sep=" ")
    cv.height = 262 + 15 * len(wrapped) + 6
    for j, line in enumerate(wrapped):
        cv.text(10, 266 + 15 * j, line, size=11, anchor="start", cls="ic-caption")
    return cv.diagram()
