"""The roads: a topology turned into directed, bandwidth-limited links and routes.

Every undirected edge of a :mod:`course_lib.topology` graph becomes two
directed links (full duplex: each direction has the edge's per-direction
bandwidth to itself).  A transfer follows the shortest route (fewest links)
and occupies every link of it at once (cut-through, as NVLink and
InfiniBand switches forward); it is delivered ``latency`` after its last byte
leaves.

Two flavours of the same roads:

* **ideal** (``Network(topo)``): link rates and latencies exactly as the
  topology says; a route's latency is the sum of its links' latencies.  This
  is the alpha-beta world of :mod:`course_lib.analytic`.
* **calibrated** (``Network.from_cluster(cluster)``): each link delivers
  what NCCL achieves on it -- the :class:`course_lib.clusters.Cluster`'s own
  per-link rates (NVLink at NCCL's per-link planning rate, PCIe at NCCL's
  planning rate GPU to GPU or at the DMA efficiency GPU to NIC, a NIC at its
  port x the network's efficiency) x the Simple protocol's efficiency -- and a route's
  latency is NCCL's per-hop latency for its kind (NVLink, PCIe or network),
  the same numbers :func:`course_lib.predict.predict_collective` uses.

Chapter 7 (collectives) and chapter 8 (contention).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from ..hardware import calibration, nccl_tuning

__all__ = ["Network"]


class Network:
    """Directed links and routes of a topology.

    Parameters
    ----------
    topo : networkx.Graph
        A topology from :mod:`course_lib.topology` (edges carry
        ``bw_bytes_per_s`` per direction and ``latency_s``).

    Attributes
    ----------
    nodes : list
        Node names; ``index[name]`` is a node's integer id.
    link_bw, link_lat : numpy arrays
        Per directed link: bandwidth (bytes/s, that direction) and latency (s).
    link_names : list of str
        ``"src->dst"`` for each directed link.

    Examples
    --------
    >>> from course_lib.topology import nvswitch_topology
    >>> net = Network(nvswitch_topology(4, gpu="A100"))
    >>> [net.link_names[i] for i in net.route(0, 3)]
    ['0->nvswitch', 'nvswitch->3']
    >>> net.route_bw(0, 3) / 1e9
    300.0
    """

    def __init__(self, topo: nx.Graph):
        if not isinstance(topo, nx.Graph):
            raise TypeError(f"topo must be a networkx.Graph topology, got "
                            f"{type(topo).__name__}")
        self.topo = topo
        self.nodes = list(topo.nodes)
        self.index = {v: i for i, v in enumerate(self.nodes)}
        self.gpus = sorted(v for v, k in topo.nodes(data="kind") if k == "gpu")
        src, dst, bw, lat, kind, names, count = [], [], [], [], [], [], []
        self.link_of: dict[tuple, int] = {}
        for u, v, d in topo.edges(data=True):
            for a, b in ((u, v), (v, u)):
                self.link_of[(a, b)] = len(src)
                src.append(self.index[a])
                dst.append(self.index[b])
                bw.append(float(d["bw_bytes_per_s"]))
                lat.append(float(d.get("latency_s", 0.0)))
                kind.append(d.get("kind", "nvlink"))
                names.append(f"{a}->{b}")
                count.append(d.get("links", 1))
        self.link_count = count  # NVLinks per edge (1 where the edge does not say)
        self.link_src = np.array(src, dtype=np.int64)
        self.link_dst = np.array(dst, dtype=np.int64)
        self.link_bw = np.array(bw, dtype=float)
        self.link_lat = np.array(lat, dtype=float)
        self.link_kind = kind
        self.link_names = names
        self._routes: dict[tuple, tuple] = {}
        self.hop_latency_s: dict[str, float] | None = None  # calibrated mode
        self.cluster = None

    # --- calibrated roads ---------------------------------------------------
    @classmethod
    def from_cluster(cls, cluster, nvls: bool = False, tree: bool = False) -> "Network":
        """The cluster's topology with NCCL-achievable rates and latencies.

        Every rate is the Cluster's own (:mod:`course_lib.clusters`, the rates
        :func:`course_lib.predict.predict_collective` plans with) times the
        Simple protocol's efficiency: an NVLink edge of ``k`` links
        ``cluster.nvlink_bytes_per_s(k)``; a GPU-to-GPU PCIe link (``fabric=
        'pcie'``) ``cluster.pcie_planning_bytes_per_s()``; a GPU-to-NIC PCIe
        link ``cluster.pcie_dma_bytes_per_s()`` (no protocol factor: the NIC's
        own rate below already carries it); a network port
        ``cluster.nic_bw_bytes_per_s()``.  ``nvls=True`` rates NVLink at the
        NVLS efficiency instead (in-switch reduction moves data differently);
        ``tree=True`` rates every GPU link and port at NCCL's tree efficiency
        on top (``nccl_tuning("tree_efficiency")``, as the predictor's tree).

        A calibrated Cluster (:func:`course_lib.calibrating.calibrate`) brings
        its own constants, read the way the predictor reads them: the rates
        above already carry its ``intra_scale`` and NIC rate; the Simple
        efficiency is ``cluster.fitted("simple_efficiency")``; every hop
        latency is NCCL's times ``cluster.latency_scale`` (the network kind's
        extra, :meth:`~course_lib.clusters.Cluster.net_hop_s`, is scaled
        already).

        >>> import course_lib as cl
        >>> from course_lib.clusters import Calibration
        >>> from dataclasses import replace
        >>> c = cl.cluster("H100", nodes=2, nic="NDR")
        >>> slow = replace(c, calibrated=Calibration(latency_scale=3.0))
        >>> a, b = Network.from_cluster(c), Network.from_cluster(slow)
        >>> round(b.hop_latency_s["nvlink"] / a.hop_latency_s["nvlink"], 6)
        3.0
        """
        net = cls(cluster.topology())
        simple = cluster.fitted("simple_efficiency")
        nvlink_eff = calibration("nvls_efficiency") if nvls else simple
        tree_eff = nccl_tuning("tree_efficiency") if tree else 1.0
        rates: dict = {}  # (kind, NVLink count) -> rate: each worked out once

        def rate(kind, links):
            if kind == "nvlink":
                bw = cluster.nvlink_bytes_per_s(links) * nvlink_eff
            elif kind == "pcie" and cluster.fabric == "pcie":
                bw = cluster.pcie_planning_bytes_per_s() * simple
            elif kind == "pcie":
                bw = cluster.pcie_dma_bytes_per_s()
            else:  # a NIC's port: what predict_collective's Simple ring gets from it
                bw = cluster.nic_bw_bytes_per_s() * simple
            gpu_link = kind != "pcie" or cluster.fabric == "pcie"  # not a GPU-NIC hop
            return bw * tree_eff if tree and gpu_link else bw
        for i, kind in enumerate(net.link_kind):
            links = net.link_count[i] if kind == "nvlink" else 1
            key = (kind, links)
            if key not in rates:
                rates[key] = rate(kind, links)
            net.link_bw[i] = rates[key]
        # achieved / planned, of the Simple protocol the roads carry (1 from spec)
        k = cluster.protocol_latency_scale("simple")
        net.hop_latency_s = {kind: nccl_tuning(f"ring_simple_hop_{kind}") * k
                             for kind in ("nvlink", "pcie", "net")}
        # a network step of a TCP-based transport waits longer (hardware.NETWORK;
        # net_hop_s carries the calibrated scale itself)
        net.hop_latency_s["net"] += cluster.net_hop_s("simple")
        net.cluster = cluster
        return net

    # --- routes -------------------------------------------------------------
    def route(self, a, b) -> tuple:
        """Directed link ids from node ``a`` to node ``b`` (fewest links)."""
        key = (a, b)
        r = self._routes.get(key)
        if r is None:
            if a == b:
                raise ValueError(f"a transfer needs two different nodes, got {a!r} twice")
            path = self._two_level_path(a, b) or nx.shortest_path(self.topo, a, b)
            r = tuple(self.link_of[(path[i], path[i + 1])] for i in range(len(path) - 1))
            self._routes[key] = r
        return r

    def _two_level_path(self, a, b):
        g = self.topo.graph
        if "nodes" not in g or not isinstance(a, (int, np.integer)) \
                or not isinstance(b, (int, np.integer)):
            return None
        per, nics = g["gpus_per_node"], g["nics_per_node"]
        na, nb = a // per, b // per
        if na == nb:
            return [a, f"node{na}/nvswitch", b]
        return [a, f"node{na}/nic{(a % per) % nics}", "ib-switch",
                f"node{nb}/nic{(b % per) % nics}", b]

    def route_latency_s(self, a, b) -> float:
        """Latency of a transfer from ``a`` to ``b``: sum of link latencies
        (ideal) or NCCL's hop latency for the route's kind (calibrated)."""
        r = self.route(a, b)
        if self.hop_latency_s is None:
            return float(self.link_lat[list(r)].sum())
        kinds = {self.link_kind[i] for i in r}
        if "network" in kinds:
            return self.hop_latency_s["net"]
        if self.cluster is not None and self.cluster.fabric == "pcie":
            return self.hop_latency_s["pcie"]
        return self.hop_latency_s["nvlink"]

    def route_bw(self, a, b) -> float:
        """Bottleneck bandwidth of the route with nothing else on it, bytes/s."""
        return float(self.link_bw[list(self.route(a, b))].min())

    def pair_table(self, src: np.ndarray, dst: np.ndarray):
        """Routes of many transfers at once.

        Returns ``(pair, links, lat, bw)``: ``pair[i]`` indexes the unique
        (src, dst) pairs; ``links`` is a (pairs x max hops) array of link
        ids padded with -1; ``lat`` and ``bw`` the latency and bottleneck
        bandwidth of each pair.  ``src``/``dst`` are node ids (integers
        into :attr:`nodes`).
        """
        n = len(self.nodes)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        uniq, pair = _unique_pairs(src, dst, n)
        routes = [() if k // n == k % n else self.route(self.nodes[k // n], self.nodes[k % n])
                  for k in uniq.tolist()]  # a node to itself (a compute op): no links
        width = max((len(r) for r in routes), default=1)
        links = np.full((len(routes), width), -1, dtype=np.int64)
        for i, r in enumerate(routes):
            links[i, :len(r)] = r
        # route_latency_s and route_bw of every pair at once (none: 0 s, no limit)
        on = links >= 0
        hop = np.maximum(links, 0)
        bw = np.where(on, self.link_bw[hop], np.inf).min(axis=1)
        if self.hop_latency_s is None and width < 8:
            # numpy sums fewer than 8 numbers one after another, as route_latency_s
            lat = np.where(on, self.link_lat[hop], 0.0).sum(axis=1)
        elif self.hop_latency_s is None:  # long routes: summed pair by pair, the same way
            lat = np.array([float(self.link_lat[list(r)].sum()) if r else 0.0
                            for r in routes])
        else:
            is_net = np.array([k == "network" for k in self.link_kind], dtype=bool)
            local = "pcie" if self.cluster is not None and self.cluster.fabric == "pcie" \
                else "nvlink"
            lat = np.where((on & is_net[hop]).any(axis=1), self.hop_latency_s["net"],
                           self.hop_latency_s[local])
            lat[~on.any(axis=1)] = 0.0
        return pair, links, lat, bw


#: Largest (distinct sources x distinct destinations) grid that
#: :func:`_unique_pairs` marks in a table (one byte and one 8-byte index per
#: cell: 36 MB at most); above it, it sorts.
PAIR_GRID_CELLS = 1 << 22


def _unique_pairs(src: np.ndarray, dst: np.ndarray, n: int):
    """``np.unique(src * n + dst, return_inverse=True)`` without sorting the
    transfers: schedules repeat a few thousand pairs over millions of
    transfers, so the pairs are marked in a table over the nodes that send
    and the nodes that receive (linear in the transfers), and only the
    table's cells are ordered.  Falls back to sorting when that table would
    be larger than ``PAIR_GRID_CELLS``."""
    if len(src) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    s_nodes = np.flatnonzero(np.bincount(src, minlength=n))
    d_nodes = np.flatnonzero(np.bincount(dst, minlength=n))
    ns, nd = len(s_nodes), len(d_nodes)
    if ns * nd > PAIR_GRID_CELLS:
        return np.unique(src * n + dst, return_inverse=True)
    s_pos = np.zeros(n, dtype=np.int64)
    s_pos[s_nodes] = np.arange(ns)
    d_pos = np.zeros(n, dtype=np.int64)
    d_pos[d_nodes] = np.arange(nd)
    cell = s_pos[src] * nd + d_pos[dst]  # ordered as src * n + dst is
    seen = np.zeros(ns * nd, dtype=bool)
    seen[cell] = True
    cells = np.flatnonzero(seen)
    index = np.zeros(ns * nd, dtype=np.int64)
    index[cells] = np.arange(len(cells))
    return s_nodes[cells // nd] * n + d_nodes[cells % nd], index[cell]
