"""Chapter 4 explorer: the freight fleet -- many small trips or one big one?

``N`` copies of ``d`` bytes sent one by one cost ``N (alpha + d/B)``; merged
into one ("transfer batching", 传输合并) they cost ``alpha + N d / B``
(:func:`course_lib.batched_transfer_time_s`).  ``B`` is the host link's
bandwidth for pinned or pageable memory
(:func:`course_lib.host_copy_bw_bytes_per_s`, the measured DMA rate, not the
spec), ``alpha`` a start-up cost from the catalog
(:func:`course_lib.latency_s`): by default one synchronous copy as the host
clock sees it.  A copy from pageable memory adds the driver's staging at its
own size, as measured on the H200 (:func:`course_lib.host_copy_time_s`):
nothing for pieces up to 16 KiB, a growing share for large ones -- so the
one big batched copy pays more of it than many small ones.

>>> d = explorer().update(n_messages=1000, bytes_per_message=4096)
>>> d["t_separate_s"] > 10 * d["t_batched_s"]
True
"""

from __future__ import annotations

import numpy as np

from .. import analytic, draw, hardware
from ..units import format_bandwidth, format_bytes, format_time
from ..widgets import Explorer
from ._common import fast_layout, no_minor_ticks, time_formatter

#: Start-up cost per copy: a program that waits for each copy pays the whole
#: host-clock latency; copies queued on a stream overlap their API calls and
#: pay only the GPU-side cost.  Both measured on an H200 (catalog).
LATENCY_OPTIONS = [
    ("one copy at a time, waiting for each (7.3 us, H200)", "pcie_small_copy_sync"),
    ("copies queued back to back (2.7 us, H200)", "pcie_small_copy"),
    ("the articles' 'DMA setup' (5-10 us)", "dma_setup_seed"),
]
N_GRID = np.unique(np.round(np.logspace(0, 4, 25)).astype(int))

CONTROLS = {
    "n_messages": {"type": "IntSlider", "min": 1, "max": 10000, "value": 1000,
                   "values": [m * 10 ** e for e in range(4) for m in (1, 2, 5)] + [10000],
                   "description": "copies N", "unit": "count"},
    "bytes_per_message": {"type": "FloatLogSlider", "base": 2, "min": 6, "max": 27,
                          "step": 1, "value": 4096.0, "description": "bytes per copy",
                          "unit": "bytes"},
    "memory": {"type": "ToggleButtons", "options": list(analytic.HOST_MEMORY),
               "value": "pinned", "description": "host memory"},
    "pcie_gen": {"type": "Dropdown", "options": [3, 4, 5, 6], "value": 5,
                 "description": "PCIe generation"},
    "latency": {"type": "Dropdown", "options": LATENCY_OPTIONS,
                "value": "pcie_small_copy_sync", "description": "start-up cost"},
}


def compute(n_messages, bytes_per_message, memory, pcie_gen, latency):
    # the catalog's one pageable/pinned ratio (what the drawing labels); the
    # times below price pageable copies size by size instead
    bw = analytic.host_copy_bw_bytes_per_s(pcie_gen, memory, measured=True)
    pinned_bw = analytic.host_copy_bw_bytes_per_s(pcie_gen, "pinned", measured=True)
    alpha = hardware.latency_s(latency)

    def one_copy(n_bytes):
        # pinned: alpha + D / B; pageable: plus the staging measured at that size
        return analytic.host_copy_time_s(n_bytes, pcie_gen, memory, measured=True,
                                         latency_s=alpha)

    t_piece = one_copy(bytes_per_message)
    sep = [n * t_piece for n in N_GRID]
    bat = [one_copy(n * bytes_per_message) for n in N_GRID]
    t_sep = n_messages * t_piece
    t_bat = one_copy(n_messages * bytes_per_message)
    return {"n_grid": N_GRID, "separate_s": np.array(sep), "batched_s": np.array(bat),
            "n_messages": n_messages, "bytes_per_message": bytes_per_message,
            "memory": memory, "pcie_gen": pcie_gen, "bw_bytes_per_s": bw,
            "pinned_bw_bytes_per_s": pinned_bw,
            "latency_s": alpha, "t_separate_s": t_sep, "t_batched_s": t_bat,
            "half_bw_bytes": analytic.half_bandwidth_bytes(alpha, pinned_bw),
            "effective_bw_separate_bytes_per_s": (bytes_per_message / t_piece
                                                  if t_piece > 0 else 0.0)}


