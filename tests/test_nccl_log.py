"""cl.read_nccl_tests on real nccl-tests logs (tests/fixtures/nccl_logs, each
cited in its README.md): every fixture parses, and the parsed values agree
with the log's own text, with nccl-tests' busbw formulas and with its own
"Avg bus bandwidth" footer.  The expected values here are read from the
fixture text by simple independent means (a regex, a split), never copied
from the parser's output."""

import pathlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course_lib as cl
from course_lib import nccl_log

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "nccl_logs"

# fixture -> the collective to pass (None: the log names its program itself)
LOGS = {
    "dgx2_v100_g12_2019_five_collectives.txt": None,
    "a100_g8_c0_allgather.txt": "allgather",
    "a100_g8_c0_alltoall.txt": "alltoall",
    "a100_g8_c0_reducescatter.txt": "reducescatter",
    "p4d_2x8_efa_mpi_tagged_info.txt": "allreduce",
    "a3mega_h100_2x8_mpi_allreduce.txt": None,
    "h100_4x8_mpi_allgather_v2.17.txt": None,
    "h100_g8_allreduce_v2.17.txt": None,
}

TAG = re.compile(r"^\[\d+,\d+\]<stdout>:")
# a result row as a person would spot it: two integers, then a word
ROW = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]\w*\s")

# nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor
PERF_MD_FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}
GBPS = 1e9


def text_of(name):
    return (FIXTURES / name).read_text()


def raw_rows(text):
    """(line number, tokens) of every result row, found without the parser."""
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        line = TAG.sub("", line)
        if ROW.match(line):
            out.append((i, line.split()))
    return out


def test_every_fixture_is_listed_and_cited():
    files = sorted(p.name for p in FIXTURES.glob("*.txt"))
    assert files == sorted(LOGS)
    readme = (FIXTURES / "README.md").read_text()
    for name in files:
        assert name in readme, f"{name} has no source in tests/fixtures/nccl_logs/README.md"


def test_at_least_five_formats():
    """The issue's bar: fixtures of >= 5 real formats.  Told apart by what
    the texts themselves show (column set, header lines, launcher tags)."""
    traits = set()
    for name in LOGS:
        t = text_of(name)
        traits.add((
            "#wrong" in t, "root" in t.split("(elements)")[0], "Group" in t,
            "nccl-tests version" in t, "<stdout>:" in t, "NCCL INFO" in t, "N/A" in t,
        ))
    assert len(traits) >= 5


@pytest.mark.parametrize("name", sorted(LOGS))
def test_fixture_parses_row_for_row(name):
    text = text_of(name)
    rows = cl.read_nccl_tests(text, collective=LOGS[name], keep_empty=True)
    expected = raw_rows(text)
    assert len(rows) == len(expected) > 0
    assert [r["source_line"] for r in rows] == [i for i, _ in expected]
    for row, (_, toks) in zip(rows, expected):
        # the last eight columns: time algbw busbw #wrong (out-of-place), the same in-place
        t_out, alg, bus, _w, t_in, _alg_in, bus_in, _w_in = toks[-8:]
        assert row["n_bytes"] == int(toks[0])
        assert row["time_s"] == pytest.approx(float(t_out) * 1e-6, rel=1e-12)
        assert row["in_place_time_s"] == pytest.approx(float(t_in) * 1e-6, rel=1e-12)
        assert row["algbw_bytes_per_s"] == pytest.approx(float(alg) * GBPS, rel=1e-12)
        assert row["busbw_bytes_per_s"] == pytest.approx(float(bus) * GBPS, rel=1e-12)
        assert row["in_place_busbw_bytes_per_s"] == pytest.approx(float(bus_in) * GBPS,
                                                                 rel=1e-12)
        if _w == "N/A":
            assert row["wrong"] is None


