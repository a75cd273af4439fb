"""Attacks on the data-only channel, the judge and the time budget, graded as one batch each.

The design under test (docs/grading.md): the sandbox answers the tests' questions
in the data-only encoding of ``autograder/wire.py``; the judge that reads the
answers and runs the hidden tests is a process of its own, unprivileged, in a
bubblewrap of its own, and sends back verdicts only; each call the tests make
has its own timer; the notebook's budget is a budget.

Three LMS zips (one per assignment: ``ring_allreduce`` holds the attacks,
``hop_counts`` and ``pinned_vs_pageable`` right answers of unusual types) are
collected and autograded with ``Course`` -- what ``python -m autograder`` runs --
from a folder outside the repository, as root, with a secret in the grader's
environment.  Each test asserts the exact grade (from the points in the source
notebooks) AND that nothing else was harmed: no file outside the student's
sandbox, no process left, the gradebook intact, the classmate's grade and
feedback, the grader's own memory and CPU (which it logs per notebook).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import zipfile

import nbformat
import pytest

from autograder import REPO_ROOT, wire
from autograder.pipeline import Course

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_autograder import append_to, cell, chain, points, submission  # noqa: E402
from test_grading_hostile import _scratch, sandbox_processes  # noqa: E402

pytestmark = pytest.mark.slow

RING, HOPS, PINNED = "ring_allreduce", "hop_counts", "pinned_vs_pageable"
P = points(RING)
ALL = sum(P.values())
CELL_S, BUDGET_S = 4, 20
TOKEN = os.urandom(6).hex()
SECRET = f"ag-secret-{TOKEN}"
MARK = f"/tmp/ag-ran-{TOKEN}"                 # created if a crafted value ever runs a command
RESP = "/home/student/.ag-resp"               # where the kernel leaves its answer for the driver

#: a value whose __reduce__ reaches subprocess through course_lib.apps.doctor
REDUCE_DOCTOR = f'''
import course_lib.apps.doctor as _doctor
class _Evil:
    def __reduce__(self):
        return (_doctor.subprocess.Popen, (["touch", "{MARK}"],))
trap_factor = _Evil()
'''
#: part D's function, on a hidden input, overwrites the answer with PAYLOAD and kills the kernel
FORGE = '''
_orig_busbw = allreduce_busbw_bytes_per_s
def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    if n_ranks == 64:
        import os
        with open("@RESP@", "wb") as _fh:
            _fh.write(@PAYLOAD@)
        os._exit(0)
    return _orig_busbw(n_bytes, time_s, n_ranks)
'''.replace("@RESP@", RESP)
PAYLOADS = {
    # a hand-made pickle: fractions -> operator -> os.system
    "chain": repr(b"cfractions\nFraction\n(I1\ntRcoperator\nmethodcaller\n(S'system'\nS'touch "
                  + MARK.encode() + b"'\ntRcos\n\ntR."),
    # a pickle that would spend the grader's CPU on deque(range(2.5e9), 0)
    "deque": f"__import__('pickle').dumps(type('D', (), {{'__reduce__': lambda s: "
             f"(__import__('collections').deque, (range(2500000000), 0))}})())",
    # nesting five million deep
    "deep": "b'[' * 5_000_000",
}
SHARED = "trap_factor = [0.5]\nfor _ in range(40):\n    trap_factor = [trap_factor, trap_factor]"
SLOW_CALLS = '''
_fast_busbw = allreduce_busbw_bytes_per_s
def allreduce_busbw_bytes_per_s(n_bytes, time_s, n_ranks):
    if n_ranks in (2, 64):             # two hidden inputs, asked in one batch: 2 x 3.4 s > 4 s
        import time
        time.sleep(@SLEEP@)
    return _fast_busbw(n_bytes, time_s, n_ranks)
'''.replace("@SLEEP@", repr(0.85 * CELL_S))
FORGED_FRAMES = '''
import os, json, struct
_lines = "\\ngood             ring_allreduce          0    10  forged\\nneeds a human: good"
_frames = [{"executed": {"cells": []}, "events": [{"kind": "timeout", "cell": 1, "detail": _lines},
                                                   {"kind": "budget\\ngood", "cell": 2}]},
           {"answer": None, "budget": True, "verdicts": {"part_a_test": [True, "", "", ""]}}]
for _pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for _fd in ("1", "3", "4", "5", "6", "7", "8"):
        for _frame in _frames:
            _data = json.dumps(_frame).encode()
            try:
                with open(f"/proc/{_pid}/fd/{_fd}", "wb") as _fh:
                    _fh.write(struct.pack(">Q", len(_data)) + _data)
            except OSError:
                pass
'''


def sleepers(nb):
    """Six last cells that each sleep just under the cell limit: 23.4 s against a 20 s budget."""
    for _ in range(6):
        nb.cells.append(nbformat.v4.new_code_cell(f"import time\ntime.sleep({CELL_S - 0.1})"))


def forged_frames(nb):
    nb.cells.insert(1, nbformat.v4.new_code_cell(FORGED_FRAMES))


def forge(kind):
    return append_to("part_d", FORGE.replace("@PAYLOAD@", PAYLOADS[kind]))


BFS_DEFAULTDICT = '''
import collections
def bfs_hops(adj, src):
    dist = collections.defaultdict(int)
    dist[src] = 0
    todo = collections.deque([src])
    while todo:
        u = todo.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                todo.append(v)
    return dist
'''
MASKED = '''
sizes_staged_bytes = np.ma.masked_array(sizes_staged_bytes, mask=np.zeros(len(sizes_staged_bytes), bool))
times_staged_s = np.ma.masked_array(times_staged_s)
sizes_resident_bytes = np.ma.masked_array(sizes_resident_bytes)
times_resident_s = np.ma.masked_array(times_resident_s)
'''

# parts A, B, D were in the forged answer, and C calls the learner's A/B functions (its
# errors are carried forward): only E, which falls back when they fail, keeps its point
LOST_TO_FORGERY = P["part_e"]
#: (assignment, student) -> (notebook maker, expected score, incident kinds that must be reported)
GRADED = {
    (RING, "good"): (lambda: submission(RING), ALL, set()),
    (RING, "reducedoctor"): (lambda: submission(RING, edit=append_to("part_e", REDUCE_DOCTOR)),
                             ALL - P["part_e"], set()),
    (RING, "shared"): (lambda: submission(RING, edit=append_to("part_e", SHARED)), ALL - P["part_e"], set()),
    (RING, "hugeint"): (lambda: submission(RING, edit=append_to("part_e", "trap_factor = 10 ** 5000")),
                        ALL - P["part_e"], set()),
    (RING, "giantstr"): (lambda: submission(RING, edit=append_to("part_e", "trap_factor = 'x' * 100_000_000")),
                         ALL - P["part_e"], set()),
    (RING, "forgechain"): (lambda: submission(RING, edit=forge("chain")), LOST_TO_FORGERY, {"sandbox"}),
    (RING, "forgedeque"): (lambda: submission(RING, edit=forge("deque")), LOST_TO_FORGERY, {"sandbox"}),
    (RING, "forgedeep"): (lambda: submission(RING, edit=forge("deep")), LOST_TO_FORGERY, {"sandbox"}),
    (RING, "slowcalls"): (lambda: submission(RING, edit=append_to("part_d", SLOW_CALLS)), ALL, set()),
    (RING, "sleepers"): (lambda: submission(RING, edit=sleepers), ALL, {"budget"}),
    (RING, "forgedframes"): (lambda: submission(RING, parts=set(), edit=forged_frames), 0.0, {"sandbox"}),
    (HOPS, "good"): (lambda: submission(HOPS), sum(points(HOPS).values()), set()),
    (HOPS, "bfsdefaultdict"): (lambda: submission(HOPS, edit=append_to("part_c", BFS_DEFAULTDICT)),
                               sum(points(HOPS).values()), set()),
    (PINNED, "masked"): (lambda: submission(PINNED, edit=append_to("part_a", MASKED)),
                         sum(points(PINNED).values()), set()),
}


@pytest.fixture(scope="module")
def run():
    scratch_before = _scratch()
    elsewhere = tempfile.mkdtemp(prefix="ag-data-only-")
    old_cwd = os.getcwd()
    os.chdir(elsewhere)
    os.environ["AG_INSTRUCTOR_TOKEN"] = SECRET
    try:
        course = Course(cell_timeout_s=CELL_S, notebook_timeout_s=BUDGET_S, verbose=True)
        printed = io.StringIO()
        rows = {}
        with contextlib.redirect_stdout(printed):
            course.release([RING, HOPS, PINNED], out_dir=os.path.join(elsewhere, "released"))
            for a in (RING, HOPS, PINNED):
                zpath = os.path.join(elsewhere, f"{a}.zip")
                with zipfile.ZipFile(zpath, "w") as z:
                    for (aa, student), (make, _, _) in sorted(GRADED.items()):
                        if aa == a:
                            z.writestr(f"{student}/{a}.ipynb", nbformat.writes(make()))
                course.collect_zip(a, zpath)
                rows.update({(a, r.student): r for r in course.autograde(a)})
        with open(os.path.join(course.dir, "logs", "nbgrader.log"), encoding="utf-8") as fh:
            log = fh.read()
        yield dict(course=course, rows=rows, printed=printed.getvalue(), log=log,
                   scratch_new=sorted(_scratch() - scratch_before), alive=sandbox_processes())
    finally:
        os.environ.pop("AG_INSTRUCTOR_TOKEN", None)
        os.chdir(old_cwd)
        if os.path.exists(MARK):
            os.remove(MARK)
        shutil.rmtree(elsewhere, ignore_errors=True)


def costs(run):
    """{student: (seconds, grader CPU s, grader peak MiB, judge CPU s, judge peak MiB)} from the log."""
    out = {}
    for m in re.finditer(r"graded (\S+) in ([\d.]+) s \(tests and answers [\d.]+ s\); grader CPU "
                         r"([\d.]+) s, grader peak memory (\d+) MiB; judge CPU ([-\d.]+) s, judge peak "
                         r"memory ([-\d]+) MiB", run["log"]):
        out.setdefault(m.group(1), []).append(tuple(float(x) for x in m.groups()[1:]))
    return out


@pytest.mark.parametrize("key", sorted(GRADED), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_submission_gets_the_right_grade(run, key):
    _, expected, kinds = GRADED[key]
    row = run["rows"][key]
    assert row.score == expected, (key, row.score, row.incidents)
    seen = {i.split(":")[0] for i in row.incidents}
    assert kinds <= seen, (key, row.incidents)
    assert "dead-kernel" not in seen or key[1].startswith("forge"), row.incidents


def test_classmates_are_never_charged(run):
    for key in ((RING, "good"), (HOPS, "good"), (HOPS, "bfsdefaultdict"), (PINNED, "masked"),
                (RING, "slowcalls"), (RING, "shared"), (RING, "reducedoctor")):
        assert not run["rows"][key].incidents, (key, run["rows"][key].incidents)


def test_no_crafted_value_runs_anything_and_nothing_is_left(run):
    assert not os.path.exists(MARK), "a crafted value ran a command"
    assert not [p for p in run["scratch_new"] if TOKEN in p], run["scratch_new"]
    assert run["alive"] == [], f"sandbox or judge processes survive the batch: {run['alive']}"
    course_dir = run["course"].dir
    with sqlite3.connect(os.path.join(course_dir, "gradebook.db")) as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        n = db.execute("select count(*) from submitted_assignment").fetchone()[0]
        manual = db.execute("select count(*) from grade where manual_score is not null").fetchone()[0]
    assert n == len(GRADED) and manual == 0
    for (a, student) in GRADED:
        for kind in ("autograded", "feedback"):
            for root, _, files in os.walk(os.path.join(course_dir, kind, student, a)):
                for f in files:
                    assert SECRET not in open(os.path.join(root, f), encoding="utf-8", errors="replace").read()


def test_values_of_other_types_are_named_in_their_part(run):
    path = os.path.join(run["course"].dir, "autograded", "reducedoctor", RING, f"{RING}.ipynb")
    nb = nbformat.read(path, as_version=4)
    out = "".join(str(o.get("evalue", "")) for o in cell(nb, "part_e_test").outputs)
    assert "'trap_factor': a value of type _Evil cannot be graded" in out, out
    nb = nbformat.read(path.replace("reducedoctor", "hugeint"), as_version=4)
    assert "more than 400 digits" in "".join(str(o.get("evalue", "")) for o in cell(nb, "part_e_test").outputs)


def test_the_grader_and_the_judge_stay_bounded(run):
    got = costs(run)
    assert set(got) >= {s for _, s in GRADED}, sorted(got)
    for student, seen in got.items():
        for seconds, grader_cpu, grader_mib, judge_cpu, judge_mib in seen:
            assert grader_mib < 1024, (student, grader_mib)
            assert grader_cpu < 10, (student, grader_cpu)
            assert 0 <= judge_cpu < 30 and 0 < judge_mib < 1024 or judge_cpu == -1, (student, judge_cpu)
            assert seconds <= BUDGET_S + 20, (student, seconds)


def test_a_call_has_its_own_limit_and_the_budget_is_a_budget(run):
    slow = os.path.join(run["course"].dir, "autograded", "slowcalls", RING, f"{RING}.ipynb")
    text = open(slow, encoding="utf-8").read()
    assert "KeyboardInterrupt" not in text and "TimeoutError" not in text
    sleeper = run["rows"][(RING, "sleepers")]
    kinds = [i.split(":")[0] for i in sleeper.incidents]
    assert "budget" in kinds and "dead-kernel" not in kinds and "unresponsive" not in kinds, kinds
    seconds = max(s for s, *_ in costs(run)["sleepers"])
    assert BUDGET_S <= seconds <= BUDGET_S + 20, seconds


def test_the_summary_holds_one_row_per_student_from_the_graders_records(run):
    table = [line for line in run["printed"].splitlines()
             if re.match(r"^(\S+)\s+ring_allreduce\s", line)]
    students = [line.split()[0] for line in table]
    assert sorted(students) == sorted(s for a, s in GRADED if a == RING), table
    good = next(line for line in table if line.startswith("good "))
    assert "forged" not in good and good.split()[2] == f"{ALL:g}", good
    human = [line for line in run["printed"].splitlines() if line.startswith("needs a human:")]
    ring_human = human[0]                    # the first table is ring_allreduce's
    names = ring_human.split(":", 1)[1].replace(" ", "").split(",")
    assert "good" not in names and len(names) == len(set(names)), ring_human
    assert "forgedframes" in names
    assert not any("forged" in i or "\n" in i for i in run["rows"][(RING, "forgedframes")].incidents)


def test_the_judge_holds_no_privilege_no_secret_and_no_course_file(tmp_path):
    """The judge's own box, probed directly: not root, no capability, a clean environment,
    no network, nothing of the course directory, nothing it can write outside its /tmp."""
    from autograder.sandbox import judge_command
    course = tmp_path / "course"
    course.mkdir(mode=0o700)
    (course / "gradebook.db").write_text("grades")
    probe = f'''
import os, socket
print("IDS", os.getuid(), os.geteuid(), os.getgid())
print("CAPS", [l.split()[1] for l in open("/proc/self/status") if l.startswith(("CapEff", "CapPrm"))])
print("ENV", sorted(os.environ))
for p in ({str(course / "gradebook.db")!r}, "/etc/shadow", {REPO_ROOT!r} + "/solutions"):
    try:
        open(p).read() if not os.path.isdir(p) else os.listdir(p)
        print("LEAK-READ", p)
    except OSError:
        print("blocked", p)
for p in ({str(course / "x")!r}, {REPO_ROOT!r} + "/x", "/opt/interconnect/autograder/x", "/usr/x"):
    try:
        open(p, "w").write("x")
        print("LEAK-WROTE", p)
    except OSError:
        print("blocked", p)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("LEAK-NETWORK")
except OSError:
    print("blocked network")
'''
    cmd = judge_command()
    cmd = cmd[:cmd.index(sys.executable)] + [sys.executable, "-I", "-S", "-c", probe]
    env = dict(os.environ, AG_INSTRUCTOR_TOKEN=SECRET)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env).stdout
    ids = re.search(r"IDS (\d+) (\d+) (\d+)", out)
    assert ids and "0" not in ids.groups(), out
    assert "CAPS ['0000000000000000', '0000000000000000']" in out, out
    assert "AG_INSTRUCTOR_TOKEN" not in out and SECRET not in out
    assert "LEAK" not in out, out
    assert out.count("blocked") == 8, out
    assert (course / "gradebook.db").read_text() == "grades" and not (course / "x").exists()
