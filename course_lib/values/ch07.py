"""Chapter 7's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch07.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/07_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

>>> v = values()
>>> v["nvls_ideal_gain"], v["ring_factor"], v["nvls_port_factor"]
('1.56×', '1.75', '1.125')
>>> v["t_auto"], v["auto_algorithm"]
('0.051 s', 'NVLS')
"""

from __future__ import annotations

from ..analytic import (busbw_factor, gradient_bytes, nvls_allreduce_bytes_per_port,
                        ring_allreduce_bytes_per_rank)
from ..hardware import MEASURED, NCCL_LINK_BW, calibration, gpu, nccl_tuning, nic, pcie_bw_per_dir_bytes_per_s
from ..units import GiB, format_bandwidth, format_bytes, format_time

#: The NVLink article's 7B example: parameters, bytes per gradient, GPUs.
PARAMS, BYTES_PER_GRADIENT, GPUS = 7e9, 2, 8
#: Quoted, not computed: NCCL's planning factor for an NVLS port on Hopper
#: (``nvlsEfficiency``, NVIDIA/nccl:src/graph/tuning.cc, from NCCL 2.28.3; the
#: course's predictor follows v2.20.3, which had none, and fits its own).
NCCL_HOPPER_NVLS_EFFICIENCY = 0.85
#: The quiz's round algbw, picked for arithmetic by hand (no hardware claimed).
QUIZ_ALGBW = 100e9
#: Collectives ZeRO-3 runs per step: AllGather (forward), AllGather (backward), ReduceScatter.
ZERO3_COLLECTIVES = 3
#: Algorithm names as the prose writes them.
ALGORITHM_NAMES = {"nvls": "NVLS", "ring": "ring", "tree": "tree", "direct": "direct",
                   "hierarchical": "two-level"}


def _s(t: float) -> str:
    """Seconds with two significant digits, as the 7B example prints them (0.054 s)."""
    return f"{t:.2g} s"


def _heldout() -> dict:
    import numpy as np

    from ..predict import validation_rows
    rows = validation_rows(split="heldout")
    err = np.abs([r["rel_error"] for r in rows])
    big = np.array([r["n_bytes"] >= 2**20 for r in rows])
    return {"heldout_points": str(len(rows)),
            "heldout_median": f"{np.median(err[big]):.0%}".replace("%", " %"),
            "heldout_p90": f"{np.percentile(err[big], 90):.0%}".replace("%", " %"),
            "heldout_median_all": f"{np.median(err):.0%}".replace("%", " %")}


