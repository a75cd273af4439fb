"""Tests of course_lib.measure.mpi_allreduce and mpi_worker: a real MPI AllReduce."""

import json
import os
import subprocess

import pytest

from course_lib.analytic import ring_allreduce_time_s
from course_lib.measure import mpi_allreduce
from course_lib.measure.mpi_allreduce import (allreduce_from_json, allreduce_lab,
                                              find_mpiexec, mpi_available,
                                              mpiexec_command)
from course_lib.measure.mpi_worker import parse_sizes

needs_mpi = pytest.mark.skipif(
    not mpi_available()[0] and os.environ.get("CI") != "true",
    reason=f"MPI is not available here: {mpi_available()[1]}")


def test_parse_sizes():
    assert parse_sizes("1KiB:16KiB") == [1024, 4096, 16384]
    assert parse_sizes("1KiB:8KiB:2") == [1024, 2048, 4096, 8192]
    assert parse_sizes("64, 8") == [8, 64]
    for bad in ("8:4", "1K:2K:1", "1:2:3:4", ""):
        with pytest.raises(ValueError, match="sizes"):
            parse_sizes(bad)


def test_mpiexec_command_for_a_cluster():
    cmd = mpiexec_command(16, [1024, 2048], mpiexec="mpiexec", hosts=["a", "b"],
                          ppn=8, out="ar.json")
    assert cmd[:7] == ["mpiexec", "-n", "16", "-hosts", "a,b", "-ppn", "8"]
    assert cmd[cmd.index("--sizes") + 1] == "1024,2048"
    assert cmd[-2:] == ["--out", "ar.json"]
    with pytest.raises(ValueError, match="n_ranks"):
        mpiexec_command(0, [8])


@needs_mpi
def test_mpiexec_is_found_next_to_python():
    path = find_mpiexec()
    assert path and os.access(path, os.X_OK)


@needs_mpi
def test_four_ranks_allreduce_is_correct_and_reported_like_nccl_tests():
    res = allreduce_lab(4, (4096, 262144), repeats=3, progress=False,
                        timeout_s=120)
    rows = res.select("mpi-4ranks")
    assert [r["n_bytes"] for r in rows] == [4096, 262144]
    for r in rows:
        assert r["wrong"] == 0                      # every rank got 1+2+3+4
        assert r["algbw_bytes_per_s"] == pytest.approx(r["n_bytes"] / r["median_s"])
        # nccl-tests: busbw = algbw * 2(n-1)/n = 1.5 algbw for n = 4
        assert r["busbw_bytes_per_s"] == pytest.approx(1.5 * r["algbw_bytes_per_s"])
        assert r["model_time_s"] > 0
    run = res.metadata["runs"][0]
    assert run["n_ranks"] == 4 and sum(run["ranks_per_host"].values()) == 4
    assert res.summary["n4_bw_bytes_per_s"] > 0 and res.summary["n4_alpha_s"] >= 0


def _synthetic_worker_json(tmp_path, n, alpha_step, bw):
    sizes = [4**k for k in range(5, 12)]
    recs = []
    for s in sizes:
        t = ring_allreduce_time_s(s, n, bw, alpha_step)
        recs.append({"n_bytes": s, "count": s // 4, "dtype": "float32", "op": "sum",
                     "iters": 10, "samples_s": [t * 0.99, t, t * 1.02], "wrong": 0})
    p = tmp_path / "ar.json"
    p.write_text(json.dumps({"n_ranks": n, "hosts": ["h"], "records": recs}))
    return p


def test_fit_recovers_the_ring_model_from_a_worker_file(tmp_path):
    path = _synthetic_worker_json(tmp_path, 8, 3e-6, 20e9)
    res = allreduce_from_json(path)
    assert res.summary["n8_alpha_s"] == pytest.approx(3e-6, rel=1e-6)
    assert res.summary["n8_bw_bytes_per_s"] == pytest.approx(20e9, rel=1e-6)
    for r in res.records:
        assert r["model_time_s"] == pytest.approx(r["median_s"], rel=1e-6)
    # busbw = D/t with D = 2(n-1)/n S: B scaled down by the latency share,
    # B / (1 + A B / D) with A = 2(n-1) alpha -- tending to B at large sizes
    big = res.records[-1]
    d = 2 * 7 / 8 * big["n_bytes"]
    expected = 20e9 / (1 + 2 * 7 * 3e-6 * 20e9 / d)
    assert big["busbw_bytes_per_s"] == pytest.approx(expected, rel=0.005)
    assert big["busbw_bytes_per_s"] > res.records[0]["busbw_bytes_per_s"]
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="mpi_worker"):
        allreduce_from_json(bad)


def test_missing_mpi_skips_with_a_reason(monkeypatch):
    monkeypatch.setattr(mpi_allreduce, "mpi_available",
                        lambda: (False, "mpi4py is not installed"))
    res = allreduce_lab(2, quick=True, progress=False)
    assert res.skipped == "mpi4py is not installed" and res.records == []


@needs_mpi
def test_a_hung_job_is_killed_at_the_timeout(tmp_path):
    script = tmp_path / "sleepy"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(0o755)
    with pytest.raises(TimeoutError, match="killed"):
        allreduce_lab(2, (4096,), progress=False, timeout_s=1.0, mpiexec=str(script))
    out = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True)
    assert out.stdout.strip() == ""


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_ranks"):
        allreduce_lab(1, progress=False)
    with pytest.raises(ValueError, match="multiples of 4"):
        allreduce_lab(2, (6,), progress=False)
    with pytest.raises(ValueError, match="timeout_s"):
        allreduce_lab(2, timeout_s=0, progress=False)
