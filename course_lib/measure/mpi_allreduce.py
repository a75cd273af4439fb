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

Which launcher: ranks only find each other when ``mpiexec`` belongs to the MPI
library mpi4py was built with.  :func:`mpi_setup` asks mpi4py for
``MPI.Get_library_version()`` (MPICH or Open MPI) in a subprocess and picks a
launcher whose ``--version`` names the same MPI: the venv's PyPI ``mpich``
puts MPICH's next to Python, Debian's Open MPI installs ``mpiexec.openmpi``.
Under Open MPI as root -- containers, Colab, many hubs -- the lab sets Open
MPI's documented opt-in ``OMPI_ALLOW_RUN_AS_ROOT=1`` and
``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``, and allows oversubscription when there
are more ranks than cores (:func:`worker_env`).  With no matching launcher
the lab is skipped with the reason and the fix.

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
from ..units import check_choice, check_int, check_positive
from .harness import (LabResult, Timing, check_sizes, fit_alpha_beta, machine_info,
                      progress_bar)

__all__ = ["allreduce_lab", "allreduce_from_json", "find_mpiexec", "worker_env",
           "mpi_available", "mpi_setup", "mpi_library_version", "flavour_of",
           "launcher_version", "mpiexec_command", "ALLREDUCE_FULL_SIZES",
           "ALLREDUCE_QUICK_SIZES"]

#: 4 KiB .. 64 MiB, every factor of 4.
ALLREDUCE_FULL_SIZES = tuple(4**k for k in range(6, 14))
#: 4 KiB, 64 KiB, 1 MiB.
ALLREDUCE_QUICK_SIZES = (4096, 65536, 1048576)


# --- which MPI, which launcher ------------------------------------------------
_PROBE = ("import mpi4py; mpi4py.rc.initialize = False; mpi4py.rc.finalize = False; "
          "from mpi4py import MPI; print(MPI.Get_library_version().strip())")


def _probe_env(env=None) -> dict:
    env = dict(os.environ if env is None else env)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    return env


def flavour_of(text: str) -> str:
    """``"mpich"``, ``"openmpi"`` or ``"other"`` from a library or launcher
    version text.

    >>> flavour_of("MPICH Version:      5.0.2"), flavour_of("mpiexec (OpenRTE) 4.1.4")
    ('mpich', 'openmpi')
    >>> flavour_of("Open MPI v5.0.7, package: Debian"), flavour_of("Intel(R) MPI Library")
    ('openmpi', 'other')
    """
    low = text.lower()
    if "open mpi" in low or "openrte" in low or "open-mpi" in low or "prrte" in low:
        return "openmpi"
    if "mpich" in low or "hydra" in low:
        return "mpich"
    return "other"


def mpi_library_version(env=None, timeout_s: float = 30.0) -> str:
    """``MPI.Get_library_version()`` of the mpi4py that the worker will import
    (same Python, same ``PYTHONPATH``), read in a subprocess without starting
    MPI.  Raises RuntimeError with mpi4py's message when it cannot load."""
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], env=_probe_env(env),
                             capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"loading mpi4py took over {timeout_s:g} s") from None
    if out.returncode != 0:
        raise RuntimeError("mpi4py cannot load its MPI library: " +
                           (out.stderr.strip().splitlines() or ["(no message)"])[-1])
    return out.stdout.replace("\x00", "").strip()


