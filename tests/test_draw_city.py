"""The city map, its routes and chapter 6's road maps are drawn FROM the models.

Counts of drawn places are checked against the Cluster or topology they come
from, rates and times in the labels against numbers derived here from the
definitions (lanes x rate x links, the PCIe encoding, T = alpha + legs D / B)
with the catalog's inputs; every drawing must be well-formed SVG with text no
smaller than 11 px and no wider than a notebook; bad input raises a
ValueError or TypeError that names the parameter.
"""

import itertools
import re
import xml.etree.ElementTree as ET

import pytest

import course_lib as cl
from course_lib import draw
from course_lib import topology as T
from course_lib.draw.city import CITY_ROUTES, city_map, copy_path, network_path, route_legs
from course_lib.draw.topology import bisection_cut, topology_map

SVG = "{http://www.w3.org/2000/svg}"


def tree(d):
    return ET.fromstring(d.svg)


def with_class(d, cls):
    return [e for e in tree(d).iter() if cls in (e.get("class") or "").split()]


def texts(d):
    return " ".join("".join(e.itertext()) for e in tree(d).iter(f"{SVG}text"))


def gb(x):
    return cl.format_bandwidth(x * 1e9)


def pcie_per_dir(gen):
    """PCIe x16 per direction from the spec: 16 lanes x GT/s x 128/130 / 8."""
    return 16 * {3: 8e9, 4: 16e9, 5: 32e9}[gen] * 128 / 130 / 8


def nvlink_per_dir(gpu):
    """lanes x lane rate / 8 x links, from the generation table."""
    g = cl.gpu(gpu)
    rec = cl.NVLINK_GENERATIONS[g.nvlink_gen]
    return rec.lanes_per_link_per_dir * rec.lane_rate_gbit_per_s * 1e9 / 8 * g.nvlink_links


def check_readable(d, max_width=900):
    root = tree(d)
    assert float(root.get("width")) <= max_width
    sizes = [float(e.get("font-size")) for e in root.iter(f"{SVG}text")]
    assert sizes and min(sizes) >= 11


# --- the map is drawn from the cluster ----------------------------------------
@pytest.mark.parametrize("gpus,nodes", [(8, 1), (8, 2), (4, 3)])
def test_one_factory_per_gpu_of_every_drawn_city(gpus, nodes):
    c = cl.cluster("H100", gpus, nodes, "nvswitch", "NDR" if nodes > 1 else None)
    d = city_map(c)
    assert len(with_class(d, "ic-gpu")) == gpus * nodes
    assert len(with_class(d, "ic-hbm")) == gpus * nodes
    assert len(with_class(d, "ic-city")) == nodes
    assert len(with_class(d, "ic-nvswitch")) == nodes
    check_readable(d)


def test_cities_beyond_max_nodes_are_summarised():
    c = cl.cluster("H100", 8, 6, "nvswitch", "NDR")
    d = city_map(c, max_nodes=2)
    assert len(with_class(d, "ic-gpu")) == 16
    more = with_class(d, "ic-more-cities")
    assert len(more) == 1 and "4 more cities" in "".join(more[0].itertext())
    assert "32 more factories" in "".join(more[0].itertext())


def test_factories_beyond_max_gpus_are_not_drawn_but_said():
    d = city_map(cl.cluster("B200", 72, fabric="nvswitch"), max_gpus=8)
    assert len(with_class(d, "ic-gpu")) == 8
    assert "72 × B200 (the first 8 drawn)" in texts(d)


@pytest.mark.parametrize("gpu", ["V100", "A100", "H100", "B200"])
def test_maglev_label_is_the_catalogs_links_and_rate(gpu):
    d = city_map(cl.cluster(gpu, 8, fabric="nvswitch"))
    label = " ".join("".join(e.itertext()) for e in with_class(d, "ic-nvlink-label"))
    assert f"NVLink ×{cl.gpu(gpu).nvlink_links}" in label
    assert f"{cl.format_bandwidth(nvlink_per_dir(gpu))} per direction" in label
    assert len(with_class(d, "ic-nvlink")) == 8          # one spoke per factory
    counts = ["".join(e.itertext()) for e in with_class(d, "ic-nvlink-count")]
    assert counts == [f"×{cl.gpu(gpu).nvlink_links}"]     # on the first factory's spoke


