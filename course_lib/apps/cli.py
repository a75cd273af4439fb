"""The course's one command line: ``python -m course_lib COMMAND [options]``.

Commands
--------
predict   nccl-tests-style table of a collective predicted by the model; with
          --from-log, measured vs calibrated model vs a what-if
lab       run a measurement lab (pageable, batching, kernel-bypass, pingpong, overlap,
          allreduce, gpu-copies)
trace     read a training job's PyTorch profiler traces (one file per rank): per step
          compute, communication, hidden and exposed parts, skew between ranks, and
          each collective's kernel time beside the model on --cluster
doctor    check this machine's set-up for the course, with a fix for each problem
catalog   print the hardware catalog with directions and sources
site      build the static HTML edition: every chapter executed, plus an index
hub       run the course on a JupyterHub for a workshop (start, stop, add-users, grade)

``python -m course_lib COMMAND --help`` lists a command's options.  Exit
codes: 0 done; 1 the command ran and found a problem (a lab failed, the
machine is not ready, a notebook failed); 2 bad arguments, with the usage and
what was wrong on stderr (never a traceback).

Each command's work lives where its concept lives (:mod:`course_lib.predict`,
:mod:`course_lib.measure`, :mod:`course_lib.hardware`,
:mod:`course_lib.apps.doctor`, :mod:`course_lib.apps.site`); this module
reads the arguments and prints.  The doctor and the site declare their own
options (``add_arguments``) so that they also run alone; every command is run
by :func:`course_lib.apps.command.run_parser`.  The model modules are
imported only when their command is built, so ``python -m course_lib doctor``
works even where a model dependency is broken.

Sizes.  ``predict --min/--max`` read sizes as nccl-tests reads ``-b/-e``: a
number with ``K``, ``M`` or ``G`` means KiB, MiB, GiB (``1M`` = 2**20 bytes);
the course's explicit units also work (``64MB`` = 64e6 bytes, ``1GiB``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterable, Sequence

from . import doctor, site
from .command import Parser, UsageError, run_parser

__all__ = ["main", "build_parser", "parse_nccl_size", "format_table", "COMMANDS"]

PROG = "python -m course_lib"
#: The commands, in the order ``--help`` lists them.
COMMANDS = ("predict", "lab", "trace", "doctor", "catalog", "site", "hub")

_NCCL_SUFFIXES = {"k": 2**10, "m": 2**20, "g": 2**30}
_NCCL_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmMgG])\s*")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def parse_nccl_size(text, name: str = "size") -> float:
    """A size in bytes, read as nccl-tests reads ``-b``/``-e``/``-i``.

    A number with ``K``, ``M`` or ``G`` (either case) is a binary multiple,
    as in ``parsesize()`` of NVIDIA/nccl-tests ``src/common.cu`` ("We use
    the binary system"): ``1M`` is 1 MiB = 2**20 bytes, ``0.5G`` is 512 MiB.
    Anything else goes to :func:`course_lib.units.parse_size`, so the
    course's explicit units keep their meaning: ``64MB`` is 64e6 bytes here
    (nccl-tests, which reads only the first letter after the number, would
    take 64 MiB), ``1 GiB`` is 2**30, a bare number is bytes.

    >>> parse_nccl_size("1M") == 2**20 and parse_nccl_size("16G") == 16 * 2**30
    True
    >>> parse_nccl_size("4k"), parse_nccl_size("64MB"), parse_nccl_size("8")
    (4096.0, 64000000.0, 8.0)
    """
    from course_lib.units import parse_size

    m = _NCCL_SIZE.fullmatch(text) if isinstance(text, str) else None
    if m:
        return float(m.group(1)) * _NCCL_SUFFIXES[m.group(2).lower()]
    return parse_size(text, name)


def format_table(rows: Iterable[Sequence], specs: Sequence[str],
                 header: Sequence[str] | None = None, *, indent: str = "  ",
                 header_indent: str = "# ") -> str:
    """Fixed-width text: one line per row, each cell formatted with its
    column's format spec (``">12"``, ``">10.2f"``, ``"<36"``); the header (if
    any) takes each spec's alignment and width.  The one table printer of the
    command line (predict's nccl-tests table, the labs' summary).

    >>> print(format_table([(8, 1.5), (16, 22.25)], [">4", ">8.2f"], ["size", "time"]))
    # size     time
         8     1.50
        16    22.25
    """
    lines = []
    if header is not None:
        if len(header) != len(specs):
            raise ValueError(f"header has {len(header)} titles for {len(specs)} columns")
        widths = [re.match(r"[<>^]?\d*", s).group(0) for s in specs]
        lines.append(header_indent + " ".join(f"{h:{w}}" for h, w in zip(header, widths)))
    for row in rows:
        if len(row) != len(specs):
            raise ValueError(f"row {row!r} has {len(row)} cells for {len(specs)} columns")
        lines.append(indent + " ".join(f"{c:{s}}" for c, s in zip(row, specs)))
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# predict
# ---------------------------------------------------------------------------
def _add_predict(sub) -> None:
    from course_lib.analytic import COLLECTIVES
    from course_lib.hardware import cpu_link_names
    from course_lib.predict import FABRICS, PREDICT_ALGORITHMS

    p = sub.add_parser("predict", help="nccl-tests-style table of a predicted collective",
                       description="Predict a collective's time and bandwidth "
                                   "(nccl-tests columns).")
    p.add_argument("collective", nargs="?", default=None,
                   help=f"one of {list(COLLECTIVES)} (with --from-log: the log's)")
    p.add_argument("--gpu", default=None,
                   help="the GPU, a catalog name (default H100; with --from-log: the GPU "
                        "the log's device lines name)")
    p.add_argument("--gpus-per-node", type=int, default=None,
                   help="GPUs per node (default 8; with --from-log: ranks / nodes)")
    p.add_argument("--nodes", type=int, default=None,
                   help="nodes (default 1; with --from-log: the log's host names)")
    p.add_argument("--fabric", default="nvswitch", help=f"one of {list(FABRICS)}")
    p.add_argument("--nic", default=None)
    p.add_argument("--nics-per-node", type=int, default=0)
    p.add_argument("--min", default="8",
                   help="smallest size, as nccl-tests' -b: 8, 1M (= 1 MiB), 1GiB, 64MB")
    p.add_argument("--max", default="16G", help="largest size, as nccl-tests' -e (16G = 16 GiB)")
    p.add_argument("--step-factor", type=float, default=2.0)
    p.add_argument("--algorithm", default="auto", help=f"one of {list(PREDICT_ALGORITHMS)}")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    p.add_argument("--topo", default=None,
                   help="a node's topology dump (nvidia-smi topo -m text or NCCL's "
                        "NCCL_TOPO_DUMP_FILE XML); replaces --fabric/--gpus-per-node")
    p.add_argument("--gpus", default=None, help="with --topo: GPU indices used, e.g. 0,1,2")
    p.add_argument("--cpu", default=None, help=f"one of {cpu_link_names()}")
    p.add_argument("--launch-gpus", type=int, default=None,
                   help="GPUs one process drives, as nccl-tests' -g (1 for one process "
                        "per GPU; default: the calibration runs' 8)")
    p.add_argument("--from-log", metavar="FILE", default=None,
                   help="an nccl-tests output (all_reduce_perf ...): calibrate the model "
                        "on it and print measured vs model (and --what-if)")
    p.add_argument("--what-if", metavar="K=V[,K=V]", default=None,
                   help="with --from-log: the same cluster changed, e.g. nodes=8,nics=4 "
                        "(keys: nodes, nics, gpus_per_node, nic)")
    p.add_argument("--fit-sizes", metavar="S[,S]", default=None,
                   help="with --from-log: calibrate on these sizes only (e.g. 4K,1M,64M,1G)"
                        "; the other rows then show how well it predicts")
    p.set_defaults(run=_predict, command_parser=p)


def _sizes(lo: float, hi: float, factor: float) -> list[int]:
    out, s = [], lo
    while s <= hi * (1 + 1e-12):
        out.append(int(round(s)))
        s *= factor
    return out


def _machine(a, nodes: int, gpus_per_node: int):
    from course_lib.predict import cluster, cluster_from_topo

    if a.topo is not None:
        try:
            with open(a.topo) as f:
                dump = f.read()
        except OSError as exc:
            raise UsageError(f"--topo: cannot read {a.topo!r}: {exc}") from None
        try:
            gpus = None if a.gpus is None else [int(x) for x in a.gpus.split(",")]
        except ValueError:
            raise UsageError(f"--gpus must be GPU indices joined by commas, e.g. "
                             f"0,1,2; got {a.gpus!r}") from None
        return cluster_from_topo(dump, a.gpu, gpus=gpus, nodes=nodes, nic=a.nic, cpu=a.cpu)
    return cluster(a.gpu, gpus_per_node, nodes, a.fabric, a.nic, a.nics_per_node, cpu=a.cpu)


def _predict_records(a):
    from course_lib.predict import predict_collective

    if a.collective is None:
        raise UsageError("predict needs a collective (e.g. allreduce), or --from-log FILE")
    if a.gpu is None:
        a.gpu = "H100"
    machine = _machine(a, 1 if a.nodes is None else a.nodes,
                       8 if a.gpus_per_node is None else a.gpus_per_node)
    lo, hi = parse_nccl_size(a.min, "--min"), parse_nccl_size(a.max, "--max")
    if lo <= 0 or hi < lo:
        raise UsageError(f"need 0 < --min <= --max; got {a.min!r}, {a.max!r}")
    if not a.step_factor > 1:
        raise UsageError(f"--step-factor must be > 1, got {a.step_factor}")
    recs = [predict_collective(a.collective, s, machine, a.algorithm,
                               launch_gpus=a.launch_gpus)
            for s in _sizes(lo, hi, a.step_factor)]
    return machine, recs


def _predict(a) -> int:
    from course_lib.units import format_bytes

    if a.from_log is not None:
        return _from_log(a)
    if a.what_if is not None or a.fit_sizes is not None:
        raise UsageError("--what-if and --fit-sizes go with --from-log FILE")
    try:
        machine, recs = _predict_records(a)
    except UsageError:
        raise
    except (ValueError, TypeError) as exc:  # the model's checks name the bad parameter
        raise UsageError(str(exc)) from None
    if a.json:
        print(json.dumps([r.to_dict() for r in recs], indent=1))
        return 0
    elem = 4  # nccl-tests' default float
    print(f"# {recs[0].collective} on {machine.describe()}: {machine.n_ranks} ranks "
          f"(predicted by course_lib; sizes in bytes, count in float32 elements)")
    print(format_table(
        [(int(r.n_bytes), int(r.n_bytes) // elem, r.time_s * 1e6, r.algbw_bytes_per_s / 1e9,
          r.busbw_bytes_per_s / 1e9, f" {r.algorithm}/{r.protocol}") for r in recs],
        [">12", ">12", ">10.2f", ">12.2f", ">12.2f", ""],
        ["size", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)", " algorithm/protocol"]))
    print(f"# largest size {format_bytes(recs[-1].n_bytes, binary=True)}")
    return 0


def parse_what_if(text: str) -> dict:
    """``"nodes=8,nics=4"`` -> ``{"nodes": 8, "nics": 4}`` (integers where they
    are digits; ``nic=NDR`` stays a name), for :func:`course_lib.what_if`.

    >>> parse_what_if("nodes=8, nics=4")
    {'nodes': 8, 'nics': 4}
    """
    from course_lib.calibrating import WHAT_IF_KEYS

    out = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip().replace("-", "_"), value.strip()
        if not eq or not value or key not in WHAT_IF_KEYS:
            raise UsageError(f"--what-if takes KEY=VALUE pairs joined by commas, keys "
                             f"{sorted(WHAT_IF_KEYS)}, e.g. nodes=8,nics=4; got {text!r}")
        out[key] = int(value) if value.isdigit() else value
    if not out:
        raise UsageError(f"--what-if is empty; e.g. nodes=8,nics=4; got {text!r}")
    return out


def _catalog_gpu(device: str):
    """The catalog GPU a device line names ("NVIDIA H100 80GB HBM3" -> "H100",
    "Tesla V100-SXM2-32GB" -> "V100"), or None ("AMD Instinct MI300X",
    "NVIDIA GB10", "Tesla K80": not in the catalog)."""
    from course_lib.hardware import GPUS

    hits = [g for g in GPUS
            if re.search(rf"(?<![A-Z0-9]){re.escape(g.upper())}(?![0-9])", device.upper())]
    return hits[0] if len(hits) == 1 else None


def _log_gpu(a, rows) -> str:
    """--gpu, or the GPU the log's device lines name; never a silent default."""
    from course_lib.hardware import GPUS

    devices = list(dict.fromkeys(d for r in rows for d in (r.get("devices") or [])))
    found = {d: _catalog_gpu(d) for d in devices}
    if a.gpu is not None:
        named = {g for g in found.values() if g}
        if named and named != {a.gpu}:
            raise UsageError(f"--gpu {a.gpu}, but the log's device lines name "
                             f"{', '.join(repr(d) for d in devices)}; leave --gpu out to "
                             f"use the log's, or give the log of a run on {a.gpu}")
        return a.gpu
    if not devices:
        raise UsageError(f"--from-log: the log does not name its GPU (no '# Rank N ... "
                         f"device N [bus] NAME' lines); pass --gpu, one of {list(GPUS)}")
    unknown = [d for d, g in found.items() if g is None]
    if unknown:
        raise UsageError(f"--from-log: the log ran on {unknown[0]!r}, which is not in the "
                         f"course's catalog ({', '.join(GPUS)}); pass --gpu NAME to model "
                         f"it as one of those (the model then describes that GPU, not "
                         f"this one)")
    gpus = sorted(set(found.values()))
    if len(gpus) > 1:
        raise UsageError(f"--from-log: the log's ranks ran on different GPUs ({gpus}); "
                         f"pass --gpu to choose the one to model")
    return gpus[0]


