"""Reference measurements: the GPU copy lab run on a real NVIDIA H200.

Learners without a GPU still see real GPU curves: :func:`h200_copies` returns
the course's own ``gpu-copies`` lab (:mod:`course_lib.measure.gpu`) as it ran
on one NVIDIA H200 on a PCIe Gen5 x16 link, as a :class:`LabResult` -- the
same records, summary and plots as a learner's own run.

Files (package data in ``course_lib/data/``, beside ``calibration_measurements.csv``):
``h200_gpu_copies.json`` (the records, unchanged) and
``h200_gpu_copies.meta.json`` (the machine, the command, what each variant
means).

Headlines of that run: pinned H2D 55.4 GB/s at 1 GiB, 88 % of the Gen5 x16
line rate per direction; pinned D2H 55.3 GB/s; pageable H2D at best 17 GB/s
(1 MiB), falling to 6.7 GB/s at 1 GiB; pageable D2H about 16 GB/s; a copy
inside the GPU about 2.1 TB/s; a tiny pinned H2D copy about 7.3 us end to end
by the host clock.  Chapters 3 and 4 plot them
(:func:`course_lib.plots.plot_copy_reference`); the ``pinned_vs_pageable``
assignment uses them as its GPU data set.

>>> ref = h200_copies()
>>> ref.metadata["gpu"], ref.metadata["pcie_gen"]
('H200', 5)
>>> round(ref.summary["h2d_pinned_bw_bytes_per_s"] / 1e9, 1)
55.4
"""

from __future__ import annotations

import json
from pathlib import Path

from ..hardware import data_path
from .gpu import summarise_gpu_records
from .harness import LabResult, fit_alpha_beta

__all__ = ["h200_copies", "reference_path", "REFERENCE_FILES"]

#: Reference data sets by name -> file name in ``course_lib/data/``.
REFERENCE_FILES = {"h200": "h200_gpu_copies.json"}


def reference_path(name: str = "h200") -> Path:
    """Path of a reference file (package data in ``course_lib/data/``)."""
    if name not in REFERENCE_FILES:
        raise ValueError(f"name must be one of {sorted(REFERENCE_FILES)}, got {name!r}")
    return data_path(REFERENCE_FILES[name])


def h200_copies() -> LabResult:
    """The H200 run of the ``gpu-copies`` lab as a :class:`LabResult`.

    ``metadata`` describes the machine (``gpu``, ``pcie_gen``, ``pcie_lanes``,
    ``machine``, ``command``, ``variants``); ``summary`` holds what
    :func:`course_lib.measure.gpu.summarise_gpu_records` computes plus
    ``pageable_h2d_peak_bw_bytes_per_s`` and ``pageable_h2d_peak_n_bytes``;
    ``fits`` holds ``T = alpha + n/B`` per copy variant.
    """
    path = reference_path("h200")
    records = json.loads(path.read_text())
    meta_path = path.with_name(path.stem + ".meta.json")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    meta["source"] = f"course_lib/data/{path.name}"
    result = LabResult(name="gpu-copies", records=records, metadata=meta)
    result.summary.update(summarise_gpu_records(records))
    pageable = result.select("h2d-pageable")
    if pageable:
        peak = max(pageable, key=lambda r: r["bw_bytes_per_s"])
        result.summary["pageable_h2d_peak_bw_bytes_per_s"] = peak["bw_bytes_per_s"]
        result.summary["pageable_h2d_peak_n_bytes"] = peak["n_bytes"]
    for v in ("h2d-pinned", "d2h-pinned", "h2d-pageable", "d2h-pageable", "d2d"):
        rows = result.select(v)
        if len(rows) >= 2:
            result.fits[v] = fit_alpha_beta([r["n_bytes"] for r in rows],
                                            [r["median_s"] for r in rows])
    return result
