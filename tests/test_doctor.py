"""Tests for the environment doctor (course_lib.apps.doctor, also reachable as
course_lib.doctor): the checks and their exit codes."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from course_lib.apps import doctor
from course_lib.apps.cli import main as cli_main

VENV_BIN = str(Path(sys.executable).parent)


@pytest.fixture
def venv_path(monkeypatch):
    """PATH as `make` sets it: the venv's bin first (nbgrader needs alembic on PATH)."""
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture(scope="module")
def healthy():
    """One full report for this venv, with PATH as `make` sets it."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    try:
        yield doctor.report()
    finally:
        mp.undo()


def by_name(checks, name):
    found = [c for c in checks if c.name == name]
    assert found, f"no check named {name!r} in {[c.name for c in checks]}"
    return found[0]


def test_this_venv_is_ready(healthy):
    problems = [f"{c.name}: {c.detail}" for c in healthy if c.blocking]
    assert problems == []
    assert doctor.ready(healthy)


def test_every_requirement_in_pyproject_is_checked(healthy):
    import tomllib

    proj = tomllib.loads((doctor._REPO / "pyproject.toml").read_text())
    names = {c.name for c in healthy}
    wanted = proj["project"]["dependencies"] + proj["project"]["optional-dependencies"]["course"]
    for spec in wanted:
        name = Requirement(spec).name
        assert name in names
        assert by_name(healthy, name).required
    extras = proj["project"]["optional-dependencies"]
    for spec in extras["test"] + extras.get("bench", []):
        assert not by_name(healthy, Requirement(spec).name).required


def test_the_old_forwarding_name_is_gone():
    """Issue 20: `course_lib.doctor` only forwarded to `course_lib.apps.doctor`; callers
    (chapter 0, the README) now import the real module."""
    import pathlib

    package = pathlib.Path(doctor.__file__).resolve().parents[1]
    assert not (package / "doctor.py").exists()
    assert callable(doctor.run)


def test_requirements_come_from_the_installed_metadata_without_pyproject(monkeypatch, tmp_path):
    """A wheel install has no pyproject.toml: the dependencies are read from the
    distribution's metadata, with the extras' markers evaluated by packaging."""
    monkeypatch.setattr(doctor, "_REPO", tmp_path)  # no pyproject.toml here
    monkeypatch.setattr(doctor, "_distribution_requires", lambda: [
        "numpy>=1.26", "ipywidgets<9,>=8.1", 'nbgrader==0.9.6; extra == "course"',
        'pytest>=8; extra == "test"', 'simpy>=4.1; extra == "bench"',
        'cupy-cuda12x>=13; extra == "gpu"'])
    monkeypatch.setattr(doctor, "_distribution_requires_python", lambda: ">=3.11")
    reqs = doctor.requirements()
    assert reqs["required"] == ["numpy>=1.26", "ipywidgets<9,>=8.1", "nbgrader==0.9.6"]
    assert reqs["optional"] == ["pytest>=8", "simpy>=4.1"]   # gpu: check_gpu's business
    assert reqs["python"] == ">=3.11" and "metadata" in reqs["source"]


def test_no_pyproject_and_no_metadata_is_a_reported_problem(monkeypatch, tmp_path, venv_path):
    def missing():
        raise importlib.metadata.PackageNotFoundError("interconnect-city")

    monkeypatch.setattr(doctor, "_REPO", tmp_path)
    monkeypatch.setattr(doctor, "_distribution_requires", missing)
    with pytest.raises(LookupError, match="pyproject.toml"):
        doctor.requirements()
    checks = doctor.report(quick=True)
    c = by_name(checks, "course requirements")
    assert c.blocking and "pyproject.toml" in c.detail and c.fix
    assert not doctor.ready(checks)


def test_python_is_checked_against_requires_python():
    assert doctor.check_python(">=3.11").status == "ok"
    too_old = doctor.check_python(">=99")
    assert too_old.status == "fail" and ">=99" in too_old.detail and too_old.fix


def test_the_things_the_course_needs_are_all_checked(healthy):
    names = {c.name for c in healthy}
    for needed in ("Python", "ipywidgets front-end", "matplotlib draws", "GPU (CuPy)", "MPI",
                   "memory", "nbgrader imports", "alembic on PATH", "chromium (browser tests)"):
        assert needed in names
    assert by_name(healthy, "MPI").status == "ok"          # the 2-rank hello really ran
    assert "hello" in by_name(healthy, "MPI").detail
    assert by_name(healthy, "matplotlib draws").status == "ok"
    assert not by_name(healthy, "GPU (CuPy)").required
    assert not by_name(healthy, "chromium (browser tests)").required


def test_missing_required_package_fails_with_fix(monkeypatch, venv_path, capsys):
    real = doctor._import_module

    def broken(name, *a, **k):
        if name == "networkx":
            raise ImportError("No module named 'networkx' (simulated)")
        return real(name, *a, **k)

    monkeypatch.setattr(doctor, "_import_module", broken)
    checks = doctor.report(quick=True)
    nx = by_name(checks, "networkx")
    assert nx.status == "fail" and nx.required and nx.blocking
    assert "pip install" in nx.fix and "networkx>=3.2" in nx.fix
    assert not doctor.ready(checks)
    assert doctor.main(["--quick"]) == 1
    out = capsys.readouterr().out
    assert "networkx" in out and "fix:" in out
    assert out.strip().splitlines()[-1] == \
        "Not ready: fix networkx (see above), then run this again."
    assert doctor.main(["--quick", "--instructor"]) == 1
    assert "NOT READY" in capsys.readouterr().out


def test_uninstalled_and_too_old_packages(monkeypatch):
    def fake_version(name):
        if name == "nbgrader":
            return "0.9.5"
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(doctor, "_version_of", fake_version)
    old = doctor.check_package("nbgrader==0.9.6")
    assert old.status == "fail" and "0.9.5" in old.detail and "needs ==0.9.6" in old.detail
    gone = doctor.check_package("tqdm>=4.66")
    assert gone.status == "fail" and "not installed" in gone.detail and "tqdm>=4.66" in gone.fix
    optional = doctor.check_package("pytest>=8", required=False)
    assert optional.status == "warn" and not optional.blocking


def test_missing_optional_things_only_warn(monkeypatch, venv_path):
    real = doctor._which
    monkeypatch.setattr(doctor, "_which", lambda name, *a, **k: None
                        if name in ("chromium", "nvidia-smi") else real(name, *a, **k))
    monkeypatch.setattr(doctor, "_CHROMIUM_PATHS", ())
    checks = doctor.report(quick=True)
    assert by_name(checks, "chromium (browser tests)").status == "warn"
    gpu = by_name(checks, "GPU (CuPy)")
    if "cupy" not in sys.modules:  # no CuPy here (nor in CI)
        assert gpu.status == "warn" and ".[gpu]" in gpu.fix
    assert doctor.ready(checks)
    assert doctor.main(["--quick"]) == 0


def test_a_learner_sees_one_verdict_and_no_grading_items(monkeypatch, venv_path, capsys):
    """Chapter 0's check: what the course needs, then one verdict line; alembic
    (nbgrader's gradebook), chromium and the test tools are an instructor's."""
    monkeypatch.setenv("PATH", "/nonexistent")      # alembic not found: an instructor's problem
    learner = doctor.report(quick=True, instructor=False)
    names = {c.name for c in learner}
    assert "alembic on PATH" not in names and "chromium (browser tests)" not in names
    assert not any(c.name.startswith(("pytest", "playwright")) for c in learner)
    assert "nbgrader imports" in names and "MPI" in names
    assert doctor.run(quick=True) is doctor.ready(learner)
    out = capsys.readouterr().out
    assert "alembic" not in out and "chromium" not in out
    last = out.strip().splitlines()[-1]
    assert last in ("Ready for the course.",) or last.startswith("Not ready: fix ")
    assert "problem(s)" not in out              # no instructor's tally
    everything = doctor.report(quick=True)
    alembic = by_name(everything, "alembic on PATH")
    assert alembic.status == "fail" and alembic.instructor_only and alembic.blocking
    assert not doctor.ready(everything)
    assert doctor.run(quick=True, instructor=True) is False
    assert "alembic" in capsys.readouterr().out


def test_alembic_not_on_path_is_a_failure_with_the_path_fix(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    c = doctor.check_alembic()
    assert c.status == "fail" and c.blocking
    assert "PATH" in c.fix


def test_a_crashing_check_is_reported_not_raised(monkeypatch, venv_path):
    def boom():
        raise RuntimeError("kaboom")

    monkeypatch.setattr(doctor, "check_matplotlib", boom)
    monkeypatch.setattr(doctor, "requirements", lambda: 1 / 0)
    checks = doctor.report(quick=True)
    mpl = by_name(checks, "matplotlib draws")
    assert mpl.status == "fail" and "kaboom" in mpl.detail
    assert "ZeroDivisionError" in by_name(checks, "course requirements").detail
    assert doctor.run(print_=False, quick=True) is False


def test_json_output_and_cli_dispatch(venv_path, capsys):
    assert cli_main(["doctor", "--json", "--quick"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ready"] is True
    assert {"name", "status", "detail", "fix", "required", "mark"} <= set(data["checks"][0])
    assert all(c["status"] in ("ok", "warn", "fail") for c in data["checks"])


def test_bad_option_exit_code(capsys):
    assert doctor.main(["--no-such-option"]) == 2
    assert "--no-such-option" in capsys.readouterr().err


def test_memory_thresholds(monkeypatch):
    monkeypatch.setattr(doctor, "_cgroup_headroom_bytes", lambda: None)
    monkeypatch.setattr(doctor, "_meminfo_available_bytes", lambda: 4e9)
    assert doctor.check_memory().status == "ok"
    monkeypatch.setattr(doctor, "_meminfo_available_bytes", lambda: 1.0e9)
    assert doctor.check_memory().status == "warn"
    monkeypatch.setattr(doctor, "_meminfo_available_bytes", lambda: 0.2e9)
    assert doctor.check_memory().blocking
    # a container limit below the host's free memory wins (Binder's 2 GB pods)
    monkeypatch.setattr(doctor, "_meminfo_available_bytes", lambda: 20e9)
    monkeypatch.setattr(doctor, "_cgroup_headroom_bytes", lambda: 1.2e9)
    c = doctor.check_memory()
    assert c.status == "warn" and "container limit" in c.detail


def test_widgets_frontend_missing_and_disabled(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [tmp_path / "none"])
    c = doctor.check_widgets_frontend()
    assert c.status == "fail" and "jupyterlab_widgets" in c.fix
    ext = tmp_path / "labext" / "@jupyter-widgets" / "jupyterlab-manager"
    ext.mkdir(parents=True)
    (ext / "package.json").write_text('{"version": "5.0.0"}')
    monkeypatch.setattr(doctor, "_labextension_dirs", lambda: [tmp_path / "labext"])
    monkeypatch.setattr(doctor, "_disabled_labextensions",
                        lambda: {"@jupyter-widgets/jupyterlab-manager"})
    c = doctor.check_widgets_frontend()
    assert c.status == "fail" and "labextension enable" in c.fix
    monkeypatch.setattr(doctor, "_disabled_labextensions", lambda: set())
    assert doctor.check_widgets_frontend().status == "ok"


def test_mpi_missing_and_timeout(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor, "find_mpiexec", lambda: None)
    c = doctor.check_mpi()
    assert c.status == "fail" and "mpi4py" in c.fix
    # an "mpiexec" that hangs must be cut off by the timeout
    hang = tmp_path / "mpiexec"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    monkeypatch.setattr(doctor, "find_mpiexec", lambda: str(hang))
    c = doctor.check_mpi(timeout_s=0.5)
    assert c.status == "fail" and "did not finish" in c.detail
    # one that runs but prints nothing is a failure too
    hang.write_text("#!/bin/sh\nexit 0\n")
    assert doctor.check_mpi(timeout_s=10).status == "fail"


def test_ascii_terminal_gets_ascii_marks(monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert doctor.Check("x", "fail", "d").mark == "[x]"
    assert doctor.Check("x", "ok", "d").mark == "[ok]"
    doctor.format_table([doctor.Check("x", "warn", "d", fix="f", required=False)]).encode("ascii")


def test_check_rejects_bad_status():
    with pytest.raises(ValueError, match="status"):
        doctor.Check("x", "maybe", "d")


# ---------------------------------------------------------------------------
# figures in the Lab: a kernel started as `make lab` starts one
# ---------------------------------------------------------------------------
def test_a_kernel_started_as_make_lab_starts_one_shows_a_figure(monkeypatch):
    """`make doctor` exports MPLBACKEND=Agg (the Makefile's headless default); the
    kernel the doctor starts must still show the figure, as the Lab's does."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    c = doctor.check_lab_figures()
    assert c.status == "ok", c.detail
    assert "image/png" in c.detail and "inline" in c.detail


def test_a_lab_that_keeps_agg_is_not_ready(monkeypatch):
    """Had the Lab kept MPLBACKEND=Agg, no figure would show: the real kernel draws
    nothing, and the verdict is "Not ready" with the fix."""
    monkeypatch.setattr(doctor, "LAB_UNSET", ())
    env = dict(os.environ, MPLBACKEND="Agg")
    for c in (doctor.check_lab_figures(environ=env),
              doctor.check_lab_figures(environ=env, start_kernel=False)):
        assert c.status == "fail" and c.required, c.detail
        assert "Agg" in c.detail and "unset MPLBACKEND" in c.fix
        assert doctor.verdict([c]).startswith("Not ready: fix figures show in the Lab")


def test_the_makefile_lab_recipes_unset_what_the_doctor_unsets():
    """The doctor's picture of `make lab` (LAB_UNSET) is the Makefile's: LAB_ENV
    unsets exactly those variables and both Lab recipes run jupyter through it."""
    makefile = (doctor._REPO / "Makefile").read_text()
    lab_env = next(line for line in makefile.splitlines() if line.startswith("LAB_ENV"))
    assert sorted(lab_env.split("env", 1)[1].replace("-u", " ").split()) == sorted(doctor.LAB_UNSET)
    lab_cmd = next(line for line in makefile.splitlines() if line.startswith("LAB_CMD"))
    assert "$(LAB_ENV) jupyter lab" in lab_cmd
    for target in ("lab:", "instructor-lab:"):
        recipe = makefile.split("\n" + target, 1)[1].split("\n\n", 1)[0]
        assert "$(LAB_CMD)" in recipe, f"make {target[:-1]} does not start the Lab with LAB_CMD"
