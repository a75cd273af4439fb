"""The fast engine: a step schedule played a whole step at a time with numpy.

*Step schedules* (ring, hierarchical rings, all-to-all rounds) come in
batches -- one ring step -- whose dependencies all lie in earlier batches and
whose queues are distinct.  A batch is computed at once: each send starts at
``max(arrival of its deps + extra_s, its queue free)``, moves at the **static
equal share** of the most contended link of its route (a link's bandwidth
over the number of the batch's sends that cross it, for the send's whole
duration: no max-min redistribution), and is delivered the route latency
after its last byte left.  Sends of different batches do not see each other.
With no contention -- one send per link per step, the usual case for rings --
it gives the same times as the event engine (:mod:`course_lib.sim.events`).

* :func:`run_batched` plays a whole :class:`~course_lib.sim.ops.Schedule`
  and returns its :class:`~course_lib.sim.ops.Trace`.  A schedule in step
  form (a ring: :meth:`~course_lib.sim.ops.ScheduleBuilder.add_steps`) is
  played by the step engine below, which keeps each send's start time and
  nothing else per send; the trace's rows are assembled from them when read.
* :func:`run_steps` is the same arithmetic without the schedule and the
  trace: it takes the batches one at a time from a generator (a
  :class:`Step` each, sends only) and keeps only the end times the next
  batches wait for, so memory grows with the ranks, not with the transfers.

The step engine does per step only what the step's numbers need: a ring
repeats the same ``src``/``dst``/``queue``/``dep`` arrays at every step, so
routes, shares, ``n_bytes / rate`` and the dependency gather (a shift: each
send waits for its neighbour's) are worked out once, and a step costs four
passes over its sends.

Chapter 7 (collectives).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from .ops import SEND, Schedule, Trace, check_network, check_run_args

__all__ = ["run_batched", "Step", "run_steps", "equal_shares"]


def equal_shares(routes: np.ndarray, bw: np.ndarray):
    """Rate and bottleneck link of each send of one step.

    ``routes`` is (sends x hops) link ids padded with -1; a link's bandwidth is
    split equally among the step's sends that cross it, and each send moves
    at its smallest share.
    """
    valid = routes >= 0
    crossing = np.bincount(routes[valid], minlength=len(bw))
    link = np.maximum(routes, 0)
    share = np.where(valid, bw[link] / np.maximum(crossing[link], 1), np.inf)
    tightest = share.argmin(axis=1)
    rows = np.arange(len(routes))
    return share[rows, tightest], routes[rows, tightest]


def run_batched(schedule: Schedule, network) -> Trace:
    """Play a step schedule batch by batch with numpy (static fair share per batch).

    Needs ``schedule.batched``: batches non-decreasing, every dep in an
    earlier batch, at most one op per queue in a batch.
    """
    check_run_args(schedule, network)
    s = schedule
    if not s.batched:
        raise ValueError("schedule is not a step schedule; use run_events")
    if s.steps is not None:  # step form: play the steps, keep only start times
        start = np.empty(len(s))
        window = max([st.back for st in s.steps if st.dep is not None], default=1)
        t_last, _, pattern_of_step, patterns = _play(s.steps, network, window, start)
        return Trace.of_steps(s, network, start, pattern_of_step, patterns, t_last)
    n = len(s)
    pair, table, lat, _ = network.pair_table(s.src, s.dst)
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
        dur = s.duration_s[a:b].copy()
        sends = s.kind[a:b] == SEND
        arrive_lat = np.zeros(b - a)
        if sends.any():
            rate, link = equal_shares(table[pair[a:b][sends]], network.link_bw)
            dur[sends] = s.n_bytes[a:b][sends] / rate
            bottleneck[a:b][sends] = link
            arrive_lat[sends] = lat[pair[a:b][sends]]
        t1 = t0 + dur
        queue_free[q] = t1
        start[a:b] = t0
        sent[a:b] = t1
        end[a:b] = t1 + arrive_lat
    return Trace.of_run(s, network, start, sent, end, bottleneck, (pair, table))


@dataclass
class Step:
    """One batch of sends of a step schedule, for :func:`run_steps`.

    ``src``, ``dst`` (node ids), ``queue`` (distinct within the step) and
    ``extra_s`` are arrays of one entry per send; ``n_bytes`` an array or
    a number.  ``dep`` holds, per send, the position of the send it waits
    for in the step ``back`` steps earlier (-1: none); ``dep=None``: no
    send of this step waits.  ``tag`` labels the step's ops in a trace.
    A generator that yields the *same* array objects again (``src`` and
    ``dst``, ``queue``, ``dep``) tells the engine that the routes and shares,
    the queues, the dependency pattern are unchanged: they are worked out
    once, not at every step.
    """

    src: np.ndarray
    dst: np.ndarray
    n_bytes: np.ndarray | float
    queue: np.ndarray
    extra_s: np.ndarray
    dep: np.ndarray | None = None
    back: int = 1
    tag: int = 0


class _ShiftGather:
    """``prev[dep]`` (0 where ``dep < 0``) for one dependency pattern, done as
    one slice copy ``prev[i + c]`` (``c`` the commonest offset ``dep[i] - i``:
    a ring's sends wait for their neighbour's) plus a gather of the exceptions
    (each ring's first position).  Works for any ``dep``; with no common
    offset it is a plain gather."""

    def __init__(self, dep: np.ndarray):
        dep = np.asarray(dep, dtype=np.int64)
        m = len(dep)
        valid = dep >= 0
        off = dep - np.arange(m)
        self.c = 0
        if valid.any():
            vals, counts = np.unique(off[valid], return_counts=True)
            self.c = int(vals[counts.argmax()])
        ok = valid & (off == self.c)
        inside = np.flatnonzero(ok)  # the slice spans the first to the last of them
        self.lo, self.hi = (int(inside[0]), int(inside[-1]) + 1) if len(inside) else (0, 0)
        self.exc = np.flatnonzero(~ok)
        if len(self.exc) > m // 2:  # no common shift: gather everything
            self.lo = self.hi = 0
            self.exc = np.arange(m)
        self.exc_dep = np.maximum(dep[self.exc], 0)
        self.reach = int(dep.max()) + 1 if m else 0  # the earlier step must be this long
        self.exc_none = ~valid[self.exc]
        self.m = m

    def __call__(self, prev: np.ndarray, extra_s, out=None) -> np.ndarray:
        """``prev[dep] + extra_s`` (``extra_s`` an array of ``m`` or a number),
        written to ``out`` (a new array if None)."""
        extra = np.broadcast_to(extra_s, (self.m,))
        ready = np.empty(self.m) if out is None else out
        lo, hi, c = self.lo, self.hi, self.c
        if hi > lo:
            np.add(prev[lo + c:hi + c], extra[lo:hi], out=ready[lo:hi])
        if len(self.exc):
            got = prev[self.exc_dep]
            got[self.exc_none] = 0.0
            ready[self.exc] = got + extra[self.exc]
        return ready


def _play(steps, network, window: int, start_out=None):
    """The step engine: play ``steps`` in order, keep the end times of the
    last ``window`` steps, write each op's start time to ``start_out`` (when
    given).  Returns ``(last delivery, sends played, pattern of each step,
    patterns)``, a pattern being ``(pair, table, rate, link, lat)`` of one
    ``(src, dst)`` pair of arrays.

    Work that depends only on the arrays is done once per array object: the
    routes and equal shares (``src``, ``dst``), the dependency gather
    (``dep``), ``n_bytes / rate``; a queue array that repeats is not written
    back to the queue table until another one comes (its free times are the
    last step's send ends).
    """
    ends: deque = deque(maxlen=window)  # end times of the last `window` steps
    queue_free = np.zeros(0)
    t_last, n_ops = -np.inf, 0
    src = dst = dep = nb = q = None
    gather = rate = arrive_lat = dur = t1 = None
    dur_negative = False
    patterns, pattern_of_step = [], []
    spare: list = []  # arrays of finished steps, reused (no fresh memory per step)

    def take(m):
        while spare:
            a = spare.pop()
            if len(a) == m:
                return a
        return np.empty(m)
    end = None  # the last step's delivery times (their max not taken yet)
    for st in steps:
        same = st.src is src and st.dst is dst and st.queue is q
        if st.src is not src or st.dst is not dst:  # new sends: routes and shares
            src, dst = st.src, st.dst
            pair, table, lat, _ = network.pair_table(src, dst)
            rate, link = equal_shares(table[pair], network.link_bw)
            arrive_lat = lat[pair]
            patterns.append((pair, table, rate, link, arrive_lat))
            nb = None
        pattern_of_step.append(len(patterns) - 1)
        m = len(src)
        if st.queue is not q:  # hand the last queue's free times back first
            if q is not None:
                queue_free[q] = t1
            q = st.queue
            top = int(q.max()) + 1
            if top > len(queue_free):
                queue_free = np.concatenate([queue_free, np.zeros(top - len(queue_free))])
            q_free = queue_free[q]
        else:
            q_free = t1
        t = take(m)
        if st.dep is None:
            t.fill(0.0)
            t += st.extra_s
        else:
            if not 1 <= st.back <= len(ends):
                raise ValueError(f"Step.back={st.back} reaches outside the last "
                                 f"{len(ends)} steps kept (window={window})")
            if st.dep is not dep:
                if len(st.dep) != m:
                    raise ValueError(f"Step.dep has {len(st.dep)} entries for {m} sends")
                dep, gather = st.dep, _ShiftGather(st.dep)
            if gather.reach > len(ends[-st.back]):
                raise ValueError(f"Step.dep points at send {gather.reach - 1} of a step "
                                 f"of {len(ends[-st.back])} sends")
            gather(ends[-st.back], st.extra_s, out=t)  # arrival of the deps + extra
        # t0: when the deps have arrived (+ extra) and the queue is free
        t0 = t if start_out is None else start_out[n_ops:n_ops + m]
        np.maximum(t, q_free, out=t0)
        if t1 is not None:
            spare.append(t1)  # the last step's send ends: read or handed back, now free
        if nb is None or st.n_bytes is not nb:
            nb = st.n_bytes
            dur = nb / rate
            dur_negative = bool((dur < 0).any())
        if end is not None and (not same or dur_negative):
            t_last = max(t_last, float(end.max()))
        # else: on the routes and queues of the last step, a send starts no
        # earlier than its queue's last send left (t0 >= the last t1, position
        # by position) and lasts dur >= 0 on the same route latency, so it is
        # delivered no earlier: a run of such steps has its max in its last step
        t1 = np.add(t0, dur, out=t)  # the last byte left
        end = ends[0] if len(ends) == ends.maxlen and len(ends[0]) == m else take(m)
        np.add(t1, arrive_lat, out=end)  # delivered
        ends.append(end)
        n_ops += m
    if end is not None:
        t_last = max(t_last, float(end.max()))
    if n_ops == 0:
        raise ValueError("steps is empty")
    return t_last, n_ops, np.array(pattern_of_step, dtype=np.int64), patterns


def run_steps(steps, network, window: int = 1) -> tuple[float, int]:
    """Play a step schedule given step by step, keeping no schedule and no trace.

    The arithmetic of :func:`run_batched`, batch for batch.

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
    check_network(network)
    t_last, n_ops, _, _ = _play(steps, network, window)
    return t_last, n_ops
