"""The hardware catalog: every hardware number of the course, once, with its source.

A number in this module is a :class:`Fact`: a value in SI units, the unit, the
*direction* it counts (``"per direction"`` or ``"bidirectional"`` for
bandwidths; ``"n/a"`` for counts and latencies), whether it is only an
order of magnitude (``indicative``), and where it comes from.  Chapters,
explorers and exercises read numbers from here and never type their own:
a test scans the notebooks for bandwidth literals.

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

Start-up costs (``LATENCIES``) are one per route and of one kind -- the
one-way time of one small message repeated back to back -- so that routes
compare fairly; ``pcie_small_copy_sync`` is the different, end-to-end cost
of a lone synchronous copy by the host clock.

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

from dataclasses import dataclass

from .units import GB, US, check_choice, check_int, gbit_per_s

__all__ = [
    "Fact", "NVLinkGeneration", "GPU", "PCIeGeneration", "NIC", "NVSwitchSystem",
    "NVLINK_GENERATIONS", "GPUS", "PCIE_GENERATIONS", "NICS", "SYSTEMS",
    "LATENCIES", "NCCL_LINK_BW", "MEASURED",
    "gpu", "gpu_names", "nic", "nic_names", "system", "system_names",
    "pcie_bw_per_dir_bytes_per_s", "pcie_generation", "nvlink_generation",
    "latency_s", "catalog_table", "all_facts",
]

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


# --- NVLink --------------------------------------------------------------
@dataclass(frozen=True)
class NVLinkGeneration:
    """One NVLink generation as built into its flagship GPU.

    ``per_link_per_dir`` = lanes per direction x lane signalling rate / 8,
    ``total_per_dir`` = links x per-link, bidirectional = 2 x per direction.
    """

    generation: int
    gpu: str
    links: int
    lanes_per_link_per_dir: int
    lane_rate_gbit_per_s: float
    source: str

    @property
    def per_link_per_dir_bytes_per_s(self) -> float:
        return self.lanes_per_link_per_dir * gbit_per_s(self.lane_rate_gbit_per_s)

    @property
    def per_link_bidir_bytes_per_s(self) -> float:
        return 2 * self.per_link_per_dir_bytes_per_s

    @property
    def total_per_dir_bytes_per_s(self) -> float:
        return self.links * self.per_link_per_dir_bytes_per_s

    @property
    def total_bidir_bytes_per_s(self) -> float:
        return 2 * self.total_per_dir_bytes_per_s


_NVLINK_LANES_SRC = (SRC_MLENG + " (NVLink table); " + SRC_SCALING + "; "
                     + SRC_NCCL_TESTS_ISSUE + "; NVIDIA Blackwell architecture "
                     "technical brief")
#: NVLink generations 1-5.  Lane rates are the signalling rate per lane and
#: direction: NVLink1 8 x 20 Gb/s, NVLink2 8 x 25 Gb/s, NVLink3 4 x 50 Gb/s,
#: NVLink4 2 x 100 Gb/s (PAM4), NVLink5 2 x 200 Gb/s.  The lane counts and
#: rates are checked in docs/sources.md; "PAM4" is the usual reading of a
#: 100 Gb/s lane but was not found stated in an NVIDIA document.
NVLINK_GENERATIONS: dict[int, NVLinkGeneration] = {
    1: NVLinkGeneration(1, "P100", 4, 8, 20.0, _NVLINK_LANES_SRC),
    2: NVLinkGeneration(2, "V100", 6, 8, 25.0, _NVLINK_LANES_SRC),
    3: NVLinkGeneration(3, "A100", 12, 4, 50.0, _NVLINK_LANES_SRC),
    4: NVLinkGeneration(4, "H100", 18, 2, 100.0, _NVLINK_LANES_SRC),
    5: NVLinkGeneration(5, "B200", 18, 2, 200.0, _NVLINK_LANES_SRC),
}


def nvlink_generation(generation: int) -> NVLinkGeneration:
    """The NVLink generation record (1-5)."""
    g = check_int(generation, "generation", minimum=1, maximum=5)
    return NVLINK_GENERATIONS[g]


# --- PCIe ----------------------------------------------------------------
@dataclass(frozen=True)
class PCIeGeneration:
    """A PCIe generation: transfer rate per lane and encoding efficiency.

    Per-direction x16 bandwidth = 16 x rate (GT/s) x efficiency / 8.
    Gen3-5 use 128b/130b encoding; Gen6 uses PAM4 with 256-byte FLITs of
    which 242 carry data (about 0.945).

    ``nccl_planning_x16_bytes_per_s`` is what NCCL assumes for an x16 link:
    width x speed / 80 GB/s with speed 60/120/240/480 (units of 100 Mb/s per
    lane) for Gen3/4/5/6, i.e. 12/24/48/96 GB/s -- three quarters of the
    raw rate.
    """

    generation: int
    rate_gt_per_s: float
    efficiency: float
    nccl_planning_x16_bytes_per_s: float | None
    source: str

    def per_dir_bytes_per_s(self, lanes: int = 16) -> float:
        return lanes * self.rate_gt_per_s * 1e9 * self.efficiency / 8


PCIE_GENERATIONS: dict[int, PCIeGeneration] = {
    3: PCIeGeneration(3, 8.0, 128 / 130, 12 * GB, SRC_PCISIG),
    4: PCIeGeneration(4, 16.0, 128 / 130, 24 * GB, SRC_PCISIG),
    5: PCIeGeneration(5, 32.0, 128 / 130, 48 * GB, SRC_PCISIG),
    6: PCIeGeneration(6, 64.0, 242 / 256, 96 * GB, SRC_PCISIG),
}
_PCIE_LANES = (1, 2, 4, 8, 16)


def pcie_generation(gen: int) -> PCIeGeneration:
    """The PCIe generation record (3-6)."""
    g = check_int(gen, "gen", minimum=3, maximum=6)
    return PCIE_GENERATIONS[g]


def pcie_bw_per_dir_bytes_per_s(gen: int, lanes: int = 16) -> float:
    """PCIe link bandwidth in one direction, in bytes per second.

    Parameters
    ----------
    gen : int
        PCIe generation, 3 to 6.
    lanes : int
        Link width: 1, 2, 4, 8 or 16.

    Notes
    -----
    B = lanes x rate x encoding efficiency / 8.  Both directions together
    carry twice this; the seeds' "PCIe Gen5 x16 bidirectional 64 GB/s" is
    really the per-direction figure.  Chapter 3.

    Examples
    --------
    >>> round(pcie_bw_per_dir_bytes_per_s(5) / 1e9, 1)
    63.0
    >>> round(pcie_bw_per_dir_bytes_per_s(3, lanes=8) / 1e9, 2)
    7.88
    """
    lanes = check_int(lanes, "lanes", minimum=1, maximum=16)
    if lanes not in _PCIE_LANES:
        raise ValueError(f"lanes must be one of {_PCIE_LANES}, got {lanes}")
    return pcie_generation(gen).per_dir_bytes_per_s(lanes)


# --- GPUs ----------------------------------------------------------------
@dataclass(frozen=True)
class GPU:
    """A GPU model, as far as moving data is concerned."""

    name: str
    nvlink_gen: int
    nvlink_links: int
    pcie_gen: int
    sm_arch: int
    source: str
    note: str = ""

    @property
    def nvlink(self) -> NVLinkGeneration:
        return NVLINK_GENERATIONS[self.nvlink_gen]

    @property
    def nvlink_per_link_per_dir_bytes_per_s(self) -> float:
        return self.nvlink.per_link_per_dir_bytes_per_s

    @property
    def nvlink_bw_per_dir_bytes_per_s(self) -> float:
        return self.nvlink_links * self.nvlink.per_link_per_dir_bytes_per_s

    @property
    def nvlink_bw_bidir_bytes_per_s(self) -> float:
        return 2 * self.nvlink_bw_per_dir_bytes_per_s

    @property
    def pcie_bw_per_dir_bytes_per_s(self) -> float:
        return pcie_bw_per_dir_bytes_per_s(self.pcie_gen)

    @property
    def nccl_link_bw_bytes_per_s(self) -> float:
        """NCCL's planning bandwidth for one NVLink of this GPU's generation."""
        return NCCL_LINK_BW[self.sm_arch].value


_GPU_SRC = (SRC_MLENG + "; " + SRC_SCALING + "; " + SRC_MLCOMMONS
            + "; " + SRC_CUDA_CC)
GPUS: dict[str, GPU] = {
    "P100": GPU("P100", 1, 4, 3, 60, _GPU_SRC, "SXM2; NVLink 1"),
    "V100": GPU("V100", 2, 6, 3, 70, _GPU_SRC, "SXM2; NVLink 2"),
    "A100": GPU("A100", 3, 12, 4, 80, _GPU_SRC, "SXM4; NVLink 3"),
    "H100": GPU("H100", 4, 18, 5, 90, _GPU_SRC, "SXM5; NVLink 4"),
    "H200": GPU("H200", 4, 18, 5, 90, _GPU_SRC,
                "SXM; same NVLink 4 as H100, more and faster HBM"),
    "B200": GPU("B200", 5, 18, 5, 100,
                _GPU_SRC + "; NVIDIA DGX B200 User Guide (Xeon 8570 PCIe "
                "Gen5 CPUs)",
                "SXM; NVLink 5; host link runs PCIe Gen5 x16 on HGX/DGX B200 "
                "(the x86 hosts are Gen5)"),
}


def gpu_names() -> list[str]:
    """Names accepted by :func:`gpu`."""
    return list(GPUS)


def gpu(name: str) -> GPU:
    """The catalog record of a GPU model.

    Parameters
    ----------
    name : str
        One of ``"P100", "V100", "A100", "H100", "H200", "B200"``
        (case-insensitive).

    Examples
    --------
    >>> g = gpu("a100")
    >>> g.nvlink_bw_per_dir_bytes_per_s / 1e9, g.nvlink_bw_bidir_bytes_per_s / 1e9
    (300.0, 600.0)
    >>> g.pcie_gen
    4
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a GPU name, one of {gpu_names()}; got {name!r}")
    key = name.strip().upper()
    for prefix in ("NVIDIA ", "TESLA "):
        if key.startswith(prefix):
            key = key[len(prefix):]
    key = key.split("-")[0].split(" ")[0]
    if key not in GPUS:
        raise ValueError(f"name must be one of {gpu_names()}; got {name!r}")
    return GPUS[key]


