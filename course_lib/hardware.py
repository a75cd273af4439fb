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
* ``NVIDIA/nccl:src/graph/topo.h`` and ``src/graph/tuning.cc`` -- NCCL's own
  planning constants (what a link really delivers after protocol overhead).
* ``NVIDIA/nccl-tests:doc/PERFORMANCE.md`` -- algbw and busbw.
* NVIDIA product documents (DGX-1, DGX-2, DGX A100, DGX H100, GB200 NVL72
  user guides and datasheets) and the PCI-SIG base specifications.

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

from dataclasses import dataclass, field

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
SRC_NCCL_TOPO = "NVIDIA/nccl:src/graph/topo.h (v2.23-2.27)"
SRC_NCCL_TUNING = "NVIDIA/nccl:src/graph/tuning.cc (v2.23-2.27)"
SRC_NCCL_TESTS_ISSUE = "NVIDIA/nccl-tests issue #149"
SRC_PCISIG = ("PCI-SIG, PCI Express Base Specification 3.0/4.0/5.0/6.0 "
              "(transfer rate and encoding); table in " + SRC_MLENG)
SRC_IBTA = ("InfiniBand Trade Association roadmap (EDR/HDR/NDR/XDR port rates); "
            "table in " + SRC_MLENG)


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


_NVLINK_LANES_SRC = (SRC_MLENG + "; " + SRC_SCALING + "; " + SRC_NCCL_TESTS_ISSUE
                     + "; lane counts and rates: NVIDIA P100/V100/A100/H100 "
                     "architecture whitepapers and the Blackwell technical brief")
#: NVLink generations 1-5.  Lane rates are the signalling rate per lane and
#: direction: NVLink1 8 x 20 Gb/s, NVLink2 8 x 25 Gb/s, NVLink3 4 x 50 Gb/s,
#: NVLink4 2 x 100 Gb/s (PAM4), NVLink5 2 x 200 Gb/s.
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
    6: PCIeGeneration(6, 64.0, 242 / 256, None, SRC_PCISIG),
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


