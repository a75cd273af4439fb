"""Chapter 5's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch05.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/05_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

>>> v = values()
>>> v["rtt_1km"], v["nic_bw"], v["roce"]
('9.53 µs', '50 GB/s', '1.47 µs')
"""

from __future__ import annotations

from ..analytic import fibre_one_way_s, fibre_rtt_s, rdma_transfer_time_s
from ..hardware import gpu, latency_s, nic
from ..units import GB, format_bandwidth, format_bytes, format_time

#: The velocity factor of glass fibre the chapter's models use (analytic.fibre_rtt_s).
VELOCITY_FACTOR = 0.7
#: Distances the chapter picks (metres).
KM, HUNDRED_M, HALLS_M, BUCKET_M = 1000.0, 100.0, 2000.0, 50.0
#: The explorer's shortest and longest cables (metres) as the prose names them.
CABLE_SHORT_M, CABLE_LONG_M = 1.0, 100e3
#: Sizes the chapter picks: one big transfer, the exercise's gradient bucket.
BIG_BYTES, BUCKET_BYTES = 1 * GB, 256e6


def _m(d: float) -> str:
    return f"{d / 1000:g} km" if d >= 1000 else f"{d:g} m"


def values() -> dict[str, str]:
    ndr = nic("NDR")
    bw = ndr.bw_per_dir_bytes_per_s
    rtt = fibre_rtt_s(KM)
    edr, xdr, roce200 = nic("EDR"), nic("XDR"), nic("RoCE-200")
    h100 = gpu("H100")
    roce, ib = latency_s("roce_small_one_way"), latency_s("rdma_small_one_way")
    t_roce = rdma_transfer_time_s(BUCKET_BYTES, roce200.bw_per_dir_bytes_per_s, BUCKET_M,
                                  endpoint_latency_s=roce)
    t_ndr = rdma_transfer_time_s(BUCKET_BYTES, bw, BUCKET_M, endpoint_latency_s=ib)
    cross = fibre_one_way_s(HALLS_M) * bw
    return {"nic": ndr.name, "nic_gbit": f"{ndr.rate_gbit_per_s:g}",
            "nic_gbit_unit": format_bandwidth(bw, bits=True),
            "nic_bw": format_bandwidth(bw), "nic_bw_x8": format_bandwidth(bw * 8),
            "nic_bw_x2": format_bandwidth(bw * 2), "nic_bw_half": format_bandwidth(bw / 2),
            "rtt_1km": format_time(rtt), "rtt_1m": format_time(rtt / 1000),
            "rtt_1000km": format_time(rtt * 1000),
            "rtt_1km_round": f"{rtt * 1e6:.0f} µs",
            "one_way_1km_round": f"{fibre_one_way_s(KM) * 1e6:.0f} µs",
            "one_way_100m": f"{fibre_one_way_s(HUNDRED_M) * 1e6:.1f} µs",
            "vf": f"{VELOCITY_FACTOR:g}", "vf_pct": f"{VELOCITY_FACTOR:.0%}".replace("%", " %"),
            "km": _m(KM), "km_1000": _m(1000 * KM), "km_m": f"{KM:g} m", "hundred_m": _m(HUNDRED_M),
            "cable_short": _m(CABLE_SHORT_M), "cable_long": _m(CABLE_LONG_M),
            "big": format_bytes(BIG_BYTES),
            # latencies, one way
            "roce": format_time(roce), "ib_small": format_time(ib),
            "gdr": format_time(latency_s("gpudirect_rdma_one_way")),
            "nvlink_lat": format_time(latency_s("nvlink_p2p")),
            # bits and bytes
            "edr_bw": format_bandwidth(edr.bw_per_dir_bytes_per_s),
            "edr_misread": format_bandwidth(edr.rate_gbit_per_s * GB),
            "bits_per_byte": "8×", "xdr_bw": format_bandwidth(xdr.bw_per_dir_bytes_per_s),
            "nvlink_over_nic": f"{h100.nvlink_bw_per_dir_bytes_per_s / bw:.0f}",
            # exercises
            "halls": _m(HALLS_M), "halls_one_way": format_time(fibre_one_way_s(HALLS_M)),
            "halls_cross": format_bytes(cross),
            "roce200_gbit": format_bandwidth(roce200.bw_per_dir_bytes_per_s, bits=True),
            "roce200_bw": format_bandwidth(roce200.bw_per_dir_bytes_per_s),
            "bucket": format_bytes(BUCKET_BYTES), "bucket_m": _m(BUCKET_M),
            "bucket_roce": format_time(t_roce), "bucket_ndr": format_time(t_ndr),
            "bucket_fibre": format_time(fibre_one_way_s(BUCKET_M))}
