"""Chapter 9 explorers: how big can the city grow?

``scaling`` -- data-parallel training on 1 to 1,024 GPUs (8 a node), in two
regimes.  *Strong scaling*: a fixed global batch whose step takes
``T_comp`` on one GPU is split, so each of N GPUs computes ``T_comp/N``.
*Weak scaling*: every GPU keeps a batch of ``T_comp`` and the global batch
grows with N; speed-up means throughput over one GPU's.  The AllReduce time
comes from :func:`course_lib.predict.predict_collective` at every N
(:func:`course_lib.scaling.scaling_curves` holds the model), with
the course's one overlap model (:func:`course_lib.traffic.overlap_step_time_s`:
at full overlap ``T_fwd + max(T_bwd, T_comm)``, only the backward pass
hides communication).  The seeds' rule ``N / (1 + (N-1) T_comm/T_comp)``
(:func:`course_lib.comm_speedup`) is drawn with ``T_comm = 2S/B`` and ``B``
the wire bandwidth of a *ring* AllReduce on one 8-GPU node (its predicted
busbw with ``algorithm="ring"``; NVLS's busbw is not a wire bandwidth): it
is the strong-scaling ring model, so at N = 8 it equals a ring's strong
scaling (the predictor's NVLS is a little faster there).

``amdahl`` -- Amdahl's law :func:`course_lib.amdahl_speedup` and its limit.

``growth`` -- NVLink's per-direction bandwidth per generation from the
catalog against compound growth ``B0 (1+g)^t``
(:func:`course_lib.bandwidth_growth_bytes_per_s`).

>>> d = FACTORIES["scaling"]().update(t_compute_s=1.0)
>>> float(d["model_speedup"][0]), d["n_gpus"][-1], d["regime"]
(1.0, 1024, 'strong')
>>> ring8 = 1.0 / (1.0 / 8 + d["t_ring_node_s"])      # a ring's strong scaling at N = 8
>>> bool(abs(d["seeds_speedup"][3] - ring8) < 1e-9 * ring8)
True
>>> round(FACTORIES["amdahl"]().update(parallel_fraction=0.99, n_gpus=1000)["speedup"], 1)
91.0
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..draw import collectives as drawn
from ..analytic import amdahl_limit, amdahl_speedup, bandwidth_growth_bytes_per_s, comm_speedup
from ..hardware import NVLINK_GENERATIONS, nic_names
from ..scaling import GPUS_PER_NODE, N_GPUS, scaling_cluster, scaling_curves
from ..units import format_bandwidth, format_bytes, format_time
from ..widgets import Explorer
from ._common import fast_layout, no_minor_ticks


CONTROLS = {
    "regime": {"type": "ToggleButtons", "value": "strong",
               "options": [("strong: fixed global batch", "strong"),
                           ("weak: a batch per GPU", "weak")]},
    "t_compute_s": {"type": "FloatLogSlider", "min": -2, "max": 1, "value": 0.8,
                    "values": [0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10.0],
                    "description": "compute, 1 GPU", "unit": "s"},
    "n_params": {"type": "FloatLogSlider", "min": 8, "max": 11, "value": 7e9,
                 "values": [1e8, 2e8, 5e8, 1e9, 2e9, 3e9, 7e9, 13e9, 30e9, 70e9, 1e11],
                 "description": "model (BF16 gradients)", "unit": "params"},
    "nic": {"type": "Dropdown", "options": nic_names(), "value": "NDR",
            "description": "NIC between nodes"},
    "nics_per_node": {"type": "IntSlider", "min": 1, "max": 8, "value": 8,
                      "description": "NICs a node"},
    "overlap": {"type": "FloatSlider", "min": 0.0, "max": 1.0, "step": 0.05,
                "value": 0.0, "description": "overlap", "unit": "%"},
    "view": {"type": "ToggleButtons", "options": ["speed-up", "efficiency"],
             "value": "speed-up"},
}


def _cluster(n, nic, nics_per_node):
    return scaling_cluster(n, nic, nics_per_node)


def compute(regime, t_compute_s, n_params, nic, nics_per_node, overlap, view):
    """Speed-up of the seeds' rule and of the predicted model, N = 1 .. 1024
    (:func:`course_lib.scaling.scaling_curves`)."""
    return scaling_curves(regime, t_compute_s, n_params, nic, nics_per_node, overlap, view)


def _curves(data):
    """(y values, label) of the plotted curves and the y label, for the view."""
    n = np.array(data["n_gpus"])
    model = f"predicted, {data['regime']} scaling"
    if data["view"] == "speed-up":
        ylabel = ("speed-up T_1/T_N" if data["regime"] == "strong"
                  else "speed-up (throughput vs 1 GPU)")
        return [(n, "ideal N"), (data["seeds_speedup"],
                                 "the article's rule N/(1+(N-1)r), r = 2S/(B T)"),
                (data["model_speedup"], model)], ylabel
    return [(data["efficiency_seeds"], "the article's rule"),
            (data["efficiency_model"], model)], "scaling efficiency"


def _title(data):
    return (f"{format_bytes(data['grad_bytes'])} of gradients; "
            f"{data['nics_per_node']}x {data['nic']} a node")


def plot(data, fig):
    fast_layout(fig, left=0.11, bottom=0.15, top=0.9)
    ax = fig.add_subplot(1, 1, 1)
    n = np.array(data["n_gpus"])
    ax.set_xscale("log", base=2)
    curves, ylabel = _curves(data)
    styles = ([{"color": "grey", "ls": ":"}] if data["view"] == "speed-up" else []) + [
        {"color": "#d95f02", "lw": 2}, {"color": "#1b9e77", "lw": 2.5}]
    if data["view"] == "speed-up":
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    lines = [ax.plot(n, y, label=label, **style)[0]
             for (y, label), style in zip(curves, styles)]
    if data["view"] != "speed-up":
        ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    no_minor_ticks(ax)
    ax.axvline(GPUS_PER_NODE, color="black", lw=1, ls="--")
    edge = ax.text(GPUS_PER_NODE, ax.get_ylim()[0], " NVLink domain ends", fontsize=8,
                   va="bottom")
    ticks = [1, 8, 64, 512]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(v) for v in ticks], fontsize=8)
    ax.set_xlabel("GPUs (8 a node)")
    ax.grid(True, alpha=0.3)
    # where the curves are not: they start top left in both views
    legend = ax.legend(fontsize=8, loc="best")
    ax.set_title(_title(data), fontsize=9)
    return {"ax": ax, "view": data["view"], "lines": lines, "edge": edge,
            "legend_texts": legend.get_texts()}


def replot(data, fig, artists):
    """New curves in the same view: the lines, labels and limits updated in
    place (see :class:`course_lib.widgets.Explorer`); another view draws afresh."""
    if artists["view"] != data["view"]:
        return False
    ax = artists["ax"]
    curves, ylabel = _curves(data)
    for line, text, (y, label) in zip(artists["lines"], artists["legend_texts"], curves):
        line.set_ydata(y)
        line.set_label(label)
        text.set_text(label)
    if data["view"] == "speed-up":
        ax.relim()
        ax.autoscale_view(scalex=False)
    ax.set_ylabel(ylabel)
    artists["edge"].set_y(ax.get_ylim()[0])
    ax.set_title(_title(data), fontsize=9)


def _rule_vs_model(data):
    """Where, past the node, the seeds' rule lies above the predicted curve:
    read from the curves themselves, not assumed."""
    rows = [(n, r > m, t) for n, r, m, t in zip(data["n_gpus"], data["seeds_speedup"],
                                                data["model_speedup"], data["t_comm_s"])
            if n > GPUS_PER_NODE]
    above = [n for n, is_above, _ in rows if is_above]
    below = [(n, t) for n, is_above, t in rows if not is_above]
    why = ""
    if below and all(t < data["t_rule_s"] for _, t in below):
        why = (f" (there the predicted AllReduce is shorter than the rule's 2S/B = "
               f"{format_time(data['t_rule_s'])})")
    # the cause, read from the machine: with a NIC per GPU the network carries the
    # ring as fast as NVLink does on one node, and only the latency steps (and the
    # tree NCCL picks across many nodes) are left; with fewer NICs the road narrows
    if data["nics_per_node"] < GPUS_PER_NODE:
        narrows = ", where the road narrows to the NICs and the latency steps add up"
    else:
        narrows = (", where the latency steps add up (with a NIC per GPU the road past "
                   "the node is not narrower for an AllReduce)")
    if not above:
        return f"past the node it stays below the predicted curve at every N shown{why}"
    if not below:
        return f"past the node it lies above the predicted curve{narrows}"
    if not rows[-1][1]:
        return (f"past the node it lies above the predicted curve at N = "
                f"{', '.join(f'{n:,}' for n in above)} only, below it elsewhere{why}")
    # the smallest N from which the rule stays above the curve up to 1,024
    first = min(n for n, _, _ in rows if all(a for m, a, _ in rows if m >= n))
    last_below = max(n for n, _ in below if n < first)
    return (f"past the node it lies below the predicted curve up to N = {last_below:,}"
            f"{why} and above it from N = {first:,}{narrows}")


def readout(data):
    t = data["t_comm_s"]
    if data["regime"] == "strong":
        regime = ("Strong scaling: the compute per GPU shrinks as T/N while the "
                  "AllReduce does not, so communication takes over. The article's rule is "
                  "this model with T_comm = 2S/B (B: the bus bandwidth NCCL's ring reaches on "
                  f"one node, {format_bandwidth(data['busbw_node_bytes_per_s'])}, not the "
                  "spec sheet's NVLink rate); "
                  f"{_rule_vs_model(data)}. Overlap "
                  "hides communication behind the backward pass only (T_fwd + "
                  "max(T_bwd, T_comm)).")
    else:
        regime = ("Weak scaling: every GPU keeps its batch, so the nearly flat "
                  "AllReduce costs the same share at every N and throughput grows "
                  "almost as N. The article's rule (a strong-scaling law) does not apply.")
    return (f"AllReduce: {format_time(t[1])} on 2 GPUs, {format_time(t[3])} on 8, "
            f"{format_time(t[-1])} on 1,024 -- nearly flat inside the node, a step "
            f"at the node boundary. At 1,024 GPUs: the article's rule "
            f"<b>{data['seeds_speedup'][-1]:.0f}</b>, model "
            f"<b>{data['model_speedup'][-1]:.0f}</b>. {regime} The NVLink article's M_total = "
            f"params x bytes x N = {format_bytes(data['seeds_m_total_bytes'])}: the "
            f"cluster's total traffic is about twice that, but each GPU sends only "
            f"{format_bytes(data['sent_per_gpu_bytes'])}, all at once, so the time "
            f"per GPU hardly grows with N.")


@lru_cache(maxsize=64)
def _boundary(nic, nics_per_node):
    clu = _cluster(2 * GPUS_PER_NODE, nic, nics_per_node)
    return drawn.hierarchical(2, GPUS_PER_NODE, step=2, cluster=clu)


def diagram(data):
    """Where the NVLink domain ends: two nodes (districts) of the explorer's
    machine, maglev inside, one rail per GPU between them, at the step of a
    two-level AllReduce that crosses the network
    (:func:`course_lib.draw.collectives.hierarchical`, with the cluster's
    per-GPU rates inside and across)."""
    return _boundary(data["nic"], data["nics_per_node"])


def explorer() -> Explorer:
    """The scaling explorer of chapter 9."""
    return Explorer("How big can the city grow? Speed-up from 1 to 1,024 GPUs",
                    CONTROLS, compute, plot, readout, figsize=(7.2, 3.6),
                    diagram=diagram, replot=replot)


# ---------------------------------------------------------------------------
AMDAHL_CONTROLS = {
    "parallel_fraction": {"type": "FloatSlider", "min": 0.5, "max": 0.999, "value": 0.99,
                          "values": [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99,
                                     0.995, 0.998, 0.999],
                          "description": "parallel fraction p"},
    "n_gpus": {"type": "IntSlider", "min": 1, "max": 4096, "value": 1000,
               "values": sorted({2 ** k for k in range(13)} | {1000}),
               "description": "GPUs N", "unit": "count"},
}
_AMDAHL_N = np.unique(np.round(np.logspace(0, np.log10(4096), 40)).astype(int))


def amdahl_compute(parallel_fraction, n_gpus):
    """Amdahl's speed-up at N and over a range of N, and the limit."""
    return {"p": parallel_fraction, "n": n_gpus,
            "speedup": amdahl_speedup(parallel_fraction, n_gpus),
            "limit": amdahl_limit(parallel_fraction),
            "curve_n": _AMDAHL_N,
            "curve": np.array([amdahl_speedup(parallel_fraction, int(k))
                               for k in _AMDAHL_N])}


