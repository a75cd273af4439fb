"""Chapter 10 explorer: the scenario calculator.

Pick one of the seeds' six scenarios (:mod:`course_lib.scenarios`), scale
its workload with ``load`` (what it scales is in
:data:`course_lib.scenarios.LOAD_MEANING`) and set how efficiently the GPUs
compute; the bars show compute and communication of the baseline and the
improved set-up, the readout compares the model's gain with the seed's claim.

>>> d = explorer().update(scenario="tp_token_latency", load=1.0)
>>> d["result"]["claimed_gain"]
2.5
"""

from __future__ import annotations

from functools import lru_cache

from .. import scenarios
from ..clusters import cluster
from ..draw import city_map
from ..units import format_time
from ..widgets import Explorer
from matplotlib.ticker import MaxNLocator

from ._common import fast_layout, time_formatter

_TITLES = {k: scenarios.scenario(k)["title"] for k in scenarios.scenario_names()}

CONTROLS = {
    "scenario": {"type": "Dropdown", "value": "tp_inference_70b",
                 "options": [(t, k) for k, t in _TITLES.items()]},
    "load": {"type": "FloatLogSlider", "min": -2, "max": 2, "value": 1.0,
             "values": [m * 10.0 ** e for e in range(-2, 2) for m in (1, 2, 5)] + [100.0],
             "description": "workload", "unit": "x"},
    "efficiency": {"type": "FloatSlider", "min": 0.1, "max": 0.9, "step": 0.05,
                   "value": 0.5, "description": "share of peak FLOP/s", "unit": "%"},
}


def compute(scenario, load, efficiency):
    """Run the chosen scenario's models."""
    r = scenarios.scenario(scenario, load=load, efficiency=efficiency)
    return {"result": r, "load_meaning": scenarios.LOAD_MEANING[scenario]}


def _bars(data):
    """Compute and communication times, tick labels and title of the two bars."""
    r = data["result"]
    sides = [r["baseline"], r["improved"]]
    claim = (f"the article claims x{r['claimed_gain']:.2g}" if r["claimed_gain"]
             else "the article gives no ratio")
    return ([s["compute_s"] for s in sides], [s["comm_s"] for s in sides],
            [s["label"][:32] for s in sides],
            f"{r['title']}: model x{r['model_gain']:.2f}, {claim}")


def plot(data, fig):
    fast_layout(fig, left=0.3, bottom=0.17, top=0.86)
    ax = fig.add_subplot(1, 1, 1)
    y = [1, 0]
    comp, comm, labels, title = _bars(data)
    comp_bars = ax.barh(y, comp, color="#7570b3", label="compute")
    comm_bars = ax.barh(y, comm, left=comp, color="#1b9e77", label="communication")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.xaxis.set_major_formatter(time_formatter())
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("time per step / request (compute, then communication)")
    # a band under the bars for the legend: it covers no bar, however long
    ax.set_ylim(-1.0, 1.5)
    ax.legend(fontsize=8, loc="lower right", ncol=2)
    ax.set_title(title, fontsize=9)
    return {"ax": ax, "compute": comp_bars, "comm": comm_bars}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`)."""
    ax = artists["ax"]
    comp, comm, labels, title = _bars(data)
    for bar, c in zip(artists["compute"], comp):
        bar.set_width(c)
    for bar, c, m in zip(artists["comm"], comp, comm):
        bar.set_x(c)
        bar.set_width(m)
        bar.sticky_edges.x[:] = [c]     # barh made each bar's left edge sticky
    ax.set_yticklabels(labels, fontsize=8)
    ax.relim()
    ax.autoscale_view()
    ax.set_title(title, fontsize=9)


def readout(data):
    r = data["result"]
    rows = "; ".join(f"{k}: {v}" for k, v in r["rows"][:4])
    if "nccl_gain" in r:      # the 70B scenario: the line-rate gain and NCCL's
        rows += (f"; gain x{r['model_gain']:.2f} with line-rate links, "
                 f"<b>x{r['nccl_gain']:.2f}</b> with NCCL's calibrated AllReduce times")
    return (f"<b>{r['verdict']}</b> ({r['gain_name']}). Workload x scales the "
            f"{data['load_meaning']}. {rows}. Depends on: {r['depends_on'][0]}. "
            f"Step times: {format_time(r['baseline']['total_s'])} vs "
            f"{format_time(r['improved']['total_s'])}.")


def _tp(p):
    return cluster(p["gpu"], gpus_per_node=p["n_gpus"]), {"route": ["p2p-pcie", "p2p-nvlink"]}


#: Each scenario's machine, built from its own parameters, and the routes of its
#: baseline and its improvement drawn on it (the roads the claimed gain depends on).
MACHINES = {
    "tp_inference_70b": _tp,
    "tp_token_latency": _tp,
    "roce_training_1024": lambda p: (
        cluster(p["gpu"], nodes=p["nodes"], nic=p["nic"]), {"route": ["tcp", "rdma"]}),
    # the scenario names no GPU: one factory per city, an edge gateway and a server
    "edge_cloud_inference": lambda p: (
        cluster("A100", gpus_per_node=1, nodes=2, nic=p["nic"], fabric="pcie"),
        {"route": ["tcp", "rdma"], "distance_m": p["distance_km"] * 1e3, "pair": (0, 0)}),
    "dgx_h100_175b": lambda p: (
        cluster("H100", nodes=p["n_gpus"] // p["tp"], nic=p["nic"]),
        {"route": ["p2p-pcie", "p2p-nvlink"]}),
    "hpc_halo_exchange": lambda p: (
        cluster(p["gpu"]), {"route": ["p2p-staged", "p2p-nvlink"]}),
}


@lru_cache(maxsize=16)
def machine(scenario: str):
    """The scenario's machine drawn as the city, with the baseline's and the
    improvement's routes on it (:func:`course_lib.draw.city_map`).

    >>> "ic-route-leg" in machine("tp_inference_70b").svg
    True
    """
    if scenario not in MACHINES:
        raise ValueError(f"scenario must be one of {sorted(MACHINES)}, got {scenario!r}")
    clu, kw = MACHINES[scenario](scenarios.scenario(scenario)["params"])
    return city_map(clu, **kw)


def diagram(data):
    """The chosen scenario's machine (:func:`machine`)."""
    return machine(data["result"]["key"])


def explorer() -> Explorer:
    """The scenario calculator of chapter 10."""
    return Explorer("The city at work: scenario calculator", CONTROLS, compute, plot,
                    readout, figsize=(7.2, 3.0), replot=replot, diagram=diagram)