def test_changing_the_cluster_changes_the_drawing():
    a = city_map(cl.cluster("A100", 8, fabric="nvswitch"))
    h = city_map(cl.cluster("H100", 8, fabric="nvswitch"))
    assert a.svg != h.svg
    assert "×12" in texts(a) and "×12" not in texts(h)
    assert "GPU 0 · A100" in texts(a) and "GPU 0 · H100" in texts(h)


@pytest.mark.parametrize("fabric,gpu,n,edges", [
    ("mesh", "A100", 4, 6), ("cube-mesh", "V100", 8, 16), ("bridge", "A100", 2, 1),
    ("pcie", "A100", 8, 0)])
def test_maglev_follows_the_fabric(fabric, gpu, n, edges):
    d = city_map(cl.cluster(gpu, n, fabric=fabric))
    assert len(with_class(d, "ic-nvlink")) == edges
    assert ("maglev = NVLink" in texts(d)) == (edges > 0)
    assert not with_class(d, "ic-nvswitch")


def test_mesh_label_gives_the_links_per_pair():
    # A100: 12 links over 3 peers = 4 links a pair, 4 x 25 GB/s per direction
    d = city_map(cl.cluster("A100", 4, fabric="mesh"))
    label = "".join(with_class(d, "ic-nvlink-label")[0].itertext())
    assert "×4 per pair" in label and f"{gb(100)} per direction" in label


@pytest.mark.parametrize("nics,expected", [(0, 16), (4, 8), (1, 2)])
def test_one_rail_station_per_nic(nics, expected):
    d = city_map(cl.cluster("H100", 8, 2, "nvswitch", "NDR", nics_per_node=nics))
    assert len(with_class(d, "ic-nic")) == expected
    assert len(with_class(d, "ic-network-switch")) == 1
    assert "400 Gb/s" in texts(d)          # NDR: the port rate in bits


def test_two_sockets_draw_two_city_halls_and_the_socket_link():
    one = city_map(cl.cluster("A100", 8, fabric="pcie"))
    two = city_map(cl.cluster("A100", 8, fabric="pcie", sockets=2, cpu="intel-skl"))
    assert len(with_class(one, "ic-cpu")) == 1 and not with_class(one, "ic-cpu-link")
    assert len(with_class(two, "ic-cpu")) == 2 and len(with_class(two, "ic-cpu-link")) == 1
    assert len(with_class(two, "ic-pcie-switch")) == 2
    # Skylake UPI in the catalog: 10 GB/s per direction
    assert f"{gb(10)} per direction" in texts(two)


def test_pcie_path_names_the_junction():
    sw = city_map(cl.cluster("A100", 8, fabric="pcie", pcie_path="switch"))
    rc = city_map(cl.cluster("A100", 8, fabric="pcie", pcie_path="host"))
    assert "PCIe switch" in texts(sw) and "root complex" not in texts(sw)
    assert "root complex" in texts(rc)


# --- routes -----------------------------------------------------------------------
CLUSTER2 = cl.cluster("H100", 8, 2, "nvswitch", "NDR")


@pytest.mark.parametrize("route", CITY_ROUTES)
def test_every_route_draws_its_legs_with_the_models_rates(route):
    d = city_map(CLUSTER2, route=route, n_bytes=1e7)
    info = route_legs(CLUSTER2, route)
    assert len(with_class(d, "ic-route-leg")) == len(info["legs"]) >= 1
    assert len(with_class(d, "ic-route-number")) == len(info["legs"])
    caption = " ".join("".join(e.itertext()) for e in with_class(d, "ic-caption"))
    for leg in info["legs"]:
        if leg["bw_bytes_per_s"]:
            assert cl.format_bandwidth(leg["bw_bytes_per_s"]) in caption
    check_readable(d)