@pytest.mark.parametrize("name", sorted(LOGS))
def test_header_facts_match_the_text(name):
    text = text_of(name)
    rows = cl.read_nccl_tests(text, collective=LOGS[name])
    device_lines = re.findall(r"Rank\s+(\d+)\s.*?on\s+(\S+)\s+device", text)
    hosts = list(dict.fromkeys(h for _, h in device_lines))
    ranks = {int(r) for r, _ in device_lines}
    gpus = re.findall(r"nGpus (\d+)", text)
    version = (re.findall(r"NCCL version (\d+\.\d+\.\d+)", text) or [None])[0]
    code = re.findall(r"nccl-library=(\d+)", text)
    if code:  # NCCL_VERSION_CODE since 2.9: major*10000 + minor*100 + patch
        c = int(code[0])
        version = f"{c // 10000}.{c % 10000 // 100}.{c % 100}"
    for row in rows:
        assert row["n_ranks"] == len(ranks)
        assert row["hosts"] == hosts
        assert row["n_gpus_per_process"] == int(gpus[0])
        assert row["nccl_version"] == version


@pytest.mark.parametrize("name", sorted(LOGS))
def test_busbw_is_algbw_times_the_performance_md_factor(name):
    """busbw = algbw x factor (nccl-tests doc/PERFORMANCE.md), to the printed
    rounding (2 decimals of GB/s).  nccl-tests before June 2020 (commit
    ec1b5e2, "Change all_gather/reduce_scatter algbw to match the
    documentation") printed algbw = busbw for AllGather/ReduceScatter."""
    rows = cl.read_nccl_tests(text_of(name), collective=LOGS[name])
    old_gather = "2019" in name
    checked = 0
    for r in rows:
        n, alg, bus = r["n_ranks"], r["algbw_bytes_per_s"], r["busbw_bytes_per_s"]
        f = PERF_MD_FACTOR[r["collective"]](n)
        if old_gather and r["collective"] in ("allgather", "reducescatter"):
            f = 1.0
        assert bus == pytest.approx(alg * f, abs=0.006 * GBPS * (1 + f)), r
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("name", sorted(LOGS))
def test_algbw_is_size_over_time(name):
    """algbw = size / time (the size column is the whole buffer), within the
    printed rounding, for logs after nccl-tests' 2020 algbw change."""
    rows = cl.read_nccl_tests(text_of(name), collective=LOGS[name])
    for r in rows:
        if "2019" in name and r["collective"] in ("allgather", "reducescatter"):
            n = r["n_ranks"]
            expected = r["n_bytes"] * (n - 1) / n / r["time_s"]
        else:
            expected = r["n_bytes"] / r["time_s"]
        assert r["algbw_bytes_per_s"] == pytest.approx(expected, rel=0.006, abs=0.006 * GBPS)


@pytest.mark.parametrize("name", sorted(LOGS))
def test_footer_is_the_mean_busbw_as_nccl_tests_computes_it(name):
    """nccl-tests' footer: the mean of every busbw it printed, out-of-place and
    in-place, 0-byte rows included (common.cu: bw[0] += busBw per BenchTime,
    bw[0] /= bw_count[0]).  It averages the unrounded values, so the mean of
    the printed ones agrees to the rounding."""
    text = text_of(name)
    footers = [float(x) for x in re.findall(r"Avg bus bandwidth\s*:\s*(\S+)", text)]
    runs = nccl_log.nccl_tests_runs(text)
    assert len(runs) == len(footers) >= 1
    for run, footer in zip(runs, footers):
        values = ([r["busbw_bytes_per_s"] for r in run["rows"]]
                  + [r["in_place_busbw_bytes_per_s"] for r in run["rows"]])
        assert sum(values) / len(values) == pytest.approx(footer * GBPS, abs=0.006 * GBPS)
        assert run["avg_busbw_bytes_per_s"] == pytest.approx(footer * GBPS, rel=1e-12)


def test_one_printed_busbw_per_fixture_family():
    """Spot checks straight from the text: the largest size's out-of-place
    busbw and time, found with a regex on the raw line."""
    for name, coll in LOGS.items():
        text = text_of(name)
        rows = cl.read_nccl_tests(text, collective=coll)
        last = rows[-1]
        line = TAG.sub("", text.splitlines()[last["source_line"] - 1])
        m = re.match(r"\s*(\d+)\s.*?\s(\d+(?:\.\d+)?)\s+(\d+\.\d\d)\s+(\d+\.\d\d)\s+\S+\s+"
                     r"\d+(?:\.\d+)?\s+\d+\.\d\d\s+\d+\.\d\d\s+\S+\s*$", line)
        assert m, line
        assert last["n_bytes"] == int(m.group(1))
        assert last["time_s"] * 1e6 == pytest.approx(float(m.group(2)))
        assert last["busbw_bytes_per_s"] / GBPS == pytest.approx(float(m.group(4)))