# --- NICs ----------------------------------------------------------------
@dataclass(frozen=True)
class NIC:
    """A network port: its line rate in bits, its data rate in bytes per direction."""

    name: str
    family: str
    rate_gbit_per_s: float
    source: str

    @property
    def bw_per_dir_bytes_per_s(self) -> float:
        return gbit_per_s(self.rate_gbit_per_s)


_ROCE_SRC = ("RoCEv2 runs at the Ethernet port rate (IEEE 802.3 100/200/400GbE); "
             + SRC_MLENG)
NICS: dict[str, NIC] = {
    "EDR": NIC("EDR", "InfiniBand", 100.0, SRC_IBTA),
    "HDR": NIC("HDR", "InfiniBand", 200.0, SRC_IBTA),
    "NDR": NIC("NDR", "InfiniBand", 400.0, SRC_IBTA),
    "XDR": NIC("XDR", "InfiniBand", 800.0, SRC_IBTA),
    "RoCE-100": NIC("RoCE-100", "RoCEv2", 100.0, _ROCE_SRC),
    "RoCE-200": NIC("RoCE-200", "RoCEv2", 200.0, _ROCE_SRC),
    "RoCE-400": NIC("RoCE-400", "RoCEv2", 400.0, _ROCE_SRC),
}


def nic_names() -> list[str]:
    """Names accepted by :func:`nic`."""
    return list(NICS)


def nic(name: str) -> NIC:
    """The catalog record of a NIC port type.

    >>> nic("NDR").bw_per_dir_bytes_per_s / 1e9
    50.0
    """
    return NICS[check_choice(name, "nic", NICS)]


# --- NVSwitch systems ------------------------------------------------------
@dataclass(frozen=True)
class NVSwitchSystem:
    """A multi-GPU system and how its GPUs are wired."""

    name: str
    gpu: str
    n_gpus: int
    nvswitches: int
    wiring: str
    nvls: bool
    source: str
    note: str = ""


