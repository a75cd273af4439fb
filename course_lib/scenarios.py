"""The city at work: the seed articles' six application scenarios, recomputed.

Each scenario is a pure function that takes a few workload knobs, reads every
hardware number from the catalog (:mod:`course_lib.hardware`), runs the
course's closed-form models (:mod:`course_lib.analytic`) and returns a dict:

* ``baseline`` and ``improved`` -- the two set-ups the seed compares, each
  with ``compute_s`` and ``comm_s`` (seconds) and a ``label``;
* ``model_gain`` -- what the models say the improvement is, ``claimed_gain``
  -- what the seed says (``None`` when it gives no number);
* ``rows`` -- ``(quantity, shown value)`` pairs for a table;
* ``plausible``, ``depends_on``, ``uncheckable`` -- the verdict in words.

The seeds name no real deployments we could check ("a cloud vendor", "a
research institute"); the point is to see which claims the physics allows,
which depend on assumptions the seeds leave out, and which cannot be
checked at all.  Every scenario accepts ``load`` (a multiplier on the
workload size: batch, prompt length, model size ... see ``LOAD_MEANING``)
and ``efficiency`` (the fraction of peak FLOP/s the GPUs reach).

Which model answers which question.  The scenarios model nothing of their
own: compute time is :func:`course_lib.analytic.compute_time_s` (or an HBM
read at the catalog's rate), a tensor-parallel AllReduce is
:func:`course_lib.analytic.collective_time_s` (alpha-beta, ring), the
two-level gradient AllReduce is
:func:`course_lib.analytic.hierarchical_allreduce_time_s` at line rate -- the
ideal, catalog-rate bound the chapter argues with -- and the 1,024-GPU
scenario also gives NCCL's calibrated estimate of the same AllReduce
(:func:`course_lib.predict.predict_collective`).

Taught in chapter 10 (the city at work).

Examples
--------
>>> r = scenario("dgx_h100_175b")
>>> r["params"]["n_gpus"]
1024
>>> round(r["pure_dp_nvlink_s"], 1) > 1.0      # seconds, not milliseconds
True
"""

from __future__ import annotations

import math

from .analytic import (collective_time_s, compute_time_s, fibre_rtt_s, gradient_bytes,
                       hierarchical_allreduce_time_s, iteration_time_s)
from .clusters import cluster
from .predict import predict_collective
from .hardware import (gpu, gpu_peak_flops_per_s, hbm_bw_bytes_per_s,
                       latency_s, nic, pcie_bw_per_dir_bytes_per_s)
from .units import (check_choice, check_fraction, check_int, check_positive,
                    format_bandwidth, format_bytes, format_time)

__all__ = ["SCENARIOS", "LOAD_MEANING", "scenario", "scenario_names", "report_markdown",
           "tp_allreduce_time_s", "hierarchical_allreduce_time_s",
           "tp_inference_70b", "roce_training_1024", "edge_cloud_inference",
           "dgx_h100_175b", "tp_token_latency", "hpc_halo_exchange",
           "prefill_flops", "CONTEXT_TOKENS_70B", "ROCE_1024_CASES"]


#: The largest workload multiplier a scenario accepts (``load``).
MAX_LOAD = 1e6


def _check_load(load) -> float:
    """``load`` in (0, MAX_LOAD]: a multiplier on the scenario's workload size."""
    value = check_positive(load, "load")
    if value > MAX_LOAD:
        raise ValueError(f"load must lie in (0, {MAX_LOAD:g}], got {load!r}")
    return value


def _eff(efficiency):
    e = check_fraction(efficiency, "efficiency")
    if e == 0:
        raise ValueError("efficiency must be > 0")
    return e


def _links(gpu_name: str):
    """(label, bw, alpha) of the NVLink and the PCIe road of one GPU model."""
    g = gpu(gpu_name)
    return {
        "nvlink": (f"NVLink {g.nvlink_gen} ({g.name}, {g.nvlink_links} links)",
                   g.nvlink_bw_per_dir_bytes_per_s, latency_s("nccl_hop_nvlink")),
        "pcie": (f"PCIe Gen{g.pcie_gen} x16",
                 pcie_bw_per_dir_bytes_per_s(g.pcie_gen), latency_s("nccl_hop_pcie")),
    }


def tp_allreduce_time_s(n_bytes: float, n_ranks: int, bw_bytes_per_s: float,
                        step_latency_s: float) -> float:
    """One tensor-parallel AllReduce of an activation (ring, alpha-beta).

    Notes
    -----
    ``t = 2(n-1)/n x S/B + 2(n-1) alpha`` (:func:`ring_allreduce_time_s`).
    Measured NCCL small-message times are larger (a launch floor of tens of
    microseconds, chapter 7); inference engines cut that with fused one-shot
    kernels and CUDA graphs, so alpha-beta is the optimistic end.  Chapter 10.

    >>> tp_allreduce_time_s(0, 8, 1e9, 1e-6)
    1.4e-05

    See Also
    --------
    course_lib.analytic.collective_time_s : the model this names.
    course_lib.predict.predict_collective : NCCL's calibrated time (launch
        floor, protocols) for the same AllReduce on a :func:`course_lib.cluster`.
    """
    return collective_time_s("allreduce", n_bytes, n_ranks, bw_bytes_per_s,
                             step_latency_s)


def _verdict(model_gain, claimed_gain, tolerance=0.35):
    if claimed_gain is None:
        return "no number to check"
    ratio = model_gain / claimed_gain
    if abs(math.log(ratio)) <= math.log(1 + tolerance):
        return "consistent with the model"
    return ("the model gives less" if ratio < 1 else "the model gives more")


