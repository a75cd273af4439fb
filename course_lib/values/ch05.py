"""Chapter 5's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch05.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/05_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..analytic import fibre_rtt_s
from ..hardware import nic
from ..units import format_bandwidth, format_time


def values() -> dict[str, str]:
    ndr = nic("NDR")
    bw = ndr.bw_per_dir_bytes_per_s
    rtt = fibre_rtt_s(1000)
    return {"nic": ndr.name, "nic_gbit": f"{ndr.rate_gbit_per_s:g}",
            "nic_bw": format_bandwidth(bw), "nic_bw_x8": format_bandwidth(bw * 8),
            "nic_bw_x2": format_bandwidth(bw * 2), "nic_bw_half": format_bandwidth(bw / 2),
            "rtt_1km": format_time(rtt), "rtt_1m": format_time(rtt / 1000),
            "rtt_1000km": format_time(rtt * 1000)}
