"""Lab (chapters 3, 4, 7): host<->device copies, device bandwidth, P2P and NCCL on a GPU.

Needs CuPy (``pip install cupy-cuda12x``) and an NVIDIA GPU; without them
:func:`gpu_copies_lab` returns a result whose ``skipped`` says why, and the
command line prints that reason and exits 0.

Variants (each swept over sizes; bandwidth = bytes copied / time, one way):

``h2d-pinned``, ``d2h-pinned``
    host<->device copies from page-locked host memory
    (``cupy.cuda.alloc_pinned_memory``): the DMA engine reads it directly.
``h2d-pageable``, ``d2h-pageable``
    the same from an ordinary (resident) NumPy array: the driver stages it
    through its own pinned buffer.
``d2d``
    a copy inside the GPU's memory (it reads ``n`` and writes ``n`` bytes;
    the bandwidth counts ``n``).
``small-h2d-pinned-wall``
    end-to-end latency of tiny pinned copies, by the host clock: call,
    launch, DMA, completion (what the seeds call "DMA set-up").
``p2p-<i>to<j>``
    with two or more GPUs, ``cudaMemcpyPeerAsync`` between devices 0 and 1
    (over NVLink or PCIe, whichever joins them; ``peer_access`` says whether
    direct access was enabled).
``nccl-<n>gpus``
    with two or more GPUs, an NCCL AllReduce (``cupy.cuda.nccl``, one process
    driving all devices), reported like nccl-tests (algbw, busbw).

Copies are timed with CUDA events on one stream (``number`` copies between
two events); the NCCL sweep by the host clock after synchronising every
stream, as nccl-tests does.  The summary checks the target: pinned H2D
reaches at least 90 % of the best host<->device copy of the same run
(``pinned_h2d_fraction_of_best``, ``pinned_h2d_target_met``), both taken at
their best size.

Taught in chapter 3 (PCIe), 4 (pinned memory) and 7 (NCCL AllReduce).
"""

from __future__ import annotations

import time

import numpy as np

from ..analytic import busbw_bytes_per_s
from ..units import check_int, check_positive
from .harness import (LabResult, Timing, check_sizes, check_variants, fit_alpha_beta,
                      machine_info, progress_bar)

__all__ = ["gpu_copies_lab", "gpu_available", "copies_per_sample",
           "summarise_gpu_records", "GPU_FULL_SIZES", "GPU_QUICK_SIZES",
           "GPU_COPY_VARIANTS", "PINNED_TARGET_FRACTION"]

#: 1 KiB .. 1 GiB, every factor of 4.
GPU_FULL_SIZES = tuple(4**k for k in range(5, 16))
#: 1 KiB, 64 KiB, 4 MiB, 64 MiB.
GPU_QUICK_SIZES = (2**10, 2**16, 2**22, 2**26)
GPU_COPY_VARIANTS = ("h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable",
                     "d2d")
#: Pinned H2D should reach this share of the best host<->device copy.
PINNED_TARGET_FRACTION = 0.9
_SMALL_SIZES = (8, 64, 512, 4096)


def gpu_available() -> tuple[bool, str, int]:
    """``(ok, reason, n_devices)``: whether CuPy imports and sees a CUDA device.

    Never raises: a missing CuPy, a missing driver or zero devices give
    ``(False, reason, 0)``.
    """
    try:
        import cupy
    except Exception as exc:   # ImportError, or a broken CUDA install
        return False, (f"CuPy is not available ({type(exc).__name__}: {exc}); "
                       f"install it with: pip install cupy-cuda12x"), 0
    try:
        n = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:
        return False, f"CuPy found no usable CUDA device ({exc})", 0
    if n < 1:
        return False, "CuPy sees no CUDA device", 0
    return True, "", n


