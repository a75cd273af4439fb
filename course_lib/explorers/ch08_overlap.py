"""Chapter 8 explorers: staggered rush hours and traffic lights.

``overlap`` -- the backward pass produces gradients bucket by bucket; each
bucket's AllReduce (time from :func:`course_lib.predict.predict_collective`)
starts when the bucket is ready (:func:`course_lib.traffic.bucket_overlap_schedule`).
Compare the step with the sum ``T_comp + T_comm`` and the ideal
``max(T_comp, T_comm)`` (:func:`course_lib.iteration_time_s`).

``stragglers`` -- GPUs with noisy phase times meet at barriers
(:func:`course_lib.traffic.barrier_step_time_s`): a barrier after every
phase against one at the end of the step.

>>> d = FACTORIES["overlap"]().update(n_buckets=1, overlap=False)
>>> abs(d["iteration_s"] - d["sum_s"]) < 1e-12
True
>>> s = FACTORIES["stragglers"]().update(n_phases=1)
>>> abs(s["every_s"] - s["once_s"]) < 1e-12
True
"""

from __future__ import annotations

import math

import numpy as np

from .. import predict, traffic
from ..draw import timeline as drawn_timeline
from ..draw.style import CHUNK_COLOURS
from ..analytic import gradient_bytes, iteration_time_s
from ..clusters import cluster
from ..units import format_bytes, format_time
from ..widgets import Explorer
from matplotlib.ticker import MaxNLocator

from ._common import fast_layout, time_formatter

LINKS = {
    "8x H100, NVSwitch": {"gpu": "H100"},
    "8x H100, PCIe Gen5 only": {"gpu": "H100", "fabric": "pcie"},
    "8x A100, NVSwitch": {"gpu": "A100"},
    "4 nodes x 8 H100, 1 NDR NIC a node": {"gpu": "H100", "nodes": 4, "nic": "NDR",
                                           "nics_per_node": 1},
}

CONTROLS = {
    "n_params": {"type": "FloatLogSlider", "min": 8, "max": 11, "value": 7e9,
                 "values": [1e8, 2e8, 5e8, 1e9, 2e9, 3e9, 7e9, 13e9, 30e9, 70e9, 1e11],
                 "description": "model", "unit": "params"},
    "bytes_per_element": {"type": "ToggleButtons", "value": 2,
                          "options": [("BF16/FP16 (2 B)", 2), ("FP32 (4 B)", 4)],
                          "description": "gradients"},
    "system": {"type": "Dropdown", "options": list(LINKS), "value": "8x H100, NVSwitch"},
    "t_backward_s": {"type": "FloatLogSlider", "min": -2, "max": 1, "value": 0.5,
                     "values": [m * 10.0 ** e for e in range(-2, 1) for m in (1, 2, 5)] + [10.0],
                     "description": "backward pass", "unit": "s"},
    "n_buckets": {"type": "IntSlider", "min": 1, "max": 64, "value": 8,
                  "values": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
                  "description": "gradient buckets"},
    "overlap": {"type": "Checkbox", "value": True,
                "description": "start each bucket's AllReduce when it is ready"},
}


def compute(n_params, bytes_per_element, system, t_backward_s, n_buckets, overlap):
    """The step's timeline with bucketed (and optionally overlapped) AllReduces."""
    grad = gradient_bytes(n_params, bytes_per_element)
    clu = cluster(**LINKS[system])
    t_comm_one = predict.predict_collective("allreduce", grad, clu).time_s
    bucket = predict.predict_collective("allreduce", grad / n_buckets, clu)
    t_bucket = bucket.time_s
    sched = traffic.bucket_overlap_schedule(t_backward_s, n_buckets * t_bucket,
                                            n_buckets, overlap=overlap)
    return {"grad_bytes": grad, "system": system, "t_backward_s": t_backward_s,
            "t_comm_s": t_comm_one, "t_comm_bucketed_s": n_buckets * t_bucket,
            "schedule": sched, "iteration_s": sched["iteration_s"],
            "sum_s": iteration_time_s(t_backward_s, t_comm_one, overlap=False),
            "max_s": iteration_time_s(t_backward_s, t_comm_one, overlap=True),
            "exposed_s": sched["exposed_comm_s"], "algorithm": bucket.algorithm,
            "n_ranks": clu.n_ranks}


