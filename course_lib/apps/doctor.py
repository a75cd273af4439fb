"""Environment doctor: is this machine ready for the course?

Run it from a shell (``make doctor`` or ``python -m course_lib doctor``) or
from a notebook cell (``from course_lib import doctor; doctor.run()``).  Each
check reports ``ok``, ``warn`` or ``fail`` with a concrete fix:

* Python against ``requires-python``, and every package ``pyproject.toml``
  lists, at the right version (the core dependencies and the ``course``
  extras are required, the ``test`` and ``bench`` extras are not), read with
  ``packaging`` -- from the installed metadata where there is no
  pyproject.toml (a wheel install): the requirements are listed only there;
* the ipywidgets front-end (JupyterLab extension) installed and not disabled;
* matplotlib can draw (a tiny figure rendered to PNG with Agg);
* figures show in the Lab: a kernel started the way ``make lab`` starts one
  (:func:`lab_kernel_env`) draws a pyplot figure as an ``image/png`` output
  (with ``--quick``: only the backend such a kernel would pick is worked out);
* CuPy and an NVIDIA GPU -- name, PCIe generation and width (optional);
* MPI: ``mpiexec`` found, and a 2-rank mpi4py hello runs within a timeout;
* memory available (the container's limit counts, not only the host's) vs
  the 1.5 GB the course needs;
* nbgrader importable and ``alembic`` (which nbgrader runs by name) on PATH;
* Debian's chromium for the browser tests (optional).

A missing *required* item makes :func:`main` exit non-zero; optional items
(GPU, chromium, test tools) only warn.  No check ever raises: a check that
crashes is reported as a problem with its exception.

Two audiences.  A learner (the default of ``doctor.run()`` in chapter 0 and of
``make doctor``) sees what the course needs and one verdict at the end,
"Ready for the course." or "Not ready: ...".  Items only an instructor or a
developer needs -- ``alembic`` for nbgrader's gradebook, the test and
benchmark tools, chromium for the browser tests -- are checked and listed
with ``--instructor`` (``doctor.run(instructor=True)``; :func:`report`
includes them by default), and never make a learner's set-up "not ready".

Examples
--------
>>> c = Check("demo", "warn", "something optional is missing", fix="install it",
...           required=False)
>>> c.mark in ("!", "[!]")
True
"""

from __future__ import annotations

import importlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Check", "report", "ready", "verdict", "run", "main", "print_report", "format_table",
           "requirements", "add_arguments", "lab_kernel_env", "check_lab_figures",
           "COURSE_MEMORY_BYTES", "LAB_UNSET"]

#: Peak memory the whole course needs in one session, bytes (1.5 GB, GB = 1e9).
COURSE_MEMORY_BYTES = 1.5e9
#: Below this the course cannot even run one chapter: a failure, not a warning.
MIN_MEMORY_BYTES = 0.5e9
MPI_TIMEOUT_S = 60.0
NVIDIA_SMI_TIMEOUT_S = 15.0
KERNEL_TIMEOUT_S = 60.0
#: What ``make lab`` (and ``make instructor-lab``) take out of the Lab's environment
#: (the Makefile's ``LAB_ENV := env -u MPLBACKEND``; ``tests/test_doctor.py`` checks the two
#: agree): ipykernel chooses its inline backend only when ``MPLBACKEND`` is unset.
LAB_UNSET = ("MPLBACKEND",)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"

_REPO = Path(__file__).resolve().parents[2]  # the repository (course_lib/apps/doctor.py)
_DIST = "interconnect-city"
# nbgrader 0.9.6's own floor: the Python check's yardstick only when the
# course's requirements cannot be read (otherwise requires-python is)
_NBGRADER_PYTHON = ">=3.11"
_STATUSES = ("ok", "warn", "fail")

# distribution name -> module to import (only where importing proves something;
# nbgrader, slow to import, is imported once by check_nbgrader)
_IMPORT_NAMES = {
    "numpy": "numpy", "matplotlib": "matplotlib", "networkx": "networkx",
    "ipywidgets": "ipywidgets", "tqdm": "tqdm",
    "nbclient": "nbclient", "nbconvert": "nbconvert", "nbformat": "nbformat",
    "mpi4py": "mpi4py", "ipykernel": "ipykernel",
}

