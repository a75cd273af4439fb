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

import numpy as np

__all__ = ["SEND", "COMPUTE", "Schedule", "ScheduleBuilder", "Trace", "TRACE_DTYPE",
           "COLUMNS", "check_run_args", "step_columns"]

SEND, COMPUTE = 0, 1


#: The per-op columns of a :class:`Schedule`, in order.
COLUMNS = ("kind", "src", "dst", "n_bytes", "duration_s", "queue", "deps", "extra_s",
           "batch", "job", "tag")


class Schedule:
    """Ops as parallel numpy arrays (one entry per op).

    ``deps`` is an (ops x K) int array of op ids padded with -1.  ``batch``
    is non-decreasing when the schedule is a step schedule (``batched``).

    A schedule may also be held in **step form** (:meth:`from_steps`): a
    list of :class:`~course_lib.sim.steps.Step` batches whose sends repeat
    the same arrays (a ring's R x n sends, step after step).  Then
    :attr:`steps` is that list and the columns are built from it only when
    one is read (the batched engine plays the steps themselves), so a
    million-transfer ring costs its R x n arrays, not ~80 bytes a transfer.

    >>> import numpy as np
    >>> from course_lib.sim.steps import Step
    >>> pair = np.array([0, 1]), np.array([1, 0])
    >>> s = Schedule.from_steps([Step(*pair, 1e6, np.array([0, 1]), np.zeros(2)),
    ...                          Step(*pair, 1e6, np.array([0, 1]), np.zeros(2),
    ...                               dep=np.array([1, 0]))])
    >>> len(s), s.deps[:, 0].tolist(), s.batch.tolist()
    (4, [-1, -1, 1, 0], [0, 0, 1, 1])
    """

    def __init__(self, kind, src, dst, n_bytes, duration_s, queue, deps, extra_s,
                 batch, job, tag, batched: bool = True):
        self._cols = dict(kind=kind, src=src, dst=dst, n_bytes=n_bytes,
                          duration_s=duration_s, queue=queue, deps=deps, extra_s=extra_s,
                          batch=batch, job=job, tag=tag)
        self._n = len(kind)
        self.batched = batched
        self.steps = None  # the step form, when built from steps
        self._job = 0

    @classmethod
    def from_steps(cls, steps, job: int = 0) -> "Schedule":
        """A step schedule held as its steps (sends only; ``Step.back`` counts
        steps of this list); columns are built on first read."""
        steps = list(steps)
        if not steps:
            raise ValueError("steps is empty: a schedule needs at least one step")
        self = cls.__new__(cls)
        self._cols = None
        self.steps = steps
        self._job = int(job)
        self._n = sum(len(st.src) for st in steps)
        self.batched = True
        return self

    def columns(self) -> dict:
        """The per-op columns (built from the steps on first call)."""
        if self._cols is None:
            self._cols = step_columns(self.steps, 0, 0, self._job)
        return self._cols

    def __len__(self):
        return self._n


def _column(name):
    return property(lambda self: self.columns()[name],
                    doc=f"Per-op ``{name}`` (numpy array).")


for _name in COLUMNS:
    setattr(Schedule, _name, _column(_name))


