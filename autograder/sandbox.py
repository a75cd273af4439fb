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

from . import REPO_ROOT, wire

__all__ = ["SandboxError", "Sandbox", "JudgeBox", "check", "sandbox_command", "judge_command",
           "judge_user", "ENV_ALLOW", "JUDGE_ENV", "describe", "explain_failure"]

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_driver.py")
WIRE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")
PACKAGE = os.path.dirname(os.path.abspath(__file__))
#: The unprivileged account the judge runs as when the grader is root.
JUDGE_USER = "ag-judge"
#: The judge's whole environment (nothing of the grader's: no secret, no path of the course).
JUDGE_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
             "TZ": "UTC", "TMPDIR": "/tmp", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/.mpl",
             "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
             "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: Limits of what the grader reads from a sandbox or a judge (checked while reading).
FRAME_LIMITS = wire.Limits(max_bytes=128 * 2**20, max_depth=100, max_items=2_000_000)
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
    trees = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix),
             os.path.dirname(os.path.dirname(exe))}
    if not os.path.islink(os.path.abspath(sys.prefix)):   # a linked venv is linked inside too
        trees.add(os.path.abspath(sys.prefix))
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
        real = os.path.realpath(p)
        if not any(q == t or q.startswith(t + os.sep) for t in trees for q in (p, real)):
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
             "--ro-bind", WIRE, INSIDE + "/ag_wire.py",
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
        self.limits = wire.Limits(max_bytes=max_reply_bytes, max_depth=FRAME_LIMITS.max_depth,
                                  max_items=FRAME_LIMITS.max_items)
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
                    result["value"] = wire.parse_json(data, self.limits)
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
                max_value_bytes: int = 64 * 2**20, max_output_bytes: int = 1_000_000,
                wait_s: float | None = None) -> dict:
        """Run the notebook; ``{"executed": nb, "events": [...]}``."""
        self._send({"notebook": nb, "sys_path": sandbox_sys_path(), "cell_timeout_s": cell_timeout_s,
                    "notebook_timeout_s": notebook_timeout_s, "max_value_bytes": max_value_bytes,
                    "max_output_bytes": max_output_bytes})
        # the driver keeps to the budget (a replay included); plus starting the kernel and
        # the last cell's interrupt
        reply = self._recv(notebook_timeout_s + 40 if wait_s is None else max(1.0, wait_s))
        if not isinstance(reply.get("executed"), dict):
            self.proc.kill()
            raise SandboxError("the sandbox sent no notebook")
        return reply

    def ask(self, op: str, items: list, timeout_s: float, limit_s: float | None = None) -> dict:
        """One question (``names`` or ``calls``); ``{"answer": base64 text or None,
        "budget": bool}`` -- the answer is relayed to the judge unread (untrusted)."""
        msg = {"op": op, ("calls" if op == "calls" else "names"): list(items)}
        msg["timeout_s"] = timeout_s
        limit = timeout_s * max(1, len(items)) + 10 if op == "calls" else timeout_s + 10
        if limit_s is not None:
            limit = max(1.0, min(limit, limit_s))
        msg["limit_s"] = limit
        self._send(msg)
        reply = self._recv(limit + 25)
        answer = reply.get("answer")
        return {"answer": answer if isinstance(answer, str) else None,
                "budget": reply.get("budget") is True}


def judge_user():
    """(uid, gid) the judge runs as when the grader is root: the system account
    :data:`JUDGE_USER`, created (no home, no shell, no password) if it does not exist."""
    import pwd
    try:
        entry = pwd.getpwnam(JUDGE_USER)
    except KeyError:
        proc = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                               "--shell", "/usr/sbin/nologin", "--user-group", JUDGE_USER],
                              capture_output=True, text=True)
        try:
            entry = pwd.getpwnam(JUDGE_USER)
        except KeyError:
            raise SandboxError(f"cannot create the judge's account {JUDGE_USER!r}: "
                               f"{(proc.stderr or proc.stdout).strip()[-300:]}") from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxError(f"the judge's account {JUDGE_USER!r} must not be root")
    return entry.pw_uid, entry.pw_gid


def judge_command() -> list[str]:
    """The command that starts the judge (``python -m autograder.judge``): in a bubblewrap
    sandbox of its own (empty root: the interpreter, the venv, ``course_lib`` and
    ``autograder`` read-only, a private ``/tmp``, no network, :data:`JUDGE_ENV` only) and
    never as root -- a root grader switches to :data:`JUDGE_USER` inside it (``setpriv``,
    no capabilities left, no new privileges); any other grader is already unprivileged."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise SandboxError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "judge"]
    root = os.geteuid() == 0
    if root:
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_SETPCAP"]
    else:
        args += ["--unshare-user", "--uid", str(UID), "--gid", str(UID), "--cap-drop", "ALL"]
    if "--disable-userns" in _bwrap_options() and not root:
        args += ["--disable-userns"]
    args += _system_binds()
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
             "--tmpfs", "/dev/shm", "--tmpfs", "/home"]
    venv = os.path.abspath(sys.prefix)
    linked = os.path.realpath(venv) != venv
    # the folders above the mounts: readable by the judge's user (bwrap makes them 0700
    # under a umask of 077)
    targets = _python_trees() + ([venv] if linked else []) + [INSIDE + "/course_lib"]
    for parent in sorted({p for t in targets for p in _parents(t)}):
        args += ["--perms", "0755", "--dir", parent]
    for tree in _python_trees():
        args += ["--ro-bind", tree, tree]
    if linked:
        args += ["--symlink", os.path.realpath(venv), venv]
    args += ["--ro-bind", os.path.join(REPO_ROOT, "course_lib"), INSIDE + "/course_lib",
             "--ro-bind", PACKAGE, INSIDE + "/autograder",
             "--chdir", "/tmp", "--remount-ro", "/", "--clearenv"]
    env = dict(JUDGE_ENV, PYTHONPATH=os.pathsep.join(sandbox_sys_path()))
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args += ["--"]
    if root:
        uid, gid = judge_user()
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        args += [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs", "--"]
    args += [sys.executable, "-S", "-s", "-P", "-m", "autograder.judge"]
    return args


def _parents(path: str) -> list[str]:
    """``/a/b/c`` -> ``["/a", "/a/b"]``."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


