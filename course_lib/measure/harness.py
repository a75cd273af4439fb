"""The timing harness every lab shares: repeat, summarise honestly, fit, save, plot.

A lab times one operation many times and keeps every sample.  What it reports
is the **median** and the **interquartile range** (``spread_s = q3_s - q1_s``,
the middle half of the samples), together with the minimum and maximum: on a
busy shared machine the spread is part of the result, and a single "best"
number would hide it.

* :func:`time_call` -- warm-up, repeats, a time budget (stops repeating when
  the budget is spent and says so in ``budget_exhausted``).
* :func:`fit_alpha_beta` -- robust least squares on ``T = alpha + D / B``
  (the alpha-beta model of :mod:`course_lib.analytic`); the graded
  pinned-vs-pageable assignment uses it.
* :func:`records_to_csv`, :func:`records_to_array`, :func:`plot_records` --
  tidy records (a list of dicts, one per measured point) to a CSV, a numpy
  structured array and a matplotlib figure.
* :class:`LabResult` -- what every lab returns: records, fits, a summary of
  headline figures, metadata and notes; ``.plot()``, ``.save()``,
  ``.to_csv()``, ``.table()``.

Taught in chapter 4 (measuring pinned and pageable memory) and used by the
labs of chapters 5 and 7.

Examples
--------
>>> t = time_call(lambda: sum(range(100)), warmup=1, repeats=5)
>>> t.n_repeats, t.median_s > 0, t.spread_s >= 0
(5, True, True)
>>> fit = fit_alpha_beta([0, 1e6, 2e6, 4e6], [1e-6, 11e-6, 21e-6, 41e-6])
>>> alpha_s, bw_bytes_per_s = fit
>>> round(alpha_s * 1e6, 6), round(bw_bytes_per_s / 1e9, 6)
(1.0, 100.0)
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..units import (binary_size_ticks, check_choice, check_int, check_nonnegative,
                     check_positive, format_bandwidth, format_bytes, format_size_tick,
                     format_time)

__all__ = [
    "check_sizes", "check_variants",
    "Timing", "time_call", "AlphaBetaFit", "fit_alpha_beta",
    "records_to_csv", "records_to_array", "plot_records", "progress_bar",
    "LabResult", "default_results_dir", "load_lab_result", "machine_info",
    "SPREAD_DEFINITION",
]

#: What ``spread_s`` means in every record of every lab.
SPREAD_DEFINITION = "interquartile range q3_s - q1_s of the samples (seconds)"


def check_sizes(sizes_bytes, minimum: int, name: str = "sizes_bytes") -> list[int]:
    """A lab's message sizes: whole numbers >= ``minimum``, sorted, duplicates
    dropped, at least one."""
    try:
        items = list(sizes_bytes)
    except TypeError:
        raise TypeError(f"{name} must be a list of sizes in bytes, got "
                        f"{type(sizes_bytes).__name__}") from None
    sizes = sorted({check_int(s, name, minimum=minimum) for s in items})
    if not sizes:
        raise ValueError(f"{name} must hold at least one size")
    return sizes


def check_variants(variants, allowed) -> tuple:
    """A lab's variants: one name or several, each one of ``allowed``."""
    if isinstance(variants, str):
        variants = (variants,)
    variants = tuple(variants)
    for v in variants:
        if v not in allowed:
            raise ValueError(f"variants must be drawn from {tuple(allowed)}; got {v!r}")
    return variants



# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------
@dataclass
class Timing:
    """Summary of the samples of one timed operation (all in seconds).

    ``spread_s`` is the interquartile range ``q3_s - q1_s``.
    ``budget_exhausted`` is True when the time budget stopped the repeats
    before ``repeats`` samples were taken.
    """

    samples_s: list[float]
    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    n_repeats: int
    budget_exhausted: bool = False

    @property
    def spread_s(self) -> float:
        return self.q3_s - self.q1_s

    @classmethod
    def from_samples(cls, samples_s: Sequence[float],
                     budget_exhausted: bool = False) -> "Timing":
        """Summarise ``samples_s`` (a non-empty sequence of seconds).

        >>> Timing.from_samples([1.0, 2.0, 3.0, 4.0, 100.0]).median_s
        3.0
        """
        s = [float(x) for x in samples_s]
        if not s:
            raise ValueError("samples_s must hold at least one sample")
        q1, med, q3 = (float(v) for v in np.percentile(s, [25, 50, 75]))
        return cls(samples_s=s, median_s=med, q1_s=q1, q3_s=q3, min_s=min(s),
                   max_s=max(s), n_repeats=len(s), budget_exhausted=budget_exhausted)

    def as_record(self) -> dict:
        """The summary as record fields (without the raw samples)."""
        return {"median_s": self.median_s, "spread_s": self.spread_s,
                "q1_s": self.q1_s, "q3_s": self.q3_s, "min_s": self.min_s,
                "max_s": self.max_s, "repeats": self.n_repeats,
                "budget_exhausted": self.budget_exhausted}


