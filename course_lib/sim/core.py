"""The simulator's core in one page: what it plays, its two engines, and :func:`run`.

* :mod:`course_lib.sim.ops` -- a :class:`Schedule` of ops (sends and
  computes, with deps and queues), built by :class:`ScheduleBuilder` (or
  held in step form: batches of :class:`Step` that repeat the same arrays,
  as a ring's do), and the :class:`Trace` an engine returns (one row per op).
* :mod:`course_lib.sim.events` -- the reference engine: :class:`Engine`, a
  heap of timed events in the spirit of SimPy's ``core.py``, and
  :func:`run_events`, which plays any schedule with max-min fair sharing of
  every directed link.
* :mod:`course_lib.sim.steps` -- the fast engine for step schedules (rings,
  all-to-all rounds): :func:`run_batched` plays a whole step at once with
  numpy (a static equal share of each link per step; the same times as the
  event engine when no two sends of a step share a link), and
  :func:`run_steps` the same arithmetic step by step from a generator of
  :class:`Step`, keeping no trace.

:func:`run` picks the engine.  Every name stays importable from here.

Chapter 7 (collectives) and 8 (overlap, stragglers, contention).
"""

from __future__ import annotations

from .events import Engine, run_events
from .ops import (COMPUTE, SEND, TRACE_DTYPE, Schedule, ScheduleBuilder, Trace,
                  check_run_args)
from .steps import Step, run_batched, run_steps

__all__ = ["SEND", "COMPUTE", "Schedule", "ScheduleBuilder", "Trace", "Engine",
           "run_events", "run_batched", "run", "Step", "run_steps", "TRACE_DTYPE"]


def run(schedule: Schedule, network, engine: str = "auto") -> Trace:
    """Play ``schedule`` with ``engine`` = ``"events"``, ``"batched"`` or ``"auto"``
    (batched when the schedule allows it)."""
    check_run_args(schedule, network)
    if engine not in ("auto", "events", "batched"):
        raise ValueError(f"engine must be 'auto', 'events' or 'batched'; got {engine!r}")
    if engine == "batched" or (engine == "auto" and schedule.batched):
        return run_batched(schedule, network)
    return run_events(schedule, network)
