"""NCCL's own planning numbers: what NCCL assumes one NVLink delivers, and its
tuning model (base and per-hop latencies, protocol efficiencies).

NCCL plans with these numbers to pick an algorithm and a protocol; the
prediction model (:mod:`course_lib.predict`) and the simulator
(:mod:`course_lib.sim`) start from them.  They are typed here once: the
per-hop latencies of every algorithm, protocol and kind of hop live in
:data:`NCCL_TUNING` and are read through :func:`nccl_hop_s`.

Read from ``NVIDIA/nccl:src/graph/topo.h`` (link bandwidths) and
``NVIDIA/nccl:src/graph/tuning.cc`` at tag v2.20.3 (latencies).  These are
NCCL's *planning* numbers: measured small-message times are 2-3x higher
(see :data:`course_lib.hardware.fitted.CALIBRATION`).
"""

from __future__ import annotations

from ..units import GB, US, check_choice
from .facts import SRC_NCCL_TOPO, SRC_NCCL_TUNING_V220, Fact

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

# Latencies in seconds, per protocol; "base" is NCCL's fixed cost of one
# collective, "hop_*" the cost added per ring step (or per tree level) on that
# kind of hop (read at tag v2.20.3, commit b6475625, makefiles/version.mk).
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
    "nvls_tree_simple_hop_net": Fact(14.0 * US, "s", "n/a", _NT,
                                     note="hwLat NET NVLSTree/Simple"),
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
    "buffsize_bytes": Fact(4 * 2**20, "bytes", "n/a",
                           "NCCL docs, Environment Variables: NCCL_BUFFSIZE (default "
                           "4194304)", note="buffer of one channel to one peer, "
                                            "Simple protocol"),
    "steps": Fact(8, "count", "n/a", "NVIDIA/nccl:src/include/device.h NCCL_STEPS",
                  note="slots a channel's buffer is cut into: one network step "
                       "moves buffsize/steps"),
    "channels_per_graph_channel": Fact(
        2, "count", "n/a",
        "NVIDIA/nccl:src/graph/connect.cc ncclTopoPreset ('Duplicate channels "
        "rings/trees')", note="NCCL runs every ring/tree its graph search finds "
                              "twice; across nodes the search finds one per NIC"),
    "ll_max_threads": Fact(512, "count", "n/a",
                           "NVIDIA/nccl:src/include/device.h NCCL_LL_MAX_NTHREADS",
                           note="most threads of one channel running LL"),
    "ll_thread_threshold_bytes": Fact(
        8, "bytes", "n/a",
        "NVIDIA/nccl:src/include/comm.h NCCL_LL_THREAD_THRESHOLD; times nRanks for "
        "Ring in src/graph/tuning.cc", note="below this many bytes per thread NCCL "
                                            "runs LL on fewer channels, then fewer "
                                            "threads (src/enqueue.cc)"),
    "max_channels": Fact(32, "count", "n/a",
                         "NVIDIA/nccl:src/include/device.h MAXCHANNELS (v2.20.3)",
                         note="most rings/trees NCCL runs side by side"),
}


def nccl_tuning(name: str) -> float:
    """One constant of NCCL's tuning model (v2.20.3), SI units.

    >>> round(nccl_tuning("ring_simple_hop_nvlink") * 1e6, 1)
    3.4
    """
    fact = NCCL_TUNING.get(name) if isinstance(name, str) else None
    if fact is None:  # not an exact key: normalise it (and name what is allowed)
        fact = NCCL_TUNING[check_choice(name, "name", NCCL_TUNING)]
    return fact.value



#: The algorithms, protocols and kinds of hop of NCCL's per-hop table (hwLat)
#: that :data:`NCCL_TUNING` holds for every combination.
HOP_ALGORITHMS = ("ring", "tree")
HOP_PROTOCOLS = ("ll", "ll128", "simple")
HOP_KINDS = ("nvlink", "pcie", "net")


def nccl_hop_s(algorithm: str, protocol: str, kind: str) -> float:
    """NCCL's planning latency for one hop (hwLat), in seconds.

    Parameters
    ----------
    algorithm : str
        ``"ring"`` or ``"tree"``.
    protocol : str
        ``"ll"``, ``"ll128"`` or ``"simple"``.
    kind : str
        The kind of hop: ``"nvlink"``, ``"pcie"`` or ``"net"``.

    Examples
    --------
    >>> round(nccl_hop_s("ring", "ll", "net") * 1e6, 1)
    2.7
    """
    algorithm = check_choice(algorithm, "algorithm", HOP_ALGORITHMS)
    protocol = check_choice(protocol, "protocol", HOP_PROTOCOLS)
    kind = check_choice(kind, "kind", HOP_KINDS)
    return NCCL_TUNING[f"{algorithm}_{protocol}_hop_{kind}"].value