def _log_machine(a, rows):
    """The cluster the log ran on: its GPU, rank count and host names, and the
    machine options (--gpu, --fabric, --nic, ...)."""
    a.gpu = _log_gpu(a, rows)
    ranks = {r.get("n_ranks") for r in rows} - {None}
    if len(ranks) > 1:
        raise UsageError(f"--from-log: the log holds runs on {sorted(ranks)} ranks; "
                         f"give a log of one run")
    hosts = {h for r in rows for h in (r.get("hosts") or [])}
    nodes = a.nodes if a.nodes is not None else max(len(hosts), 1)
    if ranks:
        n = ranks.pop()
        if n % nodes:
            raise UsageError(f"--from-log: {n} ranks do not split over {nodes} nodes; "
                             f"give --nodes and --gpus-per-node")
        g = a.gpus_per_node if a.gpus_per_node is not None else n // nodes
    elif a.gpus_per_node is None:
        raise UsageError("--from-log: the log does not show its ranks; give "
                         "--gpus-per-node (and --nodes)")
    else:
        g = a.gpus_per_node
    if nodes > 1 and a.nic is None and a.topo is None:
        raise UsageError(f"--from-log: the run spans {nodes} nodes; give --nic (one of "
                         f"the catalog's NIC types, e.g. NDR) and --nics-per-node")
    return _machine(a, nodes, g)