def amdahl_plot(data, fig):
    fast_layout(fig, left=0.11, bottom=0.15)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    no_minor_ticks(ax)
    ax.plot(data["curve_n"], data["curve_n"], color="grey", ls=":", label="ideal N")
    curve, = ax.plot(data["curve_n"], data["curve"], color="#1b9e77", lw=2.5,
                     label="Amdahl")
    limit = ax.axhline(data["limit"], color="#d95f02", ls="--", label="limit 1/(1-p)")
    point, = ax.plot([data["n"]], [data["speedup"]], "ko", ms=7)
    ax.set_xlabel("GPUs N")
    ax.set_ylabel("speed-up")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return {"ax": ax, "curve": curve, "limit": limit, "point": point}


def amdahl_replot(data, fig, artists):
    """Another p or N: the curve, the limit and the point moved in place."""
    artists["curve"].set_ydata(data["curve"])
    artists["limit"].set_ydata([data["limit"]] * 2)
    artists["point"].set_data([data["n"]], [data["speedup"]])


def _times(x: float) -> str:
    """A ratio in plain digits: '0.0101', '1.5', '1,000' (never '1e+03')."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def amdahl_readout(data):
    serial, n, s, limit = 1 - data["p"], data["n"], data["speedup"], data["limit"]
    return (f"p = {data['p']:.3g}, N = {n:,}: speed-up "
            f"<b>{s:.1f}</b>, {s / n:.0%} of the ideal {n:,}; no number of GPUs beats "
            f"<b>{limit:.0f}</b> = 1/(1-p). The {serial:.2g} serial share costs "
            f"{_times(serial * n / data['p'])} times the parallel part's time on {n:,} GPUs "
            f"({s / limit:.0%} of the ceiling: the limit, not the value).")


def amdahl_explorer() -> Explorer:
    """Amdahl's law explorer of chapter 9."""
    return Explorer("Amdahl's law: the serial part sets the ceiling",
                    AMDAHL_CONTROLS, amdahl_compute, amdahl_plot, amdahl_readout,
                    figsize=(6.8, 3.4), replot=amdahl_replot)


