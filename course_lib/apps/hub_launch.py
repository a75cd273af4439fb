"""Become one course user's single-user server (run by the hub, as root).

The hub's spawner, ``CourseSpawner`` in ``deploy/course_spawner.py``, starts

``unshare --mount --propagation private -- PYTHON -I -S hub_launch.py SPEC -- CMD...``

so that this script runs as root in a fresh, private mount namespace, with the
process id the hub watches.  It

1. makes the interpreter, the virtual environment and the course checkout
   reachable when one of their ancestors is closed to other users (``/root``
   holding pyenv, say): a ``tmpfs`` is laid over the closed directory and only
   those trees are bound back into it, so nothing else there becomes visible;
2. hides what a learner must not read under empty ``tmpfs`` mounts: the
   repository's ``solutions/`` (answers and hidden tests), its ``.git`` (which
   holds them too) and any grader's ``course/`` inside the checkout;
3. joins the user's cgroups (memory and CPU limits) when the hub made them;
4. caps the user's number of processes, drops to the user (no supplementary
   groups, ``PR_SET_NO_NEW_PRIVS``), moves into the home and ``exec``\\ s ``CMD``.

The namespace ends with the server's last process; the host's mounts are never
touched.  ``SPEC`` is JSON: ``uid``, ``gid``, ``home``, ``stage`` (a root-only
folder for staging bind mounts), ``expose`` and ``hide`` (paths), ``cgroups``
(folders whose ``cgroup.procs`` to join) and ``nproc``.  Standard library only:
it runs with ``-I -S`` before any of the course's code is reachable.
"""

import json
import os
import subprocess
import sys


def _mount(*args):
    subprocess.run(["mount", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def closed_ancestor(path):
    """The top-most ancestor of ``path`` that other users cannot traverse, or None."""
    cur = os.sep
    for part in os.path.abspath(path).split(os.sep)[1:]:
        cur = os.path.join(cur, part)
        try:
            st = os.stat(cur)
        except OSError:
            return None
        if os.path.isdir(cur) and not st.st_mode & 0o001:
            return cur
    return None


def expose(paths, stage):
    """Bind ``paths`` back into a tmpfs laid over each closed ancestor."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    real = [p for p in real if not any(p.startswith(q + os.sep) for q in real)]
    groups = {}
    for p in real:
        top = closed_ancestor(p)
        if top and top != p:
            groups.setdefault(top, []).append(p)
    if not groups:
        return
    _mount("-t", "tmpfs", "-o", "mode=0700,size=64k", "tmpfs", stage)
    for n, (top, inner) in enumerate(sorted(groups.items())):
        staged = []
        for i, p in enumerate(sorted(set(inner))):
            st = os.path.join(stage, f"{n}-{i}")
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


def join_cgroups(folders):
    for folder in folders:
        with open(os.path.join(folder, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))


def drop_privileges(uid, gid, nproc):
    import resource

    if nproc:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:  # not Linux or no libc: the uid change still holds
        pass


def main(argv):
    spec = json.loads(argv[0])
    cmd = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if not cmd:
        sys.exit("hub_launch: no command after the spec")
    if os.geteuid() != 0:
        sys.exit("hub_launch: must start as root (the hub runs it)")
    expose(spec.get("expose", []), spec["stage"])
    hide(spec.get("hide", []))
    join_cgroups(spec.get("cgroups", []))
    drop_privileges(int(spec["uid"]), int(spec["gid"]), int(spec.get("nproc") or 0))
    os.chdir(spec["home"])
    os.execvpe(cmd[0], cmd, os.environ)


if __name__ == "__main__":
    main(sys.argv[1:])
