"""Small pieces of the grading pipeline, without nbgrader or a sandbox.

The judge is driven by :class:`FakeSandbox`, which answers ``names`` and
``calls`` from a plain namespace exactly as ``autograder/sandbox_driver.py``
does in the kernel (answers in the data-only encoding of ``autograder/wire.py``),
so the rules of judging can be checked in milliseconds: what a test may take
from the student, what never crosses.
"""

from __future__ import annotations

import os
import pickle
import sys
import zipfile

import nbformat
import pytest

from autograder import REPO_ROOT
from autograder import judge, wire
from autograder.guard import HideHiddenTests, cap_outputs, clean_outputs, visible_part
from autograder.lms import parse_entry, valid_student_id
from autograder.pipeline import Course
from autograder.sandbox import ENV_ALLOW, explain_failure, sandbox_command, sandbox_sys_path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_autograder import submission  # noqa: E402


class FakeSandbox:
    """Answers the judge's questions from ``ns`` (what the driver does in the kernel)."""

    def __init__(self, ns):
        self.ns = ns
        self.seen = []          # every question, as sent: what would enter the sandbox

    def __call__(self, op, items):
        self.seen.append((op, list(items)))
        rows = []
        if op == "names":
            for n in items:
                if n not in self.ns:
                    rows.append(["missing"])
                elif callable(self.ns[n]):
                    rows.append(["callable"])
                else:
                    rows.append(["value", self.ns[n]])
        else:
            for n, blob in items:
                args, kwargs = wire.decode(blob)
                try:
                    rows.append(["value", self.ns[n](*args, **kwargs)])
                except Exception as exc:
                    rows.append(["error", type(exc).__name__, str(exc)])
        return wire.encode_rows(rows)


def run(tests, ns, setup="import math"):
    box = FakeSandbox(ns)
    return judge.Judge(box, setup).run(tests), box


# --- the judge ------------------------------------------------------------------------
def test_free_names_are_what_the_test_reads_from_the_student():
    src = ("import math\nfor n in (2, 3):\n    got = f(n)\n    assert math.isclose(got, g(n) + k)\n"
           "def _helper(x):\n    return x\nassert abs(_helper(y)) == sum(z for z in w)")
    assert judge.free_names(src) == {"f", "g", "k", "y", "w"}
    assert judge.free_names("assert cl.hops(t) == f(t)", known={"cl"}) == {"f", "t"}


def test_right_and_wrong_answers_with_partial_messages():
    tests = {"a": "for n in range(1, 30):\n    assert sq(n) == n * n, f'sq({n}) = {sq(n)}, expected {n * n}'",
             "b": "assert math.isclose(half(5), 2.5)",
             "c": "assert total == 6, f'expected 6 GPUs, got {total}'"}
    ns = {"sq": lambda n: n * n if n != 7 else 48, "half": lambda x: x / 2, "total": 5}
    res, box = run(tests, ns)
    assert not res["a"].passed and res["a"].evalue == "sq(7) = 48, expected 49"
    assert res["b"].passed
    assert not res["c"].passed and res["c"].evalue == "expected 6 GPUs, got 5"
    # all 30 calls (29 to sq, one to half) went in ONE batch, after one question about names
    assert [op for op, _ in box.seen] == ["names", "calls"]
    assert len(box.seen[1][1]) == 30


def test_the_sandbox_never_sees_the_expected_values():
    secret = 987654.321
    tests = {"a": f"want = {secret!r} * 2\nassert f(3) == want, 'no'"}
    res, box = run(tests, {"f": lambda x: x})
    assert not res["a"].passed
    sent = repr(box.seen) + "".join(b for op, items in box.seen if op == "calls" for _, b in items)
    assert str(secret) not in sent and str(secret * 2) not in sent
    assert wire.encode(secret * 2).decode() not in sent