def _from_log(a) -> int:
    import numpy as np

    from course_lib.calibrating import calibrate, compare, what_if
    from course_lib.nccl_log import read_nccl_tests
    from course_lib.predict import predict_collective

    try:
        with open(a.from_log, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"--from-log: cannot read {a.from_log!r}: {exc}") from None
    try:
        rows = read_nccl_tests(text, collective=a.collective)
        if not rows:
            raise ValueError("no result rows")
        machine = _log_machine(a, rows)
        fit_rows = rows
        if a.fit_sizes is not None:
            want = {parse_nccl_size(t.strip(), "--fit-sizes")
                    for t in a.fit_sizes.split(",") if t.strip()}
            fit_rows = [r for r in rows if r["n_bytes"] in want]
            if not fit_rows:
                raise UsageError(f"--fit-sizes: none of {sorted(want)} is a size of the "
                                 f"log (sizes {sorted({r['n_bytes'] for r in rows})})")
        calibrated = calibrate(machine, fit_rows)
        changes = parse_what_if(a.what_if) if a.what_if is not None else None
        other = what_if(calibrated, **changes) if changes else None
        table = compare(calibrated, rows)
    except UsageError:
        raise
    except (ValueError, TypeError) as exc:
        hint = (" -- on the command line: predict COLLECTIVE --from-log FILE"
                if "which collective" in str(exc) else "")
        raise UsageError(f"--from-log {a.from_log}: {exc}{hint}") from None
    fitted = {r["n_bytes"] for r in fit_rows}
    cal = calibrated.calibrated
    print(f"# {a.from_log}: {len(rows)} rows on {machine.describe()}, {machine.n_ranks} ranks")
    print(f"# calibrated on {cal.source}")
    consts = ", ".join(f"{k}={_const(k, v)}" for k, v in cal.items().items())
    print(f"# fitted: {consts}" + (f"; algorithms {'/'.join(cal.algorithms)}"
                                   if cal.algorithms else ""))
    head = ["size", "collective", "meas.time(us)", "meas.busbw", "model.busbw", "range.low",
            "range.high", "error", "fit"]
    specs = [">12", "<14", ">13.1f", ">10.2f", ">11.2f", ">9.2f", ">10.2f", ">7.1%", ">4"]
    cells = []
    for r, row in zip(table, rows):
        cells.append([int(r["n_bytes"]), r["collective"], row["time_s"] * 1e6,
                      r["measured_busbw"] / 1e9, r["predicted_busbw"] / 1e9, r["low"] / 1e9,
                      r["high"] / 1e9, r["rel_error"], "*" if r["n_bytes"] in fitted else ""])
    if other is not None:
        head += ["what-if.busbw", "what-if.time(us)"]
        specs += [">13.2f", ">16.1f"]
        for c, r, row in zip(cells, table, rows):
            p = predict_collective(r["collective"], r["n_bytes"], other,
                                   launch_gpus=row.get("n_gpus_per_process"))
            c += [p.busbw_bytes_per_s / 1e9, p.time_s * 1e6]
        print(f"# what-if {a.what_if}: {other.describe()}, {other.n_ranks} ranks")
    print("# busbw in GB/s; error = model / measured - 1; fit * = a row the model was "
          "calibrated on")
    print(format_table(cells, specs, head))
    held = [abs(r["rel_error"]) for r in table if r["n_bytes"] not in fitted]
    errs = [abs(r["rel_error"]) for r in table]
    inside = np.mean([r["low"] <= r["measured_busbw"] <= r["high"] for r in table])
    line = f"# median |error| {np.median(errs):.1%} over all rows"
    if held:
        line += f", {np.median(held):.1%} over the {len(held)} rows not fitted"
    print(line + f"; {inside:.0%} of the measured rows inside the model's range")
    return 0


