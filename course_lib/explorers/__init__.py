"""The chapters' explorers: one module per explorer, ``chNN_<topic>.py``.

Each module has a factory ``explorer()`` that returns a
:class:`course_lib.widgets.Explorer` (controls declared as data, a pure
``compute`` that only calls model functions, a pure ``plot``); a module with
more than one explorer lists them in ``FACTORIES = {"name": factory}``.
In a notebook::

    import course_lib as cl
    cl.explorers.ch03_crossover.explorer().show()

Modules load on first use, so ``import course_lib.explorers`` stays cheap.
:func:`iter_explorers` finds every explorer of every chapter (the tests and
``benchmarks/bench_explorers.py`` use it), so a new chapter's module is
picked up without editing this file.

>>> "ch03_crossover" in module_names()
True
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["module_names", "iter_explorers"]


def module_names() -> list[str]:
    """Names of the explorer modules (``chNN_...``), sorted by chapter."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.name.startswith("ch"))


def iter_explorers():
    """Yield ``(qualified_name, factory)`` for every explorer of the course.

    ``qualified_name`` is ``"<module>"`` for a module's ``explorer()`` and
    ``"<module>.<name>"`` for each entry of a module's ``FACTORIES``.
    """
    for name in module_names():
        module = importlib.import_module(f"{__name__}.{name}")
        factories = getattr(module, "FACTORIES", None)
        if factories:
            for key, factory in factories.items():
                yield f"{name}.{key}", factory
        elif callable(getattr(module, "explorer", None)):
            yield name, module.explorer


def __getattr__(name):
    if name.startswith("ch") and name in module_names():
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
