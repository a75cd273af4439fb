"""Start-up costs per route (:data:`LATENCIES`) and measured bandwidth
plateaus (:data:`MEASURED`).

Start-up costs are one per route and of one kind -- the one-way time of one
small message repeated back to back -- so that routes compare fairly;
``pcie_small_copy_sync`` is the different, end-to-end cost of a lone
synchronous copy by the host clock.  NCCL's per-hop planning latencies are
listed beside them for comparison; their values are read from
:data:`course_lib.hardware.nccl.NCCL_TUNING`, where they are typed once.
"""

from __future__ import annotations

from ..units import GB, US, check_choice
from .facts import (SRC_H200_LAB, SRC_MLENG, SRC_NCCL_TESTS_ISSUE, SRC_NCCL_TUNING,
                    Fact)
from .nccl import NCCL_TUNING

# --- latencies (indicative) -------------------------------------------------
# One start-up cost (alpha) per route, each from the same kind of measurement:
# the one-way time of one small message between the two memories, with the
# message repeated back to back (a queue of copies timed by CUDA events, or
# half a ping-pong).  It leaves out the one-off cost a program pays for a lone
# *synchronous* copy (API call, driver submission, waiting for completion),
# which the host clock sees: that is ``pcie_small_copy_sync``, and
# ``cuda_api_call`` is the difference of the two.
_P2P_LAT_SRC = ("NVIDIA/cuda-samples issue #230 (p2pBandwidthLatencyTest "
                "latency matrices)")
_H100_BWTEST = ("ZiyanIshani/vpbenchmarking:results/stream_nvbench/"
                "bandwidth_h2d_d2h_20260225_183119.txt")
_OSU_GDR = ("OSU micro-benchmarks osu_latency -d cuda D D between two servers, "
            "Open MPI + UCX with GPUDirect RDMA and gdrcopy on InfiniBand: "
            "4.06 us at 1 B ('Building a CUDA-aware Open MPI library on an "
            "Infiniband cluster', user guide of the juliet cluster)")
_SPARK_ROCE = ("eugr/spark-vllm-docker, docs/NETWORKING.md (perftest ib_write_lat between "
               "two DGX Sparks over RoCE, ConnectX-7 device rocep1s0f1, one QSFP cable, no "
               "switch, RC, MTU 1024, 2 bytes: t_min 1.42 us, t_typical 1.47 us); a bonded, "
               "untuned port: openucx/ucx issue #6242 (ib_send_lat, 5.84 us typical)")
