"""Collective algorithms as schedules: who sends what to whom, after what.

Each builder appends ops to a :class:`~course_lib.sim.ops.ScheduleBuilder`
and returns the op ids it created.  Sizes follow nccl-tests: ``n_bytes`` is
the buffer S of every rank (AllGather: the output; ReduceScatter: the input).

=================  ==========================================================
builder            what it schedules
=================  ==========================================================
``ring``           ReduceScatter / AllGather / AllReduce on one or more rings
                   (channels), each step's message cut in ``chunks`` pieces;
                   piece j of step s waits only for piece j of step s-1, so
                   pieces pipeline and hide the per-step latency.
``ring_steps``     the same rings as a generator of steps for
                   :func:`~course_lib.sim.steps.run_steps` (no schedule kept).
``ring_orders``    several directed ring orders (Hamiltonian cycles over the
                   direct GPU-GPU links and their reverses) that spread the
                   channels over every NVLink of a mesh or cube-mesh.
``chain``          Broadcast / Reduce as a pipelined chain (NCCL's "ring" for
                   these): ``(n - 2 + chunks)`` piece-times.
``double_tree``    AllReduce on two binary trees, each carrying S/2; every
                   rank is interior in at most one (NCCL's double binary tree);
                   reduce up and broadcast down run concurrently per piece.
``nccl_tree``      NCCL's tree AllReduce on a cluster: per channel a chain
                   through each node's GPUs and a double binary tree over the
                   nodes, pipelined piece by piece (a step schedule).
``in_switch``      AllReduce with the reduction in the NVSwitch (NVLS): every
                   GPU sends its data up once, the switch reduces and sends the
                   sum down.
``hierarchical``   intra-node ReduceScatter, inter-node AllReduce on S/g per
                   rail, intra-node AllGather (``hierarchical_pipelined``: the
                   same, pipelined piece by piece, as on a calibrated cluster).
``direct``         AllToAll: in round k rank r sends S/n to rank r+k.
=================  ==========================================================

With ``overheads`` (a calibrated cluster) each builder adds what
:func:`course_lib.predict.predict_collective` charges: the launch and base
latency before the first sends, and before every send the exposed slice
``min(chunk_bytes, piece) / B``.  Chapter 7.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..topology import double_binary_tree
from ..units import check_int
from .ops import step_columns
from .steps import Step, equal_shares

__all__ = ["Overheads", "ring", "ring_steps", "chain", "double_tree", "nccl_tree",
           "hierarchical_pipelined", "in_switch",
           "hierarchical", "hierarchical_template", "direct", "channel_orders", "ring_orders",
           "MAX_RING_GPUS"]

#: Largest GPU count on which :func:`ring_orders` searches for Hamiltonian
#: cycles over the direct GPU-GPU links (NCCL's own search works on one
#: node, at most 16 GPUs on the machines it plans rings for by search).
MAX_RING_GPUS = 16
_DFS_BUDGET = 20_000  # node expansions per cycle search (keeps a call < ~0.1 s)


@dataclass(frozen=True)
class Overheads:
    """Calibrated costs the builders add (seconds, bytes)."""

    launch_s: float = 0.0        # before the first sends (launch + base latency)
    slice_bytes: float = 0.0     # exposed slice per step (0: none)
    switch_reduce: bool = False  # in-switch reduction costs one piece-time
    slice_pieces: float = 1.0    # a step's share is cut into this many pieces
    # before the exposed slice reaches slice_bytes (Cluster.pipeline_pieces)


def _nid(net, ranks):
    return np.array([net.index[r] for r in ranks], dtype=np.int64)


def channel_orders(net, ranks, channels: int) -> np.ndarray:
    """Ring orders, one per channel (channels x n node ids).

    On a two-level cluster channel k's ring leaves every node from local GPU
    k (so through NIC k) and enters the next node at local GPU k+1, as NCCL
    spreads its rings over the NICs.  With ``channels > 1`` on GPUs wired
    directly to each other (a full NVLink mesh, the DGX-1 cube-mesh, a ring
    or torus) channel k gets the k-th order of :func:`ring_orders` (cycling),
    so the channels together use every NVLink in both directions.  Elsewhere
    (switched fabrics, ``channels=1``) every channel uses the given order.
    """
    g = net.topo.graph
    ranks = list(ranks)
    if "nodes" in g and g["nodes"] > 1 and ranks == list(range(len(ranks))) \
            and len(ranks) == g["nodes"] * g["gpus_per_node"]:
        per = g["gpus_per_node"]
        orders = [[node * per + (ch + 1 + i) % per for node in range(g["nodes"])
                   for i in range(per)] for ch in range(channels)]
        return np.array([_nid(net, o) for o in orders])
    if channels > 1 and ranks == list(net.gpus):
        found = ring_orders(net.topo, channels)
        if len(found) > 1:
            return np.array([_nid(net, found[k % len(found)]) for k in range(channels)])
    return np.tile(_nid(net, ranks), (channels, 1))


def ring_orders(topo, n_rings: int) -> list:
    """Up to ``n_rings`` directed rings over the direct GPU-GPU links, spreading the load.

    NCCL does not run every channel on one ring order: on a machine whose
    GPUs are wired to each other (no switch) its graph search finds several
    rings, and their reverses, that together use every NVLink in both
    directions.  This is a small stand-in for that search: greedily, each
    new undirected Hamiltonian cycle over the direct GPU-GPU links is the
    one whose most loaded link, counted as ``(rings on it) / (links in
    it)``, is least loaded (among equals, the depth-first search prefers
    the links used least so far); it is taken in both directions.  The
    search stops early once every link carries rings exactly in proportion
    to its link count (more rings would repeat the pattern).

    Parameters
    ----------
    topo : networkx.Graph
        A :mod:`course_lib.topology` graph (edges may carry ``links``, the
        NVLink count, default 1).
    n_rings : int
        Most directed rings to return (1..64).

    Returns
    -------
    list of list
        Directed rings, each a list of all GPU names starting at the first
        GPU; ring ``2k+1`` is ring ``2k`` reversed.  Falls back to
        ``[sorted GPUs]`` (one order, routed through switches as before)
        when the GPUs are not directly wired in a Hamiltonian cycle
        (NVSwitch, PCIe, two-level), when there are fewer than 3 or more
        than ``MAX_RING_GPUS`` GPUs, or when ``n_rings`` is 1.
        Deterministic.

    Notes
    -----
    Greedy choice of ring ``k+1``: minimise ``max_e (load_e + 1) / links_e``
    over the cycle's edges ``e`` (a bottleneck search: a depth-first search
    for a Hamiltonian cycle on the links under each threshold in turn, at
    most ``20 000`` expansions each).  With rings carrying equal shares
    ``S/R``, a link's traffic over its bandwidth is proportional to
    ``load_e / links_e``, so balanced loads let the rings use every link of
    a GPU at once.  Chapter 7.

    Examples
    --------
    Four GPUs in a full mesh have three undirected Hamiltonian cycles, each
    edge in two of them; taken both ways they use every directed link twice:

    >>> from collections import Counter
    >>> from course_lib.topology import fully_connected_topology, hybrid_cube_mesh_topology
    >>> rings = ring_orders(fully_connected_topology(4), 8)
    >>> len(rings), rings[1] == [rings[0][0]] + rings[0][:0:-1]
    (6, True)
    >>> use = Counter((r[i], r[(i + 1) % 4]) for r in rings for i in range(4))
    >>> len(use), set(use.values())
    (12, {2})

    On the DGX-1 the doubled links form one 8-ring and the single links
    another; the doubled ring is used twice as often (both directions):

    >>> [r for r in ring_orders(hybrid_cube_mesh_topology(), 8)[::2]]
    [[0, 3, 2, 1, 5, 6, 7, 4], [0, 1, 3, 7, 5, 4, 6, 2], [0, 3, 2, 1, 5, 6, 7, 4]]
    """
    if not isinstance(topo, nx.Graph):
        raise TypeError(f"topo must be a networkx.Graph topology, got "
                        f"{type(topo).__name__}")
    n_rings = check_int(n_rings, "n_rings", minimum=1, maximum=64)
    gpus = [v for v, k in topo.nodes(data="kind") if k == "gpu"]
    if not gpus:
        raise ValueError("topo: has no GPU nodes (kind='gpu')")
    gpus = sorted(gpus)
    fallback = [list(gpus)]
    n = len(gpus)
    if n_rings == 1 or n < 3 or n > MAX_RING_GPUS:
        return fallback
    pos = {v: i for i, v in enumerate(gpus)}
    links = np.zeros((n, n))
    for a, b, d in topo.edges(data=True):
        if a in pos and b in pos and a != b:
            links[pos[a], pos[b]] = links[pos[b], pos[a]] = float(d.get("links", 1))
    if (np.count_nonzero(links, axis=1) < 2).any():
        return fallback
    load = np.zeros((n, n))
    nbrs = [np.flatnonzero(links[i]) for i in range(n)]
    rings: list = []
    while len(rings) < n_rings:
        after = np.where(links > 0, (load + 1) / np.where(links > 0, links, 1), np.inf)
        cycle = None
        for thr in np.unique(after[np.isfinite(after)]):
            cycle = _hamiltonian_cycle(nbrs, after <= thr + 1e-12,
                                       load / np.maximum(links, 1))
            if cycle is not None:
                break
        if cycle is None:
            break
        for i in range(n):
            a, b = cycle[i], cycle[(i + 1) % n]
            load[a, b] += 1
            load[b, a] += 1
        rings.append([gpus[i] for i in cycle])
        rings.append([gpus[cycle[0]]] + [gpus[i] for i in cycle[:0:-1]])
        used = load[links > 0] / links[links > 0]
        if np.all(used == used[0]):  # every link in proportion to its links
            break
    return rings[:n_rings] if rings else fallback


def _hamiltonian_cycle(nbrs, allowed, ratio):
    """A Hamiltonian cycle from node 0 on the ``allowed`` edges (depth first,
    least ``ratio`` first, then lowest id), or None (none, or over budget)."""
    n = len(nbrs)
    order = [sorted((int(b) for b in nbrs[a] if allowed[a, b]),
                    key=lambda b, a=a: (ratio[a, b], b)) for a in range(n)]
    path, on = [0], [False] * n
    on[0] = True
    stack = [iter(order[0])]
    budget = _DFS_BUDGET
    while stack:
        budget -= 1
        if budget < 0:
            return None
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            on[path.pop()] = False
            continue
        if on[nxt]:
            continue
        path.append(nxt)
        on[nxt] = True
        if len(path) == n:
            if allowed[nxt, 0]:
                return path
            on[path.pop()] = False
            continue
        stack.append(iter(order[nxt]))
    return None


def _step_share(net, src, dst):
    """Each send's static equal share of its most contended link when all the
    sends of one step (``src[i] -> dst[i]``) run together, bytes/s.

    Several rings (channels) through one NVLink port share it; rings through
    different NICs do not -- the exposed slice of a step is paid at this rate.
    """
    pair, links, _, _ = net.pair_table(src, dst)
    return equal_shares(links[pair], net.link_bw)[0]


def _ring_shape(orders, collective, n_bytes, chunks):
    """``(orders as R x n, R, n, steps, bytes per piece)`` of rings over ``orders``."""
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    R, n = orders.shape
    if n < 2:
        raise ValueError("a ring needs at least 2 ranks")
    steps = 2 * (n - 1) if collective == "allreduce" else n - 1
    return orders, R, n, steps, n_bytes / (R * n * chunks)


def ring(b, net, orders, collective, n_bytes, chunks=1, overheads=None,
         start_deps=None, queue_base=0, job=0):
    """Rings over ``orders`` (R x n node ids), all stepping together.

    Each ring carries ``n_bytes / R``; AllReduce takes ``2(n-1)`` steps,
    ReduceScatter / AllGather ``n-1``, each step moving ``S/(R n)`` per rank
    in ``chunks`` pieces.  ``start_deps`` (R x n op ids or -1) delays each
    rank's first send.  Returns op ids shaped (steps, chunks, R, n).

    The sends are :func:`ring_steps`'s; without ``start_deps`` they are
    added in step form (:meth:`~course_lib.sim.ops.ScheduleBuilder.add_steps`:
    the R x n arrays once, not per transfer).

    Notes
    -----
    Without contention and with one chunk this is exactly
    ``steps x (alpha + S/(n B))``, the alpha-beta ring formula.
    """
    orders, R, n, steps, _ = _ring_shape(orders, collective, n_bytes, chunks)
    batches = list(ring_steps(net, orders, collective, n_bytes, chunks, overheads,
                              queue_base=queue_base, start=start_deps is None))
    shape = (steps, chunks, R, n)
    if start_deps is None:
        return np.asarray(b.add_steps(batches, job=job), dtype=np.int64).reshape(shape)
    # the first pieces also wait for start_deps (op ids outside these steps)
    cols = step_columns(batches, b.n_ops, b._batch + 1, job)
    sd = np.full(shape, -1, dtype=np.int64)
    sd[0] = np.broadcast_to(np.asarray(start_deps, dtype=np.int64), (chunks, R, n))
    deps = np.concatenate([cols["deps"], sd.reshape(-1, 1)], axis=1)
    return b.add_sends(cols["src"], cols["dst"], cols["n_bytes"], cols["queue"],
                       deps=deps, extra_s=cols["extra_s"], batch=cols["batch"],
                       job=job, tag=cols["tag"]).reshape(shape)


def ring_steps(net, orders, collective, n_bytes, chunks=1, overheads=None,
               queue_base=0, start=True):
    """The batches of :func:`ring` one at a time, as :class:`~course_lib.sim.steps.Step`.

    Step s, piece j is batch ``s * chunks + j``, its sends in (ring,
    position) order, tagged ``s``; every batch repeats the same ``src``,
    ``dst``, ``queue`` and ``dep`` arrays (the engine works out routes,
    shares and the dependency gather once).  Piece j of step s at position
    i waits for piece j of step s-1 sent by position i-1; on a calibrated
    cluster (``overheads``) piece 0 waits for the previous step's last
    piece instead, so the per-step costs (hop latency, exposed slice) are
    paid once per step, as :func:`course_lib.predict.predict_collective`
    charges them.  ``overheads`` adds the exposed slice to piece 0 of every
    step and, with ``start`` (a ring that does not wait for earlier ops),
    the launch to step 0.  Only O(R n) numbers are held; play it with
    ``run_steps(ring_steps(...), net, window=chunks)``.
    """
    orders, R, n, steps, piece = _ring_shape(orders, collective, n_bytes, chunks)
    src, dst = orders.ravel(), np.roll(orders, -1, axis=1).ravel()
    queue = queue_base + (np.arange(R)[:, None] * len(net.nodes) + orders).ravel()
    # position (r, i) waits for position (r, i-1) of the same piece one step earlier
    dep = np.roll(np.arange(R * n).reshape(R, n), 1, axis=1).ravel()
    calibrated = overheads is not None
    none = np.zeros(R * n)
    extra = none  # the exposed slice, on piece 0 of each step
    if calibrated and overheads.slice_bytes:
        extra = none + min(overheads.slice_bytes,
                           piece * R * chunks / overheads.slice_pieces) / (
            _step_share(net, src, dst) * R)
    launch = overheads.launch_s if calibrated and start else 0.0
    first, later = extra + launch, none + launch  # step 0: piece 0, pieces 1..
    for s in range(steps):
        for j in range(chunks):
            if s == 0:
                yield Step(src, dst, piece, queue, first if j == 0 else later, tag=0)
            elif calibrated and j == 0:
                # the step waits for the previous step's last piece
                yield Step(src, dst, piece, queue, extra, dep, back=1, tag=s)
            else:
                yield Step(src, dst, piece, queue, extra if j == 0 else none, dep,
                           back=chunks, tag=s)


def chain(b, net, order, n_bytes, chunks=1, overheads=None, queue_base=0, job=0):
    """A pipelined chain from ``order[0]`` to ``order[-1]`` (Broadcast; Reduce
    is the same chain towards the root).  Returns ids shaped (chunks, n-1)."""
    order = _nid(net, order)
    n = len(order)
    piece = n_bytes / chunks
    ids = np.full((chunks, n - 1), -1, dtype=np.int64)
    base_batch = b._batch + 1
    for w in range(chunks + n - 2):  # wavefront: piece j at hop h with j + h = w
        hs = np.arange(max(0, w - chunks + 1), min(n - 1, w + 1))
        js = w - hs
        dep = np.where(hs > 0, ids[js, np.maximum(hs - 1, 0)], -1)
        extra = np.zeros(len(hs))
        if overheads is not None:
            if overheads.slice_bytes:
                extra += min(overheads.slice_bytes, piece / overheads.slice_pieces) / np.array(
                    [net.route_bw(net.nodes[order[h]], net.nodes[order[h + 1]])
                     for h in hs])
            if w == 0:
                extra += overheads.launch_s
        ids[js, hs] = b.add_sends(order[hs], order[hs + 1], piece,
                                  queue_base + order[hs], deps=dep[:, None],
                                  extra_s=extra, batch=base_batch + w, job=job, tag=hs)
    return ids


def double_tree(b, net, ranks, n_bytes, chunks=1, overheads=None, job=0):
    """AllReduce on two complementary binary trees, S/2 each, in ``chunks`` pieces.

    Tree 1 is NCCL's binary tree (odd ranks are leaves); tree 2 is its
    mirror image (rank r -> n-1-r) for even n, or tree 1 shifted by one for
    odd n, so every rank is interior in at most one tree (NCCL's double
    binary tree, src/graph/trees.cc).  The schedule needs the event engine.

    Notes
    -----
    Pipelined limit (many pieces): each rank receives about ``2 S`` in all,
    so ``t -> 2 S / B + 2 depth alpha`` (``analytic.collective_time_s(...,
    algorithm="tree")``).  With one piece the levels run one after another.
    """
    b.batched = False
    nodes = _nid(net, ranks)
    n = len(nodes)
    piece = n_bytes / (2 * chunks)
    qid: dict = {}

    def q(key):
        return qid.setdefault(key, len(qid)) + 10 * len(net.nodes)

    launch = overheads.launch_s if overheads is not None else 0.0
    for t, parent in enumerate(double_binary_tree(n)):
        root, children, pre, post = _walk(parent)
        for j in range(chunks):
            up = {}
            for v in post:
                if v == root:
                    continue
                deps = [up[c] for c in children[v]] or [-1]
                up[v] = int(b.add_sends(nodes[v], nodes[parent[v]], piece,
                                        q((t, v, "up")), deps=[deps],
                                        extra_s=launch if deps == [-1] and j == 0 else 0.0,
                                        batch=0, job=job, tag=t)[0])
            down = {}
            for v in pre:
                for c in children[v]:
                    deps = [up[x] for x in children[v]] if v == root else [down[v]]
                    down[c] = int(b.add_sends(nodes[v], nodes[c], piece,
                                              q((t, v, "down", c)), deps=[deps],
                                              batch=0, job=job, tag=t)[0])


def _walk(parent):
    """``(root, children, pre-order, post-order)`` of a ``{member: parent}`` tree."""
    root = next(v for v, p in parent.items() if p is None)
    children = {v: [c for c, p in parent.items() if p == v] for v in parent}
    pre, post, stack = [], [], [(root, False)]
    while stack:  # iterative depth-first walk (no recursion limit on big trees)
        v, done = stack.pop()
        if done:
            post.append(v)
            continue
        pre.append(v)
        stack.append((v, True))
        stack.extend((c, False) for c in reversed(children[v]))
    return root, children, pre, post


def _nccl_tree_template(nodes_count, per_node, channels, chain_orders=None):
    """One piece of NCCL's tree AllReduce on every channel, as a list of sends.

    Returns ``(src, dst, deps, role)`` lists (ranks, template indices, and a
    queue key per send).  Channel ``c`` uses node tree ``c % 2`` and a chain
    through the GPUs of each node starting at local GPU ``c % per_node`` (its
    head, which talks to the other nodes through that GPU's NIC) and node
    tree ``(c // per_node) % 2``: reduce up the chain and the tree, broadcast
    down the tree and the chain.  ``chain_orders`` (local GPU orders, e.g.
    the ring orders of an NVLink mesh) replaces the rank order: channel ``c``
    follows order ``c // per_node`` (cycling), cut to start at its head, so
    ``len(chain_orders) x per_node`` channels cut every order at every GPU
    and the chains load the links as the rings do.
    """
    g, N = per_node, nodes_count
    src, dst, deps, role = [], [], [], []

    def add(a, b_, d, key):
        src.append(a)
        dst.append(b_)
        deps.append([x for x in d if x is not None])
        role.append(key)
        return len(src) - 1

    trees = [(p, *_walk(p)) for p in double_binary_tree(N)]
    for c in range(channels):
        # channels c and c + g share a head GPU (and its NIC) and use the two
        # trees: every NIC carries one channel of each tree
        parent, root, children, pre, post = trees[(c // g) % 2]
        head = c % g
        local = list(range(g)) if chain_orders is None else \
            list(chain_orders[(c // g) % len(chain_orders)])
        at = local.index(head)
        local = local[at:] + local[:at]

        def chain(v):
            return [v * g + x for x in local]
        reduced, up = {}, {}
        for v in post:  # reduce: up the chain, then to the parent node's head
            ch, prev = chain(v), None
            for i in range(g - 1, 0, -1):
                prev = add(ch[i], ch[i - 1], [prev], (c, "up", ch[i]))
            reduced[v] = [prev] + [up[u] for u in children[v]]
            if parent[v] is not None:
                up[v] = add(ch[0], chain(parent[v])[0], reduced[v], (c, "up", ch[0]))
        down = {}
        for v in pre:  # broadcast: to the child nodes' heads, down the chain
            ch = chain(v)
            ready = reduced[v] if v == root else [down[v]]
            for u in children[v]:
                down[u] = add(ch[0], chain(u)[0], ready, (c, "down", ch[0], u))
            prev = ready
            for i in range(g - 1):
                prev = [add(ch[i], ch[i + 1], prev, (c, "down", ch[i]))]
    return src, dst, deps, role


def _play_pieces(b, net, template, n_bytes, pieces, start_s=0.0, queue_base=0, job=0):
    """Append ``pieces`` copies of a one-piece ``template`` to ``b``, pipelined.

    ``template`` is ``(src, dst, deps, role, frac)``: ranks, lists of template
    indices each send waits for (same piece), a queue key and the share of
    a piece each send carries.  Piece ``j`` of a send waits for piece ``j`` of
    its deps; the sends of one role leave in piece order.  Sends are batched
    by wavefront (piece + level in the template's dependency graph), so the
    batched engine shares each link among the sends that cross it at the same
    time.  ``start_s`` delays the sends that wait for nothing in piece 0.
    """
    src, dst, dep_lists, role, frac = template
    pieces = check_int(pieces, "pieces", minimum=1)
    T = len(src)
    level = np.zeros(T, dtype=np.int64)
    for i, d in enumerate(dep_lists):  # deps always precede their sends
        level[i] = 1 + max((level[x] for x in d), default=-1)
    width = max(1, max(len(d) for d in dep_lists))
    dep_t = np.full((T, width), -1, dtype=np.int64)
    for i, d in enumerate(dep_lists):
        dep_t[i, :len(d)] = d
    queues = {k: i for i, k in enumerate(dict.fromkeys(role))}
    q_t = queue_base + np.array([queues[k] for k in role], dtype=np.int64)
    node_ids = np.array([net.index[r] for r in net.gpus], dtype=np.int64)
    src_t, dst_t = node_ids[np.array(src)], node_ids[np.array(dst)]
    size_t = np.asarray(frac, dtype=float) * n_bytes / pieces
    # every (piece, send), sorted by wavefront so the schedule stays a step schedule
    J = np.repeat(np.arange(pieces), T)
    K = np.tile(np.arange(T), pieces)
    wave = J + level[K]
    order = np.lexsort((K, J, wave))
    new_id = np.empty(pieces * T, dtype=np.int64)
    new_id[order] = b.n_ops + np.arange(pieces * T)
    dep_flat = dep_t[K]  # template ids of the deps, same piece
    dep_all = np.where(dep_flat >= 0, new_id[np.maximum(J[:, None] * T + dep_flat, 0)], -1)
    extra = np.where((J == 0) & (level[K] == 0), start_s, 0.0)
    o = order
    return b.add_sends(src_t[K[o]], dst_t[K[o]], size_t[K[o]], q_t[K[o]],
                       deps=dep_all[o], extra_s=extra[o], batch=b._batch + 1 + wave[o],
                       job=job, tag=level[K[o]])


def nccl_tree(b, net, n_bytes, nodes_count, per_node, channels, pieces,
              overheads=None, fill_s=0.0, queue_base=0, job=0, chain_orders=None):
    """NCCL's tree AllReduce: per channel a chain in every node and a double
    binary tree over the nodes, pipelined in ``pieces`` pieces per channel.

    Each of ``channels`` channels carries ``S / channels``; channel ``c``'s
    chains start at local GPU ``c % per_node``, so the heads -- and the NICs
    they use -- rotate, and it uses node tree ``(c // per_node) % 2``: with
    ``2 per_node`` channels each tree carries S/2 (NCCL's double binary tree)
    and every head's NIC carries one channel of each.  Inside one node it is
    the chain alone (NCCL's tree on one node).  Played by
    :func:`_play_pieces`; ``fill_s`` (NCCL's chunks exposed at every level of
    a piece's way, :func:`course_lib.predict.pipeline_fill_s`) delays the
    first sends with the launch.

    Notes
    -----
    Pipelined, each GPU sends ``S`` up and ``S`` down over its node's links
    in ``g-1`` of every ``g`` channels and the busiest node sends
    ``topology.tree_sends_per_node(nodes) S`` to the network: ``t ->
    max(2 (g-1)/g S / B_link, k S / B_net) + 2 (g - 1 + log2 nodes)`` hop
    latencies, the terms of :func:`course_lib.predict.predict_collective`'s tree.
    """
    src, dst, deps, role = _nccl_tree_template(nodes_count, per_node, channels,
                                               chain_orders)
    template = (src, dst, deps, role, [1 / channels] * len(src))
    launch = overheads.launch_s if overheads is not None else 0.0
    return _play_pieces(b, net, template, n_bytes, pieces, launch + fill_s,
                        queue_base, job)


def hierarchical_template(nodes_count, per_node):
    """One piece of the two-level AllReduce (ReduceScatter in each node's
    ring, AllReduce of each shard on a ring over the nodes -- rail ``i`` joins
    local GPU ``i`` of every node --, AllGather in each node's ring), as
    ``(src, dst, deps, role, frac)``.  A GPU starts its rail as soon as its
    own shard is reduced, and its AllGather as soon as its rail is done.
    Public so that :func:`course_lib.draw.collectives.hierarchical` draws
    the very sends the simulator plays."""
    g, N = per_node, nodes_count
    src, dst, deps, role, frac = [], [], [], [], []

    def add(a, b_, d, key, f):
        src.append(a)
        dst.append(b_)
        deps.append([x for x in d if x is not None])
        role.append(key)
        frac.append(f)
        return len(src) - 1

    def ring_phase(members, steps, f, first_deps, key):
        """``steps`` steps of a ring over ``members``; returns the last send
        into each member (by member)."""
        m = len(members)
        last_into = {}
        prev = [None] * m  # send of step t-1 out of position i
        for t in range(steps):
            cur = []
            for i in range(m):
                d = [prev[i - 1]] if t else list(first_deps.get(members[i], []))
                cur.append(add(members[i], members[(i + 1) % m], d, key + (members[i], t), f))
            prev = cur
        for i in range(m):
            last_into[members[(i + 1) % m]] = prev[i] if steps else None
        return last_into

    done = {}
    for v in range(N):  # 1. ReduceScatter in every node
        members = [v * g + i for i in range(g)]
        done.update(ring_phase(members, g - 1, 1 / g, {}, ("rs",)))
    if N > 1:  # 2. AllReduce of each shard over the nodes, one ring per rail
        rail_done = {}
        for i in range(g):
            members = [v * g + i for v in range(N)]
            first = {r: [done.get(r)] for r in members}
            rail_done.update(ring_phase(members, 2 * (N - 1), 1 / (g * N), first, ("ar",)))
        done = rail_done
    for v in range(N):  # 3. AllGather in every node
        members = [v * g + i for i in range(g)]
        ring_phase(members, g - 1, 1 / g, {r: [done.get(r)] for r in members}, ("ag",))
    return src, dst, deps, role, frac


def hierarchical_pipelined(b, net, n_bytes, nodes_count, per_node, pieces,
                           overheads=None, fill_s=0.0, queue_base=0, job=0):
    """The two-level AllReduce of :func:`hierarchical`, pipelined in
    ``pieces`` pieces: a piece's rail AllReduce runs while the next piece is
    reduced inside the node, so each road (NVLink, network) is busy for its
    own bytes and the slower sets the time -- the way NCCL pipelines its
    multi-level algorithms and :func:`course_lib.analytic.hierarchical_allreduce_time_s`
    (``pipelined=True``) counts it.  ``fill_s`` as in :func:`nccl_tree`."""
    template = hierarchical_template(nodes_count, per_node)
    launch = overheads.launch_s if overheads is not None else 0.0
    return _play_pieces(b, net, template, n_bytes, pieces, launch + fill_s,
                        queue_base, job)


def in_switch(b, net, ranks, n_bytes, chunks=1, overheads=None, switch="nvswitch",
              job=0):
    """AllReduce reduced inside the switch (NVLink SHARP / NVLS).

    Every GPU sends each piece up to the switch; once all have arrived the
    switch reduces it (one piece-time with ``overheads.switch_reduce``) and
    sends the sum down to every GPU.  Up- and down-links are opposite
    directions, so pieces pipeline: ``t -> S / B`` with many pieces (the
    ``"in-switch"`` formula), ``2 S / B`` with one.
    """
    b.batched = False
    nodes = _nid(net, ranks)
    sw = net.index[switch]
    piece = n_bytes / chunks
    launch = overheads.launch_s if overheads is not None else 0.0
    red = 0.0
    if overheads is not None and overheads.switch_reduce:
        red = piece / net.route_bw(net.nodes[nodes[0]], switch)
    nn = len(net.nodes)
    qbase = 20 * nn
    for j in range(chunks):
        up = b.add_sends(nodes, sw, piece, qbase + nodes, extra_s=launch,
                         batch=0, job=job, tag=j)
        r = b.add_computes(sw, red, qbase + nn, deps=up[None, :], batch=0, job=job, tag=j)
        b.add_sends(np.full(len(nodes), sw), nodes, piece, qbase + 2 * nn + nodes,
                    deps=np.repeat(r, len(nodes))[:, None], batch=0, job=job, tag=j)


def hierarchical(b, net, n_bytes, nodes_count, per_node, chunks=1, overheads=None,
                 job=0):
    """Two-level AllReduce on ``nodes_count x per_node`` GPUs (ranks 0..n-1).

    1. ReduceScatter on a ring inside every node (all nodes at once);
    2. AllReduce of the ``S/g`` shards on ``g`` inter-node rings (rail k joins
       local GPU k of every node);
    3. AllGather inside every node.
    Each rank starts a phase when its last piece of the previous one arrived.
    """
    g, N = per_node, nodes_count
    intra = np.array([[net.index[node * g + i] for i in range(g)] for node in range(N)])
    rails = np.array([[net.index[node * g + k] for node in range(N)] for k in range(g)])
    nn = len(net.nodes)

    def last_into(ids, orders):
        # the last piece of the last step into orders[r][i+1] is ids[-1, -1, r, i]
        out = np.full(nn, -1, dtype=np.int64)
        out[np.roll(orders, -1, axis=1)] = ids[-1, -1]
        return out

    p1 = ring(b, net, intra, "reducescatter", n_bytes * N, chunks, overheads, job=job)
    ov = None if overheads is None else Overheads(0.0, overheads.slice_bytes,
                                                  slice_pieces=overheads.slice_pieces)
    if N > 1:
        last = last_into(p1, intra)
        p2 = ring(b, net, rails, "allreduce", n_bytes, chunks, ov,
                  start_deps=last[rails], queue_base=nn * (g + 1), job=job)
        last = last_into(p2, rails)
    else:
        last = last_into(p1, intra)
    ring(b, net, intra, "allgather", n_bytes * N, chunks, ov, start_deps=last[intra],
         queue_base=2 * nn * (g + 1), job=job)


def direct(b, net, ranks, n_bytes, overheads=None, job=0):
    """AllToAll: in round k (1..n-1) rank r sends S/n to rank (r + k) mod n."""
    nodes = _nid(net, ranks)
    n = len(nodes)
    launch = overheads.launch_s if overheads is not None else 0.0
    for k in range(1, n):
        b.add_sends(nodes, np.roll(nodes, -k), n_bytes / n, nodes,
                    extra_s=launch if k == 1 else 0.0, job=job, tag=k)
