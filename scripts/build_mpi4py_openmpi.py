"""Build mpi4py against Debian's Open MPI into a cache folder (for the tests).

The course's virtual environment gets mpi4py and MPICH from PyPI.  To check
that the chapter-7 lab also runs where mpi4py was built against Open MPI
(Debian/Ubuntu images, many hubs, containers running as root), the tests put
an Open MPI build of the same mpi4py version first on ``PYTHONPATH``.  It is
compiled once (``pip install --no-binary mpi4py`` with ``MPICC=mpicc.openmpi``;
a few minutes on two cores) and kept in

    ${XDG_CACHE_HOME:-~/.cache}/interconnect-city/mpi4py-<version>-openmpi-<version>/

Needs ``mpicc.openmpi`` (``bash scripts/ensure_openmpi.sh``) and a C compiler.

    .venv/bin/python scripts/build_mpi4py_openmpi.py     # prints the folder
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def cache_root() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "interconnect-city"


def open_mpi_version(mpicc: str = "mpicc.openmpi") -> str:
    out = subprocess.run([mpicc, "--showme:version"], capture_output=True, text=True,
                         timeout=30)
    text = (out.stdout + out.stderr).strip()
    # "mpicc.openmpi: Open MPI 4.1.4 (Language: C)"
    for word in text.replace("(", " ").split():
        if word[:1].isdigit():
            return word
    raise RuntimeError(f"cannot read Open MPI's version from {mpicc}: {text!r}")


def build_mpi4py_for_open_mpi(timeout_s: float = 1800.0) -> pathlib.Path:
    """The folder holding ``mpi4py`` built against Open MPI (built if missing).
    Raises RuntimeError with the reason when it cannot be built."""
    mpicc = shutil.which("mpicc.openmpi")
    if mpicc is None:
        raise RuntimeError("mpicc.openmpi not found: bash scripts/ensure_openmpi.sh "
                           "(apt-get install openmpi-bin libopenmpi-dev)")
    version = importlib.metadata.version("mpi4py")
    target = cache_root() / f"mpi4py-{version}-openmpi-{open_mpi_version(mpicc)}"
    if (target / "mpi4py" / "__init__.py").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    # Open MPI's headers first: the venv's PyPI mpich puts MPICH's mpi.h in
    # <venv>/include, which the build would otherwise pick up (undefined
    # MPI_* symbols at import)
    incdirs = subprocess.run([mpicc, "--showme:incdirs"], capture_output=True,
                             text=True, timeout=30).stdout.split()
    cflags = " ".join(f"-I{d}" for d in incdirs)
    env = dict(os.environ, MPICC=mpicc,
               CFLAGS=(cflags + " " + os.environ.get("CFLAGS", "")).strip())
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-cache-dir",
           "--no-binary", "mpi4py", "--no-deps", "--target", str(tmp),
           f"mpi4py=={version}"]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True,
                             timeout=timeout_s)
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"building mpi4py against Open MPI took over {timeout_s:g} s") \
            from None
    if out.returncode != 0 or not (tmp / "mpi4py" / "__init__.py").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError("building mpi4py against Open MPI failed: " + " ".join(cmd) +
                           "\n" + (out.stdout + out.stderr)[-3000:])
    probe = subprocess.run(
        [sys.executable, "-c", "import mpi4py; mpi4py.rc.initialize = False; "
         "from mpi4py import MPI; print(MPI.Get_library_version())"],
        env=dict(os.environ, PYTHONPATH=str(tmp)), capture_output=True, text=True,
        timeout=60)
    if "Open MPI" not in probe.stdout:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError("mpi4py built against Open MPI does not load: " +
                           (probe.stdout + probe.stderr)[-2000:])
    try:
        tmp.rename(target)              # atomic: a half-built folder is never used
    except OSError:                     # another run finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


if __name__ == "__main__":
    try:
        print(build_mpi4py_for_open_mpi())
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