SYSTEMS: dict[str, NVSwitchSystem] = {
    "DGX-1": NVSwitchSystem(
        "DGX-1", "V100", 8, 0, "hybrid cube-mesh", False,
        "NVIDIA DGX-1 With Tesla V100 System Architecture (WP-08437-002); "
        "microsoft/msccl-tools:tests/test_topologies.py (DGX-1 nvidia-smi topo)",
        "no switch: each GPU links to 4 (P100) or 6 (V100, some doubled) "
        "others; some pairs have no direct link"),
    "DGX-2": NVSwitchSystem(
        "DGX-2", "V100", 16, 12, "nvswitch", False,
        "Hot Chips 30, 'NVSwitch and DGX-2' (Ishii, Foley), as reported by "
        "WikiChip nvidia/nvswitch: two baseboards of 8 GPUs and 6 NVSwitches",
        "12 NVSwitches (2 x 6), not 6 as one seed article says"),
    "DGX A100": NVSwitchSystem(
        "DGX A100", "A100", 8, 6, "nvswitch", False,
        SRC_SCALING + " (NVSwitches per node); " + SRC_MLENG
        + " (6 switches of 12 NVLinks)"),
    "DGX H100": NVSwitchSystem(
        "DGX H100", "H100", 8, 4, "nvswitch", True,
        SRC_SCALING + " (4 switches, 5+4+4+5); " + SRC_NCCL_TUNING
        + " (NVLS rows)",
        "GPU links split 5+4+4+5 over the 4 switches; NVLink SHARP (NVLS) "
        "reduces in the switch"),
    "GB200 NVL72": NVSwitchSystem(
        "GB200 NVL72", "B200", 72, 18, "nvswitch", True,
        SRC_SCALING + " (2/18 switches, 900 GB/s); glennklockwood.com "
        "garden/NVLink (18 NVSwitch ASICs, 2 per tray, 9 trays)",
        "18 NVSwitch chips in 9 switch trays; 900 GB/s per direction per GPU"),
}


def system_names() -> list[str]:
    return list(SYSTEMS)


def system(name: str) -> NVSwitchSystem:
    """The catalog record of a multi-GPU system.

    >>> system("DGX-2").nvswitches
    12
    """
    return SYSTEMS[check_choice(name, "system", SYSTEMS)]


# --- NCCL planning constants ------------------------------------------------
#: NCCL's own per-NVLink planning bandwidth (per direction) by SM arch:
#: what one link delivers after protocol overhead.  Read from
#: ``NVIDIA/nccl:src/graph/topo.h`` (SM60_NVLINK_BW 18, SM70 20, SM80 20,
#: SM90 20.6, SM100 40.1 GB/s).  Older releases differ: v2.16.5 had
#: SM70/SM80 = 22.0 and no SM90 entry (see docs/sources.md).
NCCL_LINK_BW: dict[int, Fact] = {
    60: Fact(18.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO,
             note="SM60_NVLINK_BW"),
    70: Fact(20.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO,
             note="SM70_NVLINK_BW"),
    80: Fact(20.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO,
             note="SM80_NVLINK_BW"),
    90: Fact(20.6 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO,
             note="SM90_NVLINK_BW"),
    100: Fact(40.1 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO,
              note="SM100_NVLINK_BW"),
}

# --- latencies (indicative) -------------------------------------------------
# One start-up cost (alpha) per route, each from the same kind of measurement:
# the one-way time of one small message between the two memories, with the
# message repeated back to back (a queue of copies timed by CUDA events, or
# half a ping-pong).  It leaves out the one-off cost a program pays for a lone
# *synchronous* copy (API call, driver submission, waiting for completion),
# which the host clock sees: that is ``pcie_small_copy_sync``, and
# ``cuda_api_call`` is the difference of the two.
SRC_H200_LAB = ("course measurement on an NVIDIA H200, PCIe Gen5 x16 "
                "(gpu-copies lab, data/h200_gpu_copies.json)")
_P2P_LAT_SRC = ("NVIDIA/cuda-samples issue #230 (p2pBandwidthLatencyTest "
                "latency matrices)")
_H100_BWTEST = ("ZiyanIshani/vpbenchmarking:results/stream_nvbench/"
                "bandwidth_h2d_d2h_20260225_183119.txt")
_OSU_GDR = ("OSU micro-benchmarks osu_latency -d cuda D D between two servers, "
            "Open MPI + UCX with GPUDirect RDMA and gdrcopy on InfiniBand: "
            "4.06 us at 1 B ('Building a CUDA-aware Open MPI library on an "
            "Infiniband cluster', user guide of the juliet cluster)")