def _pack(key, title, source, claims, params, baseline, improved, gain_name,
          claimed_gain, rows, plausible, depends_on, uncheckable, extra=None,
          overlap=False):
    for side in (baseline, improved):
        side["total_s"] = iteration_time_s(side["compute_s"], side["comm_s"],
                                           overlap=overlap)
    model_gain = baseline["total_s"] / improved["total_s"]
    out = {"key": key, "title": title, "source": source, "claims": claims,
           "params": params, "baseline": baseline, "improved": improved,
           "gain_name": gain_name, "model_gain": model_gain,
           "claimed_gain": claimed_gain,
           "verdict": _verdict(model_gain, claimed_gain),
           "rows": rows, "plausible": plausible, "depends_on": depends_on,
           "uncheckable": uncheckable}
    out.update(extra or {})
    return out


# ---------------------------------------------------------------------------
# 1. 70B tensor-parallel inference on 8 x A100 (seed 000)
# ---------------------------------------------------------------------------
def tp_inference_70b(load: float = 1.0, efficiency: float = 0.5,
                     n_params: float = 70e9, n_layers: int = 80,
                     hidden: int = 8192, batch: int = 64, n_gpus: int = 8,
                     gpu_name: str = "A100", bytes_per_element: int = 2) -> dict:
    """Decode throughput of a 70B model split 8 ways by tensor parallelism.

    Notes
    -----
    One decode step makes one token for each of ``batch`` sequences.
    Compute: every GPU reads its 1/n of the weights from HBM and does
    ``2 P batch / n`` FLOPs, ``T_comp = max(P d / n / B_hbm,
    2 P batch / (n peak eff))``.  Communication: two AllReduces a layer of
    ``batch x hidden x d`` bytes, on the critical path (not overlapped).
    Left out: the read of each sequence's KV cache (its keys and values of
    every earlier token), which a decode step also streams from HBM; it
    grows with the context and would lengthen the compute side and lower the
    gain, so the model holds for short contexts.
    ``load`` scales the batch.  Seed claim: throughput x3.2, cost -40%.
    ``nccl_gain`` is the same step with NCCL's calibrated AllReduce times
    (:func:`course_lib.predict.predict_collective`) on an 8-GPU PCIe-only
    server and an NVSwitch server: the line-rate ring is the optimistic end
    for PCIe, so ``nccl_gain`` is usually the larger.

    See Also
    --------
    course_lib.analytic.compute_time_s : the matrix maths; the HBM read is bytes / the catalog's HBM rate.
    tp_allreduce_time_s : each AllReduce (alpha-beta ring, catalog rates).
    """
    e = _eff(efficiency)
    b = max(1, round(_check_load(load) * check_int(batch, "batch", 1)))
    n = check_int(n_gpus, "n_gpus", minimum=2)
    layers = check_int(n_layers, "n_layers", minimum=1)
    p = check_positive(n_params, "n_params")
    d = bytes_per_element
    t_weights = p * d / n / hbm_bw_bytes_per_s(gpu_name)
    t_flops = compute_time_s(2 * p * b / n, gpu_peak_flops_per_s(gpu_name), e)
    t_comp = max(t_weights, t_flops)
    msg = b * hidden * d
    links = _links(gpu_name)
    sides = {}
    for kind in ("pcie", "nvlink"):
        label, bw, alpha = links[kind]
        comm = 2 * layers * tp_allreduce_time_s(msg, n, bw, alpha)
        sides[kind] = {"label": label, "compute_s": t_comp, "comm_s": comm}
    step_nv = sides["nvlink"]["compute_s"] + sides["nvlink"]["comm_s"]
    # large batches: maths and AllReduce bytes both grow as the batch, so the
    # gain tends to a limit set by per-sequence maths and per-sequence bytes
    per_seq_flops = compute_time_s(2 * p / n, gpu_peak_flops_per_s(gpu_name), e)
    per_seq_comm = {kind: 2 * layers * 2 * (n - 1) / n * hidden * d / links[kind][1]
                    for kind in ("pcie", "nvlink")}
    gain_limit = ((per_seq_flops + per_seq_comm["pcie"])
                  / (per_seq_flops + per_seq_comm["nvlink"]))
    # the same step with NCCL's calibrated AllReduce times on the same two
    # machines (chapter 7's predictor): a PCIe ring of these GPUs runs well
    # below the PCIe line rate, so the line-rate model is the optimistic
    # end for the baseline and its gain the low end
    nccl_step = {kind: t_comp + 2 * layers * predict_collective(
        "allreduce", msg, cluster(gpu_name, gpus_per_node=n, **kw)).time_s
        for kind, kw in (("pcie", {"fabric": "pcie"}), ("nvlink", {}))}
    nccl_gain = nccl_step["pcie"] / nccl_step["nvlink"]
    rows = [("batch (sequences per step)", f"{b}"),
            ("weights per GPU", format_bytes(p * d / n)),
            ("HBM read of the weights per step", format_time(t_weights)),
            ("matrix maths per step", format_time(t_flops)),
            ("AllReduce message (one per half-layer)", format_bytes(msg)),
            ("AllReduces per token step", f"{2 * layers}"),
            ("tokens/s with NVLink", f"{b / step_nv:,.0f}"),
            ("gain at any batch, however large (limit)", f"x{gain_limit:.2f}"),
            ("gain with NCCL's calibrated AllReduce times (course_lib.predict)",
             f"x{nccl_gain:.2f}")]
    return _pack(
        "tp_inference_70b", "70B tensor-parallel inference on 8 x A100",
        "heterogeneous-communication article, AI 应用场景 (大模型推理服务部署)",
        ["throughput x3.2 with NVLink + RDMA and topology-aware placement (the article names "
         "no baseline; the model assumes the same GPUs on PCIe)", "cost -40%"],
        {"batch": b, "n_gpus": n, "gpu": gpu_name, "n_params": p,
         "efficiency": e},
        sides["pcie"], sides["nvlink"], "decode throughput (x)", 3.2, rows,
        plausible=["NVLink beats PCIe for tensor parallelism: the AllReduces sit on "
                   "every token's critical path",
                   f"a gain that grows with the batch but levels off near "
                   f"x{gain_limit:.1f}: maths and AllReduce bytes both grow with it"],
        depends_on=["the batch size (small batches are bound by reading the weights "
                    "and by start-up latency, and gain less)",
                    "the context length: the model reads the weights but not the KV "
                    "cache, so it holds for short contexts; long ones add HBM reads to "
                    "every step and lower the gain",
                    f"what the PCIe baseline was: x3.2 is beyond the line-rate "
                    f"model's limit of x{gain_limit:.1f}, but a PCIe ring as NCCL "
                    f"really runs it is slower than line rate (x{nccl_gain:.1f} at "
                    "this batch with NCCL's calibrated times), so x3.2 needs a large "
                    "batch or a slower baseline (older software, no peer-to-peer)",
                    "whether RDMA was used at all: 70B fits one 8-GPU server, so "
                    "tensor parallelism needs no network"],
        uncheckable=["cost -40% (no prices, no utilisation figures)",
                     "the unnamed vendor's deployment"],
        extra={"tokens_per_s_nvlink": b / step_nv, "large_batch_gain_limit": gain_limit,
               "nccl_gain": nccl_gain})


