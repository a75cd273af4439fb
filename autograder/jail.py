"""Put one grading process behind the boundary, then become it.

``python -I -S jail.py JSON_SPEC -- CMD...`` runs as root *inside* fresh mount
and PID namespaces (``unshare --pid --fork --kill-child --mount --mount-proc``,
see :mod:`autograder.isolation`), or, where namespaces are unavailable, as a
plain child of the grader.  It

1. exposes the interpreter, the venv and the course code through directories
   the grading user could not traverse (``/root`` holding pyenv, say): a
   ``tmpfs`` is laid over the closed directory and only those trees are bound
   back into it, so nothing else there becomes visible;
2. hides the course directory (gradebook, every submission, feedback) and the
   repository's ``solutions/`` (hidden tests) under empty ``tmpfs`` mounts;
3. sets resource limits (address space, CPU time, file size, no core files,
   and a cap on the grading user's processes), ``PR_SET_NO_NEW_PRIVS``;
4. drops to the unprivileged grading user (no supplementary groups), moves
   into the per-student work directory and ``exec``s ``CMD``.

In the PID namespace ``CMD`` is process 1: when it exits, the kernel kills
every process the submission started, daemons included.

Run by the grader only.  The spec is JSON: ``uid``, ``gid``, ``workdir``,
``expose`` (paths), ``hide`` (paths), ``limits`` ({"as", "cpu", "fsize",
"nproc"}), ``namespaces`` (bool), ``env`` (the environment for ``CMD``).
"""

import json
import os
import subprocess
import sys


def _mount(*args):
    subprocess.run(["mount", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def _closed_ancestor(path):
    """The top-most ancestor of ``path`` that 'other' users cannot traverse."""
    parts = os.path.abspath(path).split(os.sep)
    cur = os.sep
    for part in parts[1:]:
        cur = os.path.join(cur, part)
        try:
            mode = os.stat(cur).st_mode
        except OSError:
            return None
        if not mode & 0o001 and os.path.isdir(cur):
            return cur
    return None


def expose(paths, stage_root):
    """Make ``paths`` reachable through closed ancestors (mount namespace only)."""
    groups = {}
    real = sorted({os.path.realpath(p) for p in paths})
    real = [p for p in real if not any(p.startswith(q + os.sep) for q in real)]  # outermost only
    for p in real:
        top = _closed_ancestor(p)
        if top and top != p:
            groups.setdefault(top, []).append(p)
    for n, (top, inner) in enumerate(sorted(groups.items())):
        staged = []
        for i, p in enumerate(sorted(set(inner))):
            st = os.path.join(stage_root, f"{n}-{i}")
            os.makedirs(st, exist_ok=True)
            _mount("--bind", p, st)
            staged.append((st, p))
        _mount("-t", "tmpfs", "-o", "mode=0755,size=64k", "tmpfs", top)
        for st, p in staged:
            os.makedirs(p, exist_ok=True)
            _mount("--move", st, p)


def hide(paths):
    for p in paths:
        if os.path.isdir(p):
            _mount("-t", "tmpfs", "-o", "mode=0000,size=4k,ro", "tmpfs", p)


def limits(spec):
    import resource
    table = {"as": resource.RLIMIT_AS, "cpu": resource.RLIMIT_CPU,
             "fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC}
    for key, which in table.items():
        value = int(spec.get(key) or 0)
        if value > 0:
            resource.setrlimit(which, (value, value))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def no_new_privs():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:  # not Linux, or no libc: limits still apply
        pass


def main(argv):
    spec = json.loads(argv[0])
    cmd = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if spec.get("namespaces"):
        _mount("--make-rprivate", "/")
        stage = spec["stage"]
        os.makedirs(stage, exist_ok=True)
        _mount("-t", "tmpfs", "-o", "mode=0700,size=64k", "tmpfs", stage)
        expose(spec.get("expose", []), stage)
        hide(spec.get("hide", []))
    limits(spec.get("limits", {}))
    no_new_privs()
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    os.chdir(spec["workdir"])
    os.execve(cmd[0], cmd, spec["env"])


if __name__ == "__main__":
    main(sys.argv[1:])
