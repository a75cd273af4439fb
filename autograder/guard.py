"""nbgrader preprocessors: trust the gradebook, run the notebook in the sandbox, judge outside.

Wired in by ``autograder/nbgrader_config.py``:

* :class:`RestoreCellMetadata` (sanitising, before nbgrader's
  ``OverwriteCells``): the gradebook, not the submission, says which cells
  are graded, how many points they carry and whether they are locked.
* :class:`SandboxedGrading` (replaces nbgrader's ``Execute``): sends the
  notebook -- with every test cell cut to its *visible* part -- into a fresh
  bubblewrap sandbox (:mod:`autograder.sandbox`), which runs every cell as a
  kernel would and returns the executed notebook.  The full test cells
  (visible and hidden, from the gradebook) go to the judge
  (:mod:`autograder.judge`), a process of its own that is not root, holds no
  secret and cannot write the course directory (:class:`~autograder.sandbox.JudgeBox`);
  it runs them on the student's values and on the results of the student's
  functions for the tests' inputs, which the sandbox computes on request (this
  process relays the questions and answers unread).  Only verdicts come back,
  as plain data; a failed test becomes an error output in its cell, so
  nbgrader's ``SaveAutoGrades`` scores each part as usual.
* :class:`HideHiddenTests` (feedback): the hidden tests' source is not shown.

Incidents (time-outs, dead kernels, a sandbox that would not start) go to a
JSON-lines log that ``python -m autograder autograde`` turns into the
"needs a human" list.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import time

from nbformat.notebooknode import NotebookNode
from traitlets import Integer

from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from . import judge
from .sandbox import JudgeBox, Sandbox, SandboxError

__all__ = ["RestoreCellMetadata", "SandboxedGrading", "HideHiddenTests", "INCIDENT_LOG_ENV",
           "record_incident", "cap_outputs", "visible_part", "clean_outputs"]

#: Environment variable naming the JSON-lines file incidents are appended to.
INCIDENT_LOG_ENV = "INTERCONNECT_INCIDENT_LOG"


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


#: The text of each kind of event a sandbox may report (it reports only the kind and a cell).
_EVENT_TEXT = {
    "timeout": "cell {cell} ran past {timeout} s and was interrupted",
    "unresponsive": "cell {cell}: the kernel ignored the interrupt after a time-out; the cells "
                    "before it were run again in a fresh kernel",
    "dead-kernel": "cell {cell}: the kernel died (os._exit, a signal, or out of memory); the cells "
                   "before it were run again in a fresh kernel",
    "budget": "the notebook's time budget of {budget} s ran out at cell {cell}; later cells were "
              "not run",
}


def _one_line(text: str, limit: int = 300) -> str:
    """Text for a log line or a table cell: printable, one line, at most ``limit`` characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return " ".join(text.split())[:limit]


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


def visible_part(source: str) -> str:
    """A test cell without its ``### BEGIN/END HIDDEN TESTS`` block: what students see.

    >>> visible_part("assert f(1) == 1\\n### BEGIN HIDDEN TESTS\\nassert f(2) == 4\\n### END HIDDEN TESTS")
    'assert f(1) == 1'
    """
    out, hiding = [], False
    for line in source.splitlines():
        if line.strip().startswith("### BEGIN HIDDEN TESTS"):
            hiding = True
        elif line.strip().startswith("### END HIDDEN TESTS"):
            hiding = False
        elif not hiding:
            out.append(line)
    return "\n".join(out).rstrip()


_OUTPUT_KEYS = {"stream": ("name", "text"), "display_data": ("data", "metadata"),
                "execute_result": ("data", "metadata", "execution_count"),
                "error": ("ename", "evalue", "traceback")}