# ---------------------------------------------------------------------------
# 2. 1,024-GPU training over RoCE (seed 000)
# ---------------------------------------------------------------------------
def roce_training_1024(load: float = 1.0, efficiency: float = 0.4,
                       n_params: float = 100e9, nodes: int = 128,
                       gpus_per_node: int = 8, gpu_name: str = "A100",
                       nic_name: str = "RoCE-400", tokens_per_step: float = 4e6,
                       claimed_tcp_s: float = 12.0, claimed_rdma_s: float = 1.8,
                       bytes_per_element: int = 2) -> dict:
    """Gradient AllReduce of a 100B model over 1,024 GPUs, RoCEv2 vs TCP.

    Notes
    -----
    Hierarchical AllReduce (:func:`hierarchical_allreduce_time_s`): NVLink
    inside each 8-GPU server, one RoCE port per GPU between servers, at
    line rate (a lower bound) -- the port's rate or the GPU's PCIe link,
    whichever is smaller, since the NIC reads GPU memory over PCIe (an
    A100's Gen4 x16 caps a 400 Gb/s port at 31.5 GB/s); ``nccl_estimate_s`` is NCCL's calibrated
    estimate for the same AllReduce on the same cluster, with the algorithm
    NCCL would choose (``nccl_algorithm``).  Compute per step ``6 P tokens / (N peak eff)``
    (:func:`compute_time_s`).  The TCP baseline is the
    seed's own 12 s (the model cannot know how slow a given TCP stack is);
    the line-rate fraction TCP must have reached is reported.  ``load``
    scales the tokens per step.  Seed claims: AllReduce 12 s -> 1.8 s,
    throughput x6, 70 % of waiting removed.

    See Also
    --------
    course_lib.analytic.hierarchical_allreduce_time_s : the line-rate bound.
    course_lib.predict.predict_collective : ``nccl_estimate_s``.
    course_lib.analytic.compute_time_s : the compute per step.
    """
    e = _eff(efficiency)
    n = check_int(nodes, "nodes", 2) * check_int(gpus_per_node, "gpus_per_node", 1)
    s = gradient_bytes(n_params, bytes_per_element)
    g = gpu(gpu_name)
    port = nic(nic_name)
    # the NIC reads and writes GPU memory over the GPU's PCIe link
    net_bw = min(port.bw_per_dir_bytes_per_s, pcie_bw_per_dir_bytes_per_s(g.pcie_gen))
    t_rdma = hierarchical_allreduce_time_s(
        s, gpus_per_node, nodes, g.nvlink_bw_per_dir_bytes_per_s,
        net_bw, latency_s("nccl_hop_nvlink"), latency_s("nccl_hop_net"))
    # NCCL's own estimate on the same cluster: calibrated rates (NVLink planning
    # rate, protocol and NIC efficiency), launch, hops, pipeline fill, and the
    # algorithm NCCL would pick
    nccl = predict_collective("allreduce", s, cluster(g.name, gpus_per_node, nodes,
                                                      nic=port.name))
    t_nccl = nccl.time_s
    net_bytes = 2 * (nodes - 1) / nodes * s / gpus_per_node
    tokens = _check_load(load) * check_positive(tokens_per_step,
                                                           "tokens_per_step")
    t_comp = compute_time_s(6 * n_params * tokens / n, gpu_peak_flops_per_s(gpu_name), e)
    tcp_fraction = net_bytes / net_bw / claimed_tcp_s
    rdma_needed_fraction = net_bytes / net_bw / claimed_rdma_s
    # compute time at which a 12 s -> 1.8 s change gives x6 (no overlap)
    t_comp_for_x6 = max(0.0, (claimed_tcp_s - 6 * claimed_rdma_s) / 5)
    rows = [("gradients (FP16/BF16)", format_bytes(s)),
            ("each GPU sends over its NIC", format_bytes(net_bytes)),
            ("NIC per GPU", f"{port.family} {format_bandwidth(port.bw_per_dir_bytes_per_s)}"
                            f" per direction ({port.rate_gbit_per_s:g} Gb/s)"),
            ("usable per GPU (port or the GPU's PCIe link, the smaller)",
             f"{format_bandwidth(net_bw)} per direction"),
            ("model AllReduce time (RDMA, line rate, pipelined: a lower bound)",
             format_time(t_rdma)),
            (f"NCCL's estimate, calibrated ({nccl.algorithm}, course_lib.predict)",
             format_time(t_nccl)),
            ("line-rate share TCP reached if it took 12 s", f"{tcp_fraction:.0%}"),
            ("compute per step (model)", format_time(t_comp)),
            ("compute per step for the x6 claim to hold", format_time(t_comp_for_x6))]
    return _pack(
        "roce_training_1024", "1,024-GPU training over RoCE",
        "heterogeneous-communication article, AI 应用场景 (多机多卡训练加速)",
        ["AllReduce 12 s -> 1.8 s", "throughput x6",
         "barriers + overlap removed 70 % of the waiting"],
        {"n_gpus": n, "nodes": nodes, "nic": port.name, "gpu": g.name,
         "n_params": n_params, "tokens_per_step": tokens, "efficiency": e},
        {"label": "TCP (the article's 12 s)", "compute_s": t_comp, "comm_s": claimed_tcp_s},
        {"label": f"RoCEv2 {port.name} (model)", "compute_s": t_comp,
         "comm_s": t_rdma},
        "training throughput (x)", 6.0, rows,
        plausible=[f"the article's 1.8 s, on the hardware assumed here ({g.name}s, one "
                   f"{port.rate_gbit_per_s:g} Gb/s port per GPU: the article names neither): "
                   f"the line-rate lower bound is "
                   f"{format_time(t_rdma)} and NCCL's estimate {format_time(t_nccl)}, so "
                   + (f"1.8 s means RoCE ran at {t_rdma / claimed_rdma_s:.0%} of line rate"
                      if t_rdma <= claimed_rdma_s else
                      "1.8 s is below the line-rate bound: impossible on this hardware"),
                   "kernel bypass helps big transfers too when TCP cannot fill the "
                   "link (CPU copies, single streams)"],
        depends_on=["x6 only if the step was almost all communication: the model's "
                    f"compute of {format_time(t_comp)} a step gives "
                    f"x{(t_comp + claimed_tcp_s) / (t_comp + t_rdma):.1f}",
                    "a 100B model does not fit one GPU: real runs shard it "
                    "(tensor/pipeline/ZeRO), which changes the traffic",
                    "how fast the TCP baseline was: 12 s means it reached "
                    f"{tcp_fraction:.0%} of line rate"],
        uncheckable=["'70 % of waiting removed' (no timeline given)",
                     "the unnamed institute's cluster"],
        extra={"rdma_allreduce_s": t_rdma, "nccl_estimate_s": t_nccl,
               "nccl_algorithm": nccl.algorithm,
               "tcp_line_rate_fraction": tcp_fraction,
               "rdma_needed_line_rate_fraction": rdma_needed_fraction,
               "compute_for_x6_s": t_comp_for_x6, "net_bytes_per_gpu": net_bytes,
               "net_bw_per_gpu_bytes_per_s": net_bw})


