"""Plots of the models and the simulator: timelines, link load, predicted vs measured.

Every function takes plain results (a :class:`~course_lib.sim.core.Trace`, a
:class:`~course_lib.sim.SimResult`, a :class:`~course_lib.predict.Cluster`),
draws on ``ax`` (a new figure when ``None``) and returns the matplotlib Axes.
matplotlib is imported inside the functions, so ``import course_lib`` needs
no display.

Chapters 7 and 8.
"""

from __future__ import annotations

import numpy as np

from .analytic import collective_time_s
from .units import binary_size_ticks, check_choice, check_int, format_size_tick

__all__ = ["plot_timeline", "plot_link_utilisation", "plot_sim_vs_bound",
           "plot_busbw_vs_measured", "plot_copy_reference", "plot_predicted_vs_measured",
           "plot_validation_error_by_size", "bytes_axis", "gbps_axis"]


def bytes_axis(axis, max_ticks: int = 7):
    """Make a log byte axis read in binary units with round ticks (1 KiB,
    32 KiB, 1 MiB, ... -- never "976.56 KiB"); the ticks follow the axis's
    limits when they change.  ``axis`` is ``ax.xaxis`` or ``ax.yaxis``.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> _ = ax.plot([1e3, 2e9], [1, 2]); ax.set_xscale("log"); bytes_axis(ax.xaxis)
    >>> ticks = [t for t in ax.xaxis.get_major_locator()() if 1e3 <= t <= 2e9]
    >>> [ax.xaxis.get_major_formatter()(t) for t in ticks]
    ['1 KiB', '32 KiB', '1 MiB', '32 MiB', '1 GiB']
    """
    from matplotlib.ticker import FuncFormatter, Locator, NullLocator

    class _BinaryLocator(Locator):
        def __call__(self):
            lo, hi = self.axis.get_view_interval()
            return self.tick_values(lo, hi)

        def tick_values(self, vmin, vmax):
            if vmax <= 0:
                return []
            return binary_size_ticks(max(vmin, 1e-3), vmax, max_ticks)

    axis.set_major_locator(_BinaryLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_size_tick(v)))


def gbps_axis(axis):
    """Label an axis whose values are already in GB/s with plain numbers
    ("450", "0.5"; no "1e+02" on a log axis)."""
    from matplotlib.ticker import FuncFormatter

    def label(v, _pos):
        return f"{v:,.0f}" if v >= 10 else f"{v:.3g}"

    axis.set_major_formatter(FuncFormatter(label))


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 4))
    return ax


def _trace_of(obj):
    from .sim.core import Trace

    tr = getattr(obj, "trace", obj)
    if tr is None and obj is not None:
        raise ValueError("this result keeps no trace (simulated with trace=False): "
                         "simulate it again with trace=True to plot it")
    if not isinstance(tr, Trace):
        raise TypeError(f"trace must be a Trace or a SimResult/WorkloadResult, got "
                        f"{type(obj).__name__}")
    return tr


