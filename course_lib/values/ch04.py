"""Chapter 4's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch04.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/04_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..analytic import batched_transfer_time_s, host_copy_bw_bytes_per_s
from ..hardware import latency_s, pageable_extra_time_s
from ..units import format_time


def values() -> dict[str, str]:
    alpha = latency_s("pcie_small_copy_sync")
    bw = host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    return {"alpha": format_time(alpha),
            "one_by_one": format_time(batched_transfer_time_s(1000, 4096, bw, alpha,
                                                              batched=False)),
            "batched": format_time(batched_transfer_time_s(1000, 4096, bw, alpha)),
            "alpha_x1000": format_time(1000 * alpha),
            "gather": format_time(pageable_extra_time_s(1000 * 4096))}
