"""What every command of the course's command line shares.

A command is an :class:`argparse.ArgumentParser` whose defaults hold ``run``
(a function of the parsed arguments that returns the exit status) and
``command_parser`` (the parser, for its usage line).  :func:`run_parser`
parses and runs it the same way for every command: exit 0 or 1 as the
command says, 2 for bad arguments with the usage and what was wrong on stderr,
never a traceback.  :mod:`course_lib.apps.cli` gathers the commands under
``python -m course_lib``; :mod:`~course_lib.apps.doctor` and
:mod:`~course_lib.apps.site` also run alone with the same parser.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["UsageError", "Parser", "run_parser"]


class UsageError(ValueError):
    """Bad arguments: the usage and this message go to stderr, exit status 2.

    ``UsageError(message)`` from a command; argparse's own errors carry the
    parser that found them as a second argument."""


class Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` instead of exiting, so that
    every command reports bad arguments the same way."""

    def error(self, message):
        raise UsageError(message, self)


def _report(message: str, parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return 2


def run_parser(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command it names;
    return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _report(exc.args[0], exc.args[1] if len(exc.args) > 1 else parser)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        return int(args.run(args) or 0)
    except UsageError as exc:  # a value the command found wrong
        return _report(exc.args[0], args.command_parser)
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