def time_call(fn: Callable, *, setup: Callable | None = None,
              teardown: Callable | None = None, warmup: int = 1,
              repeats: int = 7, number: int = 1, budget_s: float | None = None,
              min_repeats: int = 3, timer: Callable[[], float] = time.perf_counter
              ) -> Timing:
    """Time ``fn`` with warm-up, repeats and a time budget.

    Parameters
    ----------
    fn : callable
        The operation.  Called as ``fn()``, or ``fn(state)`` when ``setup``
        is given.
    setup : callable, optional
        Called before every sample (warm-up included), untimed; its return
        value is passed to ``fn`` and ``teardown``.  Use it for work that
        must be fresh each time (a newly mapped buffer).
    teardown : callable, optional
        Called after every sample, untimed, with the setup state (or none).
    warmup : int
        Untimed calls first (>= 0): caches, page tables, lazy initialisation.
    repeats : int
        Samples wanted (>= 1).
    number : int
        Calls of ``fn`` per sample (>= 1); a sample is their total time divided
        by ``number`` -- for operations shorter than the timer's overhead.
    budget_s : float, optional
        Wall-clock budget in seconds for warm-up and samples together.  Once
        spent, sampling stops after ``min_repeats`` samples and the result
        says ``budget_exhausted=True``.
    min_repeats : int
        Samples always taken, budget or not (1 <= min_repeats <= repeats).
    timer : callable
        Clock in seconds (default :func:`time.perf_counter`).

    Returns
    -------
    Timing
        Median, quartiles, min, max and every sample, in seconds per call.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    warmup = check_int(warmup, "warmup", minimum=0)
    repeats = check_int(repeats, "repeats", minimum=1)
    number = check_int(number, "number", minimum=1)
    min_repeats = check_int(min_repeats, "min_repeats", minimum=1)
    min_repeats = min(min_repeats, repeats)
    if budget_s is not None:
        budget_s = check_positive(budget_s, "budget_s")
    start = time.monotonic()
    samples: list[float] = []
    exhausted = False

    def one_sample() -> float:
        state = setup() if setup is not None else None
        try:
            if setup is None:
                t0 = timer()
                for _ in range(number):
                    fn()
                t1 = timer()
            else:
                t0 = timer()
                for _ in range(number):
                    fn(state)
                t1 = timer()
        finally:
            if teardown is not None:
                teardown(state) if setup is not None else teardown()
        return (t1 - t0) / number

    for _ in range(warmup):
        one_sample()
        if budget_s is not None and time.monotonic() - start > budget_s:
            break
    while len(samples) < repeats:
        if (budget_s is not None and len(samples) >= min_repeats
                and time.monotonic() - start > budget_s):
            exhausted = True
            break
        samples.append(one_sample())
    return Timing.from_samples(samples, budget_exhausted=exhausted)


def progress_bar(iterable: Iterable, *, total: int | None = None, desc: str = "",
                 disable: bool = False):
    """Wrap ``iterable`` in a ``tqdm.auto`` progress bar (a notebook widget in
    Jupyter, text elsewhere).  ``disable=True`` or a missing tqdm gives the
    plain iterable."""
    if disable:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a core dependency
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)


# ---------------------------------------------------------------------------
# the alpha-beta fit
# ---------------------------------------------------------------------------
class AlphaBetaFit(tuple):
    """``(alpha_s, bw_bytes_per_s)`` with the quality of the fit attached.

    Unpacks as a pair, ``alpha_s, bw = fit``, and also carries
    ``r_squared`` (on the raw times), ``residuals_s`` (measured minus
    fitted, seconds), ``relative_residuals`` and ``n_points``.
    ``bw_bytes_per_s`` is ``inf`` when the times do not grow with size.
    """

    def __new__(cls, alpha_s, bw_bytes_per_s, r_squared, residuals_s,
                relative_residuals, weighting):
        self = super().__new__(cls, (float(alpha_s), float(bw_bytes_per_s)))
        self.r_squared = float(r_squared)
        self.residuals_s = np.asarray(residuals_s, dtype=float)
        self.relative_residuals = np.asarray(relative_residuals, dtype=float)
        self.n_points = int(self.residuals_s.size)
        self.weighting = weighting
        return self

    @property
    def alpha_s(self) -> float:
        return self[0]

    @property
    def bw_bytes_per_s(self) -> float:
        return self[1]

    @property
    def half_bw_bytes(self) -> float:
        """Size at which half the fitted bandwidth is reached: ``alpha x B``."""
        return self.alpha_s * self.bw_bytes_per_s

    def predict_s(self, n_bytes):
        """Fitted time ``alpha + D / B`` for ``n_bytes`` (scalar or array)."""
        d = np.asarray(n_bytes, dtype=float)
        out = self.alpha_s + d / self.bw_bytes_per_s
        return float(out) if out.ndim == 0 else out

    def as_dict(self) -> dict:
        return {"alpha_s": self.alpha_s, "bw_bytes_per_s": self.bw_bytes_per_s,
                "r_squared": self.r_squared, "n_points": self.n_points,
                "max_abs_relative_residual": float(np.max(np.abs(
                    self.relative_residuals))) if self.n_points else math.nan,
                "weighting": self.weighting}

    def __repr__(self) -> str:
        return (f"AlphaBetaFit(alpha_s={self.alpha_s:.4g}, "
                f"bw_bytes_per_s={self.bw_bytes_per_s:.4g}, "
                f"r_squared={self.r_squared:.4f}, n_points={self.n_points})")

    def __reduce__(self):
        return (AlphaBetaFit, (self.alpha_s, self.bw_bytes_per_s, self.r_squared,
                               self.residuals_s, self.relative_residuals,
                               self.weighting))


def _wls(x, y, w, intercept=True):
    sw = np.sqrt(w)
    if intercept:
        a = np.column_stack([np.ones_like(x), x]) * sw[:, None]
        coef, *_ = np.linalg.lstsq(a, y * sw, rcond=None)
        return float(coef[0]), float(coef[1])
    denom = float(np.sum(w * x * x))
    return 0.0, (float(np.sum(w * x * y)) / denom if denom > 0 else 0.0)


def fit_alpha_beta(n_bytes, times_s, *, weighting: str = "relative",
                   robust: bool = True, max_iter: int = 50) -> AlphaBetaFit:
    """Fit ``T = alpha + D / B`` to measured times.

    Parameters
    ----------
    n_bytes : array_like
        Sizes D, bytes (>= 0); at least two distinct values.
    times_s : array_like
        Measured times T, seconds (> 0), one per size (medians, usually).
    weighting : {"relative", "absolute"}
        ``"relative"`` (default) minimises relative errors, so that a sweep
        from kilobytes to gigabytes fits its small sizes (which set alpha) as
        well as its large ones (which set B); ``"absolute"`` is ordinary least
        squares on seconds, dominated by the largest sizes.
    robust : bool
        Down-weight outliers (Huber weights, iteratively re-weighted least
        squares, scale from the median absolute deviation): one sample
        spoiled by another process on a shared machine does not drag the fit.
    max_iter : int
        Iterations of the re-weighting.

    Returns
    -------
    AlphaBetaFit
        Unpacks as ``(alpha_s, bw_bytes_per_s)``; also ``.r_squared`` (on the
        raw times), ``.residuals_s``, ``.relative_residuals``,
        ``.predict_s(n_bytes)``.  alpha is kept >= 0 (a negative intercept is
        refitted through the origin); ``bw_bytes_per_s`` is ``inf`` when the
        times do not grow with size.

    Notes
    -----
    ``T = alpha + beta D`` with ``beta = 1/B`` is linear in (alpha, beta): a
    weighted least-squares problem with weights ``1/T^2`` (relative) or 1,
    times Huber weights ``min(1, 1.345 s / |r|)`` with ``s = 1.4826 MAD(r)``.
    Chapter 4 (pinned vs pageable, the graded assignment), chapter 7 (ring
    AllReduce).

    Examples
    --------
    >>> sizes = [1e3, 1e4, 1e5, 1e6, 1e7]
    >>> times = [5e-6 + d / 2e9 for d in sizes]
    >>> times[2] *= 3                      # one disturbed sample
    >>> alpha_s, bw = fit_alpha_beta(sizes, times)
    >>> round(alpha_s * 1e6, 2), round(bw / 1e9, 2)
    (5.0, 2.0)
    """
    weighting = check_choice(weighting, "weighting", ["relative", "absolute"])
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    try:
        x = np.asarray(n_bytes, dtype=float).ravel()
        y = np.asarray(times_s, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise TypeError("n_bytes and times_s must be sequences of numbers") from exc
    if x.size != y.size:
        raise ValueError(f"n_bytes and times_s must have the same length, got "
                         f"{x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(x >= 0)):
        raise ValueError("n_bytes must be finite and >= 0")
    if not (np.all(np.isfinite(y)) and np.all(y > 0)):
        raise ValueError("times_s must be finite and > 0")
    if np.unique(x).size < 2:
        raise ValueError("n_bytes must hold at least two distinct sizes to "
                         "separate alpha from B")
    base_w = 1.0 / y**2 if weighting == "relative" else np.ones_like(y)
    scale_y = y if weighting == "relative" else np.full_like(y, np.median(y))
    h = np.ones_like(y)
    intercept = True
    alpha, beta = _wls(x, y, base_w)
    for _ in range(max_iter if robust else 0):
        r = (y - (alpha + beta * x)) / scale_y
        mad = float(np.median(np.abs(r - np.median(r))))
        s = 1.4826 * mad
        if s <= 1e-12:
            break
        c = 1.345 * s
        h_new = np.minimum(1.0, c / np.maximum(np.abs(r), 1e-300))
        alpha_new, beta_new = _wls(x, y, base_w * h_new)
        done = np.allclose([alpha_new, beta_new], [alpha, beta], rtol=1e-10,
                           atol=0.0)
        alpha, beta, h = alpha_new, beta_new, h_new
        if done:
            break
    if alpha < 0:
        intercept = False
        alpha, beta = _wls(x, y, base_w * h, intercept=False)
    if beta <= 0:
        # no measurable cost per byte: a constant time
        w = base_w * h
        alpha, beta = float(np.sum(w * y) / np.sum(w)), 0.0
    pred = alpha + beta * x
    resid = y - pred
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else math.nan
    bw = math.inf if beta == 0 else 1.0 / beta
    return AlphaBetaFit(alpha, bw, r2, resid, resid / y,
                        weighting + ("" if intercept else ", alpha fixed at 0"))


# ---------------------------------------------------------------------------
# records: CSV, numpy, plots
# ---------------------------------------------------------------------------
def _columns(records: Sequence[dict]) -> list[str]:
    cols: list[str] = []
    for rec in records:
        if not isinstance(rec, dict):
            raise TypeError(f"records must be dicts, got {type(rec).__name__}")
        for k in rec:
            if k not in cols:
                cols.append(k)
    return cols


def records_to_csv(records: Sequence[dict], path: str | os.PathLike | None = None
                   ) -> str:
    """Write records (a list of dicts) as CSV; return the CSV text.

    Columns are the union of the keys in first-seen order; a missing value is
    an empty cell.  ``path`` (optional) is written, its folder created.

    >>> print(records_to_csv([{"variant": "a", "n_bytes": 8}, {"variant": "b"}]).strip())
    variant,n_bytes
    a,8
    b,
    """
    if isinstance(records, dict) or isinstance(records, (str, bytes)):
        raise TypeError("records must be a list of dicts")
    records = list(records)
    cols = _columns(records)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for rec in records:
        w.writerow({k: ("" if v is None else v) for k, v in rec.items()
                    if not isinstance(v, (list, dict))} | {
            k: json.dumps(v) for k, v in rec.items() if isinstance(v, (list, dict))})
    text = buf.getvalue()
    if path is not None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return text


def records_to_array(records: Sequence[dict], fields: Sequence[str] | None = None
                     ) -> np.ndarray:
    """Records as a numpy structured array (one row per record).

    Numeric columns become float64 (a missing value is NaN), booleans bool,
    anything else a unicode string.  ``fields`` picks and orders columns;
    columns holding lists (raw samples) are left out unless named.

    >>> a = records_to_array([{"variant": "x", "n_bytes": 8, "median_s": 1e-6}])
    >>> a["n_bytes"][0], a["variant"][0]
    (np.float64(8.0), np.str_('x'))
    """
    records = list(records)
    cols = list(fields) if fields is not None else [
        c for c in _columns(records)
        if not any(isinstance(r.get(c), (list, dict)) for r in records)]
    dtypes = []
    for c in cols:
        vals = [r.get(c) for r in records if r.get(c) is not None]
        if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
            dtypes.append((c, bool))
        elif all(isinstance(v, (int, float, np.integer, np.floating))
                 and not isinstance(v, bool) for v in vals):
            dtypes.append((c, float))
        else:
            width = max([len(str(v)) for v in vals] + [1])
            dtypes.append((c, f"U{width}"))
    out = np.zeros(len(records), dtype=dtypes)
    for i, r in enumerate(records):
        for c, dt in dtypes:
            v = r.get(c)
            if dt is float:
                out[c][i] = math.nan if v is None else float(v)
            elif dt is bool:
                out[c][i] = bool(v)
            else:
                out[c][i] = "" if v is None else str(v)
    return out


def _readable_axes(ax, x: str, y: str, logx: bool, logy: bool) -> None:
    """Ticks a learner reads: sizes in KiB/MiB/GiB at round powers of two,
    rates in GB/s, times in s/ms/µs (no ``1e9`` anywhere)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    if x == "n_bytes" and logx:
        lo, hi = ax.get_xlim()
        ax.xaxis.set_major_locator(FixedLocator(binary_size_ticks(max(lo, 1.0), max(hi, 2.0))))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: format_size_tick(v)))
    if y.endswith("per_s"):
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _p: f"{v / 1e9:,.0f}" if v >= 1e10 else f"{v / 1e9:.3g}"))
    elif y.endswith("_s"):
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _p: format_time(v, digits=2) if v > 0 else "0"))
    if logy:
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _p: ""))


