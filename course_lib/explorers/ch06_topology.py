"""Chapter 6 explorer: the road map -- draw a topology, colour the hops.

Builds a topology with the ``course_lib.topology`` builders and asks it the
chapter's questions: hops from one GPU to every other
(:func:`course_lib.hop_matrix`), average hops, diameter, cables
(:func:`course_lib.link_count`) and bisection bandwidth
(:func:`course_lib.bisection_bw_bytes_per_s`).  The map is drawn once, beside
the plot (:func:`course_lib.draw.topology_map`: the route from the source GPU
to the farthest one, every GPU's hop count, the bisection cut); the plot
counts the GPUs at each distance from the same source GPU.  The source
slider runs over the GPUs the chosen topology has.

>>> d = explorer().update(kind="ring", n_gpus=8, source=0)
>>> d["hops_from_source"].tolist()
[0, 1, 2, 3, 4, 3, 2, 1]
"""

from __future__ import annotations

import math

import numpy as np

from .. import draw, topology
from ..units import format_bandwidth
from ..widgets import Explorer
from ._common import fast_layout

KINDS = [
    ("ring", "ring"),
    ("full mesh", "full-mesh"),
    ("2-D torus", "torus"),
    ("DGX-1 hybrid cube-mesh (8 GPUs)", "cube-mesh"),
    ("NVSwitch hub", "nvswitch"),
    ("two-level cluster (NVSwitch nodes + network)", "two-level"),
]

CONTROLS = {
    "kind": {"type": "Dropdown", "options": KINDS, "value": "ring",
             "description": "topology"},
    "n_gpus": {"type": "IntSlider", "min": 2, "max": 12, "value": 8,
               "description": "GPUs"},
    "source": {"type": "IntSlider", "min": 0, "max": 11, "value": 0,
               "description": "hops from GPU",
               "max_from": (("kind", "n_gpus"), lambda kind, n: gpu_count(kind, n) - 1)},
    "count": {"type": "ToggleButtons", "options": ["links", "gpu-hops"],
              "value": "links", "description": "count"},
}


def _torus_shape(n):
    rows = max((d for d in range(2, int(math.isqrt(n)) + 1) if n % d == 0), default=None)
    if rows is None:
        raise ValueError(f"n_gpus: a 2-D torus needs rows x cols GPUs with both >= 2; "
                         f"{n} does not split (try 4, 6, 8, 9, 10 or 12)")
    return rows, n // rows


def _two_level_shape(n):
    if n % 4 == 0 and n >= 8:
        return n // 4, 4
    if n % 2 == 0:
        return n // 2, 2
    raise ValueError(f"n_gpus: a two-level cluster here has 2 or 4 GPUs a node; "
                     f"{n} is odd (pick an even number)")


def gpu_count(kind, n_gpus):
    """How many GPUs the topology of these settings has (the cube-mesh: always 8)."""
    return 8 if kind == "cube-mesh" else n_gpus


def build(kind, n_gpus):
    """The topology for the explorer's settings, and a note on any adjustment."""
    note = ""
    if kind == "ring":
        topo = topology.ring_topology(n_gpus)
    elif kind == "full-mesh":
        topo = topology.fully_connected_topology(n_gpus)
    elif kind == "torus":
        topo = topology.torus_2d_topology(*_torus_shape(n_gpus))
    elif kind == "cube-mesh":
        topo = topology.hybrid_cube_mesh_topology("V100")
        if n_gpus != 8:
            note = "the DGX-1 cube-mesh always has 8 GPUs. "
    elif kind == "nvswitch":
        topo = topology.nvswitch_topology(n_gpus)
    elif kind == "two-level":
        nodes, per_node = _two_level_shape(n_gpus)
        topo = topology.two_level_topology(nodes, per_node)
    else:
        topo = topology.build_topology(kind)
    return topo, note


def compute(kind, n_gpus, source, count):
    topo, note = build(kind, n_gpus)
    ranks = topology.gpus(topo)
    if source > len(ranks) - 1:
        note += f"GPU {source} does not exist; showing GPU {len(ranks) - 1}. "
        source = len(ranks) - 1
    m = topology.hop_matrix(topo, count)
    exact = 2 if topo.graph.get("nodes", 1) > 1 else 16
    return {"kind": kind, "topo": topo, "name": topo.graph["name"], "source": source,
            "count": count, "ranks": ranks, "hops_from_source": m[source],
            "average_hops": topology.average_hops(topo, count),
            "diameter": topology.diameter(topo, count),
            "links": topology.link_count(topo),
            "physical_links": topology.link_count(topo, physical=True),
            "bisection_bytes_per_s": topology.bisection_bw_bytes_per_s(topo, exact),
            "target": ranks[int(np.argmax(m[source]))], "note": note}


# --- drawing (presentation only) ---------------------------------------------
def plot(data, fig):
    """How far the other GPUs are from the source GPU: how many sit at each hop
    count, with the average and the diameter marked (the map itself is the
    drawing beside the plot, :func:`diagram`: one map, one source GPU)."""
    from matplotlib import colormaps

    fast_layout(fig, left=0.12, right=0.97, bottom=0.14, top=0.88)
    ax = fig.add_subplot(1, 1, 1)
    hops = np.asarray(data["hops_from_source"], dtype=int)
    others = np.delete(hops, data["ranks"].index(data["source"]))
    top = max(1, int(hops.max()))
    levels = np.arange(1, top + 1)
    counts = [int((others == h).sum()) for h in levels]
    cmap = colormaps["viridis_r"]
    ax.bar(levels, counts, color=[cmap(h / top) for h in levels], width=0.7)
    mean = float(others.mean()) if len(others) else 0.0
    ax.axvline(mean, color="black", ls="--", lw=1.2)
    ax.text(mean, max(counts) * 1.02 + 0.05, f" mean {mean:.2f} from GPU {data['source']}",
            fontsize=8, va="bottom")
    ax.set_xticks(levels)
    ax.set_xlim(0.4, top + 0.6)
    ax.set_ylim(0, max(counts) * 1.25 + 0.5)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel(f"hops from GPU {data['source']} ({data['count']})")
    ax.set_ylabel("GPUs")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(f"{data['name']}: {len(others)} other GPUs by distance", fontsize=10, y=1.0)


def readout(data):
    return (f"{data['note']}<b>{data['name']}</b>: average "
            f"{data['average_hops']:.2f} hops, diameter {data['diameter']}, "
            f"{data['links']} cables ({data['physical_links']} physical links), "
            f"bisection {format_bandwidth(data['bisection_bytes_per_s'])} per direction.")


def diagram(data):
    """The road map with the route to the farthest GPU and the bisection cut."""
    return draw.topology_map(data["topo"], highlight_pair=(data["source"], data["target"]),
                             hops_from=data["source"], count=data["count"],
                             bisection=data["bisection_bytes_per_s"])


def explorer() -> Explorer:
    """The topology explorer of chapter 6."""
    return Explorer("The road map: topologies and their hop counts", CONTROLS, compute,
                    plot, readout, figsize=(6.6, 4.0), diagram=diagram)