#: The hardware the 1,024-GPU claim may have run on (the article names neither
#: the GPU nor the port speed): ``(label, gpu_name, nic_name)``.  DGX A100
#: ships 200 Gb/s ports (ConnectX-6); 400 Gb/s ports came with the H100
#: generation (ConnectX-7) and are also fitted to A100 servers.
ROCE_1024_CASES = (("A100, 400 Gb/s ports", "A100", "RoCE-400"),
                   ("A100, 200 Gb/s ports (DGX A100's rate)", "A100", "RoCE-200"),
                   ("H100, 400 Gb/s ports", "H100", "RoCE-400"))


# ---------------------------------------------------------------------------
# 3. Edge-cloud inference (seed 000)
# ---------------------------------------------------------------------------
def edge_cloud_inference(load: float = 1.0, efficiency: float = 0.5,
                         feature_bytes: float = 8192, distance_km: float = 50.0,
                         nic_name: str = "RoCE-100", budget_s: float = 3e-3,
                         cloud_compute_s: float = 1e-3) -> dict:
    """A feature vector from an edge gateway to a cloud GPU and back.

    Notes
    -----
    Request and answer each cost ``T = T_fibre/2 + endpoint latency + D/B``;
    the fibre round trip ``2 d / (0.7 c)`` (:func:`fibre_rtt_s`).  The
    baseline uses the catalog's kernel TCP latency, the improved path the
    small-RDMA latency.  ``load`` scales the feature size; ``efficiency``
    is unused (kept for a uniform signature).  Seed claim: < 3 ms.
    """
    _eff(efficiency)
    d_bytes = _check_load(load) * check_positive(feature_bytes,
                                                            "feature_bytes")
    dist_m = check_positive(distance_km, "distance_km") * 1e3
    port = nic(nic_name)
    rtt = fibre_rtt_s(dist_m)
    sides = {}
    for kind, lat_name, label in (("tcp", "tcp_kernel_path", "TCP through the kernel"),
                                  ("rdma", "rdma_small_one_way", "RDMA (kernel bypass)")):
        comm = rtt + 2 * latency_s(lat_name) + d_bytes / port.bw_per_dir_bytes_per_s
        sides[kind] = {"label": label, "compute_s": cloud_compute_s, "comm_s": comm}
    # farthest distance at which the wire alone still fits the budget
    max_km = budget_s * 0.7 * 299_792_458.0 / 2 / 1e3
    rows = [("feature vector", format_bytes(d_bytes)),
            ("fibre distance one way", f"{distance_km:g} km"),
            ("fibre round trip", format_time(rtt)),
            ("RDMA round trip (wire + endpoints + bytes)",
             format_time(sides["rdma"]["comm_s"])),
            ("TCP round trip", format_time(sides["tcp"]["comm_s"])),
            ("farthest cloud the 3 ms budget allows (wire only)", f"{max_km:,.0f} km")]
    return _pack(
        "edge_cloud_inference", "Edge-cloud inference",
        "heterogeneous-communication article, AI 应用场景 (边缘-云端协同推理)",
        ["features sent by RDMA to a cloud GPU cluster", "latency under 3 ms"],
        {"feature_bytes": d_bytes, "distance_km": distance_km, "nic": port.name},
        sides["tcp"], sides["rdma"], "round-trip speed (x)", None, rows,
        plausible=["under 3 ms at metro distances: the wire is ~10 us per km "
                   "round trip and a feature vector is tiny"],
        depends_on=["distance: beyond a few hundred km the speed of light alone "
                    "breaks the budget, whatever the protocol",
                    "RDMA over a WAN: RoCE wants a lossless data-centre fabric, so an "
                    "edge gateway usually reaches the cloud over TCP/IP anyway",
                    "queueing and the cloud's own inference time, which dominate"],
        uncheckable=["the unnamed security system", "what 'communication latency' "
                     "included"],
        extra={"max_distance_km": max_km, "fibre_rtt_s": rtt})


