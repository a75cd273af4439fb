"""What a lab measured, as a learner reads it: a small table with units and a
sentence that says what it shows.

A chapter cell ends with ``measure.summary_table(result)`` (or
``measure.fits_table(result)``); the notebook shows an HTML table (plain text
where there is no HTML), never a dict of the lab's internal keys.

>>> t = Table("Two copies.", ["copy", "bandwidth"], [["direct", "1 GB/s"], ["staged", "0.5 GB/s"]])
>>> print(t)
Two copies.
copy    bandwidth
direct  1 GB/s
staged  0.5 GB/s
>>> "<th>bandwidth</th>" in t._repr_html_()
True
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from ..analytic import batched_transfer_time_s
from ..hardware import LATENCIES, pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth, format_bytes, format_time

__all__ = ["Table", "summary_table", "fits_table", "VARIANT_NAMES"]

#: What each variant of the labs is, in the words of chapter 4.
VARIANT_NAMES = {
    "resident": "direct copy (memory already in place: one pass, as a DMA engine makes)",
    "staged": "through a small bounce buffer (what the driver does with pageable memory)",
    "locked": "into locked (mlock-ed) memory",
    "fresh": "into brand-new memory (every page faults on first touch)",
    "pin-fresh": "pinning brand-new memory (fault every page in and lock it)",
    "many-small": "many small copies, one call each",
    "one-big": "one copy of everything",
    "h2d-pinned": "host to GPU, pinned",
    "d2h-pinned": "GPU to host, pinned",
    "h2d-pageable": "host to GPU, pageable",
    "d2h-pageable": "GPU to host, pageable",
    "d2d": "inside the GPU",
}


@dataclass
class Table:
    """A caption (what the table shows, one or two sentences), a header and rows of
    already formatted cells (numbers with their units)."""

    caption: str
    header: list
    rows: list
    notes: list = field(default_factory=list)

    def __post_init__(self):
        widths = {len(r) for r in self.rows}
        if self.rows and widths != {len(self.header)}:
            raise ValueError(f"rows must have {len(self.header)} cells like the header, "
                             f"got {sorted(widths)}")

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f"<th>{e(str(h))}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>"
                       for row in self.rows)
        notes = "".join(f"<p><small>{e(n)}</small></p>" for n in self.notes)
        return (f"<div class='ic-lab-table'><p>{e(self.caption)}</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"{notes}</div>")

    def __str__(self) -> str:
        cols = list(zip(*([self.header] + self.rows)))
        widths = [max(len(str(c)) for c in col) for col in cols]
        lines = [self.caption]
        for row in [self.header] + self.rows:
            lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        return "\n".join(lines + self.notes)

    __repr__ = __str__


def _name(variant: str) -> str:
    return VARIANT_NAMES.get(variant, variant)


def _bw(b: float) -> str:
    return format_bandwidth(b) if b and math.isfinite(b) else "-"


def fits_table(result) -> Table:
    """``T = alpha + D / B`` fitted to each variant of ``result``: start-up, bandwidth
    and how well the straight line fits."""
    rows = [[_name(v), format_time(f.alpha_s), _bw(f.bw_bytes_per_s), f"{f.r_squared:.3f}"]
            for v, f in result.fits.items()]
    what = ""
    if result.name == "pageable" and result.records:
        smallest = min(r["n_bytes"] for r in result.records)
        # the pageable lab flushes the caches before every copy and starts at 64 KiB: its
        # alpha is the fitted line's intercept, a cold copy's ramp-up, not a call's cost
        what = (f" Here alpha is where the line fitted from {format_bytes(smallest, binary=True)} "
                "up meets zero bytes, with the caches flushed before every copy: what a cold "
                "copy pays before it streams (cache and TLB misses, main-memory latency; page "
                "faults for brand-new memory), not the cost of one call, which the batching "
                "lab measures on warm data.")
    return Table(f"The model T = alpha + D / B fitted to your {result.name} run, one line per "
                 "kind of copy: the start-up alpha each copy pays, the bandwidth B it then "
                 "runs at, and R^2 (1 = the points lie on the straight line)." + what,
                 ["copy", "start-up alpha", "bandwidth B", "R^2"], rows, list(result.notes))


def _pageable(result) -> Table:
    s = result.summary
    largest = s.get("largest_n_bytes")
    base = s.get("resident_bw_bytes_per_s")
    rows = []
    for v in result.variants():
        bw = s.get(f"{v.replace('-', '_')}_bw_bytes_per_s")
        if bw is None:
            continue
        share = f"{bw / base:.2f} x" if base and v != "resident" else "1 (the yardstick)"
        rows.append([_name(v), _bw(bw), share])
    staged = s.get("staged_over_resident")
    say = ""
    if staged is not None and staged < 0.95:
        say = (f" The copy through the bounce buffer keeps {staged:.0%} of the direct copy's "
               "bandwidth: it moves every byte twice.")
    elif staged is not None:
        say = (f" The copy through the bounce buffer kept {staged:.0%} of the direct copy's "
               "bandwidth this time; it moves every byte twice, so a share near or above "
               "100 % means the machine was busy: run the cell again.")
    return Table(f"What your machine measured at {format_bytes(largest, binary=True)} per copy "
                 f"(one core, caches flushed), each kind of copy against the direct one.{say}",
                 ["copy", "bandwidth", "against the direct copy"], rows, list(result.notes))


def _batching(result) -> Table:
    s = result.summary
    fit = result.fits.get("many-small")
    rows = [["total moved", format_bytes(s["total_bytes"], binary=True)],
            ["smallest piece", format_bytes(s["smallest_piece_bytes"], binary=True)],
            ["start-up per call, measured (alpha)", format_time(s["alpha_s"])],
            ["bandwidth of one big copy", _bw(s["one_big_bw_bytes_per_s"])],
            ["many small copies against one big, measured",
             f"{s['slowdown_smallest']:.1f} x slower"]]
    if fit is not None:
        n = int(s["total_bytes"] // s["smallest_piece_bytes"])
        piece = s["smallest_piece_bytes"]
        model = (batched_transfer_time_s(n, piece, fit.bw_bytes_per_s, fit.alpha_s, batched=False)
                 / batched_transfer_time_s(n, piece, fit.bw_bytes_per_s, fit.alpha_s))
        rows.append([f"the same, the model with your alpha and B ({n:,} pieces)",
                     f"{model:.1f} x slower"])
    return Table("Batching on your machine: the same bytes as one copy or as many small ones. "
                 "Each small copy pays the start-up again; the model N (alpha + d/B) against "
                 "alpha + N d/B, with the alpha and B you measured, says how much.",
                 ["what", "measured"], rows, list(result.notes))


def _copies(result) -> Table:
    s, meta = result.summary, result.metadata
    line = pcie_bw_per_dir_bytes_per_s(meta["pcie_gen"], meta.get("pcie_lanes", 16))
    peak = s.get("pageable_h2d_peak_n_bytes")
    pinned_at_peak = next((r["bw_bytes_per_s"] for r in result.select("h2d-pinned")
                           if r["n_bytes"] == peak), None)
    rows = [["host to GPU, pinned, 1 GiB", _bw(s["h2d_pinned_bw_bytes_per_s"]),
             f"{s['h2d_pinned_bw_bytes_per_s'] / line:.0%} of the PCIe line rate"]]
    if peak and pinned_at_peak:
        rows.append([f"host to GPU, pageable, at its best ({format_bytes(peak, binary=True)})",
                     _bw(s["pageable_h2d_peak_bw_bytes_per_s"]),
                     f"{s['pageable_h2d_peak_bw_bytes_per_s'] / pinned_at_peak:.2f} x pinned there"])
    rows.append(["host to GPU, pageable, 1 GiB", _bw(s["h2d_pageable_bw_bytes_per_s"]),
                 f"{s['pageable_over_pinned_h2d']:.2f} x pinned"])
    rows.append(["GPU to host, pageable, 1 GiB", _bw(s["d2h_pageable_bw_bytes_per_s"]), ""])
    gpu = meta.get("gpu", "the GPU")
    return Table(f"Copies between host and {gpu} over PCIe Gen{meta['pcie_gen']} "
                 f"x{meta.get('pcie_lanes', 16)} (line rate {_bw(line)} per direction): pinned "
                 "memory runs near the line rate, pageable memory far below it.",
                 ["copy", "bandwidth", "compared"], rows, list(result.notes))


_SUMMARIES = {"pageable": _pageable, "batching": _batching, "gpu-copies": _copies}


def summary_table(result) -> Table:
    """The headline numbers of a lab run (``pageable``, ``batching``, ``gpu-copies``)
    as a table with units and a sentence saying what it shows."""
    if result.skipped:
        return Table(f"The {result.name} lab was skipped: {result.skipped}", ["", ""], [])
    try:
        make = _SUMMARIES[result.name]
    except KeyError:
        raise ValueError(f"result must come from one of the labs {sorted(_SUMMARIES)}, "
                         f"got lab {result.name!r}") from None
    return make(result)


def latency_table(names, caption: str) -> Table:
    """The catalog's latencies ``names`` as a table: the figure with its unit, what it
    is (the catalog's note) and where it comes from -- instead of a dict of the
    catalog's internal names.

    >>> t = latency_table(["cuda_api_call"], "One call into the CUDA runtime.")
    >>> t.header
    ['cl.latency_s name', 'time', 'what it is', 'source']
    >>> latency_table(["no_such_figure"], "x")
    Traceback (most recent call last):
    ...
    ValueError: names: 'no_such_figure' is not in the catalog's latencies (cl.LATENCIES)
    """
    rows = []
    for name in names:
        if name not in LATENCIES:
            raise ValueError(f"names: {name!r} is not in the catalog's latencies (cl.LATENCIES)")
        fact = LATENCIES[name]
        rows.append([name, format_time(fact.value), fact.note, fact.source])
    return Table(caption, ["cl.latency_s name", "time", "what it is", "source"], rows)
