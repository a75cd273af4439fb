"""The labs' command line moved into the course's one CLI,
:mod:`course_lib.apps.cli`: ``python -m course_lib lab NAME [options]``
(``python -m course_lib lab --help`` lists the options and exit codes).

:func:`main` stays for old scripts; it is that command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib lab ...`` with ``argv`` after ``lab``."""
    from course_lib.apps.cli import main as cli_main  # apps sit above: import on call

    return cli_main(["lab", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
