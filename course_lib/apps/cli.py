"""The course's one command line: ``python -m course_lib COMMAND [options]``.

Commands
--------
predict   nccl-tests-style table of a collective predicted by the model
lab       run a measurement lab (pageable, batching, kernel-bypass, allreduce, gpu-copies)
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
COMMANDS = ("predict", "lab", "doctor", "catalog", "site", "hub")

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
    p.add_argument("collective", help=f"one of {list(COLLECTIVES)}")
    p.add_argument("--gpu", default="H100")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--nodes", type=int, default=1)
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
    p.set_defaults(run=_predict, command_parser=p)


def _sizes(lo: float, hi: float, factor: float) -> list[int]:
    out, s = [], lo
    while s <= hi * (1 + 1e-12):
        out.append(int(round(s)))
        s *= factor
    return out


def _predict_records(a):
    from course_lib.predict import cluster, cluster_from_topo, predict_collective

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
        machine = cluster_from_topo(dump, a.gpu, gpus=gpus, nodes=a.nodes, nic=a.nic,
                                    cpu=a.cpu)
    else:
        machine = cluster(a.gpu, a.gpus_per_node, a.nodes, a.fabric, a.nic,
                          a.nics_per_node, cpu=a.cpu)
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
_ADDERS = {"predict": _add_predict, "lab": _add_lab, "doctor": _add_doctor,
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