def values() -> dict[str, str]:
    from ..clusters import cluster
    from ..predict import predict_collective

    n = GPUS
    h100 = gpu("H100")
    b = h100.nvlink_bw_per_dir_bytes_per_s
    grad = gradient_bytes(PARAMS, bytes_per_element=BYTES_PER_GRADIENT)
    sent = ring_allreduce_bytes_per_rank(grad, n)
    pcie = pcie_bw_per_dir_bytes_per_s(5)
    dgx = cluster("H100")
    pcie_box = cluster("H100", fabric="pcie")
    ring = predict_collective("allreduce", grad, dgx, algorithm="ring")
    nvls = predict_collective("allreduce", grad, dgx, algorithm="nvls")
    auto = predict_collective("allreduce", grad, dgx)
    on_pcie = predict_collective("allreduce", grad, pcie_box)
    plan = dgx.intra_bw_bytes_per_s()                 # NCCL's planning rate, 18 x 20.6 GB/s
    simple = calibration("simple_efficiency")
    nvls_eff = calibration("nvls_efficiency")         # NVLS algbw / planning rate (fitted)
    port = nvls_allreduce_bytes_per_port(1.0, n)      # (1 + 1/n) S each way
    ideal = ring_allreduce_bytes_per_rank(1.0, n) / port
    port_busy = nvls_eff * port                       # what the port carries / planning rate
    nccl_nvls = NCCL_HOPPER_NVLS_EFFICIENCY
    # the explorer's answers at 1 GiB
    auto_g = predict_collective("allreduce", GiB, dgx)
    ring_g = predict_collective("allreduce", GiB, dgx, algorithm="ring")
    multi = cluster("H100", nodes=16, nic="NDR")
    one_nic = cluster("H100", nodes=16, nic="NDR", nics_per_node=1)
    t8 = predict_collective("allreduce", GiB, multi).time_s
    t1 = predict_collective("allreduce", GiB, one_nic).time_s
    ndr = nic("NDR")
    out = {
        # the 7B example
        "grad": format_bytes(grad), "sent": format_bytes(sent),
        "h100_bidir": format_bandwidth(h100.nvlink_bw_bidir_bytes_per_s),
        "h100_dir": format_bandwidth(b),
        "t_ideal": _s(sent / b),
        "t_measured_ring": _s(sent / MEASURED["busbw_allreduce_8xH100_ring"].value),
        "t_pcie_ideal": _s(sent / pcie), "t_pcie": _s(on_pcie.time_s),
        "pcie_plan": format_bandwidth(pcie_box.intra_bw_bytes_per_s()),
        "pcie5": format_bandwidth(pcie),
        "t_auto": _s(auto.time_s), "auto_algorithm": ALGORITHM_NAMES[auto.algorithm],
        "t_ring": _s(ring.time_s),
        # what one GPU sends does not grow with n (the article's volume does)
        "sent_64": format_bytes(
            ring_allreduce_bytes_per_rank(grad, 64)), "two_s": format_bytes(2 * grad),
        # NVLS per port, against the ring
        "ring_factor": f"{busbw_factor('allreduce', n):.3g}",
        "nvls_port_factor": f"{port:.4g}",
        "nvls_ideal_gain": f"{ideal:.2f}×", "nvls_gain": f"{ring.time_s / nvls.time_s:.2f}×",
        "nvls_gain_1f": f"{ring.time_s / nvls.time_s:.1f}×",
        "nvls_eff": f"{nvls_eff:.0%}".replace("%", " %"),
        "nvls_algbw": format_bandwidth(nvls.bw_bytes_per_s),
        "nvls_port_busy": f"{port_busy:.0%}".replace("%", " %"),
        "rate_gain": f"{ideal * port_busy / simple:.2f}×",
        "nccl_gain": f"{ideal * nccl_nvls / simple:.2f}×",
        "simple_eff": f"{simple:.0%}".replace("%", " %"),
        "h100_links": str(h100.nvlink_links),
        "plan": format_bandwidth(plan), "nccl_link": format_bandwidth(NCCL_LINK_BW[90].value), "ring_rate": format_bandwidth(simple * plan),
        "ring_of_spec": f"{simple * plan / b:.0%}".replace("%", " %"),
        "measured_nvls": format_bandwidth(MEASURED["busbw_allreduce_8xH100_nvls"].value),
        "measured_ring": format_bandwidth(MEASURED["busbw_allreduce_8xH100_ring"].value),
        "nvls_busbw": format_bandwidth(nvls.busbw_bytes_per_s),
        "ring_busbw": format_bandwidth(ring.busbw_bytes_per_s),
        # protocols, as NCCL plans them (tuning.cc)
        "ll_eff": f"{nccl_tuning('ll_efficiency'):.0%}".replace("%", " %"),
        "ll128_eff": f"{nccl_tuning('ll128_efficiency'):.0%}".replace("%", " %"),
        "ndr": f"{ndr.rate_gbit_per_s:.0f} Gb/s",
        "ndr_bytes": format_bandwidth(ndr.rate_gbit_per_s * 1e9 / 8),
        # the explorer's answers
        "gib_gain": f"{ring_g.time_s / auto_g.time_s:.1f}×",
        "gib_auto": format_time(auto_g.time_s), "gib_ring": format_time(ring_g.time_s),
        "gib_8nics": format_time(t8), "gib_1nic": format_time(t1),
        # the quiz: busbw from algbw (a round algbw picked for arithmetic by hand)
        "q_algbw": format_bandwidth(QUIZ_ALGBW),
        "q_busbw": format_bandwidth(QUIZ_ALGBW * busbw_factor("allreduce", n)),
        "q_times2": format_bandwidth(2 * QUIZ_ALGBW), "q_times8": format_bandwidth(n * QUIZ_ALGBW),
        # ZeRO-3: two AllGathers and a ReduceScatter against DDP's one AllReduce
        "zero3_ratio": f"{3 * busbw_factor('allgather', n) / busbw_factor('allreduce', n):.1f}x",
        "zero3_calls": f"{ZERO3_COLLECTIVES}x",
    }
    out.update(_heldout())
    return out