def copies_per_sample(n_bytes: int, target_bytes: int = 2**26,
                      max_copies: int = 50) -> int:
    """Copies timed between two events for one sample: enough that a sample
    moves about ``target_bytes`` (so tiny copies are not lost in the event
    resolution), at least 1 and at most ``max_copies``.

    >>> copies_per_sample(1024), copies_per_sample(2**26), copies_per_sample(2**30)
    (50, 1, 1)
    """
    n = check_int(n_bytes, "n_bytes", minimum=1)
    t = check_int(target_bytes, "target_bytes", minimum=1)
    m = check_int(max_copies, "max_copies", minimum=1)
    return int(max(1, min(m, t // n)))


def summarise_gpu_records(records: list[dict]) -> dict:
    """Headline figures from the records of a GPU run (pure; no GPU needed).

    Returns the bandwidth of every variant at its largest size
    (``<variant>_bw_bytes_per_s``), ``best_copy_bw_bytes_per_s`` (the best
    host<->device copy, any direction, pinned or not, at any size),
    ``pinned_h2d_fraction_of_best`` (the best pinned H2D over that) and
    ``pinned_h2d_target_met`` (>= :data:`PINNED_TARGET_FRACTION`), and
    ``pageable_over_pinned_h2d`` (at the largest size).

    >>> recs = [{"variant": "h2d-pinned", "n_bytes": 2**30, "bw_bytes_per_s": 50e9},
    ...         {"variant": "d2h-pinned", "n_bytes": 2**30, "bw_bytes_per_s": 52e9},
    ...         {"variant": "h2d-pageable", "n_bytes": 2**30, "bw_bytes_per_s": 20e9}]
    >>> s = summarise_gpu_records(recs)
    >>> round(s["pinned_h2d_fraction_of_best"], 3), s["pinned_h2d_target_met"]
    (0.962, True)
    >>> s["pageable_over_pinned_h2d"]
    0.4
    """
    out: dict = {}
    largest: dict[str, dict] = {}
    for r in records:
        v = r.get("variant")
        if v is None or r.get("bw_bytes_per_s") is None:
            continue
        if v not in largest or r["n_bytes"] > largest[v]["n_bytes"]:
            largest[v] = r
    for v, r in largest.items():
        out[f"{v.replace('-', '_')}_bw_bytes_per_s"] = r["bw_bytes_per_s"]
    copies = [r["bw_bytes_per_s"] for r in records
              if r.get("variant") in ("h2d-pinned", "d2h-pinned", "h2d-pageable",
                                      "d2h-pageable")]
    if copies:
        best = max(copies)
        out["best_copy_bw_bytes_per_s"] = best
        pinned_h2d = [r["bw_bytes_per_s"] for r in records
                      if r.get("variant") == "h2d-pinned"]
        if pinned_h2d:
            frac = max(pinned_h2d) / best
            out["pinned_h2d_fraction_of_best"] = frac
            out["pinned_h2d_target_met"] = bool(frac >= PINNED_TARGET_FRACTION)
    if "h2d-pinned" in largest and "h2d-pageable" in largest:
        out["pageable_over_pinned_h2d"] = (largest["h2d-pageable"]["bw_bytes_per_s"]
                                           / largest["h2d-pinned"]["bw_bytes_per_s"])
    small = [r for r in records if r.get("variant") == "small-h2d-pinned-wall"]
    if small:
        out["small_copy_latency_s"] = min(small, key=lambda r: r["n_bytes"])["median_s"]
    return out


def _record(variant, n_bytes, timing: Timing, **extra) -> dict:
    rec = {"lab": "gpu-copies", "variant": variant, "n_bytes": int(n_bytes)}
    rec.update(timing.as_record())
    rec["bw_bytes_per_s"] = n_bytes / timing.median_s
    rec.update(extra)
    rec["samples_s"] = list(timing.samples_s)
    return rec


def _sample_loop(one_sample, warmup: int, repeats: int, budget_s: float) -> Timing:
    start = time.monotonic()
    for _ in range(warmup):
        one_sample()
    samples, exhausted = [], False
    while len(samples) < repeats:
        if len(samples) >= 3 and time.monotonic() - start > budget_s:
            exhausted = True
            break
        samples.append(one_sample())
    return Timing.from_samples(samples, budget_exhausted=exhausted)


def gpu_copies_lab(sizes_bytes=None, *, quick: bool = False, device: int = 0,
                   variants=GPU_COPY_VARIANTS, repeats: int | None = None,
                   warmup: int = 2, budget_s: float | None = None,
                   multi_gpu: bool = True, progress: bool = True) -> LabResult:
    """Pinned vs pageable copies, device bandwidth, small-copy latency, P2P, NCCL.

    Parameters
    ----------
    sizes_bytes : sequence of int, optional
        Copy sizes, bytes.  Default :data:`GPU_FULL_SIZES` (1 KiB .. 1 GiB),
        quick :data:`GPU_QUICK_SIZES` (up to 64 MiB).
    quick : bool
        Fewer sizes and repeats.
    device : int
        The CUDA device for the single-GPU variants.
    variants : sequence of str
        Any of :data:`GPU_COPY_VARIANTS`.
    repeats : int, optional
        Samples per point (default 7, quick 3).
    warmup : int
        Untimed samples first.
    budget_s : float, optional
        Time budget per point, seconds (default 2, quick 0.5).
    multi_gpu : bool
        With two or more devices, also run P2P copies and an NCCL AllReduce.
    progress : bool
        Show a progress bar.

    Returns
    -------
    LabResult
        ``skipped`` holds the reason when there is no CuPy or GPU.  Else the
        records, fits (alpha-beta per copy variant) and
        :func:`summarise_gpu_records`' summary.
    """
    if sizes_bytes is None:
        sizes_bytes = GPU_QUICK_SIZES if quick else GPU_FULL_SIZES
    sizes = check_sizes(sizes_bytes, minimum=4)
    variants = check_variants(variants, GPU_COPY_VARIANTS)
    repeats = check_int(repeats if repeats is not None else (3 if quick else 7),
                        "repeats", minimum=1)
    warmup = check_int(warmup, "warmup", minimum=0)
    budget_s = check_positive(budget_s if budget_s is not None else
                              (0.5 if quick else 2.0), "budget_s")
    device = check_int(device, "device", minimum=0)
    result = LabResult(name="gpu-copies", metadata=machine_info())
    ok, why, n_dev = gpu_available()
    if not ok:
        result.skipped = why
        return result
    if device >= n_dev:
        raise ValueError(f"device must be < {n_dev} (the devices CuPy sees), "
                         f"got {device}")
    import cupy as cp

    result.metadata.update({"quick": quick, "repeats": repeats, "n_devices": n_dev,
                            "cupy": cp.__version__,
                            "timer": "CUDA events (copies); host clock (NCCL, "
                                     "small-copy latency)"})
    with cp.cuda.Device(device):
        props = cp.cuda.runtime.getDeviceProperties(device)
        name = props.get("name", b"")
        result.metadata["device_name"] = (name.decode() if isinstance(name, bytes)
                                          else str(name))
        result.metadata["pci_bus_id"] = props.get("pciBusID")
        _single_gpu(cp, result, sizes, variants, repeats, warmup, budget_s,
                    progress)
    if multi_gpu and n_dev >= 2:
        try:
            _p2p(cp, result, sizes, repeats, warmup, budget_s, progress)
        except Exception as exc:        # report, do not lose the copies
            result.notes.append(f"P2P copies failed: {type(exc).__name__}: {exc}")
        try:
            _nccl(cp, result, n_dev, sizes, repeats, warmup, budget_s, progress)
        except Exception as exc:
            result.notes.append(f"NCCL AllReduce failed: {type(exc).__name__}: {exc}")
    elif n_dev < 2:
        result.notes.append("one GPU: no P2P copies and no NCCL AllReduce")
    for v in result.variants():
        rows = result.select(v)
        if v.startswith("nccl") or len(rows) < 2:
            continue
        result.fits[v] = fit_alpha_beta([r["n_bytes"] for r in rows],
                                        [r["median_s"] for r in rows])
    result.summary.update(summarise_gpu_records(result.records))
    for v, f in result.fits.items():
        result.summary[f"{v.replace('-', '_')}_alpha_s"] = f.alpha_s
    return result


def _single_gpu(cp, result, sizes, variants, repeats, warmup, budget_s, progress):
    rt = cp.cuda.runtime
    n_max = max(sizes)
    stream = cp.cuda.Stream(non_blocking=True)
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    dev_a = cp.empty(n_max, dtype=cp.uint8)
    dev_b = cp.empty(n_max, dtype=cp.uint8)
    dev_a.fill(1)
    pinned_mem = cp.cuda.alloc_pinned_memory(n_max)
    pinned = np.frombuffer(pinned_mem, dtype=np.uint8, count=n_max)
    pinned.fill(2)
    pageable = np.full(n_max, 3, dtype=np.uint8)       # resident pageable
    kinds = {
        "h2d-pinned": (dev_a.data.ptr, pinned.ctypes.data, rt.memcpyHostToDevice),
        "d2h-pinned": (pinned.ctypes.data, dev_a.data.ptr, rt.memcpyDeviceToHost),
        "h2d-pageable": (dev_a.data.ptr, pageable.ctypes.data, rt.memcpyHostToDevice),
        "d2h-pageable": (pageable.ctypes.data, dev_a.data.ptr, rt.memcpyDeviceToHost),
        "d2d": (dev_b.data.ptr, dev_a.data.ptr, rt.memcpyDeviceToDevice),
    }
    points = [(v, n) for v in variants for n in sizes]
    try:
        for v, n in progress_bar(points, total=len(points), desc="gpu copies",
                                 disable=not progress):
            dst, src, kind = kinds[v]
            k = copies_per_sample(n)

            def one(dst=dst, src=src, kind=kind, n=n, k=k):
                ev0.record(stream)
                for _ in range(k):
                    rt.memcpyAsync(dst, src, n, kind, stream.ptr)
                ev1.record(stream)
                ev1.synchronize()
                return cp.cuda.get_elapsed_time(ev0, ev1) * 1e-3 / k
            t = _sample_loop(one, warmup, repeats, budget_s)
            result.records.append(_record(v, n, t, copies_per_sample=k))
        # end-to-end small-copy latency by the host clock
        for n in _SMALL_SIZES:
            def one_wall(n=n, k=100):
                t0 = time.perf_counter()
                for _ in range(k):
                    rt.memcpyAsync(dev_a.data.ptr, pinned.ctypes.data, n,
                                   rt.memcpyHostToDevice, stream.ptr)
                    stream.synchronize()
                return (time.perf_counter() - t0) / k
            t = _sample_loop(one_wall, warmup, repeats, budget_s)
            result.records.append(_record("small-h2d-pinned-wall", n, t,
                                          copies_per_sample=100))
    finally:
        stream.synchronize()        # buffers are freed when this returns


def _p2p(cp, result, sizes, repeats, warmup, budget_s, progress):
    rt = cp.cuda.runtime
    src_dev, dst_dev = 0, 1
    can = bool(rt.deviceCanAccessPeer(dst_dev, src_dev))
    if can:
        with cp.cuda.Device(dst_dev):
            try:
                rt.deviceEnablePeerAccess(src_dev)
            except Exception:                 # already enabled
                pass
    n_max = max(sizes)
    with cp.cuda.Device(src_dev):
        a = cp.ones(n_max, dtype=cp.uint8)
        stream = cp.cuda.Stream(non_blocking=True)
        ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    with cp.cuda.Device(dst_dev):
        b = cp.empty(n_max, dtype=cp.uint8)
    variant = f"p2p-{src_dev}to{dst_dev}"
    with cp.cuda.Device(src_dev):
        for n in progress_bar(sizes, total=len(sizes), desc="p2p",
                              disable=not progress):
            k = copies_per_sample(n)

            def one(n=n, k=k):
                ev0.record(stream)
                for _ in range(k):
                    rt.memcpyPeerAsync(b.data.ptr, dst_dev, a.data.ptr, src_dev,
                                       n, stream.ptr)
                ev1.record(stream)
                ev1.synchronize()
                return cp.cuda.get_elapsed_time(ev0, ev1) * 1e-3 / k
            t = _sample_loop(one, warmup, repeats, budget_s)
            result.records.append(_record(variant, n, t, copies_per_sample=k,
                                          peer_access=can))
    if not bool((b[:min(n_max, 1024)] == 1).all()):
        result.notes.append("P2P copy check failed: destination differs")


def _nccl(cp, result, n_dev, sizes, repeats, warmup, budget_s, progress):
    from cupy.cuda import nccl
    if not getattr(nccl, "available", True):
        result.notes.append("CuPy was built without NCCL: no NCCL AllReduce")
        return
    devs = list(range(n_dev))
    comms = nccl.NcclCommunicator.initAll(devs)
    streams, sends, recvs = [], [], []
    counts = [max(1, s // 4) for s in sizes]
    for i in devs:
        with cp.cuda.Device(i):
            streams.append(cp.cuda.Stream(non_blocking=True))
            sends.append(cp.full(max(counts), i + 1, dtype=cp.float32))
            recvs.append(cp.zeros(max(counts), dtype=cp.float32))
    variant = f"nccl-{n_dev}gpus"
    expected = n_dev * (n_dev + 1) / 2
    try:
        for count in progress_bar(counts, total=len(counts), desc="nccl",
                                  disable=not progress):
            n_bytes = 4 * count

            def run(k):
                for _ in range(k):
                    nccl.groupStart()      # one call per device, one collective
                    for i, comm in enumerate(comms):
                        with cp.cuda.Device(i):
                            comm.allReduce(sends[i].data.ptr, recvs[i].data.ptr,
                                           count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                                           streams[i].ptr)
                    nccl.groupEnd()

            k = copies_per_sample(n_bytes, max_copies=20)

            def one(k=k):
                t0 = time.perf_counter()
                run(k)
                for i, s in enumerate(streams):
                    with cp.cuda.Device(i):
                        s.synchronize()
                return (time.perf_counter() - t0) / k
            t = _sample_loop(one, warmup, repeats, budget_s)
            wrong = 0
            for i in devs:
                with cp.cuda.Device(i):
                    wrong += int((recvs[i][:count] != expected).sum())
            rec = _record(variant, n_bytes, t, n_ranks=n_dev,
                          algbw_bytes_per_s=n_bytes / t.median_s,
                          busbw_bytes_per_s=busbw_bytes_per_s(
                              "allreduce", n_bytes, t.median_s, n_dev),
                          wrong=wrong)
            rec["bw_bytes_per_s"] = rec["busbw_bytes_per_s"]
            result.records.append(rec)
    finally:
        for c in comms:
            try:
                c.destroy()
            except Exception:
                pass
    rows = result.select(variant)
    if rows:
        result.summary[f"nccl_{n_dev}gpus_busbw_bytes_per_s"] = rows[-1]["busbw_bytes_per_s"]
    if any(r["wrong"] for r in rows):
        result.notes.append(f"{variant}: wrong elements in the AllReduce results")