# ---------------------------------------------------------------------------
# 4. 175B training on 128 DGX H100 (seed 003)
# ---------------------------------------------------------------------------
def dgx_h100_175b(load: float = 1.0, efficiency: float = 0.4,
                  n_params: float = 175e9, nodes: int = 128,
                  gpus_per_node: int = 8, nic_name: str = "NDR",
                  tp: int = 8, pp: int = 16, tokens_per_step: float = 3.1e6,
                  bytes_per_element: int = 2) -> dict:
    """175B training on 128 DGX H100 (1,024 GPUs) with 400 Gb/s InfiniBand.

    Notes
    -----
    Pure data parallelism would AllReduce all 350 GB of gradients
    (hierarchical, NVLink or PCIe inside the node, one NDR port per GPU).
    Real runs split the model: with tensor parallelism ``tp`` inside a node
    and pipeline ``pp`` across nodes, each GPU holds ``P/(tp pp)`` of the
    gradients and the data-parallel AllReduce spans ``N/(tp pp)`` GPUs in
    different nodes.  The comparison NVLink vs PCIe is then the tensor-
    parallel traffic inside the node, estimated as 4 AllReduces a layer of
    ``tokens/dp x hidden x d`` bytes for each of the ``96/pp`` layers of a
    pipeline stage (96 layers, hidden 12,288: GPT-3's shape).
    ``load`` scales the tokens per step.  Seed claims: PCIe 64 GB/s makes the
    sync take seconds, NVLink 900 GB/s milliseconds; throughput +40 %.

    See Also
    --------
    course_lib.analytic.hierarchical_allreduce_time_s : the pure data-parallel sync.
    course_lib.analytic.collective_time_s : the sharded sync across nodes.
    tp_allreduce_time_s : the tensor-parallel AllReduces.
    course_lib.analytic.compute_time_s : the compute per step.
    """
    e = _eff(efficiency)
    n = check_int(nodes, "nodes", 2) * check_int(gpus_per_node, "gpus_per_node", 1)
    tp = check_int(tp, "tp", 1, gpus_per_node)
    pp = check_int(pp, "pp", 1)
    if n % (tp * pp):
        raise ValueError(f"tp x pp = {tp * pp} must divide the {n} GPUs")
    dp = n // (tp * pp)
    s = gradient_bytes(n_params, bytes_per_element)
    g = gpu("H100")
    port = nic(nic_name)
    links = _links("H100")
    pure = {}
    for kind in ("nvlink", "pcie"):
        _, bw, alpha = links[kind]
        pure[kind] = hierarchical_allreduce_time_s(
            s, gpus_per_node, nodes, bw, port.bw_per_dir_bytes_per_s, alpha,
            latency_s("nccl_hop_net"))
    shard = s / (tp * pp)
    dp_sync = collective_time_s("allreduce", shard, dp, port.bw_per_dir_bytes_per_s,
                                latency_s("nccl_hop_net"))
    tokens = _check_load(load) * check_positive(tokens_per_step,
                                                           "tokens_per_step")
    t_comp = compute_time_s(6 * n_params * tokens / n, gpu_peak_flops_per_s("H100"), e)
    layers, hidden = 96, 12288
    msg = tokens / dp * hidden * bytes_per_element  # activations through one stage
    sides = {}
    for kind in ("pcie", "nvlink"):
        label, bw, alpha = links[kind]
        tp_comm = 4 * (layers / pp) * tp_allreduce_time_s(msg, tp, bw, alpha)
        sides[kind] = {"label": label, "compute_s": t_comp,
                       "comm_s": tp_comm + dp_sync}
    rows = [("gradients (FP16/BF16)", format_bytes(s)),
            ("pure data parallel sync, NVLink inside nodes",
             format_time(pure["nvlink"])),
            ("pure data parallel sync, PCIe inside nodes", format_time(pure["pcie"])),
            (f"gradient shard per GPU (tp={tp}, pp={pp})", format_bytes(shard)),
            (f"data-parallel sync of the shard over {dp} nodes (NDR)",
             format_time(dp_sync)),
            ("tensor-parallel traffic per step, NVLink",
             format_time(sides["nvlink"]["comm_s"] - dp_sync)),
            ("tensor-parallel traffic per step, PCIe",
             format_time(sides["pcie"]["comm_s"] - dp_sync)),
            ("compute per step (model)", format_time(t_comp))]
    return _pack(
        "dgx_h100_175b", "175B training on 128 DGX H100",
        "NVLink article, AI 应用场景 (千亿大模型分布式训练)",
        ["PCIe (64 GB/s) gradient sync takes seconds, NVLink (900 GB/s) milliseconds",
         "throughput +40 % over a PCIe design"],
        {"n_gpus": n, "tp": tp, "pp": pp, "dp": dp, "nic": port.name,
         "tokens_per_step": tokens, "efficiency": e},
        sides["pcie"], sides["nvlink"], "training throughput (x)", 1.4, rows,
        plausible=["a gain of tens of percent: tensor parallelism inside the node is "
                   "where NVLink matters"],
        depends_on=["how the model is split (tp, pp, dp) and the batch",
                    "'milliseconds' only for a sharded gradient: a full 350 GB "
                    f"sync takes {format_time(pure['nvlink'])} even on NVLink, and the "
                    "InfiniBand part does not get faster with NVLink",
                    "the article compares NVLink's both-ways total (900) with one "
                    "direction of PCIe Gen5 (64); like for like, per direction, "
                    f"they are {format_bandwidth(g.nvlink_bw_per_dir_bytes_per_s)} and "
                    f"{format_bandwidth(links['pcie'][1])}"],
        uncheckable=["the unnamed team's run and its PCIe predecessor"],
        extra={"pure_dp_nvlink_s": pure["nvlink"], "pure_dp_pcie_s": pure["pcie"],
               "dp_sync_s": dp_sync, "shard_bytes": shard})


