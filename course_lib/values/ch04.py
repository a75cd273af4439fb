"""Chapter 4's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch04.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/04_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

The batching gain of N pieces of d bytes is ``N (alpha B + d) / (alpha B + N d)``:
about N only while the whole batch N d stays below alpha B, about ``1 + alpha B / d``
once it does not (1000 pieces of 4 KiB: about 90, not 1000).

>>> v = values()
>>> v["batch_gain"], v["batch_gain_limit"], v["n_pieces"]
('90×', '99×', '1000')
"""

from __future__ import annotations

from ..analytic import batched_transfer_time_s, half_bandwidth_bytes, host_copy_bw_bytes_per_s
from ..hardware import MEASURED, calibration, latency_s, pageable_extra_time_s, pageable_over_pinned
from ..hardware import pcie_bw_per_dir_bytes_per_s
from ..units import GB, GiB, KiB, MiB, format_bandwidth, format_bytes, format_time

#: The batching example: pieces and their size (chosen inputs).
N_PIECES, PIECE_BYTES = 1000, 4 * KiB
#: Exercise 1: the saving batching should fall to (a chosen share).
SAVE_TARGET = 0.10
#: Exercise 2: a data loader's tensors per step and their size (chosen inputs).
N_TENSORS, TENSOR_BYTES = 256, 64e3
#: The article's unit slip: 1 GiB read as 1 GB, at 1 GB/s.
SLIP_RATE = 1e9
#: The upload the chapter prices from each kind of memory (a chosen input).
UPLOAD_BYTES = 1 * GB


def _pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


def _pct1(x: float) -> str:
    return f"{x:.1%}".replace("%", " %")


def _x(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}g}×"


def _h200_raw_ratio(n_bytes: int, direction: str = "h2d") -> float:
    """Pinned / pageable median time at one measured size, unclamped (the H200 run)."""
    from ..measure import h200_copies

    med = {(r["variant"], r["n_bytes"]): r["median_s"] for r in h200_copies().records}
    return med[(f"{direction}-pinned", n_bytes)] / med[(f"{direction}-pageable", n_bytes)]


def _batching() -> dict[str, str]:
    alpha = latency_s("pcie_small_copy_sync")
    bw = host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    h = half_bandwidth_bytes(alpha, bw)
    n, d = N_PIECES, PIECE_BYTES
    t_sep = batched_transfer_time_s(n, d, bw, alpha, batched=False)
    t_batch = batched_transfer_time_s(n, d, bw, alpha)
    out = {"alpha": format_time(alpha), "n_pieces": f"{n}",
           "one_by_one": format_time(t_sep), "batched": format_time(t_batch),
           "alpha_x1000": format_time(n * alpha),
           "gather": format_time(pageable_extra_time_s(n * d)),
           "batch_gain": f"{t_sep / t_batch:.0f}×",
           "batch_gain_limit": f"{1 + h / d:.0f}×",
           "batch_total": format_bytes(n * d), "batch_over_h": f"{n * d / h:.0f}",
           "half_bw": format_bytes(h), "half_bw_binary": format_bytes(h, binary=True)}
    # exercise 1: the piece size at which batching saves SAVE_TARGET of the one-by-one time
    # (N-1) alpha = s N (alpha + d/B)  ->  d = alpha B ((N-1)/(s N) - 1)
    s = SAVE_TARGET
    d_save = h * ((n - 1) / (s * n) - 1)
    out.update({"save_target": _pct(s), "save_d_over_h": f"{d_save / h:.0f}",
                "save_d": format_bytes(d_save)})
    for key, piece in (("save_2mib", 2 * MiB), ("save_4mib", 4 * MiB)):
        sep = batched_transfer_time_s(n, piece, bw, alpha, batched=False)
        out[key] = _pct(1 - batched_transfer_time_s(n, piece, bw, alpha) / sep)
    # exercise 2: a data loader's 256 tensors of 64 kB
    m, t = N_TENSORS, TENSOR_BYTES
    staging = pageable_extra_time_s(t)
    gather = pageable_extra_time_s(m * t)
    t_a = m * (alpha + t / bw + staging)
    t_b = batched_transfer_time_s(m, t, bw, alpha, batched=False)
    t_c = batched_transfer_time_s(m, t, bw, alpha)
    t_cg = batched_transfer_time_s(m, t, bw, alpha, gather_time_s=gather)
    out.update({"n_tensors": f"{m}", "tensor": format_bytes(t), "tensors_total": format_bytes(m * t),
                "ex2_staging": format_time(staging), "ex2_pageable": format_time(t_a),
                "ex2_pinned": format_time(t_b), "ex2_batched": format_time(t_c),
                "ex2_batched_gain": _x(t_a / t_c, 1), "ex2_gather": format_time(gather),
                "ex2_gathered": format_time(t_cg), "ex2_gathered_gain": _x(t_a / t_cg)})
    return out


def values() -> dict[str, str]:
    spec = pcie_bw_per_dir_bytes_per_s(5)
    sync, queued = latency_s("pcie_small_copy_sync"), latency_s("pcie_small_copy")
    from ..measure import h200_copies

    h200 = h200_copies().summary["h2d_pinned_bw_bytes_per_s"]
    out = {
        # pinned and pageable
        "dma_eff": _pct(calibration("pcie_dma_efficiency")),
        "r_catalog": f"{MEASURED['pageable_over_pinned_x86'].value:g}",
        "r_1k_faster": _pct(_h200_raw_ratio(KiB) - 1),
        "r_64k": f"{pageable_over_pinned(64 * KiB):.2f}",
        "r_1m": f"{pageable_over_pinned(MiB):.2f}",
        "r_1g": f"{pageable_over_pinned(GiB):.2f}",
        "slow_1m": f"{1 / pageable_over_pinned(MiB):.0f}×",
        "slow_1g": f"{1 / pageable_over_pinned(GiB):.0f}×",
        "upload": format_bytes(UPLOAD_BYTES),
        # the H200 reference run
        "h200_pinned": format_bandwidth(h200, digits=2),
        "h200_share": _pct(h200 / spec),
        "pcie5_spec": format_bandwidth(spec, digits=2),
        "d2h_extra": f"{pageable_extra_time_s(KiB, 'd2h') * 1e6:.0f} µs",
        # the article's "DMA setup"
        "alpha_queued": format_time(queued), "alpha_host": format_time(sync - queued),
        "slip_share": _pct1(GiB / GB - 1), "slip_rate": format_bandwidth(SLIP_RATE),
        "slip_right": f"{GiB / SLIP_RATE:.3f} s", "slip_wrong": format_time(GB / SLIP_RATE),
    }
    out.update(_batching())
    return out
