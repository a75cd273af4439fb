"""Drawing helpers shared by the explorers (presentation only, no physics)."""

from __future__ import annotations

from ..units import format_bandwidth, format_bytes, format_time

#: One colour per route or link kind, used by every chapter's plots.
COLOURS = {
    "h2d": "#d95f02", "d2h": "#e6ab02", "p2p-staged": "#7570b3", "p2p-pcie": "#e7298a",
    "p2p-nvlink": "#1b9e77", "rdma": "#377eb8",
    "nvlink": "#1b9e77", "pcie": "#d95f02", "network": "#377eb8",
}


def fast_layout(fig, left=0.13, right=0.95, bottom=0.15, top=0.9, **kw):
    """Fixed margins instead of the (slow) constrained layout: redraws stay
    well under the 50 ms budget.  The right margin leaves room for half of the
    last tick label ("32 GiB" at the axis' end is not cut)."""
    fig.set_layout_engine("none")
    fig.subplotpars.update(left=left, right=right, bottom=bottom, top=top, **kw)


def no_minor_ticks(ax):
    """Drop minor ticks (log axes draw many; they cost redraw time)."""
    from matplotlib.ticker import LogLocator, NullLocator

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_major_locator(LogLocator(base=10, numticks=5))
        axis.set_minor_locator(NullLocator())


def loglog_axes(fig, xlabel="message size", ylabel="time", **margins):
    """One log-log axis with readable byte (binary, round powers of two) and
    time tick labels."""
    from matplotlib.ticker import FuncFormatter

    from ..plots import bytes_axis

    fast_layout(fig, **margins)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    no_minor_ticks(ax)
    bytes_axis(ax.xaxis)        # 1 KiB, 32 KiB, 1 MiB: the sliders' units
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v, digits=2)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    return ax


def bytes_formatter(binary: bool = False):
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: format_bytes(v, binary=binary, digits=2))


def time_formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: format_time(v, digits=2))


def bw_formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: format_bandwidth(v, digits=3))


def node_cluster(gpu, nodes=1, nic=None):
    """The machine an explorer's drawing shows for ``gpu``: 8 GPUs on NVSwitch
    (the model's peer-to-peer route uses all of a GPU's NVLinks, as through an
    NVSwitch); a P100, which no NVSwitch system carries, as two GPUs joined by
    all four of its links (the same assumption)."""
    from ..clusters import cluster

    if gpu == "P100":
        return cluster(gpu, 2, nodes, "mesh", nic)
    return cluster(gpu, 8, nodes, "nvswitch", nic)


__all__ = ["COLOURS", "node_cluster", "fast_layout", "no_minor_ticks", "loglog_axes", "bytes_formatter",
           "time_formatter", "bw_formatter"]
