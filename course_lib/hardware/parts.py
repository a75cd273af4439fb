"""The parts: NVLink and PCIe generations, GPUs (links, compute, memory), NICs,
NVSwitch systems, the links between CPU sockets, and the links to come.

Sources are named by repository and path, or by document title (see
:mod:`course_lib.hardware.facts`); every number is traced in
``docs/sources.md``.  Taught in chapter 2 (NVLink), 3 (PCIe), 5 (InfiniBand
and RoCE), 7 (sockets and cloud networks), 9-10 (compute and memory) and 11
(what comes next).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import GB, check_choice, check_int, gbit_per_s
from .facts import (SRC_CUDA_CC, SRC_IBTA, SRC_MLCOMMONS, SRC_MLENG,
                    SRC_NCCL_TESTS_ISSUE, SRC_NCCL_TOPO_H, SRC_NCCL_TUNING,
                    SRC_PCISIG, SRC_SCALING, Fact)
from .nccl import NCCL_LINK_BW


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
# Cloud network ports.  A node's rate is ports x port rate (per direction);
# what NCCL gets out of it is the network kind's efficiency
# (:mod:`course_lib.hardware.networks`).
_EFA_SRC = ("AWS EC2 accelerated computing instance types (p3dn.24xlarge: 1x "
            "100 Gb/s EFA; p4d.24xlarge: 4x 100 Gb/s EFA; p5.48xlarge: 32x 100 "
            "Gb/s EFA); aws-samples/aws-efa-eks:README.md (p4d: 4x100 Gbps EFA)")
_TCPX_SRC = ("Google Cloud GPU machine types (a3-highgpu-8g: 4x 200 Gb/s GPU NICs, "
             "GPUDirect-TCPX; a3-megagpu-8g: 8x 200 Gb/s GPU NICs, "
             "GPUDirect-TCPXO); NVIDIA AI Cluster Runtime docs, 'GKE TCPXO "
             "Networking Prerequisites' (8 GPU NICs per a3-megagpu-8g)")
NICS: dict[str, NIC] = {
    "EDR": NIC("EDR", "InfiniBand", 100.0, SRC_IBTA),
    "HDR": NIC("HDR", "InfiniBand", 200.0, SRC_IBTA),
    "NDR": NIC("NDR", "InfiniBand", 400.0, SRC_IBTA),
    "XDR": NIC("XDR", "InfiniBand", 800.0, SRC_IBTA),
    "RoCE-100": NIC("RoCE-100", "RoCEv2", 100.0, _ROCE_SRC),
    "RoCE-200": NIC("RoCE-200", "RoCEv2", 200.0, _ROCE_SRC),
    "RoCE-400": NIC("RoCE-400", "RoCEv2", 400.0, _ROCE_SRC),
    "EFA-100": NIC("EFA-100", "EFA", 100.0, _EFA_SRC),
    "EFA-200": NIC("EFA-200", "EFA", 200.0, _EFA_SRC + "; p5en/p6: 200-400 Gb/s EFA ports"),
    "EFA-400": NIC("EFA-400", "EFA", 400.0, _EFA_SRC + "; p6-b200: 8x 400 Gb/s EFAv4"),
    "TCPX-200": NIC("TCPX-200", "TCPX", 200.0, _TCPX_SRC),
    "TCPXO-200": NIC("TCPXO-200", "TCPXO", 200.0, _TCPX_SRC),
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
        "no switch: each GPU has 4 (P100) or 6 (V100) links, to 4 of the 7 "
        "others (two of a V100's pairs doubled); 12 of the 28 pairs have no "
        "direct link"),
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


# --- inside the server: the link between CPU sockets, PCIe paths ------------
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
#: A GPU's memory is one bus that reads and writes share (half duplex): its
#: peak is listed "per direction" because reads alone -- the weights a decode
#: step streams -- can use all of it; reads and writes together share it.
GPU_HBM_BW: dict[str, Fact] = {
    "V100": Fact(900 * GB, "bytes/s", "per direction", _PERF_SRC["V100"],
                 note="HBM2 peak of the GPU's own memory, shared by reads and writes"),
    "A100": Fact(2039 * GB, "bytes/s", "per direction", _PERF_SRC["A100"],
                 note="HBM2e, 80 GB SXM4"),
    "H100": Fact(3350 * GB, "bytes/s", "per direction", _PERF_SRC["H100"],
                 note="HBM3, SXM5"),
    "H200": Fact(4800 * GB, "bytes/s", "per direction", _PERF_SRC["H200"],
                 note="HBM3e"),
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

