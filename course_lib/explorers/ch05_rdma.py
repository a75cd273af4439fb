"""Chapter 5 explorer: the high-speed rail -- distance, rate and the endpoints.

Every term one way: a message arrives after ``alpha + d / (0.7 c) + D / B``
(:func:`course_lib.rdma_transfer_time_s`, :func:`course_lib.fibre_one_way_s`),
with the end points' one-way latency ``alpha`` from the catalog: an RDMA NIC
bypasses the kernel, a TCP socket goes through it.  A sender that waits for
the completion adds the acknowledgement's return (``completion_s``).  The port rate is in bits per second
(:func:`course_lib.nic`); the model divides by 8.  With GPU memory at the end
points (GPUDirect RDMA) the NIC reads and writes it over the GPU's PCIe link,
so the rate is the smaller of the port and that link, as in the route model
(:func:`course_lib.route_parameters`, an H100 on PCIe Gen5 x16): an XDR port's
100 GB/s cannot be filled from an H100.

>>> d = explorer().update(distance_m=1000, n_bytes=1)
>>> round(d["fibre_s"] * 1e6, 2), round(d["rtt_s"] * 1e6, 2)
(4.77, 9.53)
>>> d = explorer().update(nic="XDR", endpoint="gpudirect_rdma_one_way")
>>> round(d["port_bw_bytes_per_s"] / 1e9), round(d["bw_bytes_per_s"] / 1e9)
(100, 63)
"""

from __future__ import annotations

import numpy as np

from .. import analytic, draw, hardware
from ..units import format_bandwidth, format_bytes, format_distance, format_time
from ..widgets import Explorer
from ._common import bytes_formatter, fast_layout, no_minor_ticks, time_formatter

#: End points, host memory to host memory unless said otherwise (catalog).
ENDPOINTS = [
    ("RDMA over InfiniBand, host memory (kernel bypass)", "rdma_small_one_way"),
    ("RDMA over InfiniBand, GPU memory (GPUDirect RDMA)", "gpudirect_rdma_one_way"),
    ("RDMA over Ethernet, RoCE (one cable, no switch)", "roce_small_one_way"),
    ("TCP through the kernel", "tcp_kernel_path"),
]
SIZES_BYTES = np.logspace(0, 34, 35, base=2)     # the size slider's own range, 1 B to 16 GiB
#: The GPU whose PCIe link feeds the NIC for GPUDirect RDMA (the route model's default).
GPU = "H100"

CONTROLS = {
    "distance_m": {"type": "FloatLogSlider", "min": 0, "max": 6, "value": 100.0,
                   "values": [m * 10.0 ** e for e in range(6) for m in (1, 2, 5)] + [1e6],
                   "description": "cable length", "unit": "m"},
    "nic": {"type": "Dropdown", "options": hardware.nic_names(), "value": "NDR",
            "description": "port"},
    "n_bytes": {"type": "FloatLogSlider", "base": 2, "min": 0, "max": 34, "step": 1,
                "value": 2.0 ** 20, "description": "message size", "unit": "bytes"},
    "endpoint": {"type": "Dropdown", "options": ENDPOINTS,
                 "value": "rdma_small_one_way", "description": "end points"},
}


def rate_bytes_per_s(nic, endpoint):
    """Per-direction rate of a message between the two end points: the port's,
    or for GPU memory (GPUDirect RDMA) the smaller of the port and the GPU's PCIe
    link, which the NIC reads the GPU's memory over."""
    if endpoint == "gpudirect_rdma_one_way":
        return analytic.route_parameters("rdma", gpu=GPU, nic=nic)["bw_bytes_per_s"]
    return hardware.nic(nic).bw_per_dir_bytes_per_s


def compute(distance_m, nic, n_bytes, endpoint):
    port = hardware.nic(nic)
    curves = {}
    for _, key in ENDPOINTS:
        lat = hardware.latency_s(key)
        curves[key] = np.array([analytic.rdma_transfer_time_s(
            d, rate_bytes_per_s(nic, key), distance_m, endpoint_latency_s=lat)
            for d in SIZES_BYTES])
    bw = rate_bytes_per_s(nic, endpoint)
    lat = hardware.latency_s(endpoint)
    rtt = analytic.fibre_rtt_s(distance_m)
    fibre = analytic.fibre_one_way_s(distance_m)
    serial = analytic.transfer_time_s(n_bytes, bw)
    total = analytic.rdma_transfer_time_s(n_bytes, bw, distance_m, endpoint_latency_s=lat)
    done = analytic.rdma_transfer_time_s(n_bytes, bw, distance_m, endpoint_latency_s=lat,
                                         completion=True)
    return {"nic": port.name, "family": port.family,
            "rate_gbit_per_s": port.rate_gbit_per_s, "bw_bytes_per_s": bw,
            "port_bw_bytes_per_s": port.bw_per_dir_bytes_per_s,
            "pcie_gen": hardware.gpu(GPU).pcie_gen,
            "distance_m": distance_m, "n_bytes": n_bytes, "endpoint": endpoint,
            "sizes_bytes": SIZES_BYTES, "times_s": curves, "rtt_s": rtt,
            "fibre_s": fibre, "completion_s": done,
            "endpoint_s": lat, "serialisation_s": serial, "time_s": total}