def test_a_students_abs_or_math_never_reach_the_test():
    # the student's notebook defines abs (returning 0) and a fake math: not taken
    tests = {"e": "assert abs(trap / 2 - 1) < 1e-6, 'trap should be 2'",
             "m": "assert math.isclose(x, 1.0)"}
    ns = {"abs": lambda v: 0, "math": "not a module", "trap": 3.0, "x": 2.0}
    res, box = run(tests, ns)
    assert not res["e"].passed and not res["m"].passed
    assert box.seen[0] == ("names", ["trap", "x"])


def test_results_that_depend_on_results_take_a_few_rounds():
    tests = {"b": "a, b = fit([1, 2], [3, 4])\nassert a == 1 and b == 2\nassert use(a) == 10"}
    res, box = run(tests, {"fit": lambda x, y: (1, 2), "use": lambda a: 10 * a})
    assert res["b"].passed
    assert [op for op, _ in box.seen] == ["names", "calls", "calls"]


def test_errors_missing_names_and_objects_that_are_not_data():
    class Liar(float):
        def __eq__(self, other):
            return True
    tests = {"raises": "assert f(1) == 1", "missing": "assert g(1) == 1",
             "liar": "assert lie == 42.0", "liar_call": "assert mk() == 42.0"}
    ns = {"f": lambda x: 1 / 0, "lie": Liar(1.0), "mk": lambda: Liar(1.0)}
    res, _ = run(tests, ns)
    assert "ZeroDivisionError" in res["raises"].evalue and not res["raises"].passed
    assert "does not define" in res["missing"].evalue
    # a float whose __eq__ is always true crosses as the plain float it holds
    assert not res["liar"].passed and not res["liar_call"].passed
    tests = {"obj": "assert thing == 1", "obj_call": "assert mk() == 1"}
    res, _ = run(tests, {"thing": Liar, "mk": lambda: object()})
    assert not res["obj_call"].passed and "type object cannot be graded" in res["obj_call"].evalue


def test_forged_answers_cannot_claim_a_pass():
    # whatever the sandbox answers is only "the student's value": an answer shaped like a
    # verdict, a wrong length, a pickle, or garbage, never passes a test
    tests = {"a": "assert f(2) == 4"}
    for forged in (wire.encode_rows([["value", "PASS"]] * 5), b"garbage", pickle.dumps([("value", 4)]),
                   wire.encode({"a": "passed"}), b'{"verdicts": {"a": [true, "", "", ""]}}', None):
        def ask(op, items, forged=forged):
            return wire.encode_rows([["callable"]]) if op == "names" else forged
        res = judge.Judge(ask, "").run(tests)
        assert not res["a"].passed, forged


# --- LMS downloads -----------------------------------------------------------------------
NB = ["ring_allreduce"]


@pytest.mark.parametrize("name, student, lms, copy", [
    ("doejane_12345_67890_ring_allreduce.ipynb", "12345", "canvas", 0),
    ("doejane_LATE_12345_67891_ring_allreduce-1.ipynb", "12345", "canvas", 1),
    ("Jane Doe_4711_assignsubmission_file_/ring_allreduce.ipynb", "4711", "moodle", 0),
    ("Jane Doe_4711_assignsubmission_file_ring_allreduce (2).ipynb", "4711", "moodle", 2),
    ("Ring AllReduce_jdoe_attempt_2026-11-30-09-15-02_ring_allreduce.ipynb", "jdoe", "blackboard", 0),
    ("152-4471 - Jane Doe - Nov 30, 2026 915 AM - ring_allreduce.ipynb", "Jane Doe", "brightspace", 0),
    ("mia/ring_allreduce/ring_allreduce.ipynb", "mia", "tree", 0),
    ("export/noah/ring_allreduce/ring_allreduce.ipynb", "noah", "tree", 0),
    ("lms-export/bob.b/ring_allreduce (3).ipynb", "bob.b", "tree", 3),
    ("jane_doe_ring_allreduce.ipynb", "jane_doe", "flat", 0),
    ("jane_roe_ring_allreduce.ipynb", "jane_roe", "flat", 0),
    ("alice_12345_ring_allreduce.ipynb", "alice", "flat", 0),
    ("Zoë Müller_ring_allreduce(1).ipynb", "Zoë Müller", "flat", 1),
])
def test_parse_entry_formats(name, student, lms, copy):
    e = parse_entry(name, NB, "ring_allreduce")
    assert not isinstance(e, str), e
    assert (e.student, e.notebook, e.lms, e.copy) == (student, "ring_allreduce", lms, copy)


