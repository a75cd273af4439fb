"""Chapter 8's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch08.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/08_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

The inputs the chapter's cells pick are the constants below (the notebook's code uses
the same literals; ``tests/test_ch08_prose.py`` checks that they agree); the explorer's
defaults and the overlap lab's are read from where they are defined.

>>> v = values()
>>> v["lab_grad"], v["nvs_one"], v["nvs_algorithm"]
('16 MiB', '51 ms', 'NVLS')
"""

from __future__ import annotations

import inspect

#: The straggler example: compute per GPU, how much longer one GPU takes, the AllReduce.
STRAGGLER_COMPUTE_S, STRAGGLER_SLOW_BY_S, STRAGGLER_BYTES = 0.1, 0.02, 1e9
#: The barrier example: GPUs, layers, one layer's time, noise, seed.
BARRIER_GPUS, BARRIER_LAYERS, BARRIER_LAYER_S, BARRIER_JITTER, BARRIER_SEED = 8, 24, 0.01, 0.1, 7
#: The NVLink article's compute per step (quoted: the article's figure), and the 7B model.
ARTICLE_COMPUTE_S, PARAMS = 0.8, 7e9
#: The contention example: each job's AllReduce.
CONTENTION_BYTES = 1e9
#: Exercise 2: the gradient, the backward pass, the bucket counts searched.
EX_GRAD_BYTES, EX_BACKWARD_S, EX_MAX_BUCKETS = 1e9, 0.03, 128
#: The quiz: seven GPUs arrive at the barrier after Q1_FAST_S, one after Q1_SLOW_S
#: (round numbers for arithmetic by hand); Q2's AllReduce; Q4's counter-example bucket.
# Q2's AllReduce is longer than the backward pass, so the course's step and the article's
# max(T_comp, T_comm) differ (with 0.3 s both gave 0.8 s: the wrong formula scored)
Q1_FAST_S, Q1_SLOW_S, Q1_GPUS, Q2_COMM_S, Q4_SMALL_BYTES = 0.1, 0.13, 8, 0.6, 1e6
#: PyTorch DDP's default bucket (quoted: torch.nn.parallel.DistributedDataParallel's
#: bucket_cap_mb=25).
DDP_BUCKET_BYTES = 25 * 2 ** 20        # bucket_cap_mb=25, applied as MiB (x 1024 x 1024)
ALGORITHM_NAMES = {"nvls": "NVLS", "ring": "ring", "tree": "tree", "direct": "direct"}


def _pct(x: float, digits: int = 0) -> str:
    return f"{x:.{digits}%}".replace("%", " %")


def _defaults(func) -> dict:
    return {k: p.default for k, p in inspect.signature(func).parameters.items()
            if p.default is not inspect.Parameter.empty}


