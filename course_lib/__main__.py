"""Command line: ``python -m course_lib <command> [options]``.

Commands
--------
predict   nccl-tests-style table of a collective predicted by the model
lab       run a measurement lab (pageable, batching, kernel-bypass, allreduce, gpu-copies)
doctor    check this machine's set-up for the course, with a fix for each problem
catalog   print the hardware catalog with directions and sources
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "predict": ("course_lib.predict", "main"),
    "lab": ("course_lib.measure.cli", "main"),
    "doctor": ("course_lib.doctor", "main"),
    "catalog": ("course_lib.hardware", "_catalog_main"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"unknown command {command!r}; choose one of {sorted(COMMANDS)}",
              file=sys.stderr)
        return 2
    module, func = COMMANDS[command]
    return int(getattr(importlib.import_module(module), func)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