def test_parse_entry_times_and_unrecognised_files():
    bb = parse_entry("A_jdoe_attempt_2026-11-30-09-15-02_ring_allreduce.ipynb", NB)
    assert bb.when == (2026, 11, 30, 9, 15, 2)
    ds = parse_entry("1-2 - Jane Doe - Nov 30, 2026 1015 PM - ring_allreduce.ipynb", NB)
    assert ds.when == (2026, 11, 30, 22, 15, 0)
    odd = parse_entry("doejane_12345_67890_Untitled.ipynb", NB)
    assert odd.student == "12345" and odd.notebook is None   # the student's, but which file?


@pytest.mark.parametrize("name, why", [
    ("../ring_allreduce.ipynb", "'..'"),
    ("x/../../bob_ring_allreduce.ipynb", "'..'"),
    ("a*b_ring_allreduce.ipynb", "only letters"),
    ("notes.txt", "not a notebook"),
    ("__MACOSX/._bob_ring_allreduce.ipynb", "macOS"),
    ("bob_hop_counts.ipynb", "does not match"),
])
def test_parse_entry_rejects(name, why):
    got = parse_entry(name, NB)
    assert isinstance(got, str) and why in got, got


def test_student_ids():
    for ok in ("alice", "Zoë Müller", "o'neil-2", "li.wei@uni", "王芳"):
        assert valid_student_id(ok) is None, ok
    for bad in ("", "..", ".hidden", "a/b", "a\\b", " x", "x" * 65, "a\x00b", "-rf"):
        assert valid_student_id(bad), repr(bad)


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 11, 30, 10, 0, 0)), data)


def _corrupt(path, needle):
    """Flip one byte of the stored data that follows ``needle`` (a bad CRC for that entry)."""
    raw = bytearray(open(path, "rb").read())
    i = raw.index(needle) + len(needle) + 40
    raw[i] ^= 0xFF
    open(path, "wb").write(bytes(raw))


def test_collect_bom_crc_collisions_and_manual_lines_that_survive(tmp_path):
    good = nbformat.writes(submission("ring_allreduce"))
    course = Course(str(tmp_path / "course"), verbose=False)
    z1 = tmp_path / "one.zip"
    _zip(z1, [("bom_ring_allreduce.ipynb", "\ufeff" + good),
              ("jane_doe_ring_allreduce.ipynb", good), ("jane_roe_ring_allreduce.ipynb", good),
              ("mia/ring_allreduce/ring_allreduce.ipynb", good),
              ("noah/ring_allreduce/ring_allreduce.ipynb", good),
              ("crc_ring_allreduce.ipynb", good),
              ("tie/ring_allreduce.ipynb", good), ("tie_9_ring_allreduce.ipynb", good),
              ("codeonly_ring_allreduce.ipynb", nbformat.writes(nbformat.v4.new_notebook(
                  cells=[nbformat.v4.new_code_cell("x = 1")]))),
              ("doejane_12345_67890_Untitled.ipynb", good)])
    _corrupt(z1, b"crc_ring_allreduce.ipynb")
    got = course.collect_zip("ring_allreduce", str(z1))
    assert got == ["bom", "jane_doe", "jane_roe", "mia", "noah"]
    status = {r["file"]: (r["status"], r.get("reason", "")) for r in course.report("ring_allreduce")}
    assert status["crc_ring_allreduce.ipynb"][0] == "rejected" and "damaged" in status["crc_ring_allreduce.ipynb"][1]
    assert status["tie/ring_allreduce.ipynb"][0] == status["tie_9_ring_allreduce.ipynb"][0] == "manual"
    assert status["codeonly_ring_allreduce.ipynb"][0] == "manual"
    assert status["doejane_12345_67890_Untitled.ipynb"][0] == "manual"
    for s in ("bom", "jane_doe", "jane_roe", "mia", "noah"):
        assert os.path.exists(tmp_path / "course" / "submitted" / s / "ring_allreduce" / "ring_allreduce.ipynb")
    # a later collect of one more student keeps every earlier line
    z2 = tmp_path / "two.zip"
    _zip(z2, [("late_ring_allreduce.ipynb", good)])
    course.collect_zip("ring_allreduce", str(z2))
    later = {r["file"]: r["status"] for r in course.report("ring_allreduce")}
    assert later["codeonly_ring_allreduce.ipynb"] == "manual" and later["late_ring_allreduce.ipynb"] == "accepted"
    assert later["crc_ring_allreduce.ipynb"] == "rejected"
    course.init()
    with open(course.export(), newline="", encoding="utf-8") as fh:
        import csv
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert rows["codeonly"]["status"] == "manual" and rows["codeonly"]["raw_score"] == ""
    assert rows["tie"]["status"] == "manual" and rows["12345"]["status"] == "manual"
    assert rows["late"]["status"] == "manual" and "not graded yet" in rows["late"]["notes"]
    assert "crc" in rows and rows["crc"]["status"] == "rejected"


