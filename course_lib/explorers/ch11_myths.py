"""Chapter 11 explorer: the myth checker.

Pick one of the eight myths of the seed articles
(:data:`course_lib.content.MYTHS`); the bars are the numbers its
``evidence()`` computes from the models, the simulation of stragglers or the
measured nccl-tests curve.

>>> d = explorer().update(myth="barriers")
>>> d["evidence"]["extra_barrier_cost"] > 0
True
"""

from __future__ import annotations

from functools import lru_cache

from .. import content
from ..clusters import cluster
from ..draw import collectives as drawn
from ..draw.city import city_map, copy_path
from ..draw import timeline as drawn_timeline
from ..traffic import straggler_phase_times_s
from ..widgets import Explorer
from matplotlib.ticker import MaxNLocator

from ._common import fast_layout, time_formatter

CONTROLS = {
    "myth": {"type": "Dropdown", "value": content.MYTHS[0].key,
             "options": [(f"{i + 1}. {m.claim[:60]}...", m.key)
                         for i, m in enumerate(content.MYTHS)]},
}


def compute(myth):
    """The myth and its evidence."""
    m = content.myth(myth)
    return {"myth": m, "evidence": m.evidence()}


def plot(data, fig):
    e = data["evidence"]
    fast_layout(fig, left=0.42, bottom=0.17, top=0.88)
    ax = fig.add_subplot(1, 1, 1)
    labels = [b[0] for b in e["bars"]]
    values = [b[1] for b in e["bars"]]
    y = list(range(len(values)))[::-1]
    ax.barh(y, values, color="#1b9e77")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    if e["bar_unit"] == "s":
        ax.xaxis.set_major_formatter(time_formatter())
        ax.set_xlabel("time")
    else:
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of the bandwidth reached")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    m = data["myth"]
    number = content.myth_keys().index(m.key) + 1
    ax.set_title(f"Myth {number} ({content.source_label(m.source, short=True)}): "
                 f"{m.verdict}; evidence from a {m.kind}", fontsize=9)


def readout(data):
    m = data["myth"]
    return (f"<b>Myth:</b> {m.claim}<br><b>Verdict: {m.verdict}.</b> {m.truth}<br>"
            f"<b>Evidence:</b> {data['evidence']['summary']}")


#: Which drawing illustrates which myth (the rest: a road is two one-way tracks,
#: the number every bandwidth myth starts from).  Each is drawn once per session.
_DRAWINGS = {
    # the three roads of the myth's evidence, on one map: each serves its own places
    "nvlink_everywhere": lambda: city_map(cluster("H100", nodes=2, nic="NDR"),
                                          route=["h2d", "p2p-nvlink", "rdma"]),
    # the CPU's own copy into the staging buffer, and its work around any DMA
    "dma_cpu_idle": lambda: copy_path("pageable", gpu="H100"),
    # the same hardware, with and without the software overlapping the AllReduce
    "hardware_is_enough": lambda: drawn_timeline.training_step(cluster("H100"), 7e9, 0.5,
                                                               n_buckets=8),
    "no_domain_limit": lambda: drawn.hierarchical(
        2, 8, step=2, cluster=cluster("H100", nodes=2, nic="NDR")),
    "small_messages": lambda: drawn.ring_allreduce(8, step=1),
    # the same simulated GPUs as the myth's evidence (content._ev_barriers)
    "barriers": lambda: drawn_timeline.barrier_timeline(
        straggler_phase_times_s(8, 24, 0.01, jitter=0.1, seed=7),
        title="8 GPUs, 24 layers of 10 ms with 10 % noise"),
}


def diagram(data):
    """The myth drawn: the host, NVLink and RDMA routes on one city map for
    "NVLink everywhere", the CPU's staging copy for "DMA leaves the CPU idle", a
    training step with and without overlap for "hardware is enough", the NVLink
    domain's edge for "no domain limit", the ring's 2(n-1) latency steps for
    "small messages", the GPUs waiting at every barrier for "barriers", and for
    the others one road as two one-way tracks
    (:func:`course_lib.draw.collectives.two_way_tracks`)."""
    return _drawing(data["myth"].key if data["myth"].key in _DRAWINGS else "")


@lru_cache(maxsize=16)
def _drawing(key):
    return _DRAWINGS[key]() if key else drawn.two_way_tracks("H100")


def explorer() -> Explorer:
    """The myth checker of chapter 11."""
    return Explorer("Rumours: check a myth against the models", CONTROLS, compute,
                    plot, readout, figsize=(7.2, 2.8), diagram=diagram)


def evidence_cards(myths=None):
    """The myths with their verdicts and evidence as HTML cards: prose that wraps
    between words, in the notebook's own font (not printed monospace text).

    ``myths``: :class:`course_lib.content.Myth` records (default: all of
    :data:`course_lib.content.MYTHS`).  Returns an ``IPython.display.HTML``.

    >>> "Verdict" in evidence_cards(content.MYTHS[:1]).data
    True
    """
    import html

    from IPython.display import HTML

    myths = list(content.MYTHS if myths is None else myths)
    cards = []
    for i, m in enumerate(myths, 1):
        if not isinstance(m, content.Myth):
            raise TypeError(f"myths must be course_lib.content.Myth records, got "
                            f"{type(m).__name__}")
        e = html.escape
        cards.append(
            f"<li class='ic-myth' style='margin:0 0 0.7em 0;overflow-wrap:normal;"
            f"word-break:normal;white-space:normal'>"
            f"<b>{e(m.claim)}</b> <span style='color:#666'>({e(m.source)})</span><br>"
            f"<b>Verdict: {e(m.verdict)}.</b> {e(m.truth)}<br>"
            f"<i>Evidence ({e(m.kind)}):</i> {e(m.evidence()['summary'])}</li>")
    return HTML("<ol class='ic-myths' style='max-width:60em;line-height:1.45'>"
                + "".join(cards) + "</ol>")


__all__ = ["explorer", "evidence_cards"]