def test_collectives_named_by_the_log():
    rows = cl.read_nccl_tests(text_of("dgx2_v100_g12_2019_five_collectives.txt"))
    names = list(dict.fromkeys(r["collective"] for r in rows))
    programs = re.findall(r"\./build/(\w+)_perf", text_of("dgx2_v100_g12_2019_five_collectives.txt"))
    assert names == [p.replace("_", "") for p in programs]
    assert set(names) == {"allgather", "allreduce", "broadcast", "reduce", "reducescatter"}
    assert {r["redop"] for r in rows if r["collective"] == "broadcast"} == {None}
    assert {r["root"] for r in rows if r["collective"] in ("broadcast", "reduce")} == {0}


def test_old_error_column_is_not_a_count():
    rows = cl.read_nccl_tests(text_of("dgx2_v100_g12_2019_five_collectives.txt"))
    assert all(r["wrong"] is None for r in rows)
    assert max(r["max_error"] for r in rows) == 1.0      # "1e+00" rows of all_gather


def test_na_and_empty_redop_and_zero_rows():
    text = text_of("a100_g8_c0_alltoall.txt")
    rows = cl.read_nccl_tests(text, collective="alltoall")
    kept = cl.read_nccl_tests(text, collective="alltoall", keep_empty=True)
    zero_lines = [t for _, t in raw_rows(text) if t[0] == "0"]
    assert len(kept) - len(rows) == len(zero_lines) > 0
    assert all(r["n_bytes"] > 0 for r in rows)
    assert all(r["wrong"] is None and r["in_place_wrong"] is None for r in kept)
    assert all(r["redop"] is None for r in kept)          # printed empty in 2021
    assert "validation: 0" in text


def test_mpi_tags_and_info_lines_are_removed():
    text = text_of("p4d_2x8_efa_mpi_tagged_info.txt")
    assert text.count("NCCL INFO") > 100
    rows = cl.read_nccl_tests(text, collective="allreduce")
    assert rows[0]["n_bytes"] == int(raw_rows(text)[0][1][0])
    assert rows[0]["hosts"] == ["nccl-tests-efa-16-worker-0", "nccl-tests-efa-16-worker-1"]


def test_info_line_inside_a_row_is_stitched():
    """nccl-tests prints a row in three pieces (sizes, out-of-place, in-place)
    and NCCL_DEBUG=INFO output can come between them, glued to the piece
    before (the same stdout buffer): the row is rebuilt, loses no column
    (the root "-1" directly before a host name) and keeps its line number.
    Built from the real a3mega fixture by cutting its first row after the
    5th and the 9th column."""
    text = text_of("a3mega_h100_2x8_mpi_allreduce.txt")
    expected = cl.read_nccl_tests(text)
    lines = text.splitlines()
    i = next(k for k, l in enumerate(lines) if ROW.match(l))
    row = lines[i]
    cut5 = re.match(r"(\s*\S+){5}", row).end()
    cut9 = re.match(r"(\s*\S+){9}", row).end()
    info = "ztan-mig-235z:6899:6899 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"
    lines[i:i + 1] = [row[:cut5] + info, info,
                      row[cut5:cut9] + info, "[1,3]<stdout>:" + info, row[cut9:]]
    rows = cl.read_nccl_tests("\n".join(lines))
    assert rows[0]["source_line"] == i + 1
    assert rows[0]["root"] == int(row.split()[4]) == -1
    first = {k: v for k, v in rows[0].items() if k != "source_line"}
    assert first == {k: v for k, v in expected[0].items() if k != "source_line"}
    assert len(rows) == len(raw_rows(text))


def test_rows_by_collective_groups_and_sorts():
    rows = cl.read_nccl_tests(text_of("dgx2_v100_g12_2019_five_collectives.txt"))
    groups = cl.rows_by_collective(rows)
    assert set(groups) == {(c, 12) for c in ("allgather", "allreduce", "broadcast", "reduce",
                                              "reducescatter")}
    for group in groups.values():
        sizes = [r["n_bytes"] for r in group]
        assert sizes == sorted(sizes)
    assert sum(len(g) for g in groups.values()) == len(rows)