# --- outputs and feedback ---------------------------------------------------------------
def test_cap_outputs_cuts_text_and_drops_images():
    c = nbformat.v4.new_code_cell("")
    c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 5000),
                 nbformat.v4.new_output("display_data", data={"image/png": "A" * 5000}),
                 nbformat.v4.new_output("stream", name="stdout", text="short")]
    cap_outputs(c, 1000)
    assert len(c.outputs[0].text) < 1200 and "cut by the grader" in c.outputs[0].text
    assert "image/png" not in c.outputs[1].data and "removed by the grader" in c.outputs[1].data["text/plain"]
    assert c.outputs[2].text == "short"


def test_clean_outputs_keeps_valid_outputs_only():
    got = clean_outputs([{"output_type": "stream", "name": "stdout", "text": ["a", "b"]},
                         {"output_type": "evil", "x": 1}, "junk",
                         {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t"]},
                         {"output_type": "display_data", "data": {"text/plain": "p", "x": 3},
                          "metadata": "bad"}])
    assert [o.output_type for o in got] == ["stream", "error", "display_data"]
    assert got[0].text == "ab" and dict(got[2].data) == {"text/plain": "p"}
    assert clean_outputs("not a list") == []


def test_visible_part_and_feedback_hide_hidden_tests():
    src = ('"""Part A."""\nassert f(1) == 1\n### BEGIN HIDDEN TESTS\n'
           'assert f(2) == 4\n### END HIDDEN TESTS\nassert True')
    assert visible_part(src) == '"""Part A."""\nassert f(1) == 1\nassert True'
    c = nbformat.v4.new_code_cell(src)
    c.metadata["nbgrader"] = {"grade": True, "grade_id": "a", "points": 1, "locked": True,
                              "solution": False}
    out, _ = HideHiddenTests().preprocess_cell(c, {}, 0)
    assert "f(2)" not in out.source and "assert f(1) == 1" in out.source
    assert "assert True" in out.source and "hidden tests: not shown" in out.source


def test_outputs_never_go_into_the_checkout(tmp_path):
    course = Course(str(tmp_path / "course"), verbose=False)
    assert course.output_path("grades.csv") == str(tmp_path / "course" / "grades.csv")
    assert course.output_path(str(tmp_path / "x.csv")) == str(tmp_path / "x.csv")
    with pytest.raises(ValueError, match="repository"):
        course.output_path(os.path.join(REPO_ROOT, "grades.csv"))


# --- the sandbox's command line -------------------------------------------------------------
def test_sandbox_command_is_an_allow_list():
    cmd = sandbox_command()
    joined = " ".join(cmd)
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                 "--clearenv", "--cap-drop"):
        assert flag in cmd, flag
    assert "--tmpfs /tmp" in joined and "--tmpfs /dev/shm" in joined and "--tmpfs /var/tmp" in joined
    sources = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind", "--dev-bind")]
    assert "--bind" not in cmd and "--dev-bind" not in cmd, "nothing of the host is writable"
    assert os.path.join(REPO_ROOT, "course_lib") in sources
    assert not any(s in (REPO_ROOT, "/", os.path.expanduser("~"), "/tmp", "/etc") for s in sources)
    assert not any(os.path.join(REPO_ROOT, "solutions").startswith(s + os.sep) or s == REPO_ROOT
                   for s in sources if s != os.path.join(REPO_ROOT, "course_lib")
                   and not s.startswith(os.path.join(REPO_ROOT, ".venv")))
    env = {cmd[i + 1]: cmd[i + 2] for i, a in enumerate(cmd) if a == "--setenv"}
    assert set(env) == set(ENV_ALLOW) | {"PYTHONPATH"}
    assert REPO_ROOT not in sandbox_sys_path()
    import tempfile
    course_dir = tempfile.mkdtemp(prefix="ag-some-course-")   # nbgrader's working directory
    sys.path.insert(0, course_dir)
    try:
        assert course_dir not in sandbox_sys_path()
    finally:
        sys.path.remove(course_dir)
        os.rmdir(course_dir)


