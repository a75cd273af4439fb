"""Tests of the labs' command line: python -m course_lib lab ... (course_lib/apps/cli.py)."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.apps.cli import main as course_cli
from course_lib.measure import mpi_available

ROOT = Path(__file__).resolve().parents[1]


def lab(argv):
    """python -m course_lib lab ARGV..."""
    return course_cli(["lab", *argv])


def _json_out(capsys, argv):
    rc = lab(argv)
    out = capsys.readouterr().out
    return rc, json.loads(out)


def test_pageable_quick_json_and_csv(capsys, tmp_path):
    path = tmp_path / "p.csv"
    rc, recs = _json_out(capsys, ["pageable", "--quick", "--json", "--no-progress",
                                  "--csv", str(path)])
    assert rc == 0 and recs
    for r in recs:
        assert {"variant", "n_bytes", "median_s", "spread_s"} <= set(r)
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == len(recs) and "samples_s" not in rows[0]


def test_batching_text_output(capsys):
    assert lab(["batching", "--quick", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "many-small" in out and "per_call_overhead_s" in out


def test_kernel_bypass_save(capsys, tmp_path):
    rc = lab(["kernel_bypass", "--quick", "--no-progress", "--save", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "kernel-bypass.csv").is_file()
    assert json.loads((tmp_path / "kernel-bypass.json").read_text())["lab"] == "kernel-bypass"


@pytest.mark.skipif(not mpi_available()[0] and os.environ.get("CI") != "true",
                    reason=f"MPI is not available here: {mpi_available()[1]}")
def test_allreduce_json_has_busbw(capsys):
    rc, recs = _json_out(capsys, ["allreduce", "--quick", "--json", "--no-progress",
                                  "--ranks", "2"])
    assert rc == 0 and len(recs) == 3
    assert all(r["busbw_bytes_per_s"] > 0 and r["wrong"] == 0 for r in recs)


def test_gpu_copies_without_gpu_exits_0_with_skipped(capsys, monkeypatch):
    from course_lib.measure import gpu
    monkeypatch.setattr(gpu, "gpu_available", lambda: (False, "no GPU here", 0))
    rc, out = _json_out(capsys, ["gpu-copies", "--json"])
    assert rc == 0 and out == [{"lab": "gpu-copies", "skipped": "no GPU here"}]
    assert lab(["gpu-copies"]) == 0
    assert "skipped -- no GPU here" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["bogus"], ["pageable", "--nope"],
                                  ["pageable", "--ranks", "4"],
                                  ["allreduce", "--ranks", "four"],
                                  ["allreduce", "--ranks", "1"],
                                  ["allreduce", "--timeout", "-3"]])
def test_bad_arguments_exit_2_with_a_message(capsys, argv):
    assert lab(argv) == 2
    assert capsys.readouterr().err.strip()


def test_help_exits_0(capsys):
    assert lab(["--help"]) == 0
    assert "Exit codes" in capsys.readouterr().out


def test_dispatch_through_python_m(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "course_lib", "lab", "nonsense"],
                       cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_import_needs_no_mpi_cupy_or_display():
    code = ("import sys, course_lib.measure; "
            "bad = [m for m in ('mpi4py', 'cupy', 'matplotlib.pyplot') if m in sys.modules]; "
            "print(bad)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("DISPLAY", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]"
