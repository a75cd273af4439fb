"""Tests of course_lib.measure.mpi_allreduce and mpi_worker: a real MPI AllReduce."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from course_lib.analytic import ring_allreduce_time_s
from course_lib.measure import mpi_allreduce
from course_lib.measure.mpi_allreduce import (allreduce_from_json, allreduce_lab,
                                              find_mpiexec, mpi_available,
                                              mpiexec_command)
from course_lib.measure.mpi_worker import parse_sizes

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from build_mpi4py_openmpi import build_mpi4py_for_open_mpi  # noqa: E402

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
    # 4 KiB and 4 MiB: far enough apart that the fit's slope is positive
    # even on a busy machine
    res = allreduce_lab(4, (4096, 4 << 20), repeats=3, progress=False,
                        timeout_s=120)
    rows = res.select("mpi-4ranks")
    assert [r["n_bytes"] for r in rows] == [4096, 4 << 20]
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
    monkeypatch.setattr(mpi_allreduce, "mpi_setup",
                        lambda: (None, "", "mpi4py is not installed"))
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


# --- which MPI, which launcher (MPICH and Open MPI, as root) -------------------
from course_lib.measure.mpi_allreduce import (worker_env, flavour_of,  # noqa: E402
                                              mpi_setup)


def test_flavour_of_library_and_launcher_texts():
    assert flavour_of("MPICH Version:      5.0.2\nMPICH Release date: ...") == "mpich"
    assert flavour_of("HYDRA build details:\n    Version: 4.2.0") == "mpich"
    assert flavour_of("Open MPI v4.1.4, package: Debian OpenMPI") == "openmpi"
    assert flavour_of("mpiexec.openmpi (OpenRTE) 4.1.4") == "openmpi"
    assert flavour_of("mpiexec (Open MPI) 5.0.7") == "openmpi"
    assert flavour_of("Intel(R) MPI Library 2021.10") == "other"


def test_open_mpi_as_root_gets_its_opt_in_and_oversubscription(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("OMPI_", "PRTE_", "MPIR_CVAR")):
            monkeypatch.delenv(k)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    env = worker_env(64, None, "openmpi")          # more ranks than any test box has cores
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert env["OMPI_MCA_rmaps_base_oversubscribe"] == "1"                  # Open MPI 4
    assert env["PRTE_MCA_rmaps_default_mapping_policy"] == ":oversubscribe"  # Open MPI 5
    assert not any(k.startswith("MPIR_CVAR") for k in env)
    # not root, few ranks: none of it; a user's own setting always wins
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    env = worker_env(1, None, "openmpi")
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in env and "OMPI_MCA_rmaps_base_oversubscribe" not in env
    monkeypatch.setenv("MPIR_CVAR_POLLS_BEFORE_YIELD", "7")
    env = worker_env(64, None, "mpich")
    assert env["MPIR_CVAR_POLLS_BEFORE_YIELD"] == "7" and env["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "1"
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in env


def test_no_matching_launcher_gives_the_fix(monkeypatch):
    """mpi4py built against Open MPI, only MPICH's mpiexec around: skip, saying why and how."""
    monkeypatch.setattr(mpi_allreduce, "mpi_library_version",
                        lambda env=None, timeout_s=30.0: "Open MPI v4.1.4, package: Debian")
    monkeypatch.setattr(mpi_allreduce, "launcher_version",
                        lambda path, timeout_s=5.0: "HYDRA build details: Version 5.0.2")
    exe, flavour, why = mpi_setup()
    assert exe is None and flavour == "openmpi"
    assert "Open MPI v4.1.4" in why and "apt-get install openmpi-bin" in why
    res = allreduce_lab(2, quick=True, progress=False)
    assert res.skipped == why and res.records == []


def test_the_launcher_matches_mpi4py_library(monkeypatch):
    lib = "Open MPI v4.1.4"
    monkeypatch.setattr(mpi_allreduce, "mpi_library_version", lambda env=None, timeout_s=30.0: lib)
    versions = {}
    monkeypatch.setattr(mpi_allreduce, "launcher_version",
                        lambda path, timeout_s=5.0: versions.get(path, ""))
    monkeypatch.setattr(mpi_allreduce, "_candidates",
                        lambda flavour: ["/bin/sh", "/bin/true"])
    versions.update({"/bin/sh": "HYDRA build details", "/bin/true": "mpirun (Open MPI) 5.0.3"})
    assert find_mpiexec() == "/bin/true"          # MPICH's launcher is passed over
    assert find_mpiexec("mpich") == "/bin/sh"