def clean_outputs(outputs) -> list:
    """The outputs a sandbox sent back, as valid nbformat outputs only (untrusted input:
    anything else is dropped)."""
    clean = []
    if not isinstance(outputs, list):
        return clean
    for out in outputs[:500]:
        if not isinstance(out, dict) or out.get("output_type") not in _OUTPUT_KEYS:
            continue
        kind = out["output_type"]
        node = NotebookNode(output_type=kind)
        for key in _OUTPUT_KEYS[kind]:
            if key in out:
                node[key] = out[key]
        try:
            if kind == "stream":
                node["name"] = "stderr" if node.get("name") == "stderr" else "stdout"
                text = node.get("text", "")
                node["text"] = "".join(map(str, text)) if isinstance(text, list) else str(text)
            elif kind == "error":
                node["ename"] = str(node.get("ename", ""))[:200]
                node["evalue"] = str(node.get("evalue", ""))
                node["traceback"] = [str(t) for t in node.get("traceback", [])][:200]
            else:
                data = node.get("data", {})
                node["data"] = NotebookNode({str(k): v for k, v in data.items()
                                             if isinstance(v, (str, list, dict))}) \
                    if isinstance(data, dict) else NotebookNode()
                node["metadata"] = NotebookNode() if not isinstance(node.get("metadata"), dict) \
                    else NotebookNode(node["metadata"])
                if kind == "execute_result":
                    ec = node.get("execution_count")
                    node["execution_count"] = ec if isinstance(ec, int) else None
        except Exception:  # noqa: BLE001 - a malformed output is dropped
            continue
        clean.append(node)
    return clean