# ---------------------------------------------------------------------------
# 5. Tensor-parallel token latency (seed 003)
# ---------------------------------------------------------------------------
#: The context window of the 70B model the token-latency scenario describes
#: (Llama 2 70B: 4,096 tokens; Touvron et al., "Llama 2: Open Foundation and
#: Fine-Tuned Chat Models", 2023, table 1).
CONTEXT_TOKENS_70B = 4096


def prefill_flops(n_params: float, n_layers: int, hidden: int, prompt_tokens: int) -> float:
    """Forward-pass FLOPs of a prompt of ``L`` tokens: ``2 P L + 2 n_layer L^2 d_attn``.

    Kaplan et al., "Scaling Laws for Neural Language Models" (arXiv:2001.08361),
    table 1: a forward pass costs ``2N + 2 n_layer n_ctx d_attn`` FLOPs per
    token -- the weights' matrix products, and attention's scores and weighted
    sum over the context (``d_attn`` = ``hidden`` here).  A prompt's token
    ``i`` attends to ``i`` tokens, on average about ``L/2``; Kaplan's count with
    ``n_ctx = L`` is the two products (QK^T and A V, ``2 x 2 x L/2 x d`` each
    way) of that causal average.  Summed over the ``L`` tokens the attention
    term grows as ``L^2``: negligible for short prompts, dominant for long ones.

    >>> prefill_flops(70e9, 80, 8192, 1) == 2 * 70e9 + 2 * 80 * 8192
    True
    """
    p = check_positive(n_params, "n_params")
    layers = check_int(n_layers, "n_layers", 1)
    d = check_int(hidden, "hidden", 1)
    L = check_int(prompt_tokens, "prompt_tokens", 1)
    return 2 * p * L + 2 * layers * d * L * L


