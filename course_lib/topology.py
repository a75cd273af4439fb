"""The road map: GPU topologies as networkx graphs, and the questions we ask of them.

Builders are nouns (``ring_topology(8)``), queries are verb phrases
(``average_hops(topo)``).  A topology is a :class:`networkx.Graph` whose
GPU nodes are the integers ``0 .. n_gpus-1`` (the ranks) and whose other
nodes are switches and NICs, named by strings (``"nvswitch"``,
``"node0/nvswitch"``, ``"nic3"``, ``"ib-switch"``).  Every node has a
``kind`` attribute (``"gpu"``, ``"nvswitch"``, ``"nic"``, ``"switch"``);
every edge has

* ``kind`` -- ``"nvlink"``, ``"pcie"`` or ``"network"``,
* ``links`` -- how many physical links the edge bundles,
* ``bw_bytes_per_s`` -- the edge's bandwidth **per direction** (all its links),
* ``latency_s`` -- an indicative per-traversal latency from the catalog.

**Hops.** ``hops`` counts the links a message crosses on the shortest route.
Through a switch that is two (in and out): in an NVSwitch box every pair of
GPUs is 2 links apart, through one switch.  The seed articles' "one hop
through NVSwitch" counts *devices crossed*; ``hops(..., count="gpu-hops")``
gives that view: one for the NVSwitch inside a server, three (NIC, network
switch, NIC) between servers.

Taught in chapter 6 (the road map).

Examples
--------
>>> average_hops(ring_topology(8))
2.2857142857142856
>>> diameter(ring_topology(8)), link_count(ring_topology(8))
(4, 8)
>>> hops(nvswitch_topology(8), 0, 5), hops(nvswitch_topology(8), 0, 5, count="gpu-hops")
(2, 1)
"""

from __future__ import annotations

import itertools
import math

import networkx as nx

from .hardware import gpu as _gpu
from .hardware import latency_s as _latency_s
from .hardware import nic as _nic
from .hardware import pcie_bw_per_dir_bytes_per_s
from .units import check_choice, check_int

__all__ = [
    "ring_topology", "fully_connected_topology", "torus_2d_topology",
    "hybrid_cube_mesh_topology", "nvswitch_topology", "two_level_topology",
    "gpus", "hops", "hop_matrix", "average_hops", "diameter", "link_count",
    "bisection_bw_bytes_per_s", "TOPOLOGY_BUILDERS", "build_topology",
]

_HOP_COUNTS = ("links", "gpu-hops")
#: The largest GPU count a builder accepts (the simulator goes to 16,384 ranks).
MAX_GPUS = 65_536


def _per_link_bw(gpu_name: str) -> float:
    return _gpu(gpu_name).nvlink_per_link_per_dir_bytes_per_s


def _new(name: str, gpu_name: str) -> nx.Graph:
    g = nx.Graph(name=name, gpu=_gpu(gpu_name).name)
    return g


def _add_gpus(g: nx.Graph, n: int, **attrs) -> None:
    for r in range(n):
        g.add_node(r, kind="gpu", **attrs)


def _nvlink_edge(g, a, b, links, gpu_name):
    g.add_edge(a, b, kind="nvlink", links=links,
               bw_bytes_per_s=links * _per_link_bw(gpu_name),
               latency_s=_latency_s("nccl_hop_nvlink"))


def ring_topology(n: int, links_per_pair: int = 1, gpu: str = "H100") -> nx.Graph:
    """GPUs on a ring: each talks directly to its two neighbours.

    Parameters
    ----------
    n : int
        Number of GPUs, >= 2.
    links_per_pair : int
        NVLink links between neighbours (bundled into one edge).
    gpu : str
        GPU model from the catalog; sets the per-link bandwidth.

    Notes
    -----
    Hop distance d(i, j) = min(|i - j|, n - |i - j|); average hops
    (1 / n(n-1)) sum d(i,j) ~ n/4; diameter floor(n/2); n links;
    bisection 2 x link bandwidth.  Chapter 6.

    >>> ring_topology(4).number_of_edges()
    4
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_GPUS)
    links_per_pair = check_int(links_per_pair, "links_per_pair", minimum=1, maximum=18)
    g = _new(f"ring({n})", gpu)
    _add_gpus(g, n)
    for r in range(n):
        _nvlink_edge(g, r, (r + 1) % n, links_per_pair, gpu)
    return g


def fully_connected_topology(n: int, links_per_pair: int = 1,
                             gpu: str = "A100") -> nx.Graph:
    """Every GPU wired to every other (an NVLink full mesh, e.g. 4 GPUs).

    Notes
    -----
    n(n-1)/2 links -- the wiring grows as n squared, which is why boxes of
    more than a handful of GPUs use switches.  Every pair is 1 hop.  Chapter 6.

    >>> link_count(fully_connected_topology(8))
    28
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_GPUS)
    links_per_pair = check_int(links_per_pair, "links_per_pair", minimum=1, maximum=18)
    g = _new(f"full-mesh({n})", gpu)
    _add_gpus(g, n)
    for a, b in itertools.combinations(range(n), 2):
        _nvlink_edge(g, a, b, links_per_pair, gpu)
    return g