_SMALL_COPY_S = 2.7 * US
_SMALL_COPY_SYNC_S = 7.3 * US
LATENCIES: dict[str, Fact] = {
    "nvlink_p2p": Fact(2 * US, "s", "n/a", _P2P_LAT_SRC, True,
                       "GPU to a neighbour GPU over NVLink, one small message, "
                       "one way (copies repeated, timed by CUDA events)"),
    "pcie_staged_p2p": Fact(15 * US, "s", "n/a", _P2P_LAT_SRC, True,
                            "GPU to GPU staged through host memory over PCIe, "
                            "one small message, one way (11-20 us reported; "
                            "same test with peer access off)"),
    "pcie_small_copy": Fact(_SMALL_COPY_S, "s", "n/a",
                            SRC_H200_LAB + " (1 KiB pinned H2D: 2.7 us per copy); "
                            + _H100_BWTEST + " (H100: 1000 B at 0.4 GB/s, 2.5 us)",
                            True,
                            "small pinned host-to-GPU copy, one way (copies "
                            "queued back to back, timed by CUDA events): what "
                            "the DMA engine and the link add per copy"),
    "pcie_small_copy_sync": Fact(_SMALL_COPY_SYNC_S, "s", "n/a",
                                 SRC_H200_LAB + " (8 B pinned H2D, one cudaMemcpy "
                                 "at a time, host clock: 7.3 us median)", True,
                                 "one small synchronous pinned host-to-GPU copy, "
                                 "end to end by the host clock: API call, driver "
                                 "submission, DMA and waiting for completion"),
    "cuda_api_call": Fact(_SMALL_COPY_SYNC_S - _SMALL_COPY_S, "s", "n/a",
                          "derived: pcie_small_copy_sync - pcie_small_copy ("
                          + SRC_H200_LAB + ")", True,
                          "what the host adds to a lone synchronous copy (API "
                          "call, submission, completion wait), CPU time per call"),
    "dma_setup_seed": Fact(7.5 * US, "s", "n/a",
                           "seed article 000 (5-10 us), relabelled as end-to-end "
                           "small-copy latency", True,
                           "what the seeds call 'DMA setup' (5-10 us); the "
                           "measured end-to-end small copy is pcie_small_copy_sync"),
    "gpudirect_rdma_one_way": Fact(4 * US, "s", "n/a", _OSU_GDR, True,
                                   "GPU to a GPU in another server by GPUDirect "
                                   "RDMA, one small message, one way (half a "
                                   "ping-pong through one switch)"),
    "ib_port": Fact(0.6 * US, "s", "n/a",
                    SRC_MLENG + " (IB latency table: EDR 0.5, HDR 0.6 us)", True,
                    "InfiniBand switch/port latency"),
    "rdma_small_one_way": Fact(1.5 * US, "s", "n/a",
                               "ib_send_lat one-way results (D. Potter, MSc "
                               "thesis, tables/mtu_performance.tex); see "
                               "docs/sources.md", True,
                               "small RDMA message host memory to host memory, "
                               "one way (1-2 us); no GPU involved"),
    "roce_small_one_way": Fact(5.5 * US, "s", "n/a",
                               "one published RoCE ib_send_lat report (5-6 us); "
                               "not re-checked", True,
                               "small RoCE message host memory to host memory, "
                               "one way (5-6 us, one report)"),
    "tcp_kernel_path": Fact(50 * US, "s", "n/a",
                            "seed article 000 (unsourced); measure it in the "
                            "chapter 5 lab", True,
                            "TCP through the kernel, tens of us"),
    "nccl_hop_nvlink": Fact(0.6 * US, "s", "n/a", SRC_NCCL_TUNING, False,
                            "NCCL per-hop planning latency, NVLink, Ring/LL"),
    "nccl_hop_pcie": Fact(1.0 * US, "s", "n/a", SRC_NCCL_TUNING, False,
                          "NCCL per-hop planning latency, PCIe, Ring/LL"),
    "nccl_hop_net": Fact(2.7 * US, "s", "n/a", SRC_NCCL_TUNING, False,
                         "NCCL per-hop planning latency, network, Ring/LL"),
}


def latency_s(name: str) -> float:
    """An indicative latency from the catalog, in seconds.

    >>> latency_s("nvlink_p2p")
    2e-06
    """
    return LATENCIES[check_choice(name, "name", LATENCIES)].value


# --- measured plateaus ------------------------------------------------------
_NCCL_PERF = "NVIDIA/nccl-tests:doc/PERFORMANCE.md (busbw definition); "
MEASURED: dict[str, Fact] = {
    "busbw_allreduce_8xA100": Fact(
        230 * GB, "bytes/s", "per direction",
        _NCCL_PERF + SRC_MLENG + " (all_reduce_perf, 8x A100: 229 GB/s at "
        "1 GiB, 235 at 16 GiB); " + SRC_NCCL_TESTS_ISSUE,
        note="measured busbw plateau at >= 1 GiB"),
    "busbw_allreduce_8xH100_ring": Fact(
        365 * GB, "bytes/s", "per direction",
        _NCCL_PERF + "NVIDIA/nccl issue #1442 (370 GB/s per direction); "
        "stas00/ml-engineering:network/benchmarks/results/all-reduce-8xH200.md "
        "(367.6 GB/s with SHARP off)", True,
        note="measured busbw plateau, Ring algorithm (360-370 GB/s)"),
    "busbw_allreduce_8xH100_nvls": Fact(
        478 * GB, "bytes/s", "per direction",
        _NCCL_PERF + "ZiyanIshani/vpbenchmarking:results/nccl/"
        "nccl_allreduce_20260224_223444.txt (479.7 at 8 GiB); "
        "NVIDIA/nccl-tests issue #272 (H200, 475)", True,
        note="measured busbw plateau with NVLS (475-480 GB/s); "
             "in-switch reduction, so busbw no longer equals wire bandwidth"),
    "h2d_pinned_pcie5": Fact(
        55 * GB, "bytes/s", "per direction",
        _H100_BWTEST + " (H100, CUDA bandwidthTest, peak 54.8 GB/s); "
        + SRC_H200_LAB + " (55.4 GB/s at 1 GiB)", True,
        note="pinned host-to-device copy on a PCIe Gen5 x16 host link "
             "(H100 and H200 agree)"),
    "pageable_over_pinned_x86": Fact(
        0.3, "ratio", "n/a",
        "rapidsai/dask-cuda PR #98 (5-6 vs 11-12 GB/s); "
        + SRC_H200_LAB + " (H2D 17.1 GB/s at 1 MiB = 0.35 of pinned, "
        "6.7 GB/s at 1 GiB = 0.12); "
        "vortex-data/vortex PR #7815 (GH200: about equal)", True,
        note="pageable copies reach roughly 0.1-0.5 of pinned on x86 hosts, "
             "less for large copies; measure it in the chapter 4 lab"),
    "h2d_pageable_h200_1MiB": Fact(
        17.1 * GB, "bytes/s", "per direction", SRC_H200_LAB + " (median of 7)",
        note="pageable host-to-device copy of 1 MiB on an H200, PCIe Gen5 x16"),
    "h2d_pageable_h200_1GiB": Fact(
        6.7 * GB, "bytes/s", "per direction", SRC_H200_LAB + " (median of 7)",
        note="pageable host-to-device copy of 1 GiB on an H200, PCIe Gen5 x16"),
}


# --- listing ---------------------------------------------------------------
def all_facts() -> list[tuple[str, float, str, str, str]]:
    """Every number of the catalog as rows (name, value, unit, direction, source)."""
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
    for name, rec in NICS.items():
        rows.append((f"{rec.family} {name} port", rec.bw_per_dir_bytes_per_s,
                     "bytes/s", "per direction", rec.source))
    for name, rec in SYSTEMS.items():
        rows.append((f"{name} NVSwitch chips", rec.nvswitches, "count", "n/a",
                     rec.source))
    for sm, fact in NCCL_LINK_BW.items():
        rows.append((f"NCCL NVLink planning bw SM{sm}", fact.value, fact.unit,
                     fact.direction, fact.source))
    for name, fact in {**LATENCIES, **MEASURED}.items():
        rows.append((name, fact.value, fact.unit, fact.direction, fact.source))
    # NCCL's tuning constants and the model's fitted parameters are defined
    # further down this module; list them too, so every number shows up.
    for table in ("NCCL_TUNING", "CALIBRATION", "CPU_LINKS", "PCIE_PATHS", "NETWORK"):
        for name, fact in globals().get(table, {}).items():
            rows.append((f"{table.lower()}: {name}", fact.value, fact.unit,
                         fact.direction, fact.source))
    return rows


