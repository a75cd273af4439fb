"""Topologies checked against closed forms derived by hand."""

import itertools

import networkx as nx
import pytest

import course_lib as cl
from course_lib import topology


def ring_distance(i, j, n):
    return min(abs(i - j), n - abs(i - j))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 16])
def test_ring_average_hops_is_the_seeds_formula(n):
    expected = sum(ring_distance(i, j, n) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    assert cl.average_hops(cl.ring_topology(n)) == pytest.approx(expected)
    assert cl.diameter(cl.ring_topology(n)) == n // 2


def test_ring_average_hops_tends_to_n_over_4():
    n = 64
    assert cl.average_hops(cl.ring_topology(n)) == pytest.approx(n / 4, rel=0.05)


def test_ring_hops_pairwise():
    t = cl.ring_topology(8)
    for i, j in itertools.product(range(8), repeat=2):
        assert cl.hops(t, i, j) == ring_distance(i, j, 8)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_full_mesh_wiring_grows_as_n_squared(n):
    t = cl.fully_connected_topology(n)
    assert cl.link_count(t) == n * (n - 1) // 2
    assert cl.average_hops(t) == 1.0 and cl.diameter(t) == 1


def test_nvswitch_every_pair_through_one_switch():
    t = cl.nvswitch_topology(8)
    assert cl.average_hops(t) == 2.0
    assert cl.average_hops(t, count="gpu-hops") == 1.0
    # bisection: 4 GPUs' full NVLink bandwidth crosses the cut
    assert cl.bisection_bw_bytes_per_s(t) == pytest.approx(4 * cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s)


def test_cube_mesh_structure():
    t = cl.hybrid_cube_mesh_topology()
    assert all(d == 4 for n, d in t.degree())
    assert all(sum(e["links"] for *_, e in t.edges(n, data=True)) == 6 for n in t.nodes)
    m = cl.hop_matrix(t)
    # each GPU: 4 direct neighbours, 3 at two hops
    for row in m:
        assert sorted(row.tolist()) == [0, 1, 1, 1, 1, 2, 2, 2]
    assert cl.average_hops(t) == pytest.approx((4 * 1 + 3 * 2) / 7)
    p100 = cl.hybrid_cube_mesh_topology("P100")
    assert cl.link_count(p100, physical=True) == 16  # 8 GPUs x 4 links / 2
    with pytest.raises(ValueError, match="gpu"):
        cl.hybrid_cube_mesh_topology("H100")


def test_torus_hops():
    t = cl.torus_2d_topology(4, 4)
    assert cl.diameter(t) == 4
    assert cl.link_count(t) == 32


def test_two_level_hops_and_bisection():
    t = cl.two_level_topology(4, 8, nic="NDR")
    assert len(cl.gpus(t)) == 32
    assert cl.hops(t, 0, 7) == 2      # same node: GPU -> NVSwitch -> GPU
    assert cl.hops(t, 0, 8) == 4      # GPU -> NIC -> switch -> NIC -> GPU
    # devices crossed: the NVSwitch inside a node; NIC, network switch, NIC between
    assert cl.hops(t, 0, 7, count="gpu-hops") == 1
    assert cl.hops(t, 0, 8, count="gpu-hops") == 3
    n, g = 4, 8
    intra_pairs = n * g * (g - 1)
    inter_pairs = n * g * (n * g - g)
    assert cl.average_hops(t) == pytest.approx((2 * intra_pairs + 4 * inter_pairs) / (n * g * (n * g - 1)))
    # closed form for large clusters: half the nodes' NICs
    big = cl.two_level_topology(128, 8)
    assert cl.bisection_bw_bytes_per_s(big) == pytest.approx(64 * 8 * 50e9)


def test_two_level_bisection_exact_equals_closed_form_small():
    t = cl.two_level_topology(2, 4, nic="HDR")
    assert cl.bisection_bw_bytes_per_s(t) == pytest.approx(4 * 25e9)


def test_ring_bisection_is_two_links():
    t = cl.ring_topology(8)
    assert cl.bisection_bw_bytes_per_s(t) == pytest.approx(2 * t.edges[0, 1]["bw_bytes_per_s"])


def test_full_mesh_bisection():
    t = cl.fully_connected_topology(4)
    link = t.edges[0, 1]["bw_bytes_per_s"]
    assert cl.bisection_bw_bytes_per_s(t) == pytest.approx(4 * link)  # (n/2)^2 links


def test_every_edge_has_a_sourced_bandwidth_and_kind():
    for t in (cl.ring_topology(4), cl.nvswitch_topology(4), cl.two_level_topology(2, 2),
              cl.hybrid_cube_mesh_topology()):
        for u, v, d in t.edges(data=True):
            assert d["kind"] in ("nvlink", "pcie", "network")
            assert d["bw_bytes_per_s"] > 0 and d["latency_s"] > 0


def test_bad_input():
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        cl.ring_topology(1)
    with pytest.raises(ValueError, match="a must be a GPU"):
        cl.hops(cl.ring_topology(4), 9, 0)
    with pytest.raises(TypeError, match="topo"):
        cl.average_hops("ring")
    with pytest.raises(ValueError, match="nics_per_node"):
        cl.two_level_topology(2, 4, nics_per_node=5)
    with pytest.raises(ValueError, match="exact_limit"):
        cl.bisection_bw_bytes_per_s(cl.ring_topology(32))
    with pytest.raises(ValueError, match="count"):
        cl.hops(cl.ring_topology(4), 0, 1, count="metres")
    with pytest.raises(ValueError, match="no GPU"):
        cl.average_hops(nx.Graph())


def test_build_topology_by_name():
    assert cl.build_topology("ring", n=5).number_of_edges() == 5
    with pytest.raises(ValueError, match="kind"):
        cl.build_topology("hypercube")


# --- a ring's hops share links (chapter 6, issue 30) ---------------------------
def test_ring_over_two_nodes_with_one_nic_each_shares_the_nic():
    """[0, 4, 1, 5] on two nodes with one NIC each: every hop crosses the network, two
    leave each NIC and two arrive at it, so each gets half the port (the old model gave
    every hop the whole port)."""
    t = cl.two_level_topology(2, 4, nics_per_node=1)
    flows = cl.ring_link_flows(t, [0, 4, 1, 5])
    for node in (0, 1):
        assert flows[(f"node{node}/nic0", "ib-switch")] == 2
        assert flows[("ib-switch", f"node{node}/nic0")] == 2
    port = cl.nic("NDR").bw_per_dir_bytes_per_s
    assert cl.ring_bottleneck_bw_bytes_per_s(t, [0, 4, 1, 5]) == pytest.approx(port / 2)
    # packed in one node the NIC is not used and the ring keeps NVLink's full rate
    assert cl.ring_bottleneck_bw_bytes_per_s(t, [0, 1, 2, 3]) == pytest.approx(
        cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s)


def test_ring_with_a_nic_per_gpu_shares_nothing():
    t = cl.two_level_topology(2, 4)
    ranks = [0, 4, 1, 5]
    assert max(cl.ring_link_flows(t, ranks).values()) == 1
    assert cl.ring_bottleneck_bw_bytes_per_s(t, ranks) == min(
        cl.path_bottleneck_bw_bytes_per_s(t, a, b) for a, b in zip(ranks, ranks[1:] + ranks[:1]))


def test_ring_routes_share_the_ways_of_a_tie():
    """On a ring of 4, [0, 2, 1, 3] has two hops of two links with a choice of side each;
    they take different sides when that leaves each more, and every hop's share is what
    its most loaded link gives it."""
    t = cl.ring_topology(4)
    ranks = [0, 2, 1, 3]
    routes = cl.ring_routes(t, ranks)
    assert [len(r) - 1 for r in routes] == [cl.hops(t, a, b) for a, b in
                                           zip(ranks, ranks[1:] + ranks[:1])]
    flows = cl.ring_link_flows(t, ranks)
    b = t.edges[0, 1]["bw_bytes_per_s"]
    assert cl.ring_bottleneck_bw_bytes_per_s(t, ranks) == pytest.approx(
        b / max(flows.values()))
    with pytest.raises(ValueError, match="GPUs of the topology"):
        cl.ring_routes(t, [0, 9])


# --- chapter 6 ------------------------------------------------------------------
def _exhaustive_bisection(topo):
    ranks = cl.gpus(topo)
    edges = [(u, v, d["bw_bytes_per_s"]) for u, v, d in topo.edges(data=True)]
    best = float("inf")
    for rest in itertools.combinations(ranks[1:], len(ranks) // 2 - 1):
        left = [ranks[0], *rest]
        right = [r for r in ranks if r not in left]
        best = min(best, topology._min_cut(edges, left, right))
    return best


@pytest.mark.parametrize("nodes,per_node", [(3, 2), (3, 4), (5, 2), (5, 3), (2, 4)])
def test_two_level_bisection_with_odd_node_counts_is_exact(nodes, per_node):
    t = cl.two_level_topology(nodes, per_node)
    fast = topology._two_level_bisection(t)
    assert fast == pytest.approx(_exhaustive_bisection(t))
    if nodes % 2:       # the old closed form, nodes//2 x NICs x rate, was too small
        port = cl.nic("NDR").bw_per_dir_bytes_per_s
        assert fast > (nodes // 2) * per_node * port
