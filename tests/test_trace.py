"""course_lib.trace: a job's PyTorch profiler traces (chapter 8, "Your own job"),
on the real traces shipped in course_lib/data/traces (SOURCES.md there)."""

import gzip
import json

import pytest

from course_lib import trace as T
from course_lib.apps import cli

JOBS = ("hta_sampled_2ranks", "hta_allreduce_a100", "hta_v100_2ranks")


@pytest.fixture(scope="module")
def jobs():
    return {name: T.read_job(T.example_trace_dir(name)) for name in JOBS}


def _raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def test_three_real_jobs_read_with_their_steps(jobs):
    assert [len(jobs[n].ranks) for n in JOBS] == [2, 1, 1]
    assert jobs["hta_sampled_2ranks"].steps == [551, 552]
    assert jobs["hta_allreduce_a100"].steps == [4, 5, 6]
    assert jobs["hta_v100_2ranks"].ranks[0].world_size == 2
    assert jobs["hta_sampled_2ranks"].ranks[0].world_size == 128


@pytest.mark.parametrize("name", JOBS)
def test_step_parts_add_up(jobs, name):
    for r in jobs[name].ranks:
        for s in r.steps:
            assert s["hidden_s"] <= min(s["comm_s"], s["compute_s"]) + 1e-12
            assert s["exposed_s"] == pytest.approx(s["comm_s"] - s["hidden_s"])
            assert s["n_nccl"] > 0 and s["comm_s"] > 0 and s["compute_s"] > 0


def test_step_length_and_nccl_kernels_are_the_files_own(jobs):
    """Against the raw events: the ProfilerStep spans and the NCCL kernel
    durations, read without the module."""
    path = T.example_trace_dir("hta_allreduce_a100") / "nccl_data.json.gz"
    ev = _raw(path)["traceEvents"]
    steps = {e["name"]: e["dur"] * 1e-6 for e in ev if str(e.get("name", "")).startswith(
        "ProfilerStep#")}
    rank = jobs["hta_allreduce_a100"].ranks[0]
    for s in rank.steps:
        assert s["step_s"] == pytest.approx(steps[f"ProfilerStep#{s['step']}"])
    nccl = sorted(e["dur"] * 1e-6 for e in ev
                  if e.get("cat") == "kernel" and e["name"].startswith("nccl"))
    mine = sorted(c["time_s"] for c in rank.collectives)      # those launched in a step
    assert 15 <= len(mine) <= len(nccl)
    assert all(min(abs(t - n) for n in nccl) < 1e-8 for t in mine)   # ts ~ 4e12 us: ns rounding
    ar = [c for c in rank.collectives if c["collective"] == "allreduce"]
    assert {c["n_bytes"] for c in ar} >= {6637568 * 4}          # In msg nelems x float


def test_union_and_overlap():
    a = T._union([(0, 2), (1, 3), (5, 6)])
    assert a == [[0, 3], [5, 6]] and T._length(a) == 4
    assert T._overlap(a, T._union([(2, 5.5)])) == pytest.approx(1.5)


def test_skew_names_the_straggler(jobs):
    job = jobs["hta_sampled_2ranks"]
    for k in job.skew:
        comp = {r.rank: r.step(k["step"])["compute_s"] for r in job.ranks}
        assert k["straggler_rank"] == max(comp, key=comp.get)
        assert k["skew_s"] == pytest.approx(max(comp.values()) - min(comp.values()))
        assert k["skew_s"] > 0


def test_prediction_beside_each_collective(jobs):
    rows = T.predict_collectives(jobs["hta_allreduce_a100"], "gpu=A100;gpus_per_node=2")
    kinds = {r["collective"] for r in rows}
    assert kinds == {"allreduce", "broadcast"}
    assert all(r["predicted_s"] > 0 and r["measured_s"] > 0 for r in rows)
    # a bigger AllReduce is predicted slower on the same machine
    ar = sorted((r for r in rows if r["collective"] == "allreduce"), key=lambda r: r["n_bytes"])
    assert ar[0]["predicted_s"] < ar[-1]["predicted_s"]
    no_size = T.predict_collectives(jobs["hta_v100_2ranks"], "gpu=V100;gpus_per_node=8;"
                                    "fabric=cube-mesh")
    assert all(r["predicted_s"] is None and r["note"] for r in no_size)


