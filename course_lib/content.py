"""Chapter 11's material as data: the 8 myths, the 20 interview questions,
the zh/en glossary and what comes next.

* :data:`MYTHS` -- the four 常见误区 (common misconceptions) of each seed
  article, restated in our words, each with a verdict and an ``evidence()``
  function that computes its case from the course's models (and, for the
  small-message myth, from the measured nccl-tests curve in
  ``course_lib/data/calibration_measurements.csv``).
* :data:`INTERVIEW_QUESTIONS` -- the ten 面试题 (interview questions) of each
  seed as :class:`course_lib.quiz.Question` objects, every wrong option
  explained; where a seed's explanation was wrong we say so in ``fixes``.
* :data:`GLOSSARY` -- the story's terms in Chinese and English.
* :data:`NEXT` -- NVLink 5, NVLink-C2C, optical links and UALink, with
  sources; their numbers live in the hardware catalog.

Seeds: ``000`` is the heterogeneous-communication article (城市交通 overview),
``003`` the NVLink article (磁悬浮专线).

Taught in chapter 11 (rumours and interviews).

Examples
--------
>>> len(MYTHS), len(INTERVIEW_QUESTIONS), len(GLOSSARY) >= 30
(8, 20, True)
>>> myth("barriers").evidence()["extra_barrier_cost"] > 0
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .analytic import (batched_transfer_time_s, effective_bw_bytes_per_s, gradient_bytes,
                       host_copy_bw_bytes_per_s,
                       iteration_time_s, ring_allreduce_time_s,
                       route_transfer_time_s)
from .hardware import (FUTURE_LINKS, calibration_data_path, calibration_rows, gpu,
                       latency_s, nic, nvlink_generation, pcie_bw_per_dir_bytes_per_s,
                       system)
from .quiz import Question
from .traffic import barrier_step_time_s, straggler_phase_times_s
from .units import check_choice, format_bandwidth, format_time

__all__ = ["Myth", "MYTHS", "myth", "myth_keys", "INTERVIEW_QUESTIONS", "CHAPTER_QUESTIONS",
           "QUESTION_FIXES", "GLOSSARY", "NEXT", "calibration_rows",
           "CALIBRATION_CSV"]

#: Where the measured collective and copy curves live (package data).
CALIBRATION_CSV = str(calibration_data_path())


@dataclass(frozen=True)
class Myth:
    """One misconception from a seed article, and the evidence against it.

    Parameters
    ----------
    key : str
        Short name.
    source : str
        Seed article and section, e.g. ``"seed 000, 常见误区 #1"``.
    claim : str
        The misconception, in our words.
    verdict : str
        ``"false"``, ``"misleading"`` or ``"half true"``.
    truth : str
        What is right instead.
    evidence : callable
        ``evidence() -> dict`` of numbers from the models (and a
        ``"summary"`` string); no arguments, deterministic.
    kind : str
        Where the evidence comes from: ``"model"``, ``"simulation"``,
        ``"measurement"``.
    chapter : int
        The chapter that teaches the physics behind it.
    """

    key: str
    source: str
    claim: str
    verdict: str
    truth: str
    evidence: Callable[[], dict] = field(repr=False)
    kind: str = "model"
    chapter: int = 11


# ---------------------------------------------------------------------------
# evidence: each a few model calls, numbers only from the catalog
# ---------------------------------------------------------------------------
def _ev_nvlink_everywhere():
    gb = 1e9
    h2d = route_transfer_time_s(gb, "h2d", gpu="H100")
    nv = route_transfer_time_s(gb, "p2p-nvlink", gpu="H100")
    rd = route_transfer_time_s(gb, "rdma", gpu="H100", nic="NDR")
    small = {r: route_transfer_time_s(4096, r, gpu="H100")
             for r in ("h2d", "p2p-nvlink", "rdma")}
    return {"h2d_1GB_s": h2d, "nvlink_1GB_s": nv, "rdma_1GB_s": rd,
            "small_4kB_s": small, "bar_unit": "s",
            "bars": [("1 GB host->GPU (PCIe only)", h2d),
                     ("1 GB GPU->GPU, NVLink", nv),
                     ("1 GB GPU->other server, RDMA", rd)],
            "summary": (f"1 GB host->GPU can only take PCIe: {format_time(h2d)}. "
                        f"GPU->GPU in the same server over NVLink: {format_time(nv)}; "
                        f"to another server NVLink does not reach, RDMA takes "
                        f"{format_time(rd)}. For 4 kB every road costs a few "
                        f"microseconds of start-up: "
                        + ", ".join(f"{k} {format_time(v)}" for k, v in small.items())
                        + ". Each road has its own job.")}


def _ev_dma_cpu_idle():
    n, size = 10_000, 4096
    api = latency_s("cuda_api_call")             # the host's share of one copy
    alpha = latency_s("pcie_small_copy_sync")    # one copy, end to end
    bw = host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    one_by_one = batched_transfer_time_s(n, size, bw, alpha, batched=False)
    merged = batched_transfer_time_s(n, size, bw, alpha, batched=True)
    cpu_busy = n * api
    return {"n_copies": n, "cpu_issue_s": cpu_busy, "one_by_one_s": one_by_one,
            "merged_s": merged, "speedup": one_by_one / merged, "bar_unit": "s",
            "bars": [("10,000 copies one by one", one_by_one),
                     ("CPU time issuing them", cpu_busy), ("one merged copy", merged)],
            "summary": (f"{n:,} separate 4 kB copies: the CPU spends about "
                        f"{format_time(cpu_busy)} issuing and completing them "
                        f"({format_time(api)} of host work per copy, measured on an "
                        f"H200), and the whole job, waiting for each copy, takes "
                        f"{format_time(one_by_one)}; merged into one copy "
                        f"it takes {format_time(merged)} ({one_by_one / merged:.0f}x "
                        "faster). DMA frees the CPU from moving bytes, not from "
                        "setting up and completing the moves.")}


def _ev_hardware_is_enough():
    h100 = gpu("H100")
    s, n, b = gradient_bytes(7e9), 8, h100.nvlink_bw_per_dir_bytes_per_s
    # naive software: gather all gradients on one GPU, then send the sum back
    naive = 2 * (n - 1) * s / b
    ring = ring_allreduce_time_s(s, n, b)
    t_comp = 0.8  # the seed's own compute time per step, seconds
    worst = iteration_time_s(t_comp, naive, overlap=False)
    # buckets overlap the backward pass only (about 2/3 of the compute, chapter 8)
    best = t_comp / 3 + iteration_time_s(2 * t_comp / 3, ring, overlap=True)
    return {"naive_s": naive, "ring_s": ring, "collective_ratio": naive / ring,
            "step_naive_s": worst, "step_good_s": best, "step_ratio": worst / best,
            "bar_unit": "s",
            "bars": [("gather + send back", naive), ("ring AllReduce", ring),
                     ("step, naive, no overlap", worst),
                     ("step, ring, overlapped", best)],
            "summary": (f"Same 8 x H100, same 14 GB of gradients. Naive software "
                        f"(gather on one GPU, send back): {format_time(naive)}. "
                        f"A ring AllReduce: {format_time(ring)} ({naive / ring:.0f}x). "
                        f"With the seed's 0.8 s of compute, naive and serial vs a "
                        f"ring overlapped with the backward pass makes the step {format_time(worst)} vs {format_time(best)} "
                        f"({worst / best:.1f}x). The roads are the same; the "
                        "traffic plan is not.")}


def _ev_barriers():
    t = straggler_phase_times_s(8, 24, 0.01, jitter=0.1, seed=7)
    every = barrier_step_time_s(t, every_phase=True)
    once = barrier_step_time_s(t, every_phase=False)
    ideal = float(t.mean(axis=0).sum())
    return {"every_phase_s": every, "one_barrier_s": once, "mean_gpu_s": ideal,
            "extra_barrier_cost": every / once - 1, "bar_unit": "s",
            "bars": [("barrier after every layer", every),
                     ("one barrier per step", once), ("average GPU's work", ideal)],
            "summary": (f"8 GPUs, 24 layers of 10 ms each with 10 % random noise "
                        f"(simulated, fixed seed). A barrier after every layer: "
                        f"{format_time(every)} a step; one barrier at the end (the "
                        f"AllReduce): {format_time(once)}. The extra lights cost "
                        f"{every / once - 1:.0%} and add no correctness: the "
                        "AllReduce already makes every GPU wait for the same "
                        "gradients.")}


def _ev_nvlink_is_pcie():
    h100 = gpu("H100")
    rows = {}
    for size in (4096, 1e9):
        rows[size] = (route_transfer_time_s(size, "p2p-staged", gpu="H100"),
                      route_transfer_time_s(size, "p2p-nvlink", gpu="H100"))
    ratio_bw = h100.nvlink_bw_per_dir_bytes_per_s / pcie_bw_per_dir_bytes_per_s(5)
    return {"staged_4kB_s": rows[4096][0], "nvlink_4kB_s": rows[4096][1],
            "staged_1GB_s": rows[1e9][0], "nvlink_1GB_s": rows[1e9][1],
            "bandwidth_ratio": ratio_bw, "bar_unit": "s",
            "bars": [("1 GB staged through host", rows[1e9][0]),
                     ("1 GB over NVLink", rows[1e9][1])],
            "summary": (f"GPU to GPU through host memory over PCIe crosses PCIe twice "
                        f"and pays the host's start-up: 4 kB takes "
                        f"{format_time(rows[4096][0])}, 1 GB {format_time(rows[1e9][0])}."
                        f" Over NVLink: {format_time(rows[4096][1])} and "
                        f"{format_time(rows[1e9][1])}. The bandwidth alone differs "
                        f"{ratio_bw:.1f}x (per direction). Where PCIe peer-to-peer "
                        "works (same PCIe switch) the host copy disappears too, but "
                        "the bandwidth stays PCIe's; NVLink adds its own route, "
                        "loads, stores and atomics to peer memory at NVLink "
                        "bandwidth, and NVSwitch to scale it.")}


def _ev_box_flies():
    h100 = gpu("H100")
    s = gradient_bytes(7e9)
    nv = ring_allreduce_time_s(s, 8, h100.nvlink_bw_per_dir_bytes_per_s)
    pc = ring_allreduce_time_s(s, 8, pcie_bw_per_dir_bytes_per_s(5))
    t_comp, t_data = 0.8, 1.0  # seed's compute; a CPU data loader, seconds
    loader = {k: t_data + iteration_time_s(t_comp, c, overlap=False)
              for k, c in (("pcie", pc), ("nvlink", nv))}
    # buckets overlap the backward pass only: T_fwd + max(T_bwd, T_comm)
    overlapped = {k: t_comp / 3 + iteration_time_s(2 * t_comp / 3, c, overlap=True)
                  for k, c in (("pcie", pc), ("nvlink", nv))}
    return {"allreduce_nvlink_s": nv, "allreduce_pcie_s": pc,
            "gain_with_slow_loader": loader["pcie"] / loader["nvlink"],
            "gain_with_overlap": overlapped["pcie"] / overlapped["nvlink"],
            "bar_unit": "s",
            "bars": [("step, PCIe, slow loader", loader["pcie"]),
                     ("step, NVLink, slow loader", loader["nvlink"]),
                     ("step, PCIe, overlapped", overlapped["pcie"]),
                     ("step, NVLink, overlapped", overlapped["nvlink"])],
            "summary": (f"7B, 8 x H100: AllReduce {format_time(nv)} on NVLink vs "
                        f"{format_time(pc)} on PCIe Gen5. With a data loader that "
                        f"stalls each step for 1 s, NVLink speeds the step up only "
                        f"{loader['pcie'] / loader['nvlink']:.2f}x; with overlap, "
                        f"PCIe's {format_time(pc)} already hides behind the "
                        f"{format_time(2 * t_comp / 3)} backward pass and NVLink gains "
                        f"{overlapped['pcie'] / overlapped['nvlink']:.2f}x. The "
                        "slowest stage sets the pace, not the fastest link.")}


def _ev_no_domain_limit():
    from .predict import cluster, predict_collective

    s = gradient_bytes(7e9)
    h100 = gpu("H100")
    port = nic("NDR").bw_per_dir_bytes_per_s
    cases = {"one node (8 GPUs, NVSwitch)": cluster("H100"),
             "128 nodes, 8 NDR NICs a node": cluster("H100", nodes=128, nic="NDR"),
             "128 nodes, 1 NDR NIC a node": cluster("H100", nodes=128, nic="NDR",
                                                    nics_per_node=1)}
    pred = {k: predict_collective("allreduce", s, c) for k, c in cases.items()}
    keys = list(cases)
    return {"time_s": {k: p.time_s for k, p in pred.items()},
            "busbw_bytes_per_s": {k: p.busbw_bytes_per_s for k, p in pred.items()},
            "p2p_ratio": h100.nvlink_bw_per_dir_bytes_per_s / port,
            "bar_unit": "s", "bars": [(k, pred[k].time_s) for k in keys],
            "summary": (f"AllReduce of 14 GB, predicted: {format_time(pred[keys[0]].time_s)}"
                        f" inside one node (busbw {format_bandwidth(pred[keys[0]].busbw_bytes_per_s)});"
                        f" {format_time(pred[keys[1]].time_s)} over 1,024 GPUs with one "
                        f"400 Gb/s NIC per GPU (busbw {format_bandwidth(pred[keys[1]].busbw_bytes_per_s)})"
                        f" -- DGX H100 carries 8 NICs precisely so that the network keeps "
                        f"up; with one NIC a node: {format_time(pred[keys[2]].time_s)} "
                        f"(busbw {format_bandwidth(pred[keys[2]].busbw_bytes_per_s)}, the NIC "
                        f"rate). And any single GPU still reaches a GPU in another node "
                        f"{h100.nvlink_bw_per_dir_bytes_per_s / port:.0f}x slower than one "
                        f"in its own node. The NVLink domain ends at the node "
                        f"({system('DGX H100').n_gpus} GPUs in a DGX H100).")}


def _ev_small_messages():
    """Myth 8: one measure on both sides -- AllReduce busbw at 256 KiB over the
    plateau, measured (nccl-tests CSV) and predicted (:func:`predict_collective`)."""
    from .predict import cluster, predict_collective

    small = 262144
    rows = [r for r in calibration_rows()
            if r["collective"] == "AllReduce" and r["system"].startswith("H100")]
    out = {}
    dgx = cluster("H100")
    big = max(rows, key=lambda r: r["busbw_GBps"])["bytes"] if rows else 8 * 2 ** 30
    p_small = predict_collective("allreduce", small, dgx)
    p_big = predict_collective("allreduce", big, dgx)
    share = p_small.busbw_bytes_per_s / p_big.busbw_bytes_per_s
    if rows:
        rows.sort(key=lambda r: r["bytes"])
        peak = max(r["busbw_GBps"] for r in rows)
        at = min(rows, key=lambda r: abs(r["bytes"] - small))
        out.update({"measured_peak_busbw_GBps": peak,
                    "measured_256kB_busbw_GBps": at["busbw_GBps"],
                    "measured_share_at_256kB": at["busbw_GBps"] / peak})
        measured = (f"Measured on 8 x H100 (nccl-tests): AllReduce busbw is "
                    f"{at['busbw_GBps']:g} GB/s at 256 KiB against a plateau of "
                    f"{peak:g} GB/s, {at['busbw_GBps'] / peak:.0%} of it. ")
    else:
        measured = "(measured curve not found in course_lib/data/) "
    out["bar_unit"] = "fraction"
    out["bars"] = [("predicted: 256 KiB AllReduce busbw / plateau", share)]
    if rows:
        out["bars"].insert(0, ("measured: 256 KiB AllReduce busbw / plateau",
                               out["measured_share_at_256kB"]))
    out.update({"model_256kB_share": share,
                "model_256kB_time_s": p_small.time_s,
                "model_256kB_algorithm": p_small.algorithm,
                "summary": measured + (
                    f"The course's predictor (cl.predict_collective, same machine, same "
                    f"collective) agrees: a 256 KiB AllReduce takes "
                    f"{format_time(p_small.time_s)} ({p_small.algorithm}), "
                    f"{share:.0%} of the plateau busbw -- moving the bytes takes about a "
                    f"microsecond, the launch and synchronisation the rest. Small "
                    "messages are paid in start-ups: bucket them.")})
    return out


MYTHS: list[Myth] = [
    Myth("nvlink_everywhere", "seed 000, 常见误区 #1",
         "NVLink is the fastest road, so every transfer should use it; PCIe is "
         "slow and best avoided.", "false",
         "Each road serves different places: NVLink joins GPUs in one server, PCIe "
         "is the only road from host memory to a GPU on x86 servers, and RDMA is the "
         "only one between servers. For small messages start-up latency, not "
         "bandwidth, decides.", _ev_nvlink_everywhere, "model", 1),
    Myth("dma_cpu_idle", "seed 000, 常见误区 #2",
         "DMA moves data without the CPU, so the CPU sits idle and copying costs "
         "the system nothing.", "half true",
         "The DMA engine moves the bytes, but the CPU still allocates and pins "
         "buffers, writes descriptors, launches copies and handles completions. "
         "Thousands of small copies keep it busy; merge them.",
         _ev_dma_cpu_idle, "model", 4),
    Myth("hardware_is_enough", "seed 000, 常见误区 #3",
         "With NVLink and InfiniBand installed, communication is fast by itself; "
         "the runtime software has nothing to add.", "false",
         "Hardware builds the roads; software plans the traffic: the collective "
         "algorithm, overlap, bucketing and placement. On identical hardware they "
         "change the step time several-fold.", _ev_hardware_is_enough, "model", 7),
    Myth("barriers", "seed 000, 常见误区 #4",
         "More synchronisation is safer: put a barrier after every communication.",
         "false",
         "Every barrier makes all GPUs wait for the slowest one. Keep the barriers "
         "correctness needs (the gradient AllReduce is one) and remove the rest.",
         _ev_barriers, "simulation", 8),
    Myth("nvlink_is_pcie", "seed 003, 常见误区 #1",
         "NVLink is just PCIe with more bandwidth; code can be written as before.",
         "false",
         "PCIe can carry GPU-to-GPU traffic too: peer-to-peer copies and loads "
         "that skip host memory where the topology allows (both GPUs under one "
         "PCIe switch, or a root complex that forwards peer traffic); otherwise "
         "they are staged through host memory. NVLink differs in bandwidth (about "
         "7x per direction on H100), in route (no PCIe switch or CPU root complex "
         "in the way), in loads, stores and atomics at that bandwidth, and in "
         "scale through NVSwitch. Code that assumed host staging should use peer "
         "access and NCCL, not the code written for PCIe.",
         _ev_nvlink_is_pcie, "model", 3),
    Myth("box_flies", "seed 003, 常见误区 #2",
         "An 8-GPU NVLink server makes distributed training fast automatically; if "
         "it does not, the machine is broken.", "false",
         "The slowest stage sets the pace: data loading, CPU work, a poor split of "
         "the model or unhidden small messages. NVLink helps only the part of the "
         "step that waits on GPU-to-GPU traffic.", _ev_box_flies, "model", 8),
    Myth("no_domain_limit", "seed 003, 常见误区 #3",
         "All GPUs can talk over NVLink, so even clusters of thousands of GPUs have "
         "no communication bottleneck.", "false",
         "NVLink reaches only the GPUs of one NVLink domain (8 in a DGX/HGX node, "
         "72 in an NVL72 rack). Beyond it traffic takes the NICs, several times "
         "slower per GPU, so large clusters are built and programmed in levels.",
         _ev_no_domain_limit, "model", 9),
    Myth("small_messages", "seed 003, 常见误区 #4",
         "Only the bandwidth of big transfers matters; small messages are "
         "irrelevant because NVLink is fast.", "false",
         "Below a few hundred kilobytes the start-up cost dominates and a collective "
         "reaches a small fraction of its bandwidth; this is why frameworks bucket "
         "gradients and libraries pick different algorithms by size.",
         _ev_small_messages, "measurement", 7),
]


def myth_keys() -> list[str]:
    """Keys of :data:`MYTHS`."""
    return [m.key for m in MYTHS]


def myth(key: str) -> Myth:
    """The myth with this key.

    >>> myth("small_messages").source
    'seed 003, 常见误区 #4'
    """
    k = check_choice(key, "key", myth_keys())
    return next(m for m in MYTHS if m.key == k)


# ---------------------------------------------------------------------------
# interview questions: 10 from each seed, restated, every wrong option explained
# ---------------------------------------------------------------------------
_S0, _S3 = "seed 000, 面试题", "seed 003, 面试题"

INTERVIEW_QUESTIONS: list[Question] = [
    Question("What is NVLink's main advantage over the other ways GPUs communicate?",
             ["It reaches across the network to other data centres",
              "Very high bandwidth and low latency between GPUs in the same server",
              "It replaces every CPU-GPU transfer",
              "It works without any software configuration"],
             {1}, "NVLink is a direct GPU-to-GPU link inside a server (or an NVLink "
             "domain): its value is bandwidth and latency between neighbours.",
             {0: "Reaching other machines is the job of RDMA over InfiniBand or RoCE.",
              2: "On x86 servers the CPU still reaches the GPU over PCIe; only "
                 "NVLink-C2C systems (Grace Hopper) link CPU and GPU with NVLink.",
              3: "Drivers, NCCL and peer access must be set up; topology-aware "
                 "software is what makes it pay."}, source=_S0 + " Q1"),
    Question("Why does a PCIe DMA copy want pinned (page-locked) host memory?",
             ["It raises the CPU clock", "The OS cannot page it out or move it, so "
              "the DMA engine can read the physical pages directly",
              "It widens the PCIe link", "It saves GPU memory"],
             {1}, "A DMA engine works on physical addresses that must stay valid for "
             "the whole copy. Pageable memory may be moved or swapped, so the driver "
             "first copies it into its own pinned buffer: that extra copy is why "
             "pageable transfers are slower (chapter 4).",
             {0: "Pinning changes nothing about the CPU's clock.",
              2: "The link is the same; pinned copies simply get more of it, "
                 "because no staging copy is needed.",
              3: "Pinned memory lives on the host; GPU memory use is unchanged."},
             source=_S0 + " Q2"),
    Question("What is the key architectural idea of RDMA?",
             ["A faster network line rate",
              "Kernel bypass: the NIC reads and writes the remote application's "
              "memory without the OS in the data path",
              "Longer fibre cables", "It makes NVLink unnecessary"],
             {1}, "RDMA removes the kernel and its copies from the data path: the "
             "NIC moves data between registered user buffers, so latency and CPU "
             "load drop (chapter 5).",
             {0: "RDMA runs at the same line rates as other traffic on that port; the "
                 "gain is in the path, not the rate.",
              2: "Cable length only adds propagation delay (~5 ns per metre).",
              3: "They serve different distances: NVLink inside a server or domain, "
                 "RDMA between servers. Clusters use both."}, source=_S0 + " Q3"),
    Question("Compared with a fully connected topology, what is the main drawback of "
             "a ring?",
             ["The cabling is too expensive",
              "Distant GPUs are several hops apart, so point-to-point latency grows "
              "with the number of GPUs",
              "It cannot connect more than two GPUs", "It needs more switches"],
             {1}, "On a ring of N GPUs the farthest pair is N/2 hops apart (chapter "
             "6). Note the limit of this answer: for bandwidth-bound collectives the "
             "ring is not worse, since ring AllReduce is bandwidth-optimal; its cost "
             "is the 2(N-1) latency steps.",
             {0: "Expensive cabling (N(N-1)/2 links) is the full mesh's problem.",
              2: "Rings connect any number of GPUs; that is their appeal.",
              3: "A ring needs no switch; neither does a full mesh."},
             source=_S0 + " Q4"),
    Question("Which techniques make multi-GPU training communicate more "
             "efficiently?",
             ["Overlapping communication with computation",
              "Topology-aware placement of the ranks",
              "Merging small transfers into larger ones",
              "Adding more barriers"],
             {0, 1, 2}, "Overlap hides communication behind the backward pass, "
             "topology-aware placement keeps heavy traffic on short fast routes, and "
             "merging pays the start-up cost once (chapters 4, 6, 8).",
             {3: "Each barrier makes every GPU wait for the slowest; more of them "
                 "only add waiting (myth 'barriers', chapter 8)."},
             source=_S0 + " Q5"),
    Question("What does a barrier do in data-parallel training?",
             ["It raises the GPU clock",
              "Every GPU waits until all have reached it before going on",
              "It compresses the model",
              "It picks the best communication route"],
             {1}, "A barrier is a meeting point: no one proceeds until everyone has "
             "arrived. In data parallelism the gradient AllReduce itself plays that "
             "role, which is why the slowest GPU sets the pace.",
             {0: "Clocks are managed by the GPU's power controller, not by barriers.",
              2: "Model compression (quantisation, pruning) has nothing to do with "
                 "synchronisation.",
              3: "Route and algorithm choice is made by the communication library "
                 "(e.g. NCCL's tuner), not by a barrier."}, source=_S0 + " Q6"),
    Question("Which statements about overlapping communication with computation are "
             "right?",
             ["Gradients that are ready are sent while the backward pass continues",
              "It shortens the time GPUs spend waiting at the synchronisation point",
              "It needs the gradients split into buckets (by layer) and scheduled",
              "With RDMA the CPU is no longer needed at all"],
             {0, 1, 2}, "Frameworks group gradients into buckets and start each "
             "bucket's AllReduce as soon as it is ready, so by the end of the "
             "backward pass most traffic is done (chapter 8). It hides "
             "communication; it does not cure stragglers, whose waiting remains.",
             {3: "RDMA takes the CPU out of the data path, but the CPU still posts "
                 "work requests, registers memory and runs the training loop."},
             source=_S0 + " Q7"),
    Question("In the speed-up rule N / (1 + (N-1) T_comm / T_compute), what does "
             "T_comm / T_compute stand for?",
             ["The ratio of GPU count to bandwidth",
              "Communication time relative to compute time per step: how much "
              "communication drags on training",
              "Model size over data-set size", "CPU over GPU compute power"],
             {1}, "It is the communication-to-computation ratio: zero gives the "
             "ideal N. The rule is exact for strong scaling (a fixed job shared by N "
             "GPUs) with a ring AllReduce: T_compute is the whole step on one GPU, "
             "T_comm = 2S/B, and the speed-up tends to T_compute/T_comm. Latency and "
             "slower links past the node make it worse, overlap better; with a batch "
             "per GPU (weak scaling) throughput grows almost as N (chapter 9).",
             {0: "No such ratio appears; bandwidth enters only through T_comm.",
              2: "The data-set size sets how many steps there are, not the ratio "
                 "within a step.",
              3: "The CPU's compute power is not part of the formula."},
             source=_S0 + " Q8"),
    Question("Where is NVLink mainly used?",
             ["Between data centres",
              "Between GPUs in the same server (or NVLink domain)",
              "Between the CPU and disks", "Between phones and computers"],
             {1}, "NVLink joins the GPUs of a server or rack-scale domain, e.g. for "
             "tensor parallelism and intra-node AllReduce.",
             {0: "Between data centres traffic uses the network (RDMA, TCP/IP).",
              2: "Disks hang off PCIe/NVMe or a storage network.",
              3: "Consumer devices use USB, Wi-Fi and the like; NVLink is a "
                 "data-centre GPU link."}, source=_S0 + " Q9"),
    Question("Which factors set the total time of a PCIe DMA transfer?",
             ["The start-up latency", "The amount of data", "The PCIe bandwidth",
              "The colour theme of the user interface"],
             {0, 1, 2}, "T = T_setup + D / B. The seeds' 'setup' of 5-10 us is really "
             "the end-to-end small-copy latency (API call, submission, DMA, "
             "completion; 7.3 us measured on an H200), not descriptor setup alone; "
             "the DMA part is under 3 us (chapter 4).",
             {3: "Nothing on screen affects a DMA transfer."}, source=_S0 + " Q10"),
    # ---- seed 003 ----------------------------------------------------------
    Question("What is NVLink?",
             ["A high-speed interconnect between GPUs",
              "A general open replacement standard for PCIe",
              "A GPU cooling technology", "A type of memory chip"],
             {0}, "NVLink is NVIDIA's point-to-point link between GPUs (and, as "
             "NVLink-C2C, between a Grace CPU and a GPU).",
             {1: "NVLink is proprietary and serves GPUs; PCIe stays the general "
                 "I/O bus for NICs, disks and the host.",
              2: "Cooling is unrelated.", 3: "Memory chips are HBM/GDDR; NVLink "
              "connects chips, it does not store data."}, source=_S3 + " Q1"),
    Question("Which GPU was the first to ship with NVLink?",
             ["V100", "P100", "A100", "H100"], {1},
             "P100 (2016) brought NVLink 1 with 4 links; V100, A100 and H100 carry "
             "NVLink 2, 3 and 4.",
             {0: "V100 (2017) had NVLink 2.", 2: "A100 (2020) had NVLink 3.",
              3: "H100 (2022) has NVLink 4."}, source=_S3 + " Q2"),
    Question("About how much NVLink 4 bandwidth does one H100 have in total?",
             ["300 GB/s", "600 GB/s", "900 GB/s counting both directions "
              "(450 GB/s each way)", "1.8 TB/s"], {2},
             "18 links x 25 GB/s per direction = 450 GB/s each way, 900 GB/s both "
             "ways added. Always say which: a ring AllReduce computes with the 450.",
             {0: "300 GB/s is V100's bidirectional total (150 each way), and also "
                 "A100's per-direction total.",
              1: "600 GB/s is A100's bidirectional total (12 links).",
              3: "1.8 TB/s is NVLink 5 (B200) counted both ways."},
             source=_S3 + " Q3"),
    Question("Compared with PCIe, which are properties of NVLink?",
             ["Higher bandwidth",
              "A GPU-to-GPU route that crosses no PCIe switch or CPU root complex",
              "Peer loads, stores and atomics at NVLink bandwidth",
              "It replaces PCIe as the only bus"], {0, 1, 2},
             "NVLink has more bandwidth per GPU (H100: about 7x PCIe Gen5 x16 per "
             "direction, not the 14x one seed computes), its own route between the "
             "GPUs (or through NVSwitch), and load/store/atomic access to peer "
             "memory at that bandwidth. Not unique to it: PCIe peer-to-peer also "
             "skips host memory where both GPUs sit under one PCIe switch.",
             {3: "PCIe still connects the host, NICs and storage; the two coexist."},
             source=_S3 + " Q4"),
    Question("What does NVSwitch do in an NVLink system?",
             ["Connects all GPUs of an NVLink domain to each other at full "
              "bandwidth", "Renders graphics instead of the CPU",
              "Adds GPU memory", "Manages temperature and power"], {0},
             "NVSwitch is the interchange: every GPU's links go to the switches, so "
             "any pair talks through one switch (two link traversals; 'one hop' if "
             "you count switch crossings). Since H100 it can also reduce in the "
             "switch (NVLS).",
             {1: "Switches move data; they do not render.",
              2: "Memory capacity comes from HBM on each GPU.",
              3: "Power and thermals are the baseboard's and the GPU's job."},
             source=_S3 + " Q5"),
    Question("What does the time of a data-parallel ring AllReduce depend on?",
             ["The number of parameters", "Bytes per gradient element",
              "The number of GPUs taking part", "The number of samples in the "
              "data set"], {0, 1, 2},
             "t = 2(N-1)/N x (params x bytes) / B + 2(N-1) alpha. Note how weakly N "
             "enters: (N-1)/N is 0.875 at 8 GPUs and 0.999 at 1,024, so the "
             "bandwidth B (missing from the options) matters far more.",
             {3: "The data-set size sets how many steps run, not the time of one "
                 "step's AllReduce."}, source=_S3 + " Q6"),
    Question("With communication perfectly overlapped with computation, how long is "
             "one training step?",
             ["The sum of the two", "The larger of the two", "The smaller of the "
              "two", "Compute minus communication"], {1},
             "T = max(T_comp, T_comm) when one fully hides the other. In training "
             "the AllReduce can hide only behind the backward pass (the forward pass "
             "produces no gradients), so the best real step is T_fwd + max(T_bwd, "
             "T_comm), and the last bucket's AllReduce still sticks out a little "
             "(chapter 8).",
             {0: "The sum is the no-overlap case.",
              2: "The longer activity still has to finish.",
              3: "A difference of times is not a duration of anything here."},
             source=_S3 + " Q7"),
    Question("Which measures raise the real efficiency of multi-GPU training over "
             "NVLink?",
             ["Gradient clipping", "Mixed precision, which halves the bytes",
              "Overlapping communication with computation",
              "Topology-aware placement"], {1, 2, 3},
             "FP16/BF16 gradients halve the volume, overlap hides the transfer, and "
             "placement keeps heavy traffic inside the NVLink domain.",
             {0: "Clipping keeps training numerically stable; it does not change "
                 "what is communicated."}, source=_S3 + " Q8"),
    Question("How many GPUs does a typical NVLink domain in an HGX/DGX server hold?",
             ["1-2", "8 (one 8-GPU server)", "256", "Any number; there is no limit"],
             {1}, "In HGX/DGX A100 and H100 servers the domain is the 8 GPUs of the "
             "node. Correction to the seed: larger domains are not against physics; "
             "NVLink Switch systems build them across a rack (GB200 NVL72: 72 GPUs; "
             "NVIDIA quotes up to 576 for NVLink 5).",
             {0: "Too small: 8-GPU servers are the standard building block.",
              2: "Possible with external NVLink switches (NVIDIA quotes NVLink 5 "
                 "domains of up to 576 GPUs), but not typical of a server; the seed "
                 "is wrong to call it physically impossible.",
              3: "Every domain is bounded by ports, switch radix and cable reach."},
             source=_S3 + " Q9"),
    Question("Which use suits NVLink-C2C best?",
             ["A very fast, coherent link between a CPU and a GPU",
              "Forwarding between internet routers",
              "Video output to a monitor", "Attaching disk arrays"], {0},
             "NVLink-C2C joins the Grace CPU and the Hopper GPU of a GH200 at "
             "900 GB/s counted both ways (450 GB/s each way), coherent, instead of "
             "PCIe.",
             {1: "Routers use Ethernet.", 2: "Displays use HDMI/DisplayPort.",
              3: "Storage uses NVMe/PCIe or a storage network."},
             source=_S3 + " Q10"),
]

#: Where our answer or explanation differs from the seed's.
QUESTION_FIXES = {
    "seed 003, 面试题 Q9": "The seed says domains beyond a server are physically "
    "impossible; NVL72 (72 GPUs) and NVLink Switch systems show otherwise. The "
    "keyed answer (8 for a typical server) stands.",
    "seed 003, 面试题 Q4": "Keyed answer unchanged; the seed elsewhere puts the "
    "NVLink/PCIe ratio at 14x, which mixes a bidirectional and a per-direction "
    "figure: like for like it is about 7x. We add that PCIe peer-to-peer also "
    "gives peer memory access where the topology allows it.",
    "seed 003, 面试题 Q7": "Keyed answer unchanged; we add that only the backward "
    "pass can hide the AllReduce: T_fwd + max(T_bwd, T_comm) at best.",
    "seed 003, 面试题 Q6": "Keyed answer unchanged; we add that N enters only as "
    "(N-1)/N and that the bandwidth matters most.",
    "seed 000, 面试题 Q4": "Keyed answer unchanged; we add that for collectives the "
    "ring is bandwidth-optimal, its weakness is latency.",
    "seed 000, 面试题 Q8": "Keyed answer unchanged; we add that the rule is exact "
    "for strong scaling with a ring AllReduce (T_comm = 2S/B, T_compute the whole "
    "step on one GPU) and does not describe weak scaling.",
    "seed 000, 面试题 Q10": "Keyed answer unchanged; the 'setup' latency is an "
    "end-to-end small-copy latency.",
}

# ---------------------------------------------------------------------------
# glossary: (zh, en, meaning, chapter)
# ---------------------------------------------------------------------------
GLOSSARY: list[tuple[str, str, str, int]] = [
    ("异构通信", "heterogeneous communication", "moving data between different "
     "kinds of processors (CPU, GPU, NIC)", 1),
    ("市政府", "city hall (the CPU)", "story: the CPU gives orders and owns host "
     "memory", 1),
    ("超级工厂", "factory (a GPU)", "story: a GPU computing on its own freight", 1),
    ("仓库 / 显存", "warehouse / GPU memory (HBM)", "story: the GPU's own memory", 1),
    ("张量数据", "freight (tensors)", "story: the data being moved", 1),
    ("带宽", "bandwidth", "bytes per second a route carries; say one-way or both "
     "ways", 1),
    ("延迟", "latency", "fixed time before the first byte arrives (alpha)", 1),
    ("有效算力利用率", "effective utilisation", "T_comp / (T_comp + T_comm)", 1),
    ("单向带宽", "one-way (per-direction) bandwidth", "what one end can send while "
     "the other sends the same back", 2),
    ("双向带宽", "bidirectional bandwidth", "both directions added; the marketing "
     "figure", 2),
    ("磁悬浮专线 / 地铁专线", "maglev / metro line (NVLink)", "story: a direct line "
     "between neighbouring factories", 2),
    ("通道", "lane", "one differential pair per direction inside a link", 2),
    ("链路", "link", "a bundle of lanes between two chips", 2),
    ("对等内存访问", "peer memory access (P2P)", "a GPU reading/writing another "
     "GPU's memory directly", 2),
    ("城市主干道", "arterial road (PCIe)", "story: the general bus every device "
     "shares", 3),
    ("中转", "staging (through the host)", "GPU to host memory to GPU: two copies", 3),
    ("直接内存访问", "direct memory access (DMA)", "a copy engine moves bytes without "
     "the CPU doing the copying", 4),
    ("物流车队", "freight fleet (DMA engines)", "story: the copy engines", 4),
    ("锁页内存", "pinned (page-locked) memory", "host memory the OS may not move; "
     "DMA reads it directly", 4),
    ("可分页内存", "pageable memory", "ordinary host memory; copied through a "
     "staging buffer", 4),
    ("启动开销", "start-up cost (T_setup)", "fixed cost per transfer", 4),
    ("传输合并", "transfer batching (coalescing)", "merging small copies to pay "
     "start-up once", 4),
    ("远程直接内存访问", "RDMA (remote direct memory access)", "a NIC reads/writes a "
     "remote machine's memory", 5),
    ("内核旁路", "kernel bypass", "the OS kernel is not in the data path", 5),
    ("高铁", "high-speed rail (RDMA/InfiniBand)", "story: links between cities "
     "(servers)", 5),
    ("硬件往返时间", "hardware round-trip time (RTT)", "wire and switch time there "
     "and back", 5),
    ("通信拓扑", "communication topology", "the road map: who is wired to whom", 6),
    ("环形拓扑", "ring topology", "each GPU linked to two neighbours", 6),
    ("全互联", "fully connected (full mesh)", "every pair linked directly; N(N-1)/2 "
     "links", 6),
    ("混合立方体网格", "hybrid cube-mesh", "DGX-1's 8-GPU NVLink wiring, not "
     "all-to-all", 6),
    ("跳数", "hop count", "links (or switches) a message crosses", 6),
    ("轨道枢纽 / 交换机", "interchange / switch (NVSwitch)", "joins all GPUs of a "
     "domain", 6),
    ("拓扑感知调度", "topology-aware scheduling", "placing chatty ranks on short fast "
     "routes", 6),
    ("梯度同步", "gradient synchronisation", "making every replica's gradients "
     "equal (AllReduce)", 7),
    ("全规约", "AllReduce", "everyone ends with the sum of everyone's data", 7),
    ("规约散射", "ReduceScatter", "everyone ends with one reduced chunk", 7),
    ("全收集", "AllGather", "everyone ends with every chunk", 7),
    ("数据并行", "data parallelism", "replicas on different data, gradients summed", 7),
    ("栅栏同步", "barrier synchronisation", "all wait until all arrive", 8),
    ("红绿灯", "traffic lights (barriers)", "story: synchronisation points", 8),
    ("木桶效应", "weakest-link (shortest-plank) effect / stragglers", "the slowest GPU "
     "sets the pace", 8),
    ("通信计算重叠", "communication-computation overlap", "sending gradients while "
     "still computing", 8),
    ("错峰出行", "staggered rush hours (overlap)", "story: spreading traffic over "
     "time", 8),
    ("梯度累积", "gradient accumulation", "sync once per several micro-batches", 8),
    ("加速比", "speed-up", "T_1 / T_N", 9),
    ("扩展效率", "scaling efficiency", "T_1 / (N T_N)", 9),
    ("阿姆达尔定律", "Amdahl's law", "1 / ((1-p) + p/N): strong scaling, a fixed job", 9),
    ("强扩展", "strong scaling", "a fixed job shared by more GPUs", 9),
    ("弱扩展", "weak scaling (Gustafson)", "work grows with the GPUs: a batch per GPU", 9),
    ("聚合带宽", "aggregate bandwidth", "sum over links; not what one GPU gets", 9),
    ("NVLink 域", "NVLink domain", "the GPUs NVLink can reach without the network", 9),
    ("混合精度训练", "mixed-precision training", "16-bit values halve the bytes", 9),
    ("梯度压缩", "gradient compression", "quantise or sparsify before sending", 9),
    ("张量并行", "tensor parallelism", "one layer's matrices split across GPUs", 10),
    ("流水线并行", "pipeline parallelism", "consecutive layers on different GPUs", 10),
    ("首 token 延迟", "time to first token (TTFT)", "latency of the prompt pass", 10),
    ("光互连", "optical interconnect", "links over fibre instead of copper", 11),
]

# ---------------------------------------------------------------------------
# what comes next: numbers from the catalog, sources named
# ---------------------------------------------------------------------------
NEXT: list[dict] = [
    {"name": "NVLink 5 (Blackwell, B200)",
     "what": "twice NVLink 4's lane rate; 18 links per GPU",
     "per_dir_bytes_per_s": nvlink_generation(5).total_per_dir_bytes_per_s,
     "bidir_bytes_per_s": nvlink_generation(5).total_bidir_bytes_per_s,
     "domain": f"{system('GB200 NVL72').n_gpus} GPUs in a GB200 NVL72 rack "
               f"({system('GB200 NVL72').nvswitches} NVSwitch chips); NVIDIA quotes "
               f"up to {FUTURE_LINKS['nvlink5_max_domain_gpus'].value:g}",
     "source": nvlink_generation(5).source + "; " + system("GB200 NVL72").source
               + "; " + FUTURE_LINKS["nvlink5_max_domain_gpus"].source},
    {"name": "NVLink-C2C",
     "what": "chip-to-chip NVLink between Grace CPU and Hopper/Blackwell GPU: the "
             "host link is no longer PCIe, and pageable copies run near pinned speed",
     "bidir_bytes_per_s": FUTURE_LINKS["nvlink_c2c_grace_hopper"].value,
     "per_dir_bytes_per_s": FUTURE_LINKS["nvlink_c2c_grace_hopper"].value / 2,
     "source": FUTURE_LINKS["nvlink_c2c_grace_hopper"].source},
    {"name": "Optical links and co-packaged optics",
     "what": "moving the optics next to the switch chip (co-packaged optics) cuts "
             "the power of electrical-to-optical conversion and lets scale-up "
             "links reach beyond a rack; copper reaches about a rack",
     "source": "NVIDIA press release 'NVIDIA Announces Spectrum-X Photonics, "
               "Co-Packaged Optics Networking Switches' (GTC, March 2025); UALink "
               "Consortium webinar Q&A (no optical requirements in 1.0)"},
    {"name": "UALink",
     "what": "an open scale-up standard (AMD, Intel, Google, Microsoft, Meta and "
             "others) for load/store links between accelerators through switches",
     "lane_bytes_per_s": FUTURE_LINKS["ualink_lane_rate"].value,
     "max_accelerators": FUTURE_LINKS["ualink_max_pod_accelerators"].value,
     "source": FUTURE_LINKS["ualink_lane_rate"].source},
]


# ---------------------------------------------------------------------------
# short end-of-chapter quizzes for chapters 7-10 (chapter 11 uses the 20
# interview questions above)
# ---------------------------------------------------------------------------
CHAPTER_QUESTIONS: dict[int, list[Question]] = {
    7: [
        Question("A ring AllReduce of S bytes on n GPUs: how many bytes does each "
                 "GPU send?",
                 ["S", "2(n-1)/n x S", "(n-1) x S", "S / n"], {1},
                 "n-1 ReduceScatter steps and n-1 AllGather steps, each of S/n bytes: "
                 "2(n-1)/n x S, just under 2S however many GPUs there are.",
                 {0: "S is what each GPU contributes, but it is sent in pieces twice "
                     "around the ring (reduce, then gather).",
                  2: "(n-1) S is what a naive 'send everything to everyone' costs.",
                  3: "S/n is one chunk, the size of a single step's message."},
                 source="chapter 7"),
        Question("nccl-tests reports algbw = 100 GB/s for an AllReduce on 8 GPUs. "
                 "What is busbw?",
                 ["100 GB/s", "175 GB/s", "200 GB/s", "800 GB/s"], {1},
                 "busbw = algbw x 2(n-1)/n = 100 x 1.75 = 175 GB/s, comparable with the "
                 "per-direction bandwidth of the bottleneck link.",
                 {0: "That is algbw; busbw corrects for the bytes the algorithm really "
                     "moves.", 2: "The factor is 2(n-1)/n = 1.75 for n = 8, not 2.",
                  3: "busbw is per GPU, not summed over the 8 GPUs."},
                 source="chapter 7"),
        Question("Why can NVLS (reduction inside the NVSwitch) report a busbw above "
                 "the GPU's per-direction NVLink bandwidth?",
                 ["The measurement is wrong",
                  "The switch adds the data, so each GPU sends S once instead of "
                  "2(n-1)/n S, but busbw still multiplies by 2(n-1)/n",
                  "NVLS doubles the link rate", "NVLS compresses the data"], {1},
                 "busbw's factor assumes a ring's traffic. In-switch reduction moves "
                 "less per GPU, so busbw stops meaning wire bandwidth.",
                 {0: "The numbers are real; it is the definition that no longer fits.",
                  2: "The links run at their usual rate.",
                  3: "No compression is involved; the switch does the arithmetic."},
                 source="chapter 7"),
    ],
    8: [
        Question("Eight GPUs meet at a barrier; seven arrive after 100 ms, one after "
                 "130 ms. When do they all continue?",
                 ["After 100 ms", "After about 104 ms (the average)", "After 130 ms",
                  "After 230 ms"], {2},
                 "A barrier releases everyone when the last one arrives: the slowest "
                 "GPU sets the pace (the shortest plank of the bucket).",
                 {0: "The seven fast GPUs have to wait for the eighth.",
                  1: "Averages do not matter; the maximum does.",
                  3: "Times do not add: they wait in parallel, for the latest one."},
                 source="chapter 8"),
        Question("Compute 0.8 s (forward 0.27 s, backward 0.53 s), AllReduce 0.3 s, "
                 "buckets overlapped perfectly with the backward pass. The step takes:",
                 ["1.1 s", "0.8 s", "0.5 s", "0.3 s"], {1},
                 "T = T_fwd + max(T_bwd, T_comm) = 0.27 + 0.53 = 0.8 s: the AllReduce "
                 "hides behind the backward pass, the only part that produces gradients. "
                 "Without overlap it would be the sum.",
                 {0: "1.1 s is the sum: no overlap.",
                  2: "A difference of the two is not a step time.",
                  3: "The compute still has to finish."}, source="chapter 8"),
        Question("Why not cut the gradients into thousands of tiny buckets to overlap "
                 "perfectly?",
                 ["Tiny buckets are not allowed by NCCL",
                  "Each AllReduce pays a start-up cost, so many tiny ones add up",
                  "Tiny buckets use more memory", "It would change the result"], {1},
                 "Every collective costs tens of microseconds before moving a byte; "
                 "frameworks use buckets of tens of MB (PyTorch DDP's default is "
                 "25 MB) as a compromise.",
                 {0: "It is allowed; it is just slow.",
                  2: "Memory use is about the same; the cost is time.",
                  3: "The sum is the same; only the timing changes."},
                 source="chapter 8"),
    ],
    9: [
        Question("A fixed job takes T_1 of compute on one GPU. N GPUs share it, then "
                 "ring-all-reduce S bytes of gradients at B per direction (no overlap, "
                 "no latency). What is the speed-up T_1/T_N?",
                 ["N: the ring's time per GPU is flat in N, so it costs nothing extra",
                  "N / (1 + (N-1) 2S/(B T_1)): the seeds' rule with T_comm = 2S/B",
                  "N / (1 + 2S/(B T_1)): communication is a fixed share of the step",
                  "1 / (1 + 2S/(B T_1)): communication cancels the extra GPUs"], {1},
                 "T_N = T_1/N + 2(N-1)/N S/B, so T_1/T_N = N/(1 + (N-1) 2S/(B T_1)): "
                 "strong scaling with a ring is exactly the seeds' rule. Compute shrinks "
                 "as 1/N while the AllReduce does not, so the speed-up tends to "
                 "T_1/(2S/B).",
                 {0: "The AllReduce is nearly flat in N, but it is not zero: against a "
                     "compute time that shrinks as T_1/N it becomes the larger part.",
                  2: "That is (nearly) weak scaling, where every GPU keeps a batch of "
                     "T_1 and the global batch grows with N; here the job is fixed.",
                  3: "The GPUs still share the compute; only the AllReduce is not "
                     "shared."},
                 source="chapter 9"),
        Question("Amdahl: 1 % of the work is serial. What is the best speed-up with "
                 "1,000 GPUs?",
                 ["About 99", "About 91", "1,000", "About 10"], {1},
                 "1 / (0.01 + 0.99/1000) = 91. The limit with infinitely many GPUs "
                 "is 100 (a seed quotes 99).",
                 {0: "99 is close to the limit 1/(1-p) = 100, which needs infinitely "
                     "many GPUs.", 2: "Only with no serial part at all.",
                  3: "That would be 10 % serial work."}, source="chapter 9"),
        Question("The seeds' M_total = N_param x d_byte x N_gpu: what does it count?",
                 ["The bytes each GPU sends in an AllReduce",
                  "The gradient memory summed over all replicas",
                  "The bytes crossing the network",
                  "The bandwidth needed"], {1},
                 "It multiplies one replica's gradient bytes by the number of "
                 "replicas: memory held, not traffic. Each GPU sends 2(N-1)/N of one "
                 "replica's gradients.",
                 {0: "Each GPU sends about 2 x N_param x d_byte, independent of N.",
                  2: "Network bytes depend on the algorithm and the node layout.",
                  3: "It is a volume in bytes, not a rate."}, source="chapter 9"),
    ],
    10: [
        Question("Decode at batch 1 with tensor parallelism: each AllReduce carries "
                 "one token's activations, 16 KiB for a 70B model. What decides its "
                 "time?",
                 ["The link bandwidth", "The start-up latency of each collective",
                  "The HBM bandwidth", "The PCIe generation only"], {1},
                 "16 KiB over hundreds of GB/s takes tens of nanoseconds; the microseconds "
                 "of launch and per-step latency dominate, so NVLink's advantage "
                 "over PCIe shrinks to the latency ratio.",
                 {0: "Bandwidth matters for large activations (prefill, big batches).",
                  2: "HBM bandwidth sets the compute side (reading weights), not the "
                     "AllReduce.",
                  3: "The generation sets bandwidth; small messages are latency-"
                     "bound."}, source="chapter 10"),
        Question("A claim says switching TCP to RDMA made training 6x faster. What "
                 "must be true for that?",
                 ["Nothing: RDMA is always 6x faster",
                  "Communication must have been almost the whole step before",
                  "The GPUs must be faster", "The model must be smaller"], {1},
                 "If only the communication got faster, the step can shrink at most "
                 "to the compute time: a 6x gain needs the old step to be over 5/6 "
                 "communication.",
                 {0: "RDMA cuts latency and CPU work; the gain on a whole step "
                     "depends on its share.", 2: "The GPUs did not change.",
                  3: "The model did not change."}, source="chapter 10"),
    ],
}