def plot(data, fig):
    fast_layout(fig, left=0.15, bottom=0.17, top=0.88)
    ax = fig.add_subplot(1, 1, 1)
    s = data["schedule"]
    # one colour per gradient bucket: the backward pass produces bucket k,
    # then bucket k's AllReduce runs (ReduceScatter solid, AllGather light)
    colours = [CHUNK_COLOURS[i % len(CHUNK_COLOURS)] for i in range(len(s["comm"]))]
    ax.broken_barh([(a, b - a) for a, b in s["compute"][-len(s["comm"]):]], (1.1, 0.8),
                   facecolors=colours, edgecolor="white")
    ax.broken_barh([(a, (b - a) / 2) for a, b in s["comm"]], (0.1, 0.8),
                   facecolors=colours, edgecolor="none")
    ax.broken_barh([((a + b) / 2, (b - a) / 2) for a, b in s["comm"]], (0.1, 0.8),
                   facecolors=colours, edgecolor="none", alpha=0.5)
    for x, style, name in ((data["sum_s"], "--", "sum"), (data["max_s"], ":", "max")):
        ax.axvline(x, color="black", ls=style, lw=1)
        ax.text(x, 2.05, f" {name}", fontsize=8, va="bottom")
    ax.axvline(data["iteration_s"], color="#d95f02", lw=2)
    ax.set_yticks([0.5, 1.5])
    ax.set_yticklabels(["AllReduce", "backward"])
    ax.set_ylim(0, 2.4)
    ax.set_xlim(0, max(data["sum_s"], data["iteration_s"]) * 1.05)
    ax.xaxis.set_major_formatter(time_formatter())
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("time in the step")
    ax.set_title(f"{format_bytes(data['grad_bytes'])} of gradients on "
                 f"{data['system']}: backward + AllReduce = {format_time(data['iteration_s'])}",
                 fontsize=9)


def _against_bounds(t, low, high, overlap=True):
    """Where the step ``t`` lies against max (one AllReduce fully hidden) and
    sum (nothing hidden), in words that match the numbers as printed.

    >>> _against_bounds(1.03, 0.522, 1.02)[:20]
    'above the sum 1.02 s'
    >>> _against_bounds(0.8, 0.522, 1.02)
    'between max 522 ms and sum 1.02 s'
    >>> _against_bounds(1.0201, 0.522, 1.02, overlap=False)[:22]
    'about the sum 1.02 s ('
    """
    lo, hi, now = format_time(low), format_time(high), format_time(t)
    extra = ("the buckets' start-ups cost more than overlapping saves" if overlap
             else "nothing overlaps, and every bucket pays its start-up")
    if math.isclose(t, high, rel_tol=1e-9):
        return f"equal to the sum {hi} (nothing hidden)"
    if math.isclose(t, low, rel_tol=1e-9):
        return f"equal to the max {lo} (the AllReduce all hidden)"
    if now == hi:
        return f"about the sum {hi} ({extra})" if t > high else \
            f"just under the sum {hi} (almost nothing hidden)"
    if t > high:
        return f"above the sum {hi} of backward and one AllReduce ({extra})"
    if now == lo or t < low:
        return f"about the max {lo} (the AllReduce almost all hidden)"
    return f"between max {lo} and sum {hi}"


def readout(data):
    where = _against_bounds(data["iteration_s"], data["max_s"], data["sum_s"],
                            data["schedule"]["overlap"])
    return (f"AllReduce of everything at once: {format_time(data['t_comm_s'])}; in "
            f"{data['schedule']['n_buckets']} buckets: "
            f"{format_time(data['t_comm_bucketed_s'])} (each bucket pays the start-up)."
            f" Backward pass + communication <b>{format_time(data['iteration_s'])}</b>, "
            f"{where}; "
            f"communication left exposed: "
            f"<b>{format_time(data['exposed_s'])}</b>. (The forward pass, which produces "
            f"no gradients and hides nothing, comes on top: T_fwd + this.)")


def diagram(data):
    """The step as a timeline of phases, buckets and ring steps
    (:func:`course_lib.draw.timeline.bucket_timeline`)."""
    label = ("overlap: each bucket reduced when ready" if data["schedule"]["overlap"]
             else "no overlap: all buckets reduced after backward")
    return drawn_timeline.bucket_timeline(
        [(label, data["schedule"])], n_ranks=data["n_ranks"],
        algorithm=data["algorithm"],
        title=f"{format_bytes(data['grad_bytes'])} of gradients, "
              f"{data['schedule']['n_buckets']} buckets, {data['algorithm']} on "
              f"{data['system']}")