def launcher_version(path: str, timeout_s: float = 5.0) -> str:
    """What ``<launcher> --version`` prints (empty when it cannot run or
    does not answer within ``timeout_s``; then its process group is killed)."""
    try:
        proc = subprocess.Popen([path, "--version"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, text=True)
    except OSError:
        return ""
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return ""
    return (out or "").strip()


def _candidates(flavour: str) -> list[str]:
    """Launchers to try for one MPI flavour, best first."""
    here = Path(sys.executable).parent
    beside = [str(here / "mpiexec"), str(Path(sys.prefix) / "bin" / "mpiexec")]
    if flavour == "openmpi":
        names = ["mpiexec.openmpi", "mpirun.openmpi", "mpiexec", "mpirun"]
        return [p for p in beside] + [shutil.which(n) or "" for n in names]
    names = ["mpiexec.mpich", "mpiexec.hydra", "mpiexec", "mpirun"]
    return beside + [shutil.which(n) or "" for n in names]


def find_mpiexec(flavour: str | None = None) -> str | None:
    """The launcher for the MPI that mpi4py was built with.

    ``flavour`` (``"mpich"`` or ``"openmpi"``) defaults to what
    :func:`mpi_library_version` reports.  Candidates: ``mpiexec`` next to this
    Python (the venv's PyPI ``mpich`` puts it there), then
    ``mpiexec.<flavour>``, ``mpiexec`` and ``mpirun`` on ``PATH``; the first
    whose ``--version`` names the same MPI wins.  None if there is none.
    """
    if flavour is None:
        try:
            flavour = flavour_of(mpi_library_version())
        except RuntimeError:
            return None
    seen = set()
    for cand in _candidates(flavour):
        if not cand or cand in seen or not (os.path.isfile(cand)
                                             and os.access(cand, os.X_OK)):
            continue
        seen.add(cand)
        if flavour == "other" or flavour_of(launcher_version(cand)) == flavour:
            return cand
    return None


_INSTALL_HINT = {
    "mpich": "pip install mpich (puts MPICH's mpiexec next to this Python), or "
             "apt-get install mpich",
    "openmpi": "apt-get install openmpi-bin (Debian/Ubuntu), or load the Open MPI "
               "module your mpi4py was built with; or use MPICH: pip install "
               "mpich mpi4py in a fresh virtual environment",
    "other": "put your MPI's mpiexec on PATH, or pass mpiexec=...",
}


def mpi_setup() -> tuple[str | None, str, str]:
    """``(launcher, flavour, library)``: the launcher matching mpi4py's MPI,
    its flavour and mpi4py's library version line.  ``launcher`` is None when
    none was found; then ``library`` holds the reason with the fix."""
    import importlib.util
    if importlib.util.find_spec("mpi4py") is None:
        return None, "", ("mpi4py is not installed: pip install mpi4py mpich "
                          "(the course's 'course' extra)")
    try:
        library = mpi_library_version()
    except RuntimeError as exc:
        return None, "", (f"{exc}; install an MPI for it: pip install mpich "
                          f"(or load your cluster's MPI module)")
    flavour = flavour_of(library)
    first = library.splitlines()[0] if library else "an unknown MPI"
    exe = find_mpiexec(flavour)
    if exe is None:
        return None, flavour, (
            f"mpi4py here uses {first!r}, but no matching launcher (mpiexec) was "
            f"found next to Python or on PATH -- a launcher of another MPI would "
            f"start {'' if flavour == 'other' else 'single, unconnected '}ranks. "
            f"Fix: {_INSTALL_HINT[flavour]}")
    return exe, flavour, first


def mpi_available() -> tuple[bool, str]:
    """``(True, "")`` when mpi4py loads and a launcher of the same MPI is
    found, else ``(False, reason with the fix)`` -- without starting MPI."""
    exe, _flavour, why = mpi_setup()
    return (True, "") if exe else (False, why)


def _sizes_arg(sizes) -> str:
    return ",".join(str(int(s)) for s in sizes)


def mpiexec_command(n_ranks: int, sizes_bytes, *, out: str | None = None,
                    hosts=None, ppn: int | None = None, mpiexec: str | None = None,
                    extra_args=(), repeats: int = 5, warmup: int = 2,
                    sample_s: float = 0.02, budget_s: float = 10.0,
                    flavour: str = "mpich") -> list[str]:
    """The command line that runs the worker (also what to type on a cluster).

    ``flavour`` picks the launcher's spelling of hosts and ranks per host:
    MPICH's Hydra ``-hosts a,b -ppn 8``, Open MPI's ``--host a:8,b:8
    --map-by ppr:8:node``.

    >>> cmd = mpiexec_command(4, [4096, 65536], mpiexec="mpiexec", out="ar.json")
    >>> " ".join(cmd[:3]), cmd[5:7]
    ('mpiexec -n 4', ['course_lib.measure.mpi_worker', '--sizes'])
    >>> mpiexec_command(16, [8], mpiexec="mpirun", hosts=["a", "b"], ppn=8,
    ...                 flavour="openmpi")[3:7]
    ['--host', 'a:8,b:8', '--map-by', 'ppr:8:node']
    """
    n = check_int(n_ranks, "n_ranks", minimum=1)
    flavour = check_choice(flavour, "flavour", ["mpich", "openmpi", "other"])
    cmd = [mpiexec or find_mpiexec(flavour) or "mpiexec", "-n", str(n)]
    if isinstance(hosts, str):
        hosts = [hosts]
    if ppn is not None:
        ppn = check_int(ppn, "ppn", minimum=1)
    if flavour == "openmpi":
        if hosts:
            cmd += ["--host", ",".join(f"{h}:{ppn}" if ppn else h for h in hosts)]
        if ppn is not None:
            cmd += ["--map-by", f"ppr:{ppn}:node"]
    else:
        if hosts:
            cmd += ["-hosts", ",".join(hosts)]
        if ppn is not None:
            cmd += ["-ppn", str(ppn)]
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
        The launcher; default :func:`find_mpiexec`: the one of the MPI that
        mpi4py was built with (MPICH's or Open MPI's, read from
        ``MPI.Get_library_version()``).
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
    if mpiexec is None:
        mpiexec, flavour, library = mpi_setup()
        if mpiexec is None:
            result.skipped = library
            return result
    else:
        flavour = flavour_of(launcher_version(mpiexec)) if os.path.isfile(mpiexec) \
            else "mpich"
        library = ""
    result.metadata.update({"mpiexec": mpiexec, "mpi_flavour": flavour})
    if library:
        result.metadata["mpi_library"] = library
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
                                      repeats=repeats, flavour=flavour,
                                      warmup=1 if quick else 2,
                                      sample_s=0.01 if quick else 0.02,
                                      budget_s=budget_s)
                env = worker_env(n, hosts, flavour)
                _run_with_progress(cmd, env, timeout_s, lambda: next(ticker, None))
                with open(out) as f:
                    data = json.load(f)
                data["command"] = " ".join(cmd)
                data["env"] = {k: env[k] for k in env
                               if k.startswith(("MPIR_CVAR", "OMPI_", "PRTE_"))}
                runs.append(data)
    finally:
        if hasattr(bar, "close"):
            bar.close()
    for data in runs:
        _add_run(result, data)
    result.metadata["quick"] = quick
    return result