def catalog_table(names=None) -> str:
    """The catalog as a Markdown table, units and direction in every row.

    ``names`` picks rows by quantity name (in that order); default all.
    """
    from .units import format_bandwidth, format_time

    rows = all_facts()
    if names is not None:
        by_name = {row[0]: row for row in rows}
        for n in names:
            check_choice(n, "names", by_name)
        rows = [by_name[n] for n in names]
    lines = ["| quantity | value | direction | source |", "|---|---|---|---|"]
    for name, value, unit, direction, source in rows:
        if unit == "bytes/s":
            shown = format_bandwidth(value)
        elif unit == "s":
            shown = format_time(value)
        else:
            shown = f"{value:g}"
        lines.append(f"| {name} | {shown} | {direction} | {source} |")
    return "\n".join(lines)


def _catalog_main(argv=None) -> int:
    """``python -m course_lib catalog``: print the catalog as Markdown."""
    print(catalog_table())
    return 0


# --- compute and memory per GPU (chapters 8-10) ------------------------------
# Added for the scenario chapters: a step's compute time needs a peak FLOP
# rate and, for token-by-token inference, the HBM bandwidth that reads the
# weights.  Dense (no sparsity) tensor-core peaks.
_PERF_SRC = {
    "V100": "NVIDIA Tesla V100 datasheet (SXM2: 125 TFLOPS FP16 tensor, 900 GB/s HBM2)",
    "A100": "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB: 312 TFLOPS BF16 "
            "dense, 2,039 GB/s HBM2e)",
    "H100": "NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989 TFLOPS BF16 dense, "
            "3.35 TB/s HBM3)",
    "H200": "NVIDIA H200 Tensor Core GPU datasheet (SXM: 989 TFLOPS BF16 dense, "
            "4.8 TB/s HBM3e)",
}
GPU_PEAK_FLOPS: dict[str, Fact] = {
    "V100": Fact(125e12, "FLOP/s", "n/a", _PERF_SRC["V100"], note="FP16 tensor, dense"),
    "A100": Fact(312e12, "FLOP/s", "n/a", _PERF_SRC["A100"], note="BF16 tensor, dense"),
    "H100": Fact(989e12, "FLOP/s", "n/a", _PERF_SRC["H100"], note="BF16 tensor, dense"),
    "H200": Fact(989e12, "FLOP/s", "n/a", _PERF_SRC["H200"], note="BF16 tensor, dense"),
}
GPU_HBM_BW: dict[str, Fact] = {
    "V100": Fact(900 * GB, "bytes/s", "n/a", _PERF_SRC["V100"],
                 note="HBM2 read+write bandwidth of the GPU's own memory"),
    "A100": Fact(2039 * GB, "bytes/s", "n/a", _PERF_SRC["A100"],
                 note="HBM2e, 80 GB SXM4"),
    "H100": Fact(3350 * GB, "bytes/s", "n/a", _PERF_SRC["H100"], note="HBM3, SXM5"),
    "H200": Fact(4800 * GB, "bytes/s", "n/a", _PERF_SRC["H200"], note="HBM3e"),
}


def gpu_peak_flops_per_s(name: str) -> float:
    """Dense 16-bit tensor-core peak of a GPU, FLOP/s (chapters 9-10).

    >>> gpu_peak_flops_per_s("A100") / 1e12
    312.0
    """
    return GPU_PEAK_FLOPS[check_choice(gpu(name).name, "name", GPU_PEAK_FLOPS)].value


def hbm_bw_bytes_per_s(name: str) -> float:
    """Bandwidth of a GPU's own memory (HBM), bytes/s (chapter 10).

    >>> hbm_bw_bytes_per_s("H100") / 1e9
    3350.0
    """
    return GPU_HBM_BW[check_choice(gpu(name).name, "name", GPU_HBM_BW)].value


# --- what comes next (chapter 11) ---------------------------------------------
FUTURE_LINKS: dict[str, Fact] = {
    "nvlink_c2c_grace_hopper": Fact(
        900 * GB, "bytes/s", "bidirectional",
        "NVIDIA Grace Hopper Superchip Architecture whitepaper; NVIDIA GH200 "
        "datasheet ('900 GB/s coherent interface, 7x faster than PCIe Gen5')",
        note="NVLink-C2C between Grace CPU and Hopper GPU; 450 GB/s each way"),
    "ualink_lane_rate": Fact(
        gbit_per_s(200), "bytes/s", "per direction",
        "UALink Consortium, UALink 200G 1.0 Specification (ratified April 2025); "
        "ualinkconsortium.org FAQ",
        note="200 Gb/s per lane, open scale-up standard"),
    "ualink_max_pod_accelerators": Fact(
        1024, "count", "n/a",
        "UALink Consortium, UALink 200G 1.0 Specification; ualinkconsortium.org FAQ",
        note="accelerators in one UALink pod (scale-up domain)"),
    "nvlink5_max_domain_gpus": Fact(
        576, "count", "n/a",
        "NVIDIA Base Command Manager manual, 'NVLink Technology' chapter "
        "(GB200/GB300: up to 576 GPUs in one NVLink domain)",
        note="largest NVLink 5 domain NVIDIA quotes via the NVLink Switch"),
}

__all__ += ["GPU_PEAK_FLOPS", "GPU_HBM_BW", "FUTURE_LINKS",
            "gpu_peak_flops_per_s", "hbm_bw_bytes_per_s"]


