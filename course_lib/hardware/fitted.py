"""The calibration: the prediction model's fitted constants (:data:`CALIBRATION`) and the one
loader of the measurements they were fitted on
(``course_lib/data/calibration_measurements.csv``).

Columns of the CSV: system, gpus, nodes, interconnect, collective, bytes,
algbw_GBps, busbw_GBps, source (GB/s = 1e9 bytes/s).  Chapter 7.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from ..units import US, check_choice
from .datafiles import data_path
from .facts import Fact
from .networks import NETWORK

# Fitted on course_lib/data/calibration_measurements.csv by
# benchmarks/bench_calibration.py --fit:
# one value each, shared by every machine, chosen to minimise the mean
# |log(predicted/measured time)| over the 8x A100 and 8x H100 AllReduce curves
# (and, for the PCIe numbers, the H100 H2D pinned curve).
SRC_CALIB = "fitted to course_lib/data/calibration_measurements.csv"
CALIBRATION: dict[str, Fact] = {
    "launch_s": Fact(
        28 * US, "s", "n/a",
        SRC_CALIB + " (8x A100 and 8x H100 AllReduce, sizes <= 64 kB)",
        note="fixed cost of one collective that NCCL's model leaves out: kernel "
             "launch, argument set-up and the start/end synchronisation of all "
             "ranks; added to NCCL's base + per-hop latencies"),
    "launch_gpus": Fact(
        8, "count", "n/a",
        "the calibration runs' command lines (nccl-tests -g 8: one process drives all 8 GPUs; "
        "github:stas00/ml-engineering network/README.md and "
        "github:ZiyanIshani/vpbenchmarking results/nccl, in the calibration CSV)",
        note="GPUs whose kernels one host thread launched per collective in the runs "
             "launch_s was fitted on: launch_s / launch_gpus (3.5 us) is one NCCL kernel "
             "launch, the same order as one CUDA API call (hardware.LATENCIES "
             "'cuda_api_call', 4.6 us on the H200)"),
    "nvls_latency_s": Fact(
        6 * US, "s", "n/a",
        SRC_CALIB + " (8x H100 NVLS AllReduce, 8 B - 1 MB)",
        note="one in-switch reduction round on NVLink SHARP (multimem load-reduce "
             "then multicast store); NCCL plans 23 us, the floor of the H100 curve "
             "(33 us) allows about 6 us on top of launch_s"),
    "nvls_efficiency": Fact(
        0.74, "ratio", "n/a",
        SRC_CALIB + " (8x H100 NVLS AllReduce, 4-8 GB plateau: algbw 274 GB/s)",
        note="NVLS algorithm bandwidth as a fraction of a GPU's per-direction "
             "NVLink planning bandwidth (18 x 20.6 GB/s)"),
    "simple_efficiency": Fact(
        0.98, "ratio", "n/a",
        SRC_CALIB + " (8x A100 AllReduce, 4-16 GB plateau: busbw 235 GB/s)",
        note="Simple protocol payload fraction of NCCL's per-link planning "
             "bandwidth (NCCL itself caps SM80 at 235 GB/s)"),
    "chunk_bytes": Fact(
        2e6, "bytes", "n/a",
        SRC_CALIB + " (8x A100 and 8x H100, 4 MB - 1 GB)",
        note="largest slice a rank moves per pipeline step (all channels together); "
             "every step exposes the time of one slice, min(chunk_bytes, S/n) / B, "
             "which is what makes 1-256 MB sizes slower than the alpha-beta line"),
    "pcie_dma_efficiency": Fact(
        0.87, "ratio", "n/a",
        SRC_CALIB + " (H100 PCIe Gen5 H2D pinned, plateau 54.7 GB/s of 63)",
        note="share of the PCIe x16 per-direction rate a pinned cudaMemcpy reaches "
             "(TLP headers, flow control, DMA engine)"),
    # the same number as the InfiniBand network kind's payload fraction
    "net_efficiency": NETWORK["InfiniBand_efficiency"],
}


def calibration(name: str) -> float:
    """One fitted constant of the prediction model, SI units.

    >>> calibration("launch_s") * 1e6
    28.0
    """
    fact = CALIBRATION.get(name) if isinstance(name, str) else None
    if fact is None:  # not an exact key: normalise it (and name what is allowed)
        fact = CALIBRATION[check_choice(name, "name", CALIBRATION)]
    return fact.value


#: The calibration measurements, a file of ``course_lib/data``.
CALIBRATION_FILE = "calibration_measurements.csv"
_NUMBER_COLUMNS = ("gpus", "nodes", "bytes", "algbw_GBps", "busbw_GBps")


def calibration_data_path() -> Path:
    """Path of the packaged calibration CSV."""
    return data_path(CALIBRATION_FILE)


def _read_calibration_csv(path) -> list[dict]:
    """The one reader of the calibration CSV: its rows, numbers as floats."""
    path = calibration_data_path() if path is None else path
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            for key in _NUMBER_COLUMNS:
                row[key] = float(row[key])
    except OSError as exc:
        raise ValueError(f"path: cannot read the calibration CSV {str(path)!r}: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"path: {str(path)!r} is not a calibration CSV with numeric "
                         f"columns {', '.join(_NUMBER_COLUMNS)} ({exc})") from exc
    return rows


def calibration_rows(path=None) -> list[dict]:
    """Rows of the calibration CSV, numbers as floats; ``[]`` if ``path`` is absent.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Another file of the same columns; default the packaged file.

    Examples
    --------
    >>> sorted({r["collective"] for r in calibration_rows()})
    ['AllReduce', 'D2H_pinned', 'H2D_pinned']
    """
    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path):
        return []
    return _read_calibration_csv(path)


def calibration_curves(path=None) -> dict:
    """The calibration measurements, one curve per (system, collective).

    Returns ``{(system, collective): {"n_bytes": [...], "algbw_bytes_per_s":
    [...], "busbw_bytes_per_s": [...]}}`` in SI units (the CSV is in GB/s).
    Unlike :func:`calibration_rows`, a ``path`` that cannot be read is an error.
    """
    out: dict = {}
    for row in _read_calibration_csv(path):
        c = out.setdefault((row["system"], row["collective"]),
                           {"n_bytes": [], "algbw_bytes_per_s": [],
                            "busbw_bytes_per_s": []})
        c["n_bytes"].append(row["bytes"])
        c["algbw_bytes_per_s"].append(row["algbw_GBps"] * 1e9)
        c["busbw_bytes_per_s"].append(row["busbw_GBps"] * 1e9)
    return out