_LINE_COLOURS = {"rdma_small_one_way": "#377eb8", "gpudirect_rdma_one_way": "#984ea3",
                 "roce_small_one_way": "#4daf4a", "tcp_kernel_path": "#e41a1c"}
_LINE_NAMES = {"rdma_small_one_way": "RDMA, InfiniBand", "gpudirect_rdma_one_way":
               "GPUDirect RDMA, GPU to GPU", "roce_small_one_way": "RDMA, RoCE",
               "tcp_kernel_path": "TCP, kernel path"}


def _distance(distance_m: float) -> str:
    """'250 m', '10 km', '1000 km': the slider's own words
    (:func:`course_lib.units.format_distance`) at every position."""
    return format_distance(distance_m)


def _title(data):
    return f"{data['family']} {data['nic']}, {_distance(data['distance_m'])} of fibre"


def _line_width(key, data):
    return 2.6 if key == data["endpoint"] else 1.1


def plot(data, fig):
    from matplotlib.ticker import LogLocator

    fast_layout(fig, left=0.13, bottom=0.15)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    no_minor_ticks(ax)
    curves = {}
    for key, t in data["times_s"].items():
        curves[key], = ax.plot(data["sizes_bytes"], t, color=_LINE_COLOURS[key],
                               lw=_line_width(key, data), label=_LINE_NAMES[key])
    floor = data["fibre_s"] + data["endpoint_s"]
    rtt_line = ax.axhline(data["fibre_s"], color="#a6cee3", ls="--", lw=1.2,
                          label="fibre, one way")
    floor_line = ax.axhline(floor, color=_LINE_COLOURS[data["endpoint"]], ls=":", lw=1)
    point, = ax.plot([data["n_bytes"]], [data["time_s"]], "ko", ms=5)
    ax.xaxis.set_major_locator(LogLocator(base=2.0 ** 5, numticks=8))  # 1 KiB, 32 KiB, 1 MiB
    ax.xaxis.set_major_formatter(bytes_formatter(binary=True))
    ax.yaxis.set_major_formatter(time_formatter())
    ax.set_xlabel("message size")
    ax.set_title(_title(data), fontsize=10, y=1.0)
    legend = ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
    handles = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles))
    return {"ax": ax, "curves": curves, "rtt_line": rtt_line, "floor_line": floor_line,
            "point": point,
            "legend_handles": {key: handles[_LINE_NAMES[key]] for key in curves}}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`)."""
    ax = artists["ax"]
    for key, t in data["times_s"].items():
        line = artists["curves"][key]
        line.set_data(data["sizes_bytes"], t)
        line.set_linewidth(_line_width(key, data))
        artists["legend_handles"][key].set_linewidth(_line_width(key, data))
    artists["rtt_line"].set_ydata([data["fibre_s"]] * 2)
    floor = data["fibre_s"] + data["endpoint_s"]
    artists["floor_line"].set_ydata([floor, floor])
    artists["floor_line"].set_color(_LINE_COLOURS[data["endpoint"]])
    artists["point"].set_data([data["n_bytes"]], [data["time_s"]])
    ax.relim()
    ax.autoscale_view()
    ax.set_title(_title(data), fontsize=10, y=1.0)


def readout(data):
    cap = ""
    if data["bw_bytes_per_s"] < data["port_bw_bytes_per_s"]:
        cap = (f"From GPU memory the NIC reads over the {GPU}'s PCIe Gen{data['pcie_gen']} "
               f"x16 link, which carries only {format_bandwidth(data['bw_bytes_per_s'])}: "
               f"that is the rate. ")
    if data["endpoint"] == "tcp_kernel_path":
        # the model keeps the port rate for TCP: a best case that needs many streams
        cap += ("TCP is drawn at the port rate, which assumes the bytes are spread over many "
                "streams and threads (as NCCL's socket transport splits each message); one "
                "TCP stream, its bytes copied by the kernel on one core, gets much less. ")
    return (f"{data['family']} {data['nic']}: {data['rate_gbit_per_s']:g} Gb/s = "
            f"{format_bandwidth(data['port_bw_bytes_per_s'])} per direction. {cap}"
            f"{format_bytes(data['n_bytes'], binary=True)} over {_distance(data['distance_m'])}: fibre one way "
            f"{format_time(data['fibre_s'])} + end points {format_time(data['endpoint_s'])} + "
            f"size/rate {format_time(data['serialisation_s'])} = arrives after "
            f"<b>{format_time(data['time_s'])}</b>; a sender waiting for the completion "
            f"(the return trip too) sees {format_time(data['completion_s'])}.")


def diagram(data):
    """The chosen end points' way between two cities: through both kernels
    (TCP) or around them (RDMA, into host or GPU memory)."""
    kind, memory = draw.city.ENDPOINT_PATHS[data["endpoint"]]
    return draw.network_path(kind, nic=data["nic"], memory=memory,
                             distance_m=data["distance_m"], n_bytes=data["n_bytes"],
                             endpoint=data["endpoint"])


def explorer() -> Explorer:
    """The RDMA distance/rate explorer of chapter 5."""
    return Explorer("The high-speed rail: distance, port rate, end points", CONTROLS,
                    compute, plot, readout, figsize=(7.2, 3.6), replot=replot,
                    diagram=diagram)
