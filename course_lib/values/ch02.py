"""Chapter 2's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch02.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/02_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..hardware import NVLINK_GENERATIONS, gpu, pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth


def values() -> dict[str, str]:
    h100 = gpu("H100")
    total = h100.nvlink_bw_per_dir_bytes_per_s
    return {"first_gpu": NVLINK_GENERATIONS[1].gpu,
            "h100_link": format_bandwidth(h100.nvlink_per_link_per_dir_bytes_per_s),
            "h100_total": format_bandwidth(total),
            "h100_bidir": format_bandwidth(h100.nvlink_bw_bidir_bytes_per_s),
            "b200_bidir": format_bandwidth(gpu("B200").nvlink_bw_bidir_bytes_per_s),
            "nvlink_over_pcie": f"{total / pcie_bw_per_dir_bytes_per_s(h100.pcie_gen):.0f}"}
