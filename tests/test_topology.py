"""Topologies checked against closed forms derived by hand."""

import itertools

import networkx as nx
import pytest

import course_lib as cl


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
