"""Chapter 0's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch00.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/00_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

def values() -> dict[str, str]:
    return {}