def _title(data):
    return (f"{format_bytes(data['bytes_per_message'], binary=True)} per copy over PCIe "
            f"Gen{data['pcie_gen']}, {data['memory']} memory")


def plot(data, fig):
    fast_layout(fig, left=0.13, bottom=0.15)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    no_minor_ticks(ax)
    separate, = ax.plot(data["n_grid"], data["separate_s"], color="#d95f02", lw=2,
                        label="N separate copies: N (alpha + d/B)")
    batched, = ax.plot(data["n_grid"], data["batched_s"], color="#1b9e77", lw=2,
                       label="one batched copy: alpha + N d / B")
    points, = ax.plot([data["n_messages"]] * 2, [data["t_separate_s"], data["t_batched_s"]],
                      "ko", ms=5)
    n_line = ax.axvline(data["n_messages"], color="grey", ls=":", lw=1)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))  # no mathtext: fast
    ax.yaxis.set_major_formatter(time_formatter())
    ax.set_xlabel("number of copies N")
    ax.set_ylabel("total time")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(_title(data), fontsize=10, y=1.0)
    return {"ax": ax, "separate": separate, "batched": batched, "points": points,
            "n_line": n_line}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`)."""
    ax = artists["ax"]
    artists["separate"].set_data(data["n_grid"], data["separate_s"])
    artists["batched"].set_data(data["n_grid"], data["batched_s"])
    n = data["n_messages"]
    artists["points"].set_data([n, n], [data["t_separate_s"], data["t_batched_s"]])
    artists["n_line"].set_xdata([n, n])
    ax.relim()
    ax.autoscale_view()
    ax.set_title(_title(data), fontsize=10, y=1.0)


def readout(data):
    saving = data["t_separate_s"] - data["t_batched_s"]
    if data["memory"] == "pinned":
        pageable = " = (N-1) x alpha"
    else:
        pageable = ("; from pageable memory every copy also pays the driver's staging at its "
                    "own size, as measured on an H200 -- nothing up to 16 KiB, a growing "
                    "share above, so the one big copy pays the most")
        if saving < 0:
            pageable += (", here more than batching saves (the H200 staged its smaller copies "
                         "from the CPU's cache; pieces that are not in the cache lose that "
                         "edge)")
    return (f"{data['n_messages']:,} copies of "
            f"{format_bytes(data['bytes_per_message'], binary=True)}: "
            f"one by one <b>{format_time(data['t_separate_s'])}</b>, batched "
            f"<b>{format_time(data['t_batched_s'])}</b> "
            f"({data['t_separate_s'] / data['t_batched_s']:.1f}x; "
            f"{'saves' if saving >= 0 else 'costs'} {format_time(abs(saving))}"
            f"{'' if saving >= 0 else ' more'}{pageable}). Each small copy alone delivers only "
            f"{format_bandwidth(data['effective_bw_separate_bytes_per_s'])} of "
            f"{format_bandwidth(data['pinned_bw_bytes_per_s'])} per direction (pinned); half "
            f"the bandwidth needs {format_bytes(data['half_bw_bytes'], binary=True)} per copy.")


def diagram(data):
    """One copy's way from host memory to the GPU: straight from pinned pages,
    or through the driver's locked staging buffer from pageable ones."""
    return draw.copy_path(data["memory"], gpu=None, pcie_gen=data["pcie_gen"],
                          measured=True, n_bytes=data["bytes_per_message"],
                          latency_s=data["latency_s"])


def explorer() -> Explorer:
    """The batching explorer of chapter 4."""
    return Explorer("The freight fleet: N small trips or one big one", CONTROLS,
                    compute, plot, readout, figsize=(7.2, 3.6), replot=replot,
                    diagram=diagram)