def torus_2d_topology(rows: int, cols: int, gpu: str = "H100") -> nx.Graph:
    """A 2-D torus of ``rows x cols`` GPUs (wrap-around grid, like TPU pods).

    >>> average_hops(torus_2d_topology(4, 4)) == 32 / 15
    True
    """
    rows = check_int(rows, "rows", minimum=2, maximum=256)
    cols = check_int(cols, "cols", minimum=2, maximum=256)
    g = _new(f"torus({rows}x{cols})", gpu)
    _add_gpus(g, rows * cols)
    for r in range(rows):
        for c in range(cols):
            a = r * cols + c
            for b in (r * cols + (c + 1) % cols, ((r + 1) % rows) * cols + c):
                if a != b and not g.has_edge(a, b):
                    _nvlink_edge(g, a, b, 1, gpu)
    return g


#: DGX-1 (V100) hybrid cube-mesh: two fully connected quads (0-3, 4-7) plus
#: links i <-> i+4; with V100's six links some pairs get two.  Link counts per
#: pair follow ``nvidia-smi topo -m`` on a DGX-1V as recorded in
#: microsoft/msccl-tools:tests/test_topologies.py (each GPU: 6 links; the
#: doubled links form one 8-GPU ring, the single links another).
_CUBE_MESH_V100 = {
    (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2,
    (1, 2): 2, (1, 3): 1, (1, 5): 2,
    (2, 3): 2, (2, 6): 1,
    (3, 7): 1,
    (4, 5): 1, (4, 6): 1, (4, 7): 2,
    (5, 6): 2, (5, 7): 1,
    (6, 7): 2,
}


def hybrid_cube_mesh_topology(gpu: str = "V100") -> nx.Graph:
    """The DGX-1's 8-GPU hybrid cube-mesh (no switch; not all-to-all).

    Parameters
    ----------
    gpu : str
        ``"V100"`` (6 links per GPU, some pairs doubled) or ``"P100"``
        (4 links per GPU, one per connected pair).

    Notes
    -----
    Each GPU reaches 4 others directly; the remaining 3 are 2 hops away.
    Chapter 6.

    >>> t = hybrid_cube_mesh_topology()
    >>> sorted(d for _, d in t.degree())[:1], diameter(t)
    ([4], 2)
    >>> sum(d["links"] for _, _, d in t.edges(data=True))  # 8 GPUs x 6 links / 2
    24
    """
    name = _gpu(gpu).name
    if name not in ("V100", "P100"):
        raise ValueError(f"gpu must be 'V100' or 'P100' for a DGX-1 cube-mesh; "
                         f"got {gpu!r}")
    g = _new("hybrid-cube-mesh(8)", name)
    _add_gpus(g, 8)
    for (a, b), links in _CUBE_MESH_V100.items():
        _nvlink_edge(g, a, b, links if name == "V100" else 1, name)
    return g


def nvswitch_topology(n: int = 8, gpu: str = "H100") -> nx.Graph:
    """GPUs that all plug into one NVSwitch fabric (drawn as one hub).

    Each GPU's edge to the hub carries all its NVLink links
    (H100: 18 x 25 GB/s = 450 GB/s per direction).  Every pair of GPUs is
    2 links (1 switch crossing) apart and can use its full bandwidth.

    >>> t = nvswitch_topology(8)
    >>> t.edges[0, "nvswitch"]["bw_bytes_per_s"] / 1e9
    450.0
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_GPUS)
    rec = _gpu(gpu)
    g = _new(f"nvswitch({n})", rec.name)
    _add_gpus(g, n)
    g.add_node("nvswitch", kind="nvswitch")
    for r in range(n):
        g.add_edge(r, "nvswitch", kind="nvlink", links=rec.nvlink_links,
                   bw_bytes_per_s=rec.nvlink_bw_per_dir_bytes_per_s,
                   latency_s=_latency_s("nccl_hop_nvlink"))
    return g


def two_level_topology(nodes: int, gpus_per_node: int = 8, gpu: str = "H100",
                       nic: str = "NDR", nics_per_node: int | None = None) -> nx.Graph:
    """A cluster: NVSwitch inside each node, NICs and one network switch between.

    Parameters
    ----------
    nodes : int
        Number of nodes (servers), >= 1.
    gpus_per_node : int
        GPUs in each node's NVLink domain.
    gpu, nic : str
        Catalog names; ``nic`` sets the port rate (``"NDR"`` = 400 Gb/s).
    nics_per_node : int, optional
        Defaults to one NIC per GPU (as on DGX H100); fewer NICs are shared
        by GPU ``i`` -> NIC ``i % nics_per_node``.

    Notes
    -----
    GPU ``r`` lives in node ``r // gpus_per_node``.  Inside a node a route is
    GPU -> node's NVSwitch -> GPU (2 links); between nodes it is
    GPU -> NIC (PCIe) -> network switch -> NIC -> GPU (4 links).  The single
    network switch is non-blocking (a fat tree drawn as one box).  Chapter 6.

    >>> t = two_level_topology(2, 4)
    >>> hops(t, 0, 1), hops(t, 0, 4)
    (2, 4)
    """
    nodes = check_int(nodes, "nodes", minimum=1, maximum=MAX_GPUS)
    gpus_per_node = check_int(gpus_per_node, "gpus_per_node", minimum=1, maximum=576)
    if nics_per_node is None:
        nics_per_node = gpus_per_node
    nics_per_node = check_int(nics_per_node, "nics_per_node", minimum=1,
                              maximum=gpus_per_node)
    if nodes * gpus_per_node > MAX_GPUS:
        raise ValueError(f"nodes x gpus_per_node must be <= {MAX_GPUS}, got "
                         f"{nodes * gpus_per_node}")
    rec, port = _gpu(gpu), _nic(nic)
    g = _new(f"two-level({nodes}x{gpus_per_node})", rec.name)
    g.graph.update(nodes=nodes, gpus_per_node=gpus_per_node, nic=port.name,
                   nics_per_node=nics_per_node)
    g.add_node("ib-switch", kind="switch")
    for node in range(nodes):
        hub = f"node{node}/nvswitch"
        g.add_node(hub, kind="nvswitch", node=node)
        for k in range(nics_per_node):
            nic_name = f"node{node}/nic{k}"
            g.add_node(nic_name, kind="nic", node=node)
            g.add_edge(nic_name, "ib-switch", kind="network", links=1,
                       bw_bytes_per_s=port.bw_per_dir_bytes_per_s,
                       latency_s=_latency_s("nccl_hop_net"))
        for local in range(gpus_per_node):
            r = node * gpus_per_node + local
            g.add_node(r, kind="gpu", node=node, local_rank=local)
            if gpus_per_node > 1:
                g.add_edge(r, hub, kind="nvlink", links=rec.nvlink_links,
                           bw_bytes_per_s=rec.nvlink_bw_per_dir_bytes_per_s,
                           latency_s=_latency_s("nccl_hop_nvlink"))
            g.add_edge(r, f"node{node}/nic{local % nics_per_node}", kind="pcie",
                       links=1, bw_bytes_per_s=pcie_bw_per_dir_bytes_per_s(rec.pcie_gen),
                       latency_s=_latency_s("nccl_hop_pcie"))
        if gpus_per_node == 1:
            g.remove_node(hub)
    return g


# --- queries ----------------------------------------------------------------
def _check_topo(topo) -> nx.Graph:
    if not isinstance(topo, nx.Graph):
        raise TypeError(f"topo must be a topology (a networkx.Graph from a "
                        f"*_topology builder), got {type(topo).__name__}")
    if not gpus(topo):
        raise ValueError("topo has no GPU nodes (nodes with kind='gpu')")
    return topo


def gpus(topo: nx.Graph) -> list:
    """The GPU nodes (ranks) of a topology, sorted."""
    if not isinstance(topo, nx.Graph):
        raise TypeError(f"topo must be a networkx.Graph, got {type(topo).__name__}")
    return sorted(n for n, k in topo.nodes(data="kind") if k == "gpu")


def _gpu_hop_weight(topo):
    # A direct GPU-GPU link is one hop; every device in between (an NVSwitch,
    # a NIC, a network switch) is one hop: half a hop in, half a hop out.
    def weight(a, b, _d):
        ka, kb = topo.nodes[a].get("kind"), topo.nodes[b].get("kind")
        if ka == "gpu" and kb == "gpu":
            return 1.0
        return 0.5 * ((ka != "gpu") + (kb != "gpu"))
    return weight


def hops(topo: nx.Graph, a, b, count: str = "links") -> int:
    """Hops between GPUs ``a`` and ``b`` on the shortest route.

    Parameters
    ----------
    topo : networkx.Graph
        A topology from one of the builders.
    a, b : int
        GPU ranks.
    count : {"links", "gpu-hops"}
        ``"links"`` counts every link crossed (a switch costs two);
        ``"gpu-hops"`` counts the *devices* crossed between the two GPUs
        (an NVSwitch, a NIC, a network switch: one each; a direct GPU-GPU
        link: one), the way the seed articles count "one hop through
        NVSwitch".  Between servers that is NIC, network switch, NIC: 3.

    >>> hops(ring_topology(8), 0, 6)
    2
    """
    topo = _check_topo(topo)
    count = check_choice(count, "count", _HOP_COUNTS)
    members = set(gpus(topo))
    for name, v in (("a", a), ("b", b)):
        if v not in members:
            raise ValueError(f"{name} must be a GPU of the topology "
                             f"(0..{len(members) - 1}), got {v!r}")
    if a == b:
        return 0
    if count == "links":
        return nx.shortest_path_length(topo, a, b)
    return int(round(nx.shortest_path_length(topo, a, b,
                                             weight=_gpu_hop_weight(topo))))


def hop_matrix(topo: nx.Graph, count: str = "links"):
    """The n x n matrix of hop counts between GPUs (a numpy array)."""
    import numpy as np

    topo = _check_topo(topo)
    count = check_choice(count, "count", _HOP_COUNTS)
    ranks = gpus(topo)
    index = {r: i for i, r in enumerate(ranks)}
    m = np.zeros((len(ranks), len(ranks)), dtype=int)
    weight = None if count == "links" else _gpu_hop_weight(topo)
    for src in ranks:
        if weight is None:
            lengths = nx.single_source_shortest_path_length(topo, src)
        else:
            lengths = nx.single_source_dijkstra_path_length(topo, src, weight=weight)
        for dst in ranks:
            m[index[src], index[dst]] = int(round(lengths[dst]))
    return m


def average_hops(topo: nx.Graph, count: str = "links") -> float:
    """Average hop count over ordered pairs of distinct GPUs.

    Notes
    -----
    The seeds' formula: ``(1 / (N (N-1))) * sum_{i != j} d(i, j)``.
    For a ring d(i, j) = min(|i-j|, N-|i-j|), which averages to about N/4.

    >>> average_hops(fully_connected_topology(4))
    1.0
    """
    m = hop_matrix(topo, count)
    n = m.shape[0]
    if n < 2:
        return 0.0
    return float(m.sum()) / (n * (n - 1))


def diameter(topo: nx.Graph, count: str = "links") -> int:
    """The largest hop count between two GPUs.

    >>> diameter(ring_topology(7))
    3
    """
    return int(hop_matrix(topo, count).max())


def link_count(topo: nx.Graph, physical: bool = False) -> int:
    """Number of cables: point-to-point connections (edges) of the topology.

    With ``physical=True`` bundles count every link they hold (a DGX-1V
    has 24 NVLink links over 16 GPU pairs).
    """
    topo = _check_topo(topo)
    if physical:
        return int(sum(d.get("links", 1) for _, _, d in topo.edges(data=True)))
    return topo.number_of_edges()


def bisection_bw_bytes_per_s(topo: nx.Graph, exact_limit: int = 16) -> float:
    """Bisection bandwidth, per direction: the least bandwidth across any cut
    that splits the GPUs into two equal halves.

    For up to ``exact_limit`` GPUs every balanced split is tried and the
    switches and NICs are placed on whichever side makes the cut smallest
    (a minimum s-t cut).  Larger two-level clusters use the closed form
    ``nodes/2 x nics_per_node x NIC rate`` (odd node counts round down);
    other large topologies raise ValueError.

    >>> bisection_bw_bytes_per_s(ring_topology(8)) / ring_topology(8).edges[0, 1]["bw_bytes_per_s"]
    2.0
    """
    topo = _check_topo(topo)
    exact_limit = check_int(exact_limit, "exact_limit", minimum=2, maximum=24)
    ranks = gpus(topo)
    n = len(ranks)
    hubs = [v for v in topo.nodes if v not in set(ranks)]
    if len(hubs) == 1 and topo.number_of_edges() == n and all(
            topo.has_edge(r, hubs[0]) for r in ranks):
        # One switch, every GPU wired only to it (a star): the cheapest
        # balanced cut leaves the switch with the larger half and cuts the
        # n//2 thinnest GPU links -- exact, without trying every split.
        spokes = sorted(topo.edges[r, hubs[0]]["bw_bytes_per_s"] for r in ranks)
        return float(sum(spokes[: n // 2]))
    if n > exact_limit:
        if "nodes" in topo.graph and topo.graph["nodes"] > 1:
            return _two_level_bisection(topo)
        raise ValueError(f"bisection of {n} GPUs is only computed exactly up to "
                         f"exact_limit={exact_limit}; pass a larger exact_limit "
                         f"(at most 24) or use a two-level topology")
    others = [v for v in topo.nodes if v not in set(ranks)]
    best = float("inf")
    first, rest = ranks[0], ranks[1:]
    for left_rest in itertools.combinations(rest, n // 2 - 1):
        left = {first, *left_rest}
        right = set(ranks) - left
        if not others:
            cut = sum(d["bw_bytes_per_s"] for u, v, d in topo.edges(data=True)
                      if (u in left) != (v in left))
        else:
            flow = nx.Graph()
            for u, v, d in topo.edges(data=True):
                flow.add_edge(u, v, capacity=d["bw_bytes_per_s"])
            for r in left:
                flow.add_edge("_S", r, capacity=float("inf"))
            for r in right:
                flow.add_edge(r, "_T", capacity=float("inf"))
            cut, _ = nx.minimum_cut(flow.to_directed(), "_S", "_T")
        best = min(best, cut)
    return float(best)


def _min_cut(edges, left, right) -> float:
    """Least capacity separating ``left`` from ``right`` in an undirected graph
    given as ``(u, v, capacity)`` triples."""
    flow = nx.Graph()
    for u, v, c in edges:
        flow.add_edge(u, v, capacity=c)
    for r in left:
        flow.add_edge("_S", r, capacity=float("inf"))
    for r in right:
        flow.add_edge(r, "_T", capacity=float("inf"))
    cut, _ = nx.minimum_cut(flow.to_directed(), "_S", "_T")
    return float(cut)


def _two_level_bisection(topo: nx.Graph) -> float:
    """Bisection of a two-level cluster without trying every split.

    The best balanced split puts whole nodes on each side and, when half the
    GPUs is not a whole number of nodes (an odd node count), splits one node:
    ``a = (n//2) // G`` whole nodes and ``h = (n//2) % G`` GPUs of one more
    node on the left.  A whole node reaches the rest only through the network
    switch, at most ``c_node`` (its least cut towards the switch: NIC ports or
    PCIe links), so it is replaced by one edge of that capacity; the split
    node keeps its NVSwitch, NICs and links.  One small minimum cut then gives
    the value.  With one NIC per GPU (the default, as on a DGX H100) this is
    exact -- the tests check it against trying every split; when GPUs share
    NICs unevenly a split spread over several nodes can be cheaper, and the
    value is an upper bound (small clusters are tried exhaustively instead).
    """
    nodes, per_node = topo.graph["nodes"], topo.graph["gpus_per_node"]
    a, h = divmod(nodes * per_node // 2, per_node)

    def node_edges(k):
        members = {v for v, d in topo.nodes(data=True) if d.get("node") == k}
        return members, [(u, v, d["bw_bytes_per_s"]) for u, v, d in topo.edges(data=True)
                         if u in members or v in members]

    members0, edges0 = node_edges(0)
    ranks0 = [v for v in members0 if topo.nodes[v].get("kind") == "gpu"]
    c_node = _min_cut(edges0, ranks0, ["ib-switch"])
    whole_right = nodes - a - (1 if h else 0)
    edges = [("_L", "ib-switch", a * c_node), ("ib-switch", "_R", whole_right * c_node)]
    left, right = ["_L"], ["_R"]
    if not h:
        return _min_cut(edges, left, right)
    members, split_edges = node_edges(a)
    local = sorted(v for v in members if topo.nodes[v].get("kind") == "gpu")
    # which h GPUs of the split node go left matters only through the NIC
    # they share: try them in rank order and grouped by NIC (and every
    # choice when there are few)
    k = topo.graph["nics_per_node"]
    orders = [local, sorted(local, key=lambda r: (r % per_node % k, r))]
    choices = [o[:h] for o in orders]
    if math.comb(per_node, h) <= 256:
        choices += [list(c) for c in itertools.combinations(local, h)]
    return min(_min_cut(edges + split_edges, left + c, right + [r for r in local if r not in c])
               for c in choices)


TOPOLOGY_BUILDERS = {
    "ring": ring_topology,
    "full-mesh": fully_connected_topology,
    "torus": torus_2d_topology,
    "cube-mesh": hybrid_cube_mesh_topology,
    "nvswitch": nvswitch_topology,
    "two-level": two_level_topology,
}


def build_topology(kind: str, **kwargs) -> nx.Graph:
    """Build a topology by name: ``build_topology("ring", n=8)``.

    >>> build_topology("nvswitch", n=4).number_of_nodes()
    5
    """
    kind = check_choice(kind, "kind", TOPOLOGY_BUILDERS)
    return TOPOLOGY_BUILDERS[kind](**kwargs)


# --- one port budget, three maps (chapter 6) -----------------------------------
__all__ += ["gpu_links", "equal_port_budget_topologies"]


def gpu_links(topo: nx.Graph, rank) -> int:
    """The physical links that end at GPU ``rank`` (the ports it uses).

    >>> gpu_links(nvswitch_topology(8), 0), gpu_links(ring_topology(8, links_per_pair=9), 0)
    (18, 18)
    """
    topo = _check_topo(topo)
    if rank not in set(gpus(topo)):
        raise ValueError(f"rank must be a GPU of the topology, got {rank!r}")
    return int(sum(d.get("links", 1) for *_, d in topo.edges(rank, data=True)))


def equal_port_budget_topologies(n: int = 8, gpu: str = "H100") -> dict:
    """A ring, a full mesh and an NVSwitch box of ``n`` GPUs that spend the same
    budget: each GPU's NVLink ports (18 on an H100), as many as each map can use.

    The ring puts ``L // 2`` links to each neighbour, the mesh ``L // (n - 1)``
    to each other GPU (the rest of the ports idle), the switch box all ``L``
    into the switches: the fair way to compare their bisections (one link per
    pair against 18 per GPU compares different budgets).  Chapter 6.

    >>> t = equal_port_budget_topologies(8)
    >>> {k: (gpu_links(v, 0), link_count(v, physical=True)) for k, v in t.items()}
    {'ring': (18, 72), 'full mesh': (14, 56), 'NVSwitch': (18, 144)}
    """
    n = check_int(n, "n", minimum=3, maximum=MAX_GPUS)
    ports = _gpu(gpu).nvlink_links
    if ports < n - 1:
        raise ValueError(f"a full mesh of {n} GPUs needs {n - 1} NVLink ports per GPU; "
                         f"{_gpu(gpu).name} has {ports}")
    return {"ring": ring_topology(n, links_per_pair=ports // 2, gpu=gpu),
            "full mesh": fully_connected_topology(n, links_per_pair=ports // (n - 1), gpu=gpu),
            "NVSwitch": nvswitch_topology(n, gpu=gpu)}


# --- routes and placement (chapter 6) ----------------------------------------
__all__ += ["path_bottleneck_bw_bytes_per_s", "ring_bottleneck_bw_bytes_per_s"]


def path_bottleneck_bw_bytes_per_s(topo: nx.Graph, a, b) -> float:
    """Bandwidth of the slowest link on the best shortest route from GPU
    ``a`` to GPU ``b``, per direction, bytes/s.

    Among the shortest routes (fewest links) the widest one is taken.

    Notes
    -----
    ``B(a, b) = max over shortest paths P of min over edges e in P of B_e``.
    Chapter 6 (topology-aware placement).

    >>> t = two_level_topology(2, 4)
    >>> path_bottleneck_bw_bytes_per_s(t, 0, 1) / 1e9, path_bottleneck_bw_bytes_per_s(t, 0, 4) / 1e9
    (450.0, 50.0)
    """
    topo = _check_topo(topo)
    members = set(gpus(topo))
    for name, v in (("a", a), ("b", b)):
        if v not in members:
            raise ValueError(f"{name} must be a GPU of the topology, got {v!r}")
    if a == b:
        return float("inf")
    best = 0.0
    for path in nx.all_shortest_paths(topo, a, b):
        bw = min(topo.edges[u, v]["bw_bytes_per_s"] for u, v in zip(path, path[1:]))
        best = max(best, bw)
    return float(best)


def _check_ring(topo, ranks) -> list:
    topo = _check_topo(topo)
    ranks = list(ranks)
    if len(ranks) < 2:
        raise ValueError(f"ranks must hold at least 2 GPUs, got {ranks!r}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks must not repeat a GPU, got {ranks!r}")
    members = set(gpus(topo))
    for r in ranks:
        if r not in members:
            raise ValueError(f"ranks must be GPUs of the topology, got {r!r}")
    return ranks


def ring_routes(topo: nx.Graph, ranks) -> list[list]:
    """The route each hop of a ring over ``ranks`` takes, all hops sending at once.

    Hop ``i`` goes from ``ranks[i]`` to ``ranks[i+1]`` (the last back to the
    first) on a shortest route (fewest links).  Where several shortest routes
    tie, each hop in ring order takes the one that leaves it the most
    bandwidth given the hops already routed (a link's per-direction rate
    divided by the flows that cross it in that direction, this one included),
    then the widest: the way a router would spread them.  Chapter 6.

    >>> ring_routes(two_level_topology(2, 4), [0, 4])[0]
    [0, 'node0/nic0', 'ib-switch', 'node1/nic0', 4]
    """
    ranks = _check_ring(topo, ranks)
    load: dict = {}
    routes = []
    for a, b in zip(ranks, ranks[1:] + ranks[:1]):
        def score(path):
            steps = list(zip(path, path[1:]))
            shared = min(topo.edges[u, v]["bw_bytes_per_s"] / (load.get((u, v), 0) + 1)
                         for u, v in steps)
            return shared, min(topo.edges[u, v]["bw_bytes_per_s"] for u, v in steps)
        best = max(nx.all_shortest_paths(topo, a, b), key=score)
        for u, v in zip(best, best[1:]):
            load[(u, v)] = load.get((u, v), 0) + 1
        routes.append(best)
    return routes


def ring_link_flows(topo: nx.Graph, ranks) -> dict:
    """How many of a ring's hops cross each link, per direction.

    Returns ``{(u, v): flows}`` for every link direction ``u -> v`` the ring's
    routes (:func:`ring_routes`) use.  Chapter 6: a ring ``[0, 4, 1, 5]`` over
    two nodes with one NIC each sends two of its four hops out of each NIC.

    >>> flows = ring_link_flows(two_level_topology(2, 4, nics_per_node=1), [0, 4, 1, 5])
    >>> flows[("node0/nic0", "ib-switch")], flows[("ib-switch", "node0/nic0")]
    (2, 2)
    """
    flows: dict = {}
    for path in ring_routes(topo, ranks):
        for u, v in zip(path, path[1:]):
            flows[(u, v)] = flows.get((u, v), 0) + 1
    return flows


def ring_bottleneck_bw_bytes_per_s(topo: nx.Graph, ranks) -> float:
    """Bandwidth each hop of a ring over ``ranks`` (in that order) gets, at the
    slowest hop, bytes/s per direction, with every hop sending at once.

    A ring collective over a group of GPUs runs at the pace of its slowest
    neighbour-to-neighbour route: placing a tensor-parallel group inside one
    NVLink domain or across servers changes this number, not the GPUs.  A link
    that several hops cross in the same direction (a NIC two GPUs share) is
    divided among them: each gets ``B_e / f_e``.

    Notes
    -----
    ``B_ring = min_i min_{e in route_i} B_e / f_e`` with the routes of
    :func:`ring_routes` and ``f_e`` the hops crossing ``e`` in that direction
    (:func:`ring_link_flows`).  Where no link is shared this is the slowest
    hop's :func:`path_bottleneck_bw_bytes_per_s`.  Chapter 6.

    >>> t = two_level_topology(2, 4)
    >>> ring_bottleneck_bw_bytes_per_s(t, [0, 1, 2, 3]) / 1e9
    450.0
    >>> ring_bottleneck_bw_bytes_per_s(t, [0, 4, 1, 5]) / 1e9
    50.0
    >>> ring_bottleneck_bw_bytes_per_s(two_level_topology(2, 4, nics_per_node=1), [0, 4, 1, 5]) / 1e9
    25.0
    """
    routes = ring_routes(topo, ranks)
    flows: dict = {}
    for path in routes:
        for u, v in zip(path, path[1:]):
            flows[(u, v)] = flows.get((u, v), 0) + 1
    return float(min(topo.edges[u, v]["bw_bytes_per_s"] / flows[(u, v)]
                     for path in routes for u, v in zip(path, path[1:])))


__all__ += ["ring_routes", "ring_link_flows"]


# --- PCIe-only boxes and NVLink bridges (added for course_lib.predict) --------
def pcie_topology(n: int = 8, gpu: str = "H100") -> nx.Graph:
    """GPUs with no NVLink: every GPU on one PCIe switch / host bridge (a hub).

    Parameters
    ----------
    n : int
        Number of GPUs, >= 2.
    gpu : str
        Catalog GPU; its PCIe generation sets the x16 per-direction rate.

    Notes
    -----
    Each GPU's edge to the hub is one x16 link (Gen4: 31.5 GB/s per
    direction); GPU-to-GPU traffic crosses two links.  A real box may hang the
    GPUs under two CPU sockets, which halves the bisection: this builder is the
    best case.  Chapter 3.

    >>> t = pcie_topology(4, gpu="A100")
    >>> round(t.edges[0, "pcie-switch"]["bw_bytes_per_s"] / 1e9, 1), hops(t, 0, 3)
    (31.5, 2)
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_GPUS)
    rec = _gpu(gpu)
    g = _new(f"pcie({n})", rec.name)
    _add_gpus(g, n)
    g.add_node("pcie-switch", kind="switch")
    for r in range(n):
        g.add_edge(r, "pcie-switch", kind="pcie", links=1,
                   bw_bytes_per_s=pcie_bw_per_dir_bytes_per_s(rec.pcie_gen),
                   latency_s=_latency_s("nccl_hop_pcie"))
    return g


