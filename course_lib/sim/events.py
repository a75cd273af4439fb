"""The reference engine: a heap of timed events, in the spirit of SimPy's ``core.py``.

:class:`Engine` is the whole event loop: ``schedule(delay, fn, *args)``
pushes ``(time, seq, fn, args)`` on a heap; ``run()`` pops the earliest and
calls it (``seq`` keeps events of equal time in the order they were made).

:func:`run_events` plays a :class:`~course_lib.sim.ops.Schedule` on it.  An
op goes through five events::

    ready  -- all its deps have arrived (+ extra_s): it joins its queue
    begin  -- its queue is free: a compute starts its clock, a send takes
              its share of every link of its route
    tx_done / finished -- the send's last byte left / the compute ended:
              the queue is free for the next op
    arrived -- route latency later (0 for a compute): its dependants count down

**Sharing policy: max-min fair sharing.**  Sends active on a directed link
share it equally, except that a send held back by another link of its
route hands its unused share to the others (progressive filling: the most
contended link fixes the rate of its sends, their bandwidth is removed
everywhere, repeat).  Rates are recomputed whenever a send starts or ends;
a send whose rate changed gets a new ``tx_done`` event and the old one,
carrying a stale version number, is ignored.  Links are full duplex: the two
directions never share.  Handles any schedule.

Chapter 7 (collectives) and 8 (overlap, stragglers, contention).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numpy as np

from .ops import COMPUTE, Schedule, Trace, check_run_args

__all__ = ["Engine", "run_events"]


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


@dataclass
class _Send:
    """A send on the wire: bytes still to go at ``since_s``, at ``rate``."""

    remaining_bytes: float
    rate: float = 0.0            # bytes/s, its max-min fair share
    since_s: float = 0.0         # when remaining_bytes was last brought up to date
    version: int = 0             # bumped at every new rate; older tx_done events are stale
    scheduled: bool = False      # a tx_done event exists for it


class _Playback:
    """One play of a schedule: the engine, the per-op times and who waits for whom."""

    def __init__(self, schedule: Schedule, network):
        s = self.s = schedule
        n = len(s)
        self.pair, self.table, self.lat, _ = network.pair_table(s.src, s.dst)
        self.bw = network.link_bw
        self.eng = Engine()
        self.start = np.full(n, np.nan)
        self.sent = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.bottleneck = np.full(n, -1, dtype=np.int64)
        self.waiting = np.count_nonzero(s.deps >= 0, axis=1)  # deps not yet arrived
        self.dependants = [[] for _ in range(n)]
        for i, row in enumerate(s.deps):
            for d in row:
                if d >= 0:
                    self.dependants[d].append(i)
        self.queued: dict[int, list] = {}    # queue -> ready op ids (a heap: oldest op first)
        self.busy: set[int] = set()          # queues running an op
        self.active: dict[int, _Send] = {}   # sends on the wire
        self.on_link: dict[int, set] = {}    # link -> active sends crossing it

    def links_of(self, i) -> list[int]:
        return [int(x) for x in self.table[self.pair[i]] if x >= 0]

    def play(self) -> None:
        for i in np.flatnonzero(self.waiting == 0):
            self.eng.schedule(self.s.extra_s[i], self.ready, int(i))
        self.eng.run()

    # --- the life of an op ------------------------------------------------
    def ready(self, i) -> None:
        q = self.s.queue[i]
        heapq.heappush(self.queued.setdefault(q, []), i)
        if q not in self.busy:
            self.next_in(q)

    def next_in(self, q) -> None:
        waiting = self.queued.get(q)
        if waiting:
            self.busy.add(q)
            self.begin(heapq.heappop(waiting))

    def begin(self, i) -> None:
        now = self.eng.now
        self.start[i] = now
        if self.s.kind[i] == COMPUTE:
            self.eng.schedule(self.s.duration_s[i], self.finished, i)
            return
        for link in self.links_of(i):
            self.on_link.setdefault(link, set()).add(i)
        self.active[i] = _Send(self.s.n_bytes[i], since_s=now)
        self.reprice()

    def tx_done(self, i, version) -> None:
        send = self.active.get(i)
        if send is None or send.version != version:
            return  # stale event: the rate changed since it was scheduled
        del self.active[i]
        self.sent[i] = self.eng.now
        for link in self.links_of(i):
            self.on_link[link].discard(i)
        self.reprice()
        self.free(self.s.queue[i])
        self.eng.schedule(self.lat[self.pair[i]], self.arrived, i)

    def finished(self, i) -> None:  # a compute ended
        self.sent[i] = self.eng.now
        self.free(self.s.queue[i])
        self.arrived(i)

    def free(self, q) -> None:
        self.busy.discard(q)
        self.next_in(q)

    def arrived(self, i) -> None:
        self.end[i] = self.eng.now
        for j in self.dependants[i]:
            self.waiting[j] -= 1
            if self.waiting[j] == 0:
                self.eng.schedule(self.s.extra_s[j], self.ready, j)

    # --- max-min fair sharing -----------------------------------------------
    def reprice(self) -> None:
        """Bring every active send up to now, then give each its max-min fair
        rate (progressive filling) and a tx_done event where the rate moved."""
        now = self.eng.now
        for send in self.active.values():
            send.remaining_bytes -= send.rate * (now - send.since_s)
            send.since_s = now
        cap = {link: self.bw[link] for link, ops in self.on_link.items() if ops}
        left = {link: set(ops) for link, ops in self.on_link.items() if ops}
        rate = {}
        while left:
            tightest = min(left, key=lambda link: cap[link] / len(left[link]))
            fair = cap[tightest] / len(left[tightest])
            for i in list(left[tightest]):
                rate[i] = fair
                self.bottleneck[i] = tightest
                for link in self.links_of(i):
                    if link in left:
                        left[link].discard(i)
                        cap[link] -= fair
                        if not left[link]:
                            del left[link]
        for i, r in rate.items():
            send = self.active[i]
            if send.rate != r or not send.scheduled:
                send.rate = r
                send.version += 1
                send.scheduled = True
                self.eng.schedule(max(send.remaining_bytes, 0.0) / r, self.tx_done, i,
                                  send.version)


def run_events(schedule: Schedule, network) -> Trace:
    """Play a schedule on the network with the heap engine (max-min fair sharing)."""
    check_run_args(schedule, network)
    p = _Playback(schedule, network)
    p.play()
    if np.isnan(p.end).any():
        raise RuntimeError("schedule deadlocked: some ops never ran (a cycle in deps?)")
    return Trace.of_run(schedule, network, p.start, p.sent, p.end, p.bottleneck,
                        (p.pair, p.table))
