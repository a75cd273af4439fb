"""Chapter your_cluster's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/chyour_cluster.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/your_cluster_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

def values() -> dict[str, str]:
    return {}
