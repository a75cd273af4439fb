"""Kernel wrapper: put resource limits on a grading kernel, then become it.

``python -m autograder.sandbox --memory-bytes N --cpu-s S --file-bytes F -- CMD...``
sets ``RLIMIT_AS`` (address space: a memory bomb gets ``MemoryError`` or dies
alone instead of taking the grading machine down), ``RLIMIT_CPU`` (a kernel
that ignores SIGINT is killed by SIGXCPU at the latest), ``RLIMIT_FSIZE``
(no filling the disk) and ``RLIMIT_CORE = 0``, and then ``exec``s the real
kernel command, so the limits apply to the kernel and to everything it starts.

Started by :class:`autograder.guard.SandboxedKernelManager`; never by hand.
"""

from __future__ import annotations

import argparse
import os
import sys


def _set_limit(resource, which, value):
    if value is None or value <= 0:
        return
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, hard if hard != resource.RLIM_INFINITY else value))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.sandbox")
    parser.add_argument("--memory-bytes", type=int, default=0)
    parser.add_argument("--cpu-s", type=int, default=0)
    parser.add_argument("--file-bytes", type=int, default=0)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("give the kernel command after --")
    try:
        import resource
    except ImportError:  # not POSIX: run without limits, say so
        print("autograder.sandbox: no resource module; kernel runs without limits",
              file=sys.stderr)
    else:
        _set_limit(resource, resource.RLIMIT_AS, args.memory_bytes)
        _set_limit(resource, resource.RLIMIT_CPU, args.cpu_s)
        _set_limit(resource, resource.RLIMIT_FSIZE, args.file_bytes)
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    os.execvp(cmd[0], cmd)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