def _lab_cli(env, timeout=300):
    return subprocess.run([sys.executable, "-m", "course_lib", "lab", "allreduce", "--quick",
                           "--no-progress"], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


@needs_mpi
def test_cli_quick_allreduce_runs_under_the_venv_mpich():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = _lab_cli(env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "skipped" not in out.stdout and "mpi-4ranks" in out.stdout


def _need_open_mpi():
    """Debian's Open MPI, and mpi4py built against it into a cache folder
    (built once: a few minutes; ``bash scripts/ensure_openmpi.sh`` installs Open MPI)."""
    why = None
    if not (shutil.which("mpicc.openmpi") and shutil.which("mpiexec.openmpi")):
        why = ("Open MPI is not installed (mpicc.openmpi, mpiexec.openmpi): "
               "bash scripts/ensure_openmpi.sh")
    if why is None:
        try:
            return build_mpi4py_for_open_mpi()
        except RuntimeError as exc:
            why = str(exc)
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.mark.slow
def test_cli_quick_allreduce_runs_under_open_mpi_as_this_user():
    """The H200 machine's case: mpi4py built against Open MPI, and the plain
    ``mpiexec`` first on PATH belonging to another MPI (here the venv's MPICH).
    The lab must pick Open MPI's launcher and, as root, opt in."""
    target = _need_open_mpi()
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("OMPI_", "PRTE_")):
            del env[k]
    env["PYTHONPATH"] = os.pathsep.join([str(target), str(REPO)])
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    probe = subprocess.run([sys.executable, "-c", "import mpi4py; mpi4py.rc.initialize = False;"
                            "from mpi4py import MPI; print(MPI.Get_library_version())"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert "Open MPI" in probe.stdout, probe.stderr[-1000:]
    out = _lab_cli(env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "skipped" not in out.stdout and "mpi-4ranks" in out.stdout
    script = ("import json; from course_lib.measure import allreduce_lab;"
              "r = allreduce_lab(2, (4096,), repeats=1, progress=False);"
              "run = r.metadata['runs'][0];"
              "print(json.dumps({'m': r.metadata['mpi_flavour'], 'x': r.metadata['mpiexec'],"
              " 'lib': run['mpi_library'], 'env': run['env'], 'wrong': r.records[0]['wrong']}))")
    meta = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert meta.returncode == 0, meta.stderr[-2000:]
    info = json.loads(meta.stdout.strip().splitlines()[-1])
    assert info["m"] == "openmpi" and "Open MPI" in info["lib"] and info["wrong"] == 0
    assert mpi_allreduce.flavour_of(mpi_allreduce.launcher_version(info["x"])) == "openmpi"
    if os.geteuid() == 0:
        assert info["env"]["OMPI_ALLOW_RUN_AS_ROOT"] == "1"


# --- the overlap lab (chapter 8): compute, buckets, Iallreduce, a straggler ----------------
def _check_overlap(res):
    from course_lib.trace import overlap_vs_model

    assert res.skipped is None and res.metadata["wrong"] == 0
    kinds = {r["variant"] for r in res.records}
    assert kinds == {"compute", "comm-1", "sequential-1", "overlap-1", "comm-4",
                     "sequential-4", "overlap-4", "straggler-4"}
    s = res.summary
    # the straggler (rank 0 sleeps 10 ms) holds every rank's step back
    assert s["straggler_s"] > s["compute_s"] + 0.5 * res.metadata["straggler_s"]
    rows = overlap_vs_model(res)
    assert {r["variant"] for r in rows} == kinds - {"compute", "comm-1", "comm-4"}
    ratios = sorted(r["ratio"] for r in rows)
    # measured / model on a loaded 2-core machine: 0.75-1.25 seen under load 7;
    # each within 0.6-1.6, their median within 0.8-1.25
    assert all(0.6 < x < 1.6 for x in ratios), rows
    assert 0.8 < ratios[len(ratios) // 2] < 1.25, rows
    return rows


@needs_mpi
def test_overlap_lab_under_mpich_agrees_with_the_bucket_schedule():
    from course_lib.measure import run_lab

    res = run_lab("overlap", quick=True, progress=False)
    assert "MPICH" in res.metadata["mpi_library"]
    _check_overlap(res)


def test_overlap_lab_skips_with_the_reason_where_mpi_is_missing(monkeypatch):
    from course_lib.measure import mpi_overlap

    monkeypatch.setattr(mpi_overlap, "mpi_setup",
                        lambda: (None, "mpich", "mpi4py is not installed: pip install mpi4py"))
    res = mpi_overlap.overlap_lab(quick=True, progress=False)
    assert res.skipped and "mpi4py" in res.skipped and not res.records


@pytest.mark.parametrize("kw, msg", [({"n_ranks": 1}, "n_ranks"), ({"backward_s": 0}, "backward_s"),
                                     ({"buckets": [0]}, "buckets"),
                                     ({"grad_bytes": "1 banana"}, "grad_bytes"),
                                     ({"straggler_s": -1}, "straggler_s")])
def test_overlap_lab_bad_arguments(kw, msg):
    from course_lib.measure import overlap_lab

    with pytest.raises((ValueError, TypeError), match=msg):
        overlap_lab(**kw, progress=False)


@pytest.mark.slow
def test_overlap_lab_under_open_mpi():
    """The same lab where mpi4py was built against Debian's Open MPI (as root:
    the lab's opt-in variables)."""
    target = _need_open_mpi()
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("OMPI_", "PRTE_")):
            del env[k]
    env["PYTHONPATH"] = os.pathsep.join([str(target), str(REPO)])
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    script = ("import json; from course_lib.measure import overlap_lab;"
              "from course_lib.trace import overlap_vs_model;"
              "r = overlap_lab(quick=True, progress=False);"
              "print('JSON' + json.dumps(r.to_dict()))")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    from course_lib.measure.harness import LabResult

    data = json.loads(out.stdout.split("JSON", 1)[1])
    res = LabResult.from_dict(data)
    assert res.metadata["mpi_flavour"] == "openmpi" and "Open MPI" in res.metadata["mpi_library"]
    _check_overlap(res)