def tp_token_latency(load: float = 1.0, efficiency: float = 0.5,
                     n_params: float = 70e9, n_layers: int = 80,
                     hidden: int = 8192, prompt_tokens: int = 2048,
                     n_gpus: int = 8, gpu_name: str = "A100",
                     bytes_per_element: int = 2,
                     context_tokens: int | None = CONTEXT_TOKENS_70B) -> dict:
    """Time to first token of a 70B model on 8 x A100, NVLink vs PCIe.

    Notes
    -----
    The prompt (prefill) is one big forward pass: :func:`prefill_flops`
    (``2 P L`` for the weights plus attention's ``2 n_layer L^2 hidden``)
    divided over the ``n`` GPUs at ``peak x eff`` -- but never less than the
    read of the GPU's ``1/n`` of the weights from HBM (as :func:`tp_inference_70b`:
    a short prompt is bound by it) -- and two AllReduces a layer
    of ``L x hidden x d`` bytes.  A prompt longer than ``context_tokens`` (the
    model's context window; ``None``: no limit) is computed but marked:
    ``beyond_context`` is true and the table and verdict say so -- it describes
    a hypothetical long-context model of the same shape.
    ``load`` scales the prompt length.  Seed claims: first-token latency
    -60 %, activation exchange time cut to a tenth.  ``nccl_ttft_cut`` is
    the cut with NCCL's calibrated AllReduce times
    (:func:`course_lib.predict.predict_collective`) on a PCIe-only and an
    NVSwitch server: the line-rate ring flatters the PCIe baseline.

    See Also
    --------
    course_lib.analytic.compute_time_s : the prefill maths.
    tp_allreduce_time_s : each AllReduce (alpha-beta ring, catalog rates).
    """
    e = _eff(efficiency)
    L = max(1, round(_check_load(load) * check_int(prompt_tokens,
                                                              "prompt_tokens", 1)))
    n = check_int(n_gpus, "n_gpus", 2)
    n_params = check_positive(n_params, "n_params")
    if context_tokens is not None:
        context_tokens = check_int(context_tokens, "context_tokens", 1)
    beyond = context_tokens is not None and L > context_tokens
    flops = prefill_flops(n_params, n_layers, hidden, L)
    attention_share = 1 - 2 * n_params * L / flops
    # as in tp_inference_70b: every GPU reads its 1/n of the weights once, so a prompt of a
    # few dozen tokens is bound by that read, not by its FLOPs
    t_weights = n_params * bytes_per_element / n / hbm_bw_bytes_per_s(gpu_name)
    t_comp = max(t_weights, compute_time_s(flops / n, gpu_peak_flops_per_s(gpu_name), e))
    msg = L * hidden * bytes_per_element
    links = _links(gpu_name)
    sides = {}
    for kind in ("pcie", "nvlink"):
        label, bw, alpha = links[kind]
        sides[kind] = {"label": label, "compute_s": t_comp,
                       "comm_s": 2 * n_layers * tp_allreduce_time_s(msg, n, bw, alpha)}
    ratio = sides["nvlink"]["comm_s"] / sides["pcie"]["comm_s"]
    ttft = {k: v["compute_s"] + v["comm_s"] for k, v in sides.items()}
    cut = 1 - ttft["nvlink"] / ttft["pcie"]
    # the same prefill with NCCL's calibrated AllReduce times (chapter 7's
    # predictor): a PCIe ring runs well below line rate, so the cut is larger
    nccl_ttft = {kind: t_comp + 2 * n_layers * predict_collective(
        "allreduce", msg, cluster(gpu_name, gpus_per_node=n, **kw)).time_s
        for kind, kw in (("pcie", {"fabric": "pcie"}), ("nvlink", {}))}
    nccl_cut = 1 - nccl_ttft["nvlink"] / nccl_ttft["pcie"]
    rows = [("prompt length", f"{L} tokens"
             + (f" (beyond the model's {context_tokens:,}-token context: a hypothetical "
                "long-context model of the same shape)" if beyond else "")),
            ("attention's share of the prefill maths", f"{attention_share:.0%}"),
            ("activation per AllReduce", format_bytes(msg)),
            ("exchange time NVLink / PCIe", f"{ratio:.2f}"),
            ("first token, PCIe", format_time(ttft["pcie"])),
            ("first token, NVLink", format_time(ttft["nvlink"])),
            ("first-token latency cut", f"{cut:.0%}"),
            ("cut with NCCL's calibrated AllReduce times (course_lib.predict)",
             f"{nccl_cut:.0%}")]
    return _pack(
        "tp_token_latency", "Tensor-parallel token latency",
        "NVLink article, AI 应用场景 (生成式 AI 在线推理加速)",
        ["first-token latency -60 % vs PCIe", "activation exchange time cut to 1/10"],
        {"prompt_tokens": L, "n_gpus": n, "gpu": gpu_name, "efficiency": e},
        sides["pcie"], sides["nvlink"], "first-token speed (x)", 1 / (1 - 0.6), rows,
        plausible=["'a tenth' is the per-direction bandwidth ratio NVLink 3 : PCIe "
                   "Gen4 for large activations",
                   "a first-token cut of roughly half for prompts of a few thousand tokens"],
        depends_on=["the prompt length: short prompts are latency-bound and the ratio "
                    "is the latency ratio, not the bandwidth ratio; long prompts add "
                    "attention's maths, which grows as the prompt squared while the "
                    "AllReduce bytes grow as the prompt, so the cut shrinks"
                    + (f"; this prompt is longer than the model's {context_tokens:,}-token "
                       "context" if beyond else ""),
                    "how efficient the maths is (a faster kernel makes communication "
                    "a larger share)",
                    f"how fast the PCIe ring really is: at line rate the cut is "
                    f"{cut:.0%}, with NCCL's calibrated times {nccl_cut:.0%}"],
        uncheckable=["the vendor's deployment and its PCIe baseline"],
        extra={"exchange_ratio": ratio, "ttft_cut": cut, "nccl_ttft_cut": nccl_cut,
               "attention_share": attention_share, "beyond_context": beyond,
               "context_tokens": context_tokens})