# --- errors -------------------------------------------------------------------

def test_empty_text():
    with pytest.raises(ValueError, match="empty"):
        cl.read_nccl_tests("   \n")


def test_wrong_types():
    with pytest.raises(TypeError, match="text"):
        cl.read_nccl_tests(b"# nThread 1")
    with pytest.raises(TypeError, match="text"):
        cl.read_nccl_tests(None)
    with pytest.raises(TypeError, match="collective"):
        cl.read_nccl_tests(text_of("a100_g8_c0_alltoall.txt"), collective=3)
    with pytest.raises(TypeError, match="keep_empty"):
        cl.read_nccl_tests(text_of("a3mega_h100_2x8_mpi_allreduce.txt"), keep_empty="yes")


def test_no_table_at_all():
    with pytest.raises(ValueError, match="no nccl-tests result table"):
        cl.read_nccl_tests("mpirun: command not found\n")


def test_header_without_rows_names_the_header_line():
    text = text_of("a3mega_h100_2x8_mpi_allreduce.txt")
    lines = text.splitlines()
    header = next(k for k, l in enumerate(lines, 1) if "algbw" in l and "size" in l)
    cut = "\n".join(lines[:header + 1])          # header and units line, then nothing
    with pytest.raises(ValueError, match=rf"line {header}: .*no result rows"):
        cl.read_nccl_tests(cut)


def test_truncated_log_mid_row_names_the_line():
    """A log cut in the middle of a row (a job killed, a copy cut short)."""
    text = text_of("h100_4x8_mpi_allgather_v2.17.txt")
    lines = text.splitlines()
    i = [k for k, _ in raw_rows(text)][10]
    cut = "\n".join(lines[:i - 1] + [lines[i - 1][:60]])
    with pytest.raises(ValueError, match=rf"line {i}: .*cut short"):
        cl.read_nccl_tests(cut)


def test_truncated_after_whole_rows_keeps_them():
    """Cut after complete rows (no footer): the rows printed are returned."""
    text = text_of("h100_4x8_mpi_allgather_v2.17.txt")
    lines = text.splitlines()
    i = [k for k, _ in raw_rows(text)][10]
    rows = cl.read_nccl_tests("\n".join(lines[:i]), keep_empty=True)
    assert len(rows) == 11


def test_garbled_row_names_line_and_content():
    text = text_of("a3mega_h100_2x8_mpi_allreduce.txt")
    lines = text.splitlines()
    i = [k for k, _ in raw_rows(text)][3]
    lines[i - 1] = lines[i - 1].replace(".", ",", 2)
    with pytest.raises(ValueError, match=rf"line {i}: garbled nccl-tests row.*float"):
        cl.read_nccl_tests("\n".join(lines))


def test_unknown_collective_and_disagreeing_collective():
    with pytest.raises(ValueError, match="collective must be one of"):
        cl.read_nccl_tests(text_of("a100_g8_c0_alltoall.txt"), collective="allsum")
    with pytest.raises(ValueError, match="names 'all_gather_perf'"):
        cl.read_nccl_tests(text_of("h100_4x8_mpi_allgather_v2.17.txt"), collective="allreduce")
    with pytest.raises(ValueError, match="does not say which collective"):
        cl.read_nccl_tests(text_of("a100_g8_c0_alltoall.txt"))


def test_rows_by_collective_bad_input():
    with pytest.raises(TypeError, match="rows"):
        cl.rows_by_collective(3)
    with pytest.raises(ValueError, match=r"rows\[0\]"):
        cl.rows_by_collective([{"n_bytes": 8}])


# --- fuzz -----------------------------------------------------------------------

PIECES = [l for name in LOGS for l in text_of(name).splitlines()[:80]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(PIECES), max_size=30).map("\n".join),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=40)), max_size=30)
    .map("\n".join),
))
def test_fuzz_only_value_or_type_errors(text):
    try:
        rows = cl.read_nccl_tests(text, collective="allreduce")
    except (ValueError, TypeError) as exc:
        assert str(exc)
    else:
        assert isinstance(rows, list)


