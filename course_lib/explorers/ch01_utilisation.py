"""Chapter 1 explorer: how much of the time do the factories work?

Each step a GPU computes for ``T_comp`` and then waits ``T_comm`` for its
freight; the utilisation is ``T_comp / (T_comp + T_comm)``
(:func:`course_lib.effective_utilisation`), with ``T_comm`` the time of the
chosen route (:func:`course_lib.route_transfer_time_s`).

>>> d = explorer().update(t_compute_s=0.1, n_bytes=1e9)
>>> d["utilisation"]["p2p-nvlink"] > d["utilisation"]["p2p-staged"]
True
"""

from __future__ import annotations

import numpy as np

from .. import analytic, draw
from ..units import format_bytes, format_time
from ..widgets import Explorer
from ._common import COLOURS, fast_layout, node_cluster, time_formatter

#: The NIC of the RDMA route (the one ``route_parameters`` plans with by default).
NIC = "NDR"

CONTROLS = {
    "t_compute_s": {"type": "FloatLogSlider", "min": -4, "max": 1, "value": 0.1,
                    "values": [m * 10.0 ** e for e in range(-4, 1) for m in (1, 2, 5)] + [10.0],
                    "description": "compute per step", "unit": "s"},
    "n_bytes": {"type": "FloatLogSlider", "base": 2, "min": 10, "max": 37, "step": 1,
                "value": 2.0 ** 30, "description": "bytes per step", "unit": "bytes"},
    "gpu": {"type": "Dropdown", "options": ["V100", "A100", "H100", "B200"],
            "value": "H100"},
}


def compute(t_compute_s, n_bytes, gpu):
    comm = {r: analytic.route_transfer_time_s(n_bytes, r, gpu=gpu, nic=NIC)
            for r in analytic.ROUTES}
    util = {r: analytic.effective_utilisation(t_compute_s, t) for r, t in comm.items()}
    return {"t_compute_s": t_compute_s, "n_bytes": n_bytes, "gpu": gpu,
            "t_comm_s": comm, "utilisation": util,
            "slowest_route": min(util, key=util.get),
            "cluster": node_cluster(gpu, nodes=2, nic=NIC)}


def plot(data, fig):
    fast_layout(fig, left=0.42, right=0.97, bottom=0.17, top=0.89)
    ax = fig.add_subplot(1, 1, 1)
    short = {"h2d": "H2D (PCIe)", "d2h": "D2H (PCIe)", "p2p-staged": "GPU-host-GPU (PCIe)",
             "p2p-pcie": "GPU-GPU (PCIe P2P)",
             "p2p-nvlink": "GPU-GPU (NVLink)", "rdma": "other server (RDMA)"}
    routes = list(data["t_comm_s"])
    y = np.arange(len(routes))
    tc = data["t_compute_s"]
    tm = np.array([data["t_comm_s"][r] for r in routes])
    ax.barh(y, [tc] * len(routes), color="#999999")
    ax.barh(y, tm, left=tc, color=[COLOURS[r] for r in routes])
    ax.set_yticks(y, [f"{short[r]}: U = {data['utilisation'][r]:.0%}" for r in routes],
                  fontsize=8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.xaxis.set_major_formatter(time_formatter())
    ax.set_xlabel("grey: compute, colour: waiting for freight")
    ax.invert_yaxis()
    ax.set_xlim(0, (tc + tm.max()) * 1.05)
    ax.set_title(f"{data['gpu']}: U = T_comp / (T_comp + T_comm)", fontsize=10, y=1.0)


def readout(data):
    best = max(data["utilisation"], key=data["utilisation"].get)
    worst = min(data["utilisation"], key=data["utilisation"].get)
    return (f"Moving {format_bytes(data['n_bytes'], binary=True)} after "
            f"{format_time(data['t_compute_s'])} of compute: utilisation "
            f"{data['utilisation'][best]:.0%} over {best}, "
            f"{data['utilisation'][worst]:.0%} over {worst}.")


def diagram(data):
    """The route the factories wait longest for, on the city map."""
    return draw.city_map(data["cluster"], route=data["slowest_route"],
                         n_bytes=data["n_bytes"], max_gpus=4, max_nodes=1, width=720)


def explorer() -> Explorer:
    """The utilisation explorer of chapter 1."""
    return Explorer("Effective utilisation: compute time against freight time",
                    CONTROLS, compute, plot, readout, figsize=(7.2, 3.4), diagram=diagram)