# --- NCCL's tuning model, and the constants fitted on top of it (chapter 7) ----
# Read from NVIDIA/nccl src/graph/tuning.cc at tag v2.20.3 (commit b6475625,
# makefiles/version.mk: 2.20.3).  Latencies in seconds, per protocol; "base" is
# NCCL's fixed cost of one collective, "hop_*" the cost added per ring step
# (or per tree level) on that kind of hop.  These are NCCL's *planning*
# numbers: measured small-message times are 2-3x higher (see CALIBRATION).
SRC_NCCL_TUNING_V220 = "NVIDIA/nccl:src/graph/tuning.cc (v2.20.3)"
_NT = SRC_NCCL_TUNING_V220
NCCL_TUNING: dict[str, Fact] = {
    # baseLat[algorithm][protocol]
    "ring_ll_base": Fact(6.6 * US, "s", "n/a", _NT, note="baseLat Ring/LL"),
    "ring_ll128_base": Fact(14.0 * US, "s", "n/a", _NT, note="baseLat Ring/LL128"),
    "ring_simple_base": Fact(8.4 * US, "s", "n/a", _NT, note="baseLat Ring/Simple"),
    "tree_ll_base": Fact(6.8 * US, "s", "n/a", _NT, note="baseLat Tree/LL"),
    "tree_ll128_base": Fact(14.0 * US, "s", "n/a", _NT, note="baseLat Tree/LL128"),
    "tree_simple_base": Fact(0.0, "s", "n/a", _NT, note="baseLat Tree/Simple"),
    # hwLat[hw][algorithm][protocol], per hop
    "ring_ll_hop_nvlink": Fact(0.6 * US, "s", "n/a", _NT, note="hwLat NVLINK Ring/LL"),
    "ring_ll128_hop_nvlink": Fact(1.9 * US, "s", "n/a", _NT, note="hwLat NVLINK Ring/LL128"),
    "ring_simple_hop_nvlink": Fact(3.4 * US, "s", "n/a", _NT, note="hwLat NVLINK Ring/Simple"),
    "ring_ll_hop_pcie": Fact(1.0 * US, "s", "n/a", _NT, note="hwLat PCI Ring/LL"),
    "ring_ll128_hop_pcie": Fact(2.5 * US, "s", "n/a", _NT, note="hwLat PCI Ring/LL128"),
    "ring_simple_hop_pcie": Fact(5.7 * US, "s", "n/a", _NT, note="hwLat PCI Ring/Simple"),
    "ring_ll_hop_net": Fact(2.7 * US, "s", "n/a", _NT, note="hwLat NET Ring/LL"),
    "ring_ll128_hop_net": Fact(4.0 * US, "s", "n/a", _NT, note="hwLat NET Ring/LL128"),
    "ring_simple_hop_net": Fact(14.0 * US, "s", "n/a", _NT, note="hwLat NET Ring/Simple"),
    "tree_ll_hop_nvlink": Fact(0.6 * US, "s", "n/a", _NT, note="hwLat NVLINK Tree/LL"),
    "tree_ll128_hop_nvlink": Fact(1.25 * US, "s", "n/a", _NT, note="hwLat NVLINK Tree/LL128"),
    "tree_simple_hop_nvlink": Fact(28.0 * US, "s", "n/a", _NT,
                                   note="hwLat NVLINK Tree/Simple (a 256 kB chunk)"),
    "tree_ll_hop_pcie": Fact(1.0 * US, "s", "n/a", _NT, note="hwLat PCI Tree/LL"),
    "tree_ll128_hop_pcie": Fact(1.9 * US, "s", "n/a", _NT, note="hwLat PCI Tree/LL128"),
    "tree_simple_hop_pcie": Fact(28.0 * US, "s", "n/a", _NT, note="hwLat PCI Tree/Simple"),
    "tree_ll_hop_net": Fact(5.0 * US, "s", "n/a", _NT, note="hwLat NET Tree/LL"),
    "tree_ll128_hop_net": Fact(8.5 * US, "s", "n/a", _NT, note="hwLat NET Tree/LL128"),
    "tree_simple_hop_net": Fact(28.0 * US, "s", "n/a", _NT, note="hwLat NET Tree/Simple"),
    "nvls_simple_hop_nvlink": Fact(23.0 * US, "s", "n/a", _NT,
                                   note="hwLat NVLINK NVLS/Simple (NCCL's estimate; "
                                        "measured much lower, see CALIBRATION)"),
    "nvls_simple_hop_net": Fact(18.0 * US, "s", "n/a", _NT, note="hwLat NET NVLS/Simple"),
    # protocol efficiencies (fraction of link bandwidth carrying payload)
    "ll_efficiency": Fact(0.25, "ratio", "n/a", _NT,
                          note="Ring/LL busBw x 1/4 (8-byte stores carrying 4 bytes "
                               "of data + flag, and fewer threads)"),
    "ll128_efficiency": Fact(0.92, "ratio", "n/a", _NT,
                             note="Ring/LL128 busBw x 0.92 (120 of 128 bytes are data)"),
    "tree_efficiency": Fact(0.92, "ratio", "n/a", _NT, note="Tree busBw x 0.92"),
    "ll_max_bw_sm80": Fact(87.7 * GB, "bytes/s", "per direction", _NT,
                           note="llMaxBws Ampere/Hopper single node: LL cap"),
    "ll_max_bw_sm70": Fact(39.0 * GB, "bytes/s", "per direction", _NT,
                           note="llMaxBws Volta single node: LL cap"),
    "max_channels": Fact(32, "count", "n/a",
                         "NVIDIA/nccl:src/include/device.h MAXCHANNELS (v2.20.3)",
                         note="most rings/trees NCCL runs side by side"),
}


def nccl_tuning(name: str) -> float:
    """One constant of NCCL's tuning model (v2.20.3), SI units.

    >>> round(nccl_tuning("ring_simple_hop_nvlink") * 1e6, 1)
    3.4
    """
    return NCCL_TUNING[check_choice(name, "name", NCCL_TUNING)].value


# Fitted on ../shared/data/calibration_measurements.csv (repo copy:
# data/calibration_measurements.csv) by benchmarks/bench_calibration.py --fit:
# one value each, shared by every machine, chosen to minimise the mean
# |log(predicted/measured time)| over the 8x A100 and 8x H100 AllReduce curves
# (and, for the PCIe numbers, the H100 H2D pinned curve).
SRC_CALIB = "fitted to ../shared/data/calibration_measurements.csv"
CALIBRATION: dict[str, Fact] = {
    "launch_s": Fact(
        28 * US, "s", "n/a",
        SRC_CALIB + " (8x A100 and 8x H100 AllReduce, sizes <= 64 kB)",
        note="fixed cost of one collective that NCCL's model leaves out: kernel "
             "launch, argument set-up and the start/end synchronisation of all "
             "ranks; added to NCCL's base + per-hop latencies"),
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
    "net_efficiency": Fact(
        0.96, "ratio", "n/a",
        "indicative: ib_write_bw reaches about 96-97% of the port rate on HDR/NDR "
        "(NVIDIA perftest reports; " + SRC_MLENG + ")", True,
        note="payload fraction of a NIC port's line rate for large RDMA messages"),
}