def test_prediction_calibrated_on_a_log(jobs):
    from course_lib.hardware import data_path

    log = data_path("example_logs", "h100_g8_allreduce_v2.17.txt").read_text()
    plain = T.predict_collectives(jobs["hta_allreduce_a100"], "gpu=H100;gpus_per_node=8")
    cal = T.predict_collectives(jobs["hta_allreduce_a100"], "gpu=H100;gpus_per_node=8",
                                log=log)
    assert [r["predicted_s"] for r in plain] != [r["predicted_s"] for r in cal]


def test_bad_and_truncated_traces_name_the_file(tmp_path):
    src = T.example_trace_dir("hta_allreduce_a100") / "nccl_data.json.gz"
    cut = tmp_path / "cut" / "rank0.json.gz"
    cut.parent.mkdir()
    cut.write_bytes(src.read_bytes()[:5000])
    with pytest.raises(ValueError, match=r"rank0\.json\.gz: the gzip file is truncated"):
        T.read_job(cut.parent)
    half = tmp_path / "half.json"
    half.write_text(gzip.decompress(src.read_bytes()).decode()[:100000])
    with pytest.raises(ValueError, match=r"half\.json: not a complete JSON trace"):
        T.read_rank_trace(half)
    data = _raw(src)
    cpu_only = tmp_path / "cpu.json"
    cpu_only.write_text(json.dumps({**data, "traceEvents": [
        e for e in data["traceEvents"] if e.get("cat") != "kernel"]}))
    with pytest.raises(ValueError, match=r"cpu\.json: no GPU kernels"):
        T.read_rank_trace(cpu_only)
    no_steps = tmp_path / "nosteps.json"
    no_steps.write_text(json.dumps({**data, "traceEvents": [
        e for e in data["traceEvents"] if not str(e.get("name", "")).startswith("Profiler")]}))
    with pytest.raises(ValueError, match=r"nosteps\.json: no 'ProfilerStep#N'"):
        T.read_rank_trace(no_steps)
    other = tmp_path / "x.json"
    other.write_text('{"a": 1}')
    with pytest.raises(ValueError, match=r"x\.json: no 'traceEvents'"):
        T.read_rank_trace(other)
    with pytest.raises(ValueError, match="no trace files"):
        T.read_job(_empty(tmp_path))


def _empty(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_cli_prints_the_report_and_refuses_bad_input(capsys, tmp_path):
    d = str(T.example_trace_dir("hta_sampled_2ranks"))
    assert cli.main(["trace", d]) == 0
    out = capsys.readouterr().out
    assert "straggler rank 1" in out and "hidden behind compute" in out
    assert cli.main(["trace", str(T.example_trace_dir("hta_allreduce_a100")), "--cluster",
                     "gpu=A100;gpus_per_node=2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["collectives"] and data["summary"]["n_ranks_read"] == 1
    assert cli.main(["trace", str(tmp_path)]) == 2
    assert "no trace files" in capsys.readouterr().err
    assert cli.main(["trace", d, "--log", "x.txt"]) == 2
    assert "--cluster" in capsys.readouterr().err


def test_what_chapter_8_says_about_the_shipped_job(jobs):
    """Chapter 8's "Your own job" prose reads these numbers off the shipped trace."""
    job = jobs["hta_sampled_2ranks"]
    s = job.summary()
    assert 0.25 < s["comm_s"] / s["step_s"] < 0.4            # "about a third ... in NCCL"
    assert s["hidden_share"] < 0.2                            # "hides less than a fifth"
    assert all(k["straggler_rank"] == 1 and 0.025 < k["skew_s"] < 0.035 for k in job.skew)
    assert 0.55 < s["step_s"] < 0.65                          # "each 0.6 s step"