# ---------------------------------------------------------------------------
GROWTH_CONTROLS = {
    "base_generation": {"type": "Dropdown", "value": 1, "description": "start from",
                        "options": [(f"NVLink {g} ({r.gpu})", g)
                                    for g, r in NVLINK_GENERATIONS.items()]},
    "growth_per_generation": {"type": "FloatSlider", "min": 0.0, "max": 1.5,
                              "step": 0.05, "value": 1.0,
                              "description": "growth g per generation", "unit": "%"},
}


def growth_compute(base_generation, growth_per_generation):
    """Catalog bandwidth per generation against B0 (1+g)^t from a base."""
    gens = sorted(NVLINK_GENERATIONS)
    actual = np.array([NVLINK_GENERATIONS[g].total_per_dir_bytes_per_s for g in gens])
    b0 = NVLINK_GENERATIONS[base_generation].total_per_dir_bytes_per_s
    model = np.array([bandwidth_growth_bytes_per_s(b0, growth_per_generation,
                                                   max(0, g - base_generation))
                      for g in gens])
    span = gens[-1] - gens[0]
    fitted = (actual[-1] / actual[0]) ** (1 / span) - 1
    return {"generations": gens, "actual": actual, "model": model, "b0": b0,
            "base": base_generation, "g": growth_per_generation,
            "fitted_g": fitted}