def test_staged_route_is_two_pcie_legs_and_the_models_time():
    info = route_legs(CLUSTER2, "p2p-staged")
    b = pcie_per_dir(5)
    assert [leg["kind"] for leg in info["legs"]] == ["pcie", "pcie"]
    assert all(abs(leg["bw_bytes_per_s"] - b) < 1e-6 * b for leg in info["legs"])
    t = cl.latency_s("pcie_staged_p2p") + 2 * 1e7 / b
    d = city_map(CLUSTER2, route="p2p-staged", n_bytes=1e7)
    assert f"= {cl.format_time(t)}" in texts(d)


def test_nvlink_route_uses_the_links_asked_for():
    d = city_map(CLUSTER2, route="p2p-nvlink", nvlink_links=5, n_bytes=1e9)
    assert "NVLink ×5" in texts(d) and f"{gb(125)} per direction" in texts(d)
    assert "= " + cl.format_time(cl.latency_s("nvlink_p2p") + 1e9 / 125e9) in texts(d)


def test_rdma_rate_is_the_smaller_of_port_and_pcie():
    info = route_legs(CLUSTER2, "rdma")
    assert info["bw_bytes_per_s"] == pytest.approx(min(400e9 / 8, pcie_per_dir(5)))
    assert [leg["kind"] for leg in info["legs"]] == ["pcie", "network", "pcie"]
    xdr = cl.cluster("H100", 8, 2, "nvswitch", "XDR")
    assert route_legs(xdr, "rdma")["bw_bytes_per_s"] == pytest.approx(pcie_per_dir(5))


def test_pageable_copy_goes_through_a_staging_buffer():
    info = route_legs(CLUSTER2, "h2d-pageable")
    assert [leg["kind"] for leg in info["legs"]] == ["memory", "pcie"]
    ratio = cl.MEASURED["pageable_over_pinned_x86"].value
    assert info["bw_bytes_per_s"] == pytest.approx(ratio * pcie_per_dir(5))
    pinned = route_legs(CLUSTER2, "h2d-pinned")
    assert len(pinned["legs"]) == 1 and pinned["bw_bytes_per_s"] == pytest.approx(pcie_per_dir(5))


def test_tcp_goes_through_both_kernels():
    info = route_legs(CLUSTER2, "tcp")
    kinds = [leg["kind"] for leg in info["legs"]]
    assert kinds[0] == kinds[-1] == "kernel" and "network" in kinds
    d = city_map(CLUSTER2, route="tcp")
    assert cl.format_time(cl.latency_s("tcp_kernel_path")) in texts(d)


def test_pcie_peer_route_across_sockets_is_limited_by_the_socket_link():
    c = cl.cluster("A100", 8, fabric="pcie", sockets=2, cpu="intel-skl")
    near, far = route_legs(c, "p2p-pcie", pair=(0, 1)), route_legs(c, "p2p-pcie", pair=(0, 5))
    assert near["bw_bytes_per_s"] == pytest.approx(pcie_per_dir(4)) and near["topo_word"] == "PIX"
    assert far["bw_bytes_per_s"] == pytest.approx(10e9) and far["topo_word"] == "SYS"


def test_several_routes_number_their_legs_in_order():
    d = city_map(cl.cluster("H100", 8), route=["p2p-nvlink", "p2p-pcie", "p2p-staged"],
                 pair=(0, 3))
    numbers = ["".join(e.itertext()) for e in with_class(d, "ic-route-number")]
    assert numbers == ["1", "2", "3", "4"]
    assert with_class(d, "ic-route")[0].get("data-route") == "p2p-nvlink p2p-pcie p2p-staged"


def test_highlight_outlines_the_chosen_factories():
    d = city_map(CLUSTER2, highlight=[1, 9])
    strokes = {g.get("data-rank"): g.find(f"{SVG}rect").get("stroke-width")
               for g in with_class(d, "ic-gpu")}
    thick = {r for r, w in strokes.items() if float(w) > 2}
    assert thick == {"1", "9"}


