"""Lab (chapter 4): what a copy from pageable memory costs -- on the CPU alone.

A GPU's DMA engine reads host memory only when it is *pinned*: resident
(backed by physical pages) and locked (the OS promises not to move it).  For
a copy from ordinary ("pageable") memory the CUDA driver cannot hand the
pages to the engine; it copies the data, chunk by chunk, into a small pinned
*bounce* (staging) buffer of its own, and the engine takes each chunk from
there.  Every byte is handled twice, and that happens even when the pageable
buffer is fully resident -- it is the staging, not page faults, that makes
pageable copies slow (the H200 reference run, :func:`course_lib.measure.h200_copies`:
6.7-17 GB/s pageable against 55 GB/s pinned).

Without a GPU this lab times the host side of those paths:

``resident``
    one direct copy from a resident source into a resident destination: the
    single pass a DMA engine makes over pinned memory.
``staged``
    the same bytes, but moved chunk by chunk through a small bounce buffer
    (``bounce_bytes``, default 256 KiB; locked with ``mlock`` where the OS
    allows): source -> bounce, then bounce -> destination.  The first leg is
    the driver's memcpy into its staging buffer; the second stands in for
    the DMA engine's read of it.  Here one CPU core does both legs in turn;
    the driver overlaps the engine's leg with the next memcpy, so on a GPU the
    cost is closer to the slower of the two legs than to their sum.
``locked``
    the direct copy into a buffer locked with ``mlock`` (resident and pinned,
    as ``cudaHostAlloc`` makes it) -- the CPU copies no faster into it: pinning
    makes memory *safe for a DMA engine*, not faster for the CPU.  Needs
    ``RLIMIT_MEMLOCK`` room or root; where the OS refuses, the lab says so and
    goes on without it.
``fresh``
    a copy into a buffer newly mapped from the OS for *every* sample: every
    4 KiB page faults on first touch and the kernel finds and zeroes a page.
    That is the cost of first touch -- of any new allocation, pinned or not --
    and not what makes a pageable GPU copy slow (the driver's copies read
    memory the program has already written).
``pin-fresh``
    the cost of pinning itself: ``mlock`` of a freshly mapped buffer (fault
    every page in and lock it) -- why a program pins its buffers once and
    reuses them.

Each variant is swept over sizes and fitted to ``T = alpha + D / B``.  The
copies are single-threaded ``numpy.copyto`` (a ``memcpy``); bandwidths count
the bytes delivered once (one direction), so ``staged`` moves twice the bytes
it is credited with.  Before every sample the CPU caches are flushed (a read
of twice the last-level cache, untimed), so that small and large copies alike
come from and go to main memory, as a DMA engine's do; ``flush_cache=False``
shows instead how much faster copies that fit in cache are (and why they then
break the straight line of the alpha-beta model).

Taught in chapter 4 (The Freight Fleet).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from pathlib import Path

import numpy as np

from ..units import check_int, check_positive, format_bytes
from .harness import (LabResult, check_sizes, check_variants, fit_alpha_beta,
                      machine_info, progress_bar, rate_record, time_call)

__all__ = ["pageable_lab", "lock_memory", "unlock_memory", "memlock_limit_bytes",
           "staged_copy", "PAGEABLE_VARIANTS", "BOUNCE_BYTES", "PAGEABLE_FULL_SIZES",
           "PAGEABLE_QUICK_SIZES"]

PAGEABLE_VARIANTS = ("resident", "staged", "locked", "fresh", "pin-fresh")
#: Default size of the bounce buffer of the ``staged`` variant, bytes.
BOUNCE_BYTES = 256 * 2**10
#: 64 KiB .. 256 MiB, every factor of 4.
PAGEABLE_FULL_SIZES = tuple(2**k for k in range(16, 29, 2))
#: 64 KiB .. 4 MiB: a few seconds.
PAGEABLE_QUICK_SIZES = tuple(2**k for k in range(16, 23, 2))

_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        name = ctypes.util.find_library("c")
        if name is None:
            raise OSError("the C library was not found; mlock is unavailable")
        lib = ctypes.CDLL(name, use_errno=True)
        for fn in (lib.mlock, lib.munlock):
            fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            fn.restype = ctypes.c_int
        _LIBC = lib
    return _LIBC


def memlock_limit_bytes() -> float | None:
    """The soft ``RLIMIT_MEMLOCK`` of this process in bytes (``inf`` when
    unlimited), or None where the platform has no such limit."""
    try:
        import resource
    except ImportError:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return float("inf") if soft == resource.RLIM_INFINITY else float(soft)


def _address(buf: mmap.mmap) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def lock_memory(buf: mmap.mmap) -> None:
    """``mlock`` the whole of ``buf`` (an ``mmap.mmap``): fault its pages in
    and pin them.  Raises :class:`PermissionError`/:class:`OSError` with the
    reason and the ``RLIMIT_MEMLOCK`` limit when the OS refuses."""
    if not isinstance(buf, mmap.mmap):
        raise TypeError(f"buf must be an mmap.mmap, got {type(buf).__name__}")
    n = len(buf)
    if os.name != "posix":
        raise OSError("mlock is only available on POSIX systems")
    if _libc().mlock(ctypes.c_void_p(_address(buf)), ctypes.c_size_t(n)) != 0:
        err = ctypes.get_errno()
        limit = memlock_limit_bytes()
        lim = "unlimited" if limit == float("inf") else (
            "unknown" if limit is None else format_bytes(limit, binary=True))
        raise OSError(err, f"mlock of {format_bytes(n, binary=True)} refused: "
                      f"{os.strerror(err)} (RLIMIT_MEMLOCK = {lim}; raise it with "
                      f"'ulimit -l' or run with CAP_IPC_LOCK)")


def unlock_memory(buf: mmap.mmap) -> None:
    """``munlock`` the whole of ``buf``."""
    _libc().munlock(ctypes.c_void_p(_address(buf)), ctypes.c_size_t(len(buf)))


class _Mapped:
    """An anonymous mapping and a numpy view of it, closed in the right order."""

    def __init__(self, n_bytes: int, lock: bool = False, touch: bool = False):
        self.mm = mmap.mmap(-1, n_bytes)
        self.locked = False
        self.arr = np.frombuffer(self.mm, dtype=np.uint8)
        if lock:
            try:
                lock_memory(self.mm)
            except Exception:
                self.close()
                raise
            self.locked = True
        if touch:
            self.arr.fill(1)

    def close(self) -> None:
        self.arr = None          # drop the export before unmapping
        if self.locked:
            unlock_memory(self.mm)
            self.locked = False
        self.mm.close()


def last_level_cache_bytes(default: int = 32 * 2**20) -> int:
    """Size of the largest CPU cache in bytes (from Linux sysfs), or ``default``."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = f.read_text().strip().upper()
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            sizes.append(int(text.rstrip("KMG")) * mult)
        except (OSError, ValueError):
            continue
    return max(sizes) if sizes else default


