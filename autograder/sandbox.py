"""The sandbox: bubblewrap around one notebook, an allow-list of what it may see.

Every submission runs in its own ``bwrap`` (Debian package ``bubblewrap``)
with

* its own **user, PID, network, IPC, UTS and cgroup namespaces**
  (``--unshare-all``, ``--unshare-user``): no network but a loopback, no
  other process visible; ``--die-with-parent`` and the PID namespace end every
  process the notebook started when the grader closes the sandbox -- no
  sweep by user name, so graders running side by side never touch each
  other's processes;
* an **empty root file system** into which only these are mounted: the
  system's ``/usr`` (and its ``/bin``, ``/lib`` links) read-only, the
  interpreter and the venv read-only, ``course_lib`` read-only at
  ``/opt/interconnect``, the driver (:mod:`autograder.sandbox_driver`),
  fresh ``/proc`` and ``/dev``, and private ``tmpfs`` for the work
  directory (``/home/student``), ``/tmp``, ``/var/tmp`` and ``/dev/shm``.
  The repository, its other clones, the course directory, the LMS zip and
  the gradebook do not exist inside; what the notebook writes disappears
  with the sandbox;
* a **clean environment**: ``--clearenv`` and :data:`ENV_ALLOW` only;
* **limits** set before ``bwrap`` starts (address space, CPU time, file size,
  no core files), no capabilities, a new session (no terminal injection).

The notebook itself travels over a pipe (no file of the grader is shared).
The sandbox is started as the grader's own user: as root, or as an
unprivileged user through unprivileged user namespaces (a laptop).  Where the
kernel forbids those, :func:`check` says so and how to allow them.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import threading

from . import REPO_ROOT

__all__ = ["SandboxError", "Sandbox", "check", "sandbox_command", "ENV_ALLOW", "describe",
           "explain_failure"]

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_driver.py")
#: Where course_lib and the driver appear inside the sandbox.
INSIDE = "/opt/interconnect"
HOME = "/home/student"
#: The only environment variables a sandbox gets (names -> values); nothing of the grader's.
ENV_ALLOW = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": HOME, "USER": "student", "LOGNAME": "student",
    "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
    "TMPDIR": "/tmp", "MPLBACKEND": "Agg", "MPLCONFIGDIR": HOME + "/.mpl",
    "IPYTHONDIR": HOME + "/.ipython", "JUPYTER_CONFIG_DIR": HOME + "/.jupyter",
    "JUPYTER_DATA_DIR": HOME + "/.jupyter-data", "JUPYTER_RUNTIME_DIR": HOME + "/.jupyter-run",
    "JUPYTER_PLATFORM_DIRS": "1",
    "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
}
UID = 1000


class SandboxError(RuntimeError):
    """The sandbox could not be started (no bwrap, no user namespaces, ...)."""


def _python_trees() -> list[str]:
    """Read-only trees the interpreter needs: its prefix, the venv, where the binary lives."""
    exe = os.path.realpath(sys.executable)
    trees = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), os.path.abspath(sys.prefix),
             os.path.dirname(os.path.dirname(exe))}
    # sys.path entries outside those (a site-packages elsewhere)
    for p in sys.path:
        if p and os.path.isabs(p) and os.path.isdir(p) and "site-packages" in p:
            trees.add(os.path.realpath(p))
    trees = sorted(t for t in trees if t and t != "/")
    return [t for t in trees if not any(t != o and t.startswith(o + os.sep) for o in trees)]


def sandbox_sys_path() -> list[str]:
    """``sys.path`` inside: course_lib's folder first, then the grader's stdlib and site-packages
    (never the repository, never the working directory)."""
    paths = [INSIDE]
    trees = _python_trees()
    for p in sys.path:
        if not p or not os.path.isabs(p) or not os.path.isdir(p):
            continue
        # only what lies inside the mounted interpreter and venv: never the working
        # directory (the course directory, when nbgrader runs), never the repository
        if not any(p == t or p.startswith(t + os.sep) for t in trees):
            continue
        if p not in paths:
            paths.append(p)
    return paths


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    # the dynamic loader's cache and a minimal identity (getpwuid works)
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf"):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    return args


@functools.lru_cache(maxsize=None)
def _bwrap_options() -> frozenset:
    try:
        text = subprocess.run(["bwrap", "--help"], capture_output=True, text=True).stdout
    except OSError:
        return frozenset()
    return frozenset(w for w in text.split() if w.startswith("--"))


def sandbox_command(cell_timeout_s: int = 30) -> list[str]:
    """The ``bwrap`` command line that starts the driver in a fresh sandbox."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise SandboxError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap "
                           "(or run scripts/ensure_bubblewrap.sh)")
    args = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(UID), "--gid", str(UID),
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    if "--disable-userns" in _bwrap_options():
        args += ["--disable-userns"]
    args += _system_binds()
    # private scratch space first: the interpreter's trees are bound on top of it, so
    # a venv or a checkout that lives under /tmp or /home (a CI clone, an
    # instructor's home) stays visible, read-only, while the rest of /tmp is empty
    args += ["--proc", "/proc", "--dev", "/dev",
             "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm",
             "--tmpfs", "/home"]
    for tree in _python_trees():
        args += ["--ro-bind", tree, tree]
    venv = os.path.abspath(sys.prefix)
    if os.path.realpath(venv) != venv:          # a venv reached through a symbolic link
        args += ["--symlink", os.path.realpath(venv), venv]
    args += ["--ro-bind", os.path.join(REPO_ROOT, "course_lib"), INSIDE + "/course_lib",
             "--ro-bind", DRIVER, INSIDE + "/ag_driver.py",
             "--dir", HOME, "--chdir", HOME,
             "--remount-ro", "/",          # the root and its folders: read-only too
             "--clearenv"]
    env = dict(ENV_ALLOW)
    env["PYTHONPATH"] = os.pathsep.join(sandbox_sys_path())
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args += ["--", sys.executable, "-I", "-S", INSIDE + "/ag_driver.py"]
    return args


