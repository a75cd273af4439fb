"""Run a notebook's test cells in a fresh interpreter that holds only the student's answers.

The grading kernel runs the student's cells but never a test cell.  Where a
test cell stands, :data:`SNAPSHOT_CODE` pickles the *data* in the kernel's
namespace (numbers, strings, arrays, course_lib objects; never functions or
modules) into the work directory.  After the notebook, one new interpreter
(``python -I -S``, started behind the same boundary as the kernel, see
:mod:`autograder.isolation`) runs every test cell, each in a namespace built
from scratch:

1. the data pickled at that point, read back with :class:`SafeUnpickler`
   (only NumPy arrays/scalars, builtin containers and course_lib classes; a
   student's own class or a ``__reduce__`` trick is skipped, never run);
2. the student's function and class definitions and imports, *re-compiled
   from the source text* of the cells above the test (:func:`definitions`);
   top-level statements such as ``math.isclose = ...``, ``sys.modules[...] =``,
   ``f.__code__ = g.__code__``, ``__builtins__ = ...`` or ``sys.settrace(...)``
   are not carried over at all;
3. the instructor's imports (``math``, ``numpy``, ``course_lib``) bound last.

Before each test the interpreter puts back anything a definition changed in
the guarded modules (builtins, math, numpy, course_lib, ``sys.modules``, trace
and profile hooks, functions' ``__code__``); after it, a change made while the
test called the student's code fails the test as tampering.

Run as ``python -I -S hidden.py`` with the job as JSON on stdin; results are
JSON lines on stdout, each prefixed by the job's token.
"""

from __future__ import annotations

import ast
import io
import json
import os
import pickle
import sys

__all__ = ["SNAPSHOT_CODE", "definitions", "SafeUnpickler", "parse_results"]

#: Run silently in the grading kernel where a test cell stands; ``{path!r}`` is
#: the pickle to write.  Everything it needs is imported inside, so a student's
#: rebinding of names in the notebook does not reach it.
SNAPSHOT_CODE = '''\
def _ag_snapshot(path):
    import pickle as _p, types as _t
    skip = (_t.ModuleType, _t.FunctionType, _t.BuiltinFunctionType, _t.MethodType, type)
    out = {{}}
    for k, v in list(get_ipython().user_ns.items()):
        if k.startswith("_") or k in ("In", "Out", "get_ipython", "exit", "quit") or isinstance(v, skip):
            continue
        try:
            blob = _p.dumps(v, protocol=4)
        except Exception:
            continue
        if len(blob) <= {max_bytes}:
            out[k] = blob
    with open(path, "wb") as fh:
        _p.dump(out, fh, protocol=4)
_ag_snapshot({path!r}); del _ag_snapshot
'''
#: Largest single value carried to the tests (bytes, pickled); larger ones are left out.
MAX_VALUE_BYTES = 64 * 2**20

_KEEP = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _python_source(src: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(src)
    except Exception:
        return src


def _alias(value) -> bool:
    if isinstance(value, (ast.Lambda, ast.Name)):
        return True
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and not value.id.startswith("__")


def definitions(src: str) -> str:
    """The top-level ``def``/``class``/``import`` statements of a cell, and plain
    aliases (``name = lambda ...``, ``name = other``, ``name = mod.attr``), as
    source; everything else (calls, attribute or item assignment, loops) is left
    out: the values they computed come from the snapshot."""
    try:
        tree = ast.parse(_python_source(src))
    except (SyntaxError, ValueError):
        return ""
    keep = []
    for node in tree.body:
        if isinstance(node, _KEEP):
            keep.append(node)
        elif (isinstance(node, ast.Assign) and _alias(node.value)
              and all(isinstance(t, ast.Name) and not t.id.startswith("__") for t in node.targets)):
            keep.append(node)  # f = lambda ...; g = f; h = np.polyfit
    return "\n".join(ast.unparse(n) for n in keep)


def imports(src: str) -> str:
    """Only the import statements of a (trusted) cell."""
    try:
        tree = ast.parse(_python_source(src))
    except (SyntaxError, ValueError):
        return ""
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))