class _CacheFlusher:
    """Reads a buffer twice the last-level cache to evict the copy's data."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        n = min(max(2 * last_level_cache_bytes(), 8 * 2**20), 512 * 2**20)
        self.scratch = np.ones(n // 8, dtype=np.uint64) if enabled else None
        self.n_bytes = n if enabled else 0

    def __call__(self):
        if self.enabled:
            self.scratch.max()


def staged_copy(dst: np.ndarray, src: np.ndarray, bounce: np.ndarray) -> None:
    """Copy ``src`` into ``dst`` chunk by chunk through ``bounce`` (what the
    CUDA driver does for a pageable buffer): ``src -> bounce -> dst``.

    >>> src = np.arange(10, dtype=np.uint8); dst = np.zeros(10, np.uint8)
    >>> staged_copy(dst, src, np.empty(3, np.uint8)); dst.tolist() == src.tolist()
    True
    """
    n, chunk = len(src), len(bounce)
    if len(dst) < n:
        raise ValueError(f"dst holds {len(dst)} bytes, fewer than src's {n}")
    if chunk < 1:
        raise ValueError("bounce must hold at least one byte")
    for off in range(0, n, chunk):
        k = min(chunk, n - off)
        np.copyto(bounce[:k], src[off:off + k])
        np.copyto(dst[off:off + k], bounce[:k])


def pageable_lab(sizes_bytes=None, *, quick: bool = False,
                 variants=PAGEABLE_VARIANTS, repeats: int | None = None,
                 warmup: int = 1, budget_s: float | None = None,
                 flush_cache: bool = True, progress: bool = True,
                 bounce_bytes: int = BOUNCE_BYTES) -> LabResult:
    """Direct vs staged (bounce-buffer) copies, locked and fresh buffers, the cost of pinning.

    Parameters
    ----------
    sizes_bytes : sequence of int, optional
        Buffer sizes, bytes (>= 4096 each).  Default
        :data:`PAGEABLE_FULL_SIZES` (64 KiB..256 MiB) or, with ``quick``,
        :data:`PAGEABLE_QUICK_SIZES` (64 KiB..4 MiB).
    quick : bool
        Small sizes and few repeats: seconds.
    variants : sequence of str
        Any of :data:`PAGEABLE_VARIANTS`.
    repeats : int, optional
        Samples per point (default 7, quick 5).
    warmup : int
        Untimed samples first.
    budget_s : float, optional
        Time budget per point, seconds (default 3, quick 0.5).
    flush_cache : bool
        Evict the CPU caches before every sample (untimed); default True.
    progress : bool
        Show a progress bar.
    bounce_bytes : int
        Size of the ``staged`` variant's bounce buffer, bytes (>= 4096).

    Returns
    -------
    LabResult
        Records per (variant, size) with ``bw_bytes_per_s`` (bytes delivered /
        median time, one way); fits per variant; summary with the bandwidth of
        each variant at the largest size (``<variant>_bw_bytes_per_s``),
        ``staged_over_resident`` (< 1: the price of the bounce buffer),
        ``locked_over_resident`` (about 1) and ``fresh_over_resident`` (< 1:
        the first-touch page-fault tax).

    Notes
    -----
    Fitted per variant: ``T = alpha + D / B``.  Staged, two legs in series:
    ``1/B_staged ~ 1/B_in + 1/B_out`` (each leg a memcpy).  For ``fresh`` the
    "bandwidth" folds in the page-fault rate: ``1/B_fresh ~ 1/B_copy +
    1/(page_bytes x fault rate)``.  Chapter 4.
    """
    if sizes_bytes is None:
        sizes_bytes = PAGEABLE_QUICK_SIZES if quick else PAGEABLE_FULL_SIZES
    sizes = check_sizes(sizes_bytes, minimum=4096)
    variants = check_variants(variants, PAGEABLE_VARIANTS)
    repeats = check_int(repeats if repeats is not None else (5 if quick else 7),
                        "repeats", minimum=1)
    budget_s = check_positive(budget_s if budget_s is not None else
                              (0.5 if quick else 3.0), "budget_s")
    warmup = check_int(warmup, "warmup", minimum=0)
    bounce_bytes = check_int(bounce_bytes, "bounce_bytes", minimum=4096)

    lab = "pageable"
    result = LabResult(name=lab, metadata=machine_info())
    result.metadata.update({"quick": quick, "repeats": repeats, "budget_s": budget_s,
                            "page_bytes": mmap.PAGESIZE,
                            "memlock_limit_bytes": memlock_limit_bytes(),
                            "copy": "numpy.copyto, one thread",
                            "bounce_bytes": bounce_bytes})
    if not isinstance(flush_cache, bool):
        raise TypeError(f"flush_cache must be True or False, got {flush_cache!r}")
    flush = _CacheFlusher(flush_cache)
    result.metadata["cache_flush_bytes"] = flush.n_bytes
    src = np.ones(max(sizes), dtype=np.uint8)       # resident source
    lock_failed: str | None = None
    bounce = None
    if "staged" in variants:
        try:                                        # pinned, as the driver's is
            bounce = _Mapped(bounce_bytes, lock=True, touch=True)
        except OSError:
            bounce = _Mapped(bounce_bytes, touch=True)
        result.metadata["bounce_locked"] = bounce.locked
    points = [(v, n) for n in sizes for v in variants]
    for variant, n in progress_bar(points, total=len(points), desc="pageable",
                                   disable=not progress):
        s = src[:n]
        if variant in ("locked", "pin-fresh") and lock_failed:
            continue
        timing = None

        def fresh_map(n=n):
            flush()
            return _Mapped(n)
        if variant == "fresh":
            timing = time_call(lambda m: np.copyto(m.arr, s), setup=fresh_map,
                               teardown=lambda m: m.close(),
                               warmup=warmup, repeats=repeats, budget_s=budget_s)
        elif variant == "pin-fresh":
            def lock_fresh(m):
                lock_memory(m.mm)
                m.locked = True
            try:
                timing = time_call(lock_fresh, setup=fresh_map,
                                   teardown=lambda m: m.close(), warmup=warmup,
                                   repeats=repeats, budget_s=budget_s)
            except OSError as exc:
                lock_failed = str(exc)
        else:
            try:
                buf = _Mapped(n, lock=(variant == "locked"), touch=True)
            except OSError as exc:
                lock_failed = str(exc)
                continue
            if variant == "staged":
                def copy(_, buf=buf, s=s):
                    staged_copy(buf.arr, s, bounce.arr)
            else:
                def copy(_, buf=buf, s=s):
                    np.copyto(buf.arr, s)
            try:
                timing = time_call(copy, setup=flush,
                                   warmup=warmup, repeats=repeats,
                                   budget_s=budget_s)
            finally:
                buf.close()
        if timing is None:
            continue
        result.records.append(rate_record(lab, variant, n, timing))
    if bounce is not None:
        bounce.close()
    if lock_failed:
        result.notes.append(f"locked memory not measured (at and above the size "
                            f"that failed): {lock_failed}")
    if any(r["budget_exhausted"] for r in result.records):
        result.notes.append("the time budget stopped some points before all "
                            "repeats were taken (see budget_exhausted)")
    _fit_and_summarise(result)
    return result


def _fit_and_summarise(result: LabResult) -> None:
    for v in result.variants():
        rows = result.select(v)
        if len({r["n_bytes"] for r in rows}) >= 2:
            result.fits[v] = fit_alpha_beta([r["n_bytes"] for r in rows],
                                            [r["median_s"] for r in rows])
    largest = {}
    for v in result.variants():
        rows = result.select(v)
        if rows:
            largest[v] = rows[-1]
            result.summary[f"{v.replace('-', '_')}_bw_bytes_per_s"] = \
                rows[-1]["bw_bytes_per_s"]
    if rows := [r for r in largest.values()]:
        result.summary["largest_n_bytes"] = max(r["n_bytes"] for r in rows)
    if "fresh" in largest and "resident" in largest and \
            largest["fresh"]["n_bytes"] == largest["resident"]["n_bytes"]:
        result.summary["fresh_over_resident"] = (
            largest["fresh"]["bw_bytes_per_s"] / largest["resident"]["bw_bytes_per_s"])
    for v in ("staged", "locked"):
        if v in largest and "resident" in largest and \
                largest[v]["n_bytes"] == largest["resident"]["n_bytes"]:
            result.summary[f"{v}_over_resident"] = (
                largest[v]["bw_bytes_per_s"] / largest["resident"]["bw_bytes_per_s"])
    for v, f in result.fits.items():
        key = v.replace("-", "_")
        result.summary[f"{key}_alpha_s"] = f.alpha_s
        result.summary[f"{key}_fit_bw_bytes_per_s"] = f.bw_bytes_per_s