def worker_env(n_ranks: int, hosts, flavour: str = "mpich") -> dict:
    """The environment of the MPI job: this package on ``PYTHONPATH``, and
    the settings one machine needs (your own settings always win).

    * More ranks than cores, MPICH: waiting ranks yield their core soon
      (``MPIR_CVAR_POLLS_BEFORE_YIELD=100``, ``MPIR_CVAR_ENABLE_HEAVY_YIELD=1``).
    * More ranks than cores, Open MPI: oversubscription must be allowed
      (``OMPI_MCA_rmaps_base_oversubscribe=1`` for Open MPI 4,
      ``PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe`` for 5), and
      waiting ranks yield (``OMPI_MCA_mpi_yield_when_idle=1``).
    * Open MPI as root (containers, Colab, many hubs): its documented opt-in
      ``OMPI_ALLOW_RUN_AS_ROOT=1`` and ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``;
      without them ``mpiexec`` refuses to start.
    """
    env = _probe_env()
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    crowded = not hosts and n_ranks > cpus
    if flavour == "openmpi":
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if crowded:
            env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
            env.setdefault("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")
            env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    elif crowded:
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
            # no model when the times did not grow with size (noise on a busy box)
            r["model_time_s"] = r["model_busbw_bytes_per_s"] = None
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