def values() -> dict[str, str]:
    from ..analytic import gradient_bytes, iteration_time_s
    from ..clusters import cluster
    from ..hardware import calibration
    from ..measure.mpi_overlap import overlap_lab
    from ..measure.mpi_overlap_worker import POLL_S
    from ..predict import predict_collective
    from ..sim import Network
    from ..sim.workloads import straggler_step
    from ..trace import example_trace_dir, read_job
    from ..traffic import (barrier_step_time_s, bucket_overlap_schedule, overlap_step_time_s,
                           straggler_phase_times_s)
    from ..units import GiB, format_bytes, format_time

    out = {}
    # the slowest GPU sets the pace (the simulator, chapter 7's calibrated DGX H100)
    net = Network.from_cluster(cluster("H100"))
    slow = straggler_step(net, STRAGGLER_BYTES, compute_s=STRAGGLER_COMPUTE_S, slow_rank=3,
                          slow_by_s=STRAGGLER_SLOW_BY_S)
    fair = straggler_step(net, STRAGGLER_BYTES, compute_s=STRAGGLER_COMPUTE_S)
    waits = list(slow.parts["wait_s"])
    out.update(compute=format_time(STRAGGLER_COMPUTE_S), slow_by=format_time(STRAGGLER_SLOW_BY_S),
               straggler_bytes=format_bytes(STRAGGLER_BYTES),
               extra_wait=format_time(max(waits) - min(waits)),
               step_delay=format_time(slow.time_s - fair.time_s))
    # barriers
    t = straggler_phase_times_s(BARRIER_GPUS, BARRIER_LAYERS, BARRIER_LAYER_S,
                                jitter=BARRIER_JITTER, seed=BARRIER_SEED)
    every = barrier_step_time_s(t, every_phase=True)
    once = barrier_step_time_s(t, every_phase=False)
    out.update(jitter=_pct(BARRIER_JITTER), barrier_cost=_pct(every / once - 1))
    # max or sum: the article's 0.8 s, the 7B gradients
    grad = gradient_bytes(PARAMS)
    t_bwd = 2 * ARTICLE_COMPUTE_S / 3
    pcie = cluster("H100", fabric="pcie")
    t_pcie = predict_collective("allreduce", grad, pcie).time_s
    out.update(article_compute=format_time(ARTICLE_COMPUTE_S).replace("800 ms", "0.8 s"),
               pcie_comm=f"{t_pcie:.2f} s", backward=f"{t_bwd:.2f} s")
    # the overlap explorer's answers (its defaults: 7B BF16, 0.5 s of backward)
    tb = 0.5
    for key, clu in (("nvs", cluster("H100")), ("pcie", pcie)):
        full = predict_collective("allreduce", grad, clu)
        runs = {}
        for k in (1, 8, 64):
            b = predict_collective("allreduce", grad / k, clu)
            runs[k] = (k * b.time_s, bucket_overlap_schedule(tb, k * b.time_s, k, overlap=True))
        out[f"{key}_algorithm"] = ALGORITHM_NAMES[full.algorithm]
        if key == "nvs":
            out.update(nvs_one=format_time(runs[1][1]["exposed_comm_s"], digits=2),
                       nvs_8=format_time(runs[8][1]["exposed_comm_s"], digits=2),
                       nvs_64=f"{runs[64][1]['exposed_comm_s'] * 1e3:.1f} ms",
                       nvs_comm_1=format_time(runs[1][0], digits=2),
                       nvs_comm_64=format_time(runs[64][0], digits=2))
        else:
            out.update(pcie_allreduce=f"{full.time_s:.2f} s",
                       pcie_1=f"{runs[1][1]['iteration_s']:.2f} s",
                       pcie_8=f"{runs[8][1]['iteration_s']:.2f} s",
                       pcie_64=f"{runs[64][1]['iteration_s']:.2f} s")
    out["explorer_backward"] = f"{tb:.1f} s"
    # contention
    out["contention_bytes"] = format_bytes(CONTENTION_BYTES)
    # the overlap lab's defaults
    lab = _defaults(overlap_lab)
    out.update(lab_forward=format_time(lab["forward_s"]), lab_backward=format_time(lab["backward_s"]),
               lab_straggler=format_time(lab["straggler_s"]), lab_poll=format_time(POLL_S),
               lab_grad=format_bytes(lab["grad_bytes"], binary=True))
    # your own job: the shipped traces
    v100 = read_job(example_trace_dir("hta_v100_2ranks"))
    steps = v100.ranks[0].steps
    import numpy as np
    med = {k: float(np.median([s[k] for s in steps]))
           for k in ("compute_s", "comm_s", "hidden_s", "exposed_s")}
    out.update(v100_steps=str(len(steps)), v100_compute=format_time(med["compute_s"]),
               v100_comm=format_time(med["comm_s"]),
               v100_hidden=_pct(med["hidden_s"] / med["comm_s"]),
               v100_exposed=format_time(med["exposed_s"]))
    rec = read_job(example_trace_dir("hta_sampled_2ranks"))
    out["rec_skew"] = format_time(float(np.median([k["skew_s"] for k in rec.skew])))
    out["rec_world"] = str(rec.ranks[0].world_size)
    # exercise 2: the best bucket count, and a model charging only the launch cost
    st = {k: bucket_overlap_schedule(EX_BACKWARD_S, k * predict_collective(
        "allreduce", EX_GRAD_BYTES / k, pcie).time_s, k)["iteration_s"]
        for k in range(1, EX_MAX_BUCKETS + 1)}
    best = min(st, key=st.get)
    full = predict_collective("allreduce", EX_GRAD_BYTES, pcie).time_s
    sl = {k: bucket_overlap_schedule(EX_BACKWARD_S, full + k * calibration("launch_s"),
                                     k)["iteration_s"] for k in range(1, EX_MAX_BUCKETS + 1)}
    best_l = min(sl, key=sl.get)
    out.update(ex_grad=format_bytes(EX_GRAD_BYTES), ex_backward=format_time(EX_BACKWARD_S),
               ex_best=str(best), ex_bucket=format_bytes(EX_GRAD_BYTES / best, digits=0),
               ex_one=format_time(st[1], digits=2), ex_at_best=format_time(st[best], digits=2),
               ex_launch_best=str(best_l), ex_launch_at=format_time(sl[best_l], digits=2))
    # exercise 3: the stragglers explorer's defaults (0.24 s of work, 10 % noise, seed 0)
    cost = {}
    for n in (8, 32):
        tt = straggler_phase_times_s(n, 24, 0.24 / 24, jitter=0.1, seed=0)
        cost[n] = barrier_step_time_s(tt, every_phase=True) / barrier_step_time_s(
            tt, every_phase=False) - 1
    out.update(ex3_8=_pct(cost[8]), ex3_32=_pct(cost[32]))
    # the quiz
    arrive = [Q1_FAST_S] * (Q1_GPUS - 1) + [Q1_SLOW_S]
    fwd = ARTICLE_COMPUTE_S / 3
    out.update(q1_fast=format_time(Q1_FAST_S), q1_slow=format_time(max(arrive)),
               q1_mean=format_time(sum(arrive) / len(arrive), digits=3),
               q1_sum=format_time(Q1_FAST_S + Q1_SLOW_S),
               q2_compute=f"{ARTICLE_COMPUTE_S:.1f} s", q2_fwd=f"{fwd:.2f} s",
               q2_bwd=f"{t_bwd:.2f} s", q2_comm=f"{Q2_COMM_S:.1f} s",
               q2_step=f"{overlap_step_time_s(ARTICLE_COMPUTE_S, Q2_COMM_S):.2f} s",
               q2_max=f"{max(ARTICLE_COMPUTE_S, Q2_COMM_S):.1f} s",
               q2_sum=f"{iteration_time_s(ARTICLE_COMPUTE_S, Q2_COMM_S, overlap=False):.1f} s",
               ddp_bucket=format_bytes(DDP_BUCKET_BYTES, binary=True), q4_small=format_bytes(Q4_SMALL_BYTES))
    one, many = cluster("H100"), cluster("H100", nodes=16, nic="NDR")
    for key, clu in (("q4_one_node", one), ("q4_16_nodes", many)):
        plateau = predict_collective("allreduce", 16 * GiB, clu).busbw_bytes_per_s
        out[key] = _pct(predict_collective("allreduce", DDP_BUCKET_BYTES, clu).busbw_bytes_per_s
                        / plateau)
    return out
