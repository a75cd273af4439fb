"""Real-browser test: JupyterLab + Debian's chromium (via Playwright).

One JupyterLab server for the module (free localhost port, token set, root =
a temporary copy of notebooks/).  For every chapter with an explorer it opens
the notebook, runs every cell, waits for all of the chapter's explorers
(``.ic-explorer``; as many as the notebook has ``.show()`` calls), and for
each explorer drives one control the way a learner does: it focuses the first
slider and presses ArrowRight five times (ArrowLeft when the slider starts at
its maximum), or, with no slider, picks another dropdown option.  The plot
image (``.ic-plot img``) must change -- the redraw that the inline backend
alone does not do in JupyterLab.

Chromium must be Debian's (``/usr/bin/chromium``; ``bash scripts/ensure_chromium.sh``
installs it); Playwright never downloads a browser here.  Without it the test
skips with the reason, except under ``CI=true``, where it fails.
"""

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.browser

REPO = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

def _explorer_count(path: pathlib.Path) -> int:
    """How many explorers a notebook shows (code cells calling ``.show()``)."""
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("".join(c["source"]).count(".show()") for c in nb["cells"]
               if c["cell_type"] == "code")


#: (notebook, number of explorers) for every chapter that has one.
CHAPTERS = [(p.name, n) for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
            if (n := _explorer_count(p))]
TOKEN = "interconnect-city-test"


def _need_browser():
    if not os.path.exists(CHROMIUM):
        msg = (f"{CHROMIUM} not found: install Debian's chromium "
               f"(bash scripts/ensure_chromium.sh) to run the browser tests")
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"playwright is not installed: {exc}")
        pytest.skip(f"playwright is not installed: {exc}")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    _need_browser()
    root = tmp_path_factory.mktemp("lab")
    nb_dir = root / "notebooks"
    shutil.copytree(REPO / "notebooks", nb_dir,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "lab_results"))
    port = _free_port()
    env = dict(os.environ)
    env.update({
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(pathlib.Path(sys.executable).parent), env.get("PATH", "")]),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces"),
    })
    env.pop("COURSE_STATIC", None)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={nb_dir}", "--ServerApp.open_browser=False",
           "--LabApp.news_url=", "--ServerApp.disable_check_xsrf=True",
           "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")       # containers and CI often run as root
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            cwd=nb_dir)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("JupyterLab did not start within 60 s; see " + str(root / "lab.log"))
    if proc.poll() is not None:
        pytest.fail("JupyterLab exited: " + (root / "lab.log").read_text()[-2000:])
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    log.close()


