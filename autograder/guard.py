"""Defences that nbgrader 0.9.6 lacks, as preprocessors and a kernel manager.

Wired in by ``autograder/nbgrader_config.py``:

* :class:`RestoreCellMetadata` (sanitising, before nbgrader's
  ``OverwriteCells``): the gradebook, not the submission, says which cells
  are graded, how many points they carry and whether they are locked.  A
  test cell whose ``grade`` flag, ``points``, ``locked`` or ``checksum`` was
  edited is put back; a cell claiming a ``grade_id`` the gradebook does not
  know loses its nbgrader metadata.  (nbgrader alone crashes on some of these
  edits -- "Inconsistent checksums" -- and drops the student's grade.)
* :class:`GuardedExecute` (replaces nbgrader's ``Execute``): a dead kernel
  (``os._exit``, killed, out of memory) no longer aborts the notebook -- the
  cells after it are marked failed and the rest of the batch goes on; a
  time-out is followed by a probe, and a kernel that ignores the interrupt is
  killed; a whole-notebook time budget; stored outputs are capped
  (:func:`cap_outputs`); around each notebook it fingerprints the gradebook,
  the source and release trees, the other submissions and the course code,
  restores what was changed and zeroes the notebook, and removes Python
  start-up files (``sitecustomize``, ``.pth``) left on the interpreter's path
  (the only protection of files when the grader is not root).  Every event goes to a JSON-lines incident log that
  ``python -m autograder autograde`` turns into the "needs a human" list.
* :class:`SandboxedKernelManager`: starts each kernel behind
  :mod:`autograder.isolation` / :mod:`autograder.jail`: the unprivileged grading
  user, PID and mount namespaces, resource limits (memory, CPU time, file size,
  processes), a private throw-away work directory as ``HOME`` and working
  directory, ``python -S -s -P``.
* Test cells never run in the kernel: :class:`GuardedExecute` saves the data
  where each test stands and runs the tests afterwards in a fresh interpreter
  (:mod:`autograder.hidden`) that holds only the student's definitions.
* :class:`HideHiddenTests` (feedback): the hidden tests' source is not shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Float, Integer, List, Unicode

from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

from . import hidden
from .isolation import isolation

__all__ = ["RestoreCellMetadata", "GuardedExecute", "SandboxedKernelManager",
           "INCIDENT_LOG_ENV", "record_incident"]

#: Environment variable naming the JSON-lines file incidents are appended to.
INCIDENT_LOG_ENV = "INTERCONNECT_INCIDENT_LOG"
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record_incident(kind: str, resources: dict | None, detail: str, **extra) -> None:
    """Append one incident (what happened, to whose notebook) to the log."""
    nbg = (resources or {}).get("nbgrader", {})
    row = {"time": time.time(), "kind": kind, "detail": detail,
           "student": nbg.get("student"), "assignment": nbg.get("assignment"),
           "notebook": nbg.get("notebook"), **extra}
    path = os.environ.get(INCIDENT_LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"{ename}: {evalue}"])


# ---------------------------------------------------------------------------
# sanitising: trust the gradebook
# ---------------------------------------------------------------------------
class RestoreCellMetadata(NbGraderPreprocessor):
    """Reset every graded cell's nbgrader metadata to what the gradebook holds."""

    def preprocess(self, nb, resources):
        nbg = resources["nbgrader"]
        gb = Gradebook(nbg["db_url"])
        with gb:
            source_nb = gb.find_notebook(nbg["notebook"], nbg["assignment"])
            source = {c.name: (c.cell_type, c.locked, c.checksum) for c in source_nb.source_cells}
            points = {c.name: float(c.max_score) for c in source_nb.grade_cells}
            solutions = {c.name for c in source_nb.solution_cells}
            tasks = {c.name for c in source_nb.task_cells}
        seen = set()
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if not isinstance(meta, dict):
                continue
            gid = meta.get("grade_id")
            if gid not in source or gid in seen:
                if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell) or gid:
                    record_incident("metadata", resources,
                                    f"cell with unknown or duplicate grade_id {gid!r} "
                                    "lost its nbgrader metadata")
                del cell.metadata["nbgrader"]
                continue
            seen.add(gid)
            cell_type, locked, checksum = source[gid]
            want = {"grade": gid in points, "solution": gid in solutions,
                    "task": gid in tasks, "locked": bool(locked), "grade_id": gid}
            if gid in points:
                want["points"] = points[gid]
            changed = [k for k, v in want.items() if meta.get(k) != v]
            if not (gid in points) and "points" in meta:
                changed.append("points")
                del meta["points"]
            if changed:
                record_incident("metadata", resources,
                                f"cell {gid}: nbgrader metadata edited ({', '.join(sorted(changed))}); restored")
            meta.update(want)
            meta["checksum"] = checksum
            meta.setdefault("schema_version", 3)
            if gid in points or locked:
                cell.metadata["deletable"] = False
                cell.metadata["editable"] = bool(gid in solutions)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):  # pragma: no cover - unused
        return cell, resources


