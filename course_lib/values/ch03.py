"""Chapter 3's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch03.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/03_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..analytic import route_crossover_bytes, route_parameters
from ..hardware import gpu, pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth, format_bytes


def values() -> dict[str, str]:
    nvlink = gpu("H100").nvlink_bw_per_dir_bytes_per_s
    pcie = pcie_bw_per_dir_bytes_per_s(5)
    d_star = route_crossover_bytes(route_parameters("p2p-nvlink", gpu="H100", nvlink_links=1),
                                   route_parameters("p2p-staged", gpu="H100"))
    return {"ratio": f"{nvlink / pcie:.0f}", "ratio_1f": f"{nvlink / pcie:.1f}",
            "h100_total": format_bandwidth(nvlink), "pcie5": format_bandwidth(pcie),
            "crossover": format_bytes(d_star),
            "staged_delivered": format_bandwidth(pcie / 2),
            "one_link": format_bandwidth(gpu("H100").nvlink_per_link_per_dir_bytes_per_s),
            "two_links": format_bandwidth(2 * gpu("H100").nvlink_per_link_per_dir_bytes_per_s)}
