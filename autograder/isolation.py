"""Where and as whom student code runs: the grader's side of :mod:`autograder.jail`.

Every process that runs student code -- the notebook's kernel and the fresh
interpreter that runs the hidden tests (:mod:`autograder.hidden`) -- is started
through :meth:`Isolation.command`:

* **as root** (CI, a grading server): as the unprivileged user
  :data:`STUDENT_USER` (created with ``useradd`` if missing), in fresh PID and
  mount namespaces (``unshare``), with the course directory and the
  repository's ``solutions/`` hidden, in a per-student work directory that is
  deleted afterwards.  The user owns nothing but that work directory, so the
  repository, the venv, the gradebook and other students' files are read-only
  or unreadable for it.  After each notebook every process of that user is
  killed (:meth:`Isolation.sweep`), whatever namespaces did.
* **not root**: the grader cannot switch users.  Student code runs with the
  grader's user id, in its own session (killed as a group), with the
  resource limits and the private work directory, and the in-process checks
  of :mod:`autograder.guard` (fingerprints, start-up-file sweep) are the only
  defence of the files.  :attr:`Isolation.mode` says which case applies and
  the pipeline prints it; ``docs/grading.md`` lists what each case defends.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile

__all__ = ["STUDENT_USER", "Isolation", "isolation"]

#: The unprivileged account that runs every submission.
STUDENT_USER = os.environ.get("INTERCONNECT_STUDENT_USER", "ag-student")
_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(_HERE)
JAIL = os.path.join(_HERE, "jail.py")


def _ensure_user(name: str):
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--user-group", name],
                       check=True, capture_output=True)
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        raise RuntimeError(f"grading user {name!r} has uid 0; pick an unprivileged account")
    return entry.pw_uid, entry.pw_gid


class Isolation:
    """How student processes are started on this machine (probed once)."""

    def __init__(self, want: str | None = None):
        want = want or os.environ.get("INTERCONNECT_ISOLATION", "auto")
        if want not in ("auto", "user", "none"):
            raise ValueError(f"INTERCONNECT_ISOLATION must be auto, user or none, not {want!r}")
        self.uid = self.gid = None
        self.namespaces = False
        self.mode = "none"
        self.why = "isolation switched off (INTERCONNECT_ISOLATION=none)"
        if want == "none":
            return
        if os.geteuid() != 0:
            self.why = ("not root: student code runs with the grader's user id (files are only "
                        "fingerprinted and restored, not protected)")
            if want == "user":
                raise RuntimeError("INTERCONNECT_ISOLATION=user needs root: " + self.why)
            return
        self.uid, self.gid = _ensure_user(STUDENT_USER)
        self.mode = "user"
        self.why = f"student code runs as {STUDENT_USER} (uid {self.uid})"
        if shutil.which("unshare") and shutil.which("mount") \
                and os.environ.get("INTERCONNECT_NAMESPACES", "1") != "0":
            probe = subprocess.run(["unshare", "--pid", "--fork", "--kill-child", "--mount",
                                    "--mount-proc", "true"], capture_output=True)
            self.namespaces = probe.returncode == 0
        self.why += (", in its own PID and mount namespaces" if self.namespaces else
                     "; no namespaces here (unshare failed): processes are swept by uid")
        problem = self._probe()
        if problem:
            if want == "user":
                raise RuntimeError(f"INTERCONNECT_ISOLATION=user, but {STUDENT_USER} cannot run "
                                   f"the interpreter: {problem}")
            self.uid = self.gid = None
            self.mode, self.namespaces = "none", False
            self.why = (f"{STUDENT_USER} cannot run the interpreter here ({problem}); student code "
                        "runs with the grader's user id")

    def _probe(self) -> str:
        """'' if the grading user can start the interpreter behind the boundary."""
        work = self.workdir("ag-probe-")
        try:
            cmd = self.command([sys.executable, "-I", "-S", "-c", "pass"], work,
                               {"PATH": os.environ.get("PATH", "")})
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        finally:
            self.remove(work)

    # -- work directories --------------------------------------------------------
    def workdir(self, prefix: str = "ag-run-") -> str:
        """A fresh directory only the grading user (and root) can use."""
        path = tempfile.mkdtemp(prefix=prefix)
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)
        os.chmod(path, 0o700)
        return path

    def give(self, path: str) -> None:
        """Hand a file the grader wrote to the grading user (e.g. a connection file)."""
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)

    @staticmethod
    def remove(path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    # -- commands ----------------------------------------------------------------
    def _stage(self) -> str:
        if not getattr(self, "_stage_dir", None):
            self._stage_dir = tempfile.mkdtemp(prefix="ag-stage-")  # root-owned, 0700
            atexit.register(shutil.rmtree, self._stage_dir, True)  # empty outside namespaces
        return self._stage_dir

    def command(self, cmd: list[str], workdir: str, env: dict, hide=(),
                memory_bytes: int = 0, cpu_s: int = 0, file_bytes: int = 0) -> list[str]:
        """``cmd`` wrapped so that it runs behind the boundary, in ``workdir``."""
        spec = {"uid": self.uid, "gid": self.gid, "workdir": workdir, "env": env,
                "namespaces": self.namespaces,
                "stage": self._stage(),
                "expose": sorted({sys.base_prefix, sys.prefix, os.path.realpath(sys.prefix),
                                  _REPO, os.path.dirname(os.path.realpath(sys.executable))}),
                "hide": [os.path.abspath(p) for p in hide if p],
                "limits": {"as": memory_bytes, "cpu": cpu_s, "fsize": file_bytes,
                           "nproc": 512 if self.uid is not None else 0}}
        jail = [sys.executable, "-I", "-S", JAIL, json.dumps(spec), "--", *cmd]
        if self.namespaces:
            return ["unshare", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc", *jail]
        return jail

    # -- clean-up ----------------------------------------------------------------
    def sweep(self) -> int:
        """Kill every process of the grading user (daemons that left the kernel's
        namespace or session).  Returns how many were found."""
        if self.uid is None:
            return 0
        found = 0
        for _ in range(3):
            pids = []
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry}/status", encoding="utf-8") as fh:
                        for line in fh:
                            if line.startswith("State:") and "Z" in line.split()[1]:
                                break  # a zombie: already dead
                            if line.startswith("Uid:"):
                                if int(line.split()[1]) == self.uid:
                                    pids.append(int(entry))
                                break
                except OSError:
                    continue
            if not pids:
                break
            found += len(pids)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        return found

    def describe(self) -> str:
        return f"isolation: {self.mode} -- {self.why}"


@functools.lru_cache(maxsize=None)
def isolation() -> Isolation:
    """The machine's isolation, probed once per process."""
    return Isolation()