class JudgeBox(Sandbox):
    """The judge's process for one notebook: send it the tests, relay its questions to
    the notebook's sandbox, take back verdicts (plain JSON, read under limits).

    Limits (set before it starts): address space, CPU time, file size, processes."""

    def __init__(self, memory_bytes: int = 2 * 2**30, cpu_s: int = 300):
        super().__init__(memory_bytes=memory_bytes, cpu_s=cpu_s, file_bytes=16 * 2**20,
                         max_reply_bytes=16 * 2**20)
        self.limits = wire.Limits(max_bytes=16 * 2**20, max_depth=20, max_items=200_000)
        self.cost = {}

    def __enter__(self):
        cmd = judge_command()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_limits(self.memory_bytes, self.cpu_s, self.file_bytes, 256),
            close_fds=True, env={"PATH": "/usr/bin:/bin"}, cwd="/")
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def start(self, tests: dict, setup: str, max_value_bytes: int) -> None:
        self._send({"tests": tests, "setup": setup, "max_value_bytes": max_value_bytes})

    def run(self, relay, deadline_s: float) -> tuple[dict, list]:
        """Answer the judge's questions with ``relay(op, items)`` until it sends its
        verdicts: ``({grade_id: (passed, ename, evalue, stdout)}, problems)``.  Anything
        malformed ends the judge (SandboxError)."""
        import time
        while True:
            left = deadline_s - time.monotonic()
            if left <= 0:
                self.proc.kill()
                raise SandboxError("the judge did not finish within the notebook's budget")
            msg = self._recv(left)
            if "verdicts" in msg:
                verdicts, problems = msg.get("verdicts"), msg.get("problems", [])
                if not isinstance(verdicts, dict) or not isinstance(problems, list):
                    raise SandboxError("the judge sent malformed verdicts")
                out = {}
                for gid, v in verdicts.items():
                    if isinstance(v, list) and len(v) == 4 and isinstance(v[0], bool) \
                            and all(isinstance(x, str) for x in v[1:]):
                        out[gid] = (v[0], _text(v[1], 200), _text(v[2], 4000), _text(v[3], 20000))
                cost = msg.get("cost")
                self.cost = {k: float(cost[k]) for k in ("cpu_s", "peak_mib")
                             if isinstance(cost, dict) and isinstance(cost.get(k), (int, float))}
                return out, [_text(p, 300) for p in problems[:10] if isinstance(p, str)]
            op, items = msg.get("ask"), msg.get("items")
            if op == "names" and isinstance(items, list) and len(items) <= 10_000 and all(
                    isinstance(n, str) and n.isidentifier() and len(n) <= 200 for n in items):
                pass
            elif op == "calls" and isinstance(items, list) and len(items) <= 10_000 and all(
                    isinstance(c, list) and len(c) == 2 and isinstance(c[0], str)
                    and c[0].isidentifier() and isinstance(c[1], str) for c in items):
                pass
            else:
                self.proc.kill()
                raise SandboxError("the judge asked a malformed question")
            self._send(relay(op, items))


def _text(value, limit: int) -> str:
    """A string from another process, as text any page or log can hold."""
    return str(value)[:limit].encode("utf-8", "replace").decode("utf-8")


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
    if proc.returncode != 0 or proc.stdout.strip() != str(UID):
        return explain_failure(proc.returncode, proc.stderr)
    try:
        cmd = judge_command()
    except SandboxError as exc:
        return f"the judge cannot be started: {exc}"
    probe = cmd[:cmd.index(sys.executable)] + [sys.executable, "-I", "-S", "-c",
                                               "import os; print(os.getuid(), os.geteuid())"]
    proc = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    ids = proc.stdout.split()
    if proc.returncode != 0 or len(ids) != 2 or "0" in ids:
        return "the judge cannot be started unprivileged: " + explain_failure(proc.returncode, proc.stderr)
    return ""


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
    judge = f"as {JUDGE_USER}" if os.geteuid() == 0 else "as this user"
    return ("sandbox: bubblewrap, started by " + who + " -- own user/PID/network namespaces, "
            "empty root with the interpreter, venv and course_lib read-only, private /tmp and "
            "work directory, clean environment; tests judged outside, by an unprivileged judge "
            f"({judge}, in a bubblewrap of its own); answers cross as data only")
