"""Chapter 10's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch10.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/10_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..hardware import pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth, format_time


def values() -> dict[str, str]:
    from ..predict import predict_collective
    from ..scenarios import roce_training_1024, tp_token_latency

    roce = roce_training_1024()
    return {"cut": f"{tp_token_latency()['ttft_cut']:.1%}",
            "cut_short": f"{tp_token_latency(load=0.25)['ttft_cut']:.1%}",
            "cut_long": f"{tp_token_latency(load=100)['ttft_cut']:.1%}",
            "cut_fast": f"{tp_token_latency(efficiency=0.9)['ttft_cut']:.0%}",
            "cut_nccl": f"{tp_token_latency()['nccl_ttft_cut']:.0%}",
            "pcie4": format_bandwidth(pcie_bw_per_dir_bytes_per_s(4)),
            "bound": format_time(roce["rdma_allreduce_s"]),
            "nccl": format_time(roce["nccl_estimate_s"])}