def _const(name: str, value: float) -> str:
    from course_lib.units import format_bytes

    if name.endswith("bytes_per_s"):
        return f"{value / 1e9:.1f}GB/s"
    if name.endswith("_s"):
        return f"{value * 1e6:.2f}us"
    if name.endswith("bytes") or name.endswith("bytes_per_nic"):
        return format_bytes(value, binary=True).replace(" ", "")
    return f"{value:.3g}"


# ---------------------------------------------------------------------------
# lab
# ---------------------------------------------------------------------------
_LAB_EPILOG = """\
Exit codes: 0 done -- also when a lab is skipped because this machine lacks
what it needs (no GPU or CuPy for ``gpu-copies``, no MPI for ``allreduce``):
the reason is printed, and with ``--json`` the output is
``[{"lab": ..., "skipped": reason}]``; 1 the lab failed (timeout, MPI
error); 2 bad arguments.

--json prints the records as a JSON list (each with ``variant``,
``n_bytes``, ``median_s``, ``spread_s`` = IQR, ...; the allreduce lab adds
``busbw_bytes_per_s``).  --save writes ``<lab>.csv`` and ``<lab>.json`` in DIR
(default ``notebooks/lab_results/``, or ``$COURSE_LAB_RESULTS``)."""


def _add_lab(sub) -> None:
    from course_lib.measure import LAB_NAMES

    p = sub.add_parser("lab", help="run a measurement lab",
                       description="Run a measurement lab of Interconnect City.",
                       epilog=_LAB_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lab", choices=LAB_NAMES, metavar="LAB",
                   type=lambda s: s.strip().lower().replace("_", "-"),
                   help="one of: " + ", ".join(LAB_NAMES))
    p.add_argument("--quick", action="store_true", help="small and fast (seconds)")
    p.add_argument("--json", action="store_true", help="print records as JSON")
    p.add_argument("--csv", metavar="PATH", help="write records as CSV")
    p.add_argument("--save", metavar="DIR", nargs="?", const="",
                   help="save <lab>.csv and <lab>.json (default lab_results/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--ranks", metavar="N[,N]", help="allreduce: MPI rank counts (default 4)")
    p.add_argument("--timeout", metavar="S", type=float,
                   help="allreduce: kill the MPI job after S seconds")
    p.set_defaults(run=_lab, command_parser=p)