# Hooks the tests replace to simulate a broken environment.
_version_of = importlib.metadata.version
_import_module = importlib.import_module
_which = shutil.which
#: Where Debian puts chromium when it is not on PATH.
_CHROMIUM_PATHS = ("/usr/bin/chromium",)


@dataclass
class Check:
    """The result of one check.

    Parameters
    ----------
    name : str
        What was checked (``"numpy"``, ``"MPI"``, ...).
    status : str
        ``"ok"``, ``"warn"`` or ``"fail"``.
    detail : str
        What was found.
    fix : str
        What to do about it (empty when ``status == "ok"``).
    required : bool
        Whether the course needs it; a required item that fails makes the
        doctor exit non-zero.
    instructor_only : bool
        Grading or testing only (``alembic``, chromium, test tools): not
        shown to a learner, and never blocking for one.
    """

    name: str
    status: str
    detail: str
    fix: str = ""
    required: bool = True
    instructor_only: bool = False

    def __post_init__(self):
        if self.status not in _STATUSES:
            raise ValueError(f"status must be one of {_STATUSES}, got {self.status!r}")

    @property
    def mark(self) -> str:
        """✓, ! or ✗ (ASCII ``[ok]``/``[!]``/``[x]`` where stdout cannot print them)."""
        fancy = {"ok": "✓", "warn": "!", "fail": "✗"}[self.status]
        if _can_print("✓✗"):
            return fancy
        return {"ok": "[ok]", "warn": "[!]", "fail": "[x]"}[self.status]

    @property
    def blocking(self) -> bool:
        """True when this check makes the environment not ready."""
        return self.status == "fail" and self.required


def _can_print(text: str) -> bool:
    enc = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(enc)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _pip(spec: str) -> str:
    return f'{sys.executable} -m pip install "{spec}"'


def _bin_dir() -> Path:
    """The directory of this Python's scripts (the venv's ``bin``)."""
    return Path(sys.executable).parent


# ---------------------------------------------------------------------------
# requirements
# ---------------------------------------------------------------------------
def _distribution_requires() -> list[str]:
    """The installed package's ``Requires-Dist`` lines (hook the tests replace)."""
    return importlib.metadata.requires(_DIST) or []


def _distribution_requires_python() -> str:
    return importlib.metadata.metadata(_DIST).get("Requires-Python") or ""


def requirements() -> dict:
    """The course's requirements: ``{"required": [...], "optional": [...],
    "python": specifier, "source": str}``.

    They are listed once, in ``pyproject.toml``: the core dependencies and
    the ``course`` extras are required, the ``test`` and ``bench`` extras
    optional (``gpu`` is checked separately, by :func:`check_gpu`).  Read
    from the repository's ``pyproject.toml`` when this is a source checkout
    (an editable install's metadata goes stale when pyproject changes), else
    from the installed distribution's metadata (a wheel install).  Raises
    ``LookupError`` when neither is found.
    """
    from packaging.requirements import Requirement

    pyproject = _REPO / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        proj = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        extras = proj.get("optional-dependencies", {})
        return {"required": list(proj.get("dependencies", [])) + list(extras.get("course", [])),
                "optional": list(extras.get("test", [])) + list(extras.get("bench", [])),
                "python": proj.get("requires-python", ""),
                "source": str(pyproject)}
    try:
        lines = _distribution_requires()
        python = _distribution_requires_python()
    except importlib.metadata.PackageNotFoundError:
        raise LookupError(f"neither {pyproject} nor an installed {_DIST!r} "
                          "distribution was found") from None
    required, optional = [], []
    for line in lines:  # e.g. 'nbgrader==0.9.6; extra == "course"'
        req = Requirement(line)
        marker, req.marker = req.marker, None
        if marker is None or marker.evaluate({"extra": "course"}):
            required.append(str(req))
        elif any(marker.evaluate({"extra": e}) for e in ("test", "bench")):
            optional.append(str(req))
    return {"required": required, "optional": optional, "python": python,
            "source": f"installed {_DIST} metadata"}


