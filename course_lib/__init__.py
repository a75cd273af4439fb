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

from . import predict, sim  # noqa: F401  (pure numpy/networkx; no display needed)
from .predict import (Cluster, Prediction, cluster, predict_collective,  # noqa: F401
                      predict_copy)
from .sim import SimResult, simulate_collective  # noqa: F401
from .nccl_log import read_nccl_tests, rows_by_collective  # noqa: F401
from .calibrating import calibrate, what_if  # noqa: F401  (fit the model to a run)

__version__ = "0.1.0"

# Sub-packages that need more than the model (widgets, explorers, labs, the
# environment doctor) load on first use: ``cl.explorers.ch03_crossover``.
_LAZY = ("widgets", "quiz", "explorers", "measure", "doctor", "predict", "sim", "draw",
         "plots", "traffic", "scenarios", "content", "calibrating")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