# --- close-ups ----------------------------------------------------------------------
def test_copy_path_pageable_has_the_cpu_copy_and_the_dma():
    pg, pin = copy_path("pageable", pcie_gen=5), copy_path("pinned", pcie_gen=5)
    assert len(with_class(pg, "ic-route-leg")) == 2 and with_class(pg, "ic-staging")
    assert len(with_class(pin, "ic-route-leg")) == 1 and not with_class(pin, "ic-staging")
    measured = pcie_per_dir(5) * cl.calibration("pcie_dma_efficiency")
    assert cl.format_bandwidth(measured) in texts(pin)
    # the staging cost is the H200 run's, size by size -- not one ratio
    for size in (2**20, 2**30):
        ratio = cl.hardware.pageable_over_pinned(size)
        assert f"{ratio:.2g} × pinned at {cl.format_size(size)}" in texts(pg)
    ratio = cl.MEASURED["pageable_over_pinned_x86"].value
    assert cl.format_bandwidth(ratio * measured) not in texts(pg)
    for size in (4096, 2**20, 2**30):
        t = cl.host_copy_time_s(size, 5, "pageable", measured=True)
        assert cl.format_time(t) in texts(copy_path("pageable", pcie_gen=5, n_bytes=size))
    d2h = copy_path("pageable", pcie_gen=5, direction="d2h")
    assert "from the GPU" in texts(d2h)


def test_network_path_tcp_and_rdma():
    tcp, rdma = network_path("tcp"), network_path("rdma", memory="gpu")
    assert len(with_class(tcp, "ic-route-leg")) == 5
    assert len(with_class(rdma, "ic-route-leg")) == 3 and len(with_class(rdma, "ic-bypassed")) == 4
    assert cl.format_time(cl.latency_s("gpudirect_rdma_one_way")) in texts(rdma)
    d = network_path("rdma", distance_m=1000, n_bytes=1e6, nic="EDR")
    t = cl.latency_s("rdma_small_one_way") + 1000 / (0.7 * 299_792_458) + 1e6 / (100e9 / 8)
    assert cl.format_time(t) in texts(d)


# --- chapter 6's road maps ------------------------------------------------------------
TOPOLOGIES = {
    "ring": T.ring_topology(8), "full-mesh": T.fully_connected_topology(6),
    "torus": T.torus_2d_topology(3, 4), "cube-mesh": T.hybrid_cube_mesh_topology(),
    "nvswitch": T.nvswitch_topology(8), "two-level": T.two_level_topology(2, 4),
    "two-level-odd": T.two_level_topology(3, 4), "pcie": T.pcie_topology(4),
    "bridge": T.bridge_topology(),
}


@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
def test_drawn_cut_is_the_models_bisection(name):
    topo = TOPOLOGIES[name]
    model = T.bisection_bw_bytes_per_s(topo, exact_limit=2 if topo.graph.get("nodes", 1) > 1
                                       else 16)
    side, cut, bw = bisection_cut(topo, model)
    assert bw == pytest.approx(model)
    assert sum(topo.edges[e]["bw_bytes_per_s"] for e in cut) == pytest.approx(model)
    ranks = T.gpus(topo)
    assert len([r for r in ranks if r in side]) == len(ranks) // 2
    d = topology_map(topo)
    assert len(with_class(d, "ic-cut-edge")) == len(cut)
    assert len(with_class(d, "ic-gpu")) == len(ranks)
    check_readable(d)


def test_ring_cut_is_two_links():
    topo = T.ring_topology(8)
    _, cut, bw = bisection_cut(topo)
    assert len(cut) == 2 and bw == pytest.approx(2 * topo.edges[0, 1]["bw_bytes_per_s"])
    assert with_class(topology_map(topo), "ic-cut")          # a straight cut line


@pytest.mark.parametrize("name,pair", [("ring", (0, 4)), ("ring", (1, 7)), ("torus", (0, 6)),
                                       ("cube-mesh", (0, 6)), ("two-level", (0, 5))])
