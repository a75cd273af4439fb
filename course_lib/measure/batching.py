"""Lab (chapter 4): many small copies vs one big copy -- the per-call overhead.

Every copy call pays a fixed cost before the first byte moves: for a GPU it is
the API call, the launch, the DMA set-up and the completion (microseconds);
here, with no GPU, it is the Python call, NumPy's argument checks and
``memcpy``'s start-up (around a microsecond).  Moving ``N`` pieces of ``d``
bytes one by one pays that cost ``N`` times; merging them into one transfer
("transfer batching", 传输合并) pays it once.

Variants:

``many-small``
    ``N`` calls of ``numpy.copyto`` on ``d``-byte pieces (views prepared in
    advance, so only the call is timed), for several ``d`` with ``N x d``
    fixed.
``one-big``
    one call copying all ``N x d`` bytes.

Records of ``many-small`` carry ``n_bytes = d`` (the piece), ``n_calls = N``,
``median_s`` (all ``N`` calls), ``per_call_s = median_s / N`` and
``per_call_overhead_s = (T_many - T_big) / N``.  The fit of ``per_call_s``
against ``d`` gives ``alpha`` (the per-call overhead) and ``B``, and the model
:func:`course_lib.analytic.batched_transfer_time_s` with those numbers is set
beside each measurement (``model_time_s``).

Taught in chapter 4 (The Freight Fleet).
"""

from __future__ import annotations

import numpy as np

from ..analytic import batched_transfer_time_s
from ..units import check_int, check_positive
from .harness import (LabResult, Timing, fit_alpha_beta, machine_info,
                      progress_bar, rate_record, time_call)

__all__ = ["batching_lab", "BATCHING_FULL", "BATCHING_QUICK"]

#: (total bytes, piece sizes): 4 MiB in pieces of 64 B .. 4 MiB.
BATCHING_FULL = (2**22, tuple(2**k for k in range(6, 23, 2)))
#: 256 KiB in pieces of 256 B .. 256 KiB.
BATCHING_QUICK = (2**18, tuple(2**k for k in range(8, 19, 2)))


def batching_lab(total_bytes: int | None = None, piece_sizes_bytes=None, *,
                 quick: bool = False, repeats: int | None = None, warmup: int = 1,
                 budget_s: float | None = None, progress: bool = True) -> LabResult:
    """Time ``N`` copies of ``d`` bytes against one copy of ``N x d`` bytes.

    Parameters
    ----------
    total_bytes : int, optional
        ``N x d``, bytes; default 4 MiB (quick: 256 KiB).
    piece_sizes_bytes : sequence of int, optional
        Piece sizes ``d``, bytes; each must divide ``total_bytes``; at most
        65536 pieces each.  Default 64 B .. 4 MiB (quick 256 B .. 256 KiB).
    quick : bool
        Small sizes, few repeats: about a second.
    repeats, warmup : int
        Samples per point and untimed samples first.
    budget_s : float, optional
        Time budget per point, seconds (default 3, quick 0.5).
    progress : bool
        Show a progress bar.

    Returns
    -------
    LabResult
        Summary: ``per_call_overhead_s`` (median over the three smallest
        pieces of ``(T_many - T_big)/N``), ``alpha_s`` and
        ``fit_bw_bytes_per_s`` from the fit, ``one_big_bw_bytes_per_s`` and
        ``slowdown_smallest`` (``T_many / T_big`` for the smallest pieces).

    Notes
    -----
    Separately ``N (alpha + d/B)``, merged ``alpha + N d/B``: the saving is
    ``(N - 1) alpha`` (:func:`course_lib.analytic.batched_transfer_time_s`).
    Chapter 4.
    """
    dflt_total, dflt_pieces = BATCHING_QUICK if quick else BATCHING_FULL
    total = check_int(total_bytes if total_bytes is not None else dflt_total,
                      "total_bytes", minimum=1)
    pieces = sorted({check_int(d, "piece_sizes_bytes", minimum=1)
                     for d in (piece_sizes_bytes if piece_sizes_bytes is not None
                               else [d for d in dflt_pieces if d <= total])})
    if not pieces:
        raise ValueError("piece_sizes_bytes must hold at least one size")
    for d in pieces:
        if total % d:
            raise ValueError(f"piece_sizes_bytes: {d} does not divide "
                             f"total_bytes={total}")
        if total // d > 65536:
            raise ValueError(f"piece_sizes_bytes: {d} makes {total // d} pieces; "
                             f"at most 65536 are allowed (raise the piece size or "
                             f"lower total_bytes)")
    repeats = check_int(repeats if repeats is not None else (5 if quick else 7),
                        "repeats", minimum=1)
    budget_s = check_positive(budget_s if budget_s is not None else
                              (0.5 if quick else 3.0), "budget_s")
    lab = "batching"
    result = LabResult(name=lab, metadata=machine_info(), plot_y="per_call_s")
    result.metadata.update({"quick": quick, "repeats": repeats, "budget_s": budget_s,
                            "total_bytes": total, "copy": "numpy.copyto, one thread"})
    src = np.ones(total, dtype=np.uint8)
    dst = np.zeros(total, dtype=np.uint8)
    copyto = np.copyto

    piece_timings = []
    for d in progress_bar(pieces, total=len(pieces), desc="batching",
                          disable=not progress):
        n = total // d
        pairs = list(zip(dst.reshape(n, d), src.reshape(n, d)))

        def many(pairs=pairs):
            for a, b in pairs:
                copyto(a, b)
        piece_timings.append((d, n, time_call(many, warmup=warmup,
                                              repeats=repeats, budget_s=budget_s)))
        del pairs
    # the single big copy last, on warm buffers, with extra warm-up
    big = time_call(lambda: copyto(dst, src), warmup=max(warmup, 3),
                    repeats=repeats, budget_s=budget_s)
    result.records.append(rate_record(lab, "one-big", total, big, n_calls=1,
                                      per_call_s=big.median_s))
    for d, n, t in piece_timings:
        result.records.append(rate_record(
            lab, "many-small", d, t, bytes_moved=total, n_calls=n,
            per_call_s=t.median_s / n,
            per_call_overhead_s=(t.median_s - big.median_s) / n))
    if not np.array_equal(dst, src):          # the copies really happened
        raise RuntimeError("batching lab: destination differs from source")
    _summarise(result, big)
    return result


def _summarise(result: LabResult, big: Timing) -> None:
    rows = result.select("many-small")
    total = result.metadata["total_bytes"]
    if len(rows) >= 2:
        fit = fit_alpha_beta([r["n_bytes"] for r in rows],
                             [r["per_call_s"] for r in rows])
        result.fits["many-small"] = fit
        for r in rows:
            r["model_time_s"] = batched_transfer_time_s(
                r["n_calls"], r["n_bytes"], fit.bw_bytes_per_s, fit.alpha_s,
                batched=False) if np.isfinite(fit.bw_bytes_per_s) else None
        result.summary["alpha_s"] = fit.alpha_s
        result.summary["fit_bw_bytes_per_s"] = fit.bw_bytes_per_s
        result.summary["fit_r_squared"] = fit.r_squared
    smallest = rows[:3]
    if smallest:
        result.summary["per_call_overhead_s"] = float(np.median(
            [r["per_call_overhead_s"] for r in smallest]))
        result.summary["slowdown_smallest"] = rows[0]["median_s"] / big.median_s
        result.summary["smallest_piece_bytes"] = rows[0]["n_bytes"]
    result.summary["one_big_bw_bytes_per_s"] = total / big.median_s
    result.summary["total_bytes"] = total
