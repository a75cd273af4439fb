"""Chapter 1 explorer: the transport map -- pick a route, see time against size.

Routes (``course_lib.analytic.ROUTES``): host -> GPU and GPU -> host over
PCIe, GPU -> host -> GPU staged over PCIe, GPU -> GPU peer-to-peer over PCIe,
GPU -> GPU over NVLink, and GPU -> GPU in another server by RDMA.  Every curve
is ``T = alpha + legs x D / B`` with the route's catalog numbers
(:func:`course_lib.route_parameters`); a host copy from pageable memory adds
the driver's staging copy, measured size by size
(:func:`course_lib.hardware.pageable_extra_time_s`), and the readout says so.

>>> data = explorer().update(route="p2p-nvlink", n_bytes=1e9)
>>> bool(data["time_s"] < data["times_s"]["h2d"][-1])
True
"""

from __future__ import annotations

import numpy as np

from .. import analytic, draw, hardware
from ..units import format_bandwidth, format_bytes, format_time
from ..widgets import Explorer
from ._common import COLOURS, loglog_axes, node_cluster

ROUTE_LABELS = [
    ("H2D: host -> GPU (PCIe)", "h2d"),
    ("D2H: GPU -> host (PCIe)", "d2h"),
    ("GPU -> GPU staged through host (PCIe)", "p2p-staged"),
    ("GPU -> GPU peer-to-peer (PCIe)", "p2p-pcie"),
    ("GPU -> GPU peer-to-peer (NVLink)", "p2p-nvlink"),
    ("GPU -> GPU in another server (RDMA)", "rdma"),
]
SHORT = {"h2d": "H2D", "d2h": "D2H", "p2p-staged": "GPU-host-GPU (PCIe)",
         "p2p-pcie": "GPU-GPU (PCIe P2P)",
         "p2p-nvlink": "GPU-GPU (NVLink)", "rdma": "RDMA (other server)"}
SIZES_BYTES = np.logspace(0, 34, 35, base=2)     # the size slider's own range, 1 B to 16 GiB

CONTROLS = {
    "route": {"type": "Dropdown", "options": ROUTE_LABELS, "value": "p2p-nvlink",
              "description": "route"},
    "n_bytes": {"type": "FloatLogSlider", "base": 2, "min": 0, "max": 34, "step": 1,
                "value": 2.0 ** 20, "description": "message size", "unit": "bytes"},
    "gpu": {"type": "Dropdown", "options": hardware.gpu_names(), "value": "H100"},
    "nic": {"type": "Dropdown", "options": hardware.nic_names(), "value": "NDR",
            "description": "NIC (RDMA)"},
    "distance_m": {"type": "FloatLogSlider", "min": 0, "max": 5, "value": 10.0,
                   "values": [m * 10.0 ** e for e in range(5) for m in (1, 2, 5)] + [1e5],
                   "description": "cable (RDMA)", "unit": "m"},
    "memory": {"type": "ToggleButtons", "options": list(analytic.HOST_MEMORY),
               "value": "pinned", "description": "host memory"},
}


def compute(route, n_bytes, gpu, nic, distance_m, memory):
    """Times of every route over a range of sizes, and the chosen point."""
    kw = dict(gpu=gpu, nic=nic, distance_m=distance_m, memory=memory)
    params = {r: analytic.route_parameters(r, **kw) for r in analytic.ROUTES}
    times = {r: np.array([analytic.route_transfer_time_s(d, r, **kw)
                          for d in SIZES_BYTES]) for r in params}
    t = analytic.route_transfer_time_s(n_bytes, route, **kw)
    pageable = route in ("h2d", "d2h") and memory == "pageable"
    return {"pageable_extra_s": hardware.pageable_extra_time_s(n_bytes, route)
            if pageable else 0.0,
            "pinned_bw_bytes_per_s": analytic.host_copy_bw_bytes_per_s(
                hardware.gpu(gpu).pcie_gen),
            "route": route, "gpu": gpu, "n_bytes": n_bytes, "sizes_bytes": SIZES_BYTES,
            "times_s": times, "params": params, "time_s": t,
            "cluster": node_cluster(gpu, nodes=2, nic=nic), "memory": memory,
            "distance_m": distance_m,
            "effective_bw_bytes_per_s": analytic.algbw_bytes_per_s(n_bytes, t)
            if n_bytes > 0 else 0.0}