def check_python(specifier: str = "") -> Check:
    """This Python against ``requires-python`` (default: the course's)."""
    from packaging.specifiers import SpecifierSet

    specifier = specifier or requirements()["python"]
    v = sys.version_info
    found = f"{v.major}.{v.minor}.{v.micro}"
    if found in SpecifierSet(specifier):
        return Check("Python", "ok", f"{found} at {sys.executable} (needs {specifier})")
    return Check("Python", "fail", f"{found} does not meet the course's requires-python "
                 f"{specifier} (nbgrader 0.9.6 needs >= 3.11)",
                 fix="install Python 3.11 or newer, then `make clean-venv setup` "
                     "(or `make PYTHON=python3.12 setup`)")


def check_package(spec: str, required: bool = True) -> Check:
    """Check that the distribution in ``spec`` (e.g. ``"numpy>=1.26"``) is installed,
    meets the constraint and, where it has a module, imports."""
    from packaging.requirements import Requirement

    req = Requirement(spec)
    name, constraint = req.name, str(req.specifier)
    fix = f"{_pip(spec)}   (or `make setup`)"
    bad = "fail" if required else "warn"
    try:
        version = _version_of(name)
    except importlib.metadata.PackageNotFoundError:
        return Check(name, bad, f"not installed (needs {constraint or 'any version'})",
                     fix=fix, required=required)
    ok = req.specifier.contains(version, prereleases=True)
    if not ok:
        return Check(name, bad, f"{version} installed, needs {constraint}",
                     fix=fix, required=required)
    module = _IMPORT_NAMES.get(name)
    if module:
        try:
            _import_module(module)
        except Exception as exc:  # ImportError, or a broken binary
            return Check(name, bad, f"{version} installed but `import {module}` fails: "
                         f"{type(exc).__name__}: {exc}",
                         fix=f"{_pip(spec)} --force-reinstall", required=required)
    return Check(name, "ok", f"{version} ({constraint or 'any'})", required=required)


# ---------------------------------------------------------------------------
# front end, drawing
# ---------------------------------------------------------------------------
def _labextension_dirs() -> list[Path]:
    dirs = []
    try:
        from jupyter_core.paths import jupyter_path

        dirs = [Path(p) for p in jupyter_path("labextensions")]
    except Exception:
        pass
    own = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    if own not in dirs:
        dirs.append(own)
    return dirs


def _disabled_labextensions() -> set[str]:
    """Names disabled in any ``labconfig/page_config.json`` on the config path."""
    dirs = []
    try:
        from jupyter_core.paths import jupyter_config_path

        dirs = [Path(p) for p in jupyter_config_path()]
    except Exception:
        dirs = [Path(sys.prefix) / "etc" / "jupyter"]
    disabled = set()
    for d in dirs:
        page = d / "labconfig" / "page_config.json"
        try:
            cfg = json.loads(page.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for k, v in (cfg.get("disabledExtensions") or {}).items():
            if v:
                disabled.add(k)
    return disabled


WIDGETS_LABEXTENSION = "@jupyter-widgets/jupyterlab-manager"


def check_widgets_frontend() -> Check:
    """The ipywidgets JupyterLab extension is installed (file check) and not disabled."""
    name = "ipywidgets front-end"
    found = None
    for d in _labextension_dirs():
        pkg = d / WIDGETS_LABEXTENSION / "package.json"
        if pkg.is_file():
            found = pkg
            break
    if found is None:
        return Check(name, "fail",
                     f"JupyterLab extension {WIDGETS_LABEXTENSION} not found: "
                     "explorers would show as text, not sliders",
                     fix=f"{_pip('jupyterlab_widgets>=3')} ; {_pip('ipywidgets>=8.1,<9')}"
                         " ; then restart JupyterLab")
    try:
        version = json.loads(found.read_text(encoding="utf-8")).get("version", "?")
    except (OSError, ValueError):
        version = "?"
    disabled = _disabled_labextensions()
    if WIDGETS_LABEXTENSION in disabled:
        return Check(name, "fail", f"{WIDGETS_LABEXTENSION} {version} installed but disabled",
                     fix=f"jupyter labextension enable {WIDGETS_LABEXTENSION} ; "
                         "then reload the JupyterLab page")
    return Check(name, "ok", f"{WIDGETS_LABEXTENSION} {version} enabled ({found.parent.parent.parent})")


def check_matplotlib() -> Check:
    """Render a tiny figure to PNG with the Agg canvas."""
    fix = (f"{_pip('matplotlib>=3.8')} --force-reinstall ; and unset a broken MPLBACKEND "
           "(`export MPLBACKEND=Agg` for headless runs)")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(1, 1), dpi=20)
        fig.add_subplot().plot([0, 1], [0, 1])
        buf = io.BytesIO()
        FigureCanvasAgg(fig).print_png(buf)
        png = buf.getvalue()
    except Exception as exc:
        return Check("matplotlib draws", "fail", f"{type(exc).__name__}: {exc}", fix=fix)
    if not png.startswith(b"\x89PNG"):
        return Check("matplotlib draws", "fail", "Agg produced no PNG", fix=fix)
    return Check("matplotlib draws", "ok", f"Agg rendered a {len(png)}-byte PNG")


