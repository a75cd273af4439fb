"""Chapter 7 explorers: collectives on real machines, and the ring step by step.

``allreduce`` -- pick a collective, an algorithm, a machine and a message
size; the curve is the bus bandwidth :func:`course_lib.predict.predict_collective`
expects at every size, the dots are nccl-tests measurements from
``course_lib/data/calibration_measurements.csv`` where the machine matches.

``ring_steps`` -- the ring AllReduce of :func:`course_lib.traffic.ring_allreduce_schedule`
one step at a time: who sends which chunk, and how many ranks' data each
copy of each chunk holds.

>>> d = FACTORIES["allreduce"]().update(n_bytes=2**30)
>>> d["prediction"].algorithm in ("nvls", "ring", "tree")
True
>>> int(FACTORIES["ring_steps"]().update(n_ranks=4, step=6)["contributions"].min())
4
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import content, predict, traffic
from ..draw import collectives as drawn
from ..analytic import busbw_factor, ring_allreduce_bytes_per_rank
from ..clusters import cluster
from ..plots import bytes_axis
from ..units import format_bandwidth, format_bytes, format_time
from ..widgets import Explorer

from ._common import fast_layout, no_minor_ticks

#: Machines offered: label -> (cluster keyword arguments, prefix of the matching
#: system name in the calibration file or None).
SYSTEMS = {
    "8x H100, NVSwitch (one HGX/DGX H100)": ({"gpu": "H100"}, "H100-SXM (HGX 8-GPU)"),
    "8x A100, NVSwitch (one DGX A100)": ({"gpu": "A100"}, "A100-SXM"),
    "8x H100 on PCIe Gen5 only": ({"gpu": "H100", "fabric": "pcie"}, None),
    "16 nodes x 8 H100, 8 NDR NICs a node": (
        {"gpu": "H100", "nodes": 16, "nic": "NDR"}, None),
    "16 nodes x 8 H100, 1 NDR NIC a node": (
        {"gpu": "H100", "nodes": 16, "nic": "NDR", "nics_per_node": 1}, None),
}
SIZES_BYTES = 2.0 ** np.arange(10, 35)

CONTROLS = {
    "collective": {"type": "Dropdown", "value": "allreduce",
                   "options": ["allreduce", "allgather", "reducescatter",
                               "broadcast", "alltoall"]},
    "algorithm": {"type": "Dropdown", "value": "auto",
                  "options": ["auto", "ring", "tree", "nvls", "hierarchical"]},
    "system": {"type": "Dropdown", "options": list(SYSTEMS),
               "value": "8x H100, NVSwitch (one HGX/DGX H100)"},
    "n_bytes": {"type": "FloatLogSlider", "base": 2, "min": 10, "max": 34,
                "step": 1, "value": 2.0 ** 30, "description": "size S", "unit": "bytes"},
}


@lru_cache(maxsize=64)
def _curve(collective, algorithm, system):
    clu = cluster(**SYSTEMS[system][0])
    preds = [predict.predict_collective(collective, s, clu, algorithm)
             for s in SIZES_BYTES]
    return (np.array([p.busbw_bytes_per_s for p in preds]),
            np.array([p.time_s for p in preds]), tuple(p.algorithm for p in preds))


def _measured(collective, system):
    prefix = SYSTEMS[system][1]
    if prefix is None or collective != "allreduce":
        return np.array([]), np.array([])
    rows = [r for r in content.calibration_rows()
            if r["collective"] == "AllReduce" and r["system"].startswith(prefix)]
    rows.sort(key=lambda r: r["bytes"])
    return (np.array([r["bytes"] for r in rows]),
            np.array([r["busbw_GBps"] * 1e9 for r in rows]))


def runs_with(collective, system, n_bytes) -> tuple:
    """The algorithms of the dropdown that :func:`course_lib.predict.predict_collective`
    models for this collective on this machine (``"auto"`` first)."""
    clu = cluster(**SYSTEMS[system][0])
    out = []
    for a in CONTROLS["algorithm"]["options"]:
        try:
            predict.predict_collective(collective, n_bytes, clu, a)
        except ValueError:
            continue
        out.append(a)
    return tuple(out)


def compute(collective, algorithm, system, n_bytes):
    """Predicted busbw over sizes, the chosen point, and measurements if any.

    An algorithm the model (as NCCL) does not run for this collective on this
    machine -- tree for anything but AllReduce, NVLS without an NVLink SHARP
    switch -- is no error: ``refused`` holds the model's reason and
    ``runs_with`` the algorithms that do run, and the explorer says so (a bad
    size still raises)."""
    clu = cluster(**SYSTEMS[system][0])
    try:
        p = predict.predict_collective(collective, n_bytes, clu, algorithm)
    except ValueError as exc:
        options = runs_with(collective, system, n_bytes)
        if algorithm == "auto" or not options:
            raise
        return {"collective": collective, "system": system, "cluster": clu,
                "n_bytes": n_bytes, "algorithm": algorithm, "prediction": None,
                "refused": str(exc), "runs_with": options}
    busbw, times, algos = _curve(collective, algorithm, system)
    m_bytes, m_busbw = _measured(collective, system)
    return {"collective": collective, "system": system, "cluster": clu,
            "algorithm": algorithm, "refused": None,
            "n_bytes": n_bytes, "prediction": p, "sizes_bytes": SIZES_BYTES,
            "busbw_bytes_per_s": busbw, "times_s": times, "algorithms": algos,
            "measured_bytes": m_bytes, "measured_busbw_bytes_per_s": m_busbw,
            "factor": busbw_factor(collective, clu.n_ranks),
            "bytes_per_rank_ring": ring_allreduce_bytes_per_rank(n_bytes, clu.n_ranks)}


def _title(data):
    return f"{data['collective']} on {data['cluster'].describe()}"


def _pick(data) -> str:
    """'ring or nvls' from the algorithms that run (auto left out: it picks among them)."""
    named = [a for a in data["runs_with"] if a != "auto"] or ["auto"]
    return " or ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)


def plot(data, fig):
    fast_layout(fig, left=0.1, bottom=0.16)
    ax = fig.add_subplot(1, 1, 1)
    if data["refused"]:                      # nothing to plot: say why, on the plot too
        ax.set_axis_off()
        ax.text(0.5, 0.55, f"{data['algorithm']} does not run {data['collective']}\n"
                f"on this machine: pick {_pick(data)}", ha="center", va="center",
                fontsize=11, transform=ax.transAxes, color="#b00")
        ax.set_title(_title(data), fontsize=9)
        return {"ax": ax, "refused": True}
    ax.set_xscale("log", base=2)
    no_minor_ticks(ax)
    # power-of-two sizes read in binary units at round ticks (1 KiB, 1 MiB, 1 GiB),
    # as nccl-tests and chapter 7 write them
    bytes_axis(ax.xaxis)
    model, = ax.plot(data["sizes_bytes"], data["busbw_bytes_per_s"] / 1e9, lw=2,
                     color="#1b9e77", label="model (predict_collective)")
    measured = None
    if len(data["measured_bytes"]):
        measured, = ax.plot(data["measured_bytes"],
                            data["measured_busbw_bytes_per_s"] / 1e9, "o",
                            color="#d95f02", ms=5, label="measured (nccl-tests)")
    p = data["prediction"]
    point, = ax.plot([data["n_bytes"]], [p.busbw_bytes_per_s / 1e9], "o", ms=10,
                     mfc="none", mec="black", mew=2)
    ax.set_xlabel("size S per rank")
    ax.set_ylabel("busbw, GB/s (per direction)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(_title(data), fontsize=9)
    return {"ax": ax, "model": model, "measured": measured, "point": point, "refused": False}


def replot(data, fig, artists):
    """Update :func:`plot`'s artists in place (see :class:`course_lib.widgets.Explorer`);
    a full redraw when measurements appear or disappear (the legend changes)."""
    if data["refused"] or artists["refused"]:
        return False
    measured = artists["measured"]
    if bool(len(data["measured_bytes"])) != (measured is not None):
        return False
    ax = artists["ax"]
    artists["model"].set_data(data["sizes_bytes"], data["busbw_bytes_per_s"] / 1e9)
    if measured is not None:
        measured.set_data(data["measured_bytes"], data["measured_busbw_bytes_per_s"] / 1e9)
    artists["point"].set_data([data["n_bytes"]],
                              [data["prediction"].busbw_bytes_per_s / 1e9])
    ax.set_autoscaley_on(True)          # plot's set_ylim(bottom=0) switched it off
    ax.relim()
    ax.autoscale_view()
    ax.set_ylim(bottom=0)
    ax.set_title(_title(data), fontsize=9)


def readout(data):
    if data["refused"]:
        return (f"<b>{data['algorithm']} does not run {data['collective']} on "
                f"{data['cluster'].describe()}</b> (the model's reason: {data['refused']}). "
                f"Pick <b>{_pick(data)}</b>"
                + (" (or auto, which chooses among them)" if "auto" in data["runs_with"]
                   and _pick(data) != "auto" else "") + ".")
    p = data["prediction"]
    return (f"<b>{format_bytes(data['n_bytes'], binary=True)}</b>: "
            f"<b>{format_time(p.time_s)}</b> with {p.algorithm}/{p.protocol} "
            f"(launch {format_time(p.launch_s)} + latency {format_time(p.latency_s)} "
            f"+ transfer {format_time(p.transfer_s)}); algbw "
            f"{format_bandwidth(p.algbw_bytes_per_s)}, busbw = algbw x "
            f"{data['factor']:.3g} = <b>{format_bandwidth(p.busbw_bytes_per_s)}</b> "
            f"per direction, {p.n_ranks} ranks.")


def diagram(data):
    """How the chosen algorithm moves the data on this machine, drawn from its
    schedule (:mod:`course_lib.draw.collectives`): the ring (first step), the
    double binary tree over the nodes (in one node: the chain), NVLS through
    the NVSwitch (one node's part when there are more), or the two
    levels (the rail step).  Other collectives than AllReduce: what they
    leave in every GPU's buffer, before and after
    (:func:`course_lib.draw.collectives.collective_effect`)."""
    if data["refused"]:        # what the collective does, whichever algorithm runs it
        clu = data["cluster"]
        return drawn.collective_effect(data["collective"],
                                       min(clu.n_ranks, drawn.MAX_RING_GPUS), of=clu.n_ranks)
    return _algorithm_drawing(data["collective"], data["system"],
                              data["prediction"].algorithm)


@lru_cache(maxsize=64)
def _algorithm_drawing(collective, system, algo):
    clu = cluster(**SYSTEMS[system][0])
    road = "network" if clu.nodes > 1 else clu.intra_link_kind
    if collective != "allreduce":
        return drawn.collective_effect(collective, min(clu.n_ranks, drawn.MAX_RING_GPUS),
                                       of=clu.n_ranks)
    if algo == "nvls":
        return drawn.nvls(min(clu.gpus_per_node, drawn.MAX_RING_GPUS), step=1,
                          nodes=clu.nodes)
    if algo == "tree" and clu.nodes > 1:
        return drawn.double_binary_tree(min(clu.nodes, 16), step=1)
    if algo == "tree":        # one node: NCCL's tree is a chain of the node's GPUs
        return drawn.tree_chain(min(clu.gpus_per_node, drawn.MAX_RING_GPUS), step=1,
                                road=clu.intra_link_kind)
    if algo == "hierarchical" and clu.nodes > 1:
        return drawn.hierarchical(min(clu.nodes, drawn.MAX_DRAWN_NODES),
                                  min(clu.gpus_per_node, 8), step=2, cluster=clu)
    if clu.nodes > 1:      # a ring over nodes: NVLink inside, the network between
        return drawn.ring_allreduce(8, step=1, road=clu.intra_link_kind,
                                    gpus_per_node=4, cluster=clu)
    return drawn.ring_allreduce(min(clu.n_ranks, 8), step=1, road=road)


def explorer() -> Explorer:
    """The collective explorer of chapter 7."""
    return Explorer("Sharing the load: a collective on a real machine", CONTROLS,
                    compute, plot, readout, figsize=(7.2, 3.6), replot=replot,
                    diagram=diagram)


# ---------------------------------------------------------------------------
# the ring, step by step
# ---------------------------------------------------------------------------
STEP_CONTROLS = {
    "n_ranks": {"type": "IntSlider", "min": 2, "max": 8, "value": 4,
                "description": "GPUs on the ring"},
    "step": {"type": "IntSlider", "min": 0, "max": 14, "value": 0,
             "description": "after step (0 = start)", "play": True,
             "play_interval": 1100, "max_from": ("n_ranks", lambda n: 2 * (n - 1))},
}


@lru_cache(maxsize=16)
def _ring_progress(n_ranks):
    """Per step 0..2(n-1): the share of S each GPU has sent, and the share of
    all copies of all chunks that hold the full sum."""
    last = 2 * (n_ranks - 1)
    full = [float((traffic.ring_allreduce_contributions(n_ranks, k) == n_ranks).mean())
            for k in range(last + 1)]
    sent = [k / n_ranks for k in range(last + 1)]
    return np.array(sent), np.array(full)


def step_compute(n_ranks, step):
    """The state of the ring after ``step`` steps (clamped to 2(n-1))."""
    last = 2 * (n_ranks - 1)
    k = min(step, last)
    schedule = traffic.ring_allreduce_schedule(n_ranks)
    sent, full = _ring_progress(n_ranks)
    return {"n_ranks": n_ranks, "step": k, "last_step": last,
            "contributions": traffic.ring_allreduce_contributions(n_ranks, k),
            "sends": schedule[k - 1] if k else [],
            "phase": (schedule[k - 1][0]["phase"] if k else "start"),
            "sent_share_by_step": sent, "complete_share_by_step": full,
            "bytes_per_rank_share": ring_allreduce_bytes_per_rank(1.0, n_ranks)}


def step_plot(data, fig):
    """Progress of the ring: the share of S each GPU has sent (it ends at
    2(n-1)/n, :func:`course_lib.ring_allreduce_bytes_per_rank`) and the share of
    chunk copies that hold the full sum, step by step; the drawing beside it
    shows the ring itself."""
    fast_layout(fig, left=0.12, right=0.97, bottom=0.16, top=0.86)
    ax = fig.add_subplot(1, 1, 1)
    n, k, last = data["n_ranks"], data["step"], data["last_step"]
    steps = np.arange(last + 1)
    ax.axvspan(0, n - 1, color="#e8f1fa", lw=0)
    ax.axvspan(n - 1, last, color="#eef7ee", lw=0)
    ax.text((n - 1) / 2, 2.02, "ReduceScatter", ha="center", va="bottom", fontsize=8)
    ax.text((n - 1) * 1.5, 2.02, "AllGather", ha="center", va="bottom", fontsize=8)
    ax.step(steps, data["sent_share_by_step"], where="post", color="#377eb8", lw=2,
            label="sent by each GPU (x S)")
    ax.plot(steps, data["complete_share_by_step"], "o-", color="#1b9e77", ms=3, lw=1.5,
            label="copies fully summed (share)")
    ax.axhline(data["bytes_per_rank_share"], color="#377eb8", ls=":", lw=1)
    marker, = ax.plot([k], [data["sent_share_by_step"][k]], "o", ms=9, mfc="none",
                      mec="black", mew=2)
    ax.set_xlim(0, max(last, 1))
    ax.set_ylim(0, 2.2)
    ax.set_xlabel("step")
    ax.legend(fontsize=8, loc="center left")
    ax.set_title(_step_title(data), fontsize=9)
    return {"ax": ax, "n_ranks": n, "marker": marker}


def _step_title(data):
    return (f"step {data['step']} of {data['last_step']} ({data['phase']}); each GPU "
            f"sends 2(n-1)/n = {data['bytes_per_rank_share']:.3g} S")


def step_replot(data, fig, artists):
    """Another step of the same ring: move the marker, retitle (the curves stay)."""
    if artists["n_ranks"] != data["n_ranks"]:
        return False
    k = data["step"]
    artists["marker"].set_data([k], [data["sent_share_by_step"][k]])
    artists["ax"].set_title(_step_title(data), fontsize=9)


def step_readout(data):
    if not data["sends"]:
        return (f"{data['n_ranks']} GPUs, each buffer cut into {data['n_ranks']} "
                "chunks. Every copy holds only its own GPU's data (1). Move the step "
                "slider.")
    sends = ", ".join(f"GPU {m['src']}&rarr;{m['dst']}: chunk {m['chunk']}"
                      for m in data["sends"])
    what = ("the receiver <b>adds</b> the chunk to its copy"
            if data["phase"] == "reduce-scatter" else
            "the receiver <b>replaces</b> its copy with the finished chunk")
    done = (" Every GPU now holds the full sum of every chunk."
            if data["step"] == data["last_step"] else "")
    return f"Step {data['step']} ({data['phase']}): {sends}; {what}.{done}"


@lru_cache(maxsize=128)
def step_diagram_at(n_ranks, step):
    return drawn.ring_allreduce(n_ranks, step=step)


def step_diagram(data):
    """The ring itself at this step: chunks moving between the GPUs
    (:func:`course_lib.draw.collectives.ring_allreduce`)."""
    return step_diagram_at(data["n_ranks"], data["step"])


def ring_steps_explorer() -> Explorer:
    """The ring AllReduce stepper of chapter 7: press ▶ to watch it."""
    return Explorer("The ring, step by step: press ▶", STEP_CONTROLS, step_compute,
                    step_plot, step_readout, figsize=(5.0, 3.0), diagram=step_diagram,
                    replot=step_replot)


FACTORIES = {"allreduce": explorer, "ring_steps": ring_steps_explorer}