# --- layouts derived from the real fixtures ------------------------------------------
# Each test below changes a real fixture the way a launcher, a web page or an
# older nccl-tests would, and says which; no public copy of these was stored.

def test_mpich_and_slurm_tags_anywhere_in_the_line():
    """MPICH's -prepend-rank writes ``[0]`` before every piece a process
    prints, so it appears inside rows too (``sum      -1[0]    366.5``, as in
    the log quoted in NVIDIA/nccl issue #1453); Slurm's ``srun -l`` puts
    ``0: `` before each line."""
    text = text_of("a3mega_h100_2x8_mpi_allreduce.txt")
    expected = cl.read_nccl_tests(text)
    mpich = []
    for line in text.splitlines():
        toks = line.split()
        if ROW.match(line):      # a tag where each of the row's three prints begins
            line = ("[0] " + "  ".join(toks[:5]) + "[0]  " + "  ".join(toks[5:9])
                    + "[0]  " + "  ".join(toks[9:]))
        else:
            line = "[0] " + line
        mpich.append(line)
    srun = ["0: " + line for line in text.splitlines()]
    for variant in (mpich, srun):
        rows = cl.read_nccl_tests("\n".join(variant))
        assert [(r["n_bytes"], r["time_s"], r["busbw_bytes_per_s"], r["in_place_time_s"])
                for r in rows] == [(r["n_bytes"], r["time_s"], r["busbw_bytes_per_s"],
                                    r["in_place_time_s"]) for r in expected]
        assert rows[0]["hosts"] == expected[0]["hosts"]


def test_hashes_lost_when_pasted_into_markdown():
    """Logs pasted into a GitHub issue outside a code block lose their leading
    ``#`` (see NVIDIA/nccl-tests issue #249): the same rows come back."""
    text = text_of("h100_4x8_mpi_allgather_v2.17.txt")
    bare = "\n".join(l[1:] if l.startswith("#") else l for l in text.splitlines())
    assert cl.read_nccl_tests(bare) == cl.read_nccl_tests(text)


def test_processes_without_mpi_each_print_rank_0():
    """nccl-tests built without MPI and started by mpirun: every process prints
    its own header and ``Rank 0`` (NVIDIA/nccl-tests issue #107), and runs its
    own communicator of nThread x nGpus GPUs."""
    text = text_of("h100_g8_allreduce_v2.17.txt")
    lines = text.splitlines()
    devices = [l for l in lines if "Rank" in l and "device" in l]
    other_host = [l.replace(" g138 ", " g205 ") for l in devices]
    k = lines.index(devices[-1]) + 1
    rows = cl.read_nccl_tests("\n".join(lines[:k] + other_host + lines[k:]))
    gpus = int(re.search(r"nGpus (\d+)", text).group(1))
    assert {r["n_ranks"] for r in rows} == {gpus}
    assert rows[0]["hosts"] == ["g138", "g205"]