def _lab_summary_value(key: str, value) -> str:
    from course_lib.units import format_bandwidth, format_bytes, format_time

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if key.endswith("bytes_per_s"):
        return format_bandwidth(value) + " (one way)"
    if key.endswith("_s"):
        return format_time(value)
    if key.endswith("bytes"):
        return format_bytes(value, binary=True)
    return f"{value:.4g}"


def _lab_options(a) -> dict:
    if a.lab != "allreduce":
        if a.ranks or a.timeout is not None:
            raise UsageError(f"--ranks and --timeout apply to the allreduce lab only, "
                             f"not {a.lab!r}")
        return {}
    kwargs = {}
    if a.ranks:
        try:
            kwargs["n_ranks"] = [int(x) for x in a.ranks.split(",")]
        except ValueError:
            raise UsageError(f"--ranks: write whole numbers such as 4 or 2,4,8; got "
                             f"{a.ranks!r}") from None
        if any(n < 2 or n > 64 for n in kwargs["n_ranks"]):
            raise UsageError(f"--ranks: each rank count must lie in 2..64; got {a.ranks!r}")
    if a.timeout is not None:
        if not (a.timeout > 0 and math.isfinite(a.timeout)):
            raise UsageError(f"--timeout must be > 0 seconds; got {a.timeout}")
        kwargs["timeout_s"] = a.timeout
    return kwargs