#: GPUs sold with an NVLink bridge for pairs, and the links one bridge set
#: carries: A100 PCIe and H100 NVL pairs reach 600 GB/s bidirectional
#: (12 links x 25 GB/s per direction) over three bridges (NVIDIA A100 PCIe
#: and H100 NVL product briefs / datasheets).
BRIDGE_LINKS = {"A100": 12, "H100": 12}


def bridge_topology(gpu: str = "A100") -> nx.Graph:
    """Two PCIe-card GPUs joined by an NVLink bridge (and by PCIe through the host).

    >>> t = bridge_topology("A100")
    >>> t.edges[0, 1]["bw_bytes_per_s"] / 1e9
    300.0
    """
    rec = _gpu(gpu)
    if rec.name not in BRIDGE_LINKS:
        raise ValueError(f"gpu must be one of {sorted(BRIDGE_LINKS)} for an NVLink "
                         f"bridge pair; got {gpu!r}")
    g = _new("bridge(2)", rec.name)
    _add_gpus(g, 2)
    _nvlink_edge(g, 0, 1, BRIDGE_LINKS[rec.name], rec.name)
    return g


TOPOLOGY_BUILDERS["pcie"] = pcie_topology
TOPOLOGY_BUILDERS["bridge"] = bridge_topology
__all__ += ["pcie_topology", "bridge_topology", "BRIDGE_LINKS"]