def _limits(memory_bytes: int, cpu_s: int, file_bytes: int, nproc: int):
    def apply():
        for which, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu_s),
                             (resource.RLIMIT_FSIZE, file_bytes), (resource.RLIMIT_NPROC, nproc)):
            if value and value > 0:
                try:
                    resource.setrlimit(which, (value, value))
                except (ValueError, OSError):
                    pass
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _frame(obj) -> bytes:
    data = json.dumps(obj).encode("utf-8")
    return struct.pack(">Q", len(data)) + data


class Sandbox:
    """One running sandbox: send a notebook, get it back executed, ask questions.

    Use as a context manager; leaving it ends every process inside."""

    def __init__(self, memory_bytes: int = 2 * 2**30, cpu_s: int = 600,
                 file_bytes: int = 256 * 2**20, max_reply_bytes: int = 128 * 2**20):
        self.memory_bytes, self.cpu_s, self.file_bytes = memory_bytes, cpu_s, file_bytes
        self.max_reply_bytes = max_reply_bytes
        self.proc = None
        self._stderr = b""

    def __enter__(self):
        cmd = sandbox_command()
        nproc = 0 if os.geteuid() == 0 else 4096
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_limits(self.memory_bytes, self.cpu_s, self.file_bytes, nproc),
            close_fds=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self):
        stream = self.proc.stderr
        try:
            self._stderr = stream.read(65536)
            while stream.read(65536):
                pass
        except (OSError, ValueError):
            pass

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                try:
                    self.proc.stdin.write(_frame({"op": "bye"}))
                    self.proc.stdin.close()
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for f in (self.proc.stdout, self.proc.stdin):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc = None

    # -- the protocol --------------------------------------------------------------
    def _send(self, obj):
        self.proc.stdin.write(_frame(obj))
        self.proc.stdin.flush()

    def _recv(self, timeout_s: float):
        """The next frame from the driver, or raise SandboxError (killing the sandbox)."""
        result = {}

        def read():
            try:
                head = self.proc.stdout.read(8)
                if len(head) < 8:
                    return
                (n,) = struct.unpack(">Q", head)
                if n > self.max_reply_bytes:
                    result["error"] = f"reply of {n:,} bytes is larger than {self.max_reply_bytes:,}"
                    return
                data = self.proc.stdout.read(n)
                if len(data) == n:
                    result["value"] = json.loads(data.decode("utf-8"))
            except Exception as exc:  # a garbled reply: the student's own process wrote it
                result["error"] = f"unreadable reply ({type(exc).__name__})"

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout_s)
        if "value" in result and isinstance(result["value"], dict):
            if "fatal" in result["value"]:
                self.proc.kill()
                raise SandboxError("the sandbox's driver failed: "
                                   + str(result["value"]["fatal"])[-1500:])
            return result["value"]
        why = result.get("error") or ("no reply in time" if t.is_alive() else "the sandbox ended")
        self.proc.kill()
        raise SandboxError(why + self.stderr_tail())

    def stderr_tail(self) -> str:
        tail = self._stderr.decode("utf-8", "replace").strip()[-500:]
        return f" ({tail})" if tail else ""

    def execute(self, nb: dict, cell_timeout_s: int, notebook_timeout_s: int,
                max_value_bytes: int = 64 * 2**20, max_output_bytes: int = 1_000_000) -> dict:
        """Run the notebook; ``{"executed": nb, "events": [...]}``."""
        self._send({"notebook": nb, "sys_path": sandbox_sys_path(), "cell_timeout_s": cell_timeout_s,
                    "notebook_timeout_s": notebook_timeout_s, "max_value_bytes": max_value_bytes,
                    "max_output_bytes": max_output_bytes})
        # the driver's own budget plus start-up and a replay after a dead kernel
        reply = self._recv(2 * notebook_timeout_s + 4 * cell_timeout_s + 90)
        if not isinstance(reply.get("executed"), dict):
            self.proc.kill()
            raise SandboxError("the sandbox sent no notebook")
        return reply

    def ask(self, op: str, items: list, timeout_s: int) -> bytes | None:
        """One question (``names`` or ``calls``); the pickled answer (untrusted) or None."""
        if op == "calls":
            msg = {"op": op, "calls": [[n, base64.b64encode(b).decode("ascii")] for n, b in items]}
        else:
            msg = {"op": op, "names": list(items)}
        msg["timeout_s"] = timeout_s
        limit = timeout_s * max(1, len(items)) + 10 if op == "calls" else timeout_s + 10
        msg["limit_s"] = limit
        self._send(msg)
        reply = self._recv(limit + 15)
        answer = reply.get("answer")
        if not isinstance(answer, str):
            self.last_error = str(reply.get("error", ""))[:800]
            return None
        try:
            return base64.b64decode(answer, validate=True)
        except ValueError:
            return None


