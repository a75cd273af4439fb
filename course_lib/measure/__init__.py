"""The measurement labs: time real data movement on the learner's own machine.

Import it as ``course_lib.measure`` (or ``from course_lib import measure``).
Importing needs no MPI, no CuPy and no display; those are imported inside the
functions that use them.  Every lab returns a :class:`LabResult`.

Quick start (a notebook cell)::

    from course_lib import measure
    res = measure.run_lab("pageable", quick=True)   # seconds
    res.plot()                                       # matplotlib Axes
    res.summary["staged_over_resident"]              # headline numbers, SI units
    res.save()                                       # notebooks/lab_results/pageable.{csv,json}

The labs
--------
=================  ======================================  =========  ===========
name               what it measures                        chapter    needs
=================  ======================================  =========  ===========
``pageable``       direct copy vs one staged through a     4          --
                   small bounce buffer (as the driver
                   does for pageable memory); locked and
                   fresh (page-faulting) buffers; the
                   cost of pinning
``batching``       N copies of d bytes vs one of N*d:      4          --
                   per-call overhead
``kernel-bypass``  a one-way stream of small messages:     5          --
                   a socket (one send + one recv system
                   call each) vs a shared-memory ring (no
                   system call): cost per message, CPU
                   and kernel time, system calls counted
``pingpong``       round trips over loopback TCP vs        5          --
                   shared memory: latency, bandwidth
``allreduce``      ``comm.Allreduce`` over 2-8 MPI ranks,  7          mpi4py +
                   nccl-tests columns, ring model fit                 mpiexec
``overlap``        a training step per MPI rank: compute,  8          mpi4py +
                   gradient buckets, Iallreduce after                 mpiexec
                   or overlapped with the backward pass,
                   bucket counts, a straggler
``gpu-copies``     pinned/pageable H2D/D2H, D2D, small-    3, 4, 7    CuPy + GPU
                   copy latency, P2P, NCCL AllReduce
=================  ======================================  =========  ===========

Public API
----------
``run_lab(name, quick=False, progress=True, save=False, **kwargs) -> LabResult``
    Run a lab by name (``"kernel_bypass"`` and ``"kernel-bypass"`` both work);
    ``save=True`` (or a folder) also writes ``<name>.csv`` and ``<name>.json``;
    ``kwargs`` go to the lab's function.
``pageable_lab(sizes_bytes=None, *, quick=False, variants=..., repeats=None, warmup=1, budget_s=None, progress=True, bounce_bytes=BOUNCE_BYTES)``
    Variants ``resident``, ``staged``, ``locked``, ``fresh``, ``pin-fresh``.
``h200_copies() -> LabResult``
    The ``gpu-copies`` lab as it ran on an NVIDIA H200 (PCIe Gen5 x16): the
    course's reference GPU data (``course_lib/data/h200_gpu_copies.json``).
``batching_lab(total_bytes=None, piece_sizes_bytes=None, *, quick=False, ...)``
    Variants ``many-small``, ``one-big``; ``per_call_s``, ``per_call_overhead_s``.
``kernel_stream_lab(sizes_bytes=None, *, quick=False, variants=..., count=None, cpu=None, busy=0, ...)``
    The ``kernel-bypass`` lab.  Variants ``socket``, ``shared-memory``;
    ``median_s`` = ``per_message_s`` (wall time of a stream / messages),
    ``cpu_per_message_s``, ``sys_per_message_s``, ``syscalls_per_message``;
    summary ``per_message_ratio`` (socket / shared memory, smallest size).
    ``cpu=`` runs both partners on one CPU, ``busy=`` starts CPU-bound
    processes beside it (:func:`busy_cpus`); ``explain_stream(result)``.
``kernel_bypass_lab(sizes_bytes=None, *, quick=False, variants=..., number=None, timeout_s=10.0, ...)``
    The ``pingpong`` lab.  Variants ``tcp-loopback``, ``shared-memory``; ``median_s`` is the round
    trip, ``one_way_s`` half of it.  ``wait="auto"`` spins (partners pinned to
    two CPUs) when two CPUs are free, else blocks on a semaphore;
    ``explain_kernel_bypass(result)`` reads a run's numbers in sentences.
``allreduce_lab(n_ranks=4, sizes_bytes=None, *, quick=False, repeats=None, timeout_s=None, progress=True, hosts=None, ppn=None, mpiexec=None, extra_args=(), budget_s=None)``
    Variant ``mpi-<n>ranks``; ``algbw_bytes_per_s``, ``busbw_bytes_per_s``,
    ``model_time_s``, ``model_busbw_bytes_per_s``.  The launcher is the one of the MPI
    that mpi4py was built with (``mpi_setup() -> (mpiexec, flavour,
    library)``: MPICH or Open MPI; Open MPI as root gets its opt-in variables).
    ``allreduce_from_json(path)`` reads a cluster run of the worker
    (``mpiexec -n 16 -ppn 8 -hosts a,b python -m course_lib.measure.mpi_worker
    --sizes 1K:1G --out ar.json``); ``mpiexec_command(...)`` builds that line.
``overlap_lab(n_ranks=2, *, grad_bytes=16 MiB, buckets=(1, 2, 4, 8), forward_s=0.01, backward_s=0.03, straggler_s=0.01, quick=False, ...)``
    Variants ``compute``, ``comm-K``, ``sequential-K``, ``overlap-K``,
    ``straggler-K``: ``median_s`` (step, slowest rank), ``compute_done_s``,
    ``exposed_s``; ``course_lib.trace.overlap_vs_model(result)`` sets
    ``cl.bucket_overlap_schedule`` on the same numbers beside them.
``gpu_copies_lab(sizes_bytes=None, *, quick=False, device=0, variants=..., repeats=None, warmup=2, budget_s=None, multi_gpu=True, progress=True)``
    ``gpu_available() -> (ok, reason, n_devices)``.
``fit_alpha_beta(n_bytes, times_s, *, weighting="relative", robust=True) -> AlphaBetaFit``
    Robust fit of ``T = alpha + D / B``; unpacks as ``(alpha_s, bw_bytes_per_s)``
    and carries ``.r_squared``, ``.residuals_s``, ``.predict_s(n_bytes)``.
``time_call(fn, *, setup=None, teardown=None, warmup=1, repeats=7, number=1, budget_s=None) -> Timing``
    The harness: median, quartiles, min, max, every sample, ``budget_exhausted``.
``records_to_csv(records, path=None) -> str``, ``records_to_array(records, fields=None) -> numpy structured array``, ``plot_records(records, x="n_bytes", y="bw_bytes_per_s", by="variant", ax=None, ...) -> Axes``
``load_lab_result(name, directory=None) -> LabResult``, ``default_results_dir() -> Path``
``summary_table(result) -> Table``, ``fits_table(result) -> Table``
    What a run measured as a learner reads it: a small table with units and a
    sentence (HTML in a notebook), never a dict of the summary's keys.

``LabResult`` fields: ``name``, ``records`` (list of dicts), ``fits``
(variant -> AlphaBetaFit), ``summary`` (dict of headline numbers, SI units,
the unit ends the key), ``metadata``, ``notes``, ``skipped`` (reason or None);
methods ``plot(y=None, ax=None)``, ``table()``, ``to_csv(path=None)``,
``to_array()``, ``to_dict()``, ``select(variant)``, ``save(directory=None)``.

Every record has ``lab``, ``variant``, ``n_bytes``, ``median_s``,
``spread_s`` (the interquartile range ``q3_s - q1_s``), ``q1_s``, ``q3_s``,
``min_s``, ``max_s``, ``repeats``, ``budget_exhausted``, ``bw_bytes_per_s``
(one way) and the raw ``samples_s``.  Report the median *and* the spread:
these are shared, noisy machines.

Command line: ``python -m course_lib lab NAME [--quick] [--json] [--csv PATH]
[--save [DIR]] [--no-progress] [--ranks N,N] [--timeout S]``
(:mod:`course_lib.apps.cli`, the course's one command line).

Taught in chapters 4, 5 and 7; in the graded pinned-vs-pageable assignment the
learner fits their own ``pageable`` numbers by ordinary least squares (the lab's
:func:`fit_alpha_beta`, printed under its table, is weighted and keeps alpha >= 0).
"""