def calibration(name: str) -> float:
    """One fitted constant of the prediction model, SI units.

    >>> calibration("launch_s") * 1e6
    28.0
    """
    return CALIBRATION[check_choice(name, "name", CALIBRATION)].value


__all__ += ["NCCL_TUNING", "CALIBRATION", "nccl_tuning", "calibration",
            "SRC_NCCL_TUNING_V220"]


# --- inside the server and between servers: sockets, PCIe paths, cloud networks --
# (chapter 7, "Predictions that hold on real clusters"; issue 13)
#
# How NCCL rates the link between the two CPU sockets of a server (the path a
# GPU-to-GPU copy takes when ``nvidia-smi topo -m`` prints SYS), per
# direction, and how it charges a PCIe peer copy that turns round in an Intel
# root complex.  Read from NVIDIA/nccl src/graph/topo.h (master, 2025:
# BDW_QPI_BW, SKL_QPI_BW, SRP_QPI_BW, ERP_QPI_BW, AMD_ZEN12/ZEN34/ZEN5_BW,
# P9_BW, ARM_BW, INTEL_P2P_OVERHEAD).  These are NCCL's planning numbers, not
# the marketing link rates (a Sapphire Rapids socket pair has 4 UPI 2.0 links
# at 16 GT/s), because what a ring gets through the sockets is what NCCL plans.
SRC_NCCL_TOPO_H = ("NVIDIA/nccl:src/graph/topo.h (master 2025; *_QPI_BW, "
                   "AMD_ZEN*_BW, P9_BW, ARM_BW, INTEL_P2P_OVERHEAD)")
CPU_LINKS: dict[str, Fact] = {
    "intel-bdw": Fact(6.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                      note="BDW_QPI_BW: Broadwell QPI between sockets"),
    "intel-skl": Fact(10.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                      note="SKL_QPI_BW: Skylake/Cascade/Ice Lake UPI"),
    "intel-spr": Fact(22.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                      note="SRP_QPI_BW: Sapphire Rapids UPI 2.0"),
    "intel-emr": Fact(40.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                      note="ERP_QPI_BW: Emerald Rapids UPI"),
    "amd-zen2": Fact(16.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                     note="AMD_ZEN12_BW: Rome (Zen 1/2) Infinity Fabric between sockets"),
    "amd-zen3": Fact(24.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                     note="AMD_ZEN34_BW: Milan/Genoa (Zen 3/4) Infinity Fabric"),
    "amd-zen5": Fact(32.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                     note="AMD_ZEN5_BW: Turin (Zen 5) Infinity Fabric"),
    "power9": Fact(32.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                   note="P9_BW: POWER9 X-bus"),
    "arm": Fact(6.0 * GB, "bytes/s", "per direction", SRC_NCCL_TOPO_H,
                note="ARM_BW: generic Arm server"),
}
#: NCCL's charge for a PCIe peer copy that turns round in an Intel root complex
#: (the CPU splits it into 64-byte TLPs): the link counts 6/5 as busy.
PCIE_PATHS: dict[str, Fact] = {
    "intel_p2p_overhead": Fact(1.2, "ratio", "n/a", SRC_NCCL_TOPO_H,
                               note="INTEL_P2P_OVERHEAD(bw) = bw * 6 / 5"),
}


def cpu_link_names() -> list[str]:
    """Names accepted for a server's CPU (socket-to-socket link)."""
    return list(CPU_LINKS)


def cpu_link_bw_bytes_per_s(cpu: str) -> float:
    """NCCL's planning bandwidth between the two sockets of ``cpu``, per direction.

    >>> cpu_link_bw_bytes_per_s("intel-spr") / 1e9
    22.0
    """
    return CPU_LINKS[check_choice(cpu, "cpu", CPU_LINKS)].value


# Cloud network ports.  A node's rate is ports x port rate (per direction);
# what NCCL gets out of it is the network kind's efficiency below.
_EFA_SRC = ("AWS EC2 accelerated computing instance types (p3dn.24xlarge: 1x "
            "100 Gb/s EFA; p4d.24xlarge: 4x 100 Gb/s EFA; p5.48xlarge: 32x 100 "
            "Gb/s EFA); aws-samples/aws-efa-eks:README.md (p4d: 4x100 Gbps EFA)")
_TCPX_SRC = ("Google Cloud GPU machine types (a3-highgpu-8g: 4x 200 Gb/s GPU NICs, "
             "GPUDirect-TCPX; a3-megagpu-8g: 8x 200 Gb/s GPU NICs, "
             "GPUDirect-TCPXO); NVIDIA AI Cluster Runtime docs, 'GKE TCPXO "
             "Networking Prerequisites' (8 GPU NICs per a3-megagpu-8g)")
NICS.update({
    "EFA-100": NIC("EFA-100", "EFA", 100.0, _EFA_SRC),
    "EFA-200": NIC("EFA-200", "EFA", 200.0, _EFA_SRC + "; p5en/p6: 200-400 Gb/s EFA ports"),
    "EFA-400": NIC("EFA-400", "EFA", 400.0, _EFA_SRC + "; p6-b200: 8x 400 Gb/s EFAv4"),
    "TCPX-200": NIC("TCPX-200", "TCPX", 200.0, _TCPX_SRC),
    "TCPXO-200": NIC("TCPXO-200", "TCPXO", 200.0, _TCPX_SRC),
})

# Network kinds: what fraction of the port rate NCCL's large messages carry
# (efficiency) and what each network step costs on top of NCCL's own
# per-hop estimate (hwLat NET, which is an InfiniBand number).
_NET_SRC_IB = ("indicative: ib_write_bw reaches about 96-97% of the port rate on "
               "HDR/NDR (NVIDIA perftest reports; " + SRC_MLENG + ")")