def step_columns(steps, first_id: int, first_batch: int, job: int) -> dict:
    """The columns of ``steps`` (a list of :class:`~course_lib.sim.steps.Step`)
    as ops ``first_id, first_id + 1, ...`` in batches ``first_batch, ...``."""
    sizes = np.array([len(st.src) for st in steps], dtype=np.int64)
    base = first_id + np.concatenate(([0], np.cumsum(sizes)[:-1]))
    deps = []
    for k, st in enumerate(steps):
        if st.dep is None:
            deps.append(np.full(len(st.src), -1, dtype=np.int64))
        else:
            if not 1 <= st.back <= k:
                raise ValueError(f"step {k}: Step.back={st.back} reaches before the "
                                 f"first step")
            d = np.asarray(st.dep, dtype=np.int64)
            if len(d) != sizes[k] or (len(d) and d.max() >= sizes[k - st.back]):
                raise ValueError(f"step {k}: Step.dep must hold {sizes[k]} positions "
                                 f"below {sizes[k - st.back]} (or -1)")
            deps.append(np.where(d >= 0, base[k - st.back] + d, -1))
    n = int(sizes.sum())

    def cat(get, dtype):
        return np.concatenate([np.broadcast_to(np.asarray(get(st), dtype=dtype), (m,))
                               for st, m in zip(steps, sizes)])
    return dict(kind=np.full(n, SEND, dtype=np.int8),
                src=cat(lambda st: st.src, np.int64), dst=cat(lambda st: st.dst, np.int64),
                n_bytes=cat(lambda st: st.n_bytes, float), duration_s=np.zeros(n),
                queue=cat(lambda st: st.queue, np.int64),
                deps=np.concatenate(deps)[:, None],
                extra_s=cat(lambda st: st.extra_s, float),
                batch=np.repeat(first_batch + np.arange(len(steps)), sizes),
                job=np.full(n, job, dtype=np.int32),
                tag=cat(lambda st: st.tag, np.int32))