def plot_records(records: Sequence[dict], *, x: str = "n_bytes",
                 y: str = "bw_bytes_per_s", by: str = "variant", ax=None,
                 logx: bool = True, logy: bool = True, fits: dict | None = None,
                 title: str | None = None):
    """Plot ``y`` against ``x``, one line per ``by`` value, with the spread.

    Error bars show the interquartile range: for a time ``y`` it is
    ``[q1_s, q3_s]``; for a rate ``y`` (anything proportional to 1/time)
    the same quartiles turned into rates.  ``fits`` (variant -> AlphaBetaFit)
    draws the fitted ``T = alpha + D/B`` as a dashed line.  Returns the Axes.
    matplotlib is imported here, not at module import.
    """
    import matplotlib.pyplot as plt

    records = [r for r in records if r.get(x) is not None and r.get(y) is not None]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    groups: dict[Any, list[dict]] = {}
    for r in records:
        groups.setdefault(r.get(by), []).append(r)
    is_time = y.endswith("_s") and not y.endswith("per_s")
    for key, rows in groups.items():
        rows = sorted(rows, key=lambda r: r[x])
        xs = np.array([r[x] for r in rows], dtype=float)
        ys = np.array([r[y] for r in rows], dtype=float)
        lo = hi = None
        if all("q1_s" in r and "q3_s" in r and r.get("median_s") for r in rows):
            med = np.array([r["median_s"] for r in rows], dtype=float)
            q1 = np.array([r["q1_s"] for r in rows], dtype=float)
            q3 = np.array([r["q3_s"] for r in rows], dtype=float)
            if is_time:             # a time proportional to the median
                lo, hi = ys - ys * q1 / med, ys * q3 / med - ys
            else:                   # a rate proportional to 1 / median
                lo, hi = ys - ys * med / q3, ys * med / q1 - ys
            # rounding can leave -1e-22 where a quartile equals the median
            lo, hi = np.clip(lo, 0.0, None), np.clip(hi, 0.0, None)
        line = ax.errorbar(xs, ys, yerr=None if lo is None else [lo, hi],
                           marker="o", ms=4, capsize=2, label=str(key))
        model = [r.get("model_" + y) for r in rows]
        if all(m is not None for m in model):
            ax.plot(xs, np.array(model, dtype=float), ":", lw=1.2,
                    color=line[0].get_color(), label=f"{key} (model)")
        elif fits and key in fits and np.isfinite(fits[key].bw_bytes_per_s):
            fx = np.geomspace(max(xs.min(), 1.0), xs.max(), 100)
            ft = fits[key].predict_s(fx)
            fy = ft if is_time else fx / ft
            ax.plot(fx, fy, "--", lw=1, color=line[0].get_color(), alpha=0.7)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    _readable_axes(ax, x, y, logx, logy)
    ax.set_xlabel(x.replace("n_bytes", "message size"))
    ax.set_ylabel({"bw_bytes_per_s": "bandwidth (GB/s, one way)",
                   "busbw_bytes_per_s": "busbw (GB/s, one way)",
                   "median_s": "time (median; bars: IQR)",
                   "per_call_s": "time per call (median)",
                   "one_way_s": "one-way time (median; bars: IQR)"}.get(y, y))
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
def machine_info() -> dict:
    """What the numbers depend on: host, CPUs, Python, NumPy, page policy."""
    info = {"hostname": platform.node(), "platform": platform.platform(),
            "machine": platform.machine(), "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0], "numpy": np.__version__,
            "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(
                timespec="seconds")}
    try:
        info["cpus_available"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        info["loadavg_1min"] = os.getloadavg()[0]
    except (AttributeError, OSError):
        pass
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    try:
        info["transparent_hugepages"] = thp.read_text().strip()
    except OSError:
        pass
    return info


def default_results_dir() -> Path:
    """Where lab results are saved when no path is given.

    ``$COURSE_LAB_RESULTS`` if set; else ``lab_results/`` inside the course's
    ``notebooks/`` folder when the package sits in the course repository;
    else ``lab_results/`` in the current directory.
    """
    env = os.environ.get("COURSE_LAB_RESULTS")
    if env:
        return Path(env)
    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    if notebooks.is_dir():
        return notebooks / "lab_results"
    return Path.cwd() / "lab_results"


@dataclass
class LabResult:
    """What a lab returns.

    Attributes
    ----------
    name : str
        The lab (``"pageable"``, ``"batching"``, ``"kernel-bypass"``,
        ``"allreduce"``, ``"gpu-copies"``).
    records : list of dict
        One per measured point: at least ``lab``, ``variant``, ``n_bytes``,
        ``median_s``, ``spread_s`` (IQR), ``q1_s``, ``q3_s``, ``min_s``,
        ``max_s``, ``repeats``, ``budget_exhausted``, ``bw_bytes_per_s``.
    fits : dict
        Variant -> :class:`AlphaBetaFit` of ``T = alpha + D/B``.
    summary : dict
        Headline figures (SI units, names end in the unit).
    metadata : dict
        Machine, settings, library versions.
    notes : list of str
        What could not be done and why (mlock refused, budget spent...).
    skipped : str or None
        Why the whole lab was skipped (no GPU, no MPI), else None.
    """

    name: str
    records: list = field(default_factory=list)
    fits: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    skipped: str | None = None
    plot_y: str = "bw_bytes_per_s"

    # -- views --------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """The records as CSV text (raw samples left out); writes ``path`` if given."""
        return records_to_csv([self._flat(r) for r in self.records], path)

    def to_array(self, fields: Sequence[str] | None = None) -> np.ndarray:
        """The records as a numpy structured array."""
        return records_to_array(self.records, fields)

    def to_dict(self) -> dict:
        """JSON-ready: name, records, fits, summary, metadata, notes, skipped."""
        return {"lab": self.name, "skipped": self.skipped,
                "records": [_jsonable(r) for r in self.records],
                "fits": {k: _jsonable(f.as_dict()) for k, f in self.fits.items()},
                "summary": _jsonable(self.summary),
                "metadata": _jsonable(self.metadata), "notes": list(self.notes)}

    @staticmethod
    def _flat(rec: dict) -> dict:
        return {k: v for k, v in rec.items() if k != "samples_s"}

    def variants(self) -> list[str]:
        seen: list[str] = []
        for r in self.records:
            if r.get("variant") not in seen:
                seen.append(r.get("variant"))
        return seen

    def select(self, variant: str) -> list[dict]:
        """The records of one variant, sorted by size."""
        return sorted((r for r in self.records if r.get("variant") == variant),
                      key=lambda r: r.get("n_bytes", 0))

    def plot(self, y: str | None = None, ax=None, fits: bool = True, **kw):
        """Plot the records (one line per variant, IQR bars, fitted lines).
        Returns the matplotlib Axes."""
        return plot_records(self.records, y=y or self.plot_y, ax=ax,
                            fits=self.fits if fits else None,
                            title=kw.pop("title", f"lab: {self.name}"), **kw)

    def table(self) -> str:
        """A plain-text table of the records, nccl-tests style."""
        if self.skipped:
            return f"lab {self.name}: skipped -- {self.skipped}"
        lines = [f"lab {self.name}   (median of repeats; spread = IQR)",
                 f"{'variant':<22}{'size':>10}{'median':>12}{'spread':>12}"
                 f"{'bandwidth':>14}{'busbw':>14}"]
        for r in self.records:
            bw = r.get("bw_bytes_per_s")
            bb = r.get("busbw_bytes_per_s")
            lines.append(
                f"{str(r.get('variant')):<22}"
                f"{format_bytes(r.get('n_bytes', 0), binary=True):>10}"
                f"{format_time(r['median_s']):>12}{format_time(r['spread_s']):>12}"
                f"{format_bandwidth(bw) if bw else '-':>14}"
                f"{format_bandwidth(bb) if bb else '':>14}")
        for k, f in self.fits.items():
            lines.append(f"fit {k}: alpha = {format_time(f.alpha_s)}, B = "
                         f"{format_bandwidth(f.bw_bytes_per_s) if math.isfinite(f.bw_bytes_per_s) else 'inf'}"
                         f" (one way), R^2 = {f.r_squared:.4f}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    # -- files --------------------------------------------------------------
    def save(self, directory: str | os.PathLike | None = None) -> Path:
        """Write ``<name>.csv`` (records) and ``<name>.json`` (everything) into
        ``directory`` (default :func:`default_results_dir`); return the CSV path."""
        d = Path(directory) if directory is not None else default_results_dir()
        d.mkdir(parents=True, exist_ok=True)
        csv_path = d / f"{self.name}.csv"
        self.to_csv(csv_path)
        (d / f"{self.name}.json").write_text(json.dumps(self.to_dict(), indent=1))
        return csv_path

    @classmethod
    def from_dict(cls, data: dict) -> "LabResult":
        fits = {k: AlphaBetaFit(f["alpha_s"], f["bw_bytes_per_s"], f["r_squared"],
                                [], [], f.get("weighting", ""))
                for k, f in data.get("fits", {}).items()}
        for k, f in data.get("fits", {}).items():
            fits[k].n_points = int(f.get("n_points", 0))
        return cls(name=data["lab"], records=list(data.get("records", [])),
                   fits=fits, summary=dict(data.get("summary", {})),
                   metadata=dict(data.get("metadata", {})),
                   notes=list(data.get("notes", [])), skipped=data.get("skipped"))


def load_lab_result(name: str, directory: str | os.PathLike | None = None
                    ) -> LabResult:
    """Read back what :meth:`LabResult.save` wrote (``<name>.json``)."""
    d = Path(directory) if directory is not None else default_results_dir()
    p = d / f"{name}.json"
    if not p.is_file():
        raise FileNotFoundError(f"no saved result for lab {name!r} at {p}; run "
                                f"the lab and call .save() first")
    return LabResult.from_dict(json.loads(p.read_text()))


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else (None if math.isnan(v) else
                                           ("inf" if v > 0 else "-inf"))
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    return obj


def rate_record(lab: str, variant: str, n_bytes: float, timing: Timing,
                bytes_moved: float | None = None, **extra) -> dict:
    """A tidy record: lab, variant, size, the timing summary, the bandwidth
    ``bytes_moved / median_s`` (``bytes_moved`` defaults to ``n_bytes``) and
    the raw samples."""
    n_bytes = check_nonnegative(n_bytes, "n_bytes")
    moved = n_bytes if bytes_moved is None else bytes_moved
    rec = {"lab": lab, "variant": variant, "n_bytes": int(n_bytes)}
    rec.update(timing.as_record())
    rec["bw_bytes_per_s"] = moved / timing.median_s if timing.median_s > 0 else math.inf
    rec.update(extra)
    rec["samples_s"] = list(timing.samples_s)
    return rec