NETWORK: dict[str, Fact] = {
    "InfiniBand_efficiency": Fact(0.96, "ratio", "n/a", _NET_SRC_IB, True,
                                  note="payload fraction of an IB port for large RDMA writes"),
    "InfiniBand_hop_s": Fact(0.0, "s", "n/a", SRC_NCCL_TUNING_V220,
                             note="NCCL's hwLat NET is an InfiniBand figure: nothing on top"),
    "RoCEv2_efficiency": Fact(0.96, "ratio", "n/a",
                              "indicative: RoCEv2 carries the same RDMA verbs as IB over "
                              "Ethernet; NVIDIA/nccl issue #2409 reports perftest at 392 of "
                              "400 Gb/s on ConnectX-7 RoCE", True,
                              note="same payload fraction as InfiniBand"),
    "RoCEv2_hop_s": Fact(0.0, "s", "n/a", "indicative: NCCL drives RoCE through the same "
                         "IB verbs transport (" + SRC_NCCL_TUNING_V220 + ")", True,
                         note="no extra per-step cost over NCCL's NET estimate"),
    "EFA_efficiency": Fact(0.67, "ratio", "n/a",
                           "indicative: aws/aws-ofi-nccl issue #19 (EFA throughput about "
                           "70% of an on-premises InfiniBand cluster's) x 0.96", True,
                           note="EFA's SRD transport through the aws-ofi-nccl plugin"),
    "EFA_hop_s": Fact(0.0, "s", "n/a",
                      "fitted: dstackai/dstack pull request #3961 (2x p6-b200, 16 ranks, "
                      "all_reduce_perf floor 50.6 us at 8 B; the model without an extra "
                      "cost gives 48-53 us), data/validation split=fit", True,
                      note="modern EFA adds nothing measurable to NCCL's NET estimate "
                           "for small messages"),
    "TCPX_efficiency": Fact(0.90, "ratio", "n/a",
                            "indicative: NVIDIA AI Cluster Runtime docs, 'GKE TCPXO Networking "
                            "Prerequisites' (~340 GB/s AllReduce busbw on a3-megagpu-8g, i.e. "
                            "algbw ~180 of the 8x 25 GB/s ports over two nodes)", True,
                            note="GPUDirect-TCPX(O): TCP with payloads kept in GPU memory"),
    "TCPX_hop_s": Fact(25e-6, "s", "n/a",
                       "indicative: one kernel TCP request/response round trip in a "
                       "cloud zone is some tens of microseconds (not measured here)", True,
                       note="each network step of a TCP-based transport waits about one "
                            "TCP round trip more than an RDMA one"),
    "TCPXO_efficiency": Fact(0.90, "ratio", "n/a",
                             "indicative: NVIDIA AI Cluster Runtime docs, 'GKE TCPXO "
                             "Networking Prerequisites' (~340 GB/s busbw vs ~4 GB/s plain "
                             "TCP on a3-megagpu-8g)", True,
                             note="TCPXO offloads the TCP work to the NIC"),
    "TCPXO_hop_s": Fact(25e-6, "s", "n/a",
                        "indicative: as TCPX (not measured here)", True,
                        note="assumed equal to TCPX"),
}
#: Network families of ``NICS`` and their NETWORK keys.
NETWORK_KINDS = ("InfiniBand", "RoCEv2", "EFA", "TCPX", "TCPXO")


def network_efficiency(family: str) -> float:
    """Payload fraction of a port's line rate for a network kind.

    >>> network_efficiency("EFA")
    0.67
    """
    family = check_choice(family, "family", NETWORK_KINDS)
    return NETWORK[f"{family}_efficiency"].value


def network_hop_s(family: str) -> float:
    """Extra cost of one network step of a network kind, on top of NCCL's NET latency.

    >>> network_hop_s("TCPXO") * 1e6
    25.0
    """
    family = check_choice(family, "family", NETWORK_KINDS)
    return NETWORK[f"{family}_hop_s"].value


__all__ += ["CPU_LINKS", "PCIE_PATHS", "NETWORK", "NETWORK_KINDS",
            "cpu_link_names", "cpu_link_bw_bytes_per_s", "network_efficiency",
            "network_hop_s"]

# NCCL's per-step latency of the NVLS_TREE algorithm across nodes (v2.20.3
# hwLat[NET][NVLS_TREE][Simple]); the other NCCL_TUNING entries are above.
NCCL_TUNING.update({
    "nvls_tree_simple_hop_net": Fact(14.0 * US, "s", "n/a", SRC_NCCL_TUNING_V220,
                                     note="hwLat NET NVLSTree/Simple"),
})

# How each network kind's NCCL is set up in practice.  "chooser": "nccl" --
# NCCL's own estimate picks the algorithm and protocol; "tuner" -- the cloud
# ships a tuner plugin whose choices were measured on that fabric, so the
# fastest really runs.  "algorithms"/"protocols": what the provider's required
# NCCL environment leaves enabled (None: all).
NETWORK_PROFILES: dict[str, dict] = {
    "InfiniBand": {"chooser": "nccl", "algorithms": None, "protocols": None,
                   "source": SRC_NCCL_TUNING_V220},
    "RoCEv2": {"chooser": "nccl", "algorithms": None, "protocols": None,
               "source": SRC_NCCL_TUNING_V220},
    "EFA": {"chooser": "tuner", "algorithms": None, "protocols": None,
            "source": "aws/aws-ofi-nccl:src/tuner/nccl_ofi_tuner.c (the plugin's "
                      "tuner replaces NCCL's algorithm/protocol choice on EFA)"},
    "TCPX": {"chooser": "tuner", "algorithms": ("ring", "tree"), "protocols": ("simple",),
             "source": "Google Cloud GPUDirect-TCPX(O) NCCL profile (nccl-env-profile.sh: "
                       "NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple, NCCL_NVLS_ENABLE=0, "
                       "NCCL_TUNER_PLUGIN=libnccl-tuner.so; the guest config checker "
                       "enforces NCCL_ALGO and NCCL_PROTO)"},
    "TCPXO": {"chooser": "tuner", "algorithms": ("ring", "tree"), "protocols": ("simple",),
              "source": "Google Cloud GPUDirect-TCPXO NCCL profile (as TCPX; "
                        "a3plus_tuner_config.textproto)"},
}


def network_profile(family: str) -> dict:
    """How NCCL runs on a network kind: ``chooser``, ``algorithms``, ``protocols``.

    >>> network_profile("TCPXO")["protocols"]
    ('simple',)
    """
    return NETWORK_PROFILES[check_choice(family, "family", NETWORK_KINDS)]


__all__ += ["NETWORK_PROFILES", "network_profile"]
