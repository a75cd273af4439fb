"""Chapter 3 explorer: PCIe against NVLink, and the size where they cross.

Three routes between two GPUs: peer-to-peer over ``k`` NVLink links,
peer-to-peer over PCIe (one DMA through a PCIe switch), and staging through
host memory over PCIe (two copies in series, store and forward).  Each takes
``T = alpha + legs x D / B`` (:func:`course_lib.route_transfer_time_s`);
two take equal time at :func:`course_lib.route_crossover_bytes`.  With all
of an H100's links NVLink wins at every size; with one link, big messages
go faster over PCIe.  The readout compares *delivered* bandwidths: the
staged route crosses the PCIe link twice, so it delivers B/2.

>>> d = explorer().update(gpu="H100", nvlink_links=1)
>>> 1e6 < d["crossover_bytes"] < 2e6
True
"""

from __future__ import annotations

import math

import numpy as np

from .. import analytic, draw, hardware
from ..units import format_bandwidth, format_bytes, format_time
from ..widgets import Explorer
from ._common import COLOURS, loglog_axes, node_cluster

SIZES_BYTES = np.logspace(6, 34, 29, base=2)     # the size slider's own range, 64 B to 16 GiB


def _gpu_links(gpu: str) -> int:
    """The chosen GPU's NVLink links (the catalog's): the links slider's top."""
    return hardware.gpu(gpu).nvlink_links


CONTROLS = {
    "gpu": {"type": "Dropdown", "options": hardware.gpu_names(), "value": "H100"},
    "n_bytes": {"type": "FloatLogSlider", "base": 2, "min": 6, "max": 34, "step": 1,
                "value": 2.0 ** 23, "description": "message size", "unit": "bytes"},
    "nvlink_links": {"type": "IntSlider", "min": 1, "max": 18, "value": 18,
                     "description": "NVLink links",
                     "max_from": ("gpu", _gpu_links)},
}


def compute(gpu, nvlink_links, n_bytes):
    g = hardware.gpu(gpu)
    asked, nvlink_links = nvlink_links, min(nvlink_links, g.nvlink_links)
    nv = analytic.route_parameters("p2p-nvlink", gpu=gpu, nvlink_links=nvlink_links)
    pc = analytic.route_parameters("p2p-staged", gpu=gpu)
    pp = analytic.route_parameters("p2p-pcie", gpu=gpu)
    curves = {}
    for name, p in (("p2p-nvlink", nv), ("p2p-pcie", pp), ("p2p-staged", pc)):
        curves[name] = np.array([analytic.staged_transfer_time_s(
            d, p["bw_bytes_per_s"], p["latency_s"], legs=p["legs"]) for d in SIZES_BYTES])
    t_nv = analytic.route_transfer_time_s(n_bytes, "p2p-nvlink", gpu=gpu,
                                          nvlink_links=nvlink_links)
    t_pc = analytic.route_transfer_time_s(n_bytes, "p2p-staged", gpu=gpu)
    t_pp = analytic.route_transfer_time_s(n_bytes, "p2p-pcie", gpu=gpu)
    return {"gpu": g.name, "nvlink": nv, "pcie": pc, "pcie_p2p": pp,
            "sizes_bytes": SIZES_BYTES,
            "times_s": curves, "n_bytes": n_bytes, "t_nvlink_s": t_nv,
            "t_pcie_s": t_pc, "t_pcie_p2p_s": t_pp,
            "crossover_bytes": analytic.route_crossover_bytes(nv, pc),
            "crossover_p2p_bytes": analytic.route_crossover_bytes(nv, pp),
            # delivered bandwidths: the staged route uses its PCIe link twice
            "staged_bw_bytes_per_s": pc["bw_bytes_per_s"] / pc["legs"],
            "bw_ratio": nv["bw_bytes_per_s"] / (pc["bw_bytes_per_s"] / pc["legs"]),
            "half_bw_nvlink_bytes": analytic.half_bandwidth_bytes(
                nv["latency_s"], nv["bw_bytes_per_s"]),
            "nvlink_links": nvlink_links, "cluster": node_cluster(g.name),
            "note": (f"The {g.name} has {g.nvlink_links} NVLink links; using "
                     f"{nvlink_links}, not {asked}. " if asked > nvlink_links else "")}


def _title(data):
    return f"{data['gpu']}: NVLink against PCIe peer-to-peer and PCIe through the host"