def plot_timeline(trace, ax=None, by: str = "gpu", max_ops: int = 20000):
    """Gantt chart: one row per GPU (its sends and computes) or per directed link.

    Parameters
    ----------
    trace : Trace or SimResult
        From :func:`course_lib.simulate_collective` or a workload.
    by : {"gpu", "link"}
        Rows are sending nodes, or the links each send occupies.
    max_ops : int
        Draw at most this many ops (the earliest), to keep big traces fast.

    With ``by="gpu"`` each GPU's row has two lanes: computes (orange) on
    the upper lane, its sends (blue; other jobs other colours) on the lower
    lane, so work that runs at the same time is drawn side by side, not on
    top of each other.  A legend names the lanes; the time axis is in µs,
    or in ms when the trace is longer than 2 ms.
    """
    from matplotlib.patches import Patch

    from .sim.core import SEND

    tr = _trace_of(trace)
    by = check_choice(by, "by", ("gpu", "link"))
    max_ops = check_int(max_ops, "max_ops", minimum=1)
    ax = _axes(ax)
    rows = tr.rows
    order = np.argsort(rows["start_s"], kind="stable")[:max_ops]
    span_s = float(rows["end_s"].max()) if len(rows) else 0.0
    scale, unit = (1e3, "ms") if span_s > 2e-3 else (1e6, "µs")
    colours = ["tab:blue", "tab:green", "tab:purple", "tab:red", "tab:brown"]
    bars: dict = {}
    kinds = set()
    for i in order:
        r = rows[i]
        send = r["kind"] == SEND
        colour = colours[r["job"] % len(colours)] if send else "tab:orange"
        span = (r["start_s"] * scale, (r["end_s"] - r["start_s"]) * scale)
        if by == "gpu" or not send:
            if by == "link":
                continue
            keys = [tr.node_names[r["src"]]]
        else:
            keys = [tr.link_names[l] for l in tr.op_links(int(i))]
        kinds.add((send, int(r["job"]) if send else -1))
        for k in keys:
            bars.setdefault(k, []).append((span, colour, send))
    labels = sorted(bars, key=lambda k: (not isinstance(k, (int, np.integer)), str(k)))
    for y, k in enumerate(labels):
        if by == "gpu":  # two lanes: compute above, sends below
            for send, (y0, h) in ((False, (y + 0.02, 0.38)), (True, (y - 0.4, 0.38))):
                spans = [(s, c) for s, c, is_send in bars[k] if is_send == send]
                if spans:
                    ax.broken_barh([s for s, _ in spans], (y0, h),
                                   facecolors=[c for _, c in spans],
                                   edgecolor="white", linewidth=0.3)
        else:
            ax.broken_barh([s for s, _, _ in bars[k]], (y - 0.4, 0.8),
                           facecolors=[c for _, c, _ in bars[k]],
                           edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([str(k) for k in labels], fontsize=7)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("GPU" if by == "gpu" else "link (one direction)")
    handles = []
    if (False, -1) in kinds:
        handles.append(Patch(color="tab:orange", label="compute (upper lane)"))
    jobs = sorted(j for send, j in kinds if send)
    for j in jobs:
        name = ("send (communication, lower lane)" if len(jobs) == 1
                else f"send, job {j} (lower lane)")
        handles.append(Patch(color=colours[j % len(colours)], label=name))
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1),
                  borderaxespad=0)   # outside the lanes: it hides no bar
    ax.set_title(f"timeline by {by}")
    return ax


def plot_link_utilisation(trace, ax=None, bins: int = 100, top: int = 8):
    """Share of each link's bandwidth in use over time, for the ``top`` busiest links.

    A send's bytes are spread evenly from its start to its last byte leaving
    (``sent_s``) on every link of its route; utilisation = bytes per time bin / (link bandwidth x bin width).
    """
    from .sim.core import SEND

    tr = _trace_of(trace)
    bins = check_int(bins, "bins", minimum=1)
    top = check_int(top, "top", minimum=1)
    ax = _axes(ax)
    rows = tr.rows
    t_end = float(rows["end_s"].max())
    edges = np.linspace(0.0, t_end, bins + 1)
    width = edges[1] - edges[0]
    load = {}
    for i in np.flatnonzero(rows["kind"] == SEND):
        s0, s1, nb = rows["start_s"][i], rows["sent_s"][i], rows["n_bytes"][i]
        if s1 <= s0:
            continue
        overlap = np.clip(np.minimum(edges[1:], s1) - np.maximum(edges[:-1], s0), 0, None)
        part = nb * overlap / (s1 - s0)
        for l in tr.op_links(int(i)):
            load[l] = load.get(l, 0.0) + part
    bw = tr.network.link_bw
    util = {l: v / (bw[l] * width) for l, v in load.items()}
    busiest = sorted(util, key=lambda l: -util[l].sum())[:top]
    mid = (edges[:-1] + edges[1:]) / 2 * 1e6
    for l in busiest:
        ax.plot(mid, util[l], label=tr.link_names[l])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("utilisation (fraction of one direction)")
    ax.legend(fontsize=7, loc="best")
    ax.set_title("link utilisation")
    return ax


