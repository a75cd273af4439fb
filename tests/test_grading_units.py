"""Fast checks of the grading pipeline's pieces (no kernel, no nbgrader run)."""

from __future__ import annotations

import io
import os
import pickle

import nbformat
import numpy as np
import pytest

import course_lib as cl
from autograder import REPO_ROOT, hidden
from autograder.guard import HideHiddenTests, cap_outputs
from autograder.pipeline import Course, parse_entry, valid_student_id


def test_definitions_keep_defs_imports_and_aliases_only():
    src = ("import math as m\nx = compute()\n_orig = f\ng = lambda a: a\nh = np.polyfit\n"
           "math.isclose = fake\n__builtins__ = fake\nsys.modules['math'] = fake\n"
           "f.__code__ = g.__code__\nsys.settrace(hook)\n%time y = 1\n"
           "def f(a):\n    return a\nclass C:\n    pass\nfor i in range(3):\n    pass\n")
    kept = hidden.definitions(src)
    for line in ("import math as m", "_orig = f", "g = lambda a: a", "h = np.polyfit",
                 "def f(a):", "class C:"):
        assert line in kept, line
    for bad in ("isclose", "__builtins__", "sys.modules", "__code__", "settrace", "compute",
                "range"):
        assert bad not in kept, bad
    assert hidden.definitions("def broken(:\n") == ""
    assert hidden.imports("import math\nx = 1\nfrom course_lib import measure") == \
        "import math\nfrom course_lib import measure"


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo never",))


def test_safe_unpickler_takes_data_and_refuses_code():
    data = {"a": np.arange(3.0), "f": np.float64(2.5), "t": (1, "x", [2.0]), "s": {1, 2},
            "gpu": cl.gpu("H100"), "graph": cl.ring_topology(4), "c": complex(1, 2)}
    back = hidden.SafeUnpickler(io.BytesIO(pickle.dumps(data, protocol=4))).load()
    assert np.array_equal(back["a"], data["a"]) and back["gpu"] == data["gpu"]
    assert sorted(back["graph"].nodes) == sorted(data["graph"].nodes)
    for evil in (_Evil(), os.system, cl.gpu, print):
        with pytest.raises(pickle.UnpicklingError):
            hidden.SafeUnpickler(io.BytesIO(pickle.dumps(evil))).load()


def test_parse_results_needs_the_token():
    out = 'tok {"grade_id": "a", "error": null}\nforged {"grade_id": "b"}\ntok {"grade_id": "a", "error": 1}\n'
    got = hidden.parse_results(out, "tok")
    assert set(got) == {"a"} and got["a"]["error"] is None, "first word wins, forged lines ignored"


@pytest.mark.parametrize("name, want", [
    ("Zoë Müller_ring_allreduce.ipynb", ("Zoë Müller", "ring_allreduce", 0)),
    ("Zoë Müller_ring_allreduce(1).ipynb", ("Zoë Müller", "ring_allreduce", 1)),
    ("alice_12345_ring_allreduce.ipynb", ("alice", "ring_allreduce", 0)),
    ("lms-export/bob.b/ring_allreduce (3).ipynb", ("bob.b", "ring_allreduce", 3)),
    ("../ring_allreduce.ipynb", "'..'"),
    ("x/../../bob_ring_allreduce.ipynb", "'..'"),
    ("a*b_ring_allreduce.ipynb", "only letters"),
    ("notes.txt", "not a notebook"),
    ("__MACOSX/._bob_ring_allreduce.ipynb", "macOS"),
    ("bob_hop_counts.ipynb", "does not match"),
])
def test_parse_entry(name, want):
    got = parse_entry(name, ["ring_allreduce"])
    if isinstance(want, tuple):
        assert got == want
    else:
        assert isinstance(got, str) and want in got, got


def test_student_ids():
    for ok in ("alice", "Zoë Müller", "o'neil-2", "li.wei@uni", "王芳"):
        assert valid_student_id(ok) is None, ok
    for bad in ("", "..", ".hidden", "a/b", "a\\b", " x", "x" * 65, "a\x00b", "-rf"):
        assert valid_student_id(bad), repr(bad)


def test_cap_outputs_cuts_text_and_drops_images():
    c = nbformat.v4.new_code_cell("")
    c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 5000),
                 nbformat.v4.new_output("display_data", data={"image/png": "A" * 5000}),
                 nbformat.v4.new_output("stream", name="stdout", text="short")]
    cap_outputs(c, 1000)
    assert len(c.outputs[0].text) < 1200 and "cut by the grader" in c.outputs[0].text
    assert "image/png" not in c.outputs[1].data and "removed by the grader" in c.outputs[1].data["text/plain"]
    assert c.outputs[2].text == "short"


def test_feedback_hides_hidden_tests():
    c = nbformat.v4.new_code_cell('"""Part A."""\nassert f(1) == 1\n### BEGIN HIDDEN TESTS\n'
                                  'assert f(2) == 4\n### END HIDDEN TESTS\nassert True')
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