@functools.lru_cache(maxsize=None)
def check() -> str:
    """'' if a sandbox can be started here, else what is wrong and how to fix it."""
    if not shutil.which("bwrap"):
        return ("bubblewrap (bwrap) is not installed: `apt-get install bubblewrap` "
                "(scripts/ensure_bubblewrap.sh does it as root)")
    try:
        cmd = sandbox_command()
    except SandboxError as exc:
        return str(exc)
    probe = cmd[:cmd.index("--")] + ["--", sys.executable, "-I", "-S", "-c", "import os; print(os.getuid())"]
    proc = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    if proc.returncode == 0 and proc.stdout.strip() == str(UID):
        return ""
    return explain_failure(proc.returncode, proc.stderr)


def explain_failure(returncode: int, stderr: str) -> str:
    """What a failed sandbox start means, and what to do about it.

    >>> explain_failure(1, "bwrap: No permissions to creating new namespace")[:40]
    'the kernel forbids unprivileged user nam'
    """
    err = (stderr or "").strip()
    if any(s in err for s in ("No permissions to creat", "Operation not permitted",
                              "setting up uid map", "Creating new namespace failed")):
        return ("the kernel forbids unprivileged user namespaces, which the sandbox needs: "
                "as root run `sysctl -w kernel.unprivileged_userns_clone=1` (Debian) or "
                "`sysctl -w user.max_user_namespaces=15000`, or on Ubuntu 24.04 "
                "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; or grade as root "
                f"(bwrap said: {err[-300:]})")
    return f"bwrap cannot start the interpreter here (exit {returncode}): {err[-500:]}"


def describe() -> str:
    problem = check()
    if problem:
        return "sandbox: UNAVAILABLE -- " + problem
    who = "root" if os.geteuid() == 0 else "an unprivileged user (user namespaces)"
    return ("sandbox: bubblewrap, started by " + who + " -- own user/PID/network namespaces, "
            "empty root with the interpreter, venv and course_lib read-only, private /tmp and "
            "work directory, clean environment; tests judged outside")
