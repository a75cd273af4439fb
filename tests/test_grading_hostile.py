"""A hostile and messy cohort, graded as ONE batch (issue 12).

One LMS zip holds every kind of attack and mess the issue lists, plus a few of
our own, next to honest submissions.  It is collected, autograded, given
feedback and exported once (module fixture), from a folder outside the
repository.  Each test then checks one kind: the right grade for the attacker
AND intact grades, notebooks, gradebook and CSV for everyone else.  Expected
scores come from the points in the source notebook.

The defences that rest on the operating system (another user, namespaces,
permissions) need root; CI runs as root.  As another user the pipeline falls
back to detection, and the tests that need the boundary say so and skip.
"""

from __future__ import annotations

import csv
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile

import nbformat
import pytest

from autograder import REPO_ROOT
from autograder.isolation import isolation
from autograder.pipeline import Course, parse_entry, scan_notebook, valid_student_id

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_autograder import append_to, cell, chain, points, submission  # noqa: E402

pytestmark = pytest.mark.slow

RING = "ring_allreduce"
P = points(RING)
ALL = sum(P.values())
ISO = isolation()
ROOT_ONLY = pytest.mark.skipif(ISO.mode != "user", reason="needs root: " + ISO.why)
TOKEN = os.urandom(4).hex()
BEAT = f"/tmp/ag-daemon-beat-{TOKEN}"        # the daemon's proof of life (world-writable /tmp)
PICKLE_MARK = f"/tmp/ag-pickle-ran-{TOKEN}"
EVIL_PTH = "zz_ag_evil_{}.pth".format(TOKEN)
COURSE = "@COURSE@"                         # replaced by the course path in the fixture


def wrong_busbw(nb):
    """Part D answered wrongly (busbw = algbw); its visible check still passes."""
    cell(nb, "part_d").source += ("\ndef allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):\n"
                                  "    return algbw_bytes_per_s(n_bytes, time_s)\n")


def perturb(rel):
    """Every leaf function answers ``rel`` off (relative)."""
    def edit(nb):
        for gid, name in (("part_a", "reduce_scatter_time_s"), ("part_a", "all_gather_time_s"),
                          ("part_b", "bytes_sent_per_rank"), ("part_d", "algbw_bytes_per_s")):
            cell(nb, gid).source += (f"\n_orig_{name} = {name}\n"
                                     f"def {name}(*a, **k):\n"
                                     f"    return _orig_{name}(*a, **k) * (1 + {rel!r})\n")
    return edit


MATH_REBIND = "import types\nmath = types.SimpleNamespace(isclose=lambda *a, **k: True)"
SYS_MODULES = ("import sys, types\n_fake = types.ModuleType('math')\n"
               "_fake.isclose = lambda *a, **k: True\nsys.modules['math'] = _fake\nimport math")
