"""The judge: run the hidden tests on the student's values, in a process of its own.

A test cell of ``solutions/`` is ordinary Python with ``assert`` statements.
It is never sent to the sandbox.  The judge runs it in a namespace holding the
real builtins, the instructor's imports (from the notebook's locked cells) and,
for every other name the test *reads* but does not define, a stand-in for the
student's object:

* a **value** (a number, an array, a course_lib record): fetched once from the
  sandbox in the data-only encoding of :mod:`autograder.wire` and read as data
  -- numbers, strings, containers, NumPy arrays and the registered course_lib
  and networkx records, rebuilt here from checked fields -- so nothing the
  student wrote (an ``__eq__`` that is always true, a ``__reduce__`` trick)
  can arrive;
* a **function**: a :class:`StudentFunction` whose call returns the value the
  student's function returned *in the sandbox* for those arguments.

Calls are answered in batches: the tests are run once with unknown results
(:data:`UNKNOWN`, which absorbs any arithmetic, and ``assert`` statements
that see one are skipped), the calls they made are sent to the sandbox in one
question, and the tests run again with the answers, until no test makes a
call whose result is unknown (a few rounds).  Only the final run of a test,
with every value known, decides its grade.

What reaches the sandbox: the names a test reads and the arguments it passes.
What never does: the test code, the expected values, the tolerances.

``python -m autograder.judge`` is the judge's own process (:func:`main`): the
grader starts it unprivileged, in a sandbox of its own
(:class:`autograder.sandbox.JudgeBox`), sends it the tests, relays its
questions to the notebook's sandbox and takes back only verdicts, as plain
JSON.  It never sees the gradebook, the course directory or another student.

>>> from autograder.judge import free_names
>>> sorted(free_names("import math\\nfor n in (2, 3):\\n    assert math.isclose(f(n), g(n) + k)"))
['f', 'g', 'k']
"""

from __future__ import annotations

import ast
import base64
import builtins
import contextlib
import io
import math
import os
import struct
import sys

from . import wire

__all__ = ["free_names", "instructor_imports", "Judge", "UNKNOWN", "StudentError", "TestResult",
           "main"]

MAX_ROUNDS = 25


# ---------------------------------------------------------------------------
# reading a test cell
# ---------------------------------------------------------------------------
def instructor_imports(src: str) -> str:
    """Only the import statements of a (trusted) cell."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return ""
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))


def _bound(tree) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def free_names(src: str, known=()) -> set:
    """Names ``src`` reads but neither defines nor imports (nor are builtins or ``known``):
    the student's names a test needs."""
    tree = ast.parse(src)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _bound(tree) - set(dir(builtins)) - set(known)


class _SoftAsserts(ast.NodeTransformer):
    """``assert c, m`` -> ``__ag_check(lambda: c, lambda: m)``: checked only in a run
    where every value is known."""

    def visit_Assert(self, node):
        msg = node.msg if node.msg is not None else ast.Constant(None)
        call = ast.Call(func=ast.Name("__ag_check", ast.Load()),
                        args=[ast.Lambda(_noargs(), node.test), ast.Lambda(_noargs(), msg)],
                        keywords=[])
        return ast.copy_location(ast.Expr(call), node)


def _noargs():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def compile_test(src: str, name: str = "<test cell>"):
    tree = _SoftAsserts().visit(ast.parse(src))
    ast.fix_missing_locations(tree)
    return compile(tree, name, "exec")


# ---------------------------------------------------------------------------
# unknown results and the student's functions
# ---------------------------------------------------------------------------
class _Incomplete(Exception):
    """A run needed a value that is not known yet."""


