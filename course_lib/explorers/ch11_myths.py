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

from .. import content
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
    ax.set_title(f"Myth {number} (seed {m.source.split()[1].rstrip(',')}): "
                 f"{m.verdict}; evidence from a {m.kind}", fontsize=9)


def readout(data):
    m = data["myth"]
    return (f"<b>Myth:</b> {m.claim}<br><b>Verdict: {m.verdict}.</b> {m.truth}<br>"
            f"<b>Evidence:</b> {data['evidence']['summary']}")


def explorer() -> Explorer:
    """The myth checker of chapter 11."""
    return Explorer("Rumours: check a myth against the models", CONTROLS, compute,
                    plot, readout, figsize=(7.2, 2.8))


__all__ = ["explorer"]