def lab_kernel_env(environ=None) -> dict:
    """The environment a kernel of ``make lab`` starts with: ``environ`` (default
    this process's, which ``make doctor`` gives the Makefile's exports) less
    :data:`LAB_UNSET`, as the Makefile's lab recipes run ``jupyter lab``."""
    env = dict(os.environ if environ is None else environ)
    for name in LAB_UNSET:
        env.pop(name, None)
    return env


#: A chapter's figure cell in miniature: pyplot, no explicit show (the inline
#: backend displays the figure when the cell ends), then the backend's name.
_FIGURE_CELL = ("import matplotlib, matplotlib.pyplot as plt\n"
                "fig, ax = plt.subplots(figsize=(1, 1), dpi=20)\n"
                "ax.plot([0, 1], [0, 1])\n"
                "print('backend:', matplotlib.get_backend())")
_LAB_FIX = ("start the Lab with `make lab` (it unsets MPLBACKEND); if you start "
            "`jupyter lab` yourself, run `unset MPLBACKEND` first (or "
            f"`export MPLBACKEND={INLINE_BACKEND}`), then restart the kernel")


def check_lab_figures(timeout_s: float = KERNEL_TIMEOUT_S, start_kernel: bool = True,
                      environ=None) -> Check:
    """Start a ``python3`` kernel with :func:`lab_kernel_env` and run a figure
    cell: the figure must come back as an ``image/png`` output, as a learner's
    chapter cell would show it.  ``start_kernel=False`` (``--quick``) only works
    out which backend such a kernel picks (ipykernel: inline unless
    ``MPLBACKEND`` says otherwise)."""
    name = "figures show in the Lab"
    env = lab_kernel_env(environ)
    if not start_kernel:
        backend = env.get("MPLBACKEND") or INLINE_BACKEND
        if backend != INLINE_BACKEND:
            return Check(name, "fail", f"a Lab kernel would draw with MPLBACKEND={backend}: "
                         "no figure would show", fix=_LAB_FIX)
        return Check(name, "ok", "a Lab kernel would pick the inline backend "
                     "(not started: --quick)")
    from jupyter_client.manager import start_new_kernel

    try:
        km, kc = start_new_kernel(kernel_name="python3", env=env, startup_timeout=timeout_s,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except Exception as exc:
        return Check(name, "fail", f"no python3 kernel started: {type(exc).__name__}: {exc}",
                     fix=f"{_pip('ipykernel')} ; then run `make doctor` again")
    outputs = []

    def hook(msg):
        outputs.append(msg)

    try:
        reply = kc.execute_interactive(_FIGURE_CELL, timeout=timeout_s, output_hook=hook,
                                       store_history=False)
    except Exception as exc:
        return Check(name, "fail", f"the figure cell did not finish: {type(exc).__name__}: {exc}",
                     fix=_LAB_FIX)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(m["content"].get("text", "") for m in outputs
                   if m["msg_type"] == "stream")
    backend = (re.findall(r"backend: (\S+)", text) or ["?"])[-1]
    images = [m for m in outputs if m["msg_type"] in ("display_data", "execute_result")
              and "image/png" in m["content"].get("data", {})]
    if reply["content"].get("status") != "ok":
        return Check(name, "fail", f"the figure cell failed in the kernel: "
                     f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}",
                     fix=f"{_pip('matplotlib>=3.8')} --force-reinstall")
    if not images:
        return Check(name, "fail", f"a kernel started as `make lab` starts one drew with "
                     f"{backend}: the figure was not shown (no image/png output)", fix=_LAB_FIX)
    return Check(name, "ok", f"a kernel started as `make lab` starts one showed the figure "
                 f"(image/png, backend {backend})")


