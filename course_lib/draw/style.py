"""The course's one visual language: a colour, a city name and a machine name per road.

Every drawing (maps, routes, collectives) and every chart that colours by road
kind takes its colours from here, so the maglev is the same green in chapter 2
and chapter 9.

>>> ROADS["nvlink"].city, ROADS["nvlink"].machine
('maglev', 'NVLink')
>>> road_colour("pcie") == ROADS["pcie"].colour
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Road", "ROADS", "PLACES", "NETWORK_MACHINES", "road_colour", "CHUNK_COLOURS",
           "FONT"]


@dataclass(frozen=True)
class Road:
    """One kind of road: its colour, its name in the story and in the machine."""

    colour: str
    city: str
    machine: str
    dash: str = ""          # SVG stroke-dasharray ("" = solid)


#: Road kinds, keyed like the ``kind`` of a :mod:`course_lib.topology` edge.
ROADS = {
    "nvlink": Road("#1b9e77", "maglev", "NVLink"),
    "pcie": Road("#d95f02", "arterial road", "PCIe"),
    "network": Road("#377eb8", "high-speed rail", "RDMA network (InfiniBand / RoCE)"),
    "cpu-link": Road("#8c6d31", "ring road between city halls", "CPU socket link (UPI / xGMI)"),
    "memory": Road("#7570b3", "city hall's depot road", "host memory bus (DDR)"),
    "kernel": Road("#999999", "the long way through city hall", "kernel network stack (TCP)", "5,4"),
}

#: What the high-speed rail is, per network kind of a catalog NIC (``port.family``):
#: only InfiniBand and RoCE are RDMA over verbs; EFA runs AWS's SRD, and
#: GPUDirect-TCPX(O) is TCP with the payload kept in GPU memory.
NETWORK_MACHINES = {
    "InfiniBand": "RDMA network (InfiniBand)",
    "RoCEv2": "RDMA network (RoCEv2, over Ethernet)",
    "EFA": "EFA (AWS SRD, over Ethernet)",
    "TCPX": "GPUDirect-TCPX (TCP over Ethernet)",
    "TCPXO": "GPUDirect-TCPXO (TCP offloaded to the NIC)",
}

#: Places on the map: fill colour, city name, machine name.
PLACES = {
    "cpu": ("#efe7f7", "city hall", "CPU"),
    "host-memory": ("#f3effa", "city hall's depot", "host memory (DRAM)"),
    "pcie-switch": ("#fde9d9", "road junction", "PCIe switch / root complex"),
    "gpu": ("#e5f5ef", "factory", "GPU"),
    "hbm": ("#cfeadf", "warehouse", "HBM"),
    "nvswitch": ("#d7efe7", "central interchange", "NVSwitch"),
    "nic": ("#e3eef8", "rail station", "NIC"),
    "network-switch": ("#d6e6f5", "rail hub", "network switch"),
}

#: Colours of data chunks in collective animations (colour-blind friendly, 12).
CHUNK_COLOURS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377",
                 "#bbbbbb", "#ee8866", "#44bb99", "#99ddff", "#ffaabb", "#77aadd")

#: Font stack for SVG text (Noto Sans CJK where installed, so 中文 renders).
FONT = "DejaVu Sans, Noto Sans, Noto Sans CJK SC, Arial, sans-serif"


def road_colour(kind: str) -> str:
    """The colour of a road kind (``"nvlink"``, ``"pcie"``, ``"network"``, ...)."""
    if kind not in ROADS:
        raise ValueError(f"kind must be one of {sorted(ROADS)}, got {kind!r}")
    return ROADS[kind].colour
