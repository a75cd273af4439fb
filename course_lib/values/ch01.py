"""Chapter 1's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch01.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/01_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

The chapter's freight is the NVLink article's 7B model in 16-bit gradients, shipped
once to a neighbour after the article's 0.8 s of compute.  The staged route is
priced two ways by the model (store and forward; pipelined, an upper bound) and
set beside the measured driver copy (``MEASURED["p2p_staged_8xH100"]``).

>>> v = values()
>>> v["t_staged"], v["t_piped"], v["u_staged"], v["u_piped"]
('444 ms', '222 ms', '64 %', '78 %')
>>> v["staged_measured"], v["u_staged_measured"], v["staged_of_pinned"]
('37 GB/s', '68 %', '67 %')
"""

from __future__ import annotations

from ..analytic import effective_utilisation, gradient_bytes, route_parameters, route_transfer_time_s
from ..hardware import MEASURED, latency_s
from ..units import GB, MB, GiB, format_bandwidth, format_bytes, format_distance, format_time

#: The NVLink article's demo step: 0.8 s of compute (``COMPUTE_S`` in its script).
T_COMPUTE_S = 0.8
#: The chapter's model: 7B parameters, 16-bit gradients.
PARAMS, BYTES_PER_GRADIENT = 7e9, 2
#: The pipelined staged copy's chunk, as chapter 3 prices it.
CHUNK_BYTES = 4 * MB
#: The fibre of the far RDMA question, and the cable of exercise 2.
FAR_M, CABLE_M = 100e3, 10.0
#: Exercise 1: the utilisation to reach, with 1 GiB of freight a step.
EX1_TARGET_U, EX1_BYTES = 0.9, GiB
#: The quiz's step: compute and wait, picked for arithmetic by hand.
Q_COMP_S, Q_COMM_S = 0.3, 0.1


def slider_steps() -> list[float]:
    """The utilisation explorer's compute-time positions: 1-2-5 steps from 0.1 ms
    to 10 s (``explorers.ch01_utilisation.CONTROLS``; a test checks they agree)."""
    return [m * 10.0 ** e for e in range(-4, 1) for m in (1, 2, 5)] + [10.0]


def _pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


def values() -> dict[str, str]:
    grad = gradient_bytes(PARAMS, bytes_per_element=BYTES_PER_GRADIENT)
    t = T_COMPUTE_S
    staged = route_transfer_time_s(grad, "p2p-staged", gpu="H100")
    piped = route_transfer_time_s(grad, "p2p-staged", gpu="H100", chunk_bytes=CHUNK_BYTES)
    nvlink = route_transfer_time_s(grad, "p2p-nvlink", gpu="H100")
    measured = MEASURED["p2p_staged_8xH100"].value
    pinned = MEASURED["h2d_pinned_pcie5"].value
    t_meas = grad / measured
    far = route_parameters("rdma", nic="NDR", distance_m=FAR_M)
    near = route_parameters("rdma", nic="NDR", distance_m=CABLE_M)
    fibre = near["latency_s"] - route_parameters("rdma", nic="NDR", distance_m=0)["latency_s"]
    # exercise 1: U = 0.9 means T_comp = 9 T_comm
    t_ex1 = route_transfer_time_s(EX1_BYTES, "p2p-staged", gpu="H100")
    t_need = EX1_TARGET_U / (1 - EX1_TARGET_U) * t_ex1
    steps = slider_steps()
    above = min(s for s in steps if s >= t_need)
    below = max(s for s in steps if s < t_need)
    return {
        "grad": format_bytes(grad),
        "t_staged": format_time(staged), "t_piped": format_time(piped),
        "u_staged": _pct(effective_utilisation(t, staged)),
        "u_piped": _pct(effective_utilisation(t, piped)),
        "u_nvlink": _pct(effective_utilisation(t, nvlink)),
        # the driver's staged copy, measured (an HGX H100, peer access off)
        "staged_measured": format_bandwidth(measured),
        "t_staged_measured": format_time(t_meas),
        "u_staged_measured": _pct(effective_utilisation(t, t_meas)),
        "pinned_leg": format_bandwidth(pinned),
        "staged_of_pinned": _pct(measured / pinned),
        "sync_copy": format_time(latency_s("pcie_small_copy_sync")),
        "far": format_distance(FAR_M), "far_one_way": format_time(far["latency_s"]),
        "far_rtt": format_time(far["completion_rtt_s"]),
        "gib_over_gb": f"{GiB / GB - 1:.1%}".replace("%", " %"),
        # exercise 1
        "ex1_u": _pct(EX1_TARGET_U), "ex1_t": format_time(t_ex1),
        "staged_alpha": format_time(latency_s("pcie_staged_p2p")),
        "ex1_tcomp": f"{t_need:.2f} s", "ex1_step": f"{above:g} s",
        "ex1_step_u": _pct(effective_utilisation(above, t_ex1)),
        "ex1_below": f"{below:g} s", "ex1_below_u": _pct(effective_utilisation(below, t_ex1)),
        # exercise 2
        "rdma_alpha": format_time(near["latency_s"]), "cable": format_distance(CABLE_M),
        "fibre": format_time(fibre, digits=2),
        "rdma_half": format_bytes(near["latency_s"] * near["bw_bytes_per_s"]),
        # the quiz (a step picked for arithmetic by hand)
        "q_comp": format_time(Q_COMP_S), "q_comm": format_time(Q_COMM_S),
        "utilisation": f"{effective_utilisation(Q_COMP_S, Q_COMM_S):.0%}",
        "q_wrong_minus": f"{(Q_COMP_S - Q_COMM_S) / Q_COMP_S:.0%}",
        "q_wrong_overlap": f"{1:.0%}",
        "q_wrong_comm": f"{Q_COMM_S / (Q_COMP_S + Q_COMM_S):.0%}",
    }