# ---------------------------------------------------------------------------
# GPU
# ---------------------------------------------------------------------------
def _nvidia_smi() -> list[dict]:
    exe = _which("nvidia-smi")
    if not exe:
        return []
    out = subprocess.run(
        [exe, "--query-gpu=name,pcie.link.gen.current,pcie.link.width.current,"
              "pcie.link.gen.max,pcie.link.width.max",
         "--format=csv,noheader"],
        capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S, check=True).stdout
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3:
            gpus.append({"name": parts[0], "pcie_gen": parts[1], "pcie_width": parts[2],
                         "pcie_gen_max": parts[3] if len(parts) > 3 else "?",
                         "pcie_width_max": parts[4] if len(parts) > 4 else "?"})
    return gpus


def check_gpu() -> Check:
    """CuPy and an NVIDIA GPU (optional: absence is a warning)."""
    name = "GPU (CuPy)"
    fix_gpu = ('optional: on a machine with an NVIDIA GPU and CUDA 12 driver, '
               'pip install -e ".[gpu]"  (CuPy). Without one the GPU cells skip and '
               'the models and CPU labs still work.')
    smi, smi_err = [], ""
    try:
        smi = _nvidia_smi()
    except Exception as exc:
        smi_err = f"nvidia-smi failed: {type(exc).__name__}"
    try:
        import cupy  # noqa: F401
    except Exception as exc:
        where = ("; nvidia-smi sees " + ", ".join(g["name"] for g in smi)) if smi else ""
        return Check(name, "warn", f"CuPy not importable ({type(exc).__name__}){where}",
                     fix=fix_gpu, required=False)
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return Check(name, "warn", f"CuPy {cupy.__version__} but no usable GPU: {exc}",
                     fix="check the NVIDIA driver (`nvidia-smi`) and that the CuPy "
                         "package matches its CUDA version", required=False)
    if n == 0:
        return Check(name, "warn", f"CuPy {cupy.__version__} but no GPU found",
                     fix=fix_gpu, required=False)
    descs = []
    for i in range(n):
        try:
            props = cupy.cuda.runtime.getDeviceProperties(i)
            gname = props.get("name", b"?")
            gname = gname.decode() if isinstance(gname, bytes) else str(gname)
        except Exception:
            gname = "?"
        if i < len(smi):
            g = smi[i]
            link = (f"PCIe gen {g['pcie_gen']} x{g['pcie_width']} now "
                    f"(max gen {g['pcie_gen_max']} x{g['pcie_width_max']})")
        else:
            link = "PCIe link not readable" + (f" ({smi_err})" if smi_err else "")
        descs.append(f"#{i} {gname}, {link}")
    return Check(name, "ok", f"CuPy {cupy.__version__}, {n} GPU(s): " + "; ".join(descs),
                 required=False)


# ---------------------------------------------------------------------------
# MPI
# ---------------------------------------------------------------------------
# one write per rank, so the two ranks' lines cannot interleave mid-line
_MPI_HELLO = ("import sys; from mpi4py import MPI; c = MPI.COMM_WORLD; "
              "sys.stdout.write(f'hello {c.Get_rank()} {c.Get_size()}\\n'); sys.stdout.flush()")


