"""Interconnect City: the course library.

Use it from every chapter through one alias::

    import course_lib as cl
    cl.ring_allreduce_time_s(14e9, 8, cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s)

Layers, each importing only those before it:

``units`` -> ``hardware`` (the sourced catalog) -> ``topology`` ->
``analytic`` -> ``predict`` -> ``sim`` -> ``plots`` -> ``widgets``;
``measure`` (the labs) stands beside them.  Importing the package needs no
display, no GPU and no MPI.
"""

from . import units, hardware, topology, analytic  # noqa: F401
from .units import *  # noqa: F401,F403
from .hardware import *  # noqa: F401,F403
from .topology import *  # noqa: F401,F403
from .analytic import *  # noqa: F401,F403

__version__ = "0.1.0"
