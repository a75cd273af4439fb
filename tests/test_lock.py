"""requirements.lock: the exact versions every install of the course uses.

``make lock`` writes it with uv's ``pip compile`` from pyproject.toml's ranges (one
lock for Python 3.11 and 3.12); ``make`` installs with ``pip install -c
requirements.lock``, and so do the hub (``make hub``), Binder and the Zero to
JupyterHub image (environment.yml's ``-c requirements.lock``).  These tests check
that the lock covers every dependency within its range, that the versions known
to work together are the ones pinned, that every installer uses it, and that this
environment -- the one the rest of the suite runs in -- holds exactly the pins.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
EXTRAS = ("course", "test", "hub", "bench")     # gpu: CuPy, installed by hand where there is one


def lock_pins(python="3.11"):
    """{name: Version} of the lock's lines whose markers hold on Linux with ``python``."""
    env = {"python_version": python, "python_full_version": python + ".0",
           "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
           "implementation_name": "cpython", "platform_machine": "x86_64"}
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if not line or line[0] in "# -":
            continue
        spec, _, marker = line.partition(";")
        name, _, version = spec.strip().partition("==")
        assert version, f"requirements.lock: {line!r} is not pinned with =="
        if marker.strip() and not Marker(marker.strip()).evaluate(env):
            continue
        pins[canonicalize_name(name)] = Version(version)
    return pins


def wanted():
    proj = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(proj["dependencies"])
    for extra in EXTRAS:
        reqs += proj["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize("python", ["3.11", "3.12"])
def test_every_dependency_is_pinned_within_its_range(python):
    pins = lock_pins(python)
    for req in wanted():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} (pyproject.toml) is not in requirements.lock: make lock"
        assert pins[name] in req.specifier, (
            f"requirements.lock pins {req.name}=={pins[name]}, outside pyproject's {req.specifier}:"
            " make lock")


def test_one_set_of_pins_for_binder_and_make():
    # Binder builds with Python 3.12, make with the machine's 3.11+: the same versions
    assert lock_pins("3.11").items() >= {k: v for k, v in lock_pins("3.12").items()
                                         if k in lock_pins("3.11")}.items()


def test_the_hub_pins_versions_that_log_in():
    pins = lock_pins()
    # JupyterHub 6 broke nativeauthenticator 1.3.0's login page (LoginHandler has no statsd)
    assert pins["jupyterhub"].major == 5, pins["jupyterhub"]
    assert pins["jupyterhub-nativeauthenticator"] == Version("1.3.0")
    assert pins["nbgrader"] == Version("0.9.6")


def test_the_lock_says_how_it_was_made():
    head = LOCK.read_text(encoding="utf-8").splitlines()[:3]
    assert any("uv pip compile pyproject.toml" in line for line in head), head
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^lock:", make, re.M) and "uv pip compile pyproject.toml" in make
    for extra in EXTRAS:
        assert f"--extra {extra}" in make and f"--extra {extra}" in "\n".join(head), extra


def test_every_installer_keeps_to_the_lock():
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    installs = [line for line in make.splitlines() if "pip install" in line and "-e " in line]
    assert installs and all("-c $(LOCK)" in line for line in installs), installs
    assert re.search(r"^\$\(VENV\)/\.installed:.*\$\(LOCK\)", make, re.M)  # a new lock reinstalls
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip[0] == "-c requirements.lock", pip[:1]
    # conda installs nothing but Python and pip: every package is pip's, under the lock
    assert {d for d in env["dependencies"] if isinstance(d, str)} == {"python=3.12", "pip"}
    image = (REPO / "deploy" / "z2jh" / "build_image.sh").read_text(encoding="utf-8")
    assert "environment.yml" in image and "requirements.lock" not in re.findall(
        r"rm -rf ([^\n]*)", image)[0]            # the image is built from the same file


def test_this_environment_holds_the_pins():
    """The suite runs on the locked versions (make reinstalls when the lock changes)."""
    pins = lock_pins()
    wrong = {}
    for name, version in pins.items():
        try:
            have = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            wrong[name] = "missing"
            continue
        if have != version:
            wrong[name] = f"{have} installed, {version} locked"
    assert not wrong, f"not the locked versions (run make setup): {wrong}"