def _lab(a) -> int:
    from course_lib.measure import run_lab

    kwargs = _lab_options(a)
    try:
        result = run_lab(a.lab, quick=a.quick, progress=not a.no_progress, **kwargs)
    except (RuntimeError, TimeoutError, OSError) as exc:
        print(f"lab {a.lab} failed: {exc}", file=sys.stderr)
        return 1
    if result.skipped:
        if a.json:
            print(json.dumps([{"lab": result.name, "skipped": result.skipped}]))
        else:
            print(f"lab {result.name}: skipped -- {result.skipped}")
        return 0
    if a.csv:
        result.to_csv(a.csv)
    if a.save is not None:
        path = result.save(a.save or None)
        print(f"saved {path} and {path.with_suffix('.json')}", file=sys.stderr)
    if a.json:
        print(json.dumps(result.to_dict()["records"]))
        return 0
    print(result.table())
    print("summary:")
    print(format_table([(k, _lab_summary_value(k, v)) for k, v in result.summary.items()],
                       ["<36", ""]))
    return 0


# ---------------------------------------------------------------------------
# doctor, catalog, site
# ---------------------------------------------------------------------------
def _add_doctor(sub) -> None:
    doctor.add_arguments(sub.add_parser("doctor", help=doctor.SUMMARY,
                                        description=doctor.DESCRIPTION))


