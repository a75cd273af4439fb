"""A hostile and messy cohort, graded as ONE batch (issues 12 and 21).

One LMS zip holds every kind of attack and mess the issues list, plus our
own, next to honest submissions.  It is collected, autograded, given feedback
and exported once (module fixture), from a folder outside the repository,
while the grader's own environment holds a secret token.  Each test then
checks one kind: the exact grade for the attacker AND that nothing else was
harmed -- classmates' grades and feedback, the gradebook, the CSV, files
outside the pipeline's places (the checkout, /tmp, /dev/shm, /var/tmp) and
processes.  Expected scores come from the points in the source notebook.

The design under test (docs/grading.md): every notebook runs in its own
bubblewrap sandbox that holds no course file; the tests run in an unprivileged
judge of their own on the values the sandbox returns, which cross as data only.
"""

from __future__ import annotations

import csv
import glob
import os
import re
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
from autograder.pipeline import Course, scan_notebook

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_autograder import append_to, cell, chain, points, prepend_to, submission  # noqa: E402

pytestmark = pytest.mark.slow

RING = "ring_allreduce"
P = points(RING)
ALL = sum(P.values())
TOKEN = os.urandom(6).hex()
SECRET = f"ag-secret-{TOKEN}"                 # in the grader's environment during the batch
PICKLE_MARK = f"/tmp/ag-pickle-ran-{TOKEN}"
MARK = f"ag-left-{TOKEN}"                     # files a submission leaves in /tmp, /dev/shm, ...
EVIL_PTH = "zz_ag_evil_{}.pth".format(TOKEN)
COURSE = "@COURSE@"                         # replaced by the course path in the fixture
ZIP = "@ZIP@"                               # replaced by the LMS zip's path
#: text that only the hidden tests of ring_allreduce hold
HIDDEN_ONLY = ("(14e9, 8, 450e9, 6e-7)", "Going from 8 to 1024 ranks", "BEGIN HIDDEN TESTS")
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



