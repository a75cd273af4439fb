"""``python -m autograder <verb> [options]`` -- see ``docs/grading.md``.

Verbs: release, collect, autograde, feedback, export, all, validate.
"""

from __future__ import annotations

import argparse
import sys

from .pipeline import Course


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder",
                                description="Interconnect City grading pipeline (nbgrader 0.9.6)")
    p.add_argument("--course", default=None,
                   help="course directory (default: ./course in the current folder)")
    p.add_argument("--cell-timeout", type=int, default=None, help="seconds per cell (default 30)")
    p.add_argument("--notebook-timeout", type=int, default=None,
                   help="seconds per notebook (default 300)")
    p.add_argument("--kernel-memory", type=int, default=None,
                   help="kernel address-space limit in bytes (default 2 GiB)")
    sub = p.add_subparsers(dest="verb", required=True)

    r = sub.add_parser("release", help="generate exercises/ from solutions/")
    r.add_argument("assignments", nargs="*")
    r.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if exercises/ differs from a fresh release")

    c = sub.add_parser("collect", help="collect submissions")
    c.add_argument("assignment")
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--zip", help="an LMS download: zip of <student>_<notebook>.ipynb")
    src.add_argument("--exchange", action="store_true", help="from the nbgrader exchange")

    a = sub.add_parser("autograde", help="autograde every submission of an assignment")
    a.add_argument("assignment")
    a.add_argument("--student", action="append", help="only these students (repeatable)")

    f = sub.add_parser("feedback", help="generate (and release) HTML feedback")
    f.add_argument("assignment")

    e = sub.add_parser("export", help="grades to CSV")
    e.add_argument("--to", default=None, help="CSV path (default: grades.csv in the course directory; "
                   "a relative path is taken inside it; never inside the repository checkout)")

    v = sub.add_parser("validate", help="run a notebook's tests as a student would (exit 1 on failure)")
    v.add_argument("notebooks", nargs="+")

    al = sub.add_parser("all", help="release, collect (zip), autograde, feedback, export")
    al.add_argument("assignment")
    al.add_argument("--zip", required=True)
    al.add_argument("--to", default=None)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    course = Course(args.course, cell_timeout_s=args.cell_timeout,
                    notebook_timeout_s=args.notebook_timeout,
                    kernel_memory_bytes=args.kernel_memory)
    if args.verb == "release":
        differ = course.release(args.assignments or None, check=args.check)
        if args.check:
            if differ:
                print("exercises/ is out of date with solutions/:\n  " + "\n  ".join(differ)
                      + "\nrun: python -m autograder release")
                return 1
            print("exercises/ matches a fresh release of solutions/")
        elif differ:
            print("updated: " + ", ".join(differ))
        return 0
    if args.verb == "validate":
        from .pipeline import validate_notebook
        failed = 0
        for path in args.notebooks:
            ok, report = validate_notebook(path)
            print(f"{'PASS' if ok else 'FAIL'}  {path}" + ("" if ok else "\n" + report))
            failed += not ok
        return 1 if failed else 0
    if args.verb in ("collect", "autograde", "feedback", "export", "all"):
        course.init()
    if args.verb == "collect":
        if args.zip:
            course.collect_zip(args.assignment, args.zip)
        else:
            course.collect_exchange(args.assignment)
        return 0
    if args.verb == "autograde":
        rows = course.autograde(args.assignment, args.student)
        return 0 if all(r.score is not None for r in rows) else 3
    if args.verb == "feedback":
        course.feedback(args.assignment)
        return 0
    if args.verb == "export":
        course.export(args.to)
        return 0
    if args.verb == "all":
        if course.release([args.assignment], check=True):
            print("exercises/ is out of date with solutions/: run `python -m autograder release` "
                  "and re-publish before grading")
            return 1
        course.collect_zip(args.assignment, args.zip)
        rows = course.autograde(args.assignment)
        course.feedback(args.assignment)
        course.export(args.to)
        return 0 if all(r.score is not None for r in rows) else 3
    return 2


if __name__ == "__main__":
    sys.exit(main())