# ---------------------------------------------------------------------------
# NCCL's double binary tree (how a tree AllReduce spans the nodes)
# ---------------------------------------------------------------------------
__all__ += ["double_binary_tree", "tree_sends_per_node"]


def _btree_parents(n: int) -> dict:
    """NCCL's binary tree (src/graph/trees.cc, ncclGetBtree): rank 0 is the
    root, odd ranks are leaves, the parent of r clears r's lowest set bit and
    sets the next one (or just clears it when that falls outside)."""
    parent = {0: None}
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < n else r ^ bit
    return parent


def double_binary_tree(n: int) -> list:
    """NCCL's two complementary binary trees over ``n`` members (nodes or ranks).

    Returns two ``{member: parent}`` dicts (the root's parent is ``None``).
    Tree 1 is NCCL's binary tree; tree 2 is its mirror image (``r -> n-1-r``)
    for even ``n`` -- then every member is interior in at most one tree -- or
    tree 1 shifted by one for odd ``n`` (``NVIDIA/nccl:src/graph/trees.cc``).
    Each tree carries half of the data.

    >>> one, two = double_binary_tree(4)
    >>> one, two
    ({0: None, 1: 2, 2: 0, 3: 2}, {3: None, 2: 1, 1: 3, 0: 1})
    """
    n = check_int(n, "n", minimum=1, maximum=MAX_GPUS)
    base = _btree_parents(n)
    trees = [base]
    m = [n - 1 - i for i in range(n)] if n % 2 == 0 else [(i + 1) % n for i in range(n)]
    trees.append({m[v]: (None if p is None else m[p]) for v, p in base.items()})
    return trees


def tree_sends_per_node(n: int) -> float:
    """Bytes the busiest member of a double binary tree sends per byte of an
    AllReduce (reduce up, broadcast down, each tree on half the data).

    A member sends its half up to its parent (unless root) and down to each
    child, in both trees: 1 with 2 members (each is the other's only peer),
    up to 2 with more (inner in one tree, a leaf in the other) -- NCCL's
    planning assumes 2 beyond two nodes (``bwInter/2`` in ``tuning.cc``);
    with 3 nodes the busiest sends 1.5.

    >>> [tree_sends_per_node(k) for k in (1, 2, 3, 4, 8)]
    [0.0, 1.0, 1.5, 2.0, 2.0]
    """
    n = check_int(n, "n", minimum=1, maximum=MAX_GPUS)
    sends = [0.0] * n
    for parent in double_binary_tree(n):
        for v, p in parent.items():
            if p is not None:  # v sends its half up, p sends it back down
                sends[v] += 0.5
                sends[p] += 0.5
    return max(sends)