# --- new attacks against the sandbox and the judge -------------------------------------------
CELL_MAGIC = "%%time\n"                                   # the whole answer under a cell magic
TRY_IMPORT = '''
try:
    import a_module_that_does_not_exist  # noqa
except ImportError:
    def bytes_sent_per_rank(n_bytes, n_ranks):
        return _FACTOR * (n_ranks - 1) / n_ranks * n_bytes
'''
HELPERS = '''
_EPS = 1e-300
_cache = {}
RING_STEPS = 2


def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    key = (n_bytes, time_s, n_ranks)
    if key not in _cache:
        _cache[key] = algbw_bytes_per_s(n_bytes, time_s + _EPS * 0) * RING_STEPS * (n_ranks - 1) / n_ranks
    return _cache[key]
'''
FORGER = '''
import os, sys, json, struct
# 1. the stack: look for a test runner, a token, expected values
_f, _names = sys._getframe(), []
while _f is not None:
    _names.append(_f.f_code.co_name)
    _f = _f.f_back
print("FRAMES", _names[:40])
# 2. forge "all passed" into every pipe this user can open, in the driver's protocol
_fake = json.dumps({"answer": None, "results": {"part_a_test": "pass"}, "score": 10}).encode()
for _pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for _fd in ("1", "3", "4", "5", "6", "7", "8"):
        try:
            with open(f"/proc/{_pid}/fd/{_fd}", "wb") as _fh:
                _fh.write(struct.pack(">Q", len(_fake)) + _fake)
        except OSError:
            pass
print("All tests passed! 10/10")
'''
HANGS = '''
def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    if n_ranks == 64:                      # one hidden input: ignore the alarm, spin forever
        import signal
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass
    return algbw_bytes_per_s(n_bytes, time_s) * 2 * (n_ranks - 1) / n_ranks
'''
DEF_ABS = "trap_factor = 3.0                   # wrong\ndef abs(x):\n    return 0\n"
MUTATE_MEASURED = '''
_m = cl.MEASURED["busbw_allreduce_8xH100_ring"]
try:
    object.__setattr__(_m, "value", _m.value * 2)      # in place, during the notebook
except Exception as _e:
    print("could not mutate", _e)
t_nvlink_real_s = ring_allreduce_time_s(grad_bytes, 8, cl.MEASURED["busbw_allreduce_8xH100_ring"].value)
'''
PATCH_LIBS = '''
import networkx
networkx.shortest_path_length = lambda *a, **k: 1
cl.busbw_bytes_per_s = lambda op, s, t, n: s / t      # agrees with the wrong part D
'''
LEAK = '''
import os, glob, socket, sys, course_lib
print("ENV", sorted(os.environ.items()))
for _what, _p in [("gradebook", "@COURSE@/gradebook.db"),
                  ("lms-zip", "@ZIP@"),
                  ("hidden-tests", os.path.join(@REPO@, "solutions", "hop_counts", "hop_counts.ipynb")),
                  ("other-clone", "/work/main/solutions/ring_allreduce/ring_allreduce.ipynb"),
                  ("classmate", "@COURSE@/submitted/good/ring_allreduce/ring_allreduce.ipynb"),
                  ("course-copy", "@COURSE@/solutions/ring_allreduce/ring_allreduce.ipynb"),
                  ("passwd", "/etc/shadow")]:
    try:
        with open(_p, "rb") as _fh:
            print("LEAK" + "ED", _what, _fh.read(4000))
    except Exception as _e:
        print("block" + "ed:", _what, type(_e).__name__)
print("LISTING", sorted(glob.glob("@COURSE@/*")), sorted(glob.glob("/work/*")), os.listdir("/"))
print("FOUND", sorted(glob.glob("/*/*.ipynb") + glob.glob("/*/*/*.ipynb") + glob.glob("/*/*/*/*.ipynb")))
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("LEAK" + "ED network")
except OSError as _e:
    print("block" + "ed: network", type(_e).__name__)
'''.replace("@REPO@", repr(REPO_ROOT))
LEFTOVERS = '''
import os
for _d in ("/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~")):
    try:
        with open(os.path.join(_d, "@MARK@"), "w") as _fh:
            _fh.write("next cohort, read me")
    except OSError as _e:
        print("cannot write", _d, _e)
_home = os.getcwd()
try:
    os.rename(_home, _home + "-moved")
    os.symlink(_home + "-moved", _home)
    print("renamed the work " + "directory and left a link")
except OSError as _e:
    print("rename " + "refused", _e)
'''.replace("@MARK@", MARK)
SAW = '''
import os
for _d in ("/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~"), os.path.expanduser("~") + "-moved"):
    if os.path.exists(os.path.join(_d, "@MARK@")):
        print("SAW-" + "LEFTOVER in", _d)
'''.replace("@MARK@", MARK)
DAEMON = '''
import os, time
_r, _w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(_w, str(os.getpid()).encode())
        for _ in range(600):
            time.sleep(0.1)
        os._exit(0)
    os._exit(0)
os.wait()
_pid = int(os.read(_r, 32))
os.kill(_pid, 0)
print("daemon " + "alive, pid", _pid)
'''


def try_import_part_b(nb):
    """Part B's bytes_sent_per_rank defined only inside try/except, using a module constant."""
    c = cell(nb, "part_b")
    head = c.source.split("def bytes_sent_per_rank")[0]
    c.source = head + "_FACTOR = 2\n" + TRY_IMPORT


def forger_blank(nb):
    nb.cells.insert(1, nbformat.v4.new_code_cell(FORGER))