def plot(data, fig):
    ax = loglog_axes(fig)
    curves = {}
    for r, times in data["times_s"].items():
        chosen = r == data["route"]
        curves[r], = ax.plot(data["sizes_bytes"], times, color=COLOURS[r],
                             lw=3 if chosen else 1.2, alpha=1 if chosen else 0.55,
                             label=SHORT[r])
    point, = ax.plot([data["n_bytes"]], [data["time_s"]], "o", ms=9, mfc="none",
                     mec="black", mew=2)
    size_line = ax.axvline(data["n_bytes"], color="grey", ls=":", lw=1)
    legend = ax.legend(fontsize=7, loc="upper left")
    return {"ax": ax, "curves": curves, "point": point, "size_line": size_line,
            "legend": legend}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`):
    the same routes, new times; the legend is redrawn only if the routes changed."""
    if set(artists["curves"]) != set(data["times_s"]):
        return False
    for r, line in artists["curves"].items():
        chosen = r == data["route"]
        line.set_data(data["sizes_bytes"], data["times_s"][r])
        line.set_linewidth(3 if chosen else 1.2)
        line.set_alpha(1 if chosen else 0.55)
    artists["point"].set_data([data["n_bytes"]], [data["time_s"]])
    artists["size_line"].set_xdata([data["n_bytes"]] * 2)
    for handle, r in zip(artists["legend"].legend_handles, artists["curves"]):
        chosen = r == data["route"]
        handle.set_linewidth(3 if chosen else 1.2)
        handle.set_alpha(1 if chosen else 0.55)
    ax = artists["ax"]
    ax.relim()
    ax.autoscale_view()


def readout(data):
    p = data["params"][data["route"]]
    legs = f" x {p['legs']} legs" if p["legs"] > 1 else ""
    if data["route"] in ("h2d", "d2h") and data["memory"] == "pageable":
        # the model of route_transfer_time_s: the pinned DMA plus the CPU's staging copy
        extra = (f"{format_time(data['pageable_extra_s'])} for the CPU's copy through the "
                 f"driver's staging buffer, measured at this size on an H200"
                 if data["pageable_extra_s"] > 0 else
                 "nothing for the driver's staging: at this size an H200 measured pageable "
                 "copies no slower than pinned ones")
        terms = (f"start-up {format_time(p['latency_s'])} + size / "
                 f"{format_bandwidth(data['pinned_bw_bytes_per_s'])} per direction (the DMA) + "
                 f"{extra}")
    else:
        terms = (f"start-up {format_time(p['latency_s'])} + size / "
                 f"{format_bandwidth(p['bw_bytes_per_s'])} per direction{legs}")
    return (f"<b>{p['label']}</b> ({data['gpu']}): {format_bytes(data['n_bytes'], binary=True)} takes "
            f"<b>{format_time(data['time_s'])}</b> ({terms}); "
            f"delivered {format_bandwidth(data['effective_bw_bytes_per_s'])}.")


def diagram(data):
    """The chosen route on the city map: the second city is drawn in full when the
    route goes there (RDMA), summarised otherwise."""
    return draw.city_map(data["cluster"], route=data["route"], n_bytes=data["n_bytes"],
                         memory=data["memory"], distance_m=data["distance_m"],
                         max_gpus=4, max_nodes=1, width=720)


def explorer() -> Explorer:
    """The transport-map explorer of chapter 1."""
    return Explorer("Transport map: pick a route and a message size", CONTROLS,
                    compute, plot, readout, figsize=(7.2, 3.8), diagram=diagram,
                    replot=replot)