def parse_results(stdout: str, token: str) -> dict:
    """``{grade_id: result}`` from the test runner's output (other lines ignored)."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith(token + " "):
            try:
                row = json.loads(line[len(token) + 1:])
            except ValueError:
                continue
            out.setdefault(row.get("grade_id"), row)  # the first word on a test is final
    return out


# ---------------------------------------------------------------------------
# the runner (inside the fresh interpreter)
# ---------------------------------------------------------------------------
_NUMPY_OK = {"_reconstruct", "scalar", "ndarray", "dtype", "_frombuffer"}
_BUILTINS_OK = {"set", "frozenset", "complex", "slice", "range", "bytearray", "bytes", "list",
                "dict", "tuple", "int", "float", "str", "bool"}


class SafeUnpickler(pickle.Unpickler):
    """Unpickles data, never code: NumPy arrays/scalars, builtin containers and
    classes (not functions) of ``course_lib``, ``networkx`` (the course's graphs),
    ``fractions``, ``decimal`` and ``datetime``."""

    def find_class(self, module, name):
        if module in ("numpy", "numpy.core.multiarray", "numpy._core.multiarray",
                      "numpy.core.numeric", "numpy._core.numeric") and name in _NUMPY_OK:
            return super().find_class(module, name)
        if module == "builtins" and name in _BUILTINS_OK:
            return super().find_class(module, name)
        if module == "collections" and name in ("OrderedDict", "deque"):
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        if module.split(".")[0] in ("course_lib", "networkx", "fractions", "decimal", "datetime"):
            obj = super().find_class(module, name)
            if isinstance(obj, type):
                return obj
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a snapshot")


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            blobs = SafeUnpickler(fh).load()
    except Exception:
        return {}
    if not isinstance(blobs, dict):
        return {}
    values = {}
    for name, blob in blobs.items():
        if not isinstance(name, str) or not isinstance(blob, bytes):
            continue
        try:
            values[name] = SafeUnpickler(io.BytesIO(blob)).load()
        except Exception:
            continue  # not plain data (a student's own class, a lambda, ...): left out
    return values


class _Guard:
    """A snapshot of what test cells rely on; restore it, or list what changed."""

    def __init__(self):
        import builtins
        self.modules = dict(sys.modules)
        self.meta_path = list(sys.meta_path)
        self.path_hooks = list(sys.path_hooks)
        self.path = list(sys.path)
        names = ["builtins", "math", "itertools", "operator", "functools", "numpy",
                 "numpy.linalg", "numpy.testing"]
        names += [m for m in sys.modules if m == "course_lib" or m.startswith("course_lib.")]
        self.dicts = []
        for m in names:
            mod = sys.modules.get(m)
            if mod is None:
                continue
            saved = dict(vars(mod))
            codes = {k: v.__code__ for k, v in saved.items() if hasattr(v, "__code__")
                     and getattr(v, "__module__", "") == m}
            self.dicts.append((m, mod, saved, codes))
        self.builtins = builtins

    def changes(self) -> list[str]:
        found = []
        if sys.gettrace() is not None:
            found.append("sys.settrace hook")
        if sys.getprofile() is not None:
            found.append("sys.setprofile hook")
        for name, mod in self.modules.items():
            if sys.modules.get(name) is not mod:
                found.append(f"sys.modules[{name!r}] replaced")
        if sys.meta_path != self.meta_path or sys.path_hooks != self.path_hooks:
            found.append("import hooks changed")
        for m, mod, saved, codes in self.dicts:
            current = vars(mod)
            for k, v in saved.items():
                if current.get(k, _MISSING) is not v:
                    found.append(f"{m}.{k} rebound")
                elif k in codes and getattr(v, "__code__", None) is not codes[k]:
                    found.append(f"{m}.{k}.__code__ swapped")
        return found

    def restore(self) -> None:
        sys.settrace(None)
        sys.setprofile(None)
        import threading
        threading.settrace(None)
        threading.setprofile(None)
        for name, mod in self.modules.items():
            if sys.modules.get(name) is not mod:
                sys.modules[name] = mod
        sys.meta_path[:] = self.meta_path
        sys.path_hooks[:] = self.path_hooks
        sys.path[:] = self.path
        for m, mod, saved, codes in self.dicts:
            current = vars(mod)
            for k, v in saved.items():
                if current.get(k, _MISSING) is not v:
                    if mod is self.builtins:
                        current[k] = v
                    else:
                        try:
                            setattr(mod, k, v)
                        except Exception:
                            pass
                if k in codes and getattr(v, "__code__", None) is not codes[k]:
                    try:
                        v.__code__ = codes[k]
                    except Exception:
                        pass


_MISSING = object()


class _Timeout(BaseException):
    pass


def _error(ename, evalue):
    return {"ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}


def run_job(job: dict, emit) -> None:
    import builtins
    import contextlib
    import signal
    for mod in job.get("preload", []):
        try:
            __import__(mod)
        except Exception:
            pass
    guard = _Guard()
    limit = int(job.get("timeout_s", 30))

    def on_alarm(signum, frame):
        raise _Timeout()

    for test in job["tests"]:
        result = {"grade_id": test["grade_id"], "stdout": ""}
        ns = {"__name__": "__main__", "__builtins__": builtins}
        buf = io.StringIO()
        signal.signal(signal.SIGALRM, on_alarm)
        try:
            signal.alarm(limit)
            ns.update(_load(test["snapshot"]))  # under the alarm: the file is the student's
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                exec(compile(test["imports"], "<setup>", "exec"), ns)
                for code in test["definitions"]:
                    for node in ast.parse(code).body:
                        try:
                            exec(compile(ast.Module([node], []), "<definitions>", "exec"), ns)
                        except _Timeout:
                            raise
                        except BaseException:
                            pass  # a definition that fails leaves its name undefined
                guard.restore()  # undo what default arguments or class bodies changed
                exec(compile(test["imports"], "<setup>", "exec"), ns)
                try:
                    exec(compile(test["source"], "<test cell>", "exec"), ns)
                    failure = None
                except _Timeout:
                    raise
                except BaseException as exc:  # noqa: BLE001 - anything the student raises
                    failure = _error(type(exc).__name__, str(exc)[:2000])
            signal.alarm(0)
        except _Timeout:
            failure = _error("CellTimeoutError", f"the test ran past {limit} s")
        finally:
            signal.alarm(0)
        tampered = guard.changes()
        if tampered:
            failure = _error("IntegrityError", "the test environment was changed while the "
                             "test ran your code: " + "; ".join(tampered[:5]))
            result["tamper"] = tampered[:20]
            guard.restore()
        result["stdout"] = buf.getvalue()[:20000]
        result["error"] = failure
        emit(result)


def main() -> int:
    # started early (while the notebook runs) the runner imports the usual modules
    # first, then waits for its job; nothing of the student's runs before the job
    early = os.environ.get("AG_SYS_PATH")
    if early:
        sys.path[:] = json.loads(early)
        for mod in ("math", "numpy", "course_lib"):
            try:
                __import__(mod)
            except Exception:
                pass
    text = sys.stdin.read()
    if not text.strip():
        return 0
    job = json.loads(text)
    sys.path[:] = job["sys_path"]
    token = job.pop("token")
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)

    def emit(row, _token=token, _out=out):
        _out.write(_token + " " + json.dumps(row) + "\n")
        _out.flush()

    del token
    run_job(job, emit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