_GPU_SRC = SRC_MLENG + "; " + SRC_SCALING + "; NVIDIA product datasheets"
GPUS: dict[str, GPU] = {
    "P100": GPU("P100", 1, 4, 3, 60, _GPU_SRC, "SXM2; NVLink 1"),
    "V100": GPU("V100", 2, 6, 3, 70, _GPU_SRC, "SXM2; NVLink 2"),
    "A100": GPU("A100", 3, 12, 4, 80, _GPU_SRC, "SXM4; NVLink 3"),
    "H100": GPU("H100", 4, 18, 5, 90, _GPU_SRC, "SXM5; NVLink 4"),
    "H200": GPU("H200", 4, 18, 5, 90, _GPU_SRC,
                "SXM; same NVLink 4 as H100, more and faster HBM"),
    "B200": GPU("B200", 5, 18, 6, 100, _GPU_SRC,
                "SXM; NVLink 5; host link PCIe Gen6 x16 on HGX B200"),
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
        "NVIDIA DGX-1 System Architecture whitepaper (WP-08437); " + SRC_MLENG,
        "no switch: each GPU links to 4 (P100) or 6 (V100, some doubled) "
        "others; some pairs have no direct link"),
    "DGX-2": NVSwitchSystem(
        "DGX-2", "V100", 16, 12, "nvswitch", False,
        "NVIDIA DGX-2 System User Guide / datasheet: two baseboards of 8 GPUs "
        "and 6 NVSwitches each",
        "12 NVSwitches (2 x 6), not 6 as one seed article says"),
    "DGX A100": NVSwitchSystem(
        "DGX A100", "A100", 8, 6, "nvswitch", False,
        "NVIDIA DGX A100 System Architecture whitepaper; DGX A100 User Guide"),
    "DGX H100": NVSwitchSystem(
        "DGX H100", "H100", 8, 4, "nvswitch", True,
        "NVIDIA DGX H100 User Guide; " + SRC_NCCL_TUNING + " (NVLS)",
        "GPU links split 5+4+4+5 over the 4 switches; NVLink SHARP (NVLS) "
        "reduces in the switch"),
    "GB200 NVL72": NVSwitchSystem(
        "GB200 NVL72", "B200", 72, 18, "nvswitch", True,
        "NVIDIA GB200 NVL72 product page and datasheet",
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
#: SM90 20.6, SM100 40.1 GB/s).
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
_LAT_SRC = "../shared/FACTS.md latency table; "
LATENCIES: dict[str, Fact] = {
    "nvlink_p2p": Fact(2 * US, "s", "n/a", _LAT_SRC + SRC_MLENG, True,
                       "GPU-to-GPU peer copy over NVLink, small message"),
    "pcie_staged_p2p": Fact(15 * US, "s", "n/a", _LAT_SRC + SRC_MLENG, True,
                            "GPU-to-GPU staged through host memory over PCIe "
                            "(11-20 us reported)"),
    "pcie_small_copy": Fact(2.5 * US, "s", "n/a", _LAT_SRC +
                            "NVIDIA CUDA samples bandwidthTest on H100", True,
                            "small pinned host-to-device copy, end to end"),
    "cuda_api_call": Fact(6 * US, "s", "n/a", _LAT_SRC, True,
                          "per-call API overhead (5-7 us reported)"),
    "dma_setup_seed": Fact(7.5 * US, "s", "n/a",
                           "seed article 000 (5-10 us), relabelled as end-to-end "
                           "small-copy latency", True,
                           "what the seeds call 'DMA setup'"),
    "ib_port": Fact(0.6 * US, "s", "n/a", _LAT_SRC + SRC_IBTA, True,
                    "InfiniBand switch/port latency"),
    "rdma_small_one_way": Fact(1.5 * US, "s", "n/a", _LAT_SRC + SRC_MLENG, True,
                               "small RDMA message, one way (1-2 us)"),
    "roce_small_one_way": Fact(5.5 * US, "s", "n/a", _LAT_SRC, True,
                               "small RoCE message, one way (5-6 us, one report)"),
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
        _NCCL_PERF + SRC_MLENG + " (nccl-tests all_reduce_perf, 8x A100 node)",
        note="measured busbw plateau at >= 1 GiB"),
    "busbw_allreduce_8xH100_ring": Fact(
        365 * GB, "bytes/s", "per direction",
        _NCCL_PERF + SRC_MLENG, True,
        note="measured busbw plateau, Ring algorithm (360-370 GB/s)"),
    "busbw_allreduce_8xH100_nvls": Fact(
        478 * GB, "bytes/s", "per direction",
        _NCCL_PERF + "ZiyanIshani/vpbenchmarking:results/nccl/"
        "nccl_allreduce_20260224_223444.txt", True,
        note="measured busbw plateau with NVLS (475-480 GB/s); "
             "in-switch reduction, so busbw no longer equals wire bandwidth"),
    "h2d_pinned_pcie5": Fact(
        55 * GB, "bytes/s", "per direction",
        "ZiyanIshani/vpbenchmarking:results/stream_nvbench/"
        "bandwidth_h2d_d2h_20260225_183119.txt (CUDA bandwidthTest)", True,
        note="pinned host-to-device copy on an H100 PCIe Gen5 host link"),
    "pageable_over_pinned_x86": Fact(
        0.3, "ratio", "n/a", _LAT_SRC + SRC_MLENG, True,
        note="pageable copies reach 0.2-0.45 of pinned on x86 hosts"),
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
    return rows


def catalog_table() -> str:
    """The catalog as a Markdown table, units and direction in every row."""
    from .units import format_bandwidth, format_time

    lines = ["| quantity | value | direction | source |", "|---|---|---|---|"]
    for name, value, unit, direction, source in all_facts():
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
