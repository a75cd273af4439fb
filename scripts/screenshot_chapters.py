"""Screenshots of every chapter as a learner sees it, for a person to review.

Starts JupyterLab through the learner's door -- ``make lab PORT=<free port>
LAB_ARGS=--no-browser`` in a temporary copy of the course (``scripts/lab_session.py``;
``--LabApp.expose_app_in_browser=True`` added, to run every cell by JupyterLab's
own command) -- and for every chapter (``notebooks/NN_*.ipynb``) opens it in
Debian's chromium (through Playwright), runs every cell, waits for its
explorers to draw, and writes

* ``chNN.png`` -- the first screen of the notebook (the top of the page);
* ``chNN_explorer.png`` -- its first explorer (controls, figure, drawing, readout),
  and ``chNN_explorer_2.png``, ... for the others;
* ``ch11_glossary.png`` -- chapter 11's glossary, where the Chinese terms must
  show as characters, not boxes (a CJK font: ``bash scripts/ensure_cjk_fonts.sh``).

    .venv/bin/python scripts/screenshot_chapters.py [OUTDIR] [--only 03,07] [--width 1280]

Default OUTDIR: ``docs/img/chapters``.  The README shows a few of them; rerun
after changing a chapter, then look at every picture before committing it.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lab_session import (CHROMIUM, CHROMIUM_ARGS, REPO, explorer_count,  # noqa: E402
                         lab_checkout, start_lab as _start_lab, stop_lab)

IDLE = ("() => !!document.querySelector(\"[data-status='idle']\") || "
        "document.body.textContent.includes('Kernel status: Idle')")
#: Hide what is not the course: JupyterLab's toasts (news, updates).
HIDE = ".Toastify { display: none !important; }"


def start_lab(root: pathlib.Path):
    """`make lab` in a copy of the course under ``root``; returns the running Lab."""
    return _start_lab(lab_checkout(root),
                      lab_args=("--no-browser", "--LabApp.expose_app_in_browser=True"))


def run_chapter(page, lab, notebook: str, n_explorers: int) -> None:
    """Open a chapter, run every cell and wait until its explorers are drawn."""
    page.goto(lab.url(f"notebooks/{notebook}"),
              wait_until="domcontentloaded", timeout=120_000)
    page.locator(".jp-Notebook").first.wait_for(timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.content); }", timeout=60_000)
    page.evaluate(
        "async () => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.context.ready; await w.sessionContext.ready;"
        " await window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(
        "n => document.querySelectorAll('.ic-explorer .ic-plot img').length >= n",
        arg=n_explorers, timeout=300_000)
    page.wait_for_function(IDLE, timeout=300_000)
    page.wait_for_timeout(1500)            # images decode, diagrams lay out


def scroll_to_top(page) -> None:
    page.evaluate("() => { window.jupyterapp.shell.collapseLeft();"
                  " window.jupyterapp.shell.collapseRight(); }")
    page.wait_for_timeout(400)
    page.evaluate("() => { for (const el of document.querySelectorAll("
                  "'.jp-WindowedPanel-outer, .jp-Notebook')) el.scrollTop = 0; }")
    page.wait_for_timeout(400)


def shrink(path: pathlib.Path) -> None:
    """Store a screenshot with a 256-colour palette (a third of the bytes; a
    page of text and flat plots loses nothing visible)."""
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def shutdown_kernel(page) -> None:
    try:
        page.evaluate("async () => { const w = window.jupyterapp.shell.currentWidget;"
                      " if (w && w.sessionContext) await w.sessionContext.shutdown(); }")
    except Exception:                      # the page may already be gone
        pass


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default=str(REPO / "docs" / "img" / "chapters"))
    parser.add_argument("--only", default="", help="chapter numbers, e.g. 03,07")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} not found: run `bash scripts/ensure_chromium.sh` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    out = pathlib.Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {w.strip().zfill(2) for w in args.only.split(",") if w.strip()}
    chapters = [p for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
                if not wanted or p.name[:2] in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        server = start_lab(pathlib.Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for path in chapters:
                    nn = path.name[:2]
                    page = browser.new_page(viewport={"width": args.width,
                                                      "height": args.height})
                    t0 = time.time()
                    try:
                        run_chapter(page, server, path.name, explorer_count(path))
                        page.add_style_tag(content=HIDE)
                        scroll_to_top(page)
                        page.screenshot(path=str(out / f"ch{nn}.png"))
                        boxes = page.locator(".ic-explorer")
                        for i in range(boxes.count()):
                            # a viewport taller than the explorer, so that
                            # JupyterLab's panel does not clip it
                            box = boxes.nth(i).bounding_box() or {"height": 0}
                            page.set_viewport_size({"width": args.width, "height": max(
                                args.height, int(box["height"]) + 260)})
                            boxes.nth(i).scroll_into_view_if_needed()
                            page.wait_for_timeout(500)
                            name = f"ch{nn}_explorer{'' if i == 0 else f'_{i + 1}'}.png"
                            boxes.nth(i).screenshot(path=str(out / name))
                        page.set_viewport_size({"width": args.width, "height": args.height})
                        if nn == "11":
                            terms = page.locator(".jp-Cell", has_text="中文").last
                            terms.scroll_into_view_if_needed()
                            page.wait_for_timeout(300)
                            page.screenshot(path=str(out / "ch11_glossary.png"))
                        for shot in out.glob(f"ch{nn}*.png"):
                            shrink(shot)
                        print(f"ch{nn}: {time.time() - t0:.0f} s", flush=True)
                    finally:
                        shutdown_kernel(page)
                        page.close()
                browser.close()
        finally:
            stop_lab(server)
    print(f"saved in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
