"""The words and numbers drawn in the city maps, close-ups and collectives
(captions, legends, labels, formulas) are the ones the models compute, and
they fit the drawing: each test pins a fault found in a drawing the notebooks
or explorers show."""

import xml.etree.ElementTree as ET

import pytest

import course_lib as cl
from course_lib import hardware
from course_lib.draw import collectives as C
from course_lib.draw.city import _tw, city_map, copy_path
from course_lib.explorers import ch03_crossover, ch07_allreduce


SVG = "{http://www.w3.org/2000/svg}"


def root(d):
    return ET.fromstring(d.svg)


def with_class(d, cls):
    return [e for e in root(d).iter() if cls in (e.get("class") or "").split()]


def texts(d):
    return ["".join(e.itertext()) for e in root(d).iter(f"{SVG}text")]


def alltext(d):
    return " ".join(texts(d))


# --- two-level AllReduce: the machine's N, shared NICs ---------------------------
@pytest.mark.parametrize("nodes,nics", [(16, 8), (16, 1), (2, 2), (2, 8)])
def test_hierarchical_formula_uses_the_machines_nodes(nodes, nics):
    clu = cl.cluster("H100", nodes=nodes, nic="NDR", nics_per_node=nics)
    g = clu.gpus_per_node
    drawn = min(nodes, C.MAX_DRAWN_NODES)
    words = alltext(C.hierarchical(drawn, g, step=2, cluster=clu))
    # each GPU sends 2(N-1)/N x S/g over the network, N = the machine's nodes
    assert f"= {2 * (nodes - 1)}/{nodes * g} S over the network" in words
    if nodes > drawn:
        wrong = f"= {2 * (drawn - 1)}/{drawn * g} S over the network"
        assert wrong not in words
        head = alltext(C.hierarchical(drawn, g, step=0, cluster=clu))
        assert f"({drawn} of {nodes} drawn)" in head
    # the per-GPU network rate: the node's NICs shared by its GPUs
    per_gpu = cl.format_bandwidth(clu.inter_bw_bytes_per_s() / g)
    assert f"network {per_gpu} per GPU" in words


@pytest.mark.parametrize("nics", [1, 2, 4])
def test_hierarchical_does_not_claim_a_rail_per_gpu_when_nics_are_shared(nics):
    clu = cl.cluster("H100", nodes=2, nic="NDR", nics_per_node=nics)
    g = clu.gpus_per_node
    head = alltext(C.hierarchical(2, g, step=0, cluster=clu))
    assert "one rail (network) per GPU" not in head
    assert f"share {nics} NIC" in head
    # with a NIC per GPU the drawing keeps its rail per GPU
    full = cl.cluster("H100", nodes=2, nic="NDR")
    assert "one rail (network) per GPU" in alltext(C.hierarchical(2, g, step=0, cluster=full))


# --- chapter 7: the algorithm drawn is the algorithm chosen ----------------------
ONE_NODE = [s for s, (kw, _) in ch07_allreduce.SYSTEMS.items() if kw.get("nodes", 1) == 1]


MULTI = [s for s, (kw, _) in ch07_allreduce.SYSTEMS.items() if kw.get("nodes", 1) > 1]


@pytest.mark.parametrize("system", ONE_NODE)
def test_tree_in_one_node_is_drawn_as_a_chain_not_a_ring(system):
    data = ch07_allreduce.compute("allreduce", "tree", system, 2.0 ** 30)
    assert data["prediction"].algorithm == "tree"
    d = ch07_allreduce.diagram(data)
    clu = cl.cluster(**ch07_allreduce.SYSTEMS[system][0])
    g = clu.gpus_per_node
    assert "Ring" not in d.title and "chain" in d.title
    edges = with_class(d, "ic-tree-edge")
    assert len(edges) == g - 1                       # one chain: g - 1 links
    pairs = {(int(e.get("data-child")), int(e.get("data-parent"))) for e in edges}
    assert pairs == {(v, v - 1) for v in range(1, g)}
    assert all(e.get("data-road") == clu.intra_link_kind for e in edges)
    # the first reduce step: only the tail sends, to its neighbour
    sends = [(int(e.get("data-src")), int(e.get("data-dst"))) for e in with_class(d, "ic-send")]
    assert sends == [(g - 1, g - 2)]