# ---------------------------------------------------------------------------
# the kernel
# ---------------------------------------------------------------------------
class SandboxedKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` that starts kernels behind :mod:`autograder.isolation`:
    as the unprivileged grading user (when the grader is root), in their own PID and
    mount namespaces, in a private work directory, under resource limits, with
    ``python -S -s -P`` (no ``site``/``.pth``/``sitecustomize``, no user site, no
    working directory on ``sys.path``)."""

    memory_limit_bytes = Integer(
        2 * 2**30, help="Address-space limit of a grading kernel (RLIMIT_AS), bytes; 0: none."
    ).tag(config=True)
    cpu_limit_s = Integer(
        600, help="CPU-time limit of a grading kernel (RLIMIT_CPU), seconds; 0: none."
    ).tag(config=True)
    file_limit_bytes = Integer(
        256 * 2**20, help="Largest file a grading kernel may write (RLIMIT_FSIZE), bytes."
    ).tag(config=True)
    guard_module = Unicode(
        "autograder.kernel_guard",
        help="Imported at kernel start-up, before student code (IPython kernels only)."
    ).tag(config=True)
    #: Paths hidden from the kernel (set by :class:`GuardedExecute`).
    hide_paths: list = []

    async def _async_pre_start_kernel(self, **kw):
        iso = isolation()
        workdir = kw.get("cwd")
        if not workdir:
            workdir = iso.workdir()
            self._own_workdir = workdir
        self._sandbox_home = workdir
        self.connection_file = os.path.join(workdir, "kernel-connection.json")
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        iso.give(self.connection_file)
        cmd = list(cmd)
        is_ipykernel = any("ipykernel" in part for part in cmd)
        if is_ipykernel and self.guard_module:
            cmd.append(f"--IPKernelApp.exec_lines=import {self.guard_module}")
        if cmd[1:3] == ["-m", "ipykernel_launcher"]:
            cmd[1:1] = ["-S", "-s", "-P"]
        env = dict(kw.get("env") or os.environ)
        env.update(kernel_env(workdir))
        env.pop(INCIDENT_LOG_ENV, None)
        kw["env"] = env
        cmd = iso.command(cmd, workdir, env, hide=self.hide_paths,
                          memory_bytes=self.memory_limit_bytes, cpu_s=self.cpu_limit_s,
                          file_bytes=self.file_limit_bytes)
        return cmd, kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        own = getattr(self, "_own_workdir", None)
        if own:
            isolation().sweep()
            shutil.rmtree(own, ignore_errors=True)
            self._own_workdir = None


def python_path() -> list:
    """``sys.path`` for student processes started with ``-S``: the repository
    (course_lib) first, then the grader's own standard library and site-packages."""
    paths = [_REPO]
    for p in sys.path:
        if p and os.path.isabs(p) and os.path.isdir(p) and p not in paths:
            paths.append(p)
    return paths


def kernel_env(workdir: str) -> dict:
    """The environment of a student process: nothing of the grader's but PATH and locale."""
    env = {k: v for k, v in os.environ.items()
           if k in ("PATH", "LANG", "LC_ALL", "TZ", "JPY_PARENT_PID") or k.startswith("INTERCONNECT_LAB")}
    env.update(HOME=workdir, IPYTHONDIR=os.path.join(workdir, ".ipython"),
               MPLCONFIGDIR=os.path.join(workdir, ".mpl"),
               JUPYTER_CONFIG_DIR=os.path.join(workdir, ".jupyter"),
               JUPYTER_RUNTIME_DIR=workdir, JUPYTER_DATA_DIR=os.path.join(workdir, ".jupyter-data"),
               TMPDIR=workdir, PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(python_path()), MPLBACKEND="Agg",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


# ---------------------------------------------------------------------------
# integrity of what the kernel can reach
# ---------------------------------------------------------------------------
def _walk(root):
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".ipynb_checkpoints")]
        for name in filenames:
            yield os.path.join(dirpath, name)


def _fingerprint(roots) -> dict:
    prints = {}
    for root in roots:
        if not os.path.exists(root):
            prints[root] = None
            continue
        for path in _walk(root):
            try:
                with open(path, "rb") as fh:
                    prints[path] = hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
            except OSError:
                prints[path] = "unreadable"
    return prints


def _backup(roots) -> dict:
    saved = {}
    for root in roots:
        if os.path.exists(root):
            for path in _walk(root):
                with open(path, "rb") as fh:
                    saved[path] = fh.read()
    return saved


def _startup_files(before=None):
    """Python start-up files (``sitecustomize``/``usercustomize``, ``*.pth``) in the
    directories on the grader's ``sys.path``; with ``before``, remove and return the
    ones that are new or changed since."""
    found = {}
    for d in set(python_path()):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name in ("sitecustomize.py", "usercustomize.py", "sitecustomize",
                        "usercustomize") or name.endswith(".pth"):
                path = os.path.join(d, name)
                try:
                    st = os.lstat(path)
                    found[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
                except OSError:
                    continue
    if before is None:
        return found
    new = sorted(p for p in found if before.get(p) != found[p])
    for path in new:
        try:
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
        except OSError:
            pass
    return new


def _killpg(proc) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except Exception:
        pass


def cap_outputs(cell, limit: int) -> None:
    """Cut a cell's outputs to ``limit`` bytes each (text) or drop them (images), with a note."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            if isinstance(text, list):
                text = "".join(text)
            if len(text) > limit:
                out["text"] = (text[:limit] + f"\n[... output cut by the grader: {len(text):,} "
                               f"characters, the first {limit:,} kept]\n")
        elif out.get("output_type") in ("display_data", "execute_result"):
            data = out.get("data", {})
            for mime in list(data):
                value = data[mime]
                size = len(value) if isinstance(value, str) else len(json.dumps(value))
                if size > limit:
                    del data[mime]
                    data["text/plain"] = (f"[{mime} output of {size:,} bytes removed by the "
                                          f"grader: larger than {limit:,} bytes]")
        elif out.get("output_type") == "error":
            tb = out.get("traceback", [])
            if sum(len(t) for t in tb) > limit:
                out["traceback"] = [t[:limit // 4] for t in tb[-4:]]
            out["evalue"] = str(out.get("evalue", ""))[:limit]


# ---------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------
class GuardedExecute(Execute):
    """nbgrader's ``Execute`` that survives hostile notebooks (see module docstring)."""

    notebook_timeout = Integer(
        300, help="Wall-clock budget for one notebook, seconds; cells after it are not run."
    ).tag(config=True)
    probe_timeout = Float(
        5.0, help="After a cell times out: seconds the kernel gets to answer a no-op "
                  "before it is killed as unresponsive."
    ).tag(config=True)
    protected_paths = List(
        Unicode(), help="Files/trees the kernel must not change; restored (and the "
                        "notebook zeroed) if it does.  Relative paths are under the course root."
    ).tag(config=True)
    watched_paths = List(
        Unicode(), help="Trees too large to back up (other students' folders): a change is "
                        "reported as an incident, and the notebook zeroed."
    ).tag(config=True)

    max_output_bytes = Integer(
        1_000_000, help="Largest output a cell may keep (text or image), bytes; "
                        "longer ones are cut with a note."
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    # -- helpers -----------------------------------------------------------
    def _abs(self, path):
        root = getattr(getattr(self, "coursedir", None), "root", None) or os.getcwd()
        return path if os.path.isabs(path) else os.path.join(root, path)

    def _silent(self, code: str, timeout_s: float):
        """Run ``code`` silently in the kernel; return the reply status or None."""
        from jupyter_core.utils import run_sync

        async def go():
            msg_id = self.kc.execute(code, silent=True, store_history=False,
                                     allow_stdin=False)
            deadline = time.monotonic() + timeout_s
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    msg = await self.kc.shell_channel.get_msg(timeout=left)
                except Exception:
                    if not await self.kc.is_alive():
                        return "dead"
                    return None
                if msg["parent_header"].get("msg_id") == msg_id:
                    return msg["content"]["status"]

        return run_sync(go)()

    def _kill_kernel(self):
        from jupyter_core.utils import run_sync
        try:
            run_sync(self.km.shutdown_kernel)(now=True)
        except Exception as exc:  # already gone
            self.log.debug("kill after hang: %s", exc)

    def _fail(self, cell, ename, evalue):
        if cell.cell_type == "code":
            cell.outputs.append(_error_output(ename, evalue))

    def _hide_paths(self):
        root = getattr(getattr(self, "coursedir", None), "root", None) or os.getcwd()
        return [root, os.path.join(_REPO, "solutions"), os.path.join(_REPO, ".git")]

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.hide_paths = self._hide_paths()
        return km

    # -- the notebook -------------------------------------------------------
    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None
        self._deadline = time.monotonic() + self.notebook_timeout
        self._resources = resources
        self._pending = []
        iso = isolation()
        protected = [self._abs(p) for p in self.protected_paths]
        watched = [self._abs(p) for p in self.watched_paths]
        own = os.path.abspath(resources.get("metadata", {}).get("path") or os.getcwd())
        # the kernel runs in a fresh private folder, never in the course directory
        self._workdir = iso.workdir()
        resources.setdefault("metadata", {})
        resources["metadata"] = dict(resources["metadata"], path=self._workdir)
        before = _fingerprint(protected + watched)
        saved = _backup(protected)
        starts = _startup_files()
        # In its own PID namespace the test runner is invisible to the kernel, so it can
        # start now and import NumPy and course_lib while the notebook runs.
        self._runner = self._start_runner() if iso.namespaces else None
        try:
            nb, resources = super().preprocess(nb, resources, km)
            self._kill_kernel()
            # what outlived the kernel dies now, before the tests run (with namespaces the
            # kernel's death killed it already, and the early test runner is the user's too)
            n = iso.sweep() if self._runner is None else 0
            t0 = time.monotonic()
            self._run_hidden(nb, resources)
            self.log.debug("hidden tests took %.2f s", time.monotonic() - t0)
            n += iso.sweep()
            if n:
                record_incident("escaped", resources, f"{n} process(es) of the grading user were "
                                "still running after the notebook; killed")
        finally:
            resources["metadata"]["path"] = own
            self._kill_kernel()
            if self._runner is not None and self._runner.poll() is None:
                _killpg(self._runner)
            iso.sweep()
            shutil.rmtree(self._workdir, ignore_errors=True)
            new_starts = _startup_files(starts)
            after = _fingerprint(protected + watched)
            changed = sorted(p for p in set(before) | set(after)
                             if before.get(p) != after.get(p)
                             and not os.path.abspath(p).startswith(own + os.sep))
            if new_starts:
                record_incident("tamper", resources,
                                "the submission left Python start-up files on the interpreter's "
                                "path; removed, notebook scored 0", files=new_starts[:20])
            if changed:
                self._restore(saved, protected)
                record_incident("tamper", resources,
                                "the submission changed files outside its folder; "
                                "restored what was backed up, notebook scored 0",
                                files=changed[:20])
            if changed or new_starts:
                for cell in nb.cells:
                    if utils.is_grade(cell):
                        self._fail(cell, "IntegrityError",
                                   "the submission modified protected course files: "
                                   "scored 0 pending review by the instructor")
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cap_outputs(cell, self.max_output_bytes)
        return nb, resources

    @staticmethod
    def _restore(saved, protected):
        for root in protected:
            for path in list(_walk(root)) if os.path.exists(root) else []:
                if path not in saved:
                    try:
                        os.remove(path)
                    except OSError:
                        pass
        for path, data in saved.items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)

    def _run_hidden(self, nb, resources):
        """Run the test cells whose snapshot was taken, in a fresh interpreter."""
        if not self._pending:
            return
        pending = {index: snap for index, snap in self._pending}
        tests, defs, imps, preload = [], [], [], set()
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if utils.is_grade(cell):
                if index in pending:
                    tests.append({"grade_id": cell.metadata.nbgrader.get("grade_id"),
                                  "index": index, "source": cell.source,
                                  "snapshot": pending[index], "definitions": list(defs),
                                  "imports": "\n".join(imps)})
                continue
            defs.append(hidden.definitions(cell.source))
            if utils.is_locked(cell):  # the instructor's cell (source from the gradebook)
                code = hidden.imports(cell.source)
                imps.append(code)
                for line in code.splitlines():
                    words = line.split()
                    if words[:1] == ["import"]:
                        preload.update(w.strip(",") for w in words[1:] if w not in ("as",))
                    elif words[:1] == ["from"] and len(words) >= 4:
                        preload.add(words[1])
                        preload.update(f"{words[1]}.{w.strip(',')}" for w in words[3:] if w != "as")
        token = hashlib.blake2b(os.urandom(32), digest_size=16).hexdigest()
        job = {"token": token, "sys_path": python_path(), "timeout_s": int(self.timeout or 30),
               "preload": sorted(preload), "tests": tests}
        limit = len(tests) * (int(self.timeout or 30) + 2) + 30
        proc = self._runner if self._runner is not None and self._runner.poll() is None \
            else self._start_runner()
        self._runner = None
        try:
            out, _ = proc.communicate(json.dumps(job).encode(), timeout=limit)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            _killpg(proc)
            out, _ = proc.communicate()
        results = hidden.parse_results(out[:50 * 2**20].decode("utf-8", "replace"), token)
        for test in tests:
            cell = nb.cells[test["index"]]
            row = results.get(test["grade_id"])
            cell.outputs = []
            if row is None:
                self._fail(cell, "TestRunnerError", "the hidden tests did not report a result "
                           "(the test process crashed or ran out of time)")
                record_incident("test-runner", resources, f"no result for {test['grade_id']}")
                continue
            if row.get("stdout"):
                cell.outputs.append(NotebookNode(output_type="stream", name="stdout",
                                                 text=str(row["stdout"])))
            err = row.get("error")
            if err:
                cell.outputs.append(_error_output(str(err.get("ename")), str(err.get("evalue"))))
            if row.get("tamper"):
                record_incident("spoof", resources, f"{test['grade_id']}: the student's code "
                                "changed the test environment while the test ran: "
                                + "; ".join(map(str, row["tamper"][:3])))

    def _start_runner(self):
        """Start the test runner (:mod:`autograder.hidden`) behind the boundary; it
        reads its job from stdin."""
        env = kernel_env(self._workdir)
        env["AG_SYS_PATH"] = json.dumps(python_path())
        cmd = isolation().command([sys.executable, "-I", "-S", hidden.__file__], self._workdir,
                                  env, hide=self._hide_paths(),
                                  memory_bytes=self.kernel_memory_bytes(), cpu_s=600,
                                  file_bytes=256 * 2**20)
        err = open(os.environ["AG_DEBUG_STDERR"], "ab") if os.environ.get("AG_DEBUG_STDERR") \
            else subprocess.DEVNULL
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, start_new_session=True)

    def kernel_memory_bytes(self):
        from traitlets.config import Config
        cfg = self.config if isinstance(self.config, Config) else Config()
        return int(cfg.get("SandboxedKernelManager", {}).get("memory_limit_bytes", 2 * 2**30))

    def preprocess_cell(self, cell, resources, index):
        t0 = time.monotonic()
        try:
            return self._preprocess_cell(cell, resources, index)
        finally:
            self.log.debug("cell %s took %.2f s", index, time.monotonic() - t0)

    def _preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        graded = utils.is_grade(cell)
        if self._stopped is None and time.monotonic() > self._deadline:
            self._stopped = (f"notebook time budget of {self.notebook_timeout} s used up")
            record_incident("budget", resources, self._stopped)
        if self._stopped:
            cell.outputs = []
            self._fail(cell, "NotExecuted", f"not run: {self._stopped}")
            return cell, resources
        if graded:
            # the test itself runs later, in a fresh interpreter (autograder.hidden);
            # here only the data the student's cells computed so far is saved
            cell.outputs = []
            snap = os.path.join(self._workdir, f"snapshot-{index}.pkl")
            status = self._silent(hidden.SNAPSHOT_CODE.format(path=snap, max_bytes=hidden.MAX_VALUE_BYTES), self.probe_timeout + 10)
            if status in (None, "dead"):
                self._stop_kernel(cell, resources, "kernel did not answer before a test cell"
                                  if status is None else "kernel died")
                return cell, resources
            self._pending.append((index, snap))
            return cell, resources
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stopped = "the kernel died (os._exit, a signal, or out of memory)"
            record_incident("dead-kernel", resources, self._stopped, cell_index=index)
            self._fail(cell, "DeadKernelError", self._stopped)
            return cell, resources
        except CellTimeoutError as exc:
            self._fail(cell, "CellTimeoutError", str(exc).splitlines()[0])
        if any(o.get("output_type") == "error" and o.get("ename") == "CellTimeoutError"
               for o in cell.outputs):
            record_incident("timeout", resources,
                            f"cell {index} ran past {self.timeout} s and was interrupted",
                            cell_index=index)
            status = self._silent("pass", self.probe_timeout)
            if status != "ok":
                self._stop_kernel(cell, resources,
                                  "the kernel ignored the interrupt after a time-out")
        cap_outputs(cell, self.max_output_bytes)
        return cell, resources

    def _stop_kernel(self, cell, resources, why):
        self._stopped = why
        record_incident("unresponsive", resources, why + "; kernel killed")
        self._fail(cell, "UnresponsiveKernel", why + "; kernel killed")
        self._kill_kernel()

    def on_cell_executed(self, **kwargs):
        # nbgrader's check: an error reply without an error output (e.g. showtraceback
        # patched away) still counts as an error.
        super().on_cell_executed(**kwargs)


# ---------------------------------------------------------------------------
# feedback
# ---------------------------------------------------------------------------
class HideHiddenTests(NbGraderPreprocessor):
    """Feedback shows the student's own cells and each test's result, not the
    source of the hidden tests (kept for the next cohort)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and utils.is_grade(cell) and "BEGIN HIDDEN TESTS" in cell.source:
            lines, out, hiding = cell.source.splitlines(), [], False
            for line in lines:
                if line.strip().startswith("### BEGIN HIDDEN TESTS"):
                    hiding = True
                    out.append("# (hidden tests: not shown; their result is below)")
                elif line.strip().startswith("### END HIDDEN TESTS"):
                    hiding = False
                elif not hiding:
                    out.append(line)
            cell.source = "\n".join(out)
        return cell, resources