def test_2017_layout_in_milliseconds():
    """The first nccl-tests (2017, commit b188a15) printed ``bytes N type op``
    and the time in **ms** (``PRINT("  %7.3f  %5.2f  %5.2f  %7.0le",
    deltaSec * 1.0E3, ...)``) with no units line.  Rows here are printed with
    those format strings from a real 2019 row of the DGX-2 fixture."""
    real = cl.read_nccl_tests(text_of("dgx2_v100_g12_2019_five_collectives.txt"))
    r = next(x for x in real if x["collective"] == "allreduce" and x["n_bytes"] == 2**30)
    header = ("# %10s  %12s  %6s  %6s  %7s  %5s  %5s  %7s  %7s  %5s  %5s  %7s"
              % ("bytes", "N", "type", "op", "time", "algbw", "busbw", "res",
                 "time", "algbw", "busbw", "res"))
    row = ("%12li  %12li  %6s  %6s" % (r["n_bytes"], r["n_bytes"] // 4, "float", "sum")
           + "  %7.3f  %5.2f  %5.2f  %7.0le" % (r["time_s"] * 1e3, r["algbw_bytes_per_s"] / 1e9,
                                               r["busbw_bytes_per_s"] / 1e9, 2e-7)
           + "  %7.3f  %5.2f  %5.2f  \tN/A" % (r["in_place_time_s"] * 1e3,
                                              r["in_place_algbw_bytes_per_s"] / 1e9,
                                              r["in_place_busbw_bytes_per_s"] / 1e9))
    log = "nThread 1 nGpus 12 minBytes 8 maxBytes 1073741824 step: 2(factor)\n" + header + "\n" + row
    [got] = cl.read_nccl_tests(log, collective="allreduce")
    assert got["time_s"] == pytest.approx(r["time_s"], rel=1e-4)
    assert got["in_place_time_s"] == pytest.approx(r["in_place_time_s"], rel=1e-4)
    assert got["max_error"] == pytest.approx(2e-7) and got["in_place_wrong"] is None


def test_busbw_factor_is_performance_md():
    for coll, f in PERF_MD_FACTOR.items():
        for n in (1, 2, 8, 12, 32):
            assert nccl_log.busbw_factor(coll, n) == pytest.approx(f(n))
    with pytest.raises(ValueError, match="n_ranks"):
        nccl_log.busbw_factor("allreduce", 0)
    with pytest.raises(TypeError, match="n_ranks"):
        nccl_log.busbw_factor("allreduce", 2.0)
    with pytest.raises(ValueError, match="busbw factor"):
        nccl_log.busbw_factor("gather", 4)


ANY = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=True),
                st.text(max_size=12), st.sampled_from(["allreduce", "all_gather_perf", "reduce"]),
                st.lists(st.dictionaries(st.sampled_from(["collective", "n_bytes", "n_ranks"]),
                                         st.one_of(st.integers(0, 9), st.text(max_size=3)),
                                         max_size=3), max_size=3))


@settings(max_examples=200, deadline=None)
@given(ANY, ANY, ANY)
def test_fuzz_helpers_only_value_or_type_errors(a, b, c):
    for call in (lambda: nccl_log.collective_name(a), lambda: nccl_log.busbw_factor(a, b),
                 lambda: cl.rows_by_collective(a),
                 lambda: cl.read_nccl_tests(a, collective=b, keep_empty=c)):
        try:
            call()
        except (ValueError, TypeError) as exc:
            assert str(exc)


def test_agrees_with_the_projects_own_transcriptions():
    """Two of the fixtures are runs the project transcribed by hand into
    course_lib/data/validation/nccl_tests_public.csv: the parser must give the
    same size, rank count and out-of-place time for every transcribed row."""
    import csv

    path = pathlib.Path(cl.__file__).parent / "data" / "validation" / "nccl_tests_public.csv"
    table = list(csv.DictReader(path.open()))
    pairs = {"ztan-NCCL-test-result": ("a3mega_h100_2x8_mpi_allreduce.txt", "allreduce"),
             "wohlbier/nccl-tests": ("dgx2_v100_g12_2019_five_collectives.txt", "allreduce")}
    for key, (name, coll) in pairs.items():
        want = [r for r in table if key in r["source"]]
        assert len(want) > 20
        got = {r["n_bytes"]: r for r in cl.read_nccl_tests(text_of(name)) if r["collective"] == coll}
        for w in want:
            r = got[int(w["bytes"])]
            assert r["n_ranks"] == int(w["gpus"])
            assert r["time_s"] * 1e6 == pytest.approx(float(w["time_us"]), rel=1e-9), w


# --- logs as people paste them (tests/fixtures/nccl_logs/pasted, sources in its README) ----
PASTED = FIXTURES / "pasted"


def pasted(name):
    return (PASTED / name).read_text(encoding="utf-8")


def test_every_pasted_fixture_is_cited():
    readme = (PASTED / "README.md").read_text()
    for p in PASTED.glob("*.txt"):
        assert f"`{p.name}`" in readme


def test_header_whose_hashes_were_lost_reads_the_same():
    """Every header line without its ``#`` -- ``wrong`` for ``#wrong`` too, as
    documentation pages reproduce it -- gives the same rows and facts."""
    for name in sorted(LOGS):
        text = text_of(name)
        bare = "\n".join(re.sub(r"^(\s*(?:\[[^\]]*\](?:<stdout>:)?)?)#", r"\1", line)
                         .replace("#wrong", "wrong") for line in text.splitlines())
        assert "#wrong" not in bare and "# nThread" not in bare and bare != text
        assert cl.read_nccl_tests(bare, collective=LOGS[name]) == cl.read_nccl_tests(
            text, collective=LOGS[name]), name


