"""The course's data files, shipped inside the package in ``course_lib/data/``.

Measured curves (``calibration_measurements.csv``), the H200 copy lab
(``h200_gpu_copies.json`` and its ``.meta.json``) and the held-out nccl-tests
runs (``validation/nccl_tests_public.csv``, ``validation/topo/``) travel with
``course_lib`` as package data.  Every reader finds them through
:func:`data_path`, which asks :mod:`importlib.resources`, so a wheel installed
anywhere reads the same files as a source checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

#: The package that holds ``data/`` and the folder's name inside it.
DATA_PACKAGE = __name__.split(".")[0]
DATA_FOLDER = "data"


def data_path(*parts: str) -> Path:
    """Path of a file or folder under ``course_lib/data/``.

    Parameters
    ----------
    *parts : str
        Names below ``data/``, one folder level each (``"validation",
        "topo"``); none gives the folder itself.

    Examples
    --------
    >>> data_path("validation", "nccl_tests_public.csv").name
    'nccl_tests_public.csv'
    """
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(f"parts must be names (str) below course_lib/data; got {part!r}")
        if part in ("", ".", "..") or "/" in part or "\\" in part:
            raise ValueError(f"parts must each be one file or folder name below "
                             f"course_lib/data (no '/', '..' or empty); got {part!r}")
    path = resources.files(DATA_PACKAGE).joinpath(DATA_FOLDER, *parts)
    if not path.exists():
        where = "/".join((DATA_FOLDER,) + parts)
        raise ValueError(f"parts: {where} is not in the course_lib package: it "
                         f"ships as package data (reinstall the course if it is "
                         f"missing)")
    return Path(str(path))
