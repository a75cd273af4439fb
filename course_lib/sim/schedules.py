"""Collective algorithms as schedules: who sends what to whom, after what.

Each builder appends ops to a :class:`~course_lib.sim.core.ScheduleBuilder`
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
                   :func:`~course_lib.sim.core.run_steps` (no schedule kept).
``chain``          Broadcast / Reduce as a pipelined chain (NCCL's "ring" for
                   these): ``(n - 2 + chunks)`` piece-times.
``double_tree``    AllReduce on two binary trees, each carrying S/2; every
                   rank is interior in at most one (NCCL's double binary tree);
                   reduce up and broadcast down run concurrently per piece.
``in_switch``      AllReduce with the reduction in the NVSwitch (NVLS): every
                   GPU sends its data up once, the switch reduces and sends the
                   sum down.
``hierarchical``   intra-node ReduceScatter, inter-node AllReduce on S/g per
                   rail, intra-node AllGather.
``direct``         AllToAll: in round k rank r sends S/n to rank r+k.
=================  ==========================================================

With ``overheads`` (a calibrated cluster) each builder adds what
:func:`course_lib.predict.predict_collective` charges: the launch and base
latency before the first sends, and before every send the exposed slice
``min(chunk_bytes, piece) / B``.  Chapter 7.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Overheads", "ring", "ring_steps", "chain", "double_tree", "in_switch",
           "hierarchical", "direct", "channel_orders"]


@dataclass(frozen=True)
class Overheads:
    """Calibrated costs the builders add (seconds, bytes)."""

    launch_s: float = 0.0        # before the first sends (launch + base latency)
    slice_bytes: float = 0.0     # exposed slice per step (0: none)
    switch_reduce: bool = False  # in-switch reduction costs one piece-time


def _nid(net, ranks):
    return np.array([net.index[r] for r in ranks], dtype=np.int64)


def channel_orders(net, ranks, channels: int) -> np.ndarray:
    """Ring orders, one per channel (channels x n node ids).

    On a two-level cluster channel k's ring leaves every node from local GPU
    k (so through NIC k) and enters the next node at local GPU k+1, as NCCL
    spreads its rings over the NICs.  Elsewhere every channel uses the given
    order.
    """
    g = net.topo.graph
    ranks = list(ranks)
    if "nodes" in g and g["nodes"] > 1 and ranks == list(range(len(ranks))) \
            and len(ranks) == g["nodes"] * g["gpus_per_node"]:
        per = g["gpus_per_node"]
        orders = [[node * per + (ch + 1 + i) % per for node in range(g["nodes"])
                   for i in range(per)] for ch in range(channels)]
        return np.array([_nid(net, o) for o in orders])
    return np.tile(_nid(net, ranks), (channels, 1))


def ring(b, net, orders, collective, n_bytes, chunks=1, overheads=None,
         start_deps=None, queue_base=0, job=0):
    """Rings over ``orders`` (R x n node ids), all stepping together.

    Each ring carries ``n_bytes / R``; AllReduce takes ``2(n-1)`` steps,
    ReduceScatter / AllGather ``n-1``, each step moving ``S/(R n)`` per rank
    in ``chunks`` pieces.  ``start_deps`` (R x n op ids or -1) delays each
    rank's first send.  Returns op ids shaped (steps, chunks, R, n).

    Notes
    -----
    Without contention and with one chunk this is exactly
    ``steps x (alpha + S/(n B))``, the alpha-beta ring formula.
    """
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    R, n = orders.shape
    if n < 2:
        raise ValueError("a ring needs at least 2 ranks")
    steps = 2 * (n - 1) if collective == "allreduce" else n - 1
    piece = n_bytes / (R * n * chunks)
    src, dst = orders, np.roll(orders, -1, axis=1)
    per_batch = R * n
    ids = b.n_ops + np.arange(steps * chunks * per_batch).reshape(steps, chunks, R, n)
    queue = queue_base + np.arange(R)[:, None] * len(net.nodes) + src
    S = np.repeat(np.arange(steps), chunks * per_batch)
    J = np.tile(np.repeat(np.arange(chunks), per_batch), steps)
    reps = steps * chunks
    src_all, dst_all = np.tile(src.ravel(), reps), np.tile(dst.ravel(), reps)
    q_all = np.tile(queue.ravel(), reps)
    # piece j of step s at position i waits for piece j of step s-1 sent by i-1
    dep = np.full(ids.shape, -1, dtype=np.int64)
    dep[1:] = np.roll(ids, 1, axis=3)[:-1]
    dep = dep.reshape(-1, 1)
    if start_deps is not None:
        sd = np.full(ids.shape, -1, dtype=np.int64)
        sd[0] = np.broadcast_to(np.asarray(start_deps, dtype=np.int64), (chunks, R, n))
        dep = np.concatenate([dep, sd.reshape(-1, 1)], axis=1)
    extra = np.zeros(len(src_all))
    if overheads is not None:
        if overheads.slice_bytes:
            pair, _, _, bw = net.pair_table(src.ravel(), dst.ravel())
            extra += np.tile(min(overheads.slice_bytes, piece * R * chunks)
                             / (bw[pair] * R), reps)
        if start_deps is None:
            extra[S == 0] += overheads.launch_s
    batch = b._batch + 1 + S * chunks + J
    b.add_sends(src_all, dst_all, piece, q_all, deps=dep, extra_s=extra,
                batch=batch, job=job, tag=S)
    return ids


def ring_steps(net, orders, collective, n_bytes, chunks=1, overheads=None):
    """The batches of :func:`ring` one at a time, as :class:`~course_lib.sim.core.Step`.

    Same sends, queues, deps and extra delays as ``ring(b, net, orders,
    collective, n_bytes, chunks, overheads)`` (without ``start_deps``), in
    the same batch order: step s, piece j is batch ``s * chunks + j``, its
    sends in (ring, position) order.  Only O(R n) numbers are held; play it
    with ``run_steps(ring_steps(...), net, window=chunks)``.
    """
    from .core import Step

    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    R, n = orders.shape
    if n < 2:
        raise ValueError("a ring needs at least 2 ranks")
    steps = 2 * (n - 1) if collective == "allreduce" else n - 1
    piece = n_bytes / (R * n * chunks)
    src, dst = orders.ravel(), np.roll(orders, -1, axis=1).ravel()
    queue = (np.arange(R)[:, None] * len(net.nodes) + orders).ravel()
    # position (r, i) waits for position (r, i-1) of the same piece one step earlier
    dep = np.roll(np.arange(R * n).reshape(R, n), 1, axis=1).ravel()
    extra = np.zeros(R * n)
    if overheads is not None and overheads.slice_bytes:
        pair, _, _, bw = net.pair_table(src, dst)
        extra += min(overheads.slice_bytes, piece * R * chunks) / (bw[pair] * R)
    first = extra + overheads.launch_s if overheads is not None else extra
    for s in range(steps):
        for _ in range(chunks):
            if s == 0:
                yield Step(src, dst, piece, queue, first)
            else:
                yield Step(src, dst, piece, queue, extra, dep, back=chunks)


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
                extra += min(overheads.slice_bytes, piece) / np.array(
                    [net.route_bw(net.nodes[order[h]], net.nodes[order[h + 1]])
                     for h in hs])
            if w == 0:
                extra += overheads.launch_s
        ids[js, hs] = b.add_sends(order[hs], order[hs + 1], piece,
                                  queue_base + order[hs], deps=dep[:, None],
                                  extra_s=extra, batch=base_batch + w, job=job, tag=hs)
    return ids


def _btree_parents(n):
    """NCCL's binary tree (src/graph/trees.cc, ncclGetBtree): rank 0 is the
    root, odd ranks are leaves, the parent of r clears r's lowest set bit and
    sets the next one (or just clears it when that falls outside)."""
    parent = {0: None}
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < n else r ^ bit
    return parent


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
    for t in range(2):
        base = _btree_parents(n)
        if t == 0:
            m = list(range(n))
        elif n % 2 == 0:
            m = [n - 1 - i for i in range(n)]
        else:
            m = [(i + 1) % n for i in range(n)]
        parent = {m[v]: (None if p is None else m[p]) for v, p in base.items()}
        root = m[0]
        children = {v: [c for c, p in parent.items() if p == v] for v in range(n)}
        post, pre = [], []

        def walk(v):
            pre.append(v)
            for c in children[v]:
                walk(c)
            post.append(v)
        walk(root)
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
    ov = None if overheads is None else Overheads(0.0, overheads.slice_bytes)
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