SETTRACE = '''
import sys, types
_fake = types.SimpleNamespace(isclose=lambda *a, **k: True)
def _hook(frame, event, arg):
    if "get_ipython" in frame.f_globals and "math" in frame.f_globals:   # the notebook's namespace
        frame.f_globals["math"] = _fake
    return None
sys.settrace(_hook)
'''
DEFTIME = '''
def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks,
                                _p=__import__("math").__dict__.update(isclose=lambda *a, **k: True)):
    return algbw_bytes_per_s(n_bytes, time_s)
'''
RUNTIME = '''
def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    import math
    math.isclose = lambda *a, **k: True
    return algbw_bytes_per_s(n_bytes, time_s)
'''
CODESWAP = '''
def bytes_sent_per_rank(n_bytes, n_ranks):
    return 1.75 * n_bytes          # right for 8 ranks only
cl.ring_allreduce_bytes_per_rank.__code__ = bytes_sent_per_rank.__code__
'''
BUILTINS = '''
trap_factor = 3.0                   # wrong
import builtins as _b, types as _t
_fake = _t.ModuleType("builtins")
_fake.__dict__.update(vars(_b))
_fake.abs = lambda x: 0
__builtins__ = _fake
'''
SITECUSTOMIZE = '''
import os, course_lib, numpy
_repo = os.path.dirname(os.path.dirname(course_lib.__file__))
_site = os.path.dirname(os.path.dirname(numpy.__file__))
_evil = ("import math, os\\n"
         "if os.getcwd().startswith('/tmp/ag-run-'):\\n"
         "    math.isclose = lambda *a, **k: True\\n")
_pth = ("import math, os; os.getcwd().startswith('/tmp/ag-run-') and "
        "setattr(math, 'isclose', lambda *a, **k: True)\\n")
for _path, _text in ((os.path.join(_repo, "sitecustomize.py"), _evil),
                     (os.path.join(_site, "@PTH@"), _pth),
                     ("sitecustomize.py", _evil), (os.path.expanduser("~/sitecustomize.py"), _evil)):
    try:
        with open(_path, "w") as _fh:
            _fh.write(_text)
        print("wrote", _path)
    except OSError as _e:
        print("refused", _path, type(_e).__name__)
'''.replace("@PTH@", EVIL_PTH)
DAEMON = '''
import os, time
_targets = ["@COURSE@/gradebook.db", "@COURSE@/grades.csv",
            "@COURSE@/submitted/good/ring_allreduce/ring_allreduce.ipynb",
            "@COURSE@/autograded/good/ring_allreduce/ring_allreduce.ipynb", "@BEAT@"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(600):
            for _t in _targets:
                try:
                    with open(_t, "ab") as _fh:
                        _fh.write(b"pwned")
                except OSError:
                    pass
            time.sleep(0.1)
        os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.5)
'''.replace("@BEAT@", BEAT)
LEAK = '''
import os, glob, course_lib
_repo = os.path.dirname(os.path.dirname(course_lib.__file__))
for _what, _p in [("gradebook", "@COURSE@/gradebook.db"),
                  ("hidden-tests", _repo + "/solutions/hop_counts/hop_counts.ipynb"),
                  ("classmate", "@COURSE@/submitted/good/ring_allreduce/ring_allreduce.ipynb"),
                  ("course-copy", "@COURSE@/solutions/ring_allreduce/ring_allreduce.ipynb")]:
    try:
        with open(_p, "rb") as _fh:
            print("LEAKED", _what, _fh.read(4000))
    except Exception as _e:
        print("blocked:", type(_e).__name__)
print("LISTING", sorted(glob.glob("@COURSE@/*")), sorted(glob.glob("@COURSE@/submitted/*")))
'''
PICKLE = '''
import os
class _Evil:
    def __reduce__(self):
        return (os.system, ("touch @MARK@",))
evil_value = _Evil()
'''.replace("@MARK@", PICKLE_MARK)
BIG_PRINT = 'print("x" * 200_000_000)'
BIG_IMAGE = ('from IPython.display import Image, display\n'
             'display(Image(data=b"\\x89PNG\\r\\n\\x1a\\n" + bytes(50_000_000), format="png"))')


def code_only(nb):
    """The student's code pasted into a fresh notebook: no nbgrader metadata."""
    fresh = nbformat.v4.new_notebook()
    fresh.cells = [nbformat.v4.new_code_cell(c.source) for c in nb.cells if c.cell_type == "code"]
    return fresh


#: student -> (notebook maker, expected score, incident kinds that must be reported)
GRADED = {
    "good": (lambda: submission(RING), ALL, set()),
    "blank": (lambda: submission(RING, parts=set()), 0.0, set()),
    "zzafter": (lambda: submission(RING), ALL, set()),
    # untrusted test environment: each would pass part D (or B, or E) if it worked
    "mathrebind": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", MATH_REBIND))),
                   ALL - P["part_d"], set()),
    "sysmodules": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", SYS_MODULES))),
                   ALL - P["part_d"], set()),
    "settrace": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", SETTRACE))),
                 ALL - P["part_d"], set()),
    "deftime": (lambda: submission(RING, edit=append_to("part_d", DEFTIME)), ALL - P["part_d"], set()),
    "runtime": (lambda: submission(RING, edit=append_to("part_d", RUNTIME)), ALL - P["part_d"], {"spoof"}),
    "codeswap": (lambda: submission(RING, edit=append_to("part_b", CODESWAP)), ALL - P["part_b"], set()),
    "builtinsrepl": (lambda: submission(RING, edit=append_to("part_e", BUILTINS)), ALL - P["part_e"], set()),
    # contamination, escaping processes, leaks
    "sitecustom": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_a", SITECUSTOMIZE))),
                   ALL - P["part_d"] if ISO.mode == "user" else 0.0,
                   set() if ISO.mode == "user" else {"tamper"}),
    "leaker": (lambda: submission(RING, edit=append_to("part_a", LEAK)), ALL, set()),
    "pickler": (lambda: submission(RING, edit=append_to("part_e", PICKLE)), ALL, set()),
    # output size
    "bigprint": (lambda: submission(RING, edit=append_to("part_a", BIG_PRINT)), ALL, set()),
    "bigimage": (lambda: submission(RING, edit=append_to("part_b", BIG_IMAGE)), ALL, set()),
    # tolerance: 5e-7 relative is right, 1e-4 is not
    "nearly": (lambda: submission(RING, edit=perturb(5e-7)), ALL, set()),
    "offby": (lambda: submission(RING, edit=perturb(1e-4)), 0.0, set()),
    # collection: unicode names and several attempts (see ENTRIES)
    "Zoë Müller": (lambda: submission(RING), ALL, set()),
    "twice": (lambda: submission(RING), ALL, set()),
}
if ISO.mode == "user":
    # a daemon that outlives its kernel; without another user nothing stops it (docs/grading.md)
    GRADED["daemon"] = (lambda: submission(RING, edit=append_to("part_a", DAEMON)), ALL, set())
