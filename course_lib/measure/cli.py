"""Command line of the labs: ``python -m course_lib lab NAME [options]``.

Labs: ``pageable``, ``batching``, ``kernel-bypass``, ``allreduce``,
``gpu-copies`` (see :mod:`course_lib.measure`).

Options
-------
--quick          small sizes, few repeats: seconds
--json           print the records as a JSON list (each with ``variant``,
                 ``n_bytes``, ``median_s``, ``spread_s`` = IQR, ...; the
                 allreduce lab adds ``busbw_bytes_per_s``)
--csv PATH       also write the records as CSV to PATH
--save [DIR]     save ``<lab>.csv`` and ``<lab>.json`` in DIR (default
                 ``notebooks/lab_results/``, or ``$COURSE_LAB_RESULTS``)
--no-progress    no progress bar
--ranks N[,N]    allreduce: MPI rank counts (default 4)
--timeout S      allreduce: kill the MPI job after S seconds

Exit codes: 0 done -- also when a lab is skipped because this machine lacks
what it needs (no GPU or CuPy for ``gpu-copies``, no MPI for ``allreduce``):
the reason is printed, and with ``--json`` the output is
``[{"lab": ..., "skipped": reason}]``; 1 the lab failed (timeout, MPI
error); 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from . import LAB_NAMES, run_lab
from ..units import format_bandwidth, format_bytes, format_time


class _Parser(argparse.ArgumentParser):
    def error(self, message):           # exit 2 with the usage, as argparse does
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m course_lib lab",
                description="Run a measurement lab of Interconnect City.",
                epilog="Exit codes: " + __doc__.split("Exit codes:")[1].strip(),
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
    p.add_argument("--ranks", metavar="N[,N]", help="allreduce: rank counts")
    p.add_argument("--timeout", metavar="S", type=float,
                   help="allreduce: MPI job timeout in seconds")
    return p


def _fmt_summary(key: str, value) -> str:
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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    kwargs = {}
    if args.lab == "allreduce":
        if args.ranks:
            try:
                kwargs["n_ranks"] = [int(x) for x in args.ranks.split(",")]
            except ValueError:
                p.print_usage(sys.stderr)
                print(f"--ranks: write whole numbers such as 4 or 2,4,8; got "
                      f"{args.ranks!r}", file=sys.stderr)
                return 2
            if any(n < 2 or n > 64 for n in kwargs["n_ranks"]):
                print(f"--ranks: each rank count must lie in 2..64; got "
                      f"{args.ranks!r}", file=sys.stderr)
                return 2
        if args.timeout is not None:
            if not (args.timeout > 0 and math.isfinite(args.timeout)):
                print(f"--timeout must be > 0 seconds; got {args.timeout}",
                      file=sys.stderr)
                return 2
            kwargs["timeout_s"] = args.timeout
    elif args.ranks or args.timeout is not None:
        print(f"--ranks and --timeout apply to the allreduce lab only, not "
              f"{args.lab!r}", file=sys.stderr)
        return 2
    try:
        result = run_lab(args.lab, quick=args.quick, progress=not args.no_progress,
                         **kwargs)
    except (RuntimeError, TimeoutError, OSError) as exc:
        print(f"lab {args.lab} failed: {exc}", file=sys.stderr)
        return 1
    if result.skipped:
        if args.json:
            print(json.dumps([{"lab": result.name, "skipped": result.skipped}]))
        else:
            print(f"lab {result.name}: skipped -- {result.skipped}")
        return 0
    if args.csv:
        result.to_csv(args.csv)
    if args.save is not None:
        path = result.save(args.save or None)
        print(f"saved {path} and {path.with_suffix('.json')}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict()["records"]))
    else:
        print(result.table())
        print("summary:")
        for k, v in result.summary.items():
            print(f"  {k:<36} {_fmt_summary(k, v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
