"""Every number the chapters print, computed: one module per chapter.

``course_lib/values/chNN.py`` has ``values() -> {name: text}``: the chapter's
numbers, each produced by a course model or read from the hardware catalog and
formatted the way the prose prints it.  Two readers use them:

* the chapter's quiz (``content_bank/<lang>/chNN.yaml`` with ``values: chNN``)
  fills its ``{name}`` fields;
* the chapter's notebook binds a number in its Markdown with
  ``<!--v:name-->text<!--/v-->`` (``<!--v:ch03.name-->`` for another
  chapter's value): ``python -m course_lib.apps.prose`` rewrites ``text`` from
  the value, and ``--check`` (run by the tests) fails where they differ, so the
  prose cannot disagree with the model a cell away.

>>> chapter_values(3)["pcie5"]
'63 GB/s'
>>> value("ch03.pcie5") == chapter_values(3)["pcie5"]
True
>>> value("ch03.nope")
Traceback (most recent call last):
...
KeyError: "value 'ch03.nope' is not defined: course_lib/values/ch03.py has no 'nope'"
"""

from __future__ import annotations

import importlib
from functools import lru_cache

__all__ = ["chapter_values", "namespace_values", "value", "NAMESPACES"]

#: Value namespaces: one per numbered chapter, and the optional notebook.
NAMESPACES = tuple(f"ch{c:02d}" for c in range(0, 12)) + ("your_cluster",)


@lru_cache(maxsize=None)
def namespace_values(namespace: str) -> dict[str, str]:
    """The values of ``namespace`` (``"ch03"``, ``"your_cluster"``), computed once."""
    if namespace not in NAMESPACES:
        raise KeyError(f"namespace {namespace!r} is not one of {', '.join(NAMESPACES)}")
    module = importlib.import_module(f"{__name__}.{namespace}")
    out = module.values()
    bad = {k: v for k, v in out.items() if not isinstance(v, str)}
    if bad:
        raise TypeError(f"course_lib/values/{namespace}.py: values must be text, got {bad}")
    return dict(out)


def chapter_values(chapter: int) -> dict[str, str]:
    """Chapter ``chapter``'s values (0-11)."""
    return dict(namespace_values(f"ch{int(chapter):02d}"))


def value(name: str, namespace: str | None = None) -> str:
    """One value by ``"chNN.name"``, or by ``"name"`` within ``namespace``."""
    ns, _, key = name.rpartition(".")
    ns = ns or namespace
    if ns is None:
        raise KeyError(f"value {name!r} names no namespace (write 'chNN.{name}')")
    vals = namespace_values(ns)
    if key not in vals:
        raise KeyError(f"value {ns + '.' + key!r} is not defined: "
                       f"course_lib/values/{ns}.py has no {key!r}")
    return vals[key]
