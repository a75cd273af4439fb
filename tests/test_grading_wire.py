"""The data-only encoding between the sandbox, the judge and the grader (autograder/wire.py).

Every value a student's notebook hands to the tests crosses as typed JSON that
reading cannot turn into anything but data.  These tests check the schema
(every kind round-trips, other kinds are converted in the sandbox or refused
with their type named), that pickles and every other byte string are refused
without running anything, and that the limits hold *while* reading: an input
built to blow up (deep nesting, millions of small values, huge numbers, a
shared-reference value, giant strings) is stopped with bounded time and memory.
"""

from __future__ import annotations

import collections
import decimal
import fractions
import glob
import math
import os
import pickle
import re
import time
import tracemalloc

import numpy as np
import pytest

import course_lib as cl
from autograder import REPO_ROOT, judge, wire
from course_lib.measure.harness import AlphaBetaFit, LabResult

MARK = f"/tmp/ag-wire-ran-{os.getpid()}"


def roundtrip(value):
    return wire.decode(wire.encode(value))


def bounded(fn, seconds, mib):
    """Run ``fn``; assert it took at most ``seconds`` and ``mib`` MiB of new Python memory."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    took = time.perf_counter() - t0
    assert took < seconds, f"took {took:.2f} s"
    assert peak < mib * 2**20, f"peak {peak / 2**20:.0f} MiB"
    return out


# --- the schema -------------------------------------------------------------------------
def test_every_kind_of_the_schema_round_trips():
    values = [None, True, False, 0, -7, 2**200, 2.5, -0.0, math.inf, -math.inf, 1e-300,
              complex(1, -2), "Zoë 🚆", "", b"\x00\xff", [1, [2, [3]]], (1, (2,)), (), {1, 2},
              frozenset({(1, 2)}), {"a": 1, 2: "b", (0, 1): [3], None: 1.5, 2.5: True},
              np.arange(6.0).reshape(2, 3), np.array(3, dtype=np.int16), np.zeros((0, 4)),
              np.array([True, False]), np.array([1 + 2j], dtype=np.complex64),
              np.arange(4, dtype=np.uint8)]
    for v in values:
        got = roundtrip(v)
        assert type(got) is type(v), v
        if isinstance(v, np.ndarray):
            assert got.dtype == v.dtype and got.shape == v.shape and np.array_equal(got, v)
            assert got.flags.writeable
        else:
            assert got == v, v
    got = roundtrip(math.nan)
    assert math.isnan(got)


def test_the_sandbox_converts_what_it_can_and_names_what_it_cannot():
    for v, want in [(collections.defaultdict(int, {0: 0, 1: 1}), {0: 0, 1: 1}),
                    (collections.OrderedDict(a=1), {"a": 1}), (collections.Counter("aab"), {"a": 2, "b": 1}),
                    (collections.deque([1, 2]), [1, 2]), (collections.namedtuple("P", "x y")(1, 2), (1, 2)),
                    (fractions.Fraction(1, 4), 0.25), (decimal.Decimal("2.5"), 2.5),
                    (np.float64(2.5), 2.5), (np.int32(-3), -3), (np.bool_(True), True),
                    (np.complex128(1j), 1j), (np.arange(3, dtype=">i4"), np.arange(3, dtype="<i4"))]:
        got = roundtrip(v)
        assert type(got) is type(want) and np.all(got == want), (v, got)
    masked = roundtrip(np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False]))
    assert isinstance(masked, np.ma.MaskedArray) and masked.mask.tolist() == [False, True, False]
    assert masked.sum() == 4.0
    for v, name in [(object(), "object"), (np.array(["a"]), "<U1"), (np.array([None]), "object"),
                    (range(3), "range"), (lambda: 0, "function"), (2**2000, "digits")]:
        with pytest.raises(wire.Ungradable, match=re.escape(name)):
            wire.encode(v)


def test_course_lib_records_are_rebuilt_by_the_grader_constructors():
    fit = AlphaBetaFit(1e-6, 2e10, 0.99, [1e-9, -1e-9], [0.01, -0.01], "ols")
    got = roundtrip(fit)
    assert type(got) is AlphaBetaFit and got == fit and got.r_squared == 0.99
    assert got.residuals_s.tolist() == [1e-9, -1e-9] and got.weighting == "ols"
    lab = LabResult("pageable", records=[{"variant": "staged", "n_bytes": 65536, "median_s": 4e-5}],
                    fits={"staged": fit}, notes=["quick"])
    got = roundtrip(lab)
    assert type(got) is LabResult and got.select("staged") == lab.records and got.fits["staged"] == fit
    topo = cl.two_level_topology(2, 4)
    got = roundtrip(topo)
    assert type(got) is type(topo) and got.graph == topo.graph
    assert cl.average_hops(got) == cl.average_hops(topo)
    assert sorted(got.edges(data=True), key=str) == sorted(topo.edges(data=True), key=str)


# --- nothing but data is read -------------------------------------------------------------
class Reduce:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def _chain_pickle(cmd):
    """A hand-made protocol-0 pickle: fractions -> operator -> os.system (the issue's chain)."""
    return (b"cfractions\nFraction\n(I1\ntR" b"coperator\nmethodcaller\n(S'system'\nS'" + cmd.encode()
            + b"'\ntRcos\n\ntR.")


def test_pickles_and_other_bytes_are_refused_without_running_anything():
    import subprocess
    blobs = [pickle.dumps(Reduce(os.system, f"touch {MARK}"), protocol=p) for p in range(6)]
    blobs += [pickle.dumps(Reduce(subprocess.Popen, ["touch", MARK])),
              pickle.dumps(Reduce(collections.deque, range(int(2.5e9)), 0)),
              _chain_pickle(f"touch {MARK}"), b"\x80\x04K\x01.", b"", b"   ", b"\xff\xfe{}",
              b"[1, 2", b"[1] [2]", b"{'a': 1}", b"NaN", b"[Infinity]", b"01", b"[1,]",
              b'{"code": "os.system"}', b'{"tuple": [], "set": []}', b"{}",
              b'{"__reduce__": ["os.system", "touch x"]}', b'{"record": ["os.system", []]}']
    for blob in blobs:
        t0 = time.perf_counter()
        with pytest.raises(wire.WireError):
            wire.decode(blob)
        assert time.perf_counter() - t0 < 0.5
    assert not os.path.exists(MARK)


def test_a_crafted_value_never_reaches_a_command_through_the_judge():
    # the sandbox answers a pickle with a __reduce__ reaching subprocess through course_lib:
    # the judge refuses the answer (a problem the grader reports as a sandbox incident)
    from course_lib.apps import doctor
    evil = pickle.dumps([("value", pickle.dumps(Reduce(doctor.subprocess.run, ["touch", MARK])))])
    j = judge.Judge(lambda op, items: evil, "")
    res = j.run({"t": "assert answer == 4"})
    assert not res["t"].passed and "did not answer" in res["t"].evalue
    assert j.problems == ["an answer that is not data (not UTF-8 text (a pickle, or other bytes))"] or \
        j.problems[0].startswith("an answer that is not data"), j.problems
    assert not os.path.exists(MARK)


# --- limits, checked while reading -------------------------------------------------------
def test_deep_nesting_is_stopped_at_the_depth_limit():
    for text in (b"[" * 500_000, b'{"tuple":' * 100_000, b'{"a":' * 100_000):
        with pytest.raises(wire.WireError, match="nested deeper|object"):
            bounded(lambda: wire.parse_json(text) if text.startswith(b'{"a"') else wire.decode(text),
                    1.0, 20)
    with pytest.raises(wire.Ungradable, match="nested deeper"):
        wire.encode(_nest(200))
    assert roundtrip(_nest(20)) == _nest(20)


def _nest(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


def test_millions_of_small_values_stop_at_the_count_limit_with_bounded_memory():
    text = b"[" + b"[]," * 3_000_000 + b"[]]"           # 9 MB of empty lists
    with pytest.raises(wire.WireError, match="more than 1,000,000 values"):
        bounded(lambda: wire.decode(text), 10.0, 150)
    small = wire.Limits(max_items=1000)
    with pytest.raises(wire.WireError, match="more than 1,000 values"):
        wire.decode(b"[" + b"0," * 5000 + b"0]", small)


def test_a_shared_reference_value_is_written_out_until_the_limits_stop_it():
    v = [0.5]
    for _ in range(40):                                   # a few hundred bytes in memory,
        v = [v, v]                                        # 2**40 leaves written out
    t0 = time.perf_counter()
    with pytest.raises(wire.Ungradable, match="more than 1,000,000 items"):
        wire.encode(v)
    assert time.perf_counter() - t0 < 10
    small = wire.Limits(max_items=100_000)
    with pytest.raises(wire.Ungradable, match="more than 100,000 items"):
        bounded(lambda: wire.encode(v, small), 5.0, 50)
    rows = wire.encode_rows([["value", v], ["value", 3]], small)
    assert wire.decode(rows) == [["ungradable", "the value holds more than 100,000 items"], ["value", 3]]


def test_huge_numbers_and_giant_strings():
    with pytest.raises(wire.WireError, match="more than 400 digits"):
        bounded(lambda: wire.decode(b"9" * 10_000_000), 2.0, 60)
    assert wire.decode(b"1e999") == math.inf and wire.decode(b"-1e999") == -math.inf
    assert wire.decode(str(10**399).encode()) == 10**399
    with pytest.raises(wire.WireError, match="larger than"):
        wire.decode(b'"' + b"x" * (2**20 + 1) + b'"', wire.Limits(max_bytes=2**20))
    with pytest.raises(wire.Ungradable, match="larger than"):
        wire.encode("x" * (2**20 + 1), wire.Limits(max_bytes=2**20))
    with pytest.raises(wire.Ungradable, match="larger than"):
        wire.encode(np.zeros(2**18), wire.Limits(max_bytes=2**20))


def test_nan_keys_unhashable_keys_and_bad_arrays():
    got = wire.decode(b'{"dict": [[{"float": "nan"}, 1], [{"float": "nan"}, 2]]}')
    assert len(got) == 2 and all(math.isnan(k) for k in got)
    for text in (b'{"dict": [[[1], 2]]}', b'{"set": [[1]]}', b'{"dict": [[1]]}',
                 b'{"float": "1e5"}', b'{"complex": [1]}', b'{"bytes": "***"}',
                 b'{"ndarray": ["|O", [1], "AAAAAAAAAAA="]}', b'{"ndarray": [">f8", [1], "AAAAAAAAAAA="]}',
                 b'{"ndarray": ["<f8", [2], "AAAAAAAAAAA="]}', b'{"ndarray": ["<f8", [-1], ""]}',
                 b'{"ndarray": ["<f8", [' + b",".join([b"1"] * 33) + b'], "AAAAAAAAAAA="]}',
                 b'{"masked": [[1], [true]]}'):
        with pytest.raises(wire.WireError):
            wire.decode(text)


@pytest.mark.parametrize("name", ["AlphaBetaFit\u200b", "\u0410lphaBetaFit", "alphabetafit",
                                  "AlphaBetaFi\u0301t", "AlphaBetaFit ", "course_lib.AlphaBetaFit",
                                  "Graph\x00", "__builtins__"])
def test_unicode_tricks_in_record_names_are_unknown_records(name):
    text = wire.dumps_json({"record": [name, [["alpha_s", 1.0]]]})
    with pytest.raises(wire.WireError, match="unknown record"):
        wire.decode(text)


def test_record_fields_are_checked_before_a_constructor_runs():
    ok = [["alpha_s", 1e-6], ["bw_bytes_per_s", 2e10], ["r_squared", 1.0], ["residuals_s", []],
          ["relative_residuals", []], ["weighting", None]]
    assert type(wire.decode(wire.dumps_json({"record": ["AlphaBetaFit", ok]}))) is AlphaBetaFit
    for fields, why in [(ok[:-1], "exactly the fields"), (ok + [["extra", 1]], "exactly the fields"),
                        ([["alpha_s", "1e-6"]] + ok[1:], "wrong kind"),
                        (ok[:3] + [["residuals_s", "x"]] + ok[4:], "wrong kind")]:
        with pytest.raises(wire.WireError, match=why):
            wire.decode(wire.dumps_json({"record": ["AlphaBetaFit", fields]}))
    with pytest.raises(wire.WireError, match="wrong kind"):
        wire.decode(wire.dumps_json({"record": ["LabResult", [["name", 1], ["records", []], ["fits", {"dict": []}],
                                                               ["summary", {"dict": []}], ["metadata", {"dict": []}],
                                                               ["notes", []], ["skipped", None], ["plot_y", "x"]]]}))
    with pytest.raises(wire.WireError, match="graph node"):
        wire.decode(wire.dumps_json({"record": ["Graph", [["graph", {"dict": []}], ["nodes", [[1]]],
                                                          ["edges", []]]]}))


def test_a_heavy_record_is_bounded_by_the_same_limits():
    # a LabResult holding 10 000 records is within the count limit: read in bounded time
    # and memory; one of 300 000 records (1.2 million values) is refused before it is built
    rec = '{"dict":[["n_bytes",1]]}'
    def lab(n):
        return ('{"record":["LabResult",[["name","x"],["records",[' + ",".join([rec] * n)
                + ']],["fits",{"dict":[]}],["summary",{"dict":[]}],["metadata",{"dict":[]}],'
                '["notes",[]],["skipped",null],["plot_y","x"]]]}').encode()
    got = bounded(lambda: wire.decode(lab(10_000)), 10.0, 100)
    assert len(got.records) == 10_000
    with pytest.raises(wire.WireError, match="more than 1,000,000 values"):
        bounded(lambda: wire.decode(lab(300_000)), 2.0, 50)


# --- through the judge: right answers of other types are graded right --------------------
def _answer(ns):
    def ask(op, items):
        rows = []
        if op == "names":
            for n in items:
                rows.append(["callable"] if callable(ns[n]) else ["value", ns[n]])
        else:
            for n, blob in items:
                args, kwargs = wire.decode(blob)
                rows.append(["value", ns[n](*args, **kwargs)])
        return wire.encode_rows(rows)
    return ask


def test_defaultdict_and_masked_answers_are_graded_right_and_other_types_named_per_part():
    def bfs(adj, src):
        d = collections.defaultdict(int)
        d[src] = 0
        todo = [src]
        while todo:
            u = todo.pop(0)
            for v in adj[u]:
                if v not in d:
                    d[v] = d[u] + 1
                    todo.append(v)
        return d

    class Custom:
        pass
    ns = {"bfs_hops": bfs, "times_s": np.ma.masked_array([1e-3, 2e-3, -1.0], mask=[0, 0, 1]),
          "thing": Custom()}
    tests = {"part_c": "assert bfs_hops({0: [1], 1: [0, 2], 2: [1]}, 0) == {0: 0, 1: 1, 2: 2}",
             "part_a": "import numpy as np\nassert np.ma.allclose(times_s, [1e-3, 2e-3, 5.0])\n"
                       "assert times_s.count() == 2",
             "part_e": "assert thing == 1"}
    res = judge.Judge(_answer(ns), "").run(tests)
    assert res["part_c"].passed and res["part_a"].passed
    assert not res["part_e"].passed
    assert res["part_e"].evalue.startswith("'thing': a value of type Custom cannot be graded")


def test_the_grading_channel_holds_no_pickle():
    for path in glob.glob(os.path.join(REPO_ROOT, "autograder", "*.py")):
        text = open(path, encoding="utf-8").read()
        assert not re.search(r"^\s*(import pickle|from pickle|import cloudpickle)|Unpickler", text,
                             re.MULTILINE), path
