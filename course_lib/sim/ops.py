"""What the simulator plays and what it returns: a schedule of ops, and the trace.

A **schedule** is a list of operations (ops), each either

* a *send*: ``n_bytes`` from node ``src`` to node ``dst`` over the network's
  route, or
* a *compute*: ``duration_s`` of work on a node (a backward pass, a
  reduction, a launch).

Each op names the ops it waits for (``deps``: it may start ``extra_s`` after
the last of them has *arrived*) and a **queue**: ops of one queue run one at
a time in the order they were added (a GPU stream, a NCCL channel's sender).
Build one with :class:`ScheduleBuilder`; play it with an engine
(:mod:`course_lib.sim.events` or :mod:`course_lib.sim.steps`, or
:func:`course_lib.sim.core.run`, which picks); read the :class:`Trace`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SEND", "COMPUTE", "Schedule", "ScheduleBuilder", "Trace", "TRACE_DTYPE",
           "check_run_args"]

SEND, COMPUTE = 0, 1


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

    @classmethod
    def of_run(cls, s: Schedule, network, start, sent, end, bottleneck, routes) -> "Trace":
        """The trace of schedule ``s`` from an engine's per-op times and bottlenecks."""
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
        return cls(rows, network, routes)


def check_network(network) -> None:
    """Refuse anything but a Network, naming the parameter."""
    if not all(hasattr(network, a) for a in ("pair_table", "link_bw")):
        raise TypeError(f"network must be a course_lib.sim.Network, got "
                        f"{type(network).__name__}")


def check_run_args(schedule, network) -> None:
    """Refuse anything but a Schedule and a Network, naming the parameter."""
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a Schedule (from ScheduleBuilder().build()), "
                        f"got {type(schedule).__name__}")
    check_network(network)