class _Unknown:
    """The result of a call not answered yet: absorbs arithmetic and comparisons."""

    __slots__ = ()

    def _u(self, *a, **k):
        _Run.current.missed = True
        return UNKNOWN

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _u
    __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = _u
    __neg__ = __pos__ = __abs__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _u
    __getitem__ = __getattr__ = __call__ = __round__ = __matmul__ = __rmatmul__ = _u

    def __bool__(self):
        return True

    def __float__(self):
        return math.nan

    def __int__(self):
        return 0

    __index__ = __int__

    def __iter__(self):
        raise _Incomplete()

    def __len__(self):
        raise _Incomplete()

    def __format__(self, spec):
        return "?"

    def __repr__(self):
        return "<unknown>"

    __hash__ = object.__hash__


UNKNOWN = _Unknown()


class StudentError(Exception):
    """The student's function raised in the sandbox (or could not be called)."""


class _Run:
    current = None

    def __init__(self, answers):
        self.answers = answers      # key -> ("value", obj) | ("error", ename, evalue)
        self.wanted = {}            # key -> (name, blob)
        self.missed = False


class _HasUnknown(Exception):
    pass


def _no_unknown(obj):
    if obj is UNKNOWN:
        raise _HasUnknown()
    raise wire.Ungradable(f"a value of type {type(obj).__name__} cannot be sent")


class StudentFunction:
    """Stands for the student's function ``name``: a call returns what it returned in
    the sandbox for the same arguments."""

    def __init__(self, name):
        self.__name__ = self.name = name

    def __call__(self, *args, **kwargs):
        run = _Run.current
        try:
            blob = wire.encode((args, kwargs), default=_no_unknown).decode("ascii")
        except _HasUnknown:          # an argument is itself a result not known yet
            run.missed = True
            return UNKNOWN
        except Exception as exc:
            raise TypeError(f"the grader cannot send these arguments to {self.name}: {exc}")
        key = (self.name, blob)
        got = run.answers.get(key)
        if got is None:
            run.wanted[key] = (self.name, blob)
            run.missed = True
            return UNKNOWN
        if got[0] == "value":
            return got[1]
        raise StudentError(f"{self.name}{_short(args, kwargs)} raised {got[1]}: {got[2]}")

    def __repr__(self):
        return f"<your function {self.name}>"


