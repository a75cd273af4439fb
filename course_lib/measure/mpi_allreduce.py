"""Lab (chapter 7): a real AllReduce through MPI, reported like nccl-tests.

``allreduce_lab`` launches ``mpiexec -n N python -m
course_lib.measure.mpi_worker`` (see that module for the worker and the
cluster command), follows its progress, kills it at a timeout, and reads its
JSON.  Each record holds the nccl-tests columns: size ``S`` (``n_bytes``),
``median_s`` (time of one AllReduce, slowest rank), ``algbw_bytes_per_s =
S / t`` and ``busbw_bytes_per_s = algbw x 2(n-1)/n``
(:func:`course_lib.analytic.busbw_bytes_per_s`).

The sweep is fitted to the ring model of
:func:`course_lib.analytic.ring_allreduce_time_s`,
``t = 2(n-1) alpha + 2(n-1)/n x S / B``, by fitting ``T = A + D / B`` with
``D = 2(n-1)/n x S`` (bytes each rank sends) and ``alpha = A / (2(n-1))``.
Each record then carries the model's time and busbw with the fitted numbers
(``model_time_s``, ``model_busbw_bytes_per_s``); the fitted ``B`` is the
busbw the model expects at large sizes.  MPICH picks its own algorithm
(recursive doubling for small buffers, Rabenseifner's reduce-scatter +
allgather for large ones) -- the same ``2(n-1)/n S`` bytes per rank as a ring
at large sizes, fewer steps at small ones, so the fitted per-step alpha is an
effective number.

On this machine the ranks are processes sharing memory, so B is a memory
bandwidth, not a network one; with more ranks than cores they also share CPUs
(oversubscription).  MPICH then spins waiting for messages and a spinning rank
holds the core its partner needs: a 4 KiB AllReduce with 4 ranks on 2 busy
cores took 5-12 ms so.  When there are more ranks than cores, the lab sets
``MPIR_CVAR_POLLS_BEFORE_YIELD=100`` and ``MPIR_CVAR_ENABLE_HEAVY_YIELD=1``
(unless you set them), so that a waiting rank soon gives its core away
(0.5-1 ms on the same machine); the settings used are in ``metadata["runs"]``.

Taught in chapter 7 (Sharing the Load).
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..analytic import busbw_bytes_per_s, ring_allreduce_time_s
from ..units import check_int, check_positive
from .harness import (LabResult, Timing, check_sizes, fit_alpha_beta, machine_info,
                      progress_bar)

__all__ = ["allreduce_lab", "allreduce_from_json", "find_mpiexec",
           "mpi_available", "mpiexec_command", "ALLREDUCE_FULL_SIZES",
           "ALLREDUCE_QUICK_SIZES"]

#: 4 KiB .. 64 MiB, every factor of 4.
ALLREDUCE_FULL_SIZES = tuple(4**k for k in range(6, 14))
#: 4 KiB, 64 KiB, 1 MiB.
ALLREDUCE_QUICK_SIZES = (4096, 65536, 1048576)


def find_mpiexec() -> str | None:
    """Path of ``mpiexec``: next to this Python (the venv's PyPI ``mpich``),
    then under ``sys.prefix``, then on ``PATH``; None if there is none."""
    here = Path(sys.executable).parent
    for cand in (here / "mpiexec", Path(sys.prefix) / "bin" / "mpiexec"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which("mpiexec")


def mpi_available() -> tuple[bool, str]:
    """``(True, "")`` when mpi4py imports and mpiexec is found, else
    ``(False, reason)`` -- without starting MPI."""
    import importlib.util
    if importlib.util.find_spec("mpi4py") is None:
        return False, ("mpi4py is not installed: pip install mpi4py mpich "
                       "(the course's 'course' extra)")
    if find_mpiexec() is None:
        return False, ("no mpiexec found next to Python or on PATH: pip install "
                       "mpich (or load your cluster's MPI module)")
    return True, ""


def _sizes_arg(sizes) -> str:
    return ",".join(str(int(s)) for s in sizes)


def mpiexec_command(n_ranks: int, sizes_bytes, *, out: str | None = None,
                    hosts=None, ppn: int | None = None, mpiexec: str | None = None,
                    extra_args=(), repeats: int = 5, warmup: int = 2,
                    sample_s: float = 0.02, budget_s: float = 10.0) -> list[str]:
    """The command line that runs the worker (also what to type on a cluster).

    >>> cmd = mpiexec_command(4, [4096, 65536], mpiexec="mpiexec", out="ar.json")
    >>> " ".join(cmd[:3]), cmd[5:7]
    ('mpiexec -n 4', ['course_lib.measure.mpi_worker', '--sizes'])
    """
    n = check_int(n_ranks, "n_ranks", minimum=1)
    cmd = [mpiexec or find_mpiexec() or "mpiexec", "-n", str(n)]
    if hosts:
        if isinstance(hosts, str):
            hosts = [hosts]
        cmd += ["-hosts", ",".join(hosts)]
    if ppn is not None:
        cmd += ["-ppn", str(check_int(ppn, "ppn", minimum=1))]
    cmd += [str(a) for a in extra_args]
    cmd += [sys.executable, "-m", "course_lib.measure.mpi_worker",
            "--sizes", _sizes_arg(sizes_bytes), "--repeats", str(repeats),
            "--warmup", str(warmup), "--sample-s", str(sample_s),
            "--budget-s", str(budget_s)]
    if out:
        cmd += ["--out", out]
    return cmd


def allreduce_lab(n_ranks=4, sizes_bytes=None, *, quick: bool = False,
                  repeats: int | None = None, timeout_s: float | None = None,
                  progress: bool = True, hosts=None, ppn: int | None = None,
                  mpiexec: str | None = None, extra_args=(),
                  budget_s: float | None = None) -> LabResult:
    """Sweep ``comm.Allreduce`` over sizes with ``n_ranks`` MPI processes.

    Parameters
    ----------
    n_ranks : int or sequence of int
        Ranks (2-8 on one machine; more ranks than cores is allowed).  A
        sequence runs one sweep per count.
    sizes_bytes : sequence of int, optional
        Buffer sizes S per rank, bytes (multiples of 4: float32).  Default
        :data:`ALLREDUCE_FULL_SIZES` (4 KiB .. 64 MiB), quick
        :data:`ALLREDUCE_QUICK_SIZES`.
    quick : bool
        Three sizes, three repeats: a few seconds.
    repeats : int, optional
        Samples per size (default 5, quick 3).
    timeout_s : float, optional
        Kill the MPI job after this many seconds (default 120, quick 60).
    progress : bool
        Show a progress bar (sizes done, read from the worker).
    hosts : sequence of str, optional
        Host names for ``mpiexec -hosts`` (a cluster); default this machine.
    ppn : int, optional
        Ranks per host (``-ppn``).
    mpiexec : str, optional
        The launcher; default :func:`find_mpiexec`.
    extra_args : sequence of str
        More launcher options, placed before the program.
    budget_s : float, optional
        Time budget per size inside the worker, seconds.

    Returns
    -------
    LabResult
        Records (variant ``"mpi-<n>ranks"``) with ``algbw_bytes_per_s``,
        ``busbw_bytes_per_s``, ``model_time_s``, ``model_busbw_bytes_per_s``;
        fits per variant (on ``D = 2(n-1)/n S``); summary per rank count:
        fitted per-step ``alpha_s``, ``bw_bytes_per_s`` and the busbw at the
        largest size.  ``skipped`` says why when MPI is missing.

    Notes
    -----
    ``busbw = S / t x 2(n-1)/n``; model ``t = 2(n-1) alpha + 2(n-1)/n S / B``.
    Chapter 7.
    """
    counts = [n_ranks] if isinstance(n_ranks, (int, np.integer)) or \
        isinstance(n_ranks, float) else list(n_ranks)
    counts = [check_int(c, "n_ranks", minimum=2) for c in counts]
    if not counts:
        raise ValueError("n_ranks must name at least one rank count")
    if sizes_bytes is None:
        sizes_bytes = ALLREDUCE_QUICK_SIZES if quick else ALLREDUCE_FULL_SIZES
    sizes = check_sizes(sizes_bytes, minimum=4)
    for s in sizes:
        if s % 4:
            raise ValueError(f"sizes_bytes must be multiples of 4 (float32), got {s}")
    repeats = check_int(repeats if repeats is not None else (3 if quick else 5),
                        "repeats", minimum=1)
    timeout_s = check_positive(timeout_s if timeout_s is not None else
                               (60.0 if quick else 120.0), "timeout_s")
    budget_s = check_positive(budget_s if budget_s is not None else
                              (1.0 if quick else 4.0), "budget_s")

    result = LabResult(name="allreduce", metadata=machine_info(),
                       plot_y="busbw_bytes_per_s")
    ok, why = mpi_available()
    if not ok and mpiexec is None:
        result.skipped = why
        return result
    total = len(counts) * len(sizes)
    bar = progress_bar(range(total), total=total, desc="allreduce",
                       disable=not progress)
    ticker = iter(bar)
    runs = []
    try:
        for n in counts:
            with tempfile.TemporaryDirectory(prefix="course_allreduce_") as tmp:
                out = os.path.join(tmp, "allreduce.json")
                cmd = mpiexec_command(n, sizes, out=out, hosts=hosts, ppn=ppn,
                                      mpiexec=mpiexec, extra_args=extra_args,
                                      repeats=repeats,
                                      warmup=1 if quick else 2,
                                      sample_s=0.01 if quick else 0.02,
                                      budget_s=budget_s)
                env = _worker_env(n, hosts)
                _run_with_progress(cmd, env, timeout_s, lambda: next(ticker, None))
                with open(out) as f:
                    data = json.load(f)
                data["command"] = " ".join(cmd)
                data["env"] = {k: env[k] for k in env if k.startswith("MPIR_CVAR")}
                runs.append(data)
    finally:
        if hasattr(bar, "close"):
            bar.close()
    for data in runs:
        _add_run(result, data)
    result.metadata["quick"] = quick
    return result


def _worker_env(n_ranks: int, hosts) -> dict:
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if not hosts and n_ranks > cpus:
        env.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "100")
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    return env


def _run_with_progress(cmd, env, timeout_s, tick) -> None:
    """Run ``cmd``; call ``tick()`` on each ``PROGRESS`` line; kill the whole
    process group at ``timeout_s``; raise RuntimeError with the output's tail
    on failure."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    tail: list[str] = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            events = sel.select(timeout=min(left, 0.5))
            if events:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    text = line.decode(errors="replace")
                    if text.startswith("PROGRESS "):
                        tick()
                    else:
                        tail = (tail + [text])[-30:]
            elif proc.poll() is not None:
                break
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except (TimeoutError, subprocess.TimeoutExpired):
        _kill_group(proc)
        raise TimeoutError(f"the MPI job did not finish within {timeout_s:g} s "
                           f"and was killed: {' '.join(cmd)}") from None
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        sel.close()
        proc.stdout.close()
    if proc.returncode != 0:
        raise RuntimeError(f"the MPI job failed (exit code {proc.returncode}): "
                           f"{' '.join(cmd)}\n" + "\n".join(tail[-15:]))


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            continue


def _add_run(result: LabResult, data: dict) -> None:
    n = int(data["n_ranks"])
    variant = f"mpi-{n}ranks"
    rows = []
    wrong = 0
    for rec in data["records"]:
        t = Timing.from_samples(rec["samples_s"],
                                budget_exhausted=rec.get("budget_exhausted", False))
        s = rec["n_bytes"]
        row = {"lab": "allreduce", "variant": variant, "n_ranks": n, "n_bytes": s,
               "count": rec["count"], "dtype": rec["dtype"], "op": rec["op"]}
        row.update(t.as_record())
        row["algbw_bytes_per_s"] = s / t.median_s
        row["busbw_bytes_per_s"] = busbw_bytes_per_s("allreduce", s, t.median_s, n)
        row["bw_bytes_per_s"] = row["algbw_bytes_per_s"]  # the table shows algbw, then busbw
        row["wrong"] = rec["wrong"]
        row["iters"] = rec["iters"]
        row["samples_s"] = list(t.samples_s)
        wrong += rec["wrong"]
        rows.append(row)
    result.records.extend(rows)
    if wrong:
        result.notes.append(f"{variant}: {wrong} wrong elements in the AllReduce "
                            f"results")
    key = f"n{n}"
    result.metadata.setdefault("runs", []).append(
        {k: v for k, v in data.items() if k != "records"})
    if len(rows) >= 2:
        factor = 2 * (n - 1) / n
        fit = fit_alpha_beta([factor * r["n_bytes"] for r in rows],
                             [r["median_s"] for r in rows])
        alpha_step = fit.alpha_s / (2 * (n - 1))
        bw = fit.bw_bytes_per_s
        result.fits[variant] = fit
        for r in rows:
            if np.isfinite(bw):
                mt = ring_allreduce_time_s(r["n_bytes"], n, bw, alpha_step)
                r["model_time_s"] = mt
                r["model_busbw_bytes_per_s"] = busbw_bytes_per_s(
                    "allreduce", r["n_bytes"], mt, n)
        result.summary[f"{key}_alpha_s"] = alpha_step
        result.summary[f"{key}_bw_bytes_per_s"] = bw
        result.summary[f"{key}_fit_r_squared"] = fit.r_squared
    result.summary[f"{key}_busbw_bytes_per_s"] = rows[-1]["busbw_bytes_per_s"]
    result.summary[f"{key}_largest_n_bytes"] = rows[-1]["n_bytes"]
    result.summary[f"{key}_small_time_s"] = rows[0]["median_s"]


def allreduce_from_json(path) -> LabResult:
    """Turn the worker's JSON (e.g. from a cluster run) into a :class:`LabResult`
    with the nccl-tests columns, the fit and the ring model."""
    data = json.loads(Path(path).read_text())
    if "records" not in data or "n_ranks" not in data:
        raise ValueError(f"{path} is not an mpi_worker JSON file (needs "
                         f"'n_ranks' and 'records')")
    result = LabResult(name="allreduce", plot_y="busbw_bytes_per_s",
                       metadata={"source": str(path)})
    _add_run(result, data)
    return result