def test_forbidden_user_namespaces_get_a_clear_message():
    why = explain_failure(1, "bwrap: No permissions to creating new namespace, likely because "
                             "the kernel does not allow non-privileged user namespaces.")
    assert "unprivileged user namespaces" in why and "sysctl" in why
    assert "exit 7" in explain_failure(7, "something else")


def test_ask_answers_are_read_as_data_only():
    # a pickle whose __reduce__ runs a command is not even read: it is not data
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch /tmp/ag-never",))
    j = judge.Judge(lambda op, items: wire.encode_rows([["callable"]]) if op == "names"
                    else pickle.dumps([("value", pickle.dumps(Boom()))]), "")
    res = j.run({"t": "assert f() == 0"})
    assert not res["t"].passed and not os.path.exists("/tmp/ag-never")
    assert j.problems and "not data" in j.problems[0]


def test_the_driver_caps_outputs_before_they_cross():
    from autograder.sandbox_driver import cap
    outs = [{"output_type": "stream", "name": "stdout", "text": "x" * 10_000}] * 3 + \
        [{"output_type": "display_data", "data": {"image/png": "A" * 10_000}, "metadata": {}}] * 300
    got = cap([dict(o, data=dict(o["data"])) if "data" in o else dict(o) for o in outs], 1000)
    assert len(got) == 201 and "more outputs removed" in got[-1]["text"]
    assert all(len(o.get("text", "")) < 1200 for o in got if o["output_type"] == "stream")
    assert "image/png" not in got[3]["data"]


# --- the usual wrong answers fail their part (the hidden tests, judged in-process) --------------
def _judge_notebook(a, nb):
    """Run ``nb``'s answer cells here and judge them with the hidden tests of ``solutions/<a>``:
    {test grade id: passed}."""
    from test_autograder import _read
    ns, setup = {}, []
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if c.cell_type != "code" or meta.get("grade"):
            continue
        if meta.get("locked"):
            setup.append(judge.instructor_imports(c.source))
        exec(compile(c.source, meta.get("grade_id", "cell"), "exec"), ns)
    tests = {c.metadata.nbgrader["grade_id"]: c.source for c in _read("solutions", a).cells
             if c.metadata.get("nbgrader", {}).get("grade")}
    res = judge.Judge(FakeSandbox(ns), "\n".join(setup)).run(tests)
    return {gid: r.passed for gid, r in res.items()}


