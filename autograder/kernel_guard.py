"""Runs inside every grading kernel, before any student code.

At kernel start-up (``IPKernelApp.exec_lines``) this module takes a snapshot of
what the test cells rely on: the builtins, ``math``, NumPy's comparison
helpers, ``course_lib``'s public functions, and the IPython machinery that
runs cells and reports errors.  Before each graded test cell the executor
calls :func:`restore`, which puts every snapshotted object back and removes
AST/input transformers and custom exception handlers added since start-up.

This defeats the usual output spoofs (``builtins.abs = lambda x: 0``,
``np.isclose = lambda *a, **k: True``, ``cl.ring_allreduce_time_s = mine``,
an AST transformer that deletes ``assert``).  It is *not* a security
boundary: student code runs in the same process and a determined student can
reach and corrupt this module too.  If :func:`restore` itself fails, the
executor treats the cell as failed and reports tampering; see
``docs/grading.md`` for the threat model.
"""

from __future__ import annotations

import builtins
import importlib
import math
import sys

_MODULES = ["builtins", "math", "numpy", "numpy.testing", "course_lib",
            "course_lib.units", "course_lib.hardware", "course_lib.topology",
            "course_lib.analytic"]
_SNAPSHOT: list = []
_CLASS_SNAPSHOT: list = []
_SHELL_STATE: dict = {}


def _take():
    for name in _MODULES:
        try:
            mod = importlib.import_module(name)
        except Exception:  # optional module not present: nothing to guard
            continue
        _SNAPSHOT.append((mod, dict(vars(mod))))
    try:
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
    except Exception:
        return
    classes = [c for c in type(shell).__mro__ if c is not object]
    try:
        from ipykernel.kernelbase import Kernel
        classes += [c for c in type(shell.kernel).__mro__ if c is not object]
        _SHELL_STATE["kernel"] = shell.kernel
    except Exception:
        pass
    for cls in classes:
        _CLASS_SNAPSHOT.append((cls, {k: v for k, v in vars(cls).items()
                                      if callable(v) or isinstance(v, (staticmethod, classmethod, property))}))
    _SHELL_STATE["shell"] = shell
    _SHELL_STATE["instances"] = [
        (obj, {k: v for k, v in vars(obj).items() if callable(v)})
        for obj in (shell, _SHELL_STATE.get("kernel")) if obj is not None]
    kernel = _SHELL_STATE.get("kernel")
    if kernel is not None and isinstance(getattr(kernel, "shell_handlers", None), dict):
        _SHELL_STATE["shell_handlers"] = dict(kernel.shell_handlers)
    _SHELL_STATE["ast_transformers"] = list(shell.ast_transformers)
    _SHELL_STATE["input_transformers_post"] = list(shell.input_transformers_post)
    _SHELL_STATE["input_transformers_cleanup"] = list(shell.input_transformer_manager.cleanup_transforms)
    _SHELL_STATE["line_transforms"] = list(shell.input_transformer_manager.line_transforms)
    _SHELL_STATE["excepthook"] = sys.excepthook


def restore() -> None:
    """Put back everything :func:`_take` saw at start-up (called before each test cell)."""
    for mod, saved in _SNAPSHOT:
        current = vars(mod)
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                setattr(mod, key, value) if mod is not builtins else current.__setitem__(key, value)
    for cls, saved in _CLASS_SNAPSHOT:
        for key, value in saved.items():
            if vars(cls).get(key, _MISSING) is not value:
                type.__setattr__(cls, key, value)
    shell = _SHELL_STATE.get("shell")
    if shell is not None:
        methods = set().union(*(saved for _, saved in _CLASS_SNAPSHOT))
        for obj, saved in _SHELL_STATE["instances"]:
            current = vars(obj)
            for key in [k for k, v in current.items() if callable(v)]:
                if key in saved:
                    if current[key] is not saved[key]:
                        current[key] = saved[key]
                elif key in methods:
                    del current[key]  # a new instance attribute shadowing a method
            for key, value in saved.items():
                if key not in current:
                    current[key] = value
        if "shell_handlers" in _SHELL_STATE:
            _SHELL_STATE["kernel"].shell_handlers.clear()
            _SHELL_STATE["kernel"].shell_handlers.update(_SHELL_STATE["shell_handlers"])
        shell.ast_transformers[:] = _SHELL_STATE["ast_transformers"]
        shell.input_transformers_post[:] = _SHELL_STATE["input_transformers_post"]
        shell.input_transformer_manager.cleanup_transforms[:] = _SHELL_STATE["input_transformers_cleanup"]
        shell.input_transformer_manager.line_transforms[:] = _SHELL_STATE["line_transforms"]
        shell.custom_exceptions = ()
        sys.excepthook = _SHELL_STATE["excepthook"]


_MISSING = object()
_take()
assert math.isclose(1.0, 1.0)