def test_chain_steps_match_the_prediction_models_bytes():
    for g in (2, 4, 8):
        s = C.chain_steps(g)
        assert s["last_step"] == 2 * (g - 1)
        # one chain moves S up and S down each link; over g rotated heads a GPU
        # sends 2 (g-1)/g S, the figure predict's tree uses inside a node
        assert sum(s["sends_per_node"]) / g == pytest.approx(2 * (g - 1) / g)
        assert s["have"][g - 1][0][0] == g           # the head holds the full sum
        assert all(h == g for h in s["have"][-1][0])  # and then every GPU does


@pytest.mark.parametrize("system", MULTI)
def test_nvls_across_nodes_says_the_network_is_in_it(system):
    data = ch07_allreduce.compute("allreduce", "nvls", system, 2.0 ** 30)
    d = ch07_allreduce.diagram(data)
    clu = cl.cluster(**ch07_allreduce.SYSTEMS[system][0])
    marks = with_class(d, "ic-nvls-nodes")
    assert len(marks) == 1 and int(marks[0].get("data-nodes")) == clu.nodes
    words = alltext(d)
    assert f"One node of {clu.nodes}" in words and "NVLS_TREE" in words
    assert "high-speed rail" in words                # the network in the legend
    # one node alone: no such words
    single = C.nvls(clu.gpus_per_node, step=1)
    assert not with_class(single, "ic-nvls-nodes")


@pytest.mark.parametrize("n", [2, 4, 8, 12])
def test_nvswitch_reaches_every_gpus_road(n):
    d = C.nvls(n, step=1)
    sw = [e for g in with_class(d, "ic-switch") for e in g.iter(f"{SVG}rect")][0]
    x0, w = float(sw.get("x")), float(sw.get("width"))
    for g in with_class(d, "ic-gpu"):
        r = next(g.iter(f"{SVG}rect"))
        cx = float(r.get("x")) + float(r.get("width")) / 2
        assert x0 <= cx <= x0 + w, f"GPU {g.get('data-rank')}'s road misses the switch"


# --- the city map: the network a NIC really is ----------------------------------
@pytest.mark.parametrize("nic", ["NDR", "RoCE-400", "EFA-400", "TCPX-200", "TCPXO-200"])
def test_city_legend_names_the_network_kind(nic):
    port = hardware.nic(nic)
    d = city_map(cl.cluster("H100", 8, 2, "nvswitch", nic), max_gpus=4)
    legend = " ".join("".join(e.itertext()) for g in with_class(d, "ic-legend")
                      for e in g.iter(f"{SVG}text"))
    rail = next(t for t in legend.split("high-speed rail = ")[1:])
    is_rdma = port.family in ("InfiniBand", "RoCEv2")
    assert rail.startswith("RDMA network") == is_rdma
    assert ("InfiniBand / RoCE" in rail) is False    # one network, not a list of two
    family_word = {"InfiniBand": "InfiniBand", "RoCEv2": "RoCEv2", "EFA": "SRD",
                   "TCPX": "TCP", "TCPXO": "TCP"}[port.family]
    assert family_word in rail


@pytest.mark.parametrize("nic", ["TCPX-200", "TCPXO-200"])
def test_tcpx_route_is_not_called_gpudirect_rdma(nic):
    d = city_map(cl.cluster("H100", 8, 2, "nvswitch", nic), route="rdma", max_gpus=4)
    words = alltext(d)
    assert "GPUDirect RDMA" not in words
    assert f"GPUDirect-{hardware.nic(nic).family}" in words
    ndr = alltext(city_map(cl.cluster("H100", 8, 2, "nvswitch", "NDR"), route="rdma",
                           max_gpus=4))
    assert "GPUDirect RDMA" in ndr


