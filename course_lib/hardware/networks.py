"""Network kinds (InfiniBand, RoCEv2, EFA, TCPX, TCPXO): what share of a
port's line rate NCCL's large messages carry, what each network step costs on
top of NCCL's own per-hop estimate, and how NCCL is set up on each.

The ports themselves (line rates) are :data:`course_lib.hardware.parts.NICS`.
Chapter 7, "Predictions that hold on real clusters".
"""

from __future__ import annotations

from ..units import check_choice
from .facts import SRC_MLENG, SRC_NCCL_TUNING_V220, Fact

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
    "EFA_hop_s": Fact(13.2e-6, "s", "n/a",
                      "fitted: dstackai/dstack pull request #3961 (2x p6-b200, 16 ranks, "
                      "all_reduce_perf 8-256 B: 50.6-57.1 us; the model with one kernel "
                      "launch per process and no extra cost gives 28.7 us over 2 network "
                      "steps; median of the six), course_lib/data/validation split=fit", True,
                      note="what one network step over EFA (SRD through the aws-ofi-nccl "
                           "plugin) waits beyond NCCL's InfiniBand estimate"),
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
              "buffsize_bytes": 8 * 2**20,
              "source": "Google Cloud GPUDirect-TCPXO NCCL profile (as TCPX; "
                        "a3plus_tuner_config.textproto; NCCL_BUFFSIZE=8388608 in the "
                        "required NCCL configs of "
                        "GoogleCloudPlatform/container-engine-accelerators "
                        "gpudirect-tcpxo/README.md)"},
}


def network_profile(family: str) -> dict:
    """How NCCL runs on a network kind: ``chooser``, ``algorithms``, ``protocols``.

    >>> network_profile("TCPXO")["protocols"]
    ('simple',)
    """
    return NETWORK_PROFILES[check_choice(family, "family", NETWORK_KINDS)]


