"""A learner's JupyterLab for the browser tests and the screenshots, started one way.

``tests/test_browser.py`` and ``scripts/screenshot_chapters.py`` both open the
chapters in Debian's chromium against a JupyterLab that must be the one learners
get: a venv sharing this environment's packages (a ``.pth`` file) and Jupyter
data (a link), its config a copy of this one's put through
``scripts/learner_lab.sh`` (what ``make lab`` and Binder do).  This environment
is not changed.

    server, url = start_lab(root, token="t")   # serves root / "notebooks"
    ...
    stop_lab(server)
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
#: Debian's chromium (``bash scripts/ensure_chromium.sh``); Playwright never downloads one.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def explorer_count(path: pathlib.Path) -> int:
    """How many explorers a notebook shows (code cells calling ``.show()``)."""
    nb = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    return sum("".join(c["source"]).count(".show()") for c in nb["cells"]
               if c["cell_type"] == "code")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def learner_python(root: pathlib.Path) -> str:
    """Make ``root / 'learner-venv'`` (see the module's docstring); returns its python.

    Raises RuntimeError with the script's output if ``learner_lab.sh`` fails."""
    import sysconfig

    venv = pathlib.Path(root) / "learner-venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                    "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    pathlib.Path(site, "course-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (venv / "share").mkdir(exist_ok=True)
    os.symlink(pathlib.Path(sys.prefix) / "share" / "jupyter", venv / "share" / "jupyter")
    if (pathlib.Path(sys.prefix) / "etc").is_dir():
        shutil.copytree(pathlib.Path(sys.prefix) / "etc", venv / "etc")
    proc = subprocess.run(["bash", str(REPO / "scripts" / "learner_lab.sh"), str(py)],
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("scripts/learner_lab.sh failed: " + (proc.stdout + proc.stderr)[-2000:])
    return str(py)


def start_lab(root: pathlib.Path, token: str, start_timeout_s: float = 120.0
              ) -> tuple[subprocess.Popen, str]:
    """A learner's JupyterLab over ``root / 'notebooks'`` on a free localhost port.

    Returns ``(process, base URL)``; raises RuntimeError (with the end of
    ``root / 'lab.log'``) if the server exits or does not answer in time."""
    root = pathlib.Path(root)
    nb_dir = root / "notebooks"
    python = learner_python(root)
    port = free_port()
    env = dict(os.environ)
    env.update({
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(pathlib.Path(python).parent),
                                 str(pathlib.Path(sys.executable).parent), env.get("PATH", "")]),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces"),
    })
    env.pop("COURSE_STATIC", None)
    cmd = [python, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={nb_dir}", "--ServerApp.open_browser=False",
           "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=True",
           "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")       # containers and CI often run as root
    log_path = root / "lab.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  cwd=nb_dir)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + start_timeout_s
    while time.time() < deadline:
        if server.poll() is not None:
            raise RuntimeError("JupyterLab exited: " + log_path.read_text()[-2000:])
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return server, base
        except OSError:
            time.sleep(0.5)
    stop_lab(server)
    raise RuntimeError(f"JupyterLab did not start within {start_timeout_s:.0f} s; see {log_path}")


def stop_lab(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=5)
