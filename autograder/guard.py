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
  killed; a whole-notebook time budget; before each test cell it calls
  :func:`autograder.kernel_guard.restore` in the kernel (undoing
  monkey-patched builtins, helpers and IPython hooks); around each notebook
  it fingerprints the gradebook, the source and release trees, the other
  submissions and the course code, restores what the kernel changed and
  zeroes the notebook.  Every event goes to a JSON-lines incident log that
  ``python -m autograder autograde`` turns into the "needs a human" list.
* :class:`SandboxedKernelManager`: starts each kernel through
  :mod:`autograder.sandbox` (memory, CPU-time and file-size limits), with a
  private, throw-away ``HOME``/``IPYTHONDIR`` so nothing a student writes
  there (start-up files, ``.pth`` in a user site) reaches the next kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Float, Integer, List, Unicode

from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

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
    """An ``AsyncKernelManager`` that starts kernels under resource limits."""

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

    async def _async_pre_start_kernel(self, **kw):
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        is_ipykernel = any("ipykernel" in part for part in cmd)
        if is_ipykernel and self.guard_module:
            cmd = list(cmd) + [f"--IPKernelApp.exec_lines=import {self.guard_module}"]
        cmd = [sys.executable, "-m", "autograder.sandbox",
               f"--memory-bytes={self.memory_limit_bytes}",
               f"--cpu-s={self.cpu_limit_s}",
               f"--file-bytes={self.file_limit_bytes}", "--", *cmd]
        home = tempfile.mkdtemp(prefix="ag-kernel-home-")
        self._sandbox_home = home
        env = dict(kw.get("env") or os.environ)
        env.update(HOME=home, IPYTHONDIR=os.path.join(home, ".ipython"),
                   MPLCONFIGDIR=os.path.join(home, ".mpl"),
                   JUPYTER_CONFIG_DIR=os.path.join(home, ".jupyter"),
                   PYTHONNOUSERSITE="1", MPLBACKEND="Agg",
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env.pop(INCIDENT_LOG_ENV, None)
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if _REPO not in paths:
            env["PYTHONPATH"] = os.pathsep.join([_REPO, *paths])
        kw["env"] = env
        return cmd, kw

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        home = getattr(self, "_sandbox_home", None)
        if home:
            shutil.rmtree(home, ignore_errors=True)
            self._sandbox_home = None


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
    restore_before_tests = Bool(
        True, help="Call autograder.kernel_guard.restore() before each test cell."
    ).tag(config=True)
    protected_paths = List(
        Unicode(), help="Files/trees the kernel must not change; restored (and the "
                        "notebook zeroed) if it does.  Relative paths are under the course root."
    ).tag(config=True)
    watched_paths = List(
        Unicode(), help="Trees too large to back up (other students' folders): a change is "
                        "reported as an incident, and the notebook zeroed."
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

    # -- the notebook -------------------------------------------------------
    def preprocess(self, nb, resources=None, km=None):
        self._stopped = None
        self._deadline = time.monotonic() + self.notebook_timeout
        self._resources = resources
        protected = [self._abs(p) for p in self.protected_paths]
        watched = [self._abs(p) for p in self.watched_paths]
        own = os.path.abspath(resources.get("metadata", {}).get("path") or os.getcwd())
        before = _fingerprint(protected + watched)
        saved = _backup(protected)
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            home = getattr(getattr(self, "km", None), "_sandbox_home", None)
            if home:  # a killed kernel skips the manager's clean-up
                shutil.rmtree(home, ignore_errors=True)
            after = _fingerprint(protected + watched)
            changed = sorted(p for p in set(before) | set(after)
                             if before.get(p) != after.get(p)
                             and not os.path.abspath(p).startswith(own + os.sep))
            if changed:
                self._restore(saved, protected)
                record_incident("tamper", resources,
                                "the submission changed files outside its folder; "
                                "restored what was backed up, notebook scored 0",
                                files=changed[:20])
                for cell in nb.cells:
                    if utils.is_grade(cell):
                        self._fail(cell, "IntegrityError",
                                   "the submission modified protected course files: "
                                   "scored 0 pending review by the instructor")
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

    def preprocess_cell(self, cell, resources, index):
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
        if graded and self.restore_before_tests:
            status = self._silent("import sys as _s; _s.modules['autograder.kernel_guard'].restore(); del _s",
                                  self.probe_timeout)
            if status != "ok":
                if status in (None, "dead"):
                    self._stop_kernel(cell, resources, "kernel did not answer before a test cell"
                                      if status is None else "kernel died")
                    return cell, resources
                record_incident("spoof", resources,
                                f"could not restore the test environment before "
                                f"{cell.metadata.nbgrader.get('grade_id')}: kernel_guard tampered with")
                self._fail(cell, "IntegrityError",
                           "the test environment was tampered with; test not trusted")
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