# ---------------------------------------------------------------------------
# 6. HPC halo exchange (seed 003)
# ---------------------------------------------------------------------------
def hpc_halo_exchange(load: float = 1.0, efficiency: float = 0.5,
                      cells_per_side: int = 128, bytes_per_cell: int = 16,
                      halo_depth: int = 1, passes: int = 10,
                      gpu_name: str = "A100") -> dict:
    """A stencil code on 8 GPUs (2 x 2 x 2 domains), exchanging halos each step.

    Notes
    -----
    Compute is memory-bound: ``passes`` sweeps over the subdomain,
    ``T_comp = passes n^3 b / B_hbm`` (divided by ``efficiency`` x 2, so 0.5
    means the HBM runs at full speed).  Halo: 6 faces of ``n^2 x depth x b``
    bytes, 6 messages.  NVLink: one copy, ``6 alpha + bytes/B``; PCIe:
    staged through the host (two legs, :data:`LATENCIES`
    ``pcie_staged_p2p``).  ``load`` scales the cells per GPU.  Seed claim:
    GROMACS on 8 GPUs about x2 with NVLink.
    """
    e = _eff(efficiency)
    cells = _check_load(load) * check_int(cells_per_side,
                                                     "cells_per_side", 4) ** 3
    side = cells ** (1 / 3)
    b = check_int(bytes_per_cell, "bytes_per_cell", 1)
    t_comp = passes * cells * b / (hbm_bw_bytes_per_s(gpu_name) * 2 * e)
    halo = 6 * side ** 2 * halo_depth * b
    g = gpu(gpu_name)
    nv = 6 * latency_s("nvlink_p2p") + halo / g.nvlink_bw_per_dir_bytes_per_s
    pc = 6 * latency_s("pcie_staged_p2p") + 2 * halo / pcie_bw_per_dir_bytes_per_s(
        g.pcie_gen)
    # the other PCIe baseline: peer-to-peer through the switch (one leg, a small copy's start-up)
    pc_p2p = 6 * latency_s("pcie_p2p") + halo / pcie_bw_per_dir_bytes_per_s(g.pcie_gen)
    gain_p2p = (t_comp + pc_p2p) / (t_comp + nv)
    rows = [("cells per GPU", f"{cells:,.0f}"),
            ("halo bytes per step", format_bytes(halo)),
            ("compute per step", format_time(t_comp)),
            ("halo over NVLink", format_time(nv)),
            ("halo staged over PCIe", format_time(pc)),
            ("halo over PCIe peer-to-peer", format_time(pc_p2p))]
    out = _pack(
        "hpc_halo_exchange", "HPC halo exchange",
        "NVLink article, AI 应用场景 (HPC 科学计算中的数据交换)",
        ["GROMACS on 8 GPUs about x2 faster with NVLink than PCIe"],
        {"cells_per_gpu": cells, "bytes_per_cell": b, "gpu": gpu_name,
         "efficiency": e},
        {"label": f"PCIe Gen{g.pcie_gen} staged", "compute_s": t_comp, "comm_s": pc},
        {"label": f"NVLink {g.nvlink_gen}", "compute_s": t_comp, "comm_s": nv},
        "step speed (x)", 2.0, rows,
        plausible=["x2 when each GPU's share is small (strong scaling): steps are "
                   "short and the halo's latency dominates"],
        depends_on=["the system size per GPU: big domains are compute-bound and "
                    "gain little", "whether the code overlaps the halo with the "
                    "interior update (GROMACS does)",
                    "whether the PCIe baseline staged the halo through host memory (the "
                    f"model's baseline) or sent it peer-to-peer (then x{gain_p2p:.2f})"],
        uncheckable=["the GROMACS benchmark behind the x2 (no system size given)"])
    out["pcie_p2p_comm_s"], out["gain_pcie_p2p"] = pc_p2p, gain_p2p
    return out


#: The six scenarios, in the order of chapter 10.
SCENARIOS = {
    "tp_inference_70b": tp_inference_70b,
    "roce_training_1024": roce_training_1024,
    "edge_cloud_inference": edge_cloud_inference,
    "dgx_h100_175b": dgx_h100_175b,
    "tp_token_latency": tp_token_latency,
    "hpc_halo_exchange": hpc_halo_exchange,
}

#: What the ``load`` knob scales in each scenario.
LOAD_MEANING = {
    "tp_inference_70b": "batch size (64 at load 1)",
    "roce_training_1024": "tokens per step (4 M at load 1)",
    "edge_cloud_inference": "feature-vector size (8 kB at load 1)",
    "dgx_h100_175b": "tokens per step (3.1 M at load 1)",
    "tp_token_latency": "prompt length (2,048 tokens at load 1)",
    "hpc_halo_exchange": "cells per GPU (128^3 at load 1)",
}


def scenario_names() -> list[str]:
    """Keys of :data:`SCENARIOS`."""
    return list(SCENARIOS)


def scenario(name: str, **params) -> dict:
    """Run one scenario by name with optional parameters (see each function).

    >>> scenario("tp_token_latency")["claimed_gain"]
    2.5
    """
    key = check_choice(name, "name", SCENARIOS)
    return SCENARIOS[key](**params)


def report_markdown(result: dict) -> str:
    """A scenario's result as a Markdown block: claims, numbers, verdict.

    >>> "| quantity |" in report_markdown(scenario("hpc_halo_exchange"))
    True
    """
    needed = ("claimed_gain", "title", "source", "claims", "rows")
    if not isinstance(result, dict) or any(k not in result for k in needed):
        raise TypeError(f"result must be a dict from scenario(...) with keys {needed}; "
                        f"got {type(result).__name__}")
    r = result
    claimed = ("no ratio given" if r["claimed_gain"] is None
               else f"x{r['claimed_gain']:.2g}")
    lines = [f"**{r['title']}** ({r['source']})", "",
             "Claims: " + "; ".join(r["claims"]) + ".", "",
             "| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in r["rows"]]
    for side in ("baseline", "improved"):
        s = r[side]
        lines.append(f"| step, {s['label']} | {format_time(s['total_s'])} "
                     f"(compute {format_time(s['compute_s'])}, communication "
                     f"{format_time(s['comm_s'])}) |")
    lines += ["", f"**{r['gain_name']}: model x{r['model_gain']:.2f}, article {claimed} "
              f"-- {r['verdict']}.**", ""]
    for title, key in (("Plausible", "plausible"), ("Depends on", "depends_on"),
                       ("Cannot be checked", "uncheckable")):
        lines.append(f"* *{title}:* " + "; ".join(r[key]) + ".")
    return "\n".join(lines)
