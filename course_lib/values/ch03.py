"""Chapter 3's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch03.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/03_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

Where the chapter first compares roads it gives each one rate per rung of a
ladder -- the spec (line rate), NCCL's planning rate and a measurement -- all
read from the catalog (``hardware.NCCL_LINK_BW``, ``Cluster.pcie_planning_bytes_per_s``,
``hardware.MEASURED``).  The NVLink article's 7B example names what each of its
times is: the ring at the spec rate, the ring at its measured plateau, and what
NCCL runs by default on 8 H100s (NVLS, from :func:`course_lib.predict.predict_collective`).

>>> v = values()
>>> v["nv_spec"], v["nv_plan"], v["nv_measured_ring"], v["nv_measured_p2p"]
('450 GB/s', '371 GB/s', '365 GB/s', '376 GB/s')
>>> v["pcie_spec"], v["pcie_plan"], v["pcie_measured"]
('63 GB/s', '48 GB/s', '55 GB/s')
>>> v["staged_sf"], v["staged_piped"], v["staged_measured"]
('31.5 GB/s', '63 GB/s', '37 GB/s')
>>> v["t_ring_spec"], v["auto_algorithm"], v["t_auto"]
('54.4 ms', 'NVLS', '51.1 ms')
"""

from __future__ import annotations

from ..analytic import (effective_bw_bytes_per_s, gradient_bytes, half_bandwidth_bytes,
                        ring_allreduce_bytes_per_rank, ring_allreduce_time_s,
                        route_crossover_bytes, route_parameters)
from ..hardware import MEASURED, gpu, latency_s, pcie_bw_per_dir_bytes_per_s
from ..units import MB, format_bandwidth, format_bytes, format_time

#: The NVLink article's 7B example: parameters, bytes per gradient, GPUs in the ring.
PARAMS, BYTES_PER_GRADIENT, GPUS = 7e9, 2, 8
#: Exercise 1's two chunk sizes for the pipelined staged route.
CHUNK_BYTES, SMALL_CHUNK_BYTES = 4 * MB, 256e3
#: Exercise 2: a PCIe Gen4 x8 device sending 64 kB messages.
EX2_GEN, EX2_LANES, EX2_BYTES = 4, 8, 64e3
#: The quiz's tensor, picked above the one-link crossover.
Q_TENSOR_BYTES = 100 * MB
#: Algorithm names as the prose writes them (as chapter 7's values).
ALGORITHM_NAMES = {"nvls": "NVLS", "ring": "ring", "tree": "tree", "direct": "direct",
                   "hierarchical": "two-level"}


def _pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


def _s(t: float) -> str:
    return f"{t:.2f} s"


def _h200_fit() -> dict[str, str]:
    from ..measure import h200_copies

    ref = h200_copies()
    fit = ref.fits["h2d-pinned"]
    line = pcie_bw_per_dir_bytes_per_s(ref.metadata["pcie_gen"])
    return {"h200_alpha": format_time(fit.alpha_s, digits=2),
            "h200_sync": format_time(ref.summary["small_copy_latency_s"], digits=2),
            "h200_share": _pct(fit.bw_bytes_per_s / line),
            "h200_half": format_bytes(half_bandwidth_bytes(fit.alpha_s, fit.bw_bytes_per_s))}


