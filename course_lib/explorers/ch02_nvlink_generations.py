"""Chapter 2 explorer: NVLink generations, built from lanes x rate x links x duplex.

For each generation the catalog gives lanes per link per direction, the
lane rate and the links per GPU; the bandwidth is
:func:`course_lib.nvlink_bw_bytes_per_s` ``= lanes x rate / 8 x links``
(x 2 when both directions are added).  The chosen GPU's PCIe x16 link is
drawn for comparison (:func:`course_lib.pcie_bw_per_dir_bytes_per_s`).

>>> d = explorer().update(gpu="H100", links_used=18)
>>> d["selected_bw_bytes_per_s"] / 1e9
450.0
"""

from __future__ import annotations

import numpy as np

from .. import analytic, draw, hardware
from ..units import format_bandwidth
from ..widgets import Explorer
from ._common import bw_formatter, fast_layout, node_cluster


def _gpu_links(gpu: str) -> int:
    """The chosen GPU's NVLink links (the catalog's): the links slider's top."""
    return hardware.gpu(gpu).nvlink_links


CONTROLS = {
    "gpu": {"type": "Dropdown", "options": hardware.gpu_names(), "value": "H100"},
    "links_used": {"type": "IntSlider", "min": 1, "max": 18, "value": 9,
                   "description": "links used",
                   "max_from": ("gpu", _gpu_links)},
    "both_directions": {"type": "Checkbox", "value": False,
                        "description": "add both directions (marketing figure)"},
}


def compute(gpu, links_used, both_directions):
    """Every generation's total, and the chosen GPU with ``links_used`` links."""
    gens = []
    for g, rec in hardware.NVLINK_GENERATIONS.items():
        gens.append({
            "generation": g, "gpu": rec.gpu, "links": rec.links,
            "lanes": rec.lanes_per_link_per_dir, "rate_gbit_per_s": rec.lane_rate_gbit_per_s,
            "per_dir_bytes_per_s": analytic.nvlink_bw_bytes_per_s(
                rec.lanes_per_link_per_dir, rec.lane_rate_gbit_per_s, rec.links),
            "bidir_bytes_per_s": analytic.nvlink_bw_bytes_per_s(
                rec.lanes_per_link_per_dir, rec.lane_rate_gbit_per_s, rec.links,
                bidirectional=True),
        })
    g = hardware.gpu(gpu)
    rec = g.nvlink
    used = min(links_used, g.nvlink_links)
    sel = analytic.nvlink_bw_bytes_per_s(rec.lanes_per_link_per_dir,
                                         rec.lane_rate_gbit_per_s, used,
                                         bidirectional=both_directions)
    per_link = analytic.nvlink_bw_bytes_per_s(rec.lanes_per_link_per_dir,
                                              rec.lane_rate_gbit_per_s, 1)
    pcie_dir = hardware.pcie_bw_per_dir_bytes_per_s(g.pcie_gen)
    pcie_sel = pcie_dir * (2 if both_directions else 1)
    return {"generations": gens, "gpu": g.name, "generation": g.nvlink_gen,
            "links_used": used, "links_available": g.nvlink_links,
            "lanes": rec.lanes_per_link_per_dir, "rate_gbit_per_s": rec.lane_rate_gbit_per_s,
            "per_link_per_dir_bytes_per_s": per_link,
            "selected_bw_bytes_per_s": sel, "both_directions": both_directions,
            "pcie_gen": g.pcie_gen, "pcie_bytes_per_s": pcie_sel,
            "ratio_to_pcie": sel / pcie_sel, "cluster": node_cluster(g.name)}


def _bar_values(data):
    """Heights and colours of the generation bars, and the two legend labels."""
    gens = data["generations"]
    key = "bidir_bytes_per_s" if data["both_directions"] else "per_dir_bytes_per_s"
    colours = ["#1b9e77" if g["generation"] == data["generation"] else "#b3dfd3"
               for g in gens]
    labels = (f"{data['gpu']} with {data['links_used']} link(s)",
              f"{data['gpu']}'s PCIe Gen{data['pcie_gen']} x16")
    return [g[key] for g in gens], colours, labels


def _texts(data):
    ylabel = "both directions added" if data["both_directions"] else "per direction"
    title = ("NVLink per GPU: lanes x rate x links" +
             (" x 2 directions" if data["both_directions"] else ""))
    return ylabel, title


def plot(data, fig):
    fast_layout(fig, left=0.14, bottom=0.2)
    ax = fig.add_subplot(1, 1, 1)
    gens = data["generations"]
    x = np.arange(len(gens))
    heights, colours, labels = _bar_values(data)
    bars = ax.bar(x, heights, color=colours, width=0.6)
    sel = ax.bar([data["generation"] - 1], [data["selected_bw_bytes_per_s"]], width=0.3,
                 color="#0b4f3c", label=labels[0])
    pcie = ax.axhline(data["pcie_bytes_per_s"], color="#d95f02", ls="--", lw=1.5,
                      label=labels[1])
    ax.set_xticks(x, [f"NVLink {g['generation']}\n{g['gpu']}, {g['links']} links"
                      for g in gens], fontsize=8)
    ax.yaxis.set_major_formatter(bw_formatter())
    ylabel, title = _texts(data)
    ax.set_ylabel(ylabel)
    legend = ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title, fontsize=10, y=1.0)
    by_label = {t.get_text(): t for t in legend.get_texts()}
    return {"ax": ax, "bars": bars, "selected": sel, "pcie": pcie,
            "legend_texts": [by_label[label] for label in labels]}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`)."""
    ax = artists["ax"]
    heights, colours, labels = _bar_values(data)
    for bar, h, c in zip(artists["bars"], heights, colours):
        bar.set_height(h)
        bar.set_facecolor(c)
    sel = artists["selected"]
    sel[0].set_x(data["generation"] - 1 - sel[0].get_width() / 2)
    sel[0].set_height(data["selected_bw_bytes_per_s"])
    artists["pcie"].set_ydata([data["pcie_bytes_per_s"]] * 2)
    for artist, text, label in zip((sel, artists["pcie"]), artists["legend_texts"], labels):
        artist.set_label(label)
        text.set_text(label)
    ylabel, title = _texts(data)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10, y=1.0)
    ax.relim()
    ax.autoscale_view()


def readout(data):
    way = "both directions added" if data["both_directions"] else "per direction"
    return (f"<b>{data['gpu']}</b> (NVLink {data['generation']}): {data['lanes']} lanes x "
            f"{data['rate_gbit_per_s']:g} Gb/s / 8 = "
            f"{format_bandwidth(data['per_link_per_dir_bytes_per_s'])} per link per "
            f"direction; x {data['links_used']} of {data['links_available']} links = "
            f"<b>{format_bandwidth(data['selected_bw_bytes_per_s'])}</b> ({way}), "
            f"{data['ratio_to_pcie']:.1f}x its PCIe Gen{data['pcie_gen']} x16 "
            f"({format_bandwidth(data['pcie_bytes_per_s'])}, same convention).")


def explorer() -> Explorer:
    """The NVLink generation explorer of chapter 2."""
    return Explorer("NVLink generations: lanes x rate x links x duplex", CONTROLS,
                    compute, plot, readout, figsize=(7.2, 3.6), replot=replot,
                    diagram=diagram)


def diagram(data):
    """The chosen GPU's node and the maglev between two of its factories,
    carrying the links in use."""
    return draw.city_map(data["cluster"], route="p2p-nvlink",
                         nvlink_links=data["links_used"], width=720)
