"""Chapter 0's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch00.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/00_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

Chapter 0's map of the course gives chapter 3's corrected ratio (an H100's NVLink over
PCIe Gen5 x16, per direction, spec rates) and the classic misreading of a NIC port's rate.

>>> values()
{'corrected_ratio': '7×', 'ndr_port': '400 Gb/s', 'ndr_misread': '400 GB/s'}
"""

from __future__ import annotations

from ..hardware import gpu, nic, pcie_bw_per_dir_bytes_per_s
from ..units import format_bandwidth


def values() -> dict[str, str]:
    nvlink = gpu("H100").nvlink_bw_per_dir_bytes_per_s
    port = nic("NDR")
    return {"corrected_ratio": f"{nvlink / pcie_bw_per_dir_bytes_per_s(5):.0f}×",
            "ndr_port": format_bandwidth(port.bw_per_dir_bytes_per_s, bits=True),
            # the same digits read as bytes: what "400 GB/s" on a slide usually is
            "ndr_misread": f"{port.rate_gbit_per_s:g} GB/s"}
