"""The listing: every number of the catalog as one table.

:data:`FACT_TABLES` names every table of :class:`Fact` objects in the package
(a test checks that no Fact is left out); the records (NVLink and PCIe
generations, NIC ports, NVSwitch systems) add the numbers they carry.
``python -m course_lib catalog`` prints :func:`catalog_table`.
"""

from __future__ import annotations

from ..units import check_choice, format_bandwidth, format_time
from .fitted import CALIBRATION
from .facts import Fact
from .measured import LATENCIES, MEASURED
from .nccl import NCCL_LINK_BW, NCCL_TUNING
from .networks import NETWORK
from .parts import (CPU_LINKS, FUTURE_LINKS, GPU_HBM_BW, GPU_PEAK_FLOPS, NICS,
                    NVLINK_GENERATIONS, PCIE_GENERATIONS, PCIE_PATHS, SYSTEMS)

#: Every table of Facts, in the catalog's order: (row-name prefix, table).
FACT_TABLES: tuple[tuple[str, dict[object, Fact]], ...] = (
    ("NCCL NVLink planning bw SM", NCCL_LINK_BW),
    ("", LATENCIES),
    ("", MEASURED),
    ("nccl_tuning: ", NCCL_TUNING),
    ("calibration: ", CALIBRATION),
    ("cpu_links: ", CPU_LINKS),
    ("pcie_paths: ", PCIE_PATHS),
    ("network: ", NETWORK),
    ("gpu_peak_flops: ", GPU_PEAK_FLOPS),
    ("gpu_hbm_bw: ", GPU_HBM_BW),
    ("future_links: ", FUTURE_LINKS),
)

Row = tuple[str, float, str, str, str]


def _record_rows() -> list[Row]:
    """The numbers the part records carry, one row each."""
    rows = []
    for g, rec in NVLINK_GENERATIONS.items():
        rows.append((f"NVLink{g} per link ({rec.gpu})",
                     rec.per_link_per_dir_bytes_per_s, "bytes/s",
                     "per direction", rec.source))
        rows.append((f"NVLink{g} total ({rec.gpu}, {rec.links} links)",
                     rec.total_per_dir_bytes_per_s, "bytes/s",
                     "per direction", rec.source))
    for g, rec in PCIE_GENERATIONS.items():
        rows.append((f"PCIe Gen{g} x16", rec.per_dir_bytes_per_s(16), "bytes/s",
                     "per direction", rec.source))
    for g, rec in PCIE_GENERATIONS.items():
        rows.append((f"PCIe Gen{g} x16 NCCL planning", rec.nccl_planning_x16_bytes_per_s,
                     "bytes/s", "per direction", rec.source))
    for name, rec in NICS.items():
        rows.append((f"{rec.family} {name} port", rec.bw_per_dir_bytes_per_s,
                     "bytes/s", "per direction", rec.source))
    for name, rec in SYSTEMS.items():
        rows.append((f"{name} NVSwitch chips", rec.nvswitches, "count", "n/a",
                     rec.source))
    return rows


def listed_facts() -> list[tuple[str, Fact]]:
    """Every Fact of the catalog with the name of its row."""
    return [(f"{prefix}{key}", fact)
            for prefix, table in FACT_TABLES for key, fact in table.items()]


def all_facts() -> list[Row]:
    """Every number of the catalog as rows (name, value, unit, direction, source)."""
    return _record_rows() + [(name, fact.value, fact.unit, fact.direction, fact.source)
                             for name, fact in listed_facts()]


def _shown(value: float, unit: str) -> str:
    if unit == "bytes/s":
        return format_bandwidth(value)
    if unit == "s":
        return format_time(value)
    if unit == "FLOP/s":
        return f"{value / 1e12:g} TFLOP/s"
    return f"{value:g}"


def catalog_table(names=None) -> str:
    """The catalog as a Markdown table, units and direction in every row.

    ``names`` picks rows by quantity name (in that order); default all.

    >>> print(catalog_table(names=["gpu_peak_flops: H100"]).splitlines()[-1])
    | gpu_peak_flops: H100 | 989 TFLOP/s | n/a | NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989 TFLOPS BF16 dense, 3.35 TB/s HBM3) |
    """
    rows = all_facts()
    if names is not None:
        by_name = {row[0]: row for row in rows}
        for n in names:
            check_choice(n, "names", by_name)
        rows = [by_name[n] for n in names]
    lines = ["| quantity | value | direction | source |", "|---|---|---|---|"]
    for name, value, unit, direction, source in rows:
        lines.append(f"| {name} | {_shown(value, unit)} | {direction} | {source} |")
    return "\n".join(lines)


def _catalog_main(argv=None) -> int:
    """``python -m course_lib catalog``: print the catalog as Markdown."""
    print(catalog_table())
    return 0
