"""Chapter 9's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch09.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/09_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

The chapter's machine: H100s, 8 a node, one NDR port per GPU (the predictor's
``cluster_of`` in the notebook), the 7B model's BF16 gradients and the NVLink
article's 0.8 s of compute a step.  The articles' rule is evaluated with two
named rates, never mixed in one argument: the spec sheet's NVLink rate
(``rate_spec``, 450 GB/s per direction) and the bus bandwidth NCCL's ring
reaches on one node in the predictor (``rate_ring``), which the chapter's
explorer uses.

>>> v = values()
>>> v["rule_1024_spec"], v["model_1024"], v["rule_1024_ring"]
('12.7', '9.7', '10.3')
>>> v["ring_net_busbw"]      # past the node, 8 NDR ports a node: the ring does not narrow
'376 GB/s'
"""

from __future__ import annotations

from functools import lru_cache

#: The share of communication in compute the chapter picks for its first
#: illustration (the NVLink article gives the 0.8 s, not this share).
ILLUSTRATIVE_RATIO = 0.05
#: The chapter's model and step: 7B parameters, BF16 gradients, the NVLink
#: article's 0.8 s of compute a step (``COMPUTE_S`` in its script).
N_PARAMS = 7e9
T_COMPUTE_S = 0.8
#: The host CPU of a two-socket H100 PCIe server (Sapphire Rapids, the H100
#: generation's Xeon): its socket link is NCCL's planning rate in CPU_LINKS.
TWO_SOCKET_CPU = "intel-spr"
#: The exercises' targets: the rule's GPUs at 80 % efficiency for a ratio of 0.01,
#: and the smallest model below 50 % weak-scaling efficiency with one port a node.
EX2_EFFICIENCY, EX2_RATIO, EX3_EFFICIENCY = 0.8, 0.01, 0.5
SIZES = (2, 8, 16, 32, 64, 128, 256, 512, 1024)