def values() -> dict[str, str]:
    from ..clusters import cluster
    from ..predict import predict_collective

    h100, a100 = gpu("H100"), gpu("A100")
    nvlink = h100.nvlink_bw_per_dir_bytes_per_s
    pcie = pcie_bw_per_dir_bytes_per_s(5)
    pcie4 = pcie_bw_per_dir_bytes_per_s(4)
    link = h100.nvlink_per_link_per_dir_bytes_per_s
    one_link = route_parameters("p2p-nvlink", gpu="H100", nvlink_links=1)
    staged = route_parameters("p2p-staged", gpu="H100")
    d_star = route_crossover_bytes(one_link, staged)

    def piped_crossover(chunk):
        # T_staged = a_s + (D + c)/B for D >= c; T_link = a_l + D/B_link
        d = ((staged["latency_s"] - one_link["latency_s"] + chunk / pcie)
             / (1 / one_link["bw_bytes_per_s"] - 1 / pcie))
        return d if d >= chunk else d_star        # below one chunk: store and forward

    small = latency_s("pcie_small_copy")
    nv_alpha = latency_s("nvlink_p2p")
    # the ladder: spec -> NCCL's planning rate -> measured
    dgx = cluster("H100")
    nv_plan = dgx.intra_bw_bytes_per_s()
    pcie_plan = dgx.pcie_planning_bytes_per_s()
    m_ring = MEASURED["busbw_allreduce_8xH100_ring"].value
    m_nvls = MEASURED["busbw_allreduce_8xH100_nvls"].value
    m_p2p = MEASURED["p2p_nvlink_8xH100"].value
    m_pcie = MEASURED["h2d_pinned_pcie5"].value
    m_staged = MEASURED["p2p_staged_8xH100"].value
    # the NVLink article's 7B example
    grad = gradient_bytes(PARAMS, bytes_per_element=BYTES_PER_GRADIENT)
    auto = predict_collective("allreduce", grad, dgx)
    # exercise 2
    b_ex2 = pcie_bw_per_dir_bytes_per_s(EX2_GEN, lanes=EX2_LANES)
    out = {
        "ratio": f"{nvlink / pcie:.0f}", "ratio_x": f"{nvlink / pcie:.0f}×",
        "ratio_1f": f"{nvlink / pcie:.1f}",
        "ratio_inverse": f"{nvlink / (2 * pcie):.1f}",
        "h100_total": format_bandwidth(nvlink), "pcie5": format_bandwidth(pcie),
        "crossover": format_bytes(d_star),
        "staged_delivered": format_bandwidth(pcie / 2),
        "one_link": format_bandwidth(link), "two_links": format_bandwidth(2 * link),
        "h100_links": str(h100.nvlink_links),
        "q_tensor": format_bytes(Q_TENSOR_BYTES),
        # start-ups and half-bandwidth sizes
        "small_copy": format_time(small), "sync_copy": format_time(latency_s("pcie_small_copy_sync")),
        "nv_alpha": format_time(nv_alpha),
        "nv_half": f"{half_bandwidth_bytes(nv_alpha, nvlink) / MB:.1f} MB",
        # A100
        "a100_link": format_bandwidth(a100.nvlink_per_link_per_dir_bytes_per_s),
        "pcie4": format_bandwidth(pcie4), "pcie4_staged": format_bandwidth(pcie4 / 2),
        # the ladder
        "nv_spec": format_bandwidth(nvlink), "nv_plan": format_bandwidth(nv_plan),
        "nv_measured_ring": format_bandwidth(m_ring), "nv_measured_p2p": format_bandwidth(m_p2p),
        "pcie_spec": format_bandwidth(pcie), "pcie_plan": format_bandwidth(pcie_plan),
        "pcie_measured": format_bandwidth(m_pcie),
        "staged_sf": format_bandwidth(pcie / 2), "staged_piped": format_bandwidth(pcie),
        "staged_measured": format_bandwidth(m_staged),
        "staged_of_pinned": _pct(m_staged / m_pcie),
        "ratio_spec": f"{nvlink / pcie:.1f}×", "ratio_plan": f"{nv_plan / pcie_plan:.1f}×",
        "ratio_measured": f"{m_ring / m_pcie:.1f}×",
        # the NVLink article's 7B example
        "sent": format_bytes(ring_allreduce_bytes_per_rank(grad, GPUS)),
        "t_ring_spec": format_time(ring_allreduce_time_s(grad, GPUS, nvlink)),
        "t_ring_measured": format_time(ring_allreduce_time_s(grad, GPUS, m_ring)),
        "auto_algorithm": ALGORITHM_NAMES[auto.algorithm], "t_auto": format_time(auto.time_s),
        "nvls_measured": format_bandwidth(m_nvls),
        # exercise 1
        "chunk": format_bytes(CHUNK_BYTES), "small_chunk": format_bytes(SMALL_CHUNK_BYTES),
        "crossover_chunk": format_bytes(piped_crossover(CHUNK_BYTES)),
        "crossover_small_chunk": f"{piped_crossover(SMALL_CHUNK_BYTES) / MB:.2f} MB",
        # exercise 2
        "ex2_bw": format_bandwidth(b_ex2, digits=4), "ex2_msg": format_bytes(EX2_BYTES),
        "ex2_half": format_bytes(half_bandwidth_bytes(small, b_ex2)),
        "ex2_share": _pct(effective_bw_bytes_per_s(EX2_BYTES, b_ex2, small) / b_ex2),
        # exercise 3
        "grad": format_bytes(grad),
        "t_gen5": _s(ring_allreduce_time_s(grad, GPUS, pcie)),
        "t_gen4": _s(ring_allreduce_time_s(grad, GPUS, pcie4)),
        "t_gen6": _s(ring_allreduce_time_s(grad, GPUS, pcie_bw_per_dir_bytes_per_s(6))),
    }
    out.update(_h200_fit())
    return out