def find_mpiexec() -> str | None:
    """The launcher of the MPI that mpi4py was built with (MPICH or Open MPI;
    see :func:`course_lib.measure.mpi_allreduce.mpi_setup`), or None."""
    from course_lib.measure.mpi_allreduce import mpi_setup
    return mpi_setup()[0]


def check_mpi(timeout_s: float = MPI_TIMEOUT_S, run_hello: bool = True) -> Check:
    """``mpiexec`` exists and a 2-rank mpi4py hello runs within ``timeout_s``."""
    fix = (f'{_pip("mpi4py>=4.0")} ; {_pip("mpich>=4.2")}   (or `make setup`; '
           "on conda: conda install -c conda-forge mpi4py mpich)")
    exe = find_mpiexec()
    if exe is None:
        return Check("MPI", "fail", "no mpiexec of the MPI that mpi4py uses was found "
                     "next to Python nor on PATH", fix=fix)
    if not run_hello:
        return Check("MPI", "ok", f"{exe} (2-rank hello not run)")
    from course_lib.measure.mpi_allreduce import flavour_of, launcher_version, worker_env
    cmd = [exe, "-n", "2", sys.executable, "-c", _MPI_HELLO]
    # Open MPI as root, or more ranks than cores, needs its documented opt-ins
    env = worker_env(2, None, flavour_of(launcher_version(exe)))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return Check("MPI", "fail", f"2-rank hello did not finish in {timeout_s:g} s",
                     fix="check that nothing blocks local MPI (another MPI's mpiexec "
                         f"first on PATH? run `{exe} -n 2 hostname`); " + fix)
    greetings = sorted(re.findall(r"hello (\d+) (\d+)", proc.stdout))
    if proc.returncode != 0 or greetings != [("0", "2"), ("1", "2")]:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return Check("MPI", "fail", f"2-rank hello failed (exit {proc.returncode}): {tail[0]}",
                     fix="mpi4py and mpiexec must come from the same MPI; " + fix)
    return Check("MPI", "ok", f"2-rank mpi4py hello ran with {exe}")


# ---------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------
def _meminfo_available_bytes() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_headroom_bytes() -> float | None:
    """Limit minus usage of this container's memory cgroup (v2 or v1), if limited."""
    pairs = [("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
             ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
              "/sys/fs/cgroup/memory/memory.usage_in_bytes")]
    for lim_path, use_path in pairs:
        try:
            raw = Path(lim_path).read_text().strip()
            if raw == "max":
                return None
            limit = float(raw)
            if limit >= 2**60:  # "unlimited" in cgroup v1
                return None
            usage = float(Path(use_path).read_text().strip())
            return max(0.0, limit - usage)
        except (OSError, ValueError):
            continue
    return None


def check_memory(need_bytes: float = COURSE_MEMORY_BYTES) -> Check:
    """Memory available to this session vs what the course needs (bytes)."""
    avail = _meminfo_available_bytes()
    cg = _cgroup_headroom_bytes()
    if avail is None and cg is None:
        return Check("memory", "warn", "cannot read /proc/meminfo (not Linux?)",
                     fix=f"make sure about {need_bytes / 1e9:.1f} GB is free", required=False)
    candidates = [x for x in (avail, cg) if x is not None]
    free = min(candidates)
    src = "container limit" if cg is not None and free == cg else "MemAvailable"
    detail = f"{free / 1e9:.2f} GB available ({src}); the course needs {need_bytes / 1e9:.1f} GB"
    fix = ("close other notebooks' kernels (Kernel > Shut Down All Kernels) and other "
           "programs; on Binder, restart the server to free memory")
    if free >= need_bytes:
        return Check("memory", "ok", detail)
    if free >= MIN_MEMORY_BYTES:
        return Check("memory", "warn", detail + ": run one chapter at a time",
                     fix=fix, required=False)
    return Check("memory", "fail", detail + ": not even one chapter fits", fix=fix)


# ---------------------------------------------------------------------------
# grading tools, browser
# ---------------------------------------------------------------------------
def check_nbgrader() -> Check:
    try:
        mod = _import_module("nbgrader")
        version = getattr(mod, "__version__", "?")
    except Exception as exc:
        return Check("nbgrader imports", "fail", f"`import nbgrader` fails: {type(exc).__name__}: {exc}",
                     fix=f"{_pip('nbgrader==0.9.6')}   (needs Python >= 3.11)")
    return Check("nbgrader imports", "ok", f"nbgrader {version}")


