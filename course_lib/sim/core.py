"""The event core: a schedule of operations, two engines that play it, and the trace.

A **schedule** is a list of operations (ops), each either

* a *send*: ``n_bytes`` from node ``src`` to node ``dst`` over the network's
  route, or
* a *compute*: ``duration_s`` of work on a node (a backward pass, a
  reduction, a launch).

Each op names the ops it waits for (``deps``: it may start ``extra_s`` after
the last of them has *arrived*) and a **queue**: ops of one queue run one at
a time in the order they were added (a GPU stream, a NCCL channel's sender).

**Sharing policy: max-min fair sharing.**  Sends active on a directed link
share it equally, except that a send held back by another link of its
route hands its unused share to the others (progressive filling: the most
contended link fixes the rate of its sends, their bandwidth is removed
everywhere, repeat).  Rates are recomputed whenever a send starts or
ends.  Links are full duplex: the two directions never share.

Two engines play a schedule:

* :func:`run_events` -- the reference.  A heap of ``(time, seq, callback)``
  and a loop that pops and fires, in the spirit of SimPy's ``core.py``.
  Handles any schedule.
* :func:`run_batched` -- the fast path for *step schedules* (ring, hierarchical
  rings, all-to-all rounds): ops come in batches (one ring step) whose
  dependencies all lie in earlier batches and whose queues are distinct.  A
  whole batch is computed at once with numpy.  Within a batch every send
  counts as sharing its links with every other send of the batch for its
  whole duration (a static equal share; no max-min redistribution); sends of different batches do not
  see each other.  With no contention -- one send per link per step, the
  usual case for rings -- it gives the same times as :func:`run_events`.

A third, :func:`run_steps`, is :func:`run_batched` without the schedule and
the trace: it takes the batches one at a time from a generator (a
:class:`Step` each, sends only) and keeps only the end times the next
batches wait for, so memory grows with the ranks, not with the transfers.
It returns the last delivery time and the number of transfers.

Chapter 7 (collectives) and 8 (overlap, stragglers, contention).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = ["SEND", "COMPUTE", "Schedule", "ScheduleBuilder", "Trace", "Engine",
           "run_events", "run_batched", "run", "Step", "run_steps"]

SEND, COMPUTE = 0, 1


# ---------------------------------------------------------------------------
# schedules
# ---------------------------------------------------------------------------
@dataclass
class Schedule:
    """Ops as parallel numpy arrays (one entry per op).

    ``deps`` is an (ops x K) int array of op ids padded with -1.  ``batch``
    is non-decreasing when the schedule is a step schedule (``batched``).
    """

    kind: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    n_bytes: np.ndarray
    duration_s: np.ndarray
    queue: np.ndarray
    deps: np.ndarray
    extra_s: np.ndarray
    batch: np.ndarray
    job: np.ndarray
    tag: np.ndarray
    batched: bool = True

    def __len__(self):
        return len(self.kind)


class ScheduleBuilder:
    """Collect ops (vectorised appends) and freeze them into a :class:`Schedule`.

    Every ``add_*`` returns the new op ids (a numpy array) for use as deps.

    >>> b = ScheduleBuilder()
    >>> first = b.add_sends([0], [1], [1e6], queue=[0])
    >>> second = b.add_sends([1], [0], [1e6], queue=[1], deps=first[:, None])
    >>> s = b.build()
    >>> len(s), s.deps[1].tolist()
    (2, [0])
    """

    def __init__(self):
        self._parts: list[dict] = []
        self.n_ops = 0
        self._batch = -1
        self.batched = True

    def next_batch(self) -> int:
        self._batch += 1
        return self._batch

    def _add(self, kind, src, dst, n_bytes, duration_s, queue, deps, extra_s,
             batch, job, tag):
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        m = len(src)
        ids = np.arange(self.n_ops, self.n_ops + m, dtype=np.int64)

        def full(x, dtype):
            a = np.asarray(x, dtype=dtype)
            return np.broadcast_to(a, (m,)).copy() if a.ndim == 0 or a.shape != (m,) \
                else a
        if deps is None:
            deps = np.full((m, 1), -1, dtype=np.int64)
        deps = np.asarray(deps, dtype=np.int64)
        if deps.ndim == 1:
            deps = deps[:, None]
        if batch is None:
            batch = self.next_batch()
        else:
            self._batch = max(self._batch, int(np.max(batch)))
        self._parts.append(dict(
            kind=full(kind, np.int8), src=src, dst=full(dst, np.int64),
            n_bytes=full(n_bytes, float), duration_s=full(duration_s, float),
            queue=full(queue, np.int64), deps=deps, extra_s=full(extra_s, float),
            batch=full(batch, np.int64), job=full(job, np.int32),
            tag=full(tag, np.int32)))
        self.n_ops += m
        return ids

    def add_sends(self, src, dst, n_bytes, queue, deps=None, extra_s=0.0,
                  batch=None, job=0, tag=0):
        """Sends of ``n_bytes`` from ``src`` to ``dst`` (node ids)."""
        return self._add(SEND, src, dst, n_bytes, 0.0, queue, deps, extra_s,
                         batch, job, tag)

    def add_computes(self, node, duration_s, queue, deps=None, extra_s=0.0,
                     batch=None, job=0, tag=0):
        """Work of ``duration_s`` seconds on ``node`` (uses no link)."""
        return self._add(COMPUTE, node, node, 0.0, duration_s, queue, deps, extra_s,
                         batch, job, tag)

    def build(self) -> Schedule:
        if not self._parts:
            raise ValueError("the schedule is empty")
        k = max(p["deps"].shape[1] for p in self._parts)
        cols = {}
        for name in self._parts[0]:
            if name == "deps":
                cols[name] = np.concatenate([
                    np.pad(p["deps"], ((0, 0), (0, k - p["deps"].shape[1])),
                           constant_values=-1) for p in self._parts])
            else:
                cols[name] = np.concatenate([p[name] for p in self._parts])
        batched = self.batched and bool(np.all(np.diff(cols["batch"]) >= 0))
        return Schedule(**cols, batched=batched)


# ---------------------------------------------------------------------------
# the trace
# ---------------------------------------------------------------------------
TRACE_DTYPE = np.dtype([("start_s", "f8"), ("sent_s", "f8"), ("end_s", "f8"), ("src", "i4"),
                        ("dst", "i4"), ("link", "i4"), ("n_bytes", "f8"),
                        ("kind", "i1"), ("job", "i4"), ("tag", "i4")])


class Trace:
    """What happened: one row per op.

    Fields of :attr:`rows` (a numpy structured array): ``start_s`` (the op
    began), ``sent_s`` (a send's last byte left; for a compute = ``end_s``),
    ``end_s`` (a send is delivered, ``sent_s`` + route latency / a compute
    finishes), ``src``,
    ``dst`` (node ids; names in :attr:`node_names`), ``link`` (the send's
    bottleneck link id, -1 for computes; names in :attr:`link_names`),
    ``n_bytes``, ``kind`` (0 send, 1 compute), ``job``, ``tag`` (the step).
    """

    def __init__(self, rows: np.ndarray, network, routes=None):
        self.rows = rows
        self.network = network
        self.node_names = list(network.nodes)
        self.link_names = list(network.link_names)
        self._routes = routes  # (pair index per op, padded link table)

    def __len__(self):
        return len(self.rows)

    def to_rows(self) -> list[dict]:
        """The trace as a list of dicts with node and link *names*."""
        out = []
        for r in self.rows:
            out.append(dict(start_s=float(r["start_s"]), sent_s=float(r["sent_s"]),
                            end_s=float(r["end_s"]),
                            src=self.node_names[r["src"]], dst=self.node_names[r["dst"]],
                            link=None if r["link"] < 0 else self.link_names[r["link"]],
                            n_bytes=float(r["n_bytes"]),
                            kind="send" if r["kind"] == SEND else "compute",
                            job=int(r["job"]), tag=int(r["tag"])))
        return out

    def op_links(self, i: int) -> list[int]:
        """All directed links op ``i`` crossed (empty for a compute)."""
        if self.rows["kind"][i] != SEND:
            return []
        pair, table = self._routes
        return [int(x) for x in table[pair[i]] if x >= 0]

    @property
    def makespan_s(self) -> float:
        return float(self.rows["end_s"].max() - min(0.0, self.rows["start_s"].min()))


# ---------------------------------------------------------------------------
# engine 1: a heap of events (the reference)
# ---------------------------------------------------------------------------
class Engine:
    """A minimal discrete-event loop: ``schedule(delay, fn, *args)``, ``run()``.

    >>> e = Engine(); seen = []
    >>> e.schedule(2.0, seen.append, "b"); e.schedule(1.0, seen.append, "a")
    >>> e.run(); seen, e.now
    (['a', 'b'], 2.0)
    """

    def __init__(self):
        self.now = 0.0
        self._heap: list = []
        self._seq = itertools.count()

    def schedule(self, delay: float, fn, *args) -> None:
        heapq.heappush(self._heap, (self.now + delay, next(self._seq), fn, args))

    def step(self) -> None:
        self.now, _, fn, args = heapq.heappop(self._heap)
        fn(*args)

    def run(self, until: float | None = None) -> None:
        while self._heap and (until is None or self._heap[0][0] <= until):
            self.step()


def _check_run_args(schedule, network) -> None:
    """Refuse anything but a Schedule and a Network, naming the parameter."""
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a Schedule (from ScheduleBuilder().build()), "
                        f"got {type(schedule).__name__}")
    if not all(hasattr(network, a) for a in ("pair_table", "link_bw")):
        raise TypeError(f"network must be a course_lib.sim.Network, got "
                        f"{type(network).__name__}")


def run_events(schedule: Schedule, network) -> Trace:
    """Play a schedule on the network with the heap engine (fair sharing)."""
    _check_run_args(schedule, network)
    s = schedule
    n = len(s)
    pair, table, lat, _ = network.pair_table(s.src, s.dst)
    bw = network.link_bw
    eng = Engine()
    waiting = np.count_nonzero(s.deps >= 0, axis=1)
    dependants = [[] for _ in range(n)]
    for i, row in enumerate(s.deps):
        for d in row:
            if d >= 0:
                dependants[d].append(i)
    queues: dict[int, list] = {}
    busy: dict[int, bool] = {}
    start = np.full(n, np.nan)
    sent = np.full(n, np.nan)
    end = np.full(n, np.nan)
    bottleneck = np.full(n, -1, dtype=np.int64)
    # active sends: op -> [remaining bytes, rate, last update, version, scheduled]
    active: dict[int, list] = {}
    on_link: dict[int, set] = {}

    def links_of(i):
        return [int(x) for x in table[pair[i]] if x >= 0]

    def reprice(_ops=None):
        """Max-min fair rates for all active sends (progressive filling)."""
        now = eng.now
        for st in active.values():
            st[0] -= st[1] * (now - st[2])
            st[2] = now
        cap = {l: bw[l] for l, ops in on_link.items() if ops}
        left = {l: set(ops) for l, ops in on_link.items() if ops}
        rate = {}
        while left:
            l_min = min(left, key=lambda l: cap[l] / len(left[l]))
            fair = cap[l_min] / len(left[l_min])
            for i in list(left[l_min]):
                rate[i] = fair
                bottleneck[i] = l_min
                for l in links_of(i):
                    if l in left:
                        left[l].discard(i)
                        cap[l] -= fair
                        if not left[l]:
                            del left[l]
        for i, r in rate.items():
            st = active[i]
            if st[1] != r or st[4] is None:
                st[1] = r
                st[3] += 1
                st[4] = True
                eng.schedule(max(st[0], 0.0) / r, tx_done, i, st[3])

    def begin(i):
        start[i] = eng.now
        if s.kind[i] == COMPUTE:
            eng.schedule(s.duration_s[i], finished, i)
            return
        ls = links_of(i)
        for l in ls:
            on_link.setdefault(l, set()).add(i)
        active[i] = [s.n_bytes[i], 0.0, eng.now, 0, None]
        reprice()

    def tx_done(i, version):
        st = active.get(i)
        if st is None or st[3] != version:
            return  # stale event: the rate changed since it was scheduled
        del active[i]
        sent[i] = eng.now
        ls = links_of(i)
        for l in ls:
            on_link[l].discard(i)
        reprice()
        free_queue(s.queue[i])
        eng.schedule(lat[pair[i]], arrived, i)

    def finished(i):  # compute done
        sent[i] = eng.now
        free_queue(s.queue[i])
        arrived(i)

    def arrived(i):
        end[i] = eng.now
        for j in dependants[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                eng.schedule(s.extra_s[j], ready, j)

    def ready(i):
        q = s.queue[i]
        queues.setdefault(q, []).append(i)
        if not busy.get(q):
            pop(q)

    def pop(q):
        lst = queues.get(q)
        if lst:
            # FIFO in the order ops were added to the schedule
            lst.sort()
            i = lst.pop(0)
            busy[q] = True
            begin(i)

    def free_queue(q):
        busy[q] = False
        pop(q)

    for i in np.flatnonzero(waiting == 0):
        eng.schedule(s.extra_s[i], ready, int(i))
    eng.run()
    if np.isnan(end).any():
        raise RuntimeError("schedule deadlocked: some ops never ran (a cycle in deps?)")
    return _trace(s, network, start, sent, end, bottleneck, (pair, table))


# ---------------------------------------------------------------------------
# engine 2: whole steps at once (the fast path)
# ---------------------------------------------------------------------------
def run_batched(schedule: Schedule, network) -> Trace:
    """Play a step schedule batch by batch with numpy (static fair share per batch).

    Needs ``schedule.batched``: batches non-decreasing, every dep in an
    earlier batch, at most one op per queue in a batch.
    """
    _check_run_args(schedule, network)
    s = schedule
    if not s.batched:
        raise ValueError("schedule is not a step schedule; use run_events")
    n = len(s)
    pair, table, lat, _ = network.pair_table(s.src, s.dst)
    bw = network.link_bw
    n_links = len(bw)
    start = np.empty(n)
    sent = np.empty(n)
    end = np.empty(n)
    bottleneck = np.full(n, -1, dtype=np.int64)
    queue_free = np.zeros(int(s.queue.max()) + 1)
    bounds = np.flatnonzero(np.diff(s.batch)) + 1
    edges = np.concatenate(([0], bounds, [n]))
    has_deps = s.deps.shape[1] > 0 and bool(np.any(s.deps >= 0))
    for a, b in zip(edges[:-1], edges[1:]):
        q = s.queue[a:b]
        if has_deps:
            d = s.deps[a:b]
            if d.shape[1] == 1:
                dd = d[:, 0]
                ready = np.where(dd >= 0, end[np.maximum(dd, 0)], 0.0)
            else:
                ready = np.where(d >= 0, end[np.maximum(d, 0)], 0.0).max(axis=1)
        else:
            ready = np.zeros(b - a)
        t0 = np.maximum(ready + s.extra_s[a:b], queue_free[q])
        kind = s.kind[a:b]
        dur = s.duration_s[a:b].copy()
        sends = kind == SEND
        arrive_lat = np.zeros(b - a)
        if sends.any():
            rows = table[pair[a:b][sends]]
            valid = rows >= 0
            cnt = np.bincount(rows[valid], minlength=n_links)
            share = np.where(valid, bw[np.maximum(rows, 0)] / np.maximum(
                cnt[np.maximum(rows, 0)], 1), np.inf)
            k = share.argmin(axis=1)
            rate = share[np.arange(len(k)), k]
            dur[sends] = s.n_bytes[a:b][sends] / rate
            bottleneck[a:b][sends] = rows[np.arange(len(k)), k]
            arrive_lat[sends] = lat[pair[a:b][sends]]
        t1 = t0 + dur
        queue_free[q] = t1
        start[a:b] = t0
        sent[a:b] = t1
        end[a:b] = t1 + arrive_lat
    return _trace(s, network, start, sent, end, bottleneck, (pair, table))


@dataclass
class Step:
    """One batch of sends of a step schedule, for :func:`run_steps`.

    ``src``, ``dst`` (node ids), ``queue`` (distinct within the step) and
    ``extra_s`` are arrays of one entry per send; ``n_bytes`` an array or
    a number.  ``dep`` holds, per send, the position of the send it waits
    for in the step ``back`` steps earlier (-1: none); ``dep=None``: no
    send of this step waits.  A generator that yields the *same* ``src``
    and ``dst`` array objects again tells :func:`run_steps` the routes and
    shares are unchanged (they are computed once).
    """

    src: np.ndarray
    dst: np.ndarray
    n_bytes: np.ndarray | float
    queue: np.ndarray
    extra_s: np.ndarray
    dep: np.ndarray | None = None
    back: int = 1


def run_steps(steps, network, window: int = 1) -> tuple[float, int]:
    """Play a step schedule given step by step, keeping no schedule and no trace.

    The arithmetic of :func:`run_batched`, batch for batch: a send starts at
    ``max(arrival of its dep + extra_s, its queue free)``, moves at the
    static equal share of the most contended link of its route (counted
    over the sends of its step), and is delivered the route latency after
    its last byte left.

    Parameters
    ----------
    steps : iterable of Step
        The batches in order (e.g. :func:`course_lib.sim.schedules.ring_steps`).
    network : Network
        The roads.
    window : int
        How many earlier steps a dep may reach back (``Step.back <= window``).

    Returns
    -------
    (float, int)
        The last delivery time, seconds, and the number of sends played.
    """
    if not all(hasattr(network, a) for a in ("pair_table", "link_bw")):
        raise TypeError(f"network must be a course_lib.sim.Network, got "
                        f"{type(network).__name__}")
    bw = network.link_bw
    ends: deque = deque(maxlen=window)  # end times of the last `window` steps
    queue_free = np.zeros(0)
    t_last, n_ops = 0.0, 0
    src = dst = None
    for st in steps:
        if st.src is not src or st.dst is not dst:  # new sends: routes and shares
            src, dst = st.src, st.dst
            pair, table, lat, _ = network.pair_table(src, dst)
            rows = table[pair]
            valid = rows >= 0
            cnt = np.bincount(rows[valid], minlength=len(bw))
            share = np.where(valid, bw[np.maximum(rows, 0)] / np.maximum(
                cnt[np.maximum(rows, 0)], 1), np.inf)
            rate = share[np.arange(len(rows)), share.argmin(axis=1)]
            arrive_lat = lat[pair]
        top = int(st.queue.max()) + 1
        if top > len(queue_free):
            queue_free = np.concatenate([queue_free, np.zeros(top - len(queue_free))])
        if st.dep is None:
            ready = np.zeros(len(src))
        else:
            if not 1 <= st.back <= len(ends):
                raise ValueError(f"Step.back={st.back} reaches outside the last "
                                 f"{len(ends)} steps kept (window={window})")
            prev = ends[-st.back]
            ready = np.where(st.dep >= 0, prev[np.maximum(st.dep, 0)], 0.0)
        t0 = np.maximum(ready + st.extra_s, queue_free[st.queue])
        t1 = t0 + st.n_bytes / rate
        queue_free[st.queue] = t1
        end = t1 + arrive_lat
        ends.append(end)
        t_last = max(t_last, float(end.max()))
        n_ops += len(end)
    if n_ops == 0:
        raise ValueError("steps is empty")
    return t_last, n_ops


def _trace(s, network, start, sent, end, bottleneck, routes) -> Trace:
    rows = np.empty(len(s), dtype=TRACE_DTYPE)
    rows["start_s"] = start
    rows["sent_s"] = sent
    rows["end_s"] = end
    rows["src"] = s.src
    rows["dst"] = s.dst
    rows["link"] = bottleneck
    rows["n_bytes"] = s.n_bytes
    rows["kind"] = s.kind
    rows["job"] = s.job
    rows["tag"] = s.tag
    return Trace(rows, network, routes)


def run(schedule: Schedule, network, engine: str = "auto") -> Trace:
    """Play ``schedule`` with ``engine`` = ``"events"``, ``"batched"`` or ``"auto"``
    (batched when the schedule allows it)."""
    _check_run_args(schedule, network)
    if engine not in ("auto", "events", "batched"):
        raise ValueError(f"engine must be 'auto', 'events' or 'batched'; got {engine!r}")
    if engine == "batched" or (engine == "auto" and schedule.batched):
        return run_batched(schedule, network)
    return run_events(schedule, network)
