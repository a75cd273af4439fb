"""Chapter 6's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch06.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/06_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).

Bandwidths here are spec (line) rates: 25 GB/s per NVLink 4 link per direction, the
NDR port's 400 Gb/s; the chapter compares maps, not NCCL's achieved rates.

>>> v = values()
>>> v["budget_ring_bis"], v["budget_mesh_bis"], v["budget_nvs_bis"], v["budget_nvs_links"]
('450 GB/s', '800 GB/s', '1.8 TB/s', '144')
>>> v["place_spread"], v["place_one_nic"], v["place_one_nic_flows"]
('50 GB/s', '25 GB/s', '2')
"""

from __future__ import annotations

from ..hardware import gpu, system
from ..topology import (average_hops, bisection_bw_bytes_per_s, equal_port_budget_topologies,
                        fully_connected_topology, gpu_links, link_count,
                        path_bottleneck_bw_bytes_per_s, ring_bottleneck_bw_bytes_per_s,
                        ring_link_flows, ring_routes, ring_topology, torus_2d_topology,
                        two_level_topology)
from ..units import format_bandwidth

#: The chapter's example: a budget of 8 GPUs; a tensor-parallel group of 4 on 2 nodes x 4.
N, NODES, PER_NODE = 8, 2, 4
PACKED, SPREAD = [0, 1, 2, 3], [0, 4, 1, 5]


def _x(ratio: float) -> str:
    return f"{ratio:.2g}×"


def _network_hops(topo, ranks) -> int:
    """The hops of a ring over ``ranks`` whose route crosses the network switch."""
    return sum(any(topo.nodes[v].get("kind") == "switch" for v in path)
               for path in ring_routes(topo, ranks))


def values() -> dict[str, str]:
    h100 = gpu("H100")
    out = {"mesh_links": str(link_count(fully_connected_topology(N))),
           "dgx2_nvswitches": str(system("DGX-2").nvswitches),
           "dgx2_per_board": str(system("DGX-2").nvswitches // 2),
           "dgxh100_nvswitches": str(system("DGX H100").nvswitches),
           "h100_links": str(h100.nvlink_links),
           "h100_bw": format_bandwidth(h100.nvlink_bw_per_dir_bytes_per_s),
           "nvlink_link": format_bandwidth(h100.nvlink_per_link_per_dir_bytes_per_s)}

    # one budget, three maps: every H100's 18 NVLink ports
    budget = equal_port_budget_topologies(N, "H100")
    ring, mesh, nvs = budget["ring"], budget["full mesh"], budget["NVSwitch"]
    bis = {k: bisection_bw_bytes_per_s(t) for k, t in budget.items()}
    out.update({
        "budget_ring_lpp": str(ring.edges[0, 1]["links"]),
        "budget_mesh_lpp": str(mesh.edges[0, 1]["links"]),
        "budget_mesh_ports": str(gpu_links(mesh, 0)),
        "budget_mesh_idle": str(h100.nvlink_links - gpu_links(mesh, 0)),
        "budget_ring_links": str(link_count(ring, physical=True)),
        "budget_mesh_links": str(link_count(mesh, physical=True)),
        "budget_nvs_links": str(link_count(nvs, physical=True)),
        "budget_ring_bis": format_bandwidth(bis["ring"]),
        "budget_mesh_bis": format_bandwidth(bis["full mesh"]),
        "budget_nvs_bis": format_bandwidth(bis["NVSwitch"]),
        "budget_nvs_over_ring": _x(bis["NVSwitch"] / bis["ring"]),
        "budget_cables_ratio": _x(link_count(nvs, physical=True) / link_count(ring, physical=True)),
        "budget_ring_pair": format_bandwidth(path_bottleneck_bw_bytes_per_s(ring, 0, 1)),
        "budget_mesh_pair": format_bandwidth(path_bottleneck_bw_bytes_per_s(mesh, 0, 1)),
    })

    # placement: a ring of 4 packed in one node or spread over two
    cluster = two_level_topology(NODES, PER_NODE)
    one_nic = two_level_topology(NODES, PER_NODE, nics_per_node=1)
    packed = ring_bottleneck_bw_bytes_per_s(cluster, PACKED)
    spread = ring_bottleneck_bw_bytes_per_s(cluster, SPREAD)
    shared = ring_bottleneck_bw_bytes_per_s(one_nic, SPREAD)
    out.update({
        "place_packed": format_bandwidth(packed),
        "place_spread": format_bandwidth(spread),
        "place_ratio": _x(packed / spread),
        "place_spread_flows": str(max(ring_link_flows(cluster, SPREAD).values())),
        "place_one_nic_flows": str(ring_link_flows(one_nic, SPREAD)[("node0/nic0", "ib-switch")]),
        "place_one_nic": format_bandwidth(shared),
        "place_one_nic_ratio": _x(packed / shared),
        "node_narrowing": _x(path_bottleneck_bw_bytes_per_s(cluster, 0, 1)
                             / path_bottleneck_bw_bytes_per_s(cluster, 0, PER_NODE)),
    })

    # the exercises' answers
    torus, ring16 = torus_2d_topology(4, 4), ring_topology(16)
    b_link = ring16.edges[0, 1]["bw_bytes_per_s"]
    t_avg, r_avg = average_hops(torus), average_hops(ring16)
    t_bis, r_bis = bisection_bw_bytes_per_s(torus), bisection_bw_bytes_per_s(ring16)
    four = two_level_topology(4, 4)
    ring8 = list(range(8))  # two whole nodes, node by node
    out.update({
        "ex1_ring7": f"{average_hops(ring_topology(7)):.1f}",
        "ex2_torus_avg": f"{t_avg:.2f}", "ex2_ring_avg": f"{r_avg:.2f}",
        "ex2_torus_bis": f"{t_bis / b_link:g}", "ex2_ring_bis": f"{r_bis / b_link:g}",
        "ex2_bis_ratio": _x(t_bis / r_bis), "ex2_hop_ratio": _x(t_avg / r_avg),
        "ex2_cable_ratio": _x(link_count(torus) / link_count(ring16)),
        "ex3_hops": str(len(ring8)),
        "ex3_cross_min": str(_network_hops(four, ring8)),
        "ex3_cross_four": str(_network_hops(four, [0, 1, 4, 5, 8, 9, 12, 13])),
        "ex3_cross_interleaved": str(_network_hops(four, [0, 4, 1, 5, 2, 6, 3, 7])),
    })
    return out