def check_alembic() -> Check:
    """nbgrader runs ``alembic`` by name, so it must be on PATH."""
    on_path = _which("alembic")
    if on_path:
        return Check("alembic on PATH", "ok", on_path)
    beside = _bin_dir() / "alembic"
    if beside.is_file():
        return Check("alembic on PATH", "fail",
                     f"{beside} exists but its folder is not on PATH: nbgrader's "
                     "gradebook commands would fail",
                     fix=f'export PATH="{_bin_dir()}:$PATH"  (or `source {_bin_dir()}/activate`; '
                         "the make targets do this)")
    return Check("alembic on PATH", "fail", "alembic is not installed",
                 fix=f"{_pip('alembic')}  (it comes with nbgrader)")


def check_chromium() -> Check:
    exe = _which("chromium") or next((p for p in _CHROMIUM_PATHS if os.path.exists(p)), None)
    if exe:
        return Check("chromium (browser tests)", "ok", exe, required=False)
    return Check("chromium (browser tests)", "warn",
                 "not installed: the real-browser tests will skip",
                 fix="optional, for `make test` only: `make browser` as root "
                     "(apt-get install chromium)", required=False)


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------
def _safe(fn, name: str, required: bool, *args, **kwargs) -> Check:
    try:
        result = fn(*args, **kwargs)
        if isinstance(result, Check):
            return result
        return Check(name, "fail" if required else "warn",
                     f"the check returned {type(result).__name__}, not a Check",
                     fix="report this as a bug in course_lib/apps/doctor.py", required=required)
    except (Exception, SystemExit) as exc:  # never raise (Ctrl-C still stops it)
        return Check(name, "fail" if required else "warn",
                     f"the check itself crashed: {type(exc).__name__}: {exc}",
                     fix="report this (with the line above) to the course maintainers",
                     required=required)


def _for_instructors(check: Check) -> Check:
    check.instructor_only = True
    return check


def report(quick: bool = False, instructor: bool = True) -> list[Check]:
    """Run every check and return the results (never raises).

    Parameters
    ----------
    quick : bool
        Skip the slower checks' work (the 2-rank MPI run: only ``mpiexec``
        is located; the Lab kernel: only its backend is worked out).
    instructor : bool
        Include the grading and testing items (``instructor_only``); with
        ``False`` they are not run at all (a learner's view).
    """
    try:
        reqs = requirements()
    except Exception as exc:  # no pyproject.toml, no metadata, or `packaging` missing
        reqs = {"required": [], "optional": [], "python": _NBGRADER_PYTHON}
        checks = [Check("course requirements", "fail",
                        f"cannot read them: {type(exc).__name__}: {exc}",
                        fix=f"{_pip('packaging')} ; run from the course's repository, "
                            "or install the course (`make setup`)")]
    else:
        checks = []
    checks.insert(0, _safe(check_python, "Python", True, reqs["python"]))
    for spec in reqs["required"]:
        checks.append(_safe(check_package, spec, True, spec, True))
    for spec in reqs["optional"]:
        checks.append(_for_instructors(_safe(check_package, spec, False, spec, False)))
    checks += [
        _safe(check_widgets_frontend, "ipywidgets front-end", True),
        _safe(check_matplotlib, "matplotlib draws", True),
        _safe(check_lab_figures, "figures show in the Lab", True, start_kernel=not quick),
        _safe(check_gpu, "GPU (CuPy)", False),
        _safe(check_mpi, "MPI", True, run_hello=not quick),
        _safe(check_memory, "memory", True),
        _safe(check_nbgrader, "nbgrader imports", True),
        _for_instructors(_safe(check_alembic, "alembic on PATH", True)),
        _for_instructors(_safe(check_chromium, "chromium (browser tests)", False)),
    ]
    return checks if instructor else [c for c in checks if not c.instructor_only]