class SandboxedGrading(NbGraderPreprocessor):
    """Run the student's notebook in a sandbox; judge the test cells in this process."""

    timeout = Integer(30, help="Seconds per cell in the sandbox (also per function call "
                               "the tests make).").tag(config=True)
    notebook_timeout = Integer(300, help="Wall-clock budget of one notebook, seconds; cells after "
                                         "it are not run.").tag(config=True)
    memory_limit_bytes = Integer(2 * 2**30, help="Address-space limit of every process in the "
                                                 "sandbox (RLIMIT_AS), bytes.").tag(config=True)
    cpu_limit_s = Integer(600, help="CPU-time limit per sandbox process, seconds.").tag(config=True)
    file_limit_bytes = Integer(256 * 2**20, help="Largest file the sandbox may write, bytes."
                               ).tag(config=True)
    max_output_bytes = Integer(1_000_000, help="Largest output a cell may keep (text or image), "
                                               "bytes; longer ones are cut with a note.").tag(config=True)
    max_value_bytes = Integer(64 * 2**20, help="Largest answer (data-only JSON) the tests may "
                                               "read from the sandbox, bytes.").tag(config=True)
    judge_memory_bytes = Integer(2 * 2**30, help="Address-space limit of the judge's process "
                                                 "(RLIMIT_AS), bytes.").tag(config=True)
    judge_cpu_s = Integer(300, help="CPU-time limit of the judge's process, seconds.").tag(config=True)

    #: Seconds a notebook may hold the batch beyond its budget: starting the sandbox and
    #: its kernel, the answers' floor (``sandbox_driver.ANSWER_FLOOR_S``), closing.
    MARGIN_S = 20

    def preprocess(self, nb, resources):
        t0 = time.monotonic()
        use0 = resource.getrusage(resource.RUSAGE_SELF)
        judged_s, cost = 0.0, {}
        deadline = t0 + self.notebook_timeout + self.MARGIN_S
        inside = copy.deepcopy(nb)
        tests, setup = {}, []
        for cell in inside.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            cell.execution_count = None
            if utils.is_grade(cell):
                cell.source = visible_part(cell.source)
            elif utils.is_locked(cell):
                setup.append(judge.instructor_imports(cell.source))
        for cell in nb.cells:
            if cell.cell_type == "code" and utils.is_grade(cell):
                tests[cell.metadata.nbgrader["grade_id"]] = cell.source
        results = {}
        try:
            with JudgeBox(memory_bytes=self.judge_memory_bytes, cpu_s=self.judge_cpu_s) as referee, \
                    Sandbox(memory_bytes=self.memory_limit_bytes, cpu_s=self.cpu_limit_s,
                            file_bytes=self.file_limit_bytes) as box:
                # the judge imports the instructor's modules while the notebook runs
                referee.start(tests, "\n".join(setup), self.max_value_bytes)
                reply = box.execute(inside, self.timeout, self.notebook_timeout,
                                    self.max_value_bytes, self.max_output_bytes,
                                    wait_s=deadline - time.monotonic())
                t_exec = time.monotonic()
                self._take_outputs(nb, reply.get("executed", {}))
                self._events(reply.get("events"), resources)
                over = []

                def relay(op, items):
                    left = deadline - time.monotonic()
                    if left <= 2:
                        over.append(op)
                        return {"answer": None}
                    got = box.ask(op, items, self.timeout, limit_s=left - 2)
                    if got.pop("budget", False):
                        over.append(op)
                    return got

                verdicts, problems = referee.run(relay, deadline)
                judged_s, cost = time.monotonic() - t_exec, referee.cost
                if over:
                    record_incident("budget", resources, f"the notebook's time budget of "
                                    f"{self.notebook_timeout} s ran out while the tests called its "
                                    "functions; the calls after it were not made")
                for p in problems[:1]:
                    record_incident("sandbox", resources, f"the sandbox sent {_one_line(p)}; "
                                    "every test that needed it fails")
                results = {gid: judge.TestResult(*v) for gid, v in verdicts.items() if gid in tests}
                results.update({gid: judge.TestResult(False, "GradingError", "the judge gave no "
                                                      "verdict") for gid in tests if gid not in results})
        except SandboxError as exc:
            record_incident("sandbox", resources, f"the sandbox failed: {_one_line(str(exc))}")
            results = {gid: judge.TestResult(False, "SandboxError", f"not graded: {_one_line(str(exc))}")
                       for gid in tests}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if utils.is_grade(cell):
                res = results.get(cell.metadata.nbgrader["grade_id"])
                cell.outputs = []
                if res is not None and res.stdout:
                    cell.outputs.append(NotebookNode(output_type="stream", name="stdout",
                                                     text=res.stdout))
                if res is None or not res.passed:
                    ename = res.ename if res is not None else "NotGraded"
                    evalue = res.evalue if res is not None else "no result"
                    cell.outputs.append(_error_output(ename, evalue))
            cap_outputs(cell, self.max_output_bytes)
        use = resource.getrusage(resource.RUSAGE_SELF)
        self.log.info("graded %s in %.2f s (tests and answers %.2f s); grader CPU %.2f s, grader "
                      "peak memory %.0f MiB; judge CPU %.2f s, judge peak memory %.0f MiB",
                      resources.get("nbgrader", {}).get("student"), time.monotonic() - t0, judged_s,
                      use.ru_utime + use.ru_stime - use0.ru_utime - use0.ru_stime,
                      use.ru_maxrss / 1024, cost.get("cpu_s", -1), cost.get("peak_mib", -1))
        return nb, resources

    def _events(self, events, resources):
        """The sandbox's events as incidents: only a known kind and a cell index are taken
        from it; the text is the grader's own."""
        seen = set()
        for ev in (events if isinstance(events, list) else [])[:20]:
            if not isinstance(ev, dict):
                continue
            kind, index = ev.get("kind"), ev.get("cell")
            if kind not in _EVENT_TEXT or not isinstance(index, int) or isinstance(index, bool) \
                    or not 0 <= index < 100_000 or (kind, index) in seen:
                continue
            seen.add((kind, index))
            record_incident(kind, resources, _EVENT_TEXT[kind].format(
                cell=index, timeout=self.timeout, budget=self.notebook_timeout), cell_index=index)

    @staticmethod
    def _take_outputs(nb, executed):
        cells = executed.get("cells") if isinstance(executed, dict) else None
        if not isinstance(cells, list) or len(cells) != len(nb.cells):
            return
        for cell, done in zip(nb.cells, cells):
            if cell.cell_type != "code" or utils.is_grade(cell) or not isinstance(done, dict):
                continue
            cell.outputs = clean_outputs(done.get("outputs"))
            ec = done.get("execution_count")
            cell.execution_count = ec if isinstance(ec, int) else None

    def preprocess_cell(self, cell, resources, index):  # pragma: no cover - unused
        return cell, resources


# ---------------------------------------------------------------------------
# feedback
# ---------------------------------------------------------------------------
class HideHiddenTests(NbGraderPreprocessor):
    """Feedback shows the student's own cells and each test's result, not the
    source of the hidden tests (kept for the next cohort)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and utils.is_grade(cell) and "BEGIN HIDDEN TESTS" in cell.source:
            cell.source = visible_part(cell.source) + "\n# (hidden tests: not shown; their result is below)"
        return cell, resources
