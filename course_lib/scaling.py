"""Data-parallel scaling, 1 to 1,024 H100s (8 a node): chapter 9's model.

Strong scaling splits a fixed global batch (``T_comp / N`` each); weak scaling
keeps a batch per GPU.  The AllReduce of the gradients comes from
:func:`course_lib.predict.predict_collective` at every N, the step from the
course's one overlap model (:func:`course_lib.traffic.overlap_step_time_s`).
Beside it the articles' rule ``N / (1 + (N-1) T_comm/T_comp)``
(:func:`course_lib.analytic.comm_speedup`) with ``T_comm = 2S/B`` and ``B``
the busbw of a *ring* AllReduce on one 8-GPU node (NCCL's rate, not the spec).

>>> d = scaling_curves("strong", 1.0, 7e9, "NDR", 8, 0.0)
>>> float(d["model_speedup"][0]), d["n_gpus"][-1]
(1.0, 1024)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import predict
from .analytic import busbw_bytes_per_s, comm_speedup, gradient_bytes, ring_allreduce_bytes_per_rank
from .traffic import overlap_step_time_s

__all__ = ["N_GPUS", "GPUS_PER_NODE", "scaling_cluster", "scaling_curves"]

#: The GPU counts the chapter plots.
N_GPUS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
#: GPUs a node (an HGX/DGX H100).
GPUS_PER_NODE = 8


def scaling_cluster(n, nic, nics_per_node):
    """The predictor's cluster of ``n`` H100s: one node up to 8, else 8 a node."""
    if n <= GPUS_PER_NODE:
        return predict.cluster("H100", gpus_per_node=n)
    return predict.cluster("H100", gpus_per_node=GPUS_PER_NODE,
                           nodes=n // GPUS_PER_NODE, nic=nic,
                           nics_per_node=nics_per_node)


@lru_cache(maxsize=256)
def _allreduce_times(grad, nic, nics_per_node):
    return (0.0,) + tuple(predict.predict_collective(
        "allreduce", grad, scaling_cluster(n, nic, nics_per_node)).time_s for n in N_GPUS[1:])


@lru_cache(maxsize=256)
def _ring_node_time(grad):
    return predict.predict_collective("allreduce", grad, scaling_cluster(GPUS_PER_NODE, "NDR", 1),
                                      algorithm="ring").time_s


def scaling_curves(regime, t_compute_s, n_params, nic, nics_per_node, overlap, view="speed-up"):
    """Speed-up of the seeds' rule and of the predicted model, N = 1 .. 1024."""
    if regime not in ("strong", "weak"):
        raise ValueError(f"regime must be 'strong' or 'weak', got {regime!r}")
    grad = gradient_bytes(n_params, 2)
    t_comm = list(_allreduce_times(grad, nic, nics_per_node))
    if regime == "strong":     # the global batch is split: T_comp / N each
        steps = [overlap_step_time_s(t_compute_s / n, t, overlap=overlap)
                 for n, t in zip(N_GPUS, t_comm)]
        model = np.array([t_compute_s / s for s in steps])
    else:                      # every GPU keeps its batch: throughput vs 1 GPU
        steps = [overlap_step_time_s(t_compute_s, t, overlap=overlap) for t in t_comm]
        model = np.array([n * t_compute_s / s for n, s in zip(N_GPUS, steps)])
    # the rule's B: a ring's wire bandwidth on one node (NVLS's busbw is not one)
    t_ring8 = _ring_node_time(grad)
    busbw_node = busbw_bytes_per_s("allreduce", grad, t_ring8, GPUS_PER_NODE)
    t_rule = 2 * grad / busbw_node  # the seeds' T_comm = 2S/B, B = one node's busbw
    seeds = np.array([comm_speedup(n, t_rule, t_compute_s) for n in N_GPUS])
    n = np.array(N_GPUS)
    return {"n_gpus": N_GPUS, "model_speedup": model, "seeds_speedup": seeds,
            "t_comm_s": np.array(t_comm), "t_rule_s": t_rule, "view": view,
            "t_ring_node_s": t_ring8,
            "regime": regime, "busbw_node_bytes_per_s": busbw_node,
            "grad_bytes": grad, "efficiency_model": model / n,
            "efficiency_seeds": seeds / n,
            "seeds_m_total_bytes": grad * N_GPUS[-1],
            "sent_per_gpu_bytes": ring_allreduce_bytes_per_rank(grad, N_GPUS[-1]),
            "nic": nic, "nics_per_node": nics_per_node}
