"""Chapter 11's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch11.yaml``
fills its ``{name}`` fields from it (also in its question fixes and myths); the notebook
``notebooks/11_*.ipynb`` binds its numbers to it with ``<!--v:name-->text<!--/v-->``
(see :mod:`course_lib.apps.prose`).

Myth 8's predictor is checked on a run it was never fitted on (the held-out 4 x H100
run of ``course_lib/data/validation/nccl_tests_public.csv``), not on the 8 x H100 curve
it was calibrated on (``content.myth("small_messages").evidence()`` computes the same).

>>> v = values()
>>> v["heldout_error"], v["h100_bidir"], v["h100_per_dir"]
('+24 %', '900 GB/s', '450 GB/s')
"""

from __future__ import annotations

from ..analytic import fibre_one_way_s
from ..hardware import FUTURE_LINKS, gpu, latency_s, nic, pcie_bw_per_dir_bytes_per_s
from ..hardware.fitted import calibration_rows
from ..units import format_bandwidth, format_time

#: Myth 8's message size and its held-out run (content.SMALL_MESSAGES_HELDOUT).
SMALL_BYTES = 262144
HELDOUT_SYSTEM = "Lambda 4x H100 SXM instance"


def _pct(x: float, sign: str = "") -> str:
    return f"{x:{sign}.0%}".replace("%", " %")


def _myth8() -> dict[str, str]:
    from ..predict import cluster, predict_collective, validation_rows

    rows = [r for r in calibration_rows()
            if r["collective"] == "AllReduce" and r["system"].startswith("H100")]
    peak = max(rows, key=lambda r: r["busbw_GBps"])
    at = min(rows, key=lambda r: abs(r["bytes"] - SMALL_BYTES))
    p_small = predict_collective("allreduce", SMALL_BYTES, cluster("H100"))
    held = [r for r in validation_rows(split="heldout")
            if r["system"].startswith(HELDOUT_SYSTEM) and r["collective"] == "AllReduce"]
    h = min(held, key=lambda r: abs(r["n_bytes"] - SMALL_BYTES))
    top = max(held, key=lambda r: r["measured_busbw"])
    return {"myth8_share": _pct(at["busbw_GBps"] / peak["busbw_GBps"]),
            "myth8_time": format_time(p_small.time_s, digits=2),
            "heldout_gpus": f"{int(float(h['gpus']))}",
            "heldout_measured": format_bandwidth(h["measured_busbw"]),
            "heldout_predicted": format_bandwidth(h["predicted_busbw"]),
            "heldout_error": _pct(h["rel_error"], "+"),
            "heldout_share": _pct(h["measured_busbw"] / top["measured_busbw"]),
            "heldout_share_predicted": _pct(h["predicted_busbw"] / top["predicted_busbw"])}


def values() -> dict[str, str]:
    v100, a100, h100, b200 = (gpu(g) for g in ("V100", "A100", "H100", "B200"))
    out = {
        "h100_bidir": format_bandwidth(h100.nvlink_bw_bidir_bytes_per_s),
        "h100_per_dir": format_bandwidth(h100.nvlink_bw_per_dir_bytes_per_s),
        "h100_links": f"{h100.nvlink_links}",
        "h100_link": format_bandwidth(h100.nvlink_per_link_per_dir_bytes_per_s),
        "v100_bidir": format_bandwidth(v100.nvlink_bw_bidir_bytes_per_s),
        "v100_per_dir_n": f"{v100.nvlink_bw_per_dir_bytes_per_s / 1e9:g}",
        "a100_bidir": format_bandwidth(a100.nvlink_bw_bidir_bytes_per_s),
        "a100_per_dir": format_bandwidth(a100.nvlink_bw_per_dir_bytes_per_s),
        "a100_links": f"{a100.nvlink_links}",
        "b200_bidir": format_bandwidth(b200.nvlink_bw_bidir_bytes_per_s),
        "c2c_bidir": format_bandwidth(FUTURE_LINKS["nvlink_c2c_grace_hopper"].value),
        "c2c_per_dir": format_bandwidth(FUTURE_LINKS["nvlink_c2c_grace_hopper"].value / 2),
        "nvlink_over_pcie": f"{h100.nvlink_bw_per_dir_bytes_per_s / pcie_bw_per_dir_bytes_per_s(5):.0f}x",
        "roce400_gbit": format_bandwidth(nic("RoCE-400").bw_per_dir_bytes_per_s, bits=True),
        "fibre_per_m": f"{fibre_one_way_s(1.0) * 1e9:.0f} ns",
        "small_copy_sync": format_time(latency_s("pcie_small_copy_sync")),
        "small_copy_dma": format_time(latency_s("pcie_small_copy")),
    }
    out.update(_myth8())
    return out