def growth_plot(data, fig):
    fast_layout(fig, left=0.13, bottom=0.15)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_yscale("log")
    no_minor_ticks(ax)
    g = data["generations"]
    ax.plot(g, data["actual"] / 1e9, "o-", color="#1b9e77", lw=2,
            label="catalog, per direction per GPU")
    model, = ax.plot(*_growth_model(data), "s--", color="#d95f02", label="B₀ (1+g)ᵗ")
    from matplotlib.ticker import FixedLocator, FuncFormatter

    ax.yaxis.set_major_locator(FixedLocator([50, 100, 200, 500, 1000, 2000, 5000]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))   # no 10³
    ax.set_xticks(g)
    ax.set_xlabel("NVLink generation")
    ax.set_ylabel("GB/s per direction")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return {"ax": ax, "model": model}


def _growth_model(data):
    """The formula's points, from the base generation on (GB/s)."""
    g = data["generations"]
    sel = [i for i, k in enumerate(g) if k >= data["base"]]
    return [g[i] for i in sel], [data["model"][i] / 1e9 for i in sel]


def growth_replot(data, fig, artists):
    """Another base or g: the formula's points moved in place (the axis keeps its
    fixed ticks; the limits follow the points)."""
    artists["model"].set_data(*_growth_model(data))
    ax = artists["ax"]
    ax.relim()
    ax.autoscale_view()


def growth_readout(data):
    last = data["generations"][-1]
    return (f"From {format_bandwidth(data['b0'])} (NVLink {data['base']}) at g = "
            f"{data['g'] * 100:.0f} % per generation the formula gives "
            f"{format_bandwidth(data['model'][-1])} by NVLink {last}; the catalog "
            f"says {format_bandwidth(data['actual'][-1])} per direction. Fitted over "
            f"all five generations: g = <b>{data['fitted_g'] * 100:.0f} %</b> per generation.")


def growth_explorer() -> Explorer:
    """The bandwidth-growth explorer of chapter 9."""
    return Explorer("Bandwidth growth: B(t) = B₀ (1+g)ᵗ", GROWTH_CONTROLS,
                    growth_compute, growth_plot, growth_readout, figsize=(6.8, 3.4),
                    replot=growth_replot)


FACTORIES = {"scaling": explorer, "amdahl": amdahl_explorer,
             "growth": growth_explorer}
