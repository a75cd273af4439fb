"""Chapter 2's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch02.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/02_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

>>> v = values()
>>> v["h100_total"], v["h100_bidir"], v["article_result"]
('450 GB/s', '900 GB/s', '7,200')
>>> v["c2c_over_pcie"], v["nccl_of_spec"]
('7×', '82 %')
"""

from __future__ import annotations

from ..hardware import (FUTURE_LINKS, NCCL_LINK_BW, NVLINK_GENERATIONS, gpu,
                        nvlink_generation, pcie_bw_per_dir_bytes_per_s)
from ..units import format_bandwidth

#: The NVLink article's duplex factor (its eta_duplex): both directions added.
DUPLEX = 2


def values() -> dict[str, str]:
    h100, a100, b200 = gpu("H100"), gpu("A100"), gpu("B200")
    total = h100.nvlink_bw_per_dir_bytes_per_s
    pcie5 = pcie_bw_per_dir_bytes_per_s(h100.pcie_gen)
    pcie4 = pcie_bw_per_dir_bytes_per_s(a100.pcie_gen)
    nv4 = nvlink_generation(4)
    c2c_bidir = FUTURE_LINKS["nvlink_c2c_grace_hopper"].value   # stored with both directions added
    gbit = nv4.lanes_per_link_per_dir * nv4.lane_rate_gbit_per_s * nv4.links * DUPLEX
    a100_link = a100.nvlink_per_link_per_dir_bytes_per_s
    links_to_beat = next(k for k in range(1, a100.nvlink_links + 1) if k * a100_link > pcie4)
    nccl90 = NCCL_LINK_BW[90].value
    return {"first_gpu": NVLINK_GENERATIONS[1].gpu,
            "h100_link": format_bandwidth(h100.nvlink_per_link_per_dir_bytes_per_s),
            "h100_total": format_bandwidth(total),
            "h100_bidir": format_bandwidth(h100.nvlink_bw_bidir_bytes_per_s),
            "b200_bidir": format_bandwidth(b200.nvlink_bw_bidir_bytes_per_s),
            "nvlink_over_pcie": f"{total / pcie5:.0f}",
            "nvlink_over_pcie_x": f"{total / pcie5:.0f}×",
            # the derivation, and the article's formula taken literally
            "lanes": str(nv4.lanes_per_link_per_dir),
            "lane_rate": f"{nv4.lane_rate_gbit_per_s:g} Gb/s", "links": str(nv4.links),
            "article_product": (f"{nv4.lanes_per_link_per_dir} × {nv4.lane_rate_gbit_per_s:g} × "
                                f"{nv4.links} × {DUPLEX}"),
            "article_result": f"{gbit:,.0f}",
            "a100_bidir": format_bandwidth(a100.nvlink_bw_bidir_bytes_per_s),
            "a100_links": str(a100.nvlink_links),
            "b200_dir": format_bandwidth(b200.nvlink_bw_per_dir_bytes_per_s),
            "c2c_bidir": format_bandwidth(c2c_bidir),
            "c2c_over_pcie": f"{c2c_bidir / 2 / pcie5:.0f}×",
            # the exercises
            "a100_link": format_bandwidth(a100_link), "pcie4": format_bandwidth(pcie4),
            "links_to_beat": str(links_to_beat),
            "links_to_beat_bw": format_bandwidth(links_to_beat * a100_link),
            "nccl_sm90": f"{nccl90 / 1e9:g}",
            "spec_link_gb": f"{h100.nvlink_per_link_per_dir_bytes_per_s / 1e9:g}",
            "nccl_of_spec": f"{nccl90 / h100.nvlink_per_link_per_dir_bytes_per_s:.0%}".replace("%", " %"),
            "pcie5": format_bandwidth(pcie5)}
