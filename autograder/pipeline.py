"""The instructor's pipeline: release, collect, autograde, feedback, export.

Each step runs nbgrader as a subprocess (``python -m nbgrader ...``) in the
course directory, with the venv's ``bin`` first on ``PATH`` (nbgrader calls
``alembic`` by name) and the repository on ``PYTHONPATH`` (the course
library and :mod:`autograder.guard`).  Results are read back from the
gradebook and the incident log, never from nbgrader's exit status alone:
``nbgrader validate`` exits 0 on failure and ``nbgrader autograde`` exits 1
for a whole batch when one notebook fails.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
import zipfile
from dataclasses import dataclass, field

import nbformat

from . import COURSE_ID, REPO_ROOT, assignments_in
from .lms import IGNORED, Entry, StudentIds, parse_entry, valid_student_id

__all__ = ["Course", "GradeRow", "normalise_notebook", "scan_notebook", "SUSPICIOUS",
           "parse_entry", "valid_student_id", "LATEST_RULE"]

#: Which of several attempts by one student counts.
LATEST_RULE = ("latest attempt wins: the submission time the LMS wrote into the name (Blackboard, "
               "Brightspace), else the file time in the zip; on equal times the higher copy number "
               "('name (2).ipynb' beats 'name (1).ipynb' beats 'name.ipynb'); two files that "
               "still tie are both 'manual'. A later collect keeps earlier 'manual' and 'rejected' "
               "lines of students it does not bring again")
#: Largest notebook accepted from a zip.
MAX_SUBMISSION_BYTES = 20 * 2**20


def _count(rows):
    out = {}
    for r in rows:
        out[r.get("status", "?")] = out.get(r.get("status", "?"), 0) + 1
    return out

CONFIG_STUB = """\
# Written by `python -m autograder`; edit autograder/nbgrader_config.py instead.
import os
os.environ.setdefault("INTERCONNECT_COURSE_DIR", os.path.dirname(os.path.abspath(__file__)))
_p = {config!r}
exec(compile(open(_p).read(), _p, "exec"), {{"get_config": get_config, "__file__": _p}})
"""

#: Patterns in a student's own cells that deserve a human look.  A match is
#: reported, never penalised by itself: the grade comes from the tests.
SUSPICIOUS = {
    "patches builtins": r"\b__builtins__\b|\bimport\s+builtins\b|\bbuiltins\.",
    "touches IPython internals": r"get_ipython\s*\(|ast_transformers|set_custom_exc|"
                                 r"showtraceback|input_transformers|kernel_guard",
    "exits or kills the kernel": r"os\._exit|os\.kill|\bsignal\.|sys\.exit|os\.abort",
    "patches modules": r"sys\.modules|setattr\s*\(\s*(?:cl|course_lib|np|numpy|math)\b|"
                       r"^\s*(?:cl|course_lib|np|numpy|math)\.\w+\s*=(?!=)",
    "reaches course files": r"gradebook|nbgrader|\bsolutions\b|\bautograded\b|\bsubmitted\b|"
                            r"\.\./|\bos\.walk\b|\bglob\b|\bos\.listdir\b",
    "defines comparison or conversion methods": r"def\s+__(?:eq|ne|lt|le|gt|ge|bool|float|"
                                                r"int|abs|sub|rsub|truediv|round|index)__\s*\(",
    "installs a trace hook or swaps code": r"\bsettrace\b|\bsetprofile\b|__code__",
    "low-level escape": r"\bctypes\b|\bgc\.get_referr|\bsubprocess\b|os\.system|os\.fork|"
                        r"\bexec\s*\(|\beval\s*\(|__import__",
}


def scan_notebook(nb) -> list[str]:
    """Reasons a submitted notebook's *own* code deserves a human look."""
    flags = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("locked"):
            continue
        for reason, pattern in SUSPICIOUS.items():
            if re.search(pattern, cell.source, flags=re.MULTILINE) and reason not in flags:
                flags.append(reason)
    return flags


