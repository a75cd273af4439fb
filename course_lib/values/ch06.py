"""Chapter 6's named values: every number its prose and quiz print, computed.

``values()`` returns ``{name: text}``.  The quiz file ``content_bank/<lang>/ch06.yaml``
fills its ``{name}`` fields from it; the notebook ``notebooks/06_*.ipynb`` binds its
numbers to it with ``<!--v:name-->text<!--/v-->`` (see :mod:`course_lib.apps.prose`).
"""

from __future__ import annotations

from ..hardware import system
from ..topology import fully_connected_topology, link_count


def values() -> dict[str, str]:
    return {"mesh_links": str(link_count(fully_connected_topology(8))),
            "dgx2_nvswitches": str(system("DGX-2").nvswitches)}