def test_route_on_the_road_map_has_the_models_hops(name, pair):
    topo = TOPOLOGIES[name]
    d = topology_map(topo, highlight_pair=pair)
    path = with_class(d, "ic-hop-path")[0]
    assert int(path.get("data-hops")) == T.hops(topo, *pair)
    assert f"{T.hops(topo, *pair)} hop" in texts(d)
    bw = T.path_bottleneck_bw_bytes_per_s(topo, *pair)
    assert f"slowest link {cl.format_bandwidth(bw)}" in texts(d)


def test_ring_hops_by_hand():
    d = topology_map(T.ring_topology(8), highlight_pair=(1, 7), hops_from=0)
    assert with_class(d, "ic-hop-path")[0].get("data-hops") == "2"   # 1 -> 0 -> 7
    counts = ["".join(e.itertext()) for e in with_class(d, "ic-hop-count")]
    assert counts == [str(min(k, 8 - k)) for k in range(8)]


def test_the_routes_caption_is_bold_on_every_line_it_wraps_to():
    """The route's sentence is the caption's bold first line; wrapped at the map's width
    it runs on over two lines, and the second one must not turn regular mid-sentence."""
    d = topology_map(T.ring_topology(8), highlight_pair=(0, 4), width=460)
    captions = with_class(d, "ic-caption")
    route = [e for e in captions if e.get("font-weight") == "bold"]
    said = " ".join("".join(e.itertext()) for e in route)
    assert len(route) >= 2 and "slowest link" in said, [("".join(e.itertext()), e.get("font-weight"))
                                                        for e in captions]
    assert not any("bisection" in "".join(e.itertext()) for e in route)


def test_a_dgx_a100_map_does_not_claim_the_h100_boards_pcie_layout():
    """The simplified-map note said every NVSwitch board gives each GPU a PCIe switch of its
    own (true from HGX H100 on); a DGX A100 shares its switches between GPUs and NICs, so its
    map names no NODE/SYS words and says its PCIe paths are not drawn."""
    def words(d):
        return " ".join(re.sub(r"<[^>]+>", " ", d.svg).split())
    a100 = city_map(cl.cluster("A100", 8), route="p2p-pcie", pair=(0, 1))
    assert "own NIC only" not in words(a100) and "its PCIe paths are not drawn" in words(a100)
    assert route_legs(cl.cluster("A100", 8), "p2p-pcie", pair=(0, 1))["topo_word"] is None
    h100 = city_map(cl.cluster("H100", 8), route="p2p-pcie", pair=(0, 3))
    assert "own NIC only" in words(h100) and "shows NV18 between them" in words(h100)


# --- bad input --------------------------------------------------------------------------
@pytest.mark.parametrize("call,exc,word", [
    (lambda: city_map("H100"), TypeError, "cluster"),
    (lambda: city_map(CLUSTER2, route="teleport"), ValueError, "route"),
    (lambda: city_map(CLUSTER2, route=42), TypeError, "route"),
    (lambda: city_map(CLUSTER2, route="p2p-pcie", pair=(0, 9)), ValueError, "pair"),
    (lambda: city_map(CLUSTER2, route="p2p-pcie", pair=3), TypeError, "pair"),
    (lambda: city_map(cl.cluster("A100", 8, fabric="pcie"), route="p2p-nvlink"), ValueError,
     "p2p-nvlink"),
    (lambda: city_map(cl.cluster("H100", 8), route="rdma"), ValueError, "nodes"),
    (lambda: city_map(CLUSTER2, max_nodes=0), ValueError, "max_nodes"),
    (lambda: city_map(CLUSTER2, width=100), ValueError, "width"),
    (lambda: city_map(CLUSTER2, highlight=[99]), ValueError, "highlight"),
    (lambda: city_map(CLUSTER2, highlight=5), TypeError, "highlight"),
    (lambda: city_map(CLUSTER2, route="p2p-nvlink", nvlink_links=19), ValueError, "nvlink_links"),
    (lambda: city_map(CLUSTER2, route="h2d", memory="paged"), ValueError, "memory"),
    (lambda: city_map(CLUSTER2, n_bytes=-1), ValueError, "n_bytes"),
    (lambda: city_map(cl.cluster("V100", 8, fabric="cube-mesh"), route="p2p-nvlink",
                      pair=(0, 5)), ValueError, "pair"),
    (lambda: copy_path("paged"), ValueError, "memory"),
    (lambda: copy_path(gpu=None), ValueError, "pcie_gen"),
    (lambda: copy_path(pcie_gen=2), ValueError, "pcie_gen"),
    (lambda: copy_path(measured="yes"), TypeError, "measured"),
    (lambda: network_path("udp"), ValueError, "kind"),
    (lambda: network_path("tcp", memory="gpu"), ValueError, "memory"),
    (lambda: network_path(distance_m=-5), ValueError, "distance_m"),
    (lambda: network_path(endpoint="warp"), ValueError, "endpoint"),
    (lambda: topology_map("ring"), TypeError, "topo"),
    (lambda: topology_map(T.ring_topology(4), highlight_pair=(0, 9)), ValueError,
     "highlight_pair"),
    (lambda: topology_map(T.ring_topology(4), highlight_pair=0), TypeError, "highlight_pair"),
    (lambda: topology_map(T.ring_topology(4), count="miles"), ValueError, "count"),
    (lambda: topology_map(T.ring_topology(4), cut="yes"), TypeError, "cut"),
    (lambda: topology_map(T.ring_topology(4), width=5000), ValueError, "width"),
])
def test_bad_input_names_the_parameter(call, exc, word):
    with pytest.raises(exc, match=re.escape(word)):
        call()