def ready(checks: list[Check]) -> bool:
    """True when no required check failed."""
    return not any(c.blocking for c in checks)


def verdict(checks: list[Check]) -> str:
    """One line a learner acts on: ``"Ready for the course."`` or
    ``"Not ready: fix <items> (see above), then run this again."``

    >>> verdict([Check("numpy", "ok", "2.1")])
    'Ready for the course.'
    >>> verdict([Check("numpy", "fail", "missing"), Check("GPU", "warn", "none", required=False)])
    'Not ready: fix numpy (see above), then run this again.'
    """
    blocking = [c.name for c in checks if c.blocking]
    if blocking:
        return f"Not ready: fix {', '.join(blocking)} (see above), then run this again."
    return "Ready for the course."


def format_table(checks: list[Check], instructor: bool = True) -> str:
    """The checks as a readable table, fixes indented under each problem.

    An instructor's table ends with the counts and the verdict; a learner's
    (``instructor=False``) leaves out the grading and testing items and ends
    with the :func:`verdict` alone."""
    if not instructor:
        checks = [c for c in checks if not c.instructor_only]
    width = max([len(c.name) for c in checks] + [10])
    lines = ["Interconnect City - environment doctor", ""]
    for c in checks:
        opt = "" if c.required or c.status == "ok" else " (optional)"
        lines.append(f"  {c.mark:<4} {c.name:<{width}}  {c.detail}{opt}")
        if c.fix and c.status != "ok":
            lines.append(f"  {'':<4} {'':<{width}}  fix: {c.fix}")
    if not instructor:
        return "\n".join(lines + ["", verdict(checks)])
    n = {s: sum(c.status == s for c in checks) for s in _STATUSES}
    overall = ("READY for the course" if ready(checks)
               else "NOT READY: fix the required items marked " + Check("x", "fail", "").mark)
    lines += ["", f"{n['ok']} ok, {n['warn']} warning(s), {n['fail']} problem(s) -- {overall}"]
    return "\n".join(lines)


def run(print_: bool = True, quick: bool = False, instructor: bool = False) -> bool:
    """Run the checks, print the table (when ``print_``) and return readiness.

    For a notebook cell: ``from course_lib import doctor; doctor.run()`` -- a
    learner's view that ends with one verdict line; ``instructor=True`` adds
    the grading and testing items.
    """
    checks = report(quick=quick, instructor=instructor)
    if print_:
        try:
            print(format_table(checks, instructor=instructor))
        except Exception:
            pass
    return ready(checks)


#: One line for ``python -m course_lib --help``; the parser's description.
SUMMARY = "check this machine's set-up for the course"
DESCRIPTION = "Check this machine's set-up for the course."


def add_arguments(parser) -> None:
    """The ``doctor`` command's options, on ``parser`` (see :mod:`course_lib.apps.command`)."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quick", action="store_true",
                        help="skip the 2-rank MPI run (only locate mpiexec) and the Lab "
                             "kernel's figure (only work out its backend)")
    parser.add_argument("--instructor", action="store_true",
                        help="also check what grading and the tests need (alembic, "
                             "chromium, test tools)")
    parser.set_defaults(run=lambda a: print_report(as_json=a.json, quick=a.quick,
                                                   instructor=a.instructor),
                        command_parser=parser)


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib doctor [--json] [--quick]``; exit 1 when not ready."""
    from .command import Parser, run_parser

    parser = Parser(prog="python -m course_lib doctor", description=DESCRIPTION)
    add_arguments(parser)
    return run_parser(parser, argv)


def print_report(as_json: bool = False, quick: bool = False, instructor: bool = False) -> int:
    """Run the checks, print them (a table, or JSON) and return the exit
    status: 0 ready, 1 not ready."""
    checks = report(quick=quick, instructor=instructor)
    ok = ready(checks)
    if as_json:
        print(json.dumps({"ready": ok, "verdict": verdict(checks),
                          "audience": "instructor" if instructor else "learner",
                          "checks": [dict(asdict(c), mark=c.mark) for c in checks]},
                         indent=2, ensure_ascii=False))
    else:
        print(format_table(checks, instructor=instructor))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
