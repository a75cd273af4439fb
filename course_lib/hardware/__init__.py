"""The hardware catalog: every hardware number of the course, once, with its source.

A number in this package is a :class:`Fact`: a value in SI units, the unit, the
*direction* it counts (``"per direction"`` or ``"bidirectional"`` for
bandwidths; ``"n/a"`` for counts and latencies), whether it is only an
order of magnitude (``indicative``), and where it comes from.  Chapters,
explorers and exercises read numbers from here and never type their own:
a test scans the notebooks for bandwidth literals.

One module per kind of number, each importing only those above it:

* :mod:`~course_lib.hardware.facts` -- :class:`Fact` and the sources cited
  in more than one place;
* :mod:`~course_lib.hardware.nccl` -- NCCL's planning numbers: per-NVLink
  bandwidth, base and per-hop latencies (typed once, read by
  :func:`nccl_hop_s`), protocol efficiencies;
* :mod:`~course_lib.hardware.parts` -- NVLink and PCIe generations, GPUs
  (links, peak FLOPS, HBM), NICs, NVSwitch systems, CPU socket links, links
  to come;
* :mod:`~course_lib.hardware.networks` -- network kinds (InfiniBand, RoCEv2,
  EFA, TCPX, TCPXO): payload fraction, extra per-step cost, NCCL set-up;
* :mod:`~course_lib.hardware.measured` -- start-up costs per route and
  measured plateaus;
* :mod:`~course_lib.hardware.datafiles` -- :func:`data_path`, the one way to
  the data files shipped in ``course_lib/data/``;
* :mod:`~course_lib.hardware.fitted` -- the calibration: the prediction
  model's fitted constants and the one loader of the CSV they were fitted on
  (not named ``calibration.py``: :func:`calibration` would shadow it);
* :mod:`~course_lib.hardware.catalog` -- the listing of every number
  (``python -m course_lib catalog``).

Sources are named by repository and path, or by document title:

* ``stas00/ml-engineering:network/README.md`` -- NVLink table per generation,
  PCIe table, nccl-tests runs.
* ``jax-ml/scaling-book:gpus.md`` -- "How to Scale Your Model", GPU chapter.
* ``NVIDIA/nccl:src/graph/topo.h``, ``topo.cc`` and ``tuning.cc`` -- NCCL's
  own planning constants (what a link really delivers after protocol
  overhead; how NCCL rates a PCIe link; per-hop latencies).
* ``NVIDIA/nccl-tests:doc/PERFORMANCE.md`` -- algbw and busbw.
* NVIDIA documents (DGX-1 with V100 whitepaper, DGX B200 User Guide, CUDA
  compute-capability table), MLCommons system descriptions, and the
  PCI-SIG base specifications.
* The course's own measurement on an NVIDIA H200 with a PCIe Gen5 x16 host
  link (the gpu-copies lab): small-copy start-up costs and pageable copies.

Every number is traced, with the line or quote checked, in
``docs/sources.md``; the ``source`` strings here stay short.

Conventions: GB = 1e9 bytes; "per direction" is what one end can send while
the other end sends the same amount back; "bidirectional" adds the two
directions, which is how marketing figures (600 GB/s, 900 GB/s, 1.8 TB/s) are
quoted.  The course always computes with per-direction numbers.

Taught in chapter 2 (NVLink), 3 (PCIe), 5 (InfiniBand and RoCE) and used by all.

Examples
--------
>>> h100 = gpu("H100")
>>> h100.nvlink_links, h100.nvlink_bw_per_dir_bytes_per_s / 1e9
(18, 450.0)
>>> round(h100.nvlink_bw_per_dir_bytes_per_s / pcie_bw_per_dir_bytes_per_s(5), 1)
7.1
"""

from __future__ import annotations

from ..units import GB, US  # noqa: F401  (hardware.GB, hardware.US as before)
from .facts import (DIRECTIONS, SRC_CUDA_CC, SRC_H200_LAB, SRC_IBTA,  # noqa: F401
                    SRC_MLCOMMONS, SRC_MLENG, SRC_NCCL_TESTS_ISSUE, SRC_NCCL_TOPO,
                    SRC_NCCL_TOPO_CC, SRC_NCCL_TOPO_H, SRC_NCCL_TUNING,
                    SRC_NCCL_TUNING_V220, SRC_PCISIG, SRC_SCALING, Fact)
from .nccl import (HOP_ALGORITHMS, HOP_KINDS, HOP_PROTOCOLS,  # noqa: F401
                   NCCL_LINK_BW, NCCL_TUNING, nccl_hop_s, nccl_tuning)
from .parts import (CPU_LINKS, FUTURE_LINKS, GPU, GPU_HBM_BW, GPU_PEAK_FLOPS,
                    GPUS, NIC, NICS, NVLINK_GENERATIONS, PCIE_GENERATIONS,
                    PCIE_PATHS, SYSTEMS, NVLinkGeneration, NVSwitchSystem,
                    PCIeGeneration, cpu_link_bw_bytes_per_s, cpu_link_names, gpu,
                    gpu_names, gpu_peak_flops_per_s, hbm_bw_bytes_per_s, nic,
                    nic_names, nvlink_generation, pcie_bw_per_dir_bytes_per_s,
                    pcie_generation, system, system_names)
from .networks import (NETWORK, NETWORK_KINDS, NETWORK_PROFILES, network_efficiency,
                       network_hop_s, network_profile)
from .measured import (LATENCIES, MEASURED, latency_s, pageable_extra_time_s,
                       pageable_over_pinned)
from .datafiles import data_path
from .fitted import (CALIBRATION, SRC_CALIB, calibration,  # noqa: F401
                     calibration_curves, calibration_data_path, calibration_rows)
from .catalog import (FACT_TABLES, _catalog_main, all_facts, catalog_table,  # noqa: F401
                      listed_facts)

__all__ = [
    "Fact", "NVLinkGeneration", "GPU", "PCIeGeneration", "NIC", "NVSwitchSystem",
    "NVLINK_GENERATIONS", "GPUS", "PCIE_GENERATIONS", "NICS", "SYSTEMS",
    "LATENCIES", "NCCL_LINK_BW", "MEASURED",
    "gpu", "gpu_names", "nic", "nic_names", "system", "system_names",
    "pcie_bw_per_dir_bytes_per_s", "pcie_generation", "nvlink_generation",
    "latency_s", "catalog_table", "all_facts",
    "GPU_PEAK_FLOPS", "GPU_HBM_BW", "FUTURE_LINKS",
    "gpu_peak_flops_per_s", "hbm_bw_bytes_per_s",
    "NCCL_TUNING", "CALIBRATION", "nccl_tuning", "calibration", "SRC_NCCL_TUNING_V220",
    "CPU_LINKS", "PCIE_PATHS", "NETWORK", "NETWORK_KINDS",
    "cpu_link_names", "cpu_link_bw_bytes_per_s", "network_efficiency", "network_hop_s",
    "NETWORK_PROFILES", "network_profile",
    # new with the package
    "nccl_hop_s", "data_path", "calibration_rows", "calibration_curves",
    "pageable_extra_time_s", "pageable_over_pinned",
]
