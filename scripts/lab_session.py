"""The learner's JupyterLab for the browser tests and the screenshots: ``make lab``,
started exactly as the README says.

``tests/test_browser.py``, ``tests/test_learner_door.py`` and
``scripts/screenshot_chapters.py`` open the chapters in Debian's chromium against
the Lab a learner gets, through the learner's own door::

    make lab PORT=<port> LAB_ARGS=--no-browser

run in a checkout of the course and with this process's environment as it is
(nothing added: no MPLBACKEND, no PYTHONPATH).  The checkout is a copy of this
repository (its tracked and not-ignored files, with ``.venv`` a link to this
checkout's venv), so running every cell and JupyterLab's autosave touch only
files the session created.  The token is the one the Lab prints.

    checkout = lab_checkout(tmp)                      # tmp / "course"
    lab = start_lab(checkout)                         # make lab PORT=... LAB_ARGS=--no-browser
    page.goto(lab.url("notebooks/00_start_here.ipynb"))
    stop_lab(lab)

``start_lab(..., lab_args=[...])`` adds Lab options through ``LAB_ARGS`` (the
README's knob); the suite's older browser tests add
``--LabApp.expose_app_in_browser=True`` there to drive JupyterLab's commands.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass

REPO = pathlib.Path(__file__).resolve().parents[1]
#: Debian's chromium (``bash scripts/ensure_chromium.sh``); Playwright never downloads one.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
#: Ports tried first (clear of Jupyter's 8888 and the hub's 8000), then any free one.
PORTS = range(18400, 18500)
#: What the Lab prints once it serves: its URL with the token.
_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/lab\S*\?token=([0-9a-f]+)")


def explorer_count(path: pathlib.Path) -> int:
    """How many explorers a notebook shows (code cells calling ``.show()``)."""
    nb = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    return sum("".join(c["source"]).count(".show()") for c in nb["cells"]
               if c["cell_type"] == "code")


def free_port() -> int:
    """A free localhost port, from :data:`PORTS` where one is free."""
    for port in list(PORTS) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free port")


def _course_files() -> list[str]:
    """The checkout's files: tracked and untracked-but-not-ignored (git), else every
    file outside the build folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                             check=True, capture_output=True, timeout=60).stdout
        return [f for f in out.decode().split("\0") if f and (REPO / f).is_file()]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", ".venv", "_site", "_slides", "node_modules", "lab_results",
                "__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints"}
        return [str(p.relative_to(REPO)) for p in REPO.rglob("*")
                if p.is_file() and not skip & set(p.relative_to(REPO).parts)]


def lab_checkout(dest: pathlib.Path) -> pathlib.Path:
    """Copy the course into ``dest / 'course'`` (modification times kept, so `make`
    finds the venv up to date); ``.venv`` and ``deploy/node_modules`` link to this
    checkout's.  Returns the copy."""
    root = pathlib.Path(dest) / "course"
    for rel in _course_files():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    for rel in (".venv", "deploy/node_modules"):
        if (REPO / rel).exists():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink((REPO / rel).resolve(), root / rel)
    return root


@dataclass
class Lab:
    """A running ``make lab``: its process (a session of its own), URL, token, log."""

    process: subprocess.Popen
    base: str
    token: str
    log: pathlib.Path
    root: pathlib.Path

    def url(self, path: str = "", **query) -> str:
        """``lab/tree/<path>`` with the token (and ``reset``, a fresh workspace)."""
        extra = "".join(f"&{k}={v}" for k, v in query.items())
        return f"{self.base}/lab/tree/{path}?token={self.token}&reset{extra}"


def start_lab(checkout: pathlib.Path, port: int | None = None, lab_args=("--no-browser",),
              start_timeout_s: float = 300.0) -> Lab:
    """``make lab PORT=<port> LAB_ARGS="<lab_args>"`` in ``checkout``, as the README
    says; returns once the Lab answers.  Raises RuntimeError with the end of the
    log if `make lab` exits or the Lab does not answer in time."""
    checkout = pathlib.Path(checkout)
    port = port or free_port()
    log_path = checkout.parent / "make-lab.log"
    cmd = ["make", "lab", f"PORT={port}", "LAB_ARGS=" + " ".join(lab_args)]
    with open(log_path, "w") as log:
        process = subprocess.Popen(cmd, cwd=checkout, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + start_timeout_s
    while time.time() < deadline:
        text = log_path.read_text(errors="replace")
        if process.poll() is not None:
            raise RuntimeError(f"`{' '.join(cmd)}` exited ({process.returncode}): " + text[-3000:])
        m = _URL.search(text)
        if m and int(m.group(1)) == port:
            base, token = f"http://127.0.0.1:{port}", m.group(2)
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                return Lab(process, base, token, log_path, checkout)
            except OSError:
                pass
        time.sleep(0.5)
    lab = Lab(process, "", "", log_path, checkout)
    stop_lab(lab)
    raise RuntimeError(f"`{' '.join(cmd)}` did not serve within {start_timeout_s:.0f} s; "
                       f"see {log_path}: " + log_path.read_text(errors="replace")[-2000:])


def stop_lab(lab: Lab) -> None:
    """Stop `make lab` and the Lab it started (their process group) and its kernels."""
    try:
        os.killpg(lab.process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        lab.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(lab.process.pid, signal.SIGKILL)
        lab.process.wait(timeout=5)
    # the Lab itself (make's child) may outlive make by a moment
    for _ in range(40):
        try:
            os.killpg(lab.process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    try:
        os.killpg(lab.process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