def _cluster_of(n, **kw):
    from ..clusters import cluster

    if n <= 8:
        return cluster("H100", gpus_per_node=n)
    return cluster("H100", nodes=n // 8, nic="NDR", **kw)


def _pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms"


def _s(seconds: float, decimals: int = 2) -> str:
    return f"{seconds:.{decimals}f} s"


@lru_cache(maxsize=1)
def _compute() -> dict[str, str]:
    from .. import traffic
    from ..analytic import (amdahl_limit, amdahl_speedup, comm_speedup, gradient_bytes,
                            iteration_time_s, max_gpus_at_efficiency)
    from ..scaling import scaling_curves
    from ..hardware import (NCCL_LINK_BW, NVLINK_GENERATIONS, cpu_link_bw_bytes_per_s, gpu,
                            network_efficiency, nic)
    from ..predict import predict_collective
    from ..units import GiB, format_bandwidth, format_bytes

    h100, ndr = gpu("H100"), nic("NDR")
    grad = gradient_bytes(N_PARAMS)
    t = T_COMPUTE_S
    b_spec = h100.nvlink_bw_per_dir_bytes_per_s
    t_comm_spec = 2 * grad / b_spec
    pred = {n: predict_collective("allreduce", grad, _cluster_of(n)) for n in SIZES}

    def strong(n, p):
        return t / iteration_time_s(t / n, p.time_s, overlap=False)

    def weak(n, p):
        return n * t / iteration_time_s(t, p.time_s, overlap=False)

    # the explorer's rule: B = a ring's busbw on one node (NCCL's rate)
    def curves(regime, overlap, nics_per_node):     # the explorer's curves at its defaults
        return scaling_curves(regime, t, N_PARAMS, "NDR", nics_per_node, overlap)

    strong0 = curves("strong", 0.0, 8)
    b_ring = strong0["busbw_node_bytes_per_s"]
    t_rule_ring = strong0["t_rule_s"]
    n_list = list(strong0["n_gpus"])
    above = [n for n, r, m in zip(n_list, strong0["seeds_speedup"], strong0["model_speedup"])
             if n > 8 and m > r]
    below = [n for n, r, m in zip(n_list, strong0["seeds_speedup"], strong0["model_speedup"])
             if n > 8 and m < r]
    full = curves("strong", 1.0, 8)["model_speedup"]
    weak_one = curves("weak", 0.0, 1)
    strong_one = curves("strong", 0.0, 1)["model_speedup"]
    t_ex = strong0["t_comm_s"]
    past = [p for n, p in pred.items() if n > 8]
    ring_net = [pred[n].busbw_bytes_per_s for n in (32, 64, 128, 256)]
    one_nic = {n: predict_collective("allreduce", grad, _cluster_of(n, nics_per_node=1))
               for n in (16, 1024)}

    # the chapter's two claims of the articles: NVLink vs PCIe on one 8-GPU server
    from ..clusters import cluster

    def eff(c):
        t_ar = predict_collective("allreduce", grad, c).time_s
        return t_ar, t / iteration_time_s(t, t_ar, overlap=False)

    t_nv, e_nv = eff(cluster("H100"))
    t_pc, e_pc = eff(cluster("H100", fabric="pcie"))
    t_pc2, e_pc2 = eff(cluster("H100", fabric="pcie", sockets=2, cpu=TWO_SOCKET_CPU))
    t_bwd = traffic.BACKWARD_SHARE * t

    # the boundary: 1 GiB AllReduce busbw
    gib = {k: predict_collective("allreduce", GiB, c).busbw_bytes_per_s for k, c in
           (("node", cluster("H100")), ("eight", _cluster_of(1024)),
            ("one", _cluster_of(1024, nics_per_node=1)))}

    # bandwidth growth
    first = NVLINK_GENERATIONS[1].total_per_dir_bytes_per_s
    last = NVLINK_GENERATIONS[5].total_per_dir_bytes_per_s
    g_fit = (last / first) ** (1 / 4) - 1

    # exercise 3: the smallest model below 50 % weak-scaling efficiency, 1 port a node
    c1 = _cluster_of(1024, nics_per_node=1)
    lo, hi = 1e9, 1e11
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        t_ar = predict_collective("allreduce", gradient_bytes(mid), c1).time_s
        if t / (t + t_ar) < EX3_EFFICIENCY:
            hi = mid
        else:
            lo = mid
    p_half = hi

    r2 = comm_speedup(2, t_comm_spec, t)
    # where the model beats even the spec-sheet rule: NVLS (the sum inside the switch)
    over_spec = [n for n, p in pred.items() if strong(n, p) > comm_speedup(n, t_comm_spec, t)]
    link = NCCL_LINK_BW[90].value
    return {
        # the drawing's rates: spec and the predictor's planning rates
        "ndr_gbit": f"{ndr.rate_gbit_per_s:g} Gb/s",
        "nvlink_spec": format_bandwidth(b_spec),
        "ndr_spec": format_bandwidth(ndr.bw_per_dir_bytes_per_s),
        "nccl_link": format_bandwidth(link),
        "nccl_links": f"{h100.nvlink_links}",
        "nccl_gpu": format_bandwidth(_cluster_of(16).intra_bw_bytes_per_s()),
        "ib_eff": _pct(network_efficiency("InfiniBand")),
        "ndr_payload": format_bandwidth(_cluster_of(16).nic_bw_bytes_per_s()),
        # the rule, derived
        "ratio": _pct(ILLUSTRATIVE_RATIO),
        "cap_ratio": f"{comm_speedup(10 ** 9, ILLUSTRATIVE_RATIO * t, t):.0f}",
        "grad": format_bytes(grad),
        "cap_spec": f"{t / t_comm_spec:.0f}",
        "weak_1024": f"{weak(1024, pred[1024]):.0f}",
        "weak_1024_floor": f"{int(weak(1024, pred[1024]) // 100 * 100)}",
        "ring_steps_1024": f"{2 * 1023:,}",
        # where the rule breaks: two named rates
        "rate_spec": format_bandwidth(b_spec),
        "rate_ring": format_bandwidth(b_ring),
        "rate_ring2": format_bandwidth(pred[2].busbw_bytes_per_s),
        "model_2": f"{strong(2, pred[2]):.2f}",
        "rule_2_spec": f"{r2:.2f}",
        "over_spec": " and ".join(f"{n:,}" for n in over_spec),
        "ring_net_busbw": format_bandwidth(min(ring_net)),
        "tree_1024_busbw": format_bandwidth(pred[1024].busbw_bytes_per_s),
        "nic_share": f"{b_spec / ndr.bw_per_dir_bytes_per_s:.0f}",
        "rule_1024_spec": f"{comm_speedup(1024, t_comm_spec, t):.1f}",
        "rule_1024_ring": f"{comm_speedup(1024, t_rule_ring, t):.1f}",
        "model_1024": f"{strong(1024, pred[1024]):.1f}",
        "model_1024_round": f"{strong(1024, pred[1024]):.0f}",
        "rule_1024_spec_round": f"{comm_speedup(1024, t_comm_spec, t):.0f}",
        "model_1024_eff": _pct(strong(1024, pred[1024]) / 1024),
        "t_rule_ring": _ms(t_rule_ring),
        "t_rule_spec": _ms(t_comm_spec),
        "ar_min_past": _ms(min(p.time_s for p in past)),
        "ar_max_past": _ms(max(p.time_s for p in past)),
        "ar_1024": _ms(pred[1024].time_s),
        "ar_2": _ms(pred[2].time_s),
        "above_last": f"{max(above):,}",
        "below_first": f"{min(below):,}",
        "rule_8_ring": f"{strong0['seeds_speedup'][3]:.1f}",
        "model_8": f"{strong0['model_speedup'][3]:.1f}",
        "weak_eff_1024": _pct(weak(1024, pred[1024]) / 1024),
        "full_low": f"{min(full[4:]):.1f}",
        "full_high": f"{max(full[4:]):.1f}",
        "full_end": f"{full[-1]:.1f}",
        "bwd": _s(t_bwd),
        "one_nic_16": _s(one_nic[16].time_s, 1),
        "eight_nic_16": _ms(pred[16].time_s),
        "one_strong_8": f"{strong_one[3]:.0f}",
        "one_strong_16": f"{strong_one[4]:.0f}",
        "one_strong_max": f"{1.5 if max(strong_one[5:]) < 1.5 else max(strong_one[5:]):g}",
        "one_weak_eff": _pct(weak_one["efficiency_model"][-1]),
        "ex_ar_end": _ms(t_ex[-1]),
        # gradient volume
        "fp32_grad": format_bytes(gradient_bytes(N_PARAMS, bytes_per_element=4)),
        # Amdahl
        "amdahl_1000": f"{amdahl_speedup(0.99, 1000):.0f}",
        "amdahl_limit": f"{amdahl_limit(0.99):.0f}",
        "amdahl_eff": _pct(amdahl_speedup(0.99, 1000) / 1000),
        "amdahl_p": _pct(1 - 0.99), "amdahl_d_serial": _pct(1 - 0.9),
        "amdahl_d": f"{amdahl_speedup(0.9, 1000):.0f}",
        "gustafson": f"{(1 - 0.99) + 0.99 * 1000:.0f}",
        # the articles' claims, checked
        "eff_nv": _pct(e_nv), "speedup_nv": f"{8 * e_nv:.1f}",
        "eff_pcie": _pct(e_pc), "speedup_pcie": f"{8 * e_pc:.1f}",
        "t_pcie": _s(t_pc),
        "t_pcie2": _s(t_pc2, 1),
        "eff_pcie2": _pct(e_pc2), "speedup_pcie2": f"{8 * e_pc2:.1f}",
        "socket_link": format_bandwidth(cpu_link_bw_bytes_per_s(TWO_SOCKET_CPU)),
        "four_ratio": f"{8 / 4 - 1:.1f}×",
        "mesh_pair": format_bandwidth(b_spec / 3),
        # the boundary
        "p2p_share": f"{b_spec / ndr.bw_per_dir_bytes_per_s:.0f}",
        "busbw_node": format_bandwidth(gib["node"]),
        "busbw_eight": format_bandwidth(gib["eight"]),
        "busbw_one": format_bandwidth(gib["one"]),
        # growth
        "growth": _pct(g_fit),
        # exercises
        "ex2_target": _pct(EX2_EFFICIENCY), "ex3_target": _pct(EX3_EFFICIENCY),
        "ex2_gpus": f"{max_gpus_at_efficiency(1.0, EX2_RATIO, EX2_EFFICIENCY)}",
        "ex2_eff": _pct(1 / (1 + EX2_RATIO)),
        "ex3_params": f"{p_half / 1e9:.1f} billion",
        "ex3_grad": format_bytes(gradient_bytes(p_half), digits=2),
        "ex3_7b": _s(one_nic[1024].time_s),
    }


def values() -> dict[str, str]:
    return dict(_compute())
