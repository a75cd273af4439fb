"""A non-editable install works: build the wheel, install it into a folder,
and from outside the repository read every data file and print the catalog.

The data (``course_lib/data/``) ships as package data and is read through
importlib.resources; an editable install or a source checkout would hide a
reader that still looks beside the repository.
"""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
DATA = REPO / "course_lib" / "data"

# What the installed package must do, run in a fresh interpreter.
PROBE = r"""
import json, pathlib, sys
import course_lib as cl
from course_lib import hardware, measure, predict

data = hardware.data_path()
files = sorted(str(p.relative_to(data)) for p in data.rglob("*") if p.is_file())
rows = hardware.calibration_rows()
curves = predict.calibration_curves()
ref = measure.h200_copies()
validation = predict.validation_rows()
topo = (predict.validation_data_dir() / "topo" / "nccl-tests-178.txt").read_text()
print(json.dumps({
    "module": cl.__file__, "data": str(data), "files": files,
    "calibration_rows": len(rows), "curves": len(curves),
    "h200_records": len(ref.records), "h200_gpu": ref.metadata.get("gpu"),
    "validation_rows": len(validation), "topo_chars": len(topo),
}))
"""


def _package_files_not_python():
    """Files of course_lib/ that are not Python source (git's list where there is one)."""
    try:
        out = subprocess.run(["git", "ls-files", "course_lib"], cwd=REPO, capture_output=True,
                             text=True, timeout=30, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = [str(p.relative_to(REPO)) for p in (REPO / "course_lib").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    return sorted(f for f in out if not f.endswith((".py", ".pyc")))


def _can_build_without_isolation():
    """setuptools, with the 'wheel' package or (from 70.1) its own bdist_wheel."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    return importlib.util.find_spec("wheel") is not None or major >= 71


@pytest.mark.slow
@pytest.mark.skipif(not _can_build_without_isolation(),
                    reason="building the wheel offline needs setuptools and the 'wheel' "
                           "package in this environment (pip install -e '.[test]')")
def test_wheel_install_reads_every_data_file_and_prints_the_catalog(tmp_path):
    # build from a copy, so that no build/ or *.egg-info lands in the checkout
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("course_lib", "autograder"):
        shutil.copytree(REPO / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(wheels)],
        cwd=src, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = wheels.glob("interconnect_city-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    left_out = [f for f in _package_files_not_python() if f not in in_wheel]
    assert not left_out, f"add these to [tool.setuptools.package-data]: {left_out}"

    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr

    outside = tmp_path / "elsewhere"     # cwd outside the repository
    outside.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = subprocess.run([sys.executable, "-c", PROBE], cwd=outside, env=env,
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout.strip().splitlines()[-1])

    # the installed copy answered, not the checkout (nor an editable install)
    assert pathlib.Path(got["module"]).is_relative_to(target)
    assert pathlib.Path(got["data"]).is_relative_to(target)
    shipped = sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*") if p.is_file())
    assert got["files"] == shipped, "every file of course_lib/data/ must be in the wheel"
    assert got["calibration_rows"] > 20 and got["curves"] >= 3
    assert got["h200_records"] > 50 and got["h200_gpu"] == "H200"
    assert got["validation_rows"] > 50 and got["topo_chars"] > 100

    catalog = subprocess.run([sys.executable, "-m", "course_lib", "catalog"], cwd=outside,
                             env=env, capture_output=True, text=True, timeout=120)
    assert catalog.returncode == 0, catalog.stderr
    assert "| gpu_hbm_bw: H200 |" in catalog.stdout
    assert len(catalog.stdout.strip().splitlines()) > 100