@pytest.fixture(scope="module")
def browser(lab_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _run_all(page):
    """Run every cell once the notebook's kernel is ready.

    The app is exposed to the page (``--LabApp.expose_app_in_browser``), so the
    test can wait on the session's own ``ready`` promise and run JupyterLab's
    ``notebook:run-all-cells`` command; the Run menu is the fallback.
    """
    exposed = page.evaluate("() => !!window.jupyterapp")
    if exposed:
        page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return !!(w && w.sessionContext && w.content); }", timeout=60_000)
        page.evaluate(
            "async () => { const w = window.jupyterapp.shell.currentWidget;"
            " await w.context.ready; await w.sessionContext.ready;"
            " await window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        return
    page.get_by_role("menuitem", name="Run", exact=True).click()
    item = page.get_by_role("menuitem", name="Run All Cells")
    try:
        item.first.click(timeout=10_000)
    except Exception:                       # menu layout differs: use the command palette
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Shift+C")
        page.keyboard.type("Run All Cells")
        page.keyboard.press("Enter")


def lab_server_root(_page) -> str:
    """Where a failing test leaves its screenshot."""
    import tempfile

    return tempfile.gettempdir()


def _img_src(explorer):
    return explorer.locator(".ic-plot img").first.get_attribute("src")


def _wait_src_change(page, explorer, before, timeout_s=30):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        now = _img_src(explorer)
        if now and now != before:
            return now
        page.wait_for_timeout(200)
    return _img_src(explorer)


def _png_bytes(page, src):
    """The PNG behind an image ``src`` (a blob: or data: URL), read in the page."""
    return page.evaluate(
        "async src => { const b = await (await fetch(src)).arrayBuffer();"
        " return Array.from(new Uint8Array(b)); }", src)


def _settled_png(page, explorer, timeout_s=60):
    """``(src, png bytes)`` once the image has stopped changing.  Each redraw
    replaces the blob: URL and revokes the old one, so a URL read while
    several key presses are still being drawn can be gone before it is
    fetched: wait for two unchanged polls, and read again if the fetch fails."""
    deadline = time.time() + timeout_s
    last, unchanged, error = None, 0, None
    while time.time() < deadline:
        src = _img_src(explorer)
        unchanged = unchanged + 1 if src == last else 0
        last = src
        if src and unchanged >= 2:
            try:
                return src, _png_bytes(page, src)
            except Exception as exc:        # revoked between the read and the fetch
                error, unchanged = exc, 0
        page.wait_for_timeout(300)
    raise AssertionError(f"the explorer's image never settled ({timeout_s} s); last "
                         f"fetch error: {error}")


def _drive_one_control(page, explorer) -> str:
    """Move the first slider by keyboard (or pick another dropdown option);
    return what was done."""
    handle = explorer.locator(".noUi-handle, input[type='range']").first
    if handle.count():
        at_max = handle.evaluate(
            "h => h.getAttribute('aria-valuenow') !== null &&"
            " Number(h.getAttribute('aria-valuenow')) >= Number(h.getAttribute('aria-valuemax'))")
        key = "ArrowLeft" if at_max else "ArrowRight"
        handle.focus()
        for _ in range(5):
            page.keyboard.press(key)
        return f"first slider, {key} x5"
    select = explorer.locator("select").first
    options = select.locator("option").all_inner_texts()
    current = select.evaluate("s => s.options[s.selectedIndex].text")
    select.select_option(label=next(o for o in options if o != current))
    return "first dropdown, another option"


@pytest.mark.parametrize("notebook,n_explorers", CHAPTERS, ids=[c[0] for c in CHAPTERS])
def test_every_explorer_redraws_in_jupyterlab(lab_server, browser, notebook, n_explorers):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{lab_server}/lab/tree/{notebook}?token={TOKEN}&reset",
                  wait_until="domcontentloaded", timeout=60_000)
        page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
        page.wait_for_function(
            "() => !!document.querySelector(\"[data-status='idle']\") || "
            "document.body.textContent.includes('Kernel status: Idle')", timeout=60_000)
        explorers = page.locator(".ic-explorer")
        for attempt in range(3):            # a cold server or kernel can drop the first run
            _run_all(page)
            try:
                page.wait_for_function(
                    "n => document.querySelectorAll('.ic-explorer .ic-plot img').length >= n",
                    arg=n_explorers, timeout=120_000)
                break
            except Exception:
                if attempt == 2:
                    shot = pathlib.Path(lab_server_root(page)) / f"{notebook}.png"
                    page.screenshot(path=str(shot))
                    raise AssertionError(
                        f"{notebook}: {explorers.count()} of {n_explorers} explorers drawn "
                        f"after 3 runs of every cell; screenshot: {shot}") from None
        # wait until the kernel is idle again (Run All finished), as a learner would
        page.wait_for_function(
            "() => !!document.querySelector(\"[data-status='idle']\") || "
            "document.body.textContent.includes('Kernel status: Idle')", timeout=120_000)
        assert explorers.count() == n_explorers
        for i in range(n_explorers):
            explorer = explorers.nth(i)
            explorer.scroll_into_view_if_needed()
            title = (explorer.inner_text().strip().splitlines() or ["?"])[0][:60]
            before, png_before = _settled_png(page, explorer)
            assert before.startswith("blob:") or before.startswith("data:image/png")
            action = _drive_one_control(page, explorer)
            after = _wait_src_change(page, explorer, before)
            assert after != before, f"{notebook} / {title!r}: no redraw after {action}"
            _after, png_after = _settled_png(page, explorer)
            assert png_after != png_before, \
                f"{notebook} / {title!r}: the figure is the same after {action}"
    finally:
        page.close()
