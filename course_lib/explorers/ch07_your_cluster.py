"""Chapter 7 explorer: a real nccl-tests log, the model calibrated on it, and a what-if.

Pick a log (the real runs shipped in ``course_lib/data/example_logs``, or
your own: ``explorer(log="run.txt", cluster=cl.cluster(...))`` adds it to
the list) and how the model is set: from the spec sheet, calibrated on four
sizes of the log (the others then test it), or on every row
(:func:`course_lib.calibrate`).  The dots are the log's busbw, the line the
model's with its shaded range (``Prediction.busbw_range_bytes_per_s``: the
band that held 80 % of the points such predictions did not fit), the dashed
line the same calibrated machine with other node and NIC counts
(:func:`course_lib.what_if`).

>>> d = explorer().update(fit="4 sizes")
>>> d["n_fitted"], len(d["measured_bytes"]) > d["n_fitted"]
(4, True)
>>> 0 < d["median_error_unfitted"] < 0.5
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import calibrating, predict
from ..analytic import busbw_factor
from ..units import format_bandwidth, format_bytes, format_size, format_time
from ..widgets import Explorer
from ._common import fast_layout, no_minor_ticks

#: How the model is set: label -> the sizes it is calibrated on ("all", a
#: tuple of target sizes, or None: from spec).
FITS = {"from spec": None, "4 sizes": calibrating.FIT_SIZES, "all sizes": "all"}
#: NIC type assumed for a what-if across nodes when the log ran on one node.
WHAT_IF_NIC = "NDR"

_USER_LOGS: dict = {}


def _logs() -> dict:
    """label -> example file name (or a key of the user's logs)."""
    out = {v["title"]: k for k, v in calibrating.example_logs().items()}
    out.update({label: label for label in _USER_LOGS})
    return out


@lru_cache(maxsize=16)
def _load(key):
    if key in _USER_LOGS:
        return _USER_LOGS[key]
    machine, rows = calibrating.load_log(key)
    colls = [r["collective"] for r in rows]
    main = "allreduce" if "allreduce" in colls else colls[0]
    return machine, [r for r in rows if r["collective"] == main]


@lru_cache(maxsize=32)
def _calibrated(key, fit):
    machine, rows = _load(key)
    sizes = FITS[fit]
    if sizes is None:
        return machine, frozenset()
    if sizes == "all":
        chosen = [r["n_bytes"] for r in rows]
    else:
        chosen = calibrating.nearest_sizes([r["n_bytes"] for r in rows], sizes)
    fit_rows = [r for r in rows if r["n_bytes"] in chosen]
    return calibrating.calibrate(machine, fit_rows), frozenset(chosen)


def compute(log, fit, what_if_nodes, what_if_nics):
    """The log's points, the model (from spec or calibrated) over its sizes
    with its range, and the what-if machine's curve."""
    key = _logs()[log]
    machine, rows = _load(key)
    model, fitted = _calibrated(key, fit)
    g = rows[0].get("n_gpus_per_process")
    coll = rows[0]["collective"]
    sizes = np.array([r["n_bytes"] for r in rows])
    preds = [predict.predict_collective(coll, s, model, launch_gpus=g) for s in sizes]
    busbw = np.array([p.busbw_bytes_per_s for p in preds])
    lo = np.array([p.busbw_range_bytes_per_s[0] for p in preds])
    hi = np.array([p.busbw_range_bytes_per_s[1] for p in preds])
    # from the time column: nccl-tests prints busbw with two decimals (0.00 GB/s
    # for small sizes), the time with more
    factor = busbw_factor(coll, machine.n_ranks)
    measured = np.array([r["n_bytes"] / r["time_s"] * factor for r in rows])
    nodes = int(round(what_if_nodes))
    changes = {"nodes": nodes, "nics": min(int(what_if_nics), machine.gpus_per_node)}
    if machine.nic is None and nodes > 1:
        changes["nic"] = WHAT_IF_NIC
    other = calibrating.what_if(model, **changes) if nodes > 1 or machine.nodes > 1 \
        else calibrating.what_if(model, nodes=1)
    if other.n_ranks > 1:
        wi = np.array([predict.predict_collective(coll, s, other, launch_gpus=g)
                       .busbw_bytes_per_s for s in sizes])
    else:
        wi = np.full(len(sizes), np.nan)
    err = busbw / measured - 1
    unfit = np.array([s not in fitted for s in sizes])
    inside = (measured >= lo) & (measured <= hi)
    return {"log": log, "fit": fit, "collective": coll, "cluster": machine, "model": model,
            "measured_bytes": sizes, "measured_busbw_bytes_per_s": measured,
            "busbw_bytes_per_s": busbw, "low_bytes_per_s": lo, "high_bytes_per_s": hi,
            "fitted": np.array([s in fitted for s in sizes]), "n_fitted": len(fitted),
            "what_if": other, "what_if_busbw_bytes_per_s": wi,
            "rel_error": err,
            "median_error_unfitted": float(np.median(np.abs(err[unfit]))) if unfit.any()
            else float("nan"),
            "median_error": float(np.median(np.abs(err))),
            "inside_range": float(np.mean(inside))}


def plot(data, fig):
    fast_layout(fig, left=0.1, bottom=0.16)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log", base=2)
    no_minor_ticks(ax)
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _: format_bytes(v, binary=True, digits=2)))
    x = data["measured_bytes"]
    ticks = [2.0**k for k in range(0, 41, 5) if x.min() / 2 <= 2.0**k <= x.max() * 2]
    ax.set_xticks(ticks)
    band = _band(ax, data)
    model, = ax.plot(x, data["busbw_bytes_per_s"] / 1e9, lw=2, color="#1b9e77",
                     label=f"model ({data['fit']})")
    other, = ax.plot(x, data["what_if_busbw_bytes_per_s"] / 1e9, "--", lw=1.5,
                     color="#7570b3", label=_what_if_label(data))
    f = data["fitted"]
    measured, = ax.plot(x[~f], data["measured_busbw_bytes_per_s"][~f] / 1e9, "o",
                        color="#d95f02", ms=5, label="measured (the log)")
    fitted = None
    if f.any():
        fitted, = ax.plot(x[f], data["measured_busbw_bytes_per_s"][f] / 1e9, "s",
                          mfc="none", mec="black", ms=8, mew=1.5, label="fitted on")
    ax.set_xlabel("size S (nccl-tests)")
    ax.set_ylabel("busbw, GB/s (per direction)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    legend = ax.legend(fontsize=7, loc="upper left")
    ax.set_title(_title(data), fontsize=9)
    return {"ax": ax, "band": band, "model": model, "other": other, "measured": measured,
            "fitted": fitted, "legend": legend, "log": data["log"]}


def _band(ax, data):
    return ax.fill_between(data["measured_bytes"], data["low_bytes_per_s"] / 1e9,
                           data["high_bytes_per_s"] / 1e9, color="#1b9e77", alpha=0.18,
                           lw=0, label="model's range (80 %)")


def _what_if_label(data):
    w = data["what_if"]
    nics = "" if w.nic is None else f", {w.nics_per_node} {w.nic} NIC(s) each"
    return f"what-if: {w.nodes} node(s){nics}"


def _title(data):
    return f"{data['collective']} on {data['cluster'].describe()}"


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`):
    a what-if or a fit on the same log; another log (other sizes and ticks) or a
    change between fitted and not is a full redraw."""
    f = data["fitted"]
    if artists["log"] != data["log"] or f.any() != (artists["fitted"] is not None):
        return False
    ax, x = artists["ax"], data["measured_bytes"]
    artists["band"].remove()
    artists["band"] = _band(ax, data)
    artists["model"].set_data(x, data["busbw_bytes_per_s"] / 1e9)
    artists["other"].set_data(x, data["what_if_busbw_bytes_per_s"] / 1e9)
    meas = data["measured_busbw_bytes_per_s"] / 1e9
    artists["measured"].set_data(x[~f], meas[~f])
    if artists["fitted"] is not None:
        artists["fitted"].set_data(x[f], meas[f])
    for text in artists["legend"].get_texts():
        if text.get_text().startswith("model ("):
            text.set_text(f"model ({data['fit']})")
        elif text.get_text().startswith("what-if:"):
            text.set_text(_what_if_label(data))
    ax.set_autoscaley_on(True)          # plot's set_ylim(bottom=0) switched it off
    ax.relim()
    ax.autoscale_view()
    ax.set_ylim(bottom=0)
    ax.set_title(_title(data), fontsize=9)


#: How the readout names a fitted constant (``clusters.Calibration`` field).
CONSTANT_NAMES = {
    "launch_s": "start-up", "nic_bytes_per_s": "NIC rate",
    "net_step_bytes_per_nic": "network step per NIC", "ll_net_bytes_per_s": "LL network rate",
    "chunk_bytes": "chunk", "ll_efficiency": "LL efficiency",
    "ll128_efficiency": "LL128 efficiency", "simple_efficiency": "Simple efficiency",
    "latency_scale": "latency", "simple_latency_scale": "Simple latency",
    "intra_scale": "in-node rate", "pipeline_pieces": "pipeline pieces"}


def format_constant(name: str, value: float) -> str:
    """One fitted constant as a learner reads it: its name in words and its
    value in units (µs, GB/s, MiB, %, or x the catalog's figure).

    >>> format_constant("launch_s", 2.74e-05), format_constant("chunk_bytes", 2.78e6)
    ('start-up 27.4 µs', 'chunk 2.78 MB')
    >>> format_constant("ll_efficiency", 0.25), format_constant("latency_scale", 0.995)
    ('LL efficiency 25 %', 'latency ×0.995 of the catalog')
    """
    label = CONSTANT_NAMES.get(name, name.replace("_", " "))
    if name.endswith("_bytes_per_s"):
        text = f"{format_bandwidth(value)} per direction"
    elif name.endswith("_s"):
        text = format_time(value)
    elif name.endswith("_bytes") or name.endswith("_bytes_per_nic"):
        text = format_size(value)
    elif name.endswith("_efficiency"):
        text = f"{value:.0%}".replace("%", " %")
    elif name == "pipeline_pieces":
        text = f"{value:.3g}"
    else:
        text = f"×{value:.3g} of the catalog"
    return f"{label} {text}"


def readout(data):
    cal = data["model"].calibrated
    consts = "none (the catalog's)" if cal is None else ", ".join(
        format_constant(k, v) for k, v in cal.items().items())
    held = ("" if data["median_error_unfitted"] != data["median_error_unfitted"] else
            f"; on the rows it did not fit {data['median_error_unfitted']:.1%}")
    return (f"model vs log: median |error| <b>{data['median_error']:.1%}</b>{held}; "
            f"{data['inside_range']:.0%} of the log's points inside the shaded range. "
            f"Fitted constants: {consts}.")


def explorer(log=None, cluster=None) -> Explorer:
    """The explorer; ``log`` (a path or the text of your nccl-tests output) with
    the ``cluster`` it ran on adds your run to the list and opens on it."""
    value = None
    if log is not None:
        machine, rows = calibrating.load_log(log, cluster)
        colls = [r["collective"] for r in rows]
        main = "allreduce" if "allreduce" in colls else colls[0]
        value = f"your log: {machine.describe()}"
        _USER_LOGS[value] = (machine, [r for r in rows if r["collective"] == main])
        _load.cache_clear()
        _calibrated.cache_clear()
    options = list(_logs())
    controls = {
        "log": {"type": "Dropdown", "options": options, "value": value or options[0]},
        "fit": {"type": "ToggleButtons", "options": list(FITS), "value": "4 sizes"},
        "what_if_nodes": {"type": "FloatLogSlider", "base": 2, "min": 0, "max": 7,
                          "step": 1, "value": 8.0, "unit": "count",
                          "description": "what-if nodes"},
        "what_if_nics": {"type": "IntSlider", "min": 1, "max": 8, "value": 8,
                         "description": "NICs a node"},
    }
    return Explorer("Run it on your cluster: a log, the calibrated model, a what-if",
                    controls, compute=compute, plot=plot, readout=readout, replot=replot)