def _short(args, kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    text = "(" + ", ".join(parts) + ")"
    return text if len(text) < 120 else text[:117] + "...)"


class _Missing:
    """A name the student's notebook does not define (or that is not plain data)."""

    def __init__(self, name, why):
        self.name, self.why = name, why


class TestResult:
    """The verdict on one test cell."""

    def __init__(self, passed: bool, ename: str = "", evalue: str = "", stdout: str = ""):
        self.passed, self.ename, self.evalue, self.stdout = passed, ename, evalue, stdout

    def __repr__(self):
        return f"TestResult({self.passed}, {self.ename!r}, {self.evalue!r})"


# ---------------------------------------------------------------------------
# the judge
# ---------------------------------------------------------------------------
class Judge:
    """Runs test cells against a sandbox that answers ``names`` and ``calls`` questions.

    ``ask(op, items)`` returns the sandbox's answer (untrusted bytes in the encoding of
    :mod:`autograder.wire`) or None.  ``problems`` lists answers that were not data."""

    def __init__(self, ask, setup_code: str, limits: wire.Limits = wire.Limits()):
        self.ask = ask
        self.setup_code = setup_code
        self.limits = limits
        self.answers = {}
        self.values = {}
        self.problems = []

    def _read(self, raw, n):
        """The rows of an answer of ``n`` rows at most, or None (a problem is noted)."""
        if raw is None:
            if not any(p.startswith("no answer") for p in self.problems):
                self.problems.append("no answer to a question of the tests (the kernel died, or "
                                     "the notebook broke its channel)")
            return None
        try:
            rows = wire.decode(raw, self.limits)
        except wire.WireError as exc:
            self.problems.append(f"an answer that is not data ({str(exc)[:200]})")
            return None
        if not isinstance(rows, list) or len(rows) > n or not all(
                isinstance(r, list) and r and isinstance(r[0], str) for r in rows):
            self.problems.append("an answer that is not a list of rows")
            return None
        return rows

    def _fetch_names(self, names):
        names = sorted(n for n in names if n not in self.values)
        if not names:
            return
        rows = self._read(self.ask("names", names), len(names))
        if rows is None or len(rows) != len(names):
            for n in names:
                self.values[n] = _Missing(n, "the sandbox did not answer")
            return
        for n, row in zip(names, rows):
            kind = row[0]
            if kind == "callable":
                self.values[n] = StudentFunction(n)
            elif kind == "value" and len(row) == 2:
                self.values[n] = row[1]
            elif kind == "missing":
                self.values[n] = _Missing(n, "your notebook does not define it")
            elif kind == "ungradable" and len(row) == 2:
                self.values[n] = _Missing(n, f"{str(row[1])[:300]}: use numbers, strings, lists, "
                                             "dicts, NumPy arrays or course_lib results")
            else:
                self.values[n] = _Missing(n, "the sandbox sent an unreadable answer")

    def _answer_calls(self, wanted):
        items = [list(v) for v in wanted.values()]
        rows = self._read(self.ask("calls", items), len(items)) or []
        # a shorter answer: the calls after the last answered one never returned
        rows = list(rows) + [["error", "TimeoutError", "no answer: the call ran past the time "
                              "limit, or the kernel died"]] * (len(items) - len(rows))
        for key, row in zip(wanted, rows):
            kind = row[0]
            if kind == "value" and len(row) == 2:
                self.answers[key] = ("value", row[1])
            elif kind == "error" and len(row) == 3:
                self.answers[key] = ("error", str(row[1])[:100], str(row[2])[:500])
            elif kind == "budget":
                self.answers[key] = ("error", "TimeoutError", "not called: the notebook's time "
                                     "budget was used up")
            elif kind == "ungradable" and len(row) == 2:
                self.answers[key] = ("error", "NotPlainData", f"the result cannot be graded: "
                                     f"{str(row[1])[:300]}")
            else:
                self.answers[key] = ("error", "SandboxError", "unreadable answer")

    def _namespace(self, names):
        ns = {"__name__": "__grader__", "__builtins__": builtins}
        exec(compile(self.setup_code, "<instructor imports>", "exec"), ns)
        for n in names:
            v = self.values.get(n)
            if isinstance(v, _Missing):
                continue
            ns[n] = v
        return ns

    def _once(self, code, names, missing):
        run = _Run(self.answers)
        _Run.current = run
        ns = self._namespace(names)

        def check(cond, msg):
            value = cond()
            if run.missed or value is UNKNOWN:
                run.missed = True
                return
            if not value:
                m = msg()
                raise AssertionError(m if m is not None else "")

        ns["__ag_check"] = check
        out = io.StringIO()
        result = None
        try:
            with contextlib.redirect_stdout(out):
                exec(code, ns)
        except _Incomplete:
            run.missed = True
        except NameError as exc:
            name = getattr(exc, "name", None)
            if name in missing:
                result = TestResult(False, "NameError", f"{name!r}: {missing[name].why}")
            elif not run.missed:
                result = TestResult(False, "NameError", str(exc))
        except StudentError as exc:
            if not run.missed:
                result = TestResult(False, "Error", str(exc))
        except AssertionError as exc:
            result = TestResult(False, "AssertionError", str(exc))
        except Exception as exc:  # noqa: BLE001 - a test that fails on the student's data
            if not run.missed:
                result = TestResult(False, type(exc).__name__, str(exc)[:2000])
        finally:
            _Run.current = None
        if run.missed and result is None or (run.wanted and result is None):
            return None, run.wanted
        if result is None:
            result = TestResult(True)
        result.stdout = out.getvalue()[:20000]
        return result, {}

    def run(self, tests: dict) -> dict:
        """``tests``: {grade_id: source}; returns {grade_id: TestResult}."""
        known = set(_bound(ast.parse(self.setup_code)))
        compiled, needs = {}, {}
        results = {}
        for gid, src in tests.items():
            try:
                compiled[gid] = compile_test(src, f"<test {gid}>")
                needs[gid] = free_names(src, known)
            except SyntaxError as exc:
                results[gid] = TestResult(False, "SyntaxError", f"the test cell does not compile: {exc}")
        self._fetch_names(set().union(*needs.values()) if needs else set())
        pending = [g for g in compiled if g not in results]
        for _ in range(MAX_ROUNDS):
            wanted = {}
            still = []
            for gid in pending:
                missing = {n: self.values[n] for n in needs[gid] if isinstance(self.values.get(n), _Missing)}
                result, calls = self._once(compiled[gid], needs[gid], missing)
                if result is not None:
                    results[gid] = result
                else:
                    wanted.update(calls)
                    still.append(gid)
            pending = still
            if not pending:
                break
            if not wanted:   # incomplete without a call to answer: cannot progress
                for gid in pending:
                    results[gid] = TestResult(False, "GradingError", "the test could not be "
                                              "decided on your values")
                pending = []
                break
            self._answer_calls({k: v for k, v in wanted.items() if k not in self.answers})
        for gid in pending:
            results[gid] = TestResult(False, "GradingError", f"not decided after {MAX_ROUNDS} rounds")
        return results


# ---------------------------------------------------------------------------
# the judge's own process
# ---------------------------------------------------------------------------
#: Largest frame the judge reads from the grader (an answer of the sandbox, base64).
MAX_FRAME = 200 * 2**20


def read_frame(stream, limits=wire.Limits(max_bytes=MAX_FRAME, max_items=100_000)):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > limits.max_bytes:
        raise ValueError(f"frame of {n} bytes is larger than {limits.max_bytes}")
    data = stream.read(n)
    if len(data) < n:
        return None
    return wire.parse_json(data, limits)


def write_frame(stream, obj):
    data = wire.dumps_json(obj)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _clean(text, limit):
    return str(text)[:limit].encode("utf-8", "replace").decode("utf-8")


def main() -> int:
    """Judge one notebook: read ``{"tests", "setup", "max_value_bytes"}``, ask the grader
    ``{"ask": op, "items": [...]}`` (answered ``{"answer": base64 or null}``), end with
    ``{"verdicts": {grade_id: [passed, ename, evalue, stdout]}, "problems": [...]}``."""
    out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    inp = sys.stdin.buffer
    job = read_frame(inp)
    if not isinstance(job, dict):
        return 2
    setup = str(job.get("setup", ""))
    try:                         # the instructor's imports, once, while the notebook runs
        exec(compile(setup, "<instructor imports>", "exec"), {"__name__": "__grader__"})
    except Exception:  # noqa: BLE001 - the same error is reported per test below
        pass
    limits = wire.Limits(max_bytes=int(job.get("max_value_bytes", 64 * 2**20)))

    def ask(op, items):
        write_frame(out, {"ask": op, "items": items})
        reply = read_frame(inp)
        answer = reply.get("answer") if isinstance(reply, dict) else None
        if not isinstance(answer, str):
            return None
        try:
            return base64.b64decode(answer, validate=True)
        except ValueError:
            return b"(not base64)"

    tests = {str(k): str(v) for k, v in dict(job.get("tests", {})).items()}
    judge = Judge(ask, setup, limits)
    results = judge.run(tests)
    import resource
    use = resource.getrusage(resource.RUSAGE_SELF)
    write_frame(out, {"verdicts": {gid: [bool(r.passed), _clean(r.ename, 200), _clean(r.evalue, 4000),
                                         _clean(r.stdout, 20000)] for gid, r in results.items()},
                      "problems": [_clean(p, 300) for p in judge.problems[:10]],
                      "cost": {"cpu_s": use.ru_utime + use.ru_stime, "peak_mib": use.ru_maxrss / 1024}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
