"""Chapter 10's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch10.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/10_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

Every figure is a scenario of :mod:`course_lib.scenarios` (or the predictor it
names) at the chapter's settings; the articles' own claims are cited in the
prose, not computed here.

>>> v = values()
>>> v["roce_bound_200"], v["roce_share_h100"]      # the 1.8 s claim on other hardware
('1.99 s', '55 %')
>>> v["cut_long"]                                  # attention's L^2 at 100x the prompt
'28 %'
"""

from __future__ import annotations

from functools import lru_cache

from ..hardware import pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth, format_time

#: The chapter's explorer prompts and answers pick these settings.
LONG_PROMPT_LOAD = 100        # "prompts 100 times as long"
SHORT_PROMPT_LOAD = 0.25
#: A prompt of a few dozen tokens (quiz Q3's "very short prompt"): latency-bound AllReduces.
TINY_PROMPT_TOKENS = 32
FAST_EFFICIENCY = 0.9         # "90 % of peak FLOP/s"
NCCL_EFFICIENCY = 0.6         # "60 % of peak FLOP/s"
BIG_BATCH_LOADS = (5, 10)     # "five times the batch", "ten times the batch" (words)
#: Batch multiples scanned for where NCCL's calibrated gain peaks and falls back.
BATCH_SCAN = (1, 2, 3, 5, 7, 10, 12, 15, 20, 25, 30, 40, 50, 70, 100)
HUGE_BATCH_LOAD = 100         # "a hundred times the batch"
HALO_BIG_LOAD = 100
#: The quiz's share-of-time question: communication was this share of the old step.
QUIZ_COMM_SHARE = 0.4


def _pct(x: float, decimals: int = 0) -> str:
    return f"{x:.{decimals}%}".replace("%", " %")


def _nccl_window(batch: int) -> dict[str, str]:
    """Where NCCL's calibrated gain of scenario 1 peaks, falls back, and passes the claim."""
    from ..scenarios import tp_inference_70b
    half = {x: tp_inference_70b(load=x)["nccl_gain"] for x in BATCH_SCAN}
    peak = max(half, key=half.get)
    claim = tp_inference_70b()["claimed_gain"]
    fast = [x for x in BATCH_SCAN
            if tp_inference_70b(load=x, efficiency=NCCL_EFFICIENCY)["nccl_gain"] >= claim]
    return {"nccl_peak": _x(half[peak], 2), "nccl_peak_load": f"{peak}",
            "nccl_gain_100x": _x(half[HUGE_BATCH_LOAD]), "huge_load": f"{HUGE_BATCH_LOAD}",
            "claim_lo_seqs": f"{min(fast) * batch:,}", "claim_hi_seqs": f"{max(fast) * batch:,}"}


def _first_claim_load(efficiency: float) -> int:
    """The smallest batch multiple of BATCH_SCAN at which NCCL's calibrated gain passes the claim."""
    from ..scenarios import tp_inference_70b
    claim = tp_inference_70b()["claimed_gain"]
    return min(x for x in BATCH_SCAN
               if tp_inference_70b(load=x, efficiency=efficiency)["nccl_gain"] >= claim)


def _x(g: float, decimals: int = 1) -> str:
    return f"{g:.{decimals}f}×"