def explorer() -> Explorer:
    """The bucketed-overlap explorer of chapter 8."""
    return Explorer("Staggered rush hours: overlap gradient buckets with backward",
                    CONTROLS, compute, plot, readout, figsize=(7.2, 3.2),
                    diagram=diagram)


# ---------------------------------------------------------------------------
# stragglers and barriers
# ---------------------------------------------------------------------------
STRAGGLER_CONTROLS = {
    "n_gpus": {"type": "IntSlider", "min": 2, "max": 32, "value": 8,
               "description": "GPUs"},
    "n_phases": {"type": "IntSlider", "min": 1, "max": 48, "value": 24,
                 "description": "barriers per step"},
    "jitter": {"type": "FloatSlider", "min": 0.0, "max": 0.5, "step": 0.01,
               "value": 0.1, "description": "random noise per phase", "unit": "%"},
    "slow_gpus": {"type": "IntSlider", "min": 0, "max": 4, "value": 0,
                  "description": "slow GPUs"},
    "slowdown": {"type": "FloatSlider", "min": 0.0, "max": 1.0, "step": 0.05,
                 "value": 0.2, "description": "how much slower", "unit": "%"},
    "step_s": {"type": "FloatLogSlider", "min": -3, "max": 0, "value": 0.24,
               "values": [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.12, 0.24, 0.5, 1.0],
               "description": "work per step", "unit": "s"},
}


def straggler_compute(n_gpus, n_phases, jitter, slow_gpus, slowdown, step_s):
    """Busy and waiting time of each GPU, with and without per-phase barriers."""
    t = traffic.straggler_phase_times_s(n_gpus, n_phases, step_s / n_phases,
                                        jitter=jitter, slow_gpus=min(slow_gpus, n_gpus),
                                        slowdown=slowdown, seed=0)
    every = traffic.barrier_step_time_s(t, every_phase=True)
    once = traffic.barrier_step_time_s(t, every_phase=False)
    busy = t.sum(axis=1)
    return {"times_s": t, "busy_s": busy, "every_s": every, "once_s": once,
            "wait_every_s": every - busy, "wait_once_s": once - busy,
            "mean_busy_s": float(busy.mean()), "n_phases": n_phases,
            "slow_gpus": min(slow_gpus, n_gpus), "slowdown": slowdown}


def straggler_plot(data, fig):
    fast_layout(fig, left=0.1, bottom=0.16, top=0.88)
    ax = fig.add_subplot(1, 1, 1)
    n = len(data["busy_s"])
    y = np.arange(n)
    ax.barh(y, data["busy_s"], color="#7570b3", label="working")
    ax.barh(y, data["wait_every_s"], left=data["busy_s"], color="#e6ab02",
            label="waiting at barriers")
    ax.axvline(data["once_s"], color="black", ls="--", lw=1.2)
    ax.text(data["once_s"], n - 0.4, " one barrier", fontsize=8, va="bottom",
            ha="right")
    ax.set_yticks([])
    ax.set_ylabel("GPUs")
    ax.set_xlim(0, data["every_s"] * 1.4)      # room on the right for the legend
    ax.xaxis.set_major_formatter(time_formatter())
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"{data['n_phases']} barriers a step: {format_time(data['every_s'])};"
                 f" one barrier: {format_time(data['once_s'])}", fontsize=9)


def _slow_text(data):
    k = data.get("slow_gpus", 0)
    if not k:
        return (f"No GPU is slow, so \"how much slower\" ({data['slowdown']:.0%}) changes "
                "nothing yet: set slow GPUs to 1 or more to see a straggler.")
    return f"{k} slow GPU{'s' if k > 1 else ''}, each {data['slowdown']:.0%} slower."


def straggler_readout(data):
    extra = data["every_s"] / data["once_s"] - 1
    return (f"The slowest GPU sets the pace. Average work "
            f"{format_time(data['mean_busy_s'])}; with a barrier after each of "
            f"{data['n_phases']} phases the step takes "
            f"<b>{format_time(data['every_s'])}</b>, with one barrier "
            f"<b>{format_time(data['once_s'])}</b>: the extra lights cost "
            f"<b>{extra:.1%}</b>. {_slow_text(data)}")


def stragglers_explorer() -> Explorer:
    """The barrier and straggler explorer of chapter 8."""
    return Explorer("Traffic lights: barriers wait for the slowest GPU",
                    STRAGGLER_CONTROLS, straggler_compute, straggler_plot,
                    straggler_readout, figsize=(7.2, 3.2))


FACTORIES = {"overlap": explorer, "stragglers": stragglers_explorer}