def test_pasted_bare_header_names_collective_devices_and_the_missing_rows():
    """NVIDIA/nccl#583: no ``#`` anywhere, the program only in the mpirun line;
    the paste stops at the column header, and the error says so."""
    text = pasted("a100_mpirun_bare_header.txt")
    with pytest.raises(ValueError, match=r"line 15: the nccl-tests column header has no "
                                         r"result rows"):
        cl.read_nccl_tests(text)
    # one real row of the same shape after it: the program, devices and ranks are read
    row = ("          32             8   float     sum    21.72    0.00    0.00  0e+00"
           "    21.60    0.00    0.00  0e+00")
    runs = nccl_log.nccl_tests_runs(text + row + "\n")
    assert runs[0]["program"] == "all_reduce_perf" and runs[0]["program_line"] == 1
    assert runs[0]["devices"] == ["NVIDIA A100-SXM4-40GB"] and runs[0]["n_ranks"] == 8
    assert runs[0]["hosts"] == ["AI-A100-Beethoven01"]


def test_pasted_logs_name_their_gpu():
    rows = cl.read_nccl_tests(pasted("dgx_spark_gb10_2x1_allreduce.txt"))
    assert {r["collective"] for r in rows} == {"allreduce"}      # "Collective test starting"
    assert rows[0]["devices"] == ["NVIDIA GB10"] and rows[0]["n_ranks"] == 2
    assert rows[0]["hosts"] == ["spark-d708", "spark-dbf4"] and len(rows) == 4
    mi = cl.read_nccl_tests(pasted("rccl_mi300x_g8_allreduce.txt"), collective="allreduce")
    assert mi[0]["devices"] == ["AMD Instinct MI300X"] and mi[0]["n_ranks"] == 8
    assert mi[0]["busbw_bytes_per_s"] == pytest.approx(161.14e9)
    for name in sorted(LOGS):       # every fixture's device lines name a device
        assert cl.read_nccl_tests(text_of(name), collective=LOGS[name])[0]["devices"]


def _from_log(capsys, path, *extra):
    from course_lib.apps import cli

    rc = cli.main(["predict", "--from-log", str(path), *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("name, device", [("rccl_mi300x_g8_allreduce.txt", "AMD Instinct MI300X"),
                                          ("dgx_spark_gb10_2x1_allreduce.txt", "NVIDIA GB10")])
def test_from_log_refuses_a_gpu_the_catalog_lacks_and_names_the_option(capsys, name, device):
    """An MI300X or GB10 log is never silently modelled as an H100."""
    extra = ["allreduce"] if "mi300x" in name else []
    rc, _, err = _from_log(capsys, PASTED / name, *extra, "--nic", "NDR", "--nics-per-node", "1")
    assert rc == 2 and device in err and "--gpu" in err and "catalog" in err


def test_from_log_takes_the_gpu_from_the_device_lines(capsys):
    log = FIXTURES / "p4d_2x8_efa_mpi_tagged_info.txt"       # A100-SXM4-40GB, 2 nodes
    rc, out, _ = _from_log(capsys, log, "allreduce", "--nic", "EFA-100", "--nics-per-node", "4")
    assert rc == 0 and "2 node(s) x 8 A100" in out
    rc, _, err = _from_log(capsys, log, "allreduce", "--gpu", "H100", "--nic", "EFA-100")
    assert rc == 2 and "--gpu H100" in err and "A100-SXM4-40GB" in err


def test_from_log_without_device_lines_asks_for_gpu(capsys, tmp_path):
    text = text_of("h100_g8_allreduce_v2.17.txt")
    bare = tmp_path / "no_devices.txt"
    bare.write_text("\n".join(ln for ln in text.splitlines() if " Rank " not in ln))
    rc, _, err = _from_log(capsys, bare, "--gpus-per-node", "8")
    assert rc == 2 and "does not name its GPU" in err and "--gpu" in err
    rc, out, _ = _from_log(capsys, bare, "--gpus-per-node", "8", "--gpu", "H100")
    assert rc == 0 and "8 H100" in out
