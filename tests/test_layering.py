"""course_lib's imports read one way: units -> hardware -> topology -> analytic
-> clusters -> predict -> sim -> plots -> widgets/quiz -> explorers; measure beside (it may
use only the model layers); the apps (course_lib/apps: CLI, doctor, site) on
top (the old forwarding names course_lib.doctor / course_lib.site /
course_lib.quiz_bank_ch01_06 are gone: callers use the real modules).  Importing the
package needs no display, GPU or MPI."""

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "course_lib"

# rank of each top-level module/package of course_lib; a module may import only
# modules of lower or equal rank (equal only within its own package).
LAYERS = {
    "units": 0, "hardware": 1, "topology": 2, "analytic": 3, "predict": 4, "calibrating": 4.2,
    "sim": 5, "plots": 6, "draw": 6.5, "widgets": 7, "quiz": 7.5,
    "values": 7.8,  # every chapter's computed numbers (course_lib/values/chNN.py)
    "content": 8,  # the content bank: quizzes, myths, glossary (data files + evidence)
    "explorers": 9,
    "traffic": 3.2,  # closed-form models for chapter 8
    "scenarios": 4.5,  # chapter 10: composes analytic and predict, models nothing itself
    "measure": 3.5,  # beside the models: units, hardware, analytic only
    "nccl_log": 0.5,  # reads nccl-tests output into rows: units only
    "clusters": 3.8,  # the machine and its calibrated link rates: predict and sim read it
    "trace": 4.3,  # a job's profiler traces beside the predictor (chapter 8)
    "scaling": 4.4,  # chapter 9's data-parallel scaling: predict and traffic composed
    "apps": 10,  # course_lib/apps: cli, doctor, site
    "__main__": 12, "__init__": 12,
}


def top_module(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def course_imports(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    pkg_parts = path.relative_to(ROOT).parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg_parts[: len(pkg_parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from . import x"
                    target = [a.name for a in node.names]
                    for t in target:
                        yield t
                    continue
                yield target[0]
            elif node.module and node.module.startswith("course_lib."):
                yield node.module.split(".")[1]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("course_lib."):
                    yield a.name.split(".")[1]


FILES = sorted(p for p in ROOT.rglob("*.py"))


def test_every_module_has_a_layer():
    unknown = {top_module(p) for p in FILES} - set(LAYERS)
    assert not unknown, f"add these course_lib modules to LAYERS in {__file__}: {unknown}"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_imports_point_down(path):
    me = top_module(path)
    if me not in LAYERS or me in ("__init__", "__main__"):
        return
    for target in course_imports(path):
        if target == me or target not in LAYERS:
            continue
        assert LAYERS[target] < LAYERS[me] or (me == "measure" and LAYERS[target] <= 3), (
            f"{path.relative_to(ROOT)} ({me}, layer {LAYERS[me]}) imports {target} "
            f"(layer {LAYERS[target]}): imports must point down the layers")


def test_measure_uses_only_model_layers():
    for path in (ROOT / "measure").rglob("*.py") if (ROOT / "measure").exists() else []:
        for target in course_imports(path):
            assert target in ("units", "hardware", "analytic", "measure"), (path, target)


def test_import_needs_no_display_gpu_or_mpi():
    code = ("import sys, course_lib; "
            "bad = [m for m in ('cupy', 'mpi4py', 'matplotlib.pyplot', 'ipywidgets', 'playwright') "
            "if m in sys.modules]; "
            "bad += [m for m in sys.modules if m.startswith('course_lib.apps')]; print(bad); sys.exit(1 if bad else 0)")
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": ""}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_sim_does_not_import_predict():
    """The simulator stands beside the predictor, not on it: both read the
    machine (its calibrated link rates) from course_lib.clusters."""
    for path in (ROOT / "sim").rglob("*.py"):
        assert "predict" not in set(course_imports(path)), path


def test_cluster_is_the_function_and_its_module_has_another_name():
    """``cl.cluster`` stays the function the notebooks call.  No module of the
    package may be named like a function it exports: pytest's importlib mode
    (and any ``import course_lib.X``) sets the package attribute to the module,
    which would shadow ``cl.X(...)`` -- hence ``course_lib/clusters.py``."""
    import importlib

    import course_lib as cl

    assert cl.cluster.__module__ == "course_lib.clusters" and callable(cl.cluster)
    assert cl.predict.cluster is cl.cluster and cl.predict.Cluster is cl.Cluster
    assert hasattr(importlib.import_module("course_lib.clusters"), "Cluster")
    modules = {top_module(p) for p in FILES} - {"__init__", "__main__"}
    shadowed = sorted(m for m in modules if callable(getattr(cl, m, None))
                      and not isinstance(getattr(cl, m), type(cl)))
    assert not shadowed, f"modules named like a function of course_lib: {shadowed}"