def normalise_notebook(nb) -> str:
    """The committed form of a released notebook: no outputs, no volatile metadata,
    stable key order, one trailing newline."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.metadata = nbformat.from_dict({k: v for k, v in nb.metadata.items()
                                      if k in ("kernelspec", "language_info")})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
    return nbformat.writes(nb, version=4) + "\n"


@dataclass
class GradeRow:
    """One student's result for one assignment."""

    student: str
    assignment: str
    score: float | None
    max_score: float
    incidents: list = field(default_factory=list)
    flags: list = field(default_factory=list)

    @property
    def needs_human(self) -> bool:
        return self.score is None or bool(self.incidents) or bool(self.flags)


class Course:
    """A course directory and the nbgrader steps run in it."""

    def __init__(self, course_dir: str | None = None, repo_root: str = REPO_ROOT,
                 cell_timeout_s: int | None = None, notebook_timeout_s: int | None = None,
                 kernel_memory_bytes: int | None = None, watch_repo: bool = True,
                 verbose: bool = True):
        self.repo = os.path.abspath(repo_root)
        self.dir = os.path.abspath(course_dir or os.path.join(os.getcwd(), "course"))
        self.knobs = {
            "INTERCONNECT_CELL_TIMEOUT_S": cell_timeout_s,
            "INTERCONNECT_NOTEBOOK_TIMEOUT_S": notebook_timeout_s,
            "INTERCONNECT_KERNEL_MEMORY_BYTES": kernel_memory_bytes,
            "INTERCONNECT_WATCH_REPO": None if watch_repo else 0,
        }
        self.verbose = verbose
        self.incident_log = os.path.join(self.dir, "logs", "incidents.jsonl")

    # -- plumbing --------------------------------------------------------------
    def say(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def env(self) -> dict:
        env = dict(os.environ)
        bindir = os.path.dirname(sys.executable)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([self.repo, *paths])
        env["INTERCONNECT_COURSE_DIR"] = self.dir
        env["INTERCONNECT_INCIDENT_LOG"] = self.incident_log
        env.setdefault("MPLBACKEND", "Agg")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the checkout
        for key, value in self.knobs.items():
            if value is not None:
                env[key] = str(value)
        return env

    def nbgrader(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        """Run ``python -m nbgrader ARGS`` in the course directory; keep its log."""
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=self.dir,
                              env=self.env(), capture_output=True, text=True)
        with open(os.path.join(self.dir, "logs", "nbgrader.log"), "a", encoding="utf-8") as fh:
            fh.write(f"$ nbgrader {' '.join(args)}  (exit {proc.returncode})\n")
            fh.write(proc.stdout + proc.stderr + "\n")
        if check and proc.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed (exit {proc.returncode}):\n"
                               + (proc.stdout + proc.stderr)[-3000:])
        return proc

    def init(self) -> None:
        """Create the course directory, its config stub and a fresh copy of solutions/.

        The course directory is private to the grader (mode 0700): the grading
        user cannot read the gradebook, the hidden tests or other submissions."""
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        os.chmod(self.dir, 0o700)
        config = os.path.join(self.repo, "autograder", "nbgrader_config.py")
        with open(os.path.join(self.dir, "nbgrader_config.py"), "w", encoding="utf-8") as fh:
            fh.write(CONFIG_STUB.format(config=config))
        src = os.path.join(self.repo, "solutions")
        dst = os.path.join(self.dir, "solutions")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))

    def assignments(self) -> list[str]:
        return assignments_in(os.path.join(self.repo, "solutions"))

    def notebooks(self, assignment: str) -> list[str]:
        return sorted(os.path.splitext(os.path.basename(p))[0] for p in
                      glob.glob(os.path.join(self.repo, "solutions", assignment, "*.ipynb")))

    # -- release -----------------------------------------------------------------
    def release(self, assignments=None, out_dir: str | None = None,
                check: bool = False) -> list[str]:
        """Generate the student version of each assignment.

        Writes normalised notebooks into ``out_dir`` (default: the repository's
        ``exercises/``).  With ``check=True`` nothing is written: the list of
        files that differ from the generated version is returned.
        """
        self.init()
        out_dir = out_dir or os.path.join(self.repo, "exercises")
        differ = []
        assignments = list(assignments or self.assignments())
        proc = subprocess.run([sys.executable, "-m", "autograder._batch", "generate", *assignments],
                              cwd=self.dir, env=self.env(), capture_output=True, text=True)
        with open(os.path.join(self.dir, "logs", "nbgrader.log"), "a", encoding="utf-8") as fh:
            fh.write(f"$ generate {' '.join(assignments)} (exit {proc.returncode})\n"
                     + proc.stdout + proc.stderr + "\n")
        if proc.returncode != 0:
            raise RuntimeError("generate_assignment failed:\n" + (proc.stdout + proc.stderr)[-3000:])
        for a in assignments:
            for path in sorted(glob.glob(os.path.join(self.dir, "exercises", a, "*.ipynb"))):
                text = normalise_notebook(nbformat.read(path, as_version=4))
                target = os.path.join(out_dir, a, os.path.basename(path))
                old = open(target, encoding="utf-8").read() if os.path.exists(target) else None
                if old != text:
                    differ.append(os.path.relpath(target, self.repo))
                    if not check:
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        with open(target, "w", encoding="utf-8") as fh:
                            fh.write(text)
            self.say(f"release  {a}: {len(self.notebooks(a))} notebook(s)")
        return differ

    # -- collect -------------------------------------------------------------------
    def collect_zip(self, assignment: str, zip_path: str) -> list[str]:
        """Collect an LMS download (Canvas, Moodle, Blackboard, Brightspace, a
        ``student/assignment/notebook`` tree or ``<student>_<notebook>.ipynb``;
        see :mod:`autograder.lms`).

        Never stops at a bad entry.  Every file in the zip gets a line in
        ``reports/<assignment>.json``: ``accepted`` (then ``graded`` or ``manual``
        after autograding), ``superseded``, ``manual`` or ``rejected``, with the
        reason.  The rule for several attempts: see :data:`LATEST_RULE`.
        """
        notebooks = self.notebooks(assignment)
        rows, best = [], {}
        try:
            archive = zipfile.ZipFile(zip_path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise ValueError(f"--zip {zip_path}: not a readable zip file ({exc})") from exc
        with archive:
            people = StudentIds(os.path.join(self.dir, "lms_ids.json"),
                                [parse_entry(i.filename, notebooks, assignment) for i in archive.infolist()])
            for order, info in enumerate(archive.infolist()):
                if info.is_dir() or IGNORED.search(info.filename.replace("\\", "/")):
                    continue
                row = {"file": info.filename}
                rows.append(row)
                parsed = parse_entry(info.filename, notebooks, assignment)
                if isinstance(parsed, str):
                    row.update(status="rejected", reason=parsed)
                    continue
                one_id_two_names = people.apply(parsed)   # a person is (LMS, id): see autograder.lms
                row.update(student=parsed.student, notebook=parsed.notebook, lms=parsed.lms)
                if parsed.name:
                    row["name"] = parsed.name
                if parsed.submission:
                    row["submission"] = parsed.submission
                if parsed.late:
                    row["late"] = True
                if one_id_two_names:
                    row.update(status="manual", reason=one_id_two_names)
                    continue
                if parsed.notebook is None:
                    row.update(status="manual", reason=f"{parsed.original!r} is not named like the "
                               f"assignment's notebook ({', '.join(n + '.ipynb' for n in notebooks)}): "
                               "a human decides whether it is the submission")
                    continue
                if info.file_size > MAX_SUBMISSION_BYTES:
                    row.update(status="rejected", reason=f"larger than {MAX_SUBMISSION_BYTES // 2**20} MB "
                               f"({info.file_size:,} bytes)")
                    continue
                try:
                    data = archive.read(info)
                except Exception as exc:  # bad CRC, truncated or encrypted entry: this file only
                    row.update(status="rejected", reason=f"damaged in the zip ({type(exc).__name__}: "
                               f"{str(exc)[:200]})")
                    continue
                try:
                    nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
                except Exception as exc:  # any way of not being a notebook
                    row.update(status="rejected", reason=f"not a readable notebook ({type(exc).__name__})")
                    continue
                when = parsed.when or info.date_time
                key = (tuple(when), parsed.copy)
                row.update(status="accepted", attempt=list(when) + [parsed.copy])
                best.setdefault((parsed.student, parsed.notebook), []).append((key, order, row, nb))
        chosen = {}
        for (student, nb_name), cands in best.items():
            cands.sort(key=lambda c: (c[0], c[1]))
            top = cands[-1]
            ties = [c for c in cands if c[0] == top[0]]
            if len(ties) > 1:
                for c in ties:
                    c[2].update(status="manual", reason="two files of this student with the same time "
                                "and copy number: " + ", ".join(t[2]["file"] for t in ties)
                                + "; a human decides which one counts")
                for c in cands:
                    if c not in ties:
                        c[2].update(status="superseded", reason="a later attempt (see the manual lines)")
                continue
            for c in cands[:-1]:
                c[2].update(status="superseded", reason=f"a later attempt: {top[2]['file']}")
            chosen[(student, nb_name)] = top
        release = self._release_ids(assignment)
        for (student, nb_name), (_, _, row, nb) in sorted(chosen.items()):
            ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
            if not ids & release.get(nb_name, set()):
                row.update(status="manual", reason="no nbgrader metadata (a code-only notebook, or "
                           "cells copied into a new file): the autograder cannot find the answer "
                           "cells; grade it by hand")
                continue
            folder = self._student_folder("submitted", student, assignment)
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            nbformat.write(nb, os.path.join(folder, f"{nb_name}.ipynb"))
            with open(os.path.join(folder, "timestamp.txt"), "w", encoding="utf-8") as fh:
                fh.write("%04d-%02d-%02d %02d:%02d:%02d UTC" % tuple(row["attempt"][:6]))
        # names shared by different ids are kept apart, and said so
        by_name = {}
        for r in rows:
            if r.get("name") and r.get("student"):
                by_name.setdefault(r["name"].casefold(), set()).add(r["student"])
        for r in rows:
            if r.get("name") and len(by_name.get(r["name"].casefold(), ())) > 1:
                r["note"] = ("another student has the same name (ids "
                             + ", ".join(sorted(by_name[r["name"].casefold()])) + "): kept apart")
        people.save()
        rows = self._merge_report(assignment, rows)
        self._write_report(assignment, rows)
        students = sorted({r["student"] for r in rows if r.get("status") == "accepted"})
        self.say(f"collect  {assignment}: {len(students)} submission(s) from "
                 f"{os.path.basename(zip_path)}; " + ", ".join(
                     f"{n} {k}" for k, n in sorted(_count(rows).items())))
        return students

    def _merge_report(self, assignment: str, rows: list[dict]) -> list[dict]:
        """This collect's lines, then the earlier lines it does not replace: a student it
        brings again has their earlier lines marked superseded; every other earlier line
        (manual, rejected, graded) is kept as it was."""
        new_students = {r["student"] for r in rows if r.get("student")
                        and r.get("status") in ("accepted", "manual")}
        new_files = {r["file"] for r in rows}
        kept = []
        for old in self.report(assignment):
            if old.get("file") in new_files:
                continue  # the same file collected again: this collect's line says it
            old = dict(old)
            if old.get("student") in new_students and old.get("status") in ("accepted", "graded",
                                                                             "manual"):
                old.update(status="superseded", reason="a later collect brought a new submission")
            old["earlier_collect"] = True
            kept.append(old)
        return rows + kept

    def _release_ids(self, assignment: str) -> dict:
        out = {}
        for name in self.notebooks(assignment):
            nb = nbformat.read(os.path.join(self.repo, "solutions", assignment, f"{name}.ipynb"), 4)
            out[name] = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells} - {None}
        return out

    def _student_folder(self, kind: str, student: str, assignment: str) -> str:
        base = os.path.realpath(os.path.join(self.dir, kind))
        folder = os.path.realpath(os.path.join(base, student, assignment))
        if os.path.dirname(os.path.dirname(folder)) != base:
            raise ValueError(f"student id {student!r} would leave {kind}/")
        return folder

    # -- the report: every file of a collection accounted for -------------------------
    def report_path(self, assignment: str) -> str:
        return os.path.join(self.dir, "reports", f"{assignment}.json")

    def report(self, assignment: str) -> list[dict]:
        try:
            with open(self.report_path(assignment), encoding="utf-8") as fh:
                return json.load(fh)["files"]
        except (OSError, ValueError, KeyError):
            return []

    def _write_report(self, assignment: str, rows: list[dict]) -> None:
        os.makedirs(os.path.dirname(self.report_path(assignment)), exist_ok=True)
        with open(self.report_path(assignment), "w", encoding="utf-8") as fh:
            json.dump({"assignment": assignment, "rule": LATEST_RULE, "files": rows}, fh,
                      indent=1, ensure_ascii=False)

    def collect_exchange(self, assignment: str) -> list[str]:
        """Collect from the nbgrader exchange (``course/exchange``)."""
        self.nbgrader("collect", assignment, "--update", check=True)
        students = self.students(assignment)
        self.say(f"collect  {assignment}: {len(students)} submission(s) from the exchange")
        return students

    def students(self, assignment: str) -> list[str]:
        sub = os.path.join(self.dir, "submitted")
        if not os.path.isdir(sub):
            return []
        return sorted(s for s in os.listdir(sub)
                      if os.path.isdir(os.path.join(sub, s, assignment)))

    # -- autograde -----------------------------------------------------------------
    def _incidents(self) -> list[dict]:
        if not os.path.exists(self.incident_log):
            return []
        with open(self.incident_log, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def _graded(self, assignment: str) -> set:
        done = set()
        from nbgrader.api import Gradebook, MissingEntry
        with Gradebook(f"sqlite:///{os.path.join(self.dir, 'gradebook.db')}") as gb:
            for s in self.students(assignment):
                try:
                    sub = gb.find_submission(assignment, s)
                except MissingEntry:
                    continue
                if os.path.isdir(os.path.join(self.dir, "autograded", s, assignment)) \
                        and len(sub.notebooks) > 0:
                    done.add(s)
        return done

    def autograde(self, assignment: str, students=None) -> list[GradeRow]:
        """Autograde all submitted students of ``assignment`` in one nbgrader batch.

        Students whose notebooks nbgrader could not grade are retried one by one;
        those that still fail are listed with ``score=None`` (grade by hand).
        """
        wanted = sorted(students or self.students(assignment))
        from .sandbox import check, describe
        self.say(describe())
        problem = check()
        if problem:
            raise RuntimeError("cannot grade: " + problem)
        first = len(self._incidents())
        if students:
            for s in wanted:
                self.nbgrader("autograde", assignment, "--force", f"--student={s}")
        else:
            self.nbgrader("autograde", assignment, "--force")
        done = self._graded(assignment)
        for s in [s for s in wanted if s not in done]:
            self.say(f"autograde {assignment}: retrying {s} on its own")
            self.nbgrader("autograde", assignment, "--force", f"--student={s}")
        done = self._graded(assignment)
        incidents = self._incidents()[first:]
        wanted = list(dict.fromkeys(wanted))
        rows = self.grades(assignment, wanted)
        for row in rows:
            if row.student not in done:
                row.score = None
            row.incidents = [f"{i['kind']}: {i['detail']}" for i in incidents
                             if i.get("student") == row.student]
            for nb_path in glob.glob(os.path.join(self.dir, "submitted", row.student,
                                                  assignment, "*.ipynb")):
                try:
                    row.flags += scan_notebook(nbformat.read(nb_path, as_version=4))
                except Exception as exc:  # unreadable submission
                    row.flags.append(f"unreadable notebook ({type(exc).__name__})")
        report = self.report(assignment)
        by_student = {r.student: r for r in rows}
        for entry in report:
            row = by_student.get(entry.get("student"))
            if entry.get("status") in ("accepted", "graded") and row is not None:
                if row.score is None:
                    entry.update(status="manual", reason="nbgrader could not grade it, even alone: "
                                 + ("; ".join(row.incidents) or "see logs/nbgrader.log"))
                else:
                    entry.update(status="graded", score=row.score,
                                 notes="; ".join(row.incidents + row.flags))
            elif entry.get("status") == "manual" and not students and \
                    entry.get("student") and entry["student"] not in by_student:
                by_student[entry["student"]] = GradeRow(
                    entry["student"], assignment, None, rows[0].max_score if rows else 0.0,
                    incidents=[f"manual: {entry.get('reason', '')}"])
                rows.append(by_student[entry["student"]])
        if report:
            self._write_report(assignment, report)
        self.say(format_table(rows))
        return rows

    def grades(self, assignment: str, students=None) -> list[GradeRow]:
        from nbgrader.api import Gradebook, MissingEntry
        rows = []
        with Gradebook(f"sqlite:///{os.path.join(self.dir, 'gradebook.db')}") as gb:
            max_score = gb.find_assignment(assignment).max_score
            for s in students or self.students(assignment):
                try:
                    score = gb.find_submission(assignment, s).score
                except MissingEntry:
                    score = None
                rows.append(GradeRow(s, assignment, score, max_score))
        return rows

    # -- feedback and export ----------------------------------------------------------
    def feedback(self, assignment: str) -> int:
        self.nbgrader("generate_feedback", assignment, "--force", check=True)
        n = len(glob.glob(os.path.join(self.dir, "feedback", "*", assignment, "*.html")))
        if os.path.isdir(os.path.join(self.dir, "exchange", COURSE_ID, "inbound")):
            self.nbgrader("release_feedback", assignment, check=True)
            self.say(f"feedback {assignment}: {n} HTML file(s), released to the exchange")
        else:
            self.say(f"feedback {assignment}: {n} HTML file(s) in {os.path.join(self.dir, 'feedback')}")
        return n

    def export(self, csv_path: str | None = None) -> str:
        """Every grade to CSV (default ``<course>/grades.csv``; a relative path is taken
        inside the course directory).  A submission that needs grading by hand is
        exported with an empty ``raw_score`` and ``status`` ``manual``, never as 0."""
        csv_path = self.output_path(csv_path or "grades.csv")
        from nbgrader.api import Gradebook
        out = []
        with Gradebook(f"sqlite:///{os.path.join(self.dir, 'gradebook.db')}") as gb:
            book = {a.name: a for a in gb.assignments}
            reported = sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.dirname(
                self.report_path("x"))) if f.endswith(".json")) \
                if os.path.isdir(os.path.dirname(self.report_path("x"))) else []
            for name in sorted(set(book) | set(reported)):
                a = book.get(name)
                max_score = a.max_score if a is not None else self._max_score(name)
                scores = {sub.student.id: sub.score for sub in (a.submissions if a else [])}
                lines = {}
                for r in self.report(name):
                    if r.get("student") and r.get("status") != "superseded":
                        lines.setdefault(r["student"], []).append(r)
                for sid in sorted(set(scores) | set(lines)):
                    mine = lines.get(sid, [])
                    status = {r["status"] for r in mine}
                    why = "; ".join(f"{r['file']}: {r.get('reason', '')}" for r in mine
                                    if r["status"] in ("manual", "rejected"))
                    if sid in scores and (not mine or status & {"graded", "accepted"}):
                        out.append((sid, name, scores[sid], max_score, "graded", why))
                    elif status & {"graded", "accepted"}:
                        out.append((sid, name, "", max_score, "manual",
                                    "collected, not graded yet (run autograde)"))
                    elif "manual" in status or sid in scores:
                        out.append((sid, name, "", max_score, "manual", why))
                    else:
                        out.append((sid, name, "", max_score, "rejected", why))
        os.makedirs(os.path.dirname(csv_path), exist_ok=True)
        tmp = csv_path + ".tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["student_id", "assignment", "raw_score", "max_score", "status", "notes"])
            w.writerows(sorted(out, key=lambda r: (r[1], r[0])))
        os.replace(tmp, csv_path)
        self.say(f"export   {len(out)} row(s) -> {csv_path}")
        return csv_path

    def _max_score(self, assignment: str) -> float:
        total = 0.0
        for name in self.notebooks(assignment):
            nb = nbformat.read(os.path.join(self.repo, "solutions", assignment, f"{name}.ipynb"), 4)
            total += sum(float(c.metadata.get("nbgrader", {}).get("points", 0) or 0) for c in nb.cells
                         if c.metadata.get("nbgrader", {}).get("grade"))
        return total

    def output_path(self, path: str) -> str:
        """Where an output file goes: relative paths inside the course directory;
        never inside the repository checkout (outside its git-ignored ``course/``)."""
        path = os.path.abspath(os.path.join(self.dir, path))
        inside_repo = os.path.commonpath([path, self.repo]) == self.repo
        inside_course = os.path.commonpath([path, self.dir]) == self.dir
        if inside_repo and not inside_course:
            raise ValueError(f"--to {path}: outputs may not be written into the repository "
                             f"checkout {self.repo}; use the course directory {self.dir}")
        return path