def _add_trace(sub) -> None:
    p = sub.add_parser("trace", help="read your job's PyTorch profiler traces",
                       description="Read a folder of PyTorch profiler (Kineto) traces, one "
                                   "file per rank, and print per step the compute, the "
                                   "communication, how much of it compute hid, the exposed "
                                   "part, the skew between ranks, and each collective's "
                                   "measured kernel time beside the course's prediction. "
                                   "How to record one: docs/your_job.md.")
    p.add_argument("dir", metavar="DIR", help="folder of *.json / *.json.gz traces, one per "
                                              "rank (--example: a shipped real one)")
    p.add_argument("--cluster", metavar="SPEC", default=None,
                   help="the machine to predict on, as cluster_from_spec reads it, e.g. "
                        "'gpu=H100;gpus_per_node=8;nodes=2;nic=NDR;nics_per_node=8'")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="with --cluster: an nccl-tests log of that machine to calibrate on")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(run=_trace, command_parser=p)


def _trace(a) -> int:
    from course_lib.trace import job_report, predict_collectives, read_job

    if a.log is not None and a.cluster is None:
        raise UsageError("--log calibrates the machine of --cluster; give --cluster too")
    try:
        job = read_job(a.dir)
        log = None
        if a.log is not None:
            try:
                with open(a.log, encoding="utf-8", errors="replace") as fh:
                    log = fh.read()
            except OSError as exc:
                raise UsageError(f"--log: cannot read {a.log!r}: {exc}") from None
        preds = predict_collectives(job, a.cluster, log=log) if a.cluster else None
    except UsageError:
        raise
    except (ValueError, TypeError) as exc:
        raise UsageError(f"trace {a.dir}: {exc}") from None
    if a.json:
        print(json.dumps({"summary": job.summary(), "skew": job.skew,
                          "ranks": [{"rank": r.rank, "path": r.path, "device": r.device,
                                     "steps": r.steps} for r in job.ranks],
                          "collectives": preds}, indent=1, default=str))
        return 0
    print(job_report(job, preds))
    s = job.summary()
    print(f"# median over steps and ranks: step {s['step_s'] * 1e3:.1f} ms, compute "
          f"{s['compute_s'] * 1e3:.1f} ms, communication {s['comm_s'] * 1e3:.1f} ms of which "
          f"{s['hidden_share']:.0%} hidden behind compute, exposed {s['exposed_s'] * 1e3:.1f} ms")
    if preds is None:
        print("# give --cluster SPEC to put the course's prediction beside each collective")
    else:
        print("# measured = the NCCL kernel's duration, which includes waiting for the "
              "slowest rank to arrive; model = the transfer alone on --cluster")
    return 0


def _add_catalog(sub) -> None:
    p = sub.add_parser("catalog", help="print the hardware catalog",
                       description="Print the hardware catalog as Markdown: every "
                                   "number with its unit, direction and source.")
    p.set_defaults(run=_catalog, command_parser=p)


def _catalog(a) -> int:
    from course_lib.hardware import catalog_table

    print(catalog_table())
    return 0


def _add_site(sub) -> None:
    site.add_arguments(sub.add_parser("site", help=site.SUMMARY, description=site.DESCRIPTION))


def _add_hub(sub) -> None:
    from . import hub

    hub.add_arguments(sub.add_parser("hub", help=hub.SUMMARY, description=hub.DESCRIPTION))


# ---------------------------------------------------------------------------
# the parser and the entry point
# ---------------------------------------------------------------------------
_ADDERS = {"predict": _add_predict, "lab": _add_lab, "trace": _add_trace,
           "doctor": _add_doctor,
           "catalog": _add_catalog, "site": _add_site, "hub": _add_hub}


def build_parser(commands: Iterable[str] = COMMANDS) -> argparse.ArgumentParser:
    """The argparse parser with a subcommand for each of ``commands``."""
    parser = Parser(prog=PROG, description=__doc__.split("\n\n")[0],
                    epilog="Run `python -m course_lib COMMAND --help` for a command's options.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                help=", ".join(COMMANDS))
    for name in commands:
        _ADDERS[name](sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib COMMAND [options]``: run one command, return its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # build only the command asked for, so that one command's imports (the
    # models) cannot break another (the doctor must run anywhere)
    return run_parser(build_parser([argv[0]] if argv and argv[0] in COMMANDS else COMMANDS),
                      argv)


if __name__ == "__main__":
    sys.exit(main())
