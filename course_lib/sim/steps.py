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
  and returns its :class:`~course_lib.sim.ops.Trace`.
* :func:`run_steps` is the same arithmetic without the schedule and the
  trace: it takes the batches one at a time from a generator (a
  :class:`Step` each, sends only) and keeps only the end times the next
  batches wait for, so memory grows with the ranks, not with the transfers.

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
    ends: deque = deque(maxlen=window)  # end times of the last `window` steps
    queue_free = np.zeros(0)
    t_last, n_ops = 0.0, 0
    src = dst = None
    for st in steps:
        if st.src is not src or st.dst is not dst:  # new sends: routes and shares
            src, dst = st.src, st.dst
            pair, table, lat, _ = network.pair_table(src, dst)
            rate, _ = equal_shares(table[pair], network.link_bw)
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