_SMALL_COPY_S = 2.7 * US
_SMALL_COPY_SYNC_S = 7.3 * US
LATENCIES: dict[str, Fact] = {
    "nvlink_p2p": Fact(2 * US, "s", "n/a", _P2P_LAT_SRC, True,
                       "GPU to a neighbour GPU over NVLink, one small message, "
                       "one way (copies repeated, timed by CUDA events)"),
    "pcie_staged_p2p": Fact(15 * US, "s", "n/a", _P2P_LAT_SRC, True,
                            "GPU to GPU staged through host memory over PCIe, "
                            "one small message, one way (11-20 us reported; "
                            "same test with peer access off)"),
    "pcie_small_copy": Fact(_SMALL_COPY_S, "s", "n/a",
                            SRC_H200_LAB + " (1 KiB pinned H2D: 2.7 us per copy); "
                            + _H100_BWTEST + " (H100: 1000 B at 0.4 GB/s, 2.5 us)",
                            True,
                            "small pinned host-to-GPU copy, one way (copies "
                            "queued back to back, timed by CUDA events): what "
                            "the DMA engine and the link add per copy"),
    "pcie_small_copy_sync": Fact(_SMALL_COPY_SYNC_S, "s", "n/a",
                                 SRC_H200_LAB + " (8 B pinned H2D, one cudaMemcpy "
                                 "at a time, host clock: 7.3 us median)", True,
                                 "one small synchronous pinned host-to-GPU copy, "
                                 "end to end by the host clock: API call, driver "
                                 "submission, DMA and waiting for completion"),
    "cuda_api_call": Fact(_SMALL_COPY_SYNC_S - _SMALL_COPY_S, "s", "n/a",
                          "derived: pcie_small_copy_sync - pcie_small_copy ("
                          + SRC_H200_LAB + ")", True,
                          "what the host adds to a lone synchronous copy (API "
                          "call, submission, completion wait), CPU time per call"),
    "dma_setup_seed": Fact(7.5 * US, "s", "n/a",
                           "the heterogeneous-communication article (5-10 us), "
                           "relabelled as end-to-end "
                           "small-copy latency", True,
                           "what the heterogeneous-communication article calls 'DMA setup' "
                           "(5-10 us); the "
                           "measured end-to-end small copy is pcie_small_copy_sync"),
    "gpudirect_rdma_one_way": Fact(4 * US, "s", "n/a", _OSU_GDR, True,
                                   "GPU to a GPU in another server by GPUDirect "
                                   "RDMA, one small message, one way (half a "
                                   "ping-pong through one switch)"),
    "ib_port": Fact(0.6 * US, "s", "n/a",
                    SRC_MLENG + " (IB latency table: EDR 0.5, HDR 0.6 us)", True,
                    "InfiniBand switch/port latency"),
    "rdma_small_one_way": Fact(1.5 * US, "s", "n/a",
                               "ib_send_lat one-way results (D. Potter, MSc "
                               "thesis, tables/mtu_performance.tex); see "
                               "docs/sources.md", True,
                               "small RDMA message host memory to host memory, "
                               "one way (1-2 us); no GPU involved"),
    "roce_small_one_way": Fact(1.47 * US, "s", "n/a", _SPARK_ROCE, True,
                               "small RoCE message host memory to host memory, one "
                               "way (perftest reports half the round trip): 1.47 us "
                               "typical between two ConnectX-7 ports on one cable -- "
                               "the same base latency as InfiniBand (1-2 us); what "
                               "RoCE adds is lossless Ethernet (PFC/ECN) to configure, "
                               "and a switch adds its hop. An untuned bonded port "
                               "measured 5.8 us (openucx/ucx #6242)"),
    "tcp_kernel_path": Fact(50 * US, "s", "n/a",
                            "the heterogeneous-communication article (unsourced); "
                            "measure it in the "
                            "chapter 5 lab", True,
                            "TCP through the kernel, one way (the article sets it "
                            "beside one-way RDMA figures): tens of us; the "
                            "chapter 5 lab measures the kernel path's CPU cost per "
                            "message in a stream, not this latency"),
    "pcie_p2p": Fact(_SMALL_COPY_S, "s", "n/a",
                     "derived: one DMA copy over PCIe, as pcie_small_copy ("
                     + SRC_H200_LAB + ")", True,
                     "GPU to GPU peer-to-peer over PCIe (through a PCIe switch "
                     "or the root complex), one small message, one way: one "
                     "DMA copy over PCIe, so the same start-up as a small "
                     "pinned host-to-GPU copy"),
    "nccl_hop_nvlink": Fact(NCCL_TUNING["ring_ll_hop_nvlink"].value, "s", "n/a",
                            SRC_NCCL_TUNING, False,
                            "NCCL per-hop planning latency, NVLink, Ring/LL"),
    "nccl_hop_pcie": Fact(NCCL_TUNING["ring_ll_hop_pcie"].value, "s", "n/a",
                          SRC_NCCL_TUNING, False,
                          "NCCL per-hop planning latency, PCIe, Ring/LL"),
    "nccl_hop_net": Fact(NCCL_TUNING["ring_ll_hop_net"].value, "s", "n/a",
                         SRC_NCCL_TUNING, False,
                         "NCCL per-hop planning latency, network, Ring/LL"),
}


def latency_s(name: str) -> float:
    """An indicative latency from the catalog, in seconds.

    >>> latency_s("nvlink_p2p")
    2e-06
    """
    return LATENCIES[check_choice(name, "name", LATENCIES)].value


# --- measured plateaus ------------------------------------------------------
_NCCL_PERF = "NVIDIA/nccl-tests:doc/PERFORMANCE.md (busbw definition); "
_NCCL_1264 = ("NVIDIA/nccl issue #1264 (HGX H100 SXM, 8 GPUs, NVIDIA/cuda-samples "
              "p2pBandwidthLatencyTest)")