class ScheduleBuilder:
    """Collect ops (vectorised appends) and freeze them into a :class:`Schedule`.

    Every ``add_*`` returns the new op ids for use as deps (a numpy array;
    :meth:`add_steps` a ``range``).

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

    def add_steps(self, steps, job=0) -> range:
        """Sends given as batches (:class:`~course_lib.sim.steps.Step`, each a
        batch of its own; ``Step.back`` counts steps of this call), kept in
        step form: built alone, the schedule holds the steps and no per-op
        arrays (:meth:`Schedule.from_steps`).  Returns the new op ids as a
        ``range`` (``np.asarray`` makes it an array), so that a schedule of
        millions of sends does not hold an id per send unless asked."""
        steps = list(steps)
        if not steps:
            raise ValueError("steps is empty: add at least one Step")
        m = sum(len(st.src) for st in steps)
        ids = range(self.n_ops, self.n_ops + m)
        self._parts.append(dict(steps=steps, first_id=self.n_ops,
                                first_batch=self._batch + 1, job=int(job)))
        self._batch += len(steps)
        self.n_ops += m
        return ids

    def build(self) -> Schedule:
        if not self._parts:
            raise ValueError("the schedule is empty")
        if len(self._parts) == 1 and "steps" in self._parts[0] and self.batched:
            p = self._parts[0]
            return Schedule.from_steps(p["steps"], p["job"])
        parts = [step_columns(p["steps"], p["first_id"], p["first_batch"], p["job"])
                 if "steps" in p else p for p in self._parts]
        k = max(p["deps"].shape[1] for p in parts)
        cols = {}
        for name in COLUMNS:
            if name == "deps":
                cols[name] = np.concatenate([
                    np.pad(p["deps"], ((0, 0), (0, k - p["deps"].shape[1])),
                           constant_values=-1) for p in parts])
            else:
                cols[name] = np.concatenate([p[name] for p in parts])
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
        self._rows = rows
        self.network = network
        self.node_names = list(network.nodes)
        self.link_names = list(network.link_names)
        self._routes = routes  # (pair index per op, padded link table)
        self._steps = None     # a step schedule's times (of_steps), rows built on demand

    @property
    def rows(self) -> np.ndarray:
        """One row per op (:data:`TRACE_DTYPE`); a step schedule's rows are
        assembled from its start times on first read."""
        if self._rows is None:
            self._rows = self._steps.rows()
        return self._rows

    def __len__(self):
        return len(self._steps.start) if self._rows is None else len(self._rows)

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
        if self._steps is not None:
            return self._steps.op_links(i)
        if self.rows["kind"][i] != SEND:
            return []
        pair, table = self._routes
        return [int(x) for x in table[pair[i]] if x >= 0]

    @property
    def last_end_s(self) -> float:
        """The last delivery (or end of a compute), seconds."""
        if self._rows is None:
            return self._steps.last_end_s
        return float(self._rows["end_s"].max())

    @property
    def makespan_s(self) -> float:
        if self._rows is None:
            return float(self._steps.last_end_s - min(0.0, self._steps.start.min()))
        return float(self.rows["end_s"].max() - min(0.0, self.rows["start_s"].min()))

    @classmethod
    def of_steps(cls, s: Schedule, network, start, pattern_of_step, patterns,
                 last_end_s) -> "Trace":
        """The trace of step schedule ``s`` (:meth:`Schedule.from_steps`) from
        each op's start time: step ``k`` used ``patterns[pattern_of_step[k]]``,
        a ``(pair, table, rate, link, lat)`` of its sends (route index per
        send, padded route table, rate, bottleneck link, route latency); the
        rest of each row follows from those when :attr:`rows` is first read."""
        tr = cls(None, network)
        tr._steps = _StepTimes(s, start, pattern_of_step, patterns, last_end_s)
        return tr

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


class _StepTimes:
    """A step schedule's trace kept as start times; rows built on request."""

    def __init__(self, s, start, pattern_of_step, patterns, last_end_s):
        self.s, self.start = s, start
        self.pattern_of_step, self.patterns = pattern_of_step, patterns
        self.last_end_s = float(last_end_s)
        sizes = [len(st.src) for st in s.steps]
        self.offsets = np.concatenate(([0], np.cumsum(sizes)))

    def rows(self) -> np.ndarray:
        steps = self.s.steps
        pat = self.pattern_of_step
        dur = self._column(lambda k: (pat[k], id(steps[k].n_bytes)),
                           lambda k: steps[k].n_bytes / self.patterns[pat[k]][2], float)
        sent = self.start + dur  # the engine's own sum
        del dur
        rows = np.empty(len(self.start), dtype=TRACE_DTYPE)
        rows["start_s"] = self.start
        rows["sent_s"] = sent
        rows["end_s"] = sent + self._column(lambda k: pat[k],
                                            lambda k: self.patterns[pat[k]][4], float)
        del sent
        rows["link"] = self._column(lambda k: pat[k], lambda k: self.patterns[pat[k]][3],
                                    np.int32)
        for name in ("src", "dst", "n_bytes", "tag"):
            rows[name] = self._column(lambda k, f=name: id(getattr(steps[k], f)),
                                      lambda k, f=name: getattr(steps[k], f),
                                      rows.dtype[name])
        rows["kind"] = SEND
        rows["job"] = self.s._job
        return rows

    def _column(self, key, value, dtype) -> np.ndarray:
        """A per-op column from per-step values (arrays or numbers): steps
        whose ``key`` matches share one value, written to all their rows at once."""
        sizes = np.diff(self.offsets)
        if len(sizes) and np.all(sizes == sizes[0]):
            out = np.empty((len(sizes), int(sizes[0])), dtype=dtype)
            groups: dict = {}
            for k in range(len(sizes)):
                groups.setdefault(key(k), []).append(k)
            for ks in groups.values():
                out[ks] = value(ks[0])
            return out.reshape(-1)
        return np.concatenate([np.broadcast_to(np.asarray(value(k), dtype=dtype), (m,))
                               for k, m in enumerate(sizes)])

    def op_links(self, i: int) -> list[int]:
        if not 0 <= i < len(self.start):
            raise IndexError(f"op {i} is not in this trace of {len(self.start)} ops")
        k = int(np.searchsorted(self.offsets, i, side="right")) - 1
        pair, table = self.patterns[self.pattern_of_step[k]][:2]
        return [int(x) for x in table[pair[i - self.offsets[k]]] if x >= 0]


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
