"""Take the README's picture: an explorer running in real JupyterLab.

Starts JupyterLab on a free localhost port over a temporary copy of
``notebooks/``, opens a chapter in Debian's chromium (through Playwright),
runs every cell, and saves a screenshot of the first explorer.

    .venv/bin/python scripts/screenshot_explorer.py [CHAPTER] [OUT.png]

Defaults: ``03_arterial_roads.ipynb`` and ``docs/img/explorer.png``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
TOKEN = "screenshot"


def main(argv: list[str]) -> int:
    chapter = argv[0] if argv else "03_arterial_roads.ipynb"
    out = pathlib.Path(argv[1] if len(argv) > 1 else REPO / "docs" / "img" / "explorer.png")
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} not found: run `bash scripts/ensure_chromium.sh` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        shutil.copytree(REPO / "notebooks", root / "notebooks",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "lab_results"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, MPLBACKEND="module://matplotlib_inline.backend_inline",
                   JUPYTER_RUNTIME_DIR=str(root / "runtime"),
                   JUPYTERLAB_WORKSPACES_DIR=str(root / "workspaces"))
        env.pop("COURSE_STATIC", None)
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
               f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root / 'notebooks'}",
               "--allow-root"]
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(120):
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=CHROMIUM,
                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", "--no-first-run"])
                page = browser.new_page(viewport={"width": 1100, "height": 900})
                page.goto(f"{base}/lab/tree/{chapter}?token={TOKEN}")
                page.wait_for_selector(".jp-Notebook", timeout=120_000)
                page.wait_for_timeout(3000)  # let the kernel start
                page.click("text=Run", timeout=30_000)
                page.click("text=Run All Cells", timeout=30_000)
                explorer = page.wait_for_selector(".ic-explorer .ic-plot img", timeout=180_000)
                page.wait_for_timeout(1500)
                # hide JupyterLab's "news?" toast so it does not cover the picture
                page.add_style_tag(content=".Toastify { display: none !important; }")
                box = page.query_selector(".ic-explorer")
                box.scroll_into_view_if_needed()
                out.parent.mkdir(parents=True, exist_ok=True)
                box.screenshot(path=str(out))
                browser.close()
                del explorer
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