#: student -> (notebook maker, expected score, incident kinds that must be reported)
GRADED = {
    "good": (lambda: submission(RING), ALL, set()),
    "blank": (lambda: submission(RING, parts=set()), 0.0, set()),
    "zzafter": (lambda: submission(RING, edit=append_to("part_e", SAW)), ALL, set()),
    # right answers the old rebuild-from-definitions design lost
    "cellmagic": (lambda: submission(RING, edit=prepend_to("part_a", CELL_MAGIC.rstrip("\n"))), ALL, set()),
    "tryimport": (lambda: submission(RING, edit=try_import_part_b), ALL, set()),
    "helpers": (lambda: submission(RING, edit=append_to("part_d", HELPERS)), ALL, set()),
    # wrong answers that once passed
    "forger": (lambda: submission(RING, parts=set(), edit=forger_blank), 0.0, set()),
    "hangs": (lambda: submission(RING, edit=append_to("part_d", HANGS)), ALL - P["part_d"], set()),
    "defabs": (lambda: submission(RING, edit=append_to("part_e", DEF_ABS)), ALL - P["part_e"], set()),
    "measured": (lambda: submission(RING, edit=append_to("part_c", MUTATE_MEASURED)), ALL - P["part_c"], set()),
    "patchlibs": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", PATCH_LIBS))),
                  ALL - P["part_d"], set()),
    "mathrebind": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", MATH_REBIND))),
                   ALL - P["part_d"], set()),
    "sysmodules": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", SYS_MODULES))),
                   ALL - P["part_d"], set()),
    "settrace": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_d", SETTRACE))),
                 ALL - P["part_d"], set()),
    "deftime": (lambda: submission(RING, edit=append_to("part_d", DEFTIME)), ALL - P["part_d"], set()),
    "runtime": (lambda: submission(RING, edit=append_to("part_d", RUNTIME)), ALL - P["part_d"], set()),
    "codeswap": (lambda: submission(RING, edit=append_to("part_b", CODESWAP)), ALL - P["part_b"], set()),
    "builtinsrepl": (lambda: submission(RING, edit=append_to("part_e", BUILTINS)), ALL - P["part_e"], set()),
    # contamination, processes, leaks
    "sitecustom": (lambda: submission(RING, edit=chain(wrong_busbw, append_to("part_a", SITECUSTOMIZE))),
                   ALL - P["part_d"], set()),
    "leaker": (lambda: submission(RING, edit=append_to("part_a", LEAK)), ALL, set()),
    "leftovers": (lambda: submission(RING, edit=append_to("part_a", LEFTOVERS)), ALL, set()),
    "daemon": (lambda: submission(RING, edit=append_to("part_a", DAEMON)), ALL, set()),
    "pickler": (lambda: submission(RING, edit=append_to("part_e", PICKLE)), ALL, set()),
    # output size
    "bigprint": (lambda: submission(RING, edit=append_to("part_a", BIG_PRINT)), ALL, set()),
    "bigimage": (lambda: submission(RING, edit=append_to("part_b", BIG_IMAGE)), ALL, set()),
    # tolerance: 5e-7 relative is right, 1e-4 is not: the leaf functions' Parts A, B and D
    # fail; C and E use those functions with the right inputs, and carry the error forward
    "nearly": (lambda: submission(RING, edit=perturb(5e-7)), ALL, set()),
    "offby": (lambda: submission(RING, edit=perturb(1e-4)), P["part_c"] + P["part_e"], set()),
    # collection: unicode names, several attempts, LMS formats, look-alike names (see entries())
    "Zoë Müller": (lambda: submission(RING), ALL, set()),
    "twice": (lambda: submission(RING), ALL, set()),
    "jane_doe": (lambda: submission(RING), ALL, set()),
    "jane_roe": (lambda: submission(RING, parts={"part_a"}), P["part_a"], set()),
    "mia": (lambda: submission(RING), ALL, set()),
    "noah": (lambda: submission(RING, parts={"part_a", "part_b"}), P["part_a"] + P["part_b"], set()),
    "bom": (lambda: submission(RING), ALL, set()),
    "77001": (lambda: submission(RING), ALL, set()),                 # Canvas user id
    "4711": (lambda: submission(RING, parts={"part_a", "part_b"}), P["part_a"] + P["part_b"], set()),  # Moodle
    "jdoe": (lambda: submission(RING), ALL, set()),                  # Blackboard user name
}
#: how each graded student appears in the zip when not <student>/<nb> or <student>_<id>_<nb>
SPECIAL = {
    "jane_doe": f"jane_doe_{RING}.ipynb", "jane_roe": f"jane_roe_{RING}.ipynb",
    "mia": f"export/mia/{RING}/{RING}.ipynb", "noah": f"export/noah/{RING}/{RING}.ipynb",
    "bom": f"bom_{RING}.ipynb",
    "77001": f"doejane_77001_991_{RING}.ipynb",
    "4711": f"Jane Doe_4711_assignsubmission_file_/{RING}.ipynb",
    "jdoe": f"Ring AllReduce_jdoe_attempt_2026-11-30-10-30-00_{RING}.ipynb",
}
EARLY, LATE = (2026, 11, 30, 9, 0, 0), (2026, 11, 30, 10, 0, 0)