# --- captions fit the drawing --------------------------------------------------
@pytest.mark.parametrize("gpu", ["H100", "A100", "P100"])
def test_route_captions_fit_the_explorer_width(gpu):
    data = ch03_crossover.compute(gpu, 18, 2.0 ** 23)
    d = ch03_crossover.diagram(data)
    width = float(root(d).get("width"))
    caps = [e for e in with_class(d, "ic-caption")]
    assert caps
    for e in caps:
        s = "".join(e.itertext())
        x = float(e.get("x"))
        bold = 1.1 if e.get("font-weight") == "bold" else 1.0
        assert x + bold * _tw(s, 12) <= width, f"caption runs off the drawing: {s!r}"
    # nothing lost by the wrapping: the PCIe leg's rate is still in the caption
    pcie = cl.format_bandwidth(hardware.pcie_bw_per_dir_bytes_per_s(
        hardware.gpu(gpu).pcie_gen))
    assert f"{pcie} per direction" in " ".join("".join(e.itertext()) for e in caps)


# --- copy close-up: measured only where measured ---------------------------------
@pytest.mark.parametrize("gen", [3, 4, 5, 6])
def test_copy_rate_is_called_measured_only_on_the_measured_generation(gen):
    d = copy_path("pinned", gpu=None, pcie_gen=gen)
    words = alltext(d)
    eff = hardware.calibration("pcie_dma_efficiency")
    rate = cl.format_bandwidth(hardware.pcie_bw_per_dir_bytes_per_s(gen) * eff)
    assert f"one copy: {rate} per direction" in words
    measured_gen = hardware.gpu("H200").pcie_gen
    assert ("(measured)" in words) == (gen == measured_gen)
    if gen != measured_gen:
        assert f"× {eff:.2f}" in words and f"measured on Gen{measured_gen}" in words


# --- chapter 7: a ring over nodes is not a ring of network links ------------------
@pytest.mark.parametrize("system", MULTI)
def test_ring_over_nodes_runs_on_nvlink_inside_and_the_network_between(system):
    data = ch07_allreduce.compute("allreduce", "ring", system, 2.0 ** 30)
    assert data["prediction"].algorithm == "ring"
    d = ch07_allreduce.diagram(data)
    clu = cl.cluster(**ch07_allreduce.SYSTEMS[system][0])
    roads = with_class(d, "ic-road")
    kinds = [e.get("data-kind") for e in roads]
    n = len(with_class(d, "ic-gpu"))
    assert len(roads) == n
    hops = [(int(e.get("data-src")), int(e.get("data-dst"))) for e in roads
            if e.get("data-kind") == "network"]
    assert hops and len(hops) < n                    # most hops stay inside a node
    gpn = n // len(hops)
    assert hops == [(r, (r + 1) % n) for r in range(gpn - 1, n, gpn)]
    assert set(kinds) == {"network", clu.intra_link_kind}
    note = " ".join("".join(e.itertext()) for e in with_class(d, "ic-ring-nodes"))
    assert f"one ring of {clu.n_ranks}, {clu.nodes} of its hops on the network" in note


@pytest.mark.parametrize("nic", ["NDR", "EFA-400", "TCPX-200"])
def test_two_level_legend_names_the_clusters_network(nic):
    clu = cl.cluster("H100", nodes=2, nic=nic)
    d = C.hierarchical(2, 8, step=2, cluster=clu)
    legend = " ".join("".join(e.itertext()) for g in with_class(d, "ic-legend")
                      for e in g.iter(f"{SVG}text"))
    family = hardware.nic(nic).family
    assert ("RDMA network" in legend) == (family in ("InfiniBand", "RoCEv2"))
    assert "InfiniBand / RoCE" not in legend
    # with no machine the drawing keeps the general name
    plain = " ".join("".join(e.itertext()) for g in with_class(C.hierarchical(2, 4, step=2),
                                                                "ic-legend")
                     for e in g.iter(f"{SVG}text"))
    assert "InfiniBand / RoCE" in plain


