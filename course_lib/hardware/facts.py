"""What one catalog number is (:class:`Fact`), and the public sources the
catalog cites in more than one place.

The conventions (GB = 1e9 bytes; "per direction" against "bidirectional")
are in the package's docstring, :mod:`course_lib.hardware`.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECTIONS = ("per direction", "bidirectional", "n/a")

SRC_MLENG = "stas00/ml-engineering:network/README.md"
SRC_SCALING = "jax-ml/scaling-book:gpus.md"
SRC_NCCL_TOPO = ("NVIDIA/nccl:src/graph/topo.h (read at commit 069a3d4f; "
                 "same values in v2.27.7)")
SRC_NCCL_TOPO_CC = "NVIDIA/nccl:src/graph/topo.cc (kvDictPciGen; width*speed/80)"
SRC_NCCL_TUNING = "NVIDIA/nccl:src/graph/tuning.cc (v2.20.3, commit b6475625, hwLat)"
SRC_NCCL_TESTS_ISSUE = "NVIDIA/nccl-tests issue #149"
SRC_PCISIG = ("PCI-SIG PCI Express Base Specification 3.0-6.0 (rate, "
              "encoding); " + SRC_MLENG + " (PCIe table); " + SRC_NCCL_TOPO_CC)
SRC_IBTA = ("InfiniBand Trade Association roadmap (EDR/HDR/NDR/XDR port rates); "
            "4x-link table in " + SRC_MLENG)
SRC_MLCOMMONS = "MLCommons results, systems/*.json (accelerator_host_interconnect)"
SRC_CUDA_CC = "NVIDIA CUDA GPU Compute Capability table (developer.nvidia.com/cuda-gpus)"
SRC_NCCL_TUNING_V220 = "NVIDIA/nccl:src/graph/tuning.cc (v2.20.3)"
SRC_NCCL_TOPO_H = ("NVIDIA/nccl:src/graph/topo.h (master 2025; *_QPI_BW, "
                   "AMD_ZEN*_BW, P9_BW, ARM_BW, INTEL_P2P_OVERHEAD)")
SRC_H200_LAB = ("course measurement on an NVIDIA H200, PCIe Gen5 x16 "
                "(gpu-copies lab, course_lib/data/h200_gpu_copies.json)")


@dataclass(frozen=True)
class Fact:
    """One sourced number.

    Parameters
    ----------
    value : float
        In SI units (bytes, seconds, bytes per second) or a plain count.
    unit : str
        ``"bytes/s"``, ``"s"``, ``"count"``, ``"GT/s"``...
    direction : str
        ``"per direction"``, ``"bidirectional"`` or ``"n/a"``.
    source : str
        Repository and path, or document title.
    indicative : bool
        True when the number is an order of magnitude to teach, not a spec.
    note : str
        What the number means, in a sentence.
    """

    value: float
    unit: str
    direction: str
    source: str
    indicative: bool = False
    note: str = ""

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, "
                             f"got {self.direction!r}")

    def __float__(self):
        return float(self.value)