def plot(data, fig):
    ax = loglog_axes(fig)
    curves = {}
    for name, p in (("p2p-nvlink", data["nvlink"]), ("p2p-pcie", data["pcie_p2p"]),
                    ("p2p-staged", data["pcie"])):
        curves[name], = ax.plot(data["sizes_bytes"], data["times_s"][name],
                                color=COLOURS[name], lw=2.2, label=p["label"])
    x = data["crossover_bytes"]
    cross = None
    if math.isfinite(x):
        line = ax.axvline(x, color="black", ls="--", lw=1.2)
        text = ax.text(x, ax.get_ylim()[0] * 3, f" crossover\n {format_bytes(x)}",
                       fontsize=8)
        cross = (line, text)
    size_line = ax.axvline(data["n_bytes"], color="grey", ls=":", lw=1)
    points, = ax.plot([data["n_bytes"]] * 3, [data["t_nvlink_s"], data["t_pcie_p2p_s"], data["t_pcie_s"]],
                      "ko", ms=4)
    legend = ax.legend(fontsize=8, loc="upper left")
    ax.set_title(_title(data), fontsize=10, y=1.0)
    by_label = {t.get_text(): t for t in legend.get_texts()}
    return {"ax": ax, "curves": curves, "cross": cross, "size_line": size_line,
            "points": points,
            "legend_texts": {name: by_label[line.get_label()]
                             for name, line in curves.items()}}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`);
    a full redraw when the crossover appears or disappears."""
    x = data["crossover_bytes"]
    if math.isfinite(x) != (artists["cross"] is not None):
        return False
    ax = artists["ax"]
    for name, p in (("p2p-nvlink", data["nvlink"]), ("p2p-pcie", data["pcie_p2p"]),
                    ("p2p-staged", data["pcie"])):
        line = artists["curves"][name]
        line.set_data(data["sizes_bytes"], data["times_s"][name])
        line.set_label(p["label"])
        artists["legend_texts"][name].set_text(p["label"])
    n = data["n_bytes"]
    artists["size_line"].set_xdata([n, n])
    artists["points"].set_data([n, n, n], [data["t_nvlink_s"], data["t_pcie_p2p_s"], data["t_pcie_s"]])
    if artists["cross"] is not None:
        line, text = artists["cross"]
        line.set_xdata([x, x])
    ax.relim()
    ax.autoscale_view()
    if artists["cross"] is not None:
        text.set_position((x, ax.get_ylim()[0] * 3))
        text.set_text(f" crossover\n {format_bytes(x)}")
    ax.set_title(_title(data), fontsize=10, y=1.0)


def _verdict(x, other):
    if not math.isfinite(x):
        return f"NVLink beats {other} at every size"
    return (f"NVLink beats {other} below <b>{format_bytes(x)}</b> (smaller start-up), "
            f"{other} wins above it (it delivers more bandwidth)")


def readout(data):
    times = {"NVLink": data["t_nvlink_s"], "PCIe peer-to-peer": data["t_pcie_p2p_s"],
             "PCIe staged": data["t_pcie_s"]}
    faster = min(times, key=times.get)
    return (f"{data['note']}Delivered per direction: NVLink "
            f"{format_bandwidth(data['nvlink']['bw_bytes_per_s'])}, PCIe peer-to-peer "
            f"{format_bandwidth(data['pcie_p2p']['bw_bytes_per_s'])}, PCIe staged "
            f"{format_bandwidth(data['staged_bw_bytes_per_s'])} (the link "
            f"{format_bandwidth(data['pcie']['bw_bytes_per_s'])} crossed twice). "
            f"{_verdict(data['crossover_p2p_bytes'], 'PCIe peer-to-peer')}; "
            f"{_verdict(data['crossover_bytes'], 'staging')}. At "
            f"{format_bytes(data['n_bytes'], binary=True)}: NVLink {format_time(data['t_nvlink_s'])}, "
            f"PCIe P2P {format_time(data['t_pcie_p2p_s'])}, staged "
            f"{format_time(data['t_pcie_s'])} -- {faster} is fastest.")


#: The three ways between two GPUs the drawing compares.
DIAGRAM_ROUTES = ("p2p-nvlink", "p2p-pcie", "p2p-staged")


def diagram(data):
    """NVLink peer-to-peer, PCIe peer-to-peer and staging through host memory,
    on the chosen GPU's node."""
    return draw.city_map(data["cluster"], route=DIAGRAM_ROUTES, n_bytes=data["n_bytes"],
                         nvlink_links=data["nvlink_links"],
                         pair=(0, min(3, data["cluster"].gpus_per_node - 1)), width=720)


def explorer() -> Explorer:
    """The PCIe/NVLink crossover explorer of chapter 3."""
    return Explorer("Arterial road or maglev? The crossover size", CONTROLS, compute,
                    plot, readout, figsize=(7.2, 3.6), replot=replot, diagram=diagram)
