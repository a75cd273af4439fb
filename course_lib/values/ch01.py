"""Chapter 1's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch01.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/01_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..analytic import effective_utilisation


def values() -> dict[str, str]:
    return {"utilisation": f"{effective_utilisation(0.3, 0.1):.0%}"}