SEEDS_MAX_B = ("def step_time_s(t_comp_s, t_comm_s, overlap):\n"
               "    return max(t_comp_s, t_comm_s) if overlap else t_comp_s + t_comm_s")
FORWARD_HIDES_B = ("def step_time_s(t_comp_s, t_comm_s, overlap):\n"     # the shares swapped
                   "    if not overlap:\n        return t_comp_s + t_comm_s\n"
                   "    return 2 * t_comp_s / 3 + max(t_comp_s / 3, t_comm_s)")
SEEDS_MAX_D = "eff_overlap_pcie = t_comp_s / max(t_comp_s, t_comm_pcie_s)"
NO_WRAP_F = ("def ring_slowest_hop_bw(topo, ranks):\n"                 # the last hop forgotten
             "    return min(cl.path_bottleneck_bw_bytes_per_s(topo, a, b) for a, b in zip(ranks, ranks[1:]))")
MEAN_F = ("def ring_slowest_hop_bw(topo, ranks):\n"
          "    r = list(ranks)\n"
          "    bws = [cl.path_bottleneck_bw_bytes_per_s(topo, a, b) for a, b in zip(r, r[1:] + r[:1])]\n"
          "    return sum(bws) / len(bws)")
ONE_ROUTE_F = ("import networkx as nx\n"                              # any shortest route, not the widest
               "def ring_slowest_hop_bw(topo, ranks):\n"
               "    r = list(ranks)\n"
               "    def hop(a, b):\n"
               "        p = nx.shortest_path(topo, a, b)\n"
               "        return min(topo.edges[u, v]['bw_bytes_per_s'] for u, v in zip(p, p[1:]))\n"
               "    return min(hop(a, b) for a, b in zip(r, r[1:] + r[:1]))")
HOPS_RATIO_F = "placement_ratio = cl.hops(cluster, 0, 4) / cl.hops(cluster, 0, 1)"
INVERTED_RATIO_F = "placement_ratio = spread_bw / packed_bw"

WRONG_ANSWERS = {
    # name: (assignment, part it is appended to, code, the tests that must fail)
    # Part D uses the learner's step_time_s and carries Part B's error forward: B alone fails
    "seeds-max-overlap": ("scaling_limits", "part_b", SEEDS_MAX_B, {"part_b_test"}),
    "forward-hides-comm": ("scaling_limits", "part_b", FORWARD_HIDES_B, {"part_b_test"}),
    "seeds-max-in-part-d": ("scaling_limits", "part_d", SEEDS_MAX_D, {"part_d_test"}),
    "ring-without-wrap": ("hop_counts", "part_f", NO_WRAP_F, {"part_f_test"}),
    "ring-mean-hop": ("hop_counts", "part_f", MEAN_F, {"part_f_test"}),
    "ring-one-shortest-route": ("hop_counts", "part_f", ONE_ROUTE_F, {"part_f_test"}),
    "placement-by-hops": ("hop_counts", "part_f", HOPS_RATIO_F, {"part_f_test"}),
    "placement-inverted": ("hop_counts", "part_f", INVERTED_RATIO_F, {"part_f_test"}),
}


@pytest.mark.parametrize("name", sorted(WRONG_ANSWERS))
def test_usual_wrong_answers_fail_only_their_parts(name):
    from test_autograder import append_to
    a, part, code, failing = WRONG_ANSWERS[name]
    passed = _judge_notebook(a, submission(a, edit=append_to(part, code)))
    assert {gid for gid, ok in passed.items() if not ok} == failing, passed


@pytest.mark.parametrize("a", ["scaling_limits", "hop_counts"])
def test_solution_and_both_references_pass_every_hidden_test(a):
    """The control for the wrong answers above (the full pipeline: test_autograder)."""
    from reference_solutions import CLOSED, LOOP, notebook as reference
    from test_autograder import _read
    for nb in (submission(a), reference(_read("exercises", a), a, LOOP),
               reference(_read("exercises", a), a, CLOSED)):
        passed = _judge_notebook(a, nb)
        assert passed and all(passed.values()), passed