def validate_notebook(path: str, timeout_s: int = 60) -> tuple[bool, str]:
    """Run a notebook's visible tests the way the Validate button does.

    Uses nbgrader's Python validator, because ``nbgrader validate`` exits 0
    even when tests fail.  Returns ``(passed, report)``.
    """
    from nbgrader.validator import Validator
    from traitlets.config import Config

    cfg = Config()
    cfg.Execute.timeout = timeout_s
    cfg.Validator.validate_all = True
    env_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if REPO_ROOT not in env_path:
        os.environ["PYTHONPATH"] = os.pathsep.join([REPO_ROOT, *env_path])
    result = Validator(config=cfg).validate(os.path.abspath(path))
    lines = []
    for kind, items in result.items():
        for item in items or []:
            if not isinstance(item, dict):
                lines.append(f"  {kind}: {item}")
                continue
            first = (item.get("source") or "").strip().splitlines()[:1]
            err = re.sub(r"\x1b\[[0-9;]*m", "", item.get("raw_error") or "").strip().splitlines()[-1:]
            lines.append(f"  {kind}: {first[0] if first else '?'}" + (f"\n      {err[0]}" if err else ""))
    return not lines, "\n".join(lines)


def _one_line(text) -> str:
    """A table cell: printable characters on one line (a note can never start a row)."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())


def format_table(rows: list[GradeRow]) -> str:
    """A plain-text results table, then who needs a human and why: one row per student
    (the first of any repeats), every cell on one line, from the grader's own records."""
    lines = [f"{'student':<16} {'assignment':<20} {'score':>7} {'max':>5}  notes"]
    seen, human = set(), []
    for r in rows:
        if (r.student, r.assignment) in seen:
            continue
        seen.add((r.student, r.assignment))
        score = "MANUAL" if r.score is None else f"{r.score:g}"
        notes = _one_line("; ".join(dict.fromkeys(r.incidents + [f"flag: {f}" for f in r.flags])))
        lines.append(f"{_one_line(r.student):<16} {r.assignment:<20} {score:>7} {r.max_score:>5g}  "
                     f"{notes[:600]}")
        if r.needs_human and r.student not in human:
            human.append(r.student)
    if human:
        lines.append(f"needs a human: {', '.join(_one_line(s) for s in human)}")
    return "\n".join(lines)