# --- every drawing parses, whatever the machine -------------------------------------------
CLUSTERS = [
    cl.cluster("H100", 8, 2, "nvswitch", "NDR"),
    cl.cluster("A100", 4, fabric="mesh"),
    cl.cluster("V100", 8, fabric="cube-mesh"),
    cl.cluster("A100", 2, fabric="bridge"),
    cl.cluster("A100", 8, fabric="pcie", sockets=2, cpu="amd-zen3", pcie_path="host"),
    cl.cluster("H100", 8, 3, "nvswitch", "RoCE-400", nics_per_node=2, nic_path="host"),
    cl.cluster("H100", 8, 2, "nvswitch", "NDR", cpu="intel-spr", nic_path="remote"),
]


@pytest.mark.parametrize("c", CLUSTERS, ids=lambda c: c.describe())
def test_every_cluster_and_route_is_well_formed(c):
    for route in itertools.chain([None], CITY_ROUTES):
        try:
            d = city_map(c, route=route, n_bytes=1e6)
        except ValueError as exc:      # a route this machine does not have: said why
            assert route is not None and re.search(r"route|nodes|pair|NVLink", str(exc))
            continue
        check_readable(d)
        assert d.html().startswith('<div class="ic-diagram"')


def test_exported_from_the_package():
    assert cl.draw.city_map is city_map and draw.topology_map is topology_map


def test_nic_on_the_other_socket_is_limited_by_the_socket_link():
    c = cl.cluster("H100", 8, 2, "nvswitch", "NDR", cpu="intel-spr", nic_path="remote")
    info = route_legs(c, "rdma")
    # Sapphire Rapids UPI in the catalog: 22 GB/s per direction, below NDR's 50 GB/s
    assert info["bw_bytes_per_s"] == pytest.approx(22e9)
    assert info["legs"][0]["bw_bytes_per_s"] == pytest.approx(22e9)
    near = route_legs(cl.cluster("H100", 8, 2, "nvswitch", "NDR"), "rdma")
    assert near["bw_bytes_per_s"] == pytest.approx(50e9)
    d = city_map(c, route="rdma")
    assert len(with_class(d, "ic-cpu")) == 4 and len(with_class(d, "ic-cpu-link")) == 2


def test_single_gpu_routes_need_only_one_gpu():
    one = cl.cluster("H100", 1, 2, "nvswitch", "NDR")
    for route in ("h2d", "d2h", "h2d-pageable", "rdma", "tcp"):
        d = city_map(one, route=route)
        assert len(with_class(d, "ic-gpu")) == 2
    with pytest.raises(ValueError, match="pair"):
        city_map(one, route="p2p-staged")
    with pytest.raises(ValueError, match="pair"):
        city_map(CLUSTER2, route="p2p-pcie", pair=(2, 2))


