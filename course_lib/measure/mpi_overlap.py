"""Lab (chapter 8): overlap, buckets and a straggler, measured on a real engine.

``overlap_lab`` launches ``mpiexec -n N python -m
course_lib.measure.mpi_overlap_worker`` (the worker's docstring says what a
step is) with the launcher of the MPI that mpi4py was built with (MPICH or
Open MPI, :func:`course_lib.measure.mpi_allreduce.mpi_setup`), and reads its
JSON into a :class:`LabResult`: one record per variant (``compute``,
``comm-K``, ``sequential-K``, ``overlap-K``, ``straggler-K``) with the step's
median time over the repeats (slowest rank), its spread, and the time at
which the compute had finished (``compute_done_s``), so that the **exposed
tail** is ``median_s - compute_done_s``.

The model of the same step is :func:`course_lib.traffic.bucket_overlap_schedule`
on the measured compute and the measured communication of the K buckets
(``comm-K``); :func:`course_lib.trace.overlap_vs_model` puts them side by
side (measure itself uses only the model layers below it).

Timing: a barrier starts each step; ``median_s`` is the median over
``repeats`` steps of the slowest rank's step.  The worker runs the steps in
rounds (every variant once per round), so load that comes and goes on a shared
machine falls on every variant alike.  On a busy shared machine the spread is
part of the result.

Taught in chapter 8 (Traffic Lights).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from ..units import check_int, check_nonnegative, check_positive, parse_size
from .harness import LabResult, Timing, machine_info, progress_bar
from .mpi_allreduce import (_run_with_progress, flavour_of, launcher_version, mpi_setup,
                            worker_env)

__all__ = ["overlap_lab", "overlap_from_json", "OVERLAP_BUCKETS"]

#: Bucket counts of the full lab (quick: 1 and 4).
OVERLAP_BUCKETS = (1, 2, 4, 8)


def overlap_lab(n_ranks: int = 2, *, grad_bytes=16 << 20, buckets=None,
                forward_s: float = 0.01, backward_s: float = 0.03,
                straggler_s: float = 0.01, quick: bool = False,
                repeats: int | None = None, timeout_s: float | None = None,
                progress: bool = True, mpiexec: str | None = None) -> LabResult:
    """One training step per rank over MPI: compute, gradient buckets,
    ``Iallreduce`` after the compute or overlapped behind the backward pass,
    and one rank that sleeps.

    Parameters
    ----------
    n_ranks : int
        MPI processes (2 by default; 2-4 on one machine).
    grad_bytes : int or str
        All gradients, bytes (``"16MiB"`` works); split into K equal buckets.
    buckets : sequence of int, optional
        Bucket counts K (default :data:`OVERLAP_BUCKETS`, quick ``(1, 4)``).
    forward_s, backward_s : float
        Compute time of the forward and backward passes, seconds.
    straggler_s : float
        How long rank 0 sleeps before its backward pass in ``straggler-K``.
    quick : bool
        Two bucket counts, three repeats: a few seconds.
    repeats : int, optional
        Steps per variant (default 5, quick 3).
    timeout_s : float, optional
        Kill the MPI job after this long (default 60 s).
    mpiexec : str, optional
        The launcher (default: the one of mpi4py's MPI).

    Returns
    -------
    LabResult
        Records per variant: ``kind``, ``n_buckets``, ``median_s`` (step, the
        slowest rank), ``compute_done_s``, ``exposed_s`` (= median_s -
        compute_done_s), ``wrong`` in the metadata.  Summary: ``compute_s``,
        ``comm_K<k>_s``, ``sequential_K<k>_s``, ``overlap_K<k>_s``,
        ``straggler_s``.  ``skipped`` says why where MPI is missing.
    """
    n = check_int(n_ranks, "n_ranks", minimum=2, maximum=64)
    total = int(parse_size(grad_bytes, "grad_bytes")) if isinstance(grad_bytes, str) \
        else check_int(grad_bytes, "grad_bytes", minimum=4 * 8)
    if total < 4 * 8:
        raise ValueError(f"grad_bytes must be >= 32 bytes, got {grad_bytes!r}")
    ks = OVERLAP_BUCKETS if buckets is None and not quick else (buckets or (1, 4))
    ks = sorted({check_int(k, "buckets", minimum=1, maximum=64) for k in ks})
    forward_s = check_nonnegative(forward_s, "forward_s")
    backward_s = check_positive(backward_s, "backward_s")
    straggler_s = check_nonnegative(straggler_s, "straggler_s")
    repeats = check_int(repeats if repeats is not None else (3 if quick else 5),
                        "repeats", minimum=1)
    timeout_s = check_positive(timeout_s if timeout_s is not None else 60.0, "timeout_s")
    result = LabResult(name="overlap", metadata=machine_info(), plot_y="median_s")
    if mpiexec is None:
        mpiexec, flavour, library = mpi_setup()
        if mpiexec is None:
            result.skipped = library
            return result
    else:
        flavour = flavour_of(launcher_version(mpiexec)) if os.path.isfile(mpiexec) \
            else "mpich"
    steps = (1 + 3 * len(ks) + 1) * repeats     # the worker's PROGRESS lines: one a step
    bar = progress_bar(range(steps), total=steps, desc="overlap", disable=not progress)
    ticker = iter(bar)
    try:
        with tempfile.TemporaryDirectory(prefix="course_overlap_") as tmp:
            out = os.path.join(tmp, "overlap.json")
            cmd = [mpiexec, "-n", str(n), sys.executable, "-m",
                   "course_lib.measure.mpi_overlap_worker", "--grad-bytes", str(total),
                   "--buckets", ",".join(map(str, ks)), "--forward-s", repr(forward_s),
                   "--backward-s", repr(backward_s), "--straggler-s", repr(straggler_s),
                   "--repeats", str(repeats), "--out", out]
            env = worker_env(n, None, flavour)
            _run_with_progress(cmd, env, timeout_s, lambda: next(ticker, None))
            with open(out) as f:
                data = json.load(f)
    finally:
        if hasattr(bar, "close"):
            bar.close()
    data["command"] = " ".join(cmd)
    data["mpi_flavour"] = flavour
    _fill(result, data)
    result.metadata["quick"] = quick
    return result


def overlap_from_json(path) -> LabResult:
    """The lab's result from a worker's JSON (``--out``), e.g. a cluster run."""
    with open(path) as f:
        data = json.load(f)
    result = LabResult(name="overlap", metadata={}, plot_y="median_s")
    _fill(result, data)
    return result


def _fill(result: LabResult, data: dict) -> None:
    import numpy as np

    result.metadata.update({k: data.get(k) for k in (
        "n_ranks", "hosts", "grad_bytes", "forward_s", "backward_s", "straggler_s",
        "poll_s", "mpi_library", "wrong", "command", "mpi_flavour")})
    if data.get("wrong"):
        raise RuntimeError(f"overlap lab: {data['wrong']} wrong elements in the "
                           f"AllReduce results")
    for rec in data["records"]:
        t = Timing.from_samples(rec["samples_s"])
        done = float(np.median(rec["compute_done_s"]))
        r = {"lab": "overlap", "variant": rec["variant"], "kind": rec["kind"],
             "n_buckets": rec["n_buckets"], "n_bytes": data["grad_bytes"]}
        r.update(t.as_record())
        r.update({"compute_done_s": done,
                  "exposed_s": max(0.0, t.median_s - done) if rec["kind"] != "comm" else
                  t.median_s,
                  "samples_s": list(rec["samples_s"])})
        result.records.append(r)
    s = result.summary
    for r in result.records:
        k = r["n_buckets"]
        if r["kind"] == "compute":
            s["compute_s"] = r["median_s"]
        elif r["kind"] == "straggler":
            s["straggler_s"] = r["median_s"]
            s["straggler_buckets"] = k
        else:
            s[f"{r['kind']}_K{k}_s"] = r["median_s"]