MEASURED: dict[str, Fact] = {
    "busbw_allreduce_8xA100": Fact(
        230 * GB, "bytes/s", "per direction",
        _NCCL_PERF + SRC_MLENG + " (all_reduce_perf, 8x A100: 229 GB/s at "
        "1 GiB, 235 at 16 GiB); " + SRC_NCCL_TESTS_ISSUE,
        note="measured busbw plateau at >= 1 GiB"),
    "busbw_allreduce_8xH100_ring": Fact(
        365 * GB, "bytes/s", "per direction",
        _NCCL_PERF + "NVIDIA/nccl issue #1442 (370 GB/s per direction); "
        "stas00/ml-engineering:network/benchmarks/results/all-reduce-8xH200.md "
        "(367.6 GB/s with SHARP off)", True,
        note="measured busbw plateau, Ring algorithm (360-370 GB/s)"),
    "busbw_allreduce_8xH100_nvls": Fact(
        478 * GB, "bytes/s", "per direction",
        _NCCL_PERF + "ZiyanIshani/vpbenchmarking:results/nccl/"
        "nccl_allreduce_20260224_223444.txt (479.7 at 8 GiB); "
        "NVIDIA/nccl-tests issue #272 (H200, 475)", True,
        note="measured busbw plateau with NVLS (475-480 GB/s); "
             "in-switch reduction, so busbw no longer equals wire bandwidth"),
    "h2d_pinned_pcie5": Fact(
        55 * GB, "bytes/s", "per direction",
        _H100_BWTEST + " (H100, CUDA bandwidthTest, peak 54.8 GB/s); "
        + SRC_H200_LAB + " (55.4 GB/s at 1 GiB)", True,
        note="pinned host-to-device copy on a PCIe Gen5 x16 host link "
             "(H100 and H200 agree)"),
    "pageable_over_pinned_x86": Fact(
        0.3, "ratio", "n/a",
        "rapidsai/dask-cuda PR #98 (5-6 vs 11-12 GB/s); "
        + SRC_H200_LAB + " (H2D 17.1 GB/s at 1 MiB = 0.35 of pinned, "
        "6.7 GB/s at 1 GiB = 0.12); "
        "vortex-data/vortex PR #7815 (GH200: about equal)", True,
        note="pageable copies reach roughly 0.1-0.5 of pinned on x86 hosts, "
             "less for large copies; measure it in the chapter 4 lab"),
    "p2p_nvlink_8xH100": Fact(
        376 * GB, "bytes/s", "per direction",
        _NCCL_1264 + " ('Unidirectional P2P=Enabled Bandwidth (P2P Writes) "
        "Matrix': 371.0-376.8 GB/s from GPU 0 to the seven others, median 375.9)",
        True,
        note="one GPU-to-GPU copy over NVLink through NVSwitch on an HGX H100 "
             "(cudaMemcpyPeerAsync, copy engines), no collective"),
    "p2p_staged_8xH100": Fact(
        37 * GB, "bytes/s", "per direction",
        _NCCL_1264 + " ('Unidirectional P2P=Disabled Bandwidth Matrix': "
        "36.3-38.1 GB/s between every pair)", True,
        note="GPU-to-GPU copy with peer access disabled on an HGX H100: the "
             "driver stages it through host memory, pipelined (36-38 GB/s); "
             "about two thirds of a pinned copy over one PCIe Gen5 leg"),
    "h2d_pageable_h200_1MiB": Fact(
        17.1 * GB, "bytes/s", "per direction", SRC_H200_LAB + " (median of 7)",
        note="pageable host-to-device copy of 1 MiB on an H200, PCIe Gen5 x16"),
    "h2d_pageable_h200_1GiB": Fact(
        6.7 * GB, "bytes/s", "per direction", SRC_H200_LAB + " (median of 7)",
        note="pageable host-to-device copy of 1 GiB on an H200, PCIe Gen5 x16"),
}




# --- pageable copies, size by size (the H200 gpu-copies run) -----------------
_PAGEABLE_CACHE: dict[str, list[tuple[float, float]]] = {}


