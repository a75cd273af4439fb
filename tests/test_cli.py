"""The one command line, python -m course_lib COMMAND (course_lib/apps/cli.py):
its commands, its nccl-tests size reading, its table printer, the old names."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib import predict
from course_lib.apps import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text, expected", [
    ("1M", 2**20), ("1m", 2**20), ("4K", 4096), ("4k", 4096), ("16G", 16 * 2**30),
    ("2g", 2 * 2**30), ("0.5M", 2**19), (" 128M ", 128 * 2**20),
    # the course's explicit units keep their meaning
    ("8", 8), ("64MB", 64e6), ("1 GB", 1e9), ("1GiB", 2**30), ("2 KiB", 2048)])
def test_sizes_read_as_nccl_tests_reads_them(text, expected):
    assert cli.parse_nccl_size(text, "--min") == expected


@pytest.mark.parametrize("bad", ["lots", "1X", "M", "-1M", "", "1MM"])
def test_bad_sizes_name_the_option(bad):
    with pytest.raises(ValueError, match="--max"):
        cli.parse_nccl_size(bad, "--max")


def test_predict_min_max_are_binary_as_in_nccl_tests(capsys):
    assert cli.main(["predict", "allreduce", "--min", "1M", "--max", "8M", "--json"]) == 0
    sizes = [r["n_bytes"] for r in json.loads(capsys.readouterr().out)]
    assert sizes == [2**20, 2**21, 2**22, 2**23]
    assert cli.main(["predict", "allreduce", "--min", "1MB", "--max", "4MB", "--json"]) == 0
    assert [r["n_bytes"] for r in json.loads(capsys.readouterr().out)] == [1e6, 2e6, 4e6]


def test_predict_table_has_nccl_tests_columns(capsys):
    assert cli.main(["predict", "allgather", "--gpu", "A100", "--min", "1K",
                     "--max", "4K"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = [line for line in out if line.startswith("#")]
    rows = [line.split() for line in out if not line.startswith("#")]
    assert "busbw(GB/s)" in head[1] and "largest size 4 KiB" in head[-1]
    assert [int(r[0]) for r in rows] == [1024, 2048, 4096]
    assert [int(r[1]) for r in rows] == [256, 512, 1024]        # float32 elements
    assert all(float(r[4]) < float(r[3]) * 2 for r in rows)     # busbw = algbw (n-1)/n


def test_format_table_aligns_header_and_rows():
    text = cli.format_table([("a", 1.0), ("bbb", 22.5)], ["<4", ">6.1f"], ["k", "v"])
    assert text.splitlines() == ["# k         v", "  a       1.0", "  bbb    22.5"]
    with pytest.raises(ValueError, match="columns"):
        cli.format_table([(1,)], [">3", ">3"])


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in cli.COMMANDS:
        assert command in out


@pytest.mark.parametrize("argv", [[], ["nonsense"], ["predict"], ["catalog", "--nope"],
                                  ["predict", "allreduce", "--step-factor", "1"],
                                  ["site"]])
def test_bad_command_lines_exit_2_with_usage(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: python -m course_lib" in err and "error:" in err
    assert "Traceback" not in err


def test_catalog_prints_the_markdown_catalog(capsys):
    from course_lib.hardware import catalog_table

    assert cli.main(["catalog"]) == 0
    assert capsys.readouterr().out.strip() == catalog_table().strip()


def test_doctor_and_site_run_alone_with_the_same_options(capsys):
    from course_lib.apps import doctor, site

    for module, word in ((doctor, "--quick"), (site, "outdir")):
        assert module.main(["--help"]) == 0
        alone = capsys.readouterr().out
        assert cli.main([module.__name__.rsplit(".", 1)[1], "--help"]) == 0
        assert word in alone and word in capsys.readouterr().out
    assert site.main([]) == 2 and "outdir" in capsys.readouterr().err


def test_the_models_hold_no_command_line():
    """The predict and lab commands live in the apps; the model layers keep
    no argparse (and no alias that would import the apps back)."""
    assert not hasattr(predict, "main")
    for rel in ("predict.py", "measure/__init__.py", "hardware.py", "hardware/__init__.py"):
        path = ROOT / "course_lib" / rel
        if path.exists():
            assert "argparse" not in path.read_text(), rel


def test_python_m_course_lib_site_runs(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for argv in (["-m", "course_lib.apps.site", "--help"], ["-m", "course_lib", "site", "--help"]):
        p = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "OUTDIR" in p.stdout.upper(), p.stderr
    assert not (ROOT / "course_lib" / "site.py").exists()     # the old name is gone


# --- predict --from-log: measured vs calibrated model vs what-if ---------------------------
EXAMPLE_LOGS = ROOT / "course_lib" / "data" / "example_logs"


def _table(out):
    return [line.split() for line in out.splitlines() if line and not line.startswith("#")]


def test_from_log_prints_measured_model_and_what_if(capsys):
    log = EXAMPLE_LOGS / "a3mega_h100_2x8_mpi_allreduce.txt"
    assert cli.main(["predict", "--from-log", str(log), "--nic", "TCPXO-200",
                     "--fit-sizes", "4K,1M,64M,1G", "--what-if", "nodes=8,nics=4"]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    text = log.read_text()
    # one line per row of the log, sizes and times as the log prints them
    logged = [ln.split() for ln in text.splitlines()
              if ln.strip() and ln.split()[0].isdigit() and "float" in ln]
    assert [int(r[0]) for r in rows] == [int(r[0]) for r in logged]
    assert [float(r[2]) for r in rows] == pytest.approx([float(r[5]) for r in logged], abs=0.06)
    assert sum(r[-3] == "*" for r in rows) == 4            # the four fitted sizes
    assert "2 node(s) x 8 H100" in out and "what-if nodes=8,nics=4" in out
    assert "8 node(s) x 8 H100 (nvswitch, 4x TCPXO-200 per node" in out
    # model within its range; the what-if (4x the ranks, half the NICs) slower at 8 GiB
    last = rows[-1]
    assert float(last[5]) <= float(last[4]) <= float(last[6])
    assert float(last[-1]) > float(last[2])
    assert "over the 27 rows not fitted" in out


def test_from_log_reads_nodes_and_ranks_from_the_log(capsys):
    log = EXAMPLE_LOGS / "h100_g8_allreduce_v2.17.txt"
    assert cli.main(["predict", "--from-log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "1 node(s) x 8 H100" in out and "8 ranks" in out
    errors = [abs(float(r[7].rstrip("%"))) for r in _table(out)]
    assert sorted(errors)[len(errors) // 2] < 5                     # median within 5 %


@pytest.mark.parametrize("args, match", [
    (["--from-log", "/no/such/log.txt"], "cannot read"),
    (["--from-log", str(EXAMPLE_LOGS / "a3mega_h100_2x8_mpi_allreduce.txt")], "--nic"),
    (["--from-log", str(EXAMPLE_LOGS / "h100_g8_allreduce_v2.17.txt"), "--what-if", "racks=2"],
     "--what-if"),
    (["--from-log", str(EXAMPLE_LOGS / "h100_g8_allreduce_v2.17.txt"), "--fit-sizes", "3K"],
     "--fit-sizes"),
    (["--from-log", str(EXAMPLE_LOGS / "h100_g8_allreduce_v2.17.txt"), "--gpus-per-node", "4"],
     "n_ranks"),
    (["allreduce", "--what-if", "nodes=2"], "--from-log"),
    (["--from-log", str(ROOT / "tests/fixtures/nccl_logs/a100_g8_c0_alltoall.txt")],
     "predict COLLECTIVE --from-log FILE"),
    ([], "collective"),
])
def test_from_log_bad_arguments_exit_2_naming_the_option(args, match, capsys):
    assert cli.main(["predict", *args]) == 2
    assert match in capsys.readouterr().err


def test_what_if_parsing():
    assert cli.parse_what_if("nodes=8,nics=4") == {"nodes": 8, "nics": 4}
    assert cli.parse_what_if(" nic=XDR ") == {"nic": "XDR"}
    for bad in ["", "nodes", "nodes=", "planets=3"]:
        with pytest.raises(ValueError, match="--what-if"):
            cli.parse_what_if(bad)