from __future__ import annotations

from ..units import check_choice
from .harness import (AlphaBetaFit, LabResult, SPREAD_DEFINITION, Timing,
                      default_results_dir, fit_alpha_beta, load_lab_result,
                      machine_info, plot_records, records_to_array,
                      records_to_csv, time_call)
from .memory import pageable_lab
from .batching import batching_lab
from .pingpong import cpu_situation, explain_kernel_bypass, kernel_bypass_lab
from .stream import busy_cpus, explain_stream, kernel_stream_lab
from .mpi_allreduce import (allreduce_from_json, allreduce_lab, mpi_available,
                            mpiexec_command)
from .mpi_overlap import overlap_from_json, overlap_lab
from .gpu import gpu_available, gpu_copies_lab
from .reference import h200_copies
from .report import Table, fits_table, latency_table, summary_table

__all__ = [
    "LAB_NAMES", "run_lab", "Table", "summary_table", "fits_table", "latency_table",
    "pageable_lab", "batching_lab", "kernel_bypass_lab", "allreduce_lab",
    "explain_kernel_bypass", "cpu_situation",
    "kernel_stream_lab", "explain_stream", "busy_cpus",
    "allreduce_from_json", "mpiexec_command", "mpi_available",
    "overlap_lab", "overlap_from_json",
    "gpu_copies_lab", "gpu_available", "h200_copies",
    "fit_alpha_beta", "AlphaBetaFit", "time_call", "Timing", "LabResult",
    "records_to_csv", "records_to_array", "plot_records", "load_lab_result",
    "default_results_dir", "machine_info", "SPREAD_DEFINITION",
]

#: The labs, by the names the command line and :func:`run_lab` accept.
LAB_NAMES = ("pageable", "batching", "kernel-bypass", "pingpong", "allreduce",
             "overlap", "gpu-copies")

_LABS = {"pageable": pageable_lab, "batching": batching_lab,
         "kernel-bypass": kernel_stream_lab, "pingpong": kernel_bypass_lab,
         "allreduce": allreduce_lab, "overlap": overlap_lab,
         "gpu-copies": gpu_copies_lab}


def run_lab(name: str, quick: bool = False, progress: bool = True,
            save=False, **kwargs) -> LabResult:
    """Run the lab called ``name`` and return its :class:`LabResult`.

    Parameters
    ----------
    name : str
        One of :data:`LAB_NAMES` (``_`` and ``-`` are interchangeable).
    quick : bool
        Small sizes and few repeats: seconds.
    progress : bool
        Show a progress bar (``tqdm.auto``: a widget in Jupyter).
    save : bool or path
        ``True``: save to :func:`default_results_dir`; a path: save there.
    **kwargs
        Passed to the lab's function (e.g. ``n_ranks=8`` for ``allreduce``).

    Examples
    --------
    >>> res = run_lab("batching", quick=True, progress=False)
    >>> res.name, sorted(res.variants())
    ('batching', ['many-small', 'one-big'])
    """
    lab = check_choice(name, "name", LAB_NAMES)
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be True or False, got {quick!r}")
    result = _LABS[lab](quick=quick, progress=progress, **kwargs)
    if save is not False and save is not None and not result.skipped:
        result.save(None if save is True else save)
    return result