def plot_sim_vs_bound(result, ax=None):
    """Simulated time beside the analytic alpha-beta bound for the same collective.

    The bound uses the smallest per-GPU route bandwidth of the network and
    no latency (``analytic.collective_time_s``): the simulated bar can only
    be longer; the gap is latency, overheads, pipeline fill and contention.
    """
    ax = _axes(ax)
    net = result.network
    g = net.gpus
    bw = min(net.route_bw(g[i], g[(i + 1) % len(g)]) for i in range(len(g)))
    algo = {"tree": "tree", "nvls": "in-switch"}.get(result.algorithm, "ring")
    coll = result.collective if algo != "tree" else "allreduce"
    bound = collective_time_s(coll, result.n_bytes, result.n_ranks, bw, 0.0, algo)
    vals = [bound * 1e6, result.time_s * 1e6]
    ax.bar(["analytic bound", "simulated"], vals, color=["tab:gray", "tab:blue"])
    for x, v in enumerate(vals):
        ax.text(x, v, f"{v:.1f} µs", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("time (µs)")
    ax.set_title(f"{result.collective} ({result.algorithm}), {result.n_ranks} GPUs")
    return ax


def plot_busbw_vs_measured(cluster, collective: str = "allreduce", measured=None,
                           sizes=None, ax=None, algorithm: str = "auto"):
    """Predicted busbw against message size, with its shaded range
    (``Prediction.busbw_range_bytes_per_s``) and measured points if given.

    Parameters
    ----------
    cluster : Cluster
        From :func:`course_lib.cluster`.
    measured : dict or sequence of (n_bytes, busbw_bytes_per_s), optional
        A curve from :func:`course_lib.predict.calibration_curves` or pairs.
    sizes : sequence of float, optional
        Sizes to predict (default: powers of 2 from 8 B to 16 GiB, or the
        measured sizes' range).
    """
    from .predict import predict_collective

    ax = _axes(ax)
    pts = None
    if measured is not None:
        if isinstance(measured, dict):
            pts = np.column_stack([measured["n_bytes"], measured["busbw_bytes_per_s"]])
        else:
            pts = np.asarray(measured, dtype=float).reshape(-1, 2)
    if sizes is None:
        lo, hi = (8.0, 2.0**34) if pts is None else (pts[:, 0].min(), pts[:, 0].max())
        sizes = 2.0 ** np.arange(np.floor(np.log2(lo)), np.ceil(np.log2(hi)) + 0.5)
    preds = [predict_collective(collective, s, cluster, algorithm) for s in sizes]
    # the prediction's range: the band that held 80 % of the points such
    # predictions did not fit (Prediction.busbw_range_bytes_per_s)
    ax.fill_between(sizes, [p.busbw_range_bytes_per_s[0] / 1e9 for p in preds],
                    [p.busbw_range_bytes_per_s[1] / 1e9 for p in preds], alpha=0.2, lw=0,
                    label="range (80 % of held-out points)")
    ax.plot(sizes, [p.busbw_bytes_per_s / 1e9 for p in preds], "-", label="predicted")
    if pts is not None:
        ax.plot(pts[:, 0], pts[:, 1] / 1e9, "o", label="measured")
    ax.set_xscale("log", base=2)
    bytes_axis(ax.xaxis)
    ax.set_xlabel("message size S")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(f"{collective} on {cluster.describe()}")
    ax.legend()
    return ax


#: Colour per copy variant in :func:`plot_copy_reference`.
_COPY_COLOURS = {"h2d-pinned": "#d95f02", "d2h-pinned": "#e6ab02",
                 "h2d-pageable": "#7570b3", "d2h-pageable": "#66a61e",
                 "d2d": "#1b9e77"}


def _records_of(obj):
    """Records from a LabResult, a dict with ``records``, or a list of dicts."""
    if obj is None:
        return []
    recs = getattr(obj, "records", None)
    if recs is None and isinstance(obj, dict):
        recs = obj.get("records")
    if recs is None:
        recs = obj
    if not isinstance(recs, (list, tuple)) or not all(isinstance(r, dict) for r in recs):
        raise TypeError("expected a LabResult, a dict with 'records' or a list of "
                        f"record dicts, got {type(obj).__name__}")
    return list(recs)


def plot_copy_reference(reference=None, own=None, models: bool = True,
                        variants=("h2d-pinned", "d2h-pinned", "h2d-pageable",
                                  "d2h-pageable"), ax=None):
    """Host<->GPU copy bandwidth against size: a real GPU, your run, the models.

    Parameters
    ----------
    reference : LabResult, optional
        Default :func:`course_lib.measure.h200_copies` (an NVIDIA H200 on
        PCIe Gen5 x16): solid lines.
    own : LabResult or list of records, optional
        Your own ``gpu-copies`` run (same variant names): circles.  Records of
        other labs are ignored (only the named variants are drawn).
    models : bool
        Draw the course's model for the reference's GPU, ``T = alpha + n/B``
        with :func:`course_lib.analytic.route_parameters` (``"h2d"``, pinned
        and pageable; dashed), and the PCIe line rate per direction
        (:func:`course_lib.hardware.pcie_bw_per_dir_bytes_per_s`; dotted).
    variants : sequence of str
        Which copy variants to draw (add ``"d2d"`` for the copy inside the GPU).

    Returns the matplotlib Axes (bandwidth in GB/s, one way, against bytes).
    Chapters 3 and 4.
    """
    from .analytic import route_parameters, transfer_time_s
    from .hardware import pcie_bw_per_dir_bytes_per_s
    from .measure.reference import h200_copies

    if isinstance(variants, str):
        variants = (variants,)
    for v in variants:
        check_choice(v, "variants", list(_COPY_COLOURS))
    if reference is None:
        reference = h200_copies()
    ref_recs = _records_of(reference)
    own_recs = _records_of(own)
    meta = getattr(reference, "metadata", {}) or {}
    gpu_name = meta.get("gpu", "reference GPU")
    ax = _axes(ax)
    for v in variants:
        pts = sorted((r["n_bytes"], r["bw_bytes_per_s"]) for r in ref_recs
                     if r.get("variant") == v)
        if pts:
            x, y = zip(*pts)
            ax.plot(x, np.array(y) / 1e9, "-", color=_COPY_COLOURS[v], lw=2,
                    label=f"{gpu_name}: {v}")
        mine = sorted((r["n_bytes"], r["bw_bytes_per_s"]) for r in own_recs
                      if r.get("variant") == v and r.get("bw_bytes_per_s"))
        if mine:
            x, y = zip(*mine)
            ax.plot(x, np.array(y) / 1e9, "o", color=_COPY_COLOURS[v], mfc="none",
                    label=f"your run: {v}")
    sizes = sorted({r["n_bytes"] for r in ref_recs + own_recs if r.get("variant") in variants})
    if models and sizes and "pcie_gen" in meta:
        grid = np.geomspace(min(sizes), max(sizes), 60)
        for memory, colour in (("pinned", _COPY_COLOURS["h2d-pinned"]),
                               ("pageable", _COPY_COLOURS["h2d-pageable"])):
            if not any(v.endswith(memory) for v in variants):
                continue
            p = route_parameters("h2d", gpu=gpu_name, memory=memory)
            bw = [n / transfer_time_s(n, p["bw_bytes_per_s"], p["latency_s"]) for n in grid]
            ax.plot(grid, np.array(bw) / 1e9, "--", color=colour, lw=1,
                    label=f"model: {memory} (alpha + n/B)")
        line = pcie_bw_per_dir_bytes_per_s(int(meta["pcie_gen"]),
                                           int(meta.get("pcie_lanes", 16)))
        ax.axhline(line / 1e9, color="grey", ls=":", lw=1,
                   label=f"PCIe Gen{meta['pcie_gen']} x{meta.get('pcie_lanes', 16)} "
                         f"line rate, one way")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    bytes_axis(ax.xaxis)
    gbps_axis(ax.yaxis)
    ax.set_xlabel("copy size")
    ax.set_ylabel("bandwidth, one way (GB/s)")
    ax.set_title(f"Host <-> GPU copies: {gpu_name} (PCIe Gen{meta.get('pcie_gen', '?')})"
                 + (" and your run" if own_recs else ""))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_predicted_vs_measured(rows, ax=None, band: float = 0.2):
    """Predicted against measured busbw, one marker per system (log-log).

    Parameters
    ----------
    rows : list of dict
        From :func:`course_lib.predict.validation_rows` (each with
        ``system``, ``measured_busbw``, ``predicted_busbw``, ``rel_error``).
    band : float
        Shade the region within this relative error of the diagonal.

    The legend gives each system's median busbw error.  Points on the
    diagonal are predicted exactly; above it the model is too optimistic.
    """
    ax, by = _validation_axes(rows, ax, band)
    lo = min(min(r["measured_busbw"], r["predicted_busbw"]) for r in rows) / 1e9
    hi = max(max(r["measured_busbw"], r["predicted_busbw"]) for r in rows) / 1e9
    x = np.geomspace(lo / 2, hi * 2, 50)
    ax.fill_between(x, x * (1 - band), x * (1 + band), color="0.9",
                    label=f"within ±{band:.0%}")
    ax.plot(x, x, "-", color="0.5", lw=1)
    for i, (system, rs) in enumerate(by.items()):
        med = float(np.median(np.abs([r["rel_error"] for r in rs])))
        ax.plot([r["measured_busbw"] / 1e9 for r in rs],
                [r["predicted_busbw"] / 1e9 for r in rs], _MARKERS[i % len(_MARKERS)],
                ms=5, alpha=0.8, label=f"{system[:42]} ({med:.0%})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured busbw (GB/s)")
    ax.set_ylabel("predicted busbw (GB/s)")
    ax.set_title("held-out nccl-tests runs: predicted vs measured (median error)")
    _legend_outside(ax)
    return ax


_MARKERS = "osD^vP*Xh<>"


def _validation_axes(rows, ax, band):
    """Check a validation plot's arguments; its axes and the rows by system."""
    if not rows:
        raise ValueError("rows is empty: pass predict.validation_rows(...)")
    if not 0 < band < 1:
        raise ValueError(f"band must be between 0 and 1, got {band!r}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(11, 5))
    by = {}
    for r in rows:
        by.setdefault(r["system"], []).append(r)
    return ax, by


def _legend_outside(ax):
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    ax.figure.tight_layout()


def plot_validation_error_by_size(rows, ax=None, band: float = 0.2):
    """Signed busbw error (predicted / measured - 1) against message size,
    one line per system: where along the size axis the model misses.

    Above zero the model is too optimistic; the grey band is ``±band``.
    """
    ax, by = _validation_axes(rows, ax, band)
    ax.axhspan(-band, band, color="0.9", label=f"within ±{band:.0%}")
    ax.axhline(0, color="0.5", lw=1)
    for i, (system, rs) in enumerate(by.items()):
        rs = sorted(rs, key=lambda r: (r["nodes"], r["n_bytes"]))
        ax.plot([r["n_bytes"] for r in rs], [r["rel_error"] for r in rs],
                _MARKERS[i % len(_MARKERS)], ms=4, alpha=0.8, label=system[:42])
    ax.set_xscale("log", base=2)
    bytes_axis(ax.xaxis)
    ax.set_yscale("symlog", linthresh=1.0)
    ticks = [-0.5, -0.2, 0, 0.2, 0.5, 1, 2, 5]
    ax.set_yticks(ticks, [f"{t:+.0%}" if t else "0" for t in ticks])
    ax.set_xlabel("message size S")
    ax.set_ylabel("busbw error (predicted / measured - 1)")
    ax.set_title("held-out runs: error by message size")
    _legend_outside(ax)
    return ax
