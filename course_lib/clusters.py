"""The machine: a GPU node or a cluster of identical nodes, and the rates NCCL plans on it.

:func:`cluster` describes a machine (GPU model, the fabric inside a node,
nodes, NICs, the host's sockets and PCIe paths) and returns a
:class:`Cluster`.  The Cluster is the one home of the *calibrated per-link
rates*: what NCCL plans for one NVLink (:meth:`Cluster.nvlink_bytes_per_s`),
for a GPU's PCIe link (:meth:`Cluster.pcie_planning_bytes_per_s`,
:meth:`Cluster.pcie_dma_bytes_per_s`), for one ring hop by its
``nvidia-smi topo -m`` word (:meth:`Cluster.hop_bw_bytes_per_s`) and for one
NIC (:meth:`Cluster.nic_bw_bytes_per_s`).  Both the predictor
(:mod:`course_lib.predict`) and the simulator's calibrated roads
(:meth:`course_lib.sim.Network.from_cluster`) read them from here.

:func:`cluster_from_topo` builds a Cluster from a node's ``nvidia-smi topo -m``
text or NCCL's topology XML; :func:`cluster_from_spec` from the ``cluster``
column of ``course_lib/data/validation/nccl_tests_public.csv``.

Chapter 7 (collectives) and 8 (contention).

The module is ``clusters`` (plural) because ``course_lib.cluster`` is the
function :func:`cluster`, as the notebooks call it (``cl.cluster("H100")``); a
module of the same name would shadow it wherever it is imported as a submodule.

Examples
--------
>>> c = cluster("H100", nodes=2, nic="NDR")
>>> c.n_ranks, c.nvlink_bytes_per_s() / 1e9, c.nic_bw_bytes_per_s() / 1e9
(16, 20.6, 48.0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from .hardware import NCCL_LINK_BW, calibration, gpu as _gpu, nccl_tuning, network_profile
from .hardware import nic as _nic
from .hardware import (PCIE_PATHS, cpu_link_bw_bytes_per_s, cpu_link_names,
                       network_efficiency, network_hop_s, pcie_bw_per_dir_bytes_per_s,
                       pcie_generation)
from .topology import BRIDGE_LINKS
from .units import check_choice, check_int

__all__ = ["FABRICS", "Calibration", "Cluster", "cluster", "cluster_from_topo",
           "cluster_from_spec", "split_launch_gpus",
           "parse_nvidia_smi_topo", "parse_nccl_topo_xml", "TOPO_WORDS", "EXAMPLE_TOPO",
           "validation_data_dir"]


@lru_cache(maxsize=None)
def _gpu_record(name: str):
    """The catalog record of a GPU (looked up once per name: the predictor
    asks for it many times a call)."""
    return _gpu(name)


#: Fabrics inside one node.
FABRICS = ("nvswitch", "mesh", "cube-mesh", "pcie", "bridge")

_NVLS_MIN_SM = 90


#: The constants a :class:`Calibration` may replace, and where their catalog
#: (from-spec) value lives: ``hardware.CALIBRATION`` or NCCL's tuning table.
CALIBRATED_CONSTANTS = {"launch_s": "calibration", "chunk_bytes": "calibration",
                        "simple_efficiency": "calibration",
                        "ll_efficiency": "nccl_tuning", "ll128_efficiency": "nccl_tuning"}


@dataclass(frozen=True)
class Calibration:
    """Constants fitted to one measured run, carried by a :class:`Cluster`.

    Made by :func:`course_lib.calibrating.calibrate`; every field with a
    physical meaning, None (or 1.0 for a scale) where the run said nothing
    and the catalog's value stands.  The Cluster's rate methods and the
    predictor read them instead of the catalog -- one mechanism, so the
    simulator's calibrated roads (:meth:`course_lib.sim.Network.from_cluster`)
    see the same rates.

    Attributes
    ----------
    launch_s : float or None
        Start-up of one collective (kernel launch, argument set-up, the
        ranks' first handshake), seconds, as the run launched it
        (``launch_gpus`` GPUs per process).
    launch_gpus : int
        nccl-tests ``-g`` of the run (GPUs whose kernels one thread launched).
    latency_scale : float
        Achieved / planned per-step latency: multiplies NCCL's base and
        per-hop latencies and the network kind's extra per-step cost.
    simple_latency_scale : float
        The Simple protocol's (and NVLS's) achieved / planned per-step
        latency relative to :attr:`latency_scale` (1: scaled alike;
        :meth:`Cluster.protocol_latency_scale`).
    intra_scale : float
        Achieved / planned rate of the links inside a node (NVLink, PCIe
        between GPUs, the socket link).
    nic_bytes_per_s : float or None
        Achieved payload rate of one NIC per direction, bytes/s.
    net_step_bytes_per_nic : float or None
        What one network step of a node moves, per NIC
        (:meth:`Cluster.net_chunk_bytes` / NICs).
    chunk_bytes, ll_efficiency, ll128_efficiency, simple_efficiency : float or None
        The pipeline slice (``CALIBRATION["chunk_bytes"]``) and the
        protocols' payload fractions.
    pipeline_pieces : float
        Pieces a rank's share is cut into before the slice reaches
        ``chunk_bytes``: the exposed slice is ``min(chunk_bytes, share /
        pipeline_pieces)`` (1 from spec: a ring step's share ``S/n`` is one
        slice).  Above 1, NCCL cut mid-size messages finer (more channels,
        smaller chunks) and exposed less; below 1, it ran them on fewer
        channels and exposed more.
    ll_net_bytes_per_s : float or None
        The rate at which one channel's LL step crosses the network at small
        sizes, bytes/s: such a step costs ``min(bytes, LL_CHANNEL_BYTES) /
        rate`` on top of its latency (:meth:`Cluster.ll_net_step_s`).  None
        (from spec): no such cost, as in NCCL's own model.
    algorithms : tuple of str or None
        The algorithms the run's NCCL used, where the fit found that only
        some of them explain it (as ``NCCL_ALGO`` or a tuner plugin would
        restrict them); None: NCCL's own choice.
    ll128_across_nodes : bool or None
        Whether the run's NCCL enabled the LL128 protocol across nodes.
        NCCL enables it by default only where the path from GPU to NIC stays
        under one PCIe switch (``typeInter <= PATH_PXB``, or ``PATH_PXN`` on
        Hopper) -- not through the host bridge, and not where a VM's
        topology hides the switches (``NVIDIA/nccl:src/graph/tuning.cc``);
        the fit chooses it from the run (:func:`course_lib.calibrating.calibrate`).
        None: the rule from the cluster's ``nic_path`` and GPU.
    busbw_range, what_if_range : tuple of float
        (low, high) factors on a predicted busbw of the machine the run ran
        on, and of the same machine with other node or NIC counts: the band
        that held 80 % of the points calibrations predicted without fitting
        them (:func:`course_lib.calibrating.calibrate` says how).
    source : str
        What the constants were fitted on (for the reader).
    nodes, nics_per_node : int
        The run's node and NIC counts: a Cluster with others is a what-if.
    """

    launch_s: float | None = None
    launch_gpus: int = 1
    latency_scale: float = 1.0
    intra_scale: float = 1.0
    nic_bytes_per_s: float | None = None
    net_step_bytes_per_nic: float | None = None
    chunk_bytes: float | None = None
    ll_efficiency: float | None = None
    ll128_efficiency: float | None = None
    simple_efficiency: float | None = None
    pipeline_pieces: float = 1.0
    simple_latency_scale: float = 1.0
    ll_net_bytes_per_s: float | None = None
    algorithms: tuple | None = None
    ll128_across_nodes: bool | None = None
    busbw_range: tuple = (1.0, 1.0)
    what_if_range: tuple = (1.0, 1.0)
    source: str = ""
    nodes: int = 1
    nics_per_node: int = 0

    def items(self) -> dict:
        """The fitted constants that differ from the catalog, by name."""
        out = {}
        for name in ("launch_s", "nic_bytes_per_s", "net_step_bytes_per_nic",
                     "ll_net_bytes_per_s") + tuple(
                CALIBRATED_CONSTANTS):
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        for name in ("latency_scale", "simple_latency_scale", "intra_scale",
                     "pipeline_pieces"):
            if getattr(self, name) != 1.0:
                out[name] = getattr(self, name)
        return out


@dataclass(frozen=True)
class Cluster:
    """A machine or a cluster of identical nodes.  Build it with :func:`cluster`.

    Attributes are the arguments of :func:`cluster`, checked and normalised.
    """

    gpu: str
    gpus_per_node: int
    nodes: int
    fabric: str
    nic: str | None
    nics_per_node: int
    cpu: str | None = None
    sockets: int = 1
    pcie_path: str = "switch"
    nic_path: str = "switch"
    ring_hops: tuple = ()
    calibrated: Calibration | None = None

    # --- a calibrated machine (course_lib.calibrating) ----------------------
    @property
    def from_spec(self) -> "Cluster":
        """This machine without its :attr:`calibrated` constants (the catalog's)."""
        return self if self.calibrated is None else replace(self, calibrated=None)

    def fitted(self, name: str) -> float:
        """A model constant on this machine: the calibrated value where the
        Cluster carries one, else the catalog's (``hardware.CALIBRATION`` or
        NCCL's tuning table).  Names: ``CALIBRATED_CONSTANTS``.

        >>> cluster("A100").fitted("chunk_bytes")
        2000000.0
        """
        where = CALIBRATED_CONSTANTS.get(name)
        if where is None:
            raise ValueError(f"name must be one of {list(CALIBRATED_CONSTANTS)}; "
                             f"got {name!r}")
        value = None if self.calibrated is None else getattr(self.calibrated, name)
        if value is not None:
            return value
        return calibration(name) if where == "calibration" else nccl_tuning(name)

    @property
    def latency_scale(self) -> float:
        """Achieved / planned per-step latency (1 unless calibrated)."""
        return 1.0 if self.calibrated is None else self.calibrated.latency_scale

    def protocol_latency_scale(self, protocol: str) -> float:
        """Achieved / planned per-step latency of one NCCL protocol: the
        :attr:`latency_scale`, times :attr:`Calibration.simple_latency_scale`
        for ``"simple"`` (1 unless calibrated).

        >>> cluster("A100").protocol_latency_scale("simple")
        1.0
        """
        if self.calibrated is None:
            return 1.0
        k = self.calibrated.latency_scale
        return k * self.calibrated.simple_latency_scale if protocol == "simple" else k

    def ll_net_step_s(self, step_bytes: float) -> float:
        """Extra time of one LL network step that moves ``step_bytes`` per
        channel (0 unless calibrated with :attr:`Calibration.ll_net_bytes_per_s`).

        At small sizes NCCL runs LL on one channel with few threads, and adds
        channels only once each carries ``ll_max_threads x
        ll_thread_threshold_bytes`` (4 KiB; per step of a ring, whose
        threshold NCCL multiplies by the ranks) -- ``src/graph/tuning.cc``
        and ``src/enqueue.cc`` of NVIDIA/nccl.  Across nodes such a step's
        bytes cross at one channel's LL rate, so its time grows from the
        8-256 B floor up to that load, then stays flat while NCCL adds
        channels, until the message is large enough for the transfer term.

        >>> c = cluster("H100", nodes=2, nic="NDR")
        >>> c.ll_net_step_s(4096)
        0.0
        >>> from dataclasses import replace
        >>> cal = replace(c, calibrated=Calibration(ll_net_bytes_per_s=2.048e9))
        >>> [round(cal.ll_net_step_s(b) * 1e6, 2) for b in (1024, 4096, 2**20)]
        [0.5, 2.0, 2.0]
        """
        rate = None if self.calibrated is None else self.calibrated.ll_net_bytes_per_s
        if not rate:
            return 0.0
        from .hardware import nccl_tuning
        full = nccl_tuning("ll_max_threads") * nccl_tuning("ll_thread_threshold_bytes")
        return min(step_bytes, full) / rate

    @property
    def pipeline_pieces(self) -> float:
        """Pieces a rank's share is cut into before the pipeline slice reaches
        its cap (1 unless calibrated: :attr:`Calibration.pipeline_pieces`)."""
        return 1.0 if self.calibrated is None else self.calibrated.pipeline_pieces

    @property
    def intra_scale(self) -> float:
        """Achieved / planned rate of the links inside a node (1 unless calibrated)."""
        return 1.0 if self.calibrated is None else self.calibrated.intra_scale

    # --- derived quantities ----------------------------------------------
    @property
    def n_ranks(self) -> int:
        """Total number of GPUs (ranks)."""
        return self.gpus_per_node * self.nodes

    @property
    def gpu_record(self):
        return _gpu_record(self.gpu)

    @property
    def nvls_capable(self) -> bool:
        """True where the NVSwitch can reduce in the switch (NVLink SHARP: H100 and later)."""
        return self.fabric == "nvswitch" and self.gpu_record.sm_arch >= _NVLS_MIN_SM

    @property
    def intra_link_kind(self) -> str:
        """``"nvlink"`` or ``"pcie"``: what GPUs of one node talk over (a ring
        from a topology dump whose every hop is NVLink counts as NVLink)."""
        if self.ring_hops and all(h.startswith("NV") for h in self.ring_hops):
            return "nvlink"
        return "pcie" if self.fabric == "pcie" else "nvlink"

    def nvlinks_per_gpu_used(self) -> int:
        """NVLink links of one GPU that the node's rings can use."""
        g = self.gpu_record
        if self.fabric == "bridge":
            return BRIDGE_LINKS[g.name]
        if self.fabric == "mesh":
            return (g.nvlink_links // (self.gpus_per_node - 1)) * (self.gpus_per_node - 1)
        return g.nvlink_links

    @property
    def intel_cpu(self) -> bool:
        return self.cpu is not None and self.cpu.startswith("intel")

    # --- the calibrated per-link rates (predict and sim both read these) ---
    def nvlink_bytes_per_s(self, links: int = 1) -> float:
        """NCCL's planning rate for ``links`` NVLinks of this GPU, per direction
        (``hardware.NCCL_LINK_BW``: 20 GB/s per link on A100, 20.6 on H100)."""
        return links * NCCL_LINK_BW[self.gpu_record.sm_arch].value * self.intra_scale

    def pcie_planning_bytes_per_s(self) -> float:
        """NCCL's rate for the GPU's x16 link (width x speed / 80: 12/24/48 GB/s
        for Gen3/4/5), per direction: what a GPU-to-GPU PCIe hop is planned at."""
        rec = pcie_generation(self.gpu_record.pcie_gen)
        if rec.nccl_planning_x16_bytes_per_s is not None:
            return rec.nccl_planning_x16_bytes_per_s * self.intra_scale
        return self.pcie_dma_bytes_per_s() * self.intra_scale

    def pcie_dma_bytes_per_s(self) -> float:
        """What DMA achieves on the GPU's x16 link, per direction: the raw rate x
        ``calibration("pcie_dma_efficiency")`` (0.87) -- a GPU's way to its NIC."""
        return (pcie_bw_per_dir_bytes_per_s(self.gpu_record.pcie_gen)
                * calibration("pcie_dma_efficiency"))

    def hop_bw_bytes_per_s(self, kind: str) -> float:
        """What NCCL plans for one ring hop between two GPUs of a node, by the
        ``nvidia-smi topo -m`` word for the pair, per direction.

        ``NV<k>``: k NVLinks x NCCL's per-link rate; ``PIX``/``PXB`` (one or
        more PCIe switches): the x16 PCIe rate; ``PHB``/``NODE`` (through a
        CPU root complex): the same, charged 6/5 on Intel CPUs
        (``INTEL_P2P_OVERHEAD``); ``SYS`` (across the socket-to-socket link):
        also limited by that link (``hardware.CPU_LINKS``).
        """
        if not isinstance(kind, str):
            raise TypeError(f"kind must be a topology word such as 'NV12' or 'SYS'; "
                            f"got {kind!r}")
        k = kind.strip().upper()
        if k.startswith("NV") and k[2:].isdigit() and int(k[2:]) > 0:
            return self.nvlink_bytes_per_s(int(k[2:]))
        pcie = self.pcie_planning_bytes_per_s()
        if k in ("PIX", "PXB"):
            return pcie
        through_cpu = pcie / (PCIE_PATHS["intel_p2p_overhead"].value
                              if self.intel_cpu else 1.0)
        if k in ("PHB", "NODE"):
            return through_cpu
        if k == "SYS":
            if self.cpu is None:
                raise ValueError(f"a SYS hop crosses the socket-to-socket link: give "
                                 f"cpu= one of {cpu_link_names()}")
            return min(through_cpu, cpu_link_bw_bytes_per_s(self.cpu) * self.intra_scale)
        raise ValueError(f"kind must be NV<k>, PIX, PXB, PHB, NODE or SYS; got {kind!r}")

    def intra_hops(self) -> tuple:
        """The hop words of the ring NCCL runs inside one node (``()`` on NVLink
        fabrics).  From a topology dump when there was one; for
        ``fabric='pcie'`` from ``pcie_path`` and ``sockets``: a ring over two
        sockets crosses the socket link twice (once each way)."""
        if self.ring_hops:
            return tuple(self.ring_hops)
        if self.fabric != "pcie" or self.gpus_per_node < 2:
            return ()
        word = "PIX" if self.pcie_path == "switch" else "NODE"
        return (word, "SYS") if self.sockets == 2 else (word,)

    def intra_bw_bytes_per_s(self) -> float:
        """NCCL's planning bandwidth of one GPU inside a node, per direction.

        NVLink fabrics: links used x NCCL's per-link rate (``NCCL_LINK_BW``);
        PCIe or a topology dump: the slowest hop of the node's ring
        (:meth:`hop_bw_bytes_per_s`), e.g. the socket link on a two-socket
        PCIe server.
        """
        hops = self.intra_hops()
        if hops:
            return min(self.hop_bw_bytes_per_s(h) for h in hops)
        if self.fabric == "pcie":
            return self.pcie_planning_bytes_per_s()
        return self.nvlink_bytes_per_s(self.nvlinks_per_gpu_used())

    @property
    def network(self) -> str | None:
        """The network kind of the NICs (``"InfiniBand"``, ``"RoCEv2"``,
        ``"EFA"``, ``"TCPX"``, ``"TCPXO"``), or None."""
        return None if self.nic is None else _nic(self.nic).family

    def net_hop_s(self, protocol: str | None = None) -> float:
        """What one network step costs on top of NCCL's NET latency (by network
        kind), scaled as the ``protocol``'s latencies are
        (:meth:`protocol_latency_scale`; by :attr:`latency_scale` if None)."""
        if self.nic is None:
            return 0.0
        k = self.latency_scale if protocol is None else self.protocol_latency_scale(protocol)
        return network_hop_s(self.network) * k

    def nic_bw_bytes_per_s(self) -> float:
        """Payload rate of one NIC, per direction: ``min(port x efficiency, PCIe x 0.87)``.

        The efficiency is the network kind's (``hardware.NETWORK``: 0.96 on
        InfiniBand and RoCE, lower on EFA and TCPX).  A NIC sits on the
        GPU's PCIe link (GPUDirect RDMA), so an 800 Gb/s port behind PCIe
        Gen5 x16 is limited by PCIe; a NIC on the other socket
        (``nic_path='remote'``, SYS) is also limited by the socket link.
        """
        if self.nic is None:
            return 0.0
        if self.calibrated is not None and self.calibrated.nic_bytes_per_s is not None:
            return self.calibrated.nic_bytes_per_s
        port = _nic(self.nic).bw_per_dir_bytes_per_s * network_efficiency(self.network)
        bw = min(port, self.pcie_dma_bytes_per_s())
        if self.nic_path == "host" and self.intel_cpu:
            bw /= PCIE_PATHS["intel_p2p_overhead"].value
        if self.nic_path == "remote":
            bw = min(bw, self.hop_bw_bytes_per_s("SYS"))
        return bw

    def net_chunk_bytes(self) -> float:
        """What one network step of a node moves, bytes: every channel's step
        (NCCL's Simple buffer, ``buffsize_bytes``, cut in ``steps`` slots) on
        two channels per NIC (NCCL duplicates the ring/tree per NIC its search
        finds) -- 8 MiB on 8 NICs with NCCL's defaults; a network kind's NCCL
        profile may set another buffer size (TCPXO: 8 MiB).  A pipelined tree
        exposes one such step at each network level of a chunk's way."""
        if self.nic is None:
            return 0.0
        if self.calibrated is not None and \
                self.calibrated.net_step_bytes_per_nic is not None:
            return self.calibrated.net_step_bytes_per_nic * self.nics_per_node
        prof = network_profile(self.network)
        buff = prof.get("buffsize_bytes") or nccl_tuning("buffsize_bytes")
        return (buff / nccl_tuning("steps") * nccl_tuning("channels_per_graph_channel")
                * self.nics_per_node)

    def inter_bw_bytes_per_s(self) -> float:
        """What one node can send to the network, per direction (all its NICs)."""
        return self.nics_per_node * self.nic_bw_bytes_per_s()

    def topology(self):
        """This machine as a :mod:`course_lib.topology` graph (raw hardware rates)."""
        from . import topology as T

        g = self.gpu_record.name
        if self.nodes > 1:
            if self.fabric != "nvswitch":
                raise ValueError(f"topology() builds multi-node clusters only for "
                                 f"fabric='nvswitch'; got fabric={self.fabric!r}")
            return T.two_level_topology(self.nodes, self.gpus_per_node, gpu=g,
                                        nic=self.nic, nics_per_node=self.nics_per_node)
        if self.fabric == "nvswitch":
            return T.nvswitch_topology(self.gpus_per_node, gpu=g)
        if self.fabric == "mesh":
            per_pair = self.gpu_record.nvlink_links // (self.gpus_per_node - 1)
            return T.fully_connected_topology(self.gpus_per_node, per_pair, gpu=g)
        if self.fabric == "cube-mesh":
            return T.hybrid_cube_mesh_topology(gpu=g)
        if self.fabric == "pcie":
            return T.pcie_topology(self.gpus_per_node, gpu=g)
        return T.bridge_topology(gpu=g)

    def describe(self) -> str:
        net = "" if self.nodes == 1 else f", {self.nics_per_node}x {self.nic} per node"
        hops = self.intra_hops()
        ring = f", ring hops {'-'.join(hops)}" if hops else ""
        cal = ", calibrated" if self.calibrated is not None else ""
        return (f"{self.nodes} node(s) x {self.gpus_per_node} {self.gpu} "
                f"({self.fabric}{ring}{net}{cal})")




def cluster(gpu: str = "H100", gpus_per_node: int = 8, nodes: int = 1,
            fabric: str = "nvswitch", nic: str | None = None,
            nics_per_node: int = 0, *, cpu: str | None = None, sockets: int = 1,
            pcie_path: str = "switch", nic_path: str = "switch",
            ring_hops=()) -> Cluster:
    """Describe a machine or a cluster of identical nodes.

    Parameters
    ----------
    gpu : str
        Catalog GPU (``"P100"`` ... ``"B200"``).
    gpus_per_node : int
        GPUs in one node (one NVLink domain).
    nodes : int
        Number of nodes, >= 1.
    fabric : {"nvswitch", "mesh", "cube-mesh", "pcie", "bridge"}
        How the GPUs of a node are wired: NVSwitch; NVLink full mesh (e.g.
        4x A100, links split evenly over the peers); the DGX-1 hybrid
        cube-mesh (8x P100/V100); PCIe only; two GPUs on an NVLink bridge.
    nic : str, optional
        NIC port type from ``hardware.NICS`` (``"EDR"``, ``"HDR"``,
        ``"NDR"``, ``"XDR"``, ``"RoCE-400"``...); needed when ``nodes > 1``.
    nics_per_node : int
        NICs per node; 0 with a ``nic`` means one per GPU (as on DGX H100).
    cpu : str, optional
        The host CPU family, for its socket-to-socket link and PCIe peer
        path (``hardware.CPU_LINKS``: ``"intel-skl"``, ``"intel-spr"``,
        ``"amd-zen3"``...); needed when a ring or a NIC crosses sockets.
    sockets : {1, 2}
        Sockets the node's GPUs hang off (``fabric='pcie'``): with 2 the
        ring crosses the socket link (nvidia-smi topo: SYS).
    pcie_path : {"switch", "host"}
        How GPUs of one socket reach each other: through PCIe switches (PIX,
        PXB) or through the CPU's root complex (PHB, NODE).
    nic_path : {"switch", "host", "remote"}
        Where each NIC sits: on its GPU's PCIe switch (PIX/PXB), behind the
        same CPU (PHB/NODE), or on the other socket (SYS).
    ring_hops : tuple of str
        The hop words of the node's ring (``("NV12", "NODE", "NODE")``),
        normally filled in by :func:`cluster_from_topo`.

    Examples
    --------
    >>> c = cluster("H100", nodes=4, nic="NDR", nics_per_node=8)
    >>> c.n_ranks, c.inter_bw_bytes_per_s() / 1e9
    (32, 384.0)
    >>> cluster("A100", nodes=2)
    Traceback (most recent call last):
    ...
    ValueError: nic must be given when nodes > 1 (one of ['EDR', 'HDR', 'NDR', 'XDR', 'RoCE-100', 'RoCE-200', 'RoCE-400', 'EFA-100', 'EFA-200', 'EFA-400', 'TCPX-200', 'TCPXO-200'])
    """
    try:
        rec = _gpu(gpu)
    except ValueError:
        from .hardware import gpu_names
        raise ValueError(f"gpu must be one of {gpu_names()}; got {gpu!r}") from None
    g = check_int(gpus_per_node, "gpus_per_node", minimum=1, maximum=576)
    nodes = check_int(nodes, "nodes", minimum=1, maximum=65_536)
    fabric = check_choice(fabric, "fabric", FABRICS)
    nics_per_node = check_int(nics_per_node, "nics_per_node", minimum=0, maximum=576)
    from .hardware import nic_names

    if nic is None:
        if nodes > 1:
            raise ValueError(f"nic must be given when nodes > 1 (one of {nic_names()})")
        if nics_per_node:
            raise ValueError("nics_per_node > 0 needs a nic (e.g. nic='NDR')")
    else:
        nic = _nic(nic).name
        if nics_per_node == 0:
            nics_per_node = g
        if nics_per_node > g:
            raise ValueError(f"nics_per_node must be <= gpus_per_node ({g}); "
                             f"got {nics_per_node}")
    if fabric == "cube-mesh":
        if g != 8 or rec.name not in ("P100", "V100"):
            raise ValueError(f"fabric='cube-mesh' is the DGX-1: gpus_per_node=8 and "
                             f"gpu 'P100' or 'V100'; got gpus_per_node={g}, "
                             f"gpu={rec.name!r}")
    elif fabric == "bridge":
        if g != 2:
            raise ValueError(f"fabric='bridge' joins exactly 2 GPUs: gpus_per_node "
                             f"must be 2, got {g}")
        if rec.name not in BRIDGE_LINKS:
            raise ValueError(f"fabric='bridge' needs a GPU sold with an NVLink bridge "
                             f"(A100, H100); got gpu={rec.name!r}")
    elif fabric == "mesh":
        if g < 2 or rec.nvlink_links < g - 1:
            raise ValueError(f"fabric='mesh' needs 2 <= gpus_per_node <= "
                             f"{rec.nvlink_links + 1} ({rec.name} has "
                             f"{rec.nvlink_links} NVLinks); got {g}")
    elif fabric == "nvswitch" and rec.name == "P100":
        raise ValueError("fabric='nvswitch' needs V100 or later (there is no "
                         "P100 NVSwitch system); use fabric='cube-mesh'")
    if cpu is not None:
        cpu = check_choice(cpu, "cpu", cpu_link_names())
    sockets = check_int(sockets, "sockets", minimum=1, maximum=2)
    pcie_path = check_choice(pcie_path, "pcie_path", ("switch", "host"))
    nic_path = check_choice(nic_path, "nic_path", ("switch", "host", "remote"))
    if isinstance(ring_hops, str) or not all(isinstance(h, str) for h in ring_hops):
        raise TypeError(f"ring_hops must be a tuple of topology words such as "
                        f"('NV12', 'NODE'); got {ring_hops!r}")
    ring_hops = tuple(h.strip().upper() for h in ring_hops)
    if sockets == 2 and fabric != "pcie" and not ring_hops:
        raise ValueError("sockets=2 describes a PCIe ring across sockets: use "
                         "fabric='pcie' (NVLink rings do not cross the socket link)")
    if cpu is None and ((sockets == 2 and fabric == "pcie") or nic_path == "remote"
                        or "SYS" in ring_hops):
        raise ValueError(f"the ring or a NIC crosses the socket link: give cpu= one "
                         f"of {cpu_link_names()}")
    out = Cluster(rec.name, g, nodes, fabric, nic, nics_per_node, cpu, sockets,
                  pcie_path, nic_path, ring_hops)
    out.intra_bw_bytes_per_s()  # checks every hop word now, not at predict time
    return out



# ---------------------------------------------------------------------------
# clusters described by a topology dump
# ---------------------------------------------------------------------------
#: Four A100 PCIe cards joined in pairs by NVLink bridges (NV12), the pairs
#: meeting in the CPU (NODE): the first half of the matrix posted in
#: NVIDIA/nccl-tests issue #178 (the full dump is in course_lib/data/validation/topo/).
EXAMPLE_TOPO = """\
        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity
GPU0     X      NV12    NODE    NODE    0-31,64-95      0
GPU1    NV12     X      NODE    NODE    0-31,64-95      0
GPU2    NODE    NODE     X      NV12    0-31,64-95      0
GPU3    NODE    NODE    NV12     X      0-31,64-95      0
"""
#: The words ``nvidia-smi topo -m`` prints for a pair of devices, nearest first.
TOPO_WORDS = ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS")
_PCIE_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}


def _topo_word(cell: str) -> str:
    w = cell.strip().upper()
    if w.startswith("NV") and w[2:].isdigit():
        return w
    if w not in _PCIE_RANK:
        raise ValueError(f"dump: unknown topology word {cell!r}; expected one of "
                         f"{list(TOPO_WORDS)}")
    return w


def parse_nvidia_smi_topo(text: str) -> dict:
    """Read the matrix printed by ``nvidia-smi topo -m``.

    Returns ``{"gpus": ["GPU0", ...], "nics": ["NIC0" or "mlx5_0", ...],
    "pair": {(a, b): word}, "numa": {gpu: int or None}}``; a word is
    ``NV<k>``, ``PIX``, ``PXB``, ``PHB``, ``NODE`` or ``SYS``.  The legend
    and the NIC-name table that newer drivers print are ignored.

    >>> t = parse_nvidia_smi_topo(EXAMPLE_TOPO)
    >>> t["gpus"], t["pair"][("GPU0", "GPU1")], t["pair"][("GPU0", "GPU2")]
    (['GPU0', 'GPU1', 'GPU2', 'GPU3'], 'NV12', 'NODE')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the output of nvidia-smi topo -m as a str; "
                        f"got {type(text).__name__}")
    lines = [ln for ln in text.replace("\r", "").split("\n") if ln.strip()]
    header = None
    for i, ln in enumerate(lines):
        toks = ln.split()
        if toks and toks[0].startswith("GPU") and toks[0][3:].isdigit() and \
                (len(toks) < 2 or toks[1] != "X"):
            header, start = toks, i + 1
            break
    if header is None:
        raise ValueError("text: no nvidia-smi topo -m header line (GPU0 GPU1 ...) found")
    devices = []
    for t in header:
        if t in ("CPU", "NUMA", "GPU") or t.startswith("Affinity"):
            break
        devices.append(t)
    pair, numa, rows = {}, {}, set()
    for ln in lines[start:]:
        toks = ln.split()
        if not toks or toks[0] not in devices:
            if rows:
                break  # the legend or the NIC-name table
            continue
        name, cells = toks[0], toks[1:1 + len(devices)]
        if len(cells) < len(devices):
            raise ValueError(f"text: row {name!r} has {len(cells)} cells for "
                             f"{len(devices)} devices")
        rows.add(name)
        for other, cell in zip(devices, cells):
            if other != name:
                pair[(name, other)] = _topo_word(cell)
        rest = toks[1 + len(devices):]
        ints = [t for t in rest if t.isdigit()]
        numa[name] = int(ints[0]) if ints else None
    gpus = [d for d in devices if d.startswith("GPU")]
    missing = [g for g in gpus if g not in rows]
    if missing:
        raise ValueError(f"text: the matrix has no row for {missing}")
    return {"gpus": gpus, "nics": [d for d in devices if not d.startswith("GPU")],
            "pair": pair, "numa": {g: numa.get(g) for g in gpus}}


_CPU_MODELS = {  # NCCL topo XML (familyid, modelid) -> hardware.CPU_LINKS key
    ("GenuineIntel", 6, 79): "intel-bdw", ("GenuineIntel", 6, 85): "intel-skl",
    ("GenuineIntel", 6, 106): "intel-skl", ("GenuineIntel", 6, 143): "intel-spr",
    ("GenuineIntel", 6, 207): "intel-emr",
    ("AuthenticAMD", 23, None): "amd-zen2", ("AuthenticAMD", 25, None): "amd-zen3",
    ("AuthenticAMD", 26, None): "amd-zen5",
}


def parse_nccl_topo_xml(text: str) -> dict:
    """Read the system NCCL dumps with ``NCCL_TOPO_DUMP_FILE`` (XML).

    Returns the same dict as :func:`parse_nvidia_smi_topo`, plus ``"cpu"``
    (a ``hardware.CPU_LINKS`` key when the CPU model is known, else None) and
    ``"nic_gbps"`` (port speed of each NIC).  Pair words follow nvidia-smi:
    NVLink counts (through NVSwitches, or direct), else the PCIe path: one
    switch PIX, several PXB, the same CPU NODE, another CPU SYS.
    """
    import xml.etree.ElementTree as ET

    if not isinstance(text, str):
        raise TypeError(f"text must be an NCCL topology XML as a str; got "
                        f"{type(text).__name__}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"text: not well-formed NCCL topology XML ({exc})") from None
    gpus, nics, cpu_key = {}, {}, None

    def walk(node, path, numa):
        nonlocal cpu_key
        for child in node:
            if child.tag == "cpu":
                vendor = child.get("vendor", "")
                fam = int(child.get("familyid", "0") or 0)
                model = int(child.get("modelid", "0") or 0)
                cpu_key = _CPU_MODELS.get((vendor, fam, model),
                                          _CPU_MODELS.get((vendor, fam, None), cpu_key))
                walk(child, [], int(child.get("numaid", "0") or 0))
            elif child.tag == "pci":
                gpu = child.find("gpu")
                if gpu is not None:
                    links = {nv.get("target", ""): int(nv.get("count", "0"))
                             for nv in gpu.findall("nvlink")}
                    to_switch = sum(c for t, c in links.items()
                                    if t.lower().startswith("fffffff") or
                                    any(nv.get("tclass") == "0x068000"
                                        for nv in gpu.findall("nvlink")
                                        if nv.get("target") == t))
                    gpus[child.get("busid", "").lower()] = {
                        "dev": int(gpu.get("dev", len(gpus))), "path": path,
                        "numa": numa, "links": links, "nvswitch": to_switch}
                else:
                    net = child.find("nic/net")
                    if net is not None:
                        nics[net.get("name", f"NIC{len(nics)}")] = {
                            "path": path, "numa": numa,
                            "gbps": float(net.get("speed", "0") or 0) / 1000}
                    walk(child, path + [child.get("busid", "")], numa)
            elif child.tag == "nic":
                for net in child.findall("net"):
                    nics[net.get("name", f"NIC{len(nics)}")] = {
                        "path": path, "numa": numa,
                        "gbps": float(net.get("speed", "0") or 0) / 1000}
            else:
                walk(child, path, numa)

    walk(root, [], 0)
    if not gpus:
        raise ValueError("text: the NCCL topology XML has no <gpu> element")

    def pcie_word(a, b):
        if a["numa"] != b["numa"]:
            return "SYS"
        common = 0
        for x, y in zip(a["path"], b["path"]):
            if x != y:
                break
            common += 1
        if common == 0:
            return "NODE"
        return "PIX" if len(a["path"]) - common <= 1 and len(b["path"]) - common <= 1 \
            else "PXB"

    by_dev = sorted(gpus.items(), key=lambda kv: kv[1]["dev"])
    names = {bus: f"GPU{rec['dev']}" for bus, rec in by_dev}
    pair = {}
    for bus_a, a in by_dev:
        for bus_b, b in by_dev:
            if bus_a == bus_b:
                continue
            direct = a["links"].get(bus_b, 0)
            if a["nvswitch"] and b["nvswitch"]:
                word = f"NV{min(a['nvswitch'], b['nvswitch'])}"
            elif direct:
                word = f"NV{direct}"
            else:
                word = pcie_word(a, b)
            pair[(names[bus_a], names[bus_b])] = word
    for nic_name, n in nics.items():
        for bus, g in by_dev:
            word = pcie_word(g, n)
            pair[(names[bus], nic_name)] = pair[(nic_name, names[bus])] = word
    return {"gpus": [names[b] for b, _ in by_dev], "nics": list(nics), "pair": pair,
            "numa": {names[b]: g["numa"] for b, g in by_dev}, "cpu": cpu_key,
            "nic_gbps": {k: v["gbps"] for k, v in nics.items()}}


def _best_ring(names, pair, rate):
    """The ring order over ``names`` whose slowest hop is fastest (NCCL's
    search does the same on its graph); exhaustive up to 9 GPUs, greedy above."""
    import itertools

    def worst(order):
        return min(rate(pair[(order[i], order[(i + 1) % len(order)])])
                   for i in range(len(order)))

    first, rest = names[0], names[1:]
    if len(names) <= 9:
        best = max(((first,) + p for p in itertools.permutations(rest)), key=worst)
    else:
        best, left = [first], list(rest)
        while left:
            nxt = max(left, key=lambda g: rate(pair[(best[-1], g)]))
            best.append(nxt)
            left.remove(nxt)
        best = tuple(best)
    return tuple(pair[(best[i], best[(i + 1) % len(best)])] for i in range(len(best)))


def cluster_from_topo(dump: str, gpu: str, *, gpus=None, nodes: int = 1,
                      nic: str | None = None, cpu: str | None = None) -> Cluster:
    """A :class:`Cluster` from a node's topology dump.

    Parameters
    ----------
    dump : str
        The text of ``nvidia-smi topo -m``, or NCCL's topology XML
        (``NCCL_TOPO_DUMP_FILE``).
    gpu : str
        Catalog GPU model of the node (the dump names no model).
    gpus : list of int, optional
        The GPUs the job uses (``CUDA_VISIBLE_DEVICES``); all by default.
    nodes : int
        Identical nodes; ``> 1`` needs ``nic`` and uses the dump's NICs.
    nic : str, optional
        NIC port type (``hardware.NICS``); one per NIC row of the dump.
    cpu : str, optional
        ``hardware.CPU_LINKS`` key; needed when the ring or a NIC crosses
        sockets (SYS) and the dump does not say (nvidia-smi never does).

    Notes
    -----
    Every GPU pair NV<k> with k = all of the GPU's links: an NVSwitch node;
    every pair NV<k> with fewer links: a full NVLink mesh; otherwise the ring
    NCCL would build (the order whose slowest hop is fastest) gives the
    hops, e.g. NV12 bridges joined through the CPU (NODE) or across sockets
    (SYS).  NICs: the nearest NIC of each used GPU (PIX/PXB: on its switch;
    PHB/NODE: same CPU; SYS: other socket); the worst of them sets
    ``nic_path``.  Chapter 7.

    >>> c = cluster_from_topo(EXAMPLE_TOPO, "A100", gpus=[0, 1, 2])
    >>> c.intra_hops(), round(c.intra_bw_bytes_per_s() / 1e9)
    (('NV12', 'NODE', 'NODE'), 24)
    """
    rec = _gpu(gpu)
    info = (parse_nccl_topo_xml(dump) if isinstance(dump, str) and
            dump.lstrip().startswith("<") else parse_nvidia_smi_topo(dump))
    cpu = cpu if cpu is not None else info.get("cpu")
    names = info["gpus"]
    if gpus is not None:
        if isinstance(gpus, (str, bytes)) or not all(isinstance(i, int) for i in gpus):
            raise TypeError(f"gpus must be a list of GPU indices; got {gpus!r}")
        chosen = [f"GPU{i}" for i in gpus]
        bad = [g for g in chosen if g not in names]
        if bad or len(set(chosen)) != len(chosen):
            raise ValueError(f"gpus must be distinct indices of the dump's GPUs "
                             f"{names}; got {list(gpus)}")
        names = chosen
    if len(names) < 1:
        raise ValueError("gpus: the dump selects no GPU")
    pair = info["pair"]
    words = [pair[(a, b)] for a in names for b in names if a != b]
    nvl = [w for w in words if w.startswith("NV")]
    fabric, hops = "pcie", ()
    if words and len(nvl) == len(words) and len({int(w[2:]) for w in nvl}) == 1:
        k = int(nvl[0][2:])
        if len(names) > 2 and k >= rec.nvlink_links and rec.name != "P100":
            fabric = "nvswitch"
        elif len(names) > 2 and k * (len(names) - 1) <= rec.nvlink_links:
            fabric = "mesh"
        else:
            hops = (nvl[0],)
    elif len(names) > 1:
        probe = Cluster(rec.name, len(names), 1, "pcie", None, 0, cpu)
        hops = _best_ring(names, pair, probe.hop_bw_bytes_per_s)
    nic_path, nics_per_node = "switch", 0
    if nodes > 1 or nic is not None:
        if not info["nics"]:
            raise ValueError("dump: no NIC in the topology, but nodes > 1 or a nic "
                             "was given")
        worst = "PIX"
        for g in names:
            near = min((pair[(g, n)] for n in info["nics"]), key=_PCIE_RANK.get)
            worst = max(worst, near, key=_PCIE_RANK.get)
        nic_path = {"PIX": "switch", "PXB": "switch", "PHB": "host", "NODE": "host",
                    "SYS": "remote"}[worst]
        nics_per_node = min(len(info["nics"]), len(names))
    return cluster(rec.name, len(names), nodes, fabric, nic, nics_per_node, cpu=cpu,
                   pcie_path="switch", nic_path=nic_path, ring_hops=hops)


# ---------------------------------------------------------------------------
# clusters described by a line of the validation CSV
# ---------------------------------------------------------------------------
_SPEC_INTS = ("gpus_per_node", "nodes", "nics_per_node", "sockets")


def validation_data_dir():
    """The folder ``course_lib/data/validation`` (CSV and topology dumps)."""
    from .hardware import data_path

    return data_path("validation")


def split_launch_gpus(spec: str) -> tuple[str, int | None]:
    """Split ``launch_gpus=N`` (the run's nccl-tests ``-g``) off a cluster spec.

    >>> split_launch_gpus("gpu=H100;nodes=2;launch_gpus=8")
    ('gpu=H100;nodes=2', 8)
    """
    parts, launch = [], None
    for part in spec.split(";"):
        key, _, value = part.partition("=")
        if key.strip() == "launch_gpus":
            launch = int(value)
        elif part.strip():
            parts.append(part)
    return ";".join(parts), launch


def cluster_from_spec(spec: str, topo_dir=None) -> Cluster:
    """A :class:`Cluster` from the ``cluster`` column of the validation CSV:
    ``key=value`` pairs joined by ``;`` -- the arguments of :func:`cluster`,
    or ``topo=<file in course_lib/data/validation/topo>`` (with ``gpu``, optional
    ``gpus=0,1,2``, ``nodes``, ``nic``, ``cpu``) for :func:`cluster_from_topo`.

    >>> cluster_from_spec("gpu=A100;gpus_per_node=8;nodes=2;nic=HDR;nics_per_node=4").n_ranks
    16
    """
    import os
    from pathlib import Path

    if not isinstance(spec, str) or "=" not in spec:
        raise ValueError(f"spec must be 'key=value;...' (e.g. 'gpu=H100;nodes=2;"
                         f"nic=NDR'); got {spec!r}")
    kw = {}
    for part in spec.split(";"):
        if not part.strip():
            continue
        key, _, value = part.partition("=")
        kw[key.strip()] = value.strip()
    try:
        for key in _SPEC_INTS:
            if key in kw:
                kw[key] = int(kw[key])
        gpus = kw.pop("gpus", None)
        if gpus is not None:
            gpus = [int(x) for x in gpus.split(",")]
    except ValueError:
        raise ValueError(f"spec: {', '.join(_SPEC_INTS)} and gpus take integers; "
                         f"got {spec!r}") from None
    if "topo" in kw:
        if topo_dir is None:
            folder = validation_data_dir() / "topo"
        elif isinstance(topo_dir, (str, os.PathLike)):
            folder = Path(topo_dir)
        else:
            raise TypeError(f"topo_dir must be a folder path; got {topo_dir!r}")
        try:
            text = (folder / kw.pop("topo")).read_text()
        except OSError as exc:
            raise ValueError(f"spec: cannot read the topology dump: {exc}") from None
        unknown = set(kw) - {"gpu", "nodes", "nic", "cpu"}
        if unknown:
            raise ValueError(f"spec: with topo= only gpu, gpus, nodes, nic, cpu are "
                             f"allowed; got {sorted(unknown)}")
        if "gpu" not in kw:
            raise ValueError(f"spec: topo= needs gpu= (the dump names no model); "
                             f"got {spec!r}")
        return cluster_from_topo(text, kw.pop("gpu"), gpus=gpus, **kw)
    if gpus is not None:
        raise ValueError("spec: gpus= selects GPUs of a topology dump; it needs topo=")
    return cluster(**kw)