def test_staging_across_sockets_crosses_the_socket_link():
    c = cl.cluster("A100", 8, fabric="pcie", sockets=2, cpu="intel-skl")
    info = route_legs(c, "p2p-staged", pair=(0, 5))
    pcie = pcie_per_dir(4)
    assert [leg["bw_bytes_per_s"] for leg in info["legs"]] == [pytest.approx(pcie),
                                                                pytest.approx(10e9)]
    t = cl.latency_s("pcie_staged_p2p") + 1e8 / pcie + 1e8 / 10e9
    d = city_map(c, route="p2p-staged", pair=(0, 5), n_bytes=1e8)
    assert f"= {cl.format_time(t)}" in texts(d)
    same = route_legs(c, "p2p-staged", pair=(0, 1))
    assert [leg["bw_bytes_per_s"] for leg in same["legs"]] == [pytest.approx(pcie)] * 2


def test_sockets_follow_the_model_when_not_every_gpu_is_drawn():
    c = cl.cluster("A100", 16, fabric="pcie", sockets=2, cpu="amd-zen3")
    d = city_map(c, max_gpus=8)            # GPUs 0-7 are all on socket 0
    assert len(with_class(d, "ic-pcie-switch")) == 2 and len(with_class(d, "ic-gpu")) == 8


@pytest.mark.parametrize("nic, link", [("NDR", "IP over InfiniBand"), ("HDR", "IP over InfiniBand"),
                                       ("RoCE-400", "Ethernet"), ("EFA-400", "Ethernet")])
def test_tcp_close_up_names_the_link_tcp_really_runs_on(nic, link):
    """TCP is not InfiniBand transport: on an InfiniBand port it runs as IPoIB."""
    port = cl.hardware.nic(nic)
    svg = cl.draw.network_path("tcp", nic=nic).svg
    assert link in svg
    assert f"{port.family} {port.name} rail" not in svg
    assert f"{port.family} {port.name} rail" in cl.draw.network_path("rdma", nic=nic).svg


def test_network_routes_on_the_city_map_give_the_fibre_and_tcps_own_link():
    clu = cl.cluster("A100", gpus_per_node=1, nodes=2, nic="RoCE-100", fabric="pcie")
    for km in (0.01, 50):
        svg = city_map(clu, route=["tcp", "rdma"], distance_m=km * 1e3, pair=(0, 0)).svg
        one_way = cl.format_time(km * 1e3 / (0.7 * 299_792_458))
        assert f"{cl.format_distance(km * 1e3)} of fibre ({one_way} one way)" in svg
        assert "Ethernet (RoCE-100 port) rail" in svg and "RoCEv2 RoCE-100 rail" in svg


def test_a_dgx_node_is_drawn_as_a_simplified_map_with_node_and_sys_pcie_words():
    """Issue 30: the map drew a DGX H100 with one CPU and one PCIe switch for 8 GPUs and
    called GPU 0 -> GPU 3 over PCIe "PIX". The real board has 2 sockets and a switch per
    GPU and its NIC: two GPUs meet at a root complex (NODE) or across sockets (SYS)."""
    c = cl.cluster("H100", 8)
    d = city_map(c, route="p2p-pcie", pair=(0, 3))
    assert "(simplified map)" in texts(d) and "Simplified map:" in texts(d)
    assert "topo: PIX" not in texts(d)
    assert route_legs(c, "p2p-pcie", pair=(0, 3))["topo_word"] == "NODE"
    assert route_legs(c, "p2p-pcie", pair=(0, 5))["topo_word"] == "SYS"
    # a machine drawn as it is (PCIe only, a switch) keeps its own word and no note
    plain = cl.cluster("A100", 8, fabric="pcie")
    assert route_legs(plain, "p2p-pcie")["topo_word"] == "PIX"
    assert "implified" not in texts(city_map(plain))
