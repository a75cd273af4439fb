"""The fresh nccl-tests logs of course_lib/data/validation/fresh_logs (issue 22).

Light checks only: every log parses with the course's reader, is a real sweep
(>= 10 sizes), names the machine it ran on in SOURCES.md and index.json, and
that machine builds a Cluster whose rank count is the log's.  How well the
calibration predicts these runs is measured in
benchmarks/bench_calibrate_fresh.py, not asserted here.
"""

from __future__ import annotations

import ast
import csv
import json

import pytest

import course_lib as cl
from course_lib.clusters import cluster_from_spec
from course_lib.hardware import data_path

FOLDER = data_path("validation", "fresh_logs")
INDEX = json.loads((FOLDER / "index.json").read_text(encoding="utf-8"))
LOGS = sorted(p.name for p in FOLDER.glob("*.txt"))


def test_every_log_is_indexed_and_every_entry_has_its_log():
    assert len(LOGS) >= 6
    assert sorted(INDEX) == LOGS


@pytest.mark.parametrize("name", LOGS)
def test_log_parses_into_a_sweep_of_at_least_ten_sizes(name):
    entry = INDEX[name]
    rows = cl.read_nccl_tests((FOLDER / name).read_text(encoding="utf-8"),
                              collective=entry["collective"])
    sizes = sorted({r["n_bytes"] for r in rows})
    assert len(sizes) >= 10, f"{name}: {len(sizes)} sizes"
    assert {r["collective"] for r in rows} == {entry["collective"]}
    assert all(r["time_s"] > 0 for r in rows)
    # the machine in index.json has the log's rank count
    clu = cluster_from_spec(entry["cluster"])
    assert isinstance(clu, cl.Cluster)
    assert {r["n_ranks"] for r in rows} == {clu.n_ranks}, name


@pytest.mark.parametrize("name", LOGS)
def test_sources_md_names_the_file_its_source_and_cluster_arguments(name):
    text = (FOLDER / "SOURCES.md").read_text(encoding="utf-8")
    line = next((ln for ln in text.splitlines() if ln.startswith(f"| `{name}`")), None)
    assert line is not None, f"SOURCES.md has no table row for {name}"
    repo_path = INDEX[name]["source"].split(" @")[0]
    assert repo_path.split(":")[0] in line  # the repository
    assert "cluster(" in line


@pytest.mark.parametrize("name", LOGS)
def test_cluster_arguments_in_sources_md_match_index_json(name):
    text = (FOLDER / "SOURCES.md").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| `{name}`"))
    call = line.split("`cluster(")[1].split(")`")[0]
    built = cl.cluster(*ast.literal_eval(f"({call},)"))  # the row's own arguments
    spec = cluster_from_spec(INDEX[name]["cluster"])
    for attr in ("gpu", "gpus_per_node", "nodes", "fabric", "nic", "nics_per_node"):
        assert getattr(built, attr) == getattr(spec, attr), (name, attr)


def test_fresh_runs_are_not_in_the_validation_csv():
    with open(data_path("validation", "nccl_tests_public.csv"), newline="") as fh:
        sources = " ".join(row["source"] for row in csv.DictReader(fh))
    for entry in INDEX.values():
        repo = entry["source"].split(":")[0]
        assert repo not in sources, f"{repo} is already a source of the validation CSV"