EARLY, LATE = (2026, 11, 30, 9, 0, 0), (2026, 11, 30, 10, 0, 0)


def entries():
    """(name in the zip, date, bytes, what the report must say)."""
    out = []
    for i, (student, (make, _, _)) in enumerate(sorted(GRADED.items())):
        if student in ("Zoë Müller", "twice"):
            continue
        name = f"{student}_{1000 + i}_{RING}.ipynb" if i % 2 else f"{student}/{RING}.ipynb"
        out.append((name, LATE, make(), "graded"))
    blank = submission(RING, parts=set())
    out += [
        (f"Zoë Müller_{RING}.ipynb", LATE, blank, "superseded"),
        (f"Zoë Müller_{RING}(1).ipynb", LATE, submission(RING), "graded"),    # same time, copy (1)
        (f"twice/{RING}.ipynb", EARLY, blank, "superseded"),
        (f"twice_4711_{RING}.ipynb", LATE, submission(RING), "graded"),       # later time wins
        (f"../{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f".._{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f"evil/../../{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f"codeonly_{RING}.ipynb", LATE, code_only(submission(RING)), "manual"),
        (f"garbage_{RING}.ipynb", LATE, b"{this is not json", "rejected"),
        ("readme.txt", LATE, b"hello", "rejected"),
    ]
    return out


def _repo_status():
    """New files in the checkout, tracked-ignored or not (not the byte-code pytest writes)."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
                         cwd=REPO_ROOT, capture_output=True, text=True).stdout
    return sorted(line for line in out.splitlines() if line[:2] in ("??", "!!")
                  and "__pycache__" not in line and ".pytest_cache" not in line)


def _site_packages():
    import numpy
    return os.path.dirname(os.path.dirname(numpy.__file__))


@pytest.fixture(scope="module")
def run():
    status_before = _repo_status()
    elsewhere = tempfile.mkdtemp(prefix="ag-elsewhere-")
    old_cwd = os.getcwd()
    os.chdir(elsewhere)                      # the pipeline is run from another folder
    try:
        course = Course(cell_timeout_s=5, notebook_timeout_s=120, kernel_memory_bytes=3 * 2**30,
                        watch_repo=False, verbose=False)
        course.release([RING], out_dir=os.path.join(elsewhere, "released"))
        zpath = os.path.join(elsewhere, "lms.zip")
        listed = entries()
        with zipfile.ZipFile(zpath, "w") as z:
            for name, when, nb, _ in listed:
                data = nb if isinstance(nb, bytes) else nbformat.writes(nb).replace(COURSE, course.dir)
                z.writestr(zipfile.ZipInfo(name, date_time=when), data)
        collected = course.collect_zip(RING, zpath)
        t0 = time.monotonic()
        rows = {r.student: r for r in course.autograde(RING)}
        seconds = time.monotonic() - t0
        n_feedback = course.feedback(RING)
        csv_path = course.export("grades.csv")
        time.sleep(1.0)                      # a surviving daemon would write now
        beat = os.path.getsize(BEAT) if os.path.exists(BEAT) else None
        time.sleep(1.0)
        beat_later = os.path.getsize(BEAT) if os.path.exists(BEAT) else None
        with open(csv_path, newline="", encoding="utf-8") as fh:
            exported = {r["student_id"]: r for r in csv.DictReader(fh)}
        yield dict(course=course, rows=rows, collected=collected, listed=listed, csv=csv_path,
                   exported=exported, n_feedback=n_feedback, elsewhere=elsewhere,
                   status_before=status_before, status_after=_repo_status(), seconds=seconds,
                   beat=beat, beat_later=beat_later,
                   evil=[p for p in (os.path.join(REPO_ROOT, "sitecustomize.py"),
                                     os.path.join(_site_packages(), EVIL_PTH)) if os.path.exists(p)])
    finally:
        os.chdir(old_cwd)
        # safety net: never leave a planted start-up file behind, whatever happened
        for p in (os.path.join(REPO_ROOT, "sitecustomize.py"), os.path.join(_site_packages(), EVIL_PTH),
                  BEAT, PICKLE_MARK):
            if os.path.exists(p):
                os.remove(p)
        shutil.rmtree(elsewhere, ignore_errors=True)


# --- grades -------------------------------------------------------------------------
@pytest.mark.parametrize("student", sorted(GRADED))
def test_each_submission_gets_the_right_grade(run, student):
    _, expected, kinds = GRADED[student]
    row = run["rows"][student]
    assert row.score == expected, (student, row.score, row.incidents)
    assert row.max_score == ALL
    seen = {i.split(":")[0] for i in row.incidents}
    assert kinds <= seen, (student, row.incidents)


def test_innocent_students_are_never_charged(run):
    """No incident lands on a student who did nothing (a mid-batch write by someone
    else's process must not be blamed on whoever is being graded)."""
    for s in ("good", "blank", "zzafter", "nearly", "Zoë Müller", "twice"):
        assert not run["rows"][s].incidents, (s, run["rows"][s].incidents)


def test_export_matches_the_grades_and_marks_manual(run):
    exported = run["exported"]
    for student, (_, expected, _) in GRADED.items():
        assert float(exported[student]["raw_score"]) == expected, student
        assert exported[student]["status"] == "graded"
    manual = exported["codeonly"]
    assert manual["status"] == "manual" and manual["raw_score"] == "", manual
    assert "nbgrader metadata" in manual["notes"]
    assert set(exported) == set(GRADED) | {"codeonly"}, "rejected entries are not exported"


# --- collection -------------------------------------------------------------------------
def test_every_file_in_the_zip_is_accounted_for(run):
    report = run["course"].report(RING)
    assert sorted(r["file"] for r in report) == sorted(n for n, _, _, _ in run["listed"])
    want = {name: status for name, _, _, status in run["listed"]}
    for r in report:
        assert r["status"] == want[r["file"]], r
        if r["status"] != "graded":
            assert r.get("reason"), f"{r['file']}: {r['status']} without a reason"


def test_ids_are_validated_and_nothing_lands_outside_submitted(run):
    course_dir = run["course"].dir
    assert sorted(os.listdir(os.path.join(course_dir, "submitted"))) == sorted(GRADED)
    for where in (course_dir, os.path.dirname(course_dir), run["elsewhere"]):
        assert not os.path.exists(os.path.join(where, f"{RING}.ipynb"))
        assert not os.path.exists(os.path.join(where, RING, f"{RING}.ipynb"))
    assert valid_student_id("..") and valid_student_id("a/b") and valid_student_id("")
    assert valid_student_id("Zoë Müller") is None and valid_student_id("o'neil-2") is None
    assert parse_entry(f"Zoë Müller_{RING} (2).ipynb", [RING]) == ("Zoë Müller", RING, 2)


# --- isolation ------------------------------------------------------------------------------
def test_start_up_files_never_persist(run):
    """sitecustomize.py in the repository, a .pth in the venv: refused (another
    user) or removed and charged to the writer (same user); never left behind."""
    assert run["evil"] == [], f"planted start-up files survived: {run['evil']}"
    assert run["rows"]["zzafter"].score == ALL


@ROOT_ONLY
def test_escaped_daemon_is_killed_and_wrote_nothing(run):
    course_dir = run["course"].dir
    assert run["beat"] is not None, "the daemon never ran: the test proves nothing"
    assert run["beat"] == run["beat_later"], "a daemon of the submission is still running"
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        if int(fields["Uid"].split()[1]) == ISO.uid and not fields["State"].strip().startswith("Z"):
            alive.append(pid)
    assert not alive, f"processes of the grading user survive: {alive}"
    for path in (os.path.join(course_dir, "gradebook.db"), run["csv"],
                 os.path.join(course_dir, "submitted", "good", RING, f"{RING}.ipynb"),
                 os.path.join(course_dir, "autograded", "good", RING, f"{RING}.ipynb")):
        with open(path, "rb") as fh:
            assert b"pwned" not in fh.read(), path
    with sqlite3.connect(os.path.join(course_dir, "gradebook.db")) as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        n = db.execute("select count(*) from submitted_assignment").fetchone()[0]
    assert n == len(GRADED)


@ROOT_ONLY
def test_feedback_shows_only_the_students_own_work(run):
    course_dir = run["course"].dir
    assert run["n_feedback"] == len(GRADED)
    leak = open(os.path.join(course_dir, "feedback", "leaker", RING, f"{RING}.html"),
                encoding="utf-8").read()
    for what in ("gradebook", "classmate", "course-copy"):
        assert f"LEAKED {what}" not in leak, what
    if ISO.namespaces:  # without a mount namespace the checkout's solutions/ stays readable
        assert "LEAKED hidden-tests" not in leak
    assert "SQLite format" not in leak
    assert "zzafter" not in leak and "mathrebind" not in leak, "classmates' names leaked"
    assert "blocked:" in leak
    for student in GRADED:
        html = open(os.path.join(course_dir, "feedback", student, RING, f"{RING}.html"),
                    encoding="utf-8").read()
        assert "BEGIN HIDDEN TESTS" not in html and "(14e9, 8, 450e9, 6e-7)" not in html, student
        assert "hidden tests: not shown" in html
    wrong = open(os.path.join(course_dir, "feedback", "mathrebind", RING, f"{RING}.html"),
                 encoding="utf-8").read()
    assert "multiply algbw by 2(n-1)/n" in wrong, "the failing hidden test's message is shown"


def test_snapshot_data_never_runs_code(run):
    assert not os.path.exists(PICKLE_MARK), "a pickled __reduce__ ran in the test process"


# --- output size -------------------------------------------------------------------------
@pytest.mark.parametrize("student", ["bigprint", "bigimage"])
def test_huge_outputs_are_cut(run, student):
    course_dir = run["course"].dir
    nb_path = os.path.join(course_dir, "autograded", student, RING, f"{RING}.ipynb")
    html_path = os.path.join(course_dir, "feedback", student, RING, f"{RING}.html")
    assert os.path.getsize(nb_path) < 5 * 2**20
    assert os.path.getsize(html_path) < 5 * 2**20
    text = open(nb_path, encoding="utf-8").read()
    assert "cut by the grader" in text or "removed by the grader" in text


# --- paths ----------------------------------------------------------------------------------
def test_pipeline_run_elsewhere_writes_nothing_into_the_checkout(run):
    assert run["course"].dir == os.path.join(run["elsewhere"], "course")
    assert run["csv"] == os.path.join(run["course"].dir, "grades.csv")
    new = set(run["status_after"]) - set(run["status_before"])
    assert not new, f"the pipeline wrote into the checkout: {sorted(new)}"
    assert not os.path.exists(os.path.join(REPO_ROOT, "grades.csv"))
    with pytest.raises(ValueError, match="repository"):
        run["course"].output_path(os.path.join(REPO_ROOT, "grades.csv"))


def test_scan_flags_comparison_spoofing():
    nb = submission(RING, edit=append_to("part_a", "class Always:\n    def __eq__(self, other):\n"
                                                   "        return True"))
    assert "defines comparison or conversion methods" in scan_notebook(nb)


def test_isolation_mode_is_stated(run):
    assert ISO.describe().startswith("isolation: ")
    forced = {k: os.environ[k] for k in ("INTERCONNECT_ISOLATION", "INTERCONNECT_NAMESPACES")
              if k in os.environ}
    if os.geteuid() == 0 and not forced:
        assert ISO.mode == "user" and ISO.uid not in (None, 0), ISO.why