@lru_cache(maxsize=1)
def _compute() -> dict[str, str]:
    from ..analytic import fibre_rtt_s
    from ..clusters import cluster
    from ..hardware import gpu, latency_s, nic
    from ..predict import predict_collective
    from ..scenarios import (CONTEXT_TOKENS_70B, ROCE_1024_CASES, dgx_h100_175b,
                             edge_cloud_inference, hpc_halo_exchange, roce_training_1024,
                             tp_inference_70b, tp_token_latency)
    from ..units import format_bytes

    out: dict[str, str] = {}
    # 1. 70B inference
    inf = tp_inference_70b()
    b = inf["params"]["batch"]
    msg = b * 8192 * 2
    pcie = predict_collective("allreduce", msg, cluster("A100", fabric="pcie"))
    line4 = pcie_bw_per_dir_bytes_per_s(4)
    nccl_big = {(load, e): tp_inference_70b(load=load, efficiency=e)["nccl_gain"]
                for load in (2,) + BIG_BATCH_LOADS for e in (0.5, NCCL_EFFICIENCY, FAST_EFFICIENCY)}
    out.update({
        "batch": f"{b}",
        "gain_64": _x(inf["model_gain"]),
        "gain_limit": _x(inf["large_batch_gain_limit"]),
        "gain_limit_fast": _x(tp_inference_70b(efficiency=FAST_EFFICIENCY)["large_batch_gain_limit"]),
        "gain_1": _x(tp_inference_70b(load=1 / b)["model_gain"]),
        "nccl_gain_64": _x(inf["nccl_gain"]),
        "nccl_gain_10x": _x(nccl_big[(BIG_BATCH_LOADS[1], 0.5)]),
        "nccl_gain_5x_60": _x(nccl_big[(BIG_BATCH_LOADS[0], NCCL_EFFICIENCY)], 2),
        "nccl_gain_2x_90": _x(nccl_big[(2, FAST_EFFICIENCY)]),
        **_nccl_window(b),
        "claim_lo_seqs_90": f"{_first_claim_load(FAST_EFFICIENCY) * b:,}",
        "pcie4": format_bandwidth(line4),
        "pcie_ring_share": _pct(pcie.busbw_bytes_per_s / line4),
        "msg_70b": format_bytes(msg, digits=1),
        "weights_70b": format_bytes(70e9 * 2),
        "fast": _pct(FAST_EFFICIENCY), "half": _pct(tp_token_latency()["params"]["efficiency"]), "nccl_eff": _pct(NCCL_EFFICIENCY),
    })
    # 2. 1,024 GPUs over RoCE: the claim on each hardware the article may have meant
    roce = roce_training_1024()
    out.update({
        "bound": format_time(roce["rdma_allreduce_s"]),
        "nccl": format_time(roce["nccl_estimate_s"]),
        "roce_share": _pct(roce["rdma_allreduce_s"] / 1.8),
        "grad_100b": format_bytes(roce["params"]["n_params"] * 2),
        "port_400": format_bandwidth(nic("RoCE-400").bw_per_dir_bytes_per_s),
        "port_400_gbit": f"{nic('RoCE-400').rate_gbit_per_s:g} Gb/s",
        "nvlink3": format_bandwidth(gpu("A100").nvlink_bw_per_dir_bytes_per_s),
        "tcp_share": _pct(roce["tcp_line_rate_fraction"]),
        "x6_compute": format_time(roce["compute_for_x6_s"]),
    })
    for (label, g, n), key in zip(ROCE_1024_CASES, ("400", "200", "h100")):
        r = roce_training_1024(gpu_name=g, nic_name=n)
        out[f"roce_bound_{key}"] = f"{r['rdma_allreduce_s']:.2f} s"
        out[f"roce_nccl_{key}"] = f"{r['nccl_estimate_s']:.2f} s"
        out[f"roce_share_{key}"] = _pct(r["rdma_allreduce_s"] / 1.8)
        out[f"roce_rate_{key}"] = format_bandwidth(r["net_bw_per_gpu_bytes_per_s"])
    out["port_200_gbit"] = f"{nic('RoCE-200').rate_gbit_per_s:g} Gb/s"
    slow = roce_training_1024(nic_name="RoCE-100")
    out["roce_100_bound"] = f"{slow['rdma_allreduce_s']:.0f} s"
    out["port_100_gbit"] = f"{nic('RoCE-100').rate_gbit_per_s:g} Gb/s"
    # the workload at which the model's gain is x6 (12 s TCP against the model's RDMA time):
    # compute scales with the load, so solve (T + 12) / (T + t_rdma) = 6 for T
    t_x6 = (roce["baseline"]["comm_s"] - 6 * roce["improved"]["comm_s"]) / 5
    load_x6 = t_x6 / roce["baseline"]["compute_s"]
    x6 = roce_training_1024(load=load_x6)
    assert abs(x6["model_gain"] - 6) < 1e-6
    out["x6_load"] = f"{load_x6:.3f}×"
    out["x6_tokens"] = f"{x6['params']['tokens_per_step'] / 1e6:.2f} M"
    out["x6_compute_at_load"] = f"{t_x6:.2f} s"
    # 3. edge-cloud
    edge = edge_cloud_inference()
    far = edge_cloud_inference(distance_km=edge["max_distance_km"])
    saved = 2 * latency_s("tcp_kernel_path") - 2 * latency_s("rdma_small_one_way")
    out.update({
        "per_km": f"{fibre_rtt_s(1000.0) * 1e6:.0f} µs",
        "kernel_saved": f"{saved * 1e3:.1f} ms",
        "edge_km": f"{edge['params']['distance_km']:g} km",
        "edge_share": _pct(saved / edge["baseline"]["comm_s"]),
        "edge_share_far": _pct(saved / far["baseline"]["comm_s"]),
    })
    # 4. 175B on DGX H100
    d = dgx_h100_175b()
    out["gain_175b"] = f"+{(d['model_gain'] - 1):.0%}".replace("%", " %")
    # 5. token latency
    tok = tp_token_latency()
    long = tp_token_latency(load=LONG_PROMPT_LOAD)
    ctx = tp_token_latency(load=CONTEXT_TOKENS_70B / tok["params"]["prompt_tokens"])
    out.update({
        "cut": _pct(tok["ttft_cut"], 1),
        "cut_short": _pct(tp_token_latency(load=SHORT_PROMPT_LOAD)["ttft_cut"], 1),
        "cut_tiny": _pct(tp_token_latency(
            load=TINY_PROMPT_TOKENS / tok["params"]["prompt_tokens"])["ttft_cut"], 1),
        "tiny_tokens": f"{TINY_PROMPT_TOKENS}",
        "cut_long": _pct(long["ttft_cut"]),
        "cut_ctx": _pct(ctx["ttft_cut"]),
        "cut_fast": _pct(tp_token_latency(efficiency=FAST_EFFICIENCY)["ttft_cut"]),
        "cut_nccl": _pct(tok["nccl_ttft_cut"]),
        "cut_nccl_long": _pct(long["nccl_ttft_cut"]),
        "cut_0": _pct(tok["ttft_cut"]),
        "prompt": f"{tok['params']['prompt_tokens']:,}",
        "prompt_long": f"{long['params']['prompt_tokens']:,}",
        "context": f"{CONTEXT_TOKENS_70B:,}",
        "attn_share": _pct(tok["attention_share"]),
        "attn_share_long": _pct(long["attention_share"]),
        "long_load": f"{LONG_PROMPT_LOAD}",
        "msg_prefill": format_bytes(tok["params"]["prompt_tokens"] * 8192 * 2, digits=0),
        "pcie_ring_share_prefill": _pct(predict_collective(
            "allreduce", tok["params"]["prompt_tokens"] * 8192 * 2,
            cluster("A100", fabric="pcie")).busbw_bytes_per_s / line4),
    })
    # 6. halo
    out["halo_gain"] = _x(hpc_halo_exchange()["model_gain"], 2)
    out["halo_gain_p2p"] = _x(hpc_halo_exchange()["gain_pcie_p2p"], 2)
    out["halo_gain_big"] = _x(hpc_halo_exchange(load=HALO_BIG_LOAD)["model_gain"], 2)
    out["halo_big_load"] = f"{HALO_BIG_LOAD}×"
    # exercises: H100
    h = tp_inference_70b(gpu_name="H100")
    rows = {k: v for k, v in inf["rows"]}
    hrows = {k: v for k, v in h["rows"]}
    key = "HBM read of the weights per step"
    out.update({
        "hbm_a100": f"{float(rows[key].split()[0]):.1f} ms",
        "hbm_h100": f"{float(hrows[key].split()[0]):.1f} ms",
        "h100_gain": _x(h["model_gain"]), "h100_limit": _x(h["large_batch_gain_limit"]),
        "h100_nccl": _x(h["nccl_gain"]),
    })
    # the quiz's share-of-time question (chapter 10's bound G <= 1 / (1 - share))
    c = QUIZ_COMM_SHARE
    out.update({"q_comm": _pct(c), "q_comm_frac": f"{c:g}", "q_comp": _pct(1 - c),
                "q_comp_frac": f"{1 - c:g}", "q_gain_num": f"{1 / (1 - c):.2f}",
                "q_gain": f"{1 / (1 - c):.2f}x", "q_wrong_b": f"{1 / c:g}x",
                "q_wrong_d": f"{1 + c:g}x"})
    return out


def values() -> dict[str, str]:
    return dict(_compute())