def entries():
    """(name in the zip, date, bytes, what the report must say)."""
    out = []
    for i, (student, (make, _, _)) in enumerate(sorted(GRADED.items())):
        if student in ("Zoë Müller", "twice"):
            continue
        name = SPECIAL.get(student) or (f"{student}_{1000 + i}_{RING}.ipynb" if i % 2
                                        else f"{student}/{RING}.ipynb")
        data = make()
        if student == "bom":
            data = ("\ufeff" + nbformat.writes(data)).encode("utf-8")
        out.append((name, LATE, data, "graded"))
    blank = submission(RING, parts=set())
    out += [
        (f"Zoë Müller_{RING}.ipynb", LATE, blank, "superseded"),
        (f"Zoë Müller_{RING}(1).ipynb", LATE, submission(RING), "graded"),    # same time, copy (1)
        (f"twice/{RING}.ipynb", EARLY, blank, "superseded"),
        (f"twice_4711_{RING}.ipynb", LATE, submission(RING), "graded"),       # later time wins
        (f"Ring AllReduce_jdoe_attempt_2026-11-30-08-00-00_{RING}.ipynb", LATE, blank, "superseded"),
        (f"Ring AllReduce_jdoe_attempt_2026-11-30-10-30-00.txt", LATE, b"receipt", "rejected"),
        (f"../{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f".._{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f"evil/../../{RING}.ipynb", LATE, submission(RING), "rejected"),
        (f"codeonly_{RING}.ipynb", LATE, code_only(submission(RING)), "manual"),
        (f"garbage_{RING}.ipynb", LATE, b"{this is not json", "rejected"),
        (f"crc_{RING}.ipynb", LATE, submission(RING), "rejected"),           # damaged in the zip
        (f"doejane_77001_992_Untitled.ipynb", LATE, submission(RING), "manual"),
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


def _scratch():
    """What lies in the shared scratch places a submission might write to."""
    found = set()
    for d in ("/tmp", "/dev/shm", "/var/tmp"):
        try:
            found |= {os.path.join(d, n) for n in os.listdir(d)}
        except OSError:
            pass
    return found


def sandbox_processes():
    """Processes that belong to a grading sandbox (driver or kernel) or a judge, still running."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{pid}/status") as fh:
                state = next((l for l in fh if l.startswith("State:")), "")
        except OSError:
            continue
        if ("/home/student/" in cmd or "/opt/interconnect/ag_driver.py" in cmd
                or "-m autograder.judge" in cmd) and " Z " not in state:
            alive.append((pid, cmd[:120]))
    return alive


def _corrupt_entry(path, name):
    raw = bytearray(open(path, "rb").read())
    i = raw.index(name.encode()) + len(name) + 60
    raw[i] ^= 0xFF
    open(path, "wb").write(bytes(raw))


@pytest.fixture(scope="module")
def run():
    status_before = _repo_status()
    scratch_before = _scratch()
    elsewhere = tempfile.mkdtemp(prefix="ag-elsewhere-")
    old_cwd = os.getcwd()
    os.chdir(elsewhere)                      # the pipeline is run from another folder
    os.environ["AG_INSTRUCTOR_TOKEN"] = SECRET   # the instructor's shell holds a secret
    try:
        course = Course(cell_timeout_s=5, notebook_timeout_s=120, kernel_memory_bytes=3 * 2**30,
                        verbose=False)
        course.release([RING], out_dir=os.path.join(elsewhere, "released"))
        zpath = os.path.join(elsewhere, "lms.zip")
        listed = entries()
        with zipfile.ZipFile(zpath, "w") as z:
            for name, when, nb, _ in listed:
                data = nb if isinstance(nb, bytes) else nbformat.writes(nb)
                if not isinstance(nb, bytes) or name.startswith("bom"):
                    data = (data.decode("utf-8") if isinstance(data, bytes) else data)
                    data = data.replace(COURSE, course.dir).replace(ZIP, zpath).encode("utf-8")
                z.writestr(zipfile.ZipInfo(name, date_time=when), data)
        os.chmod(zpath, 0o644)               # world-readable, as downloads are
        _corrupt_entry(zpath, f"crc_{RING}.ipynb")
        collected = course.collect_zip(RING, zpath)
        t0 = time.monotonic()
        rows = {r.student: r for r in course.autograde(RING)}
        seconds = time.monotonic() - t0
        n_feedback = course.feedback(RING)
        csv_path = course.export("grades.csv")
        time.sleep(1.0)
        with open(csv_path, newline="", encoding="utf-8") as fh:
            exported = {r["student_id"]: r for r in csv.DictReader(fh)}
        yield dict(course=course, rows=rows, collected=collected, listed=listed, csv=csv_path,
                   exported=exported, n_feedback=n_feedback, elsewhere=elsewhere, zip=zpath,
                   status_before=status_before, status_after=_repo_status(), seconds=seconds,
                   scratch_new=sorted(_scratch() - scratch_before), alive=sandbox_processes(),
                   evil=[p for p in (os.path.join(REPO_ROOT, "sitecustomize.py"),
                                     os.path.join(_site_packages(), EVIL_PTH)) if os.path.exists(p)])
    finally:
        os.environ.pop("AG_INSTRUCTOR_TOKEN", None)
        os.chdir(old_cwd)
        for p in (os.path.join(REPO_ROOT, "sitecustomize.py"), os.path.join(_site_packages(), EVIL_PTH),
                  PICKLE_MARK):
            if os.path.exists(p):
                os.remove(p)
        shutil.rmtree(elsewhere, ignore_errors=True)


def feedback(run, student):
    path = os.path.join(run["course"].dir, "feedback", student, RING, f"{RING}.html")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def outputs(run, student):
    """Everything the student's graded notebook shows as output (not its source)."""
    path = os.path.join(run["course"].dir, "autograded", student, RING, f"{RING}.ipynb")
    nb = nbformat.read(path, as_version=4)
    text = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            text.append(str(o.get("text", "")) + str(o.get("data", "")) + str(o.get("evalue", ""))
                        + "".join(map(str, o.get("traceback", []))))
    return "\n".join(text)


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
    """No incident lands on a student who did nothing."""
    for s in ("good", "blank", "zzafter", "nearly", "Zoë Müller", "twice", "cellmagic",
              "tryimport", "helpers", "jane_doe", "mia", "bom", "77001", "jdoe"):
        assert not run["rows"][s].incidents, (s, run["rows"][s].incidents)


def test_export_matches_the_grades_and_marks_manual(run):
    exported = run["exported"]
    for student, (_, expected, _) in GRADED.items():
        assert exported[student]["status"] == "graded", student
        assert float(exported[student]["raw_score"]) == expected, student
    manual = exported["codeonly"]
    assert manual["status"] == "manual" and manual["raw_score"] == "", manual
    assert "nbgrader metadata" in manual["notes"]
    assert "Untitled.ipynb" in exported["77001"]["notes"], "the extra file is listed for a human"
    assert exported["crc"]["status"] == "rejected" and "damaged" in exported["crc"]["notes"]
    assert exported["garbage"]["status"] == "rejected"
    assert set(exported) == set(GRADED) | {"codeonly", "crc", "garbage"}


# --- collection -------------------------------------------------------------------------
def test_every_file_in_the_zip_is_accounted_for(run):
    report = run["course"].report(RING)
    assert sorted(r["file"] for r in report) == sorted(n for n, _, _, _ in run["listed"])
    want = {name: status for name, _, _, status in run["listed"]}
    for r in report:
        assert r["status"] == want[r["file"]], r
        if r["status"] != "graded":
            assert r.get("reason"), f"{r['file']}: {r['status']} without a reason"


def test_look_alike_names_stay_two_people(run):
    rows = run["rows"]
    assert rows["jane_doe"].score == ALL and rows["jane_roe"].score == P["part_a"]
    assert rows["mia"].score == ALL and rows["noah"].score == P["part_a"] + P["part_b"]
    assert RING not in rows and "jane" not in rows and "export" not in rows


def test_ids_are_validated_and_nothing_lands_outside_submitted(run):
    course_dir = run["course"].dir
    assert sorted(os.listdir(os.path.join(course_dir, "submitted"))) == sorted(GRADED)
    for where in (course_dir, os.path.dirname(course_dir), run["elsewhere"]):
        assert not os.path.exists(os.path.join(where, f"{RING}.ipynb"))
        assert not os.path.exists(os.path.join(where, RING, f"{RING}.ipynb"))


# --- the sandbox: what a submission can reach ----------------------------------------------
def test_start_up_files_never_persist(run):
    assert run["evil"] == [], f"planted start-up files survived: {run['evil']}"
    site = outputs(run, "sitecustom")
    assert "refused" in site and f"wrote {REPO_ROOT}" not in site and "wrote /opt" not in site
    assert f"wrote {_site_packages()}" not in site
    assert run["rows"]["zzafter"].score == ALL


def test_no_daemon_survives_and_nothing_is_left_behind(run):
    assert "daemon alive, pid" in outputs(run, "daemon"), "the daemon never ran: the test proves nothing"
    assert run["alive"] == [], f"sandbox processes survive the batch: {run['alive']}"
    assert "renamed the work directory" in outputs(run, "leftovers") or \
        "rename refused" in outputs(run, "leftovers")
    assert not [p for p in run["scratch_new"] if MARK in p], run["scratch_new"]
    assert "SAW-LEFTOVER" not in outputs(run, "zzafter"), "the next student saw the files"
    course_dir = run["course"].dir
    for path in (os.path.join(course_dir, "gradebook.db"), run["csv"],
                 os.path.join(course_dir, "submitted", "good", RING, f"{RING}.ipynb")):
        with open(path, "rb") as fh:
            assert b"pwned" not in fh.read() and b"read me" not in fh.read(), path
    with sqlite3.connect(os.path.join(course_dir, "gradebook.db")) as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        n = db.execute("select count(*) from submitted_assignment").fetchone()[0]
    assert n == len(GRADED)


def test_feedback_shows_only_the_students_own_work(run):
    assert run["n_feedback"] == len(GRADED)
    leak = outputs(run, "leaker")
    assert leak.count("blocked:") >= 7, leak[-2000:]
    assert "LEAKED" not in leak, "a file or the network was reachable from the sandbox"
    for what in ("gradebook", "lms-zip", "hidden-tests", "other-clone", "classmate", "course-copy",
                 "network"):
        assert f"blocked: {what}" in leak, what
    assert SECRET not in leak and "AG_INSTRUCTOR_TOKEN" not in leak, "the grader's environment leaked"
    assert run["zip"] not in leak and run["course"].dir not in leak, "the grader's paths leaked"
    for name in ("zzafter", "mathrebind", "jane_roe"):
        assert name not in leak, "classmates' names leaked"
    forger = outputs(run, "forger")
    for student in GRADED:
        html = feedback(run, student)
        for text in HIDDEN_ONLY:
            assert text not in html, (student, text)
        assert SECRET not in html
        assert "hidden tests: not shown" in html
    if "FRAMES" in forger:   # (its forged frames may also have broken its own channel: 0 then too)
        assert "judge" not in forger.split("FRAMES")[1][:3000], "no frame of the judge in the sandbox"
    wrong = feedback(run, "mathrebind")
    # the failing check's message, as an error output (not the test's source, which
    # feedback shows for the visible checks): the visible busbw check fails first now
    assert re.search(r"AssertionError: [^<]*multiply algbw by (the AllReduce factor )?2\(n-1\)/n",
                     wrong), "the failing test's message is shown"


def test_values_never_run_code_in_the_grader(run):
    assert not os.path.exists(PICKLE_MARK), "a pickled __reduce__ ran in the grader"


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


def test_scan_flags_comparison_spoofing():
    nb = submission(RING, edit=append_to("part_a", "class Always:\n    def __eq__(self, other):\n"
                                                   "        return True"))
    assert "defines comparison or conversion methods" in scan_notebook(nb)


# --- two graders at once; an instructor who is not root ----------------------------------------
HONEST = {"ring_allreduce": {"good": None, "blank": set(), "half": {"part_a", "part_b"}},
          "scaling_limits": {"good": None, "blank": set(), "half": {"part_a", "part_b"}}}


def _expected(a, parts):
    p = points(a)
    return sum(v for k, v in p.items() if parts is None or k in parts)


def test_two_graders_at_once_give_the_same_grades_as_one_after_another(tmp_path):
    """Two assignments graded in parallel on one machine, honest students only: every grade
    is what the points say (= what grading them one after another gives), no incident."""
    procs, courses = [], {}
    for a, students in HONEST.items():
        course = Course(str(tmp_path / a), cell_timeout_s=20, notebook_timeout_s=120, verbose=False)
        course.release([a], out_dir=str(tmp_path / f"released-{a}"))
        zpath = tmp_path / f"{a}.zip"
        with zipfile.ZipFile(zpath, "w") as z:
            for s, parts in students.items():
                z.writestr(f"{s}/{a}.ipynb", nbformat.writes(submission(a, parts=parts)))
        course.collect_zip(a, str(zpath))
        courses[a] = course
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    for a, course in courses.items():
        procs.append(subprocess.Popen([sys.executable, "-m", "autograder", "--course", course.dir,
                                       "--cell-timeout", "20", "autograde", a], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs = [p.communicate(timeout=900)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    for a, course in courses.items():
        got = {r.student: r.score for r in course.grades(a)}
        assert got == {s: _expected(a, parts) for s, parts in HONEST[a].items()}, (a, got)
        assert not os.path.exists(course.incident_log) or not open(course.incident_log).read().strip()
    assert sandbox_processes() == []


def _user(name="ag-student"):
    import pwd
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--user-group", name], check=True,
                       capture_output=True)
        return pwd.getpwnam(name)


NON_ROOT_SNIPPET = '''
import os, sys, time
from autograder.sandbox import JudgeBox, Sandbox, check
from autograder.guard import visible_part
sys.path.insert(0, os.path.join({repo!r}, "tests"))
from test_autograder import submission, _read, _gid
assert os.geteuid() != 0
problem = check()
print("CHECK", problem or "ok")
nb = submission("ring_allreduce", parts={{"part_a", "part_b"}})
tests = {{_gid(c): c.source for c in _read("solutions", "ring_allreduce").cells
         if (_gid(c) or "").endswith("_test")}}
for c in nb.cells:
    if _gid(c) in tests:
        c.source = visible_part(c.source)
with JudgeBox() as referee, Sandbox() as box:
    referee.start(tests, "import math\\nimport course_lib as cl", 64 * 2**20)
    box.execute(nb, 20, 120)
    verdicts, problems = referee.run(lambda op, items: box.ask(op, items, 20), time.monotonic() + 300)
print("PASSED", sorted(g for g, v in verdicts.items() if v[0]), problems)
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to an unprivileged user needs root "
                    "(CI runs as root); as a non-root user the other tests already take this path")
def test_an_unprivileged_instructor_can_grade():
    """The sandbox through unprivileged user namespaces, as on a laptop: a user who owns
    nothing of root's.  Where the interpreter sits under a closed directory (pyenv in
    /root) that user is shown only the interpreter's tree, as their own venv would be."""
    user = _user()
    outer = ["bwrap", "--dev-bind", "/", "/"]
    for tree in sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}):
        top, cur = None, "/"
        for part in tree.split("/")[1:]:
            cur = os.path.join(cur, part)
            if os.path.isdir(cur) and not os.stat(cur).st_mode & 0o001:
                top = cur
                break
        if top and top != tree:
            outer += ["--tmpfs", top]
            inner = top
            for part in os.path.relpath(tree, top).split(os.sep)[:-1]:
                inner = os.path.join(inner, part)
                outer += ["--perms", "0755", "--dir", inner]
            outer += ["--ro-bind", tree, tree]
    cmd = outer + ["--", "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                   "--clear-groups", "--", sys.executable, "-c",
                   NON_ROOT_SNIPPET.format(repo=REPO_ROOT)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": REPO_ROOT, "HOME": "/tmp",
           "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd="/tmp")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "CHECK ok" in out, out[-2000:]
    assert "PASSED ['part_a_test', 'part_b_test'] []" in out, out[-2000:]