@pytest.mark.parametrize("nic", ["NDR", "RoCE-400", "EFA-400", "TCPXO-200"])
def test_road_map_legend_names_the_graphs_network(nic):
    topo = cl.two_level_topology(2, 4, nic=nic)
    d = cl.draw.topology_map(topo)
    legend = " ".join("".join(e.itertext()) for g in with_class(d, "ic-legend")
                      for e in g.iter(f"{SVG}text"))
    family = hardware.nic(nic).family
    assert ("RDMA network" in legend) == (family in ("InfiniBand", "RoCEv2"))
    assert "…" not in legend                         # the name fits, nothing cut off


@pytest.mark.parametrize("nic_path,far", [("switch", False), ("host", True), ("remote", True)])
def test_gpudirect_beyond_pxb_says_nccl_stages_through_host_memory(nic_path, far):
    kw = {"cpu": "intel-spr"} if nic_path == "remote" else {}
    clu = cl.cluster("H100", 8, 2, "pcie", "NDR", nic_path=nic_path, **kw)
    words = alltext(city_map(clu, route="rdma", max_gpus=4))
    assert ("NCCL_NET_GDR_LEVEL=PXB" in words) == far


@pytest.mark.parametrize("gpu,article", [("A100", "an"), ("H100", "an"), ("V100", "a"),
                                         ("B200", "a")])
def test_two_way_tracks_reads_as_english_and_halves_the_datasheet(gpu, article):
    g = hardware.gpu(gpu)
    words = alltext(C.two_way_tracks(gpu))
    one = g.nvlink_per_link_per_dir_bytes_per_s * g.nvlink_links
    assert (f"“{cl.format_bandwidth(2 * one)} NVLink” on {article} {gpu} is two one-way "
            f"tracks of {cl.format_bandwidth(one)}") in words


def _overflow(d):
    """Texts whose estimated extent leaves the drawing (x, anchor, width in px)."""
    width = float(root(d).get("width"))
    out = []
    for e in root(d).iter(f"{SVG}text"):
        s = "".join(e.itertext())
        size = float(e.get("font-size") or 12)
        w = _tw(s, size) * (1.08 if e.get("font-weight") == "bold" else 1.0)
        x = float(e.get("x"))
        lo = {"start": x, "end": x - w}.get(e.get("text-anchor"), x - w / 2)
        if lo < -1 or lo + w > width + 1:
            out.append(s)
    return out


@pytest.mark.parametrize("nodes,nics,step", [(2, 1, 0), (2, 1, 2), (16, 1, 0), (16, 8, 2),
                                             (2, 8, 2)])
def test_two_level_text_stays_inside_the_drawing(nodes, nics, step):
    clu = cl.cluster("H100", nodes=nodes, nic="NDR", nics_per_node=nics)
    d = C.hierarchical(min(nodes, C.MAX_DRAWN_NODES), 8, step=step, cluster=clu)
    assert _overflow(d) == []


@pytest.mark.parametrize("nic", ["NDR", "RoCE-400", "TCPXO-200", "EFA-100"])
def test_network_close_up_names_the_port_in_full(nic):
    from course_lib.draw.city import network_path

    d = network_path("rdma", nic=nic)
    words = texts(d)
    assert words.count(f"NIC ({nic})") == 2          # both cities' stations, uncut
    assert not any("…" in w for w in words)


@pytest.mark.parametrize("call,name", [
    (lambda: C.ring_allreduce(8, step=1, gpus_per_node=3), "gpus_per_node"),
    (lambda: C.ring_allreduce(8, step=1, gpus_per_node="x"), "gpus_per_node"),
    (lambda: C.ring_allreduce(8, step=1, cluster=5), "cluster"),
    (lambda: C.nvls(8, step=1, nodes=0), "nodes"),
    (lambda: C.tree_chain(1), "n"),
    (lambda: C.tree_chain(4, road="rail"), "road"),
    (lambda: C.tree_chain(4, step=7), "step"),
])
def test_new_parameters_refuse_bad_input_by_name(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