def _pageable_points(direction: str) -> list[tuple[float, float]]:
    """``(n_bytes, extra seconds)`` of the H200 run: pageable minus pinned
    median time at each size measured in both kinds, one direction."""
    if direction not in _PAGEABLE_CACHE:
        import json

        from .datafiles import data_path

        records = json.loads(data_path("h200_gpu_copies.json").read_text())
        med = {(r["variant"], r["n_bytes"]): r["median_s"] for r in records}
        sizes = sorted(n for v, n in med if v == f"{direction}-pageable"
                       and (f"{direction}-pinned", n) in med)
        _PAGEABLE_CACHE[direction] = [
            (float(n), med[(f"{direction}-pageable", n)] - med[(f"{direction}-pinned", n)])
            for n in sizes]
    return _PAGEABLE_CACHE[direction]


def pageable_extra_time_s(n_bytes: float, direction: str = "h2d") -> float:
    """Time a pageable host copy adds to a pinned one of the same size, seconds.

    Read from the course's H200 run (``course_lib/data/h200_gpu_copies.json``,
    PCIe Gen5 x16, copies timed by CUDA events): at each measured size the
    pageable median minus the pinned median.  Between sizes the extra time
    per byte is interpolated linearly in log2(size); below the smallest size
    the extra time of the smallest is kept, above the largest its time per
    byte.  Where pageable was measured faster than pinned (host-to-GPU below
    16 KiB) the extra is 0: the driver's copy into its staging buffer takes
    less than a microsecond there.  Chapter 4.

    Parameters
    ----------
    n_bytes : float
        Copy size, bytes (>= 0).
    direction : {"h2d", "d2h"}
        Host to GPU or GPU to host.

    Examples
    --------
    >>> pageable_extra_time_s(1024)
    0.0
    >>> round(pageable_extra_time_s(2**30) * 1e3)      # ms, 1 GiB host -> GPU
    141
    """
    import math

    from ..units import check_nonnegative

    d = check_choice(direction, "direction", ("h2d", "d2h"))
    n = check_nonnegative(n_bytes, "n_bytes")
    pts = _pageable_points(d)
    if n <= pts[0][0]:
        return max(0.0, pts[0][1])
    per_byte = [(math.log2(s), max(0.0, e) / s) for s, e in pts]
    x = math.log2(n)
    if x >= per_byte[-1][0]:
        return n * per_byte[-1][1]
    for (x0, c0), (x1, c1) in zip(per_byte, per_byte[1:]):
        if x0 <= x <= x1:
            return n * (c0 + (c1 - c0) * (x - x0) / (x1 - x0))
    raise AssertionError("unreachable")


def pageable_over_pinned(n_bytes: float, direction: str = "h2d") -> float:
    """Measured pageable / pinned delivered bandwidth at one size (H200 run).

    The ratio of the two medians' times, ``T_pinned / T_pageable``, with the
    pinned time read from the same run and :func:`pageable_extra_time_s`
    added for pageable; exact at the measured sizes.  Host to GPU it is about
    1 up to 16 KiB, 0.60 at 64 KiB, 0.35 at 1 MiB and 0.12 at 1 GiB: not one
    number.  Chapter 4.

    >>> round(pageable_over_pinned(2**20), 2), round(pageable_over_pinned(2**30), 2)
    (0.35, 0.12)
    """
    import math

    from ..units import check_positive

    d = check_choice(direction, "direction", ("h2d", "d2h"))
    n = check_positive(n_bytes, "n_bytes")
    import json

    from .datafiles import data_path

    if f"pinned-{d}" not in _PAGEABLE_CACHE:
        records = json.loads(data_path("h200_gpu_copies.json").read_text())
        _PAGEABLE_CACHE[f"pinned-{d}"] = sorted(
            (float(r["n_bytes"]), r["median_s"]) for r in records
            if r["variant"] == f"{d}-pinned")
    pinned = _PAGEABLE_CACHE[f"pinned-{d}"]
    # pinned time: interpolate the time per byte in log2(size), as above
    pts = [(math.log2(s), t / s) for s, t in pinned]
    x = math.log2(n)
    if x <= pts[0][0]:
        t_pin = pinned[0][1]
    elif x >= pts[-1][0]:
        t_pin = n * pts[-1][1]
    else:
        t_pin = next(n * (c0 + (c1 - c0) * (x - x0) / (x1 - x0))
                     for (x0, c0), (x1, c1) in zip(pts, pts[1:]) if x0 <= x <= x1)
    return t_pin / (t_pin + pageable_extra_time_s(n, d))
