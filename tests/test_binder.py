"""Binder set-up: environment.yml agrees with pyproject.toml, and postBuild leaves
nbgrader's instructor plugins disabled in a fresh environment; `make lab` runs the
same script (scripts/learner_lab.sh), and apt.txt brings the glossary's CJK font."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.parse
from pathlib import Path

import pytest
import yaml  # PyYAML: a dependency of jupyter_events, so of JupyterLab
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import autograder

REPO = Path(__file__).resolve().parent.parent
NEWS_PLUGIN = "@jupyterlab/apputils-extension:announcements"   # course_lib.apps.hub's too
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def conda_env():
    return yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))


def split(spec: str):
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)$", spec)
    return m.group(1).lower(), m.group(2).strip()


def env_specs() -> dict:
    """name -> constraint, from environment.yml's conda and pip sections."""
    out = {}
    for dep in conda_env()["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            if item.startswith("-"):       # pip options: -c requirements.lock (tests/test_lock.py)
                continue
            name, constraint = split(item)
            out[name] = constraint
    return out


def test_one_environment_file_at_the_root():
    # Binder reads binder/ first if it exists; the course keeps one environment file.
    assert not (REPO / "binder").exists()
    assert not (REPO / ".binder").exists()
    for other in ("requirements.txt", "Pipfile", "runtime.txt"):
        assert not (REPO / other).exists(), f"{other} would change what Binder builds"


def test_environment_python_meets_requires_python():
    specs = env_specs()
    assert specs["python"].startswith("=")
    py = Version(specs["python"].lstrip("="))
    assert py in SpecifierSet(pyproject()["requires-python"])
    assert py >= Version("3.11"), "nbgrader 0.9.6 needs Python >= 3.11"
    assert py == Version("3.12")


def test_every_pyproject_dependency_is_in_environment_yml():
    proj = pyproject()
    specs = env_specs()
    wanted = proj["dependencies"] + proj["optional-dependencies"]["course"]
    for spec in wanted:
        name, constraint = split(spec)
        assert name in specs, f"{name} (pyproject) missing from environment.yml"
        assert SpecifierSet(specs[name]) == SpecifierSet(constraint), (
            f"{name}: pyproject says {constraint!r}, environment.yml {specs[name]!r}")
    # whatever else environment.yml lists must come from pyproject's other extras
    # (test tools, benchmarks), with the same constraint; never the GPU extra (no GPU on Binder)
    extras = proj["optional-dependencies"]
    others = {split(s)[0]: split(s)[1] for k, v in extras.items() if k != "gpu" for s in v}
    for name in set(specs) - {split(s)[0] for s in wanted} - {"python", "pip"}:
        assert name in others, f"environment.yml has {name}, which pyproject does not list"
        assert SpecifierSet(specs[name]) == SpecifierSet(others[name]), name
    for spec in extras.get("gpu", []):
        assert split(spec)[0] not in specs, "Binder has no GPU: keep CuPy out of environment.yml"


def test_nbgrader_pinned_exactly():
    assert env_specs()["nbgrader"] == "==0.9.6"


def test_postbuild_is_strict_and_executable():
    text = (REPO / "postBuild").read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(REPO / "postBuild", os.X_OK)
    assert "pip install --no-deps -e ." in text


def test_readme_binder_badge_opens_the_start_page_in_lab():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    urls = re.findall(r"\((https://mybinder\.org/v2/gh/[^)\s]+)\)", readme)
    assert urls, "no Binder badge link in README.md"
    query = urllib.parse.parse_qs(urllib.parse.urlparse(urls[0]).query)
    assert query["urlpath"] == ["lab/tree/notebooks/00_start_here.ipynb"]
    assert "https://mybinder.org/badge_logo.svg" in readme


def test_student_extension_lists_keep_validate():
    lab = set(autograder.STUDENT_DISABLED_EXTENSIONS)
    server = set(autograder.STUDENT_DISABLED_SERVER_EXTENSIONS)
    assert {"@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
            "@jupyter/nbgrader:course-list"} <= lab
    assert {"nbgrader.server_extensions.formgrader",
            "nbgrader.server_extensions.course_list"} <= server
    assert "@jupyter/nbgrader:validate-assignment" not in lab
    assert "nbgrader.server_extensions.validate_assignment" not in server
    assert "@jupyter/nbgrader:menu" in lab          # the Nbgrader menu lists instructor tools


def test_make_lab_and_postbuild_share_one_learner_script():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    lab_rule = re.search(r"^lab:([^\n]*)\n", makefile, flags=re.M).group(1)
    assert "learner-lab" in lab_rule.split("##")[0]
    assert re.search(r"^learner-lab:.*\n\t@?bash scripts/learner_lab\.sh \$\(PY\)\s*$",
                     makefile, flags=re.M)
    post = (REPO / "postBuild").read_text(encoding="utf-8")
    assert "bash scripts/learner_lab.sh python" in post
    assert "labextension disable" not in post       # one copy of the switches, in the script


def test_apt_txt_brings_a_cjk_font_for_the_glossary():
    packages = (REPO / "apt.txt").read_text(encoding="utf-8").split()
    assert "fonts-noto-cjk" in packages


def _prefix_venv(root: Path) -> Path:
    """A venv whose packages are this interpreter's (a .pth file), whose Jupyter
    data is this environment's (a link), and whose config starts as a copy of
    this environment's: the script writes there, not here."""
    venv = root / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                    "--without-pip", str(venv)], check=True, timeout=120)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    import sysconfig
    Path(site, "here.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (venv / "share").mkdir(exist_ok=True)
    os.symlink(Path(sys.prefix) / "share" / "jupyter", venv / "share" / "jupyter")
    if (Path(sys.prefix) / "etc").is_dir():
        # without learner_lab.sh's stamp: `make test` has already run the script on
        # this environment, and the copy must start as a set-up not yet done
        shutil.copytree(Path(sys.prefix) / "etc", venv / "etc",
                        ignore=shutil.ignore_patterns(".interconnect-city-lab"))
    return venv


def _this_env_config() -> dict:
    etc = Path(sys.prefix) / "etc" / "jupyter"
    return {str(f): f.read_bytes() for f in etc.rglob("*") if f.is_file()} if etc.is_dir() else {}


def test_learner_lab_script_is_idempotent_and_reversible(tmp_path):
    pytest.importorskip("jupyterlab", reason="JupyterLab is part of the course extra")
    pytest.importorskip("nbgrader", reason="nbgrader is part of the course extra")
    ours = _this_env_config()
    venv = _prefix_venv(tmp_path)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def run(*args):
        proc = subprocess.run(["bash", str(REPO / "scripts" / "learner_lab.sh"), py, *args],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    page = venv / "etc" / "jupyter" / "labconfig" / "page_config.json"

    def switched(key):
        config = json.loads(page.read_text()) if page.exists() else {}
        return {k for k, v in config.get(key, {}).items() if v}

    # what the install itself switched off (make's news pop-up), not the script's
    installed = switched("disabledExtensions") - set(autograder.STUDENT_DISABLED_EXTENSIONS)
    assert "learner set-up" in run()
    assert switched("disabledExtensions") == installed | set(autograder.STUDENT_DISABLED_EXTENSIONS)
    assert switched("lockedExtensions") >= set(autograder.STUDENT_DISABLED_EXTENSIONS)
    before = page.read_text()
    assert run() == ""                              # the second run changes nothing
    assert page.read_text() == before
    assert "instructor set-up" in run("--instructor")
    assert switched("disabledExtensions") == installed
    assert not switched("lockedExtensions") & set(autograder.STUDENT_DISABLED_EXTENSIONS)
    assert _this_env_config() == ours, "the script changed this environment's config"


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory):
    """A fresh venv with JupyterLab and nbgrader, a copy of the repo, and postBuild run
    in it with HOME and the Jupyter user dirs in a temp folder."""
    root = tmp_path_factory.mktemp("binder")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / "bin"
    course = pyproject()["optional-dependencies"]["course"]
    pins = [s for s in course if split(s)[0] in ("jupyterlab", "nbgrader")]
    assert len(pins) == 2
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", *pins],
                   check=True, timeout=600)
    repo = root / "repo"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", "postBuild", "scripts/learner_lab.sh"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    for pkg in ("course_lib", "autograder"):
        shutil.copytree(REPO / pkg, repo / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    home = root / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR")}
    env.update(PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", HOME=str(home),
               JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
               JUPYTER_DATA_DIR=str(home / ".local" / "share" / "jupyter"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    proc = subprocess.run(["bash", str(repo / "postBuild")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"venv": venv, "repo": repo, "home": home, "env": env, "log": proc.stdout}


def jupyter(fresh_env, *args) -> str:
    proc = subprocess.run([str(fresh_env["venv"] / "bin" / "jupyter"), *args],
                          env=fresh_env["env"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return ANSI.sub("", proc.stdout + proc.stderr)


@pytest.mark.slow
def test_postbuild_disables_the_instructor_lab_plugins(fresh_env):
    out = jupyter(fresh_env, "labextension", "list")
    assert "@jupyter/nbgrader v0.9.6 enabled OK" in out  # the extension itself stays
    assert "@jupyter-widgets/jupyterlab-manager" in out
    disabled_section = out.split("Disabled extensions:", 1)[1]
    disabled = {ln.strip() for ln in disabled_section.splitlines() if ln.strip().startswith("@")}
    # nbgrader's instructor tools, and JupyterLab's "Jupyter news?" pop-up
    assert disabled == {*autograder.STUDENT_DISABLED_EXTENSIONS, NEWS_PLUGIN}
    assert "@jupyter/nbgrader:validate-assignment" not in disabled
    page = json.loads((fresh_env["venv"] / "etc" / "jupyter" / "labconfig" /
                       "page_config.json").read_text())
    # locked, so a learner cannot switch them back on from the Plugin Manager
    assert {k for k, v in page["lockedExtensions"].items() if v} == \
        set(autograder.STUDENT_DISABLED_EXTENSIONS)


@pytest.mark.slow
def test_postbuild_disables_the_instructor_server_extensions(fresh_env):
    out = jupyter(fresh_env, "server", "extension", "list")
    state = dict(re.findall(r"^\s*(nbgrader\.server_extensions\.\w+) (enabled|disabled)\s*$",
                            out, flags=re.M))
    assert set(state) == {"nbgrader.server_extensions.formgrader",
                          "nbgrader.server_extensions.course_list",
                          "nbgrader.server_extensions.assignment_list",
                          "nbgrader.server_extensions.validate_assignment"}, out
    for ext, s in state.items():
        want = "disabled" if ext in autograder.STUDENT_DISABLED_SERVER_EXTENSIONS else "enabled"
        assert s == want, f"{ext} is {s}, wanted {want}"


@pytest.mark.slow
def test_postbuild_installs_course_lib_and_leaves_user_config_alone(fresh_env):
    py = fresh_env["venv"] / "bin" / "python"
    proc = subprocess.run([str(py), "-c", "import importlib.util as u; "
                           "print(u.find_spec('course_lib').origin); "
                           "print(u.find_spec('autograder').origin)"],
                          cwd=fresh_env["home"], env=fresh_env["env"],
                          capture_output=True, text=True, check=True)
    origins = proc.stdout.split()
    assert origins[0] == str(fresh_env["repo"] / "course_lib" / "__init__.py")
    assert origins[1] == str(fresh_env["repo"] / "autograder" / "__init__.py")
    user_cfg = fresh_env["home"] / ".jupyter"
    written = [p for p in user_cfg.rglob("*") if p.is_file()] if user_cfg.exists() else []
    assert written == [], f"postBuild wrote the user's config: {written}"
