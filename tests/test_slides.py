"""Slides: every chapter carries slideshow metadata, and a static deck works offline.

* Every chapter's cells have ``metadata.slideshow.slide_type`` exactly as the
  rules of ``scripts/slide_metadata.py`` give them (``--check``), so RISE and
  nbconvert present the chapter; the rules themselves are checked on cells
  written for the purpose.
* ``scripts/build_slides.py`` builds chapter 1's deck; a loopback web server
  serves it; Debian's chromium opens it, steps through it with → and sees the
  slide change, and every request the page makes stays on that server (no CDN).

The deck test needs the npm packages (``bash scripts/ensure_node.sh``) and
chromium; without them it skips and says why, except under ``CI=true``.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import socketserver
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import slide_metadata  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
CHAPTERS = slide_metadata.chapters()


def _need(reason):
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def test_every_chapter_is_covered():
    assert len(CHAPTERS) >= 12
    assert CHAPTERS[0].name.startswith("00_")


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_carries_its_slide_metadata(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    kinds = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in nb["cells"]]
    missing = [i for i, k in enumerate(kinds) if k is None]
    assert not missing, (f"{path.name}: cells {missing} have no slideshow metadata; run "
                         "python scripts/slide_metadata.py")
    assert kinds == slide_metadata.slide_types(nb["cells"]), (
        f"{path.name}: slide metadata differs from the rules; run python scripts/slide_metadata.py")
    assert kinds[0] == "slide"
    assert kinds.count("slide") >= 4, kinds
    assert set(kinds) <= set(slide_metadata.SLIDE_TYPES)


def test_check_mode_passes_on_the_repository():
    assert slide_metadata.main(["--check"]) == 0


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": [],
            "execution_count": None}


def test_rules_on_cells_written_for_them():
    table = "| a | b |\n|---|---|\n" + "".join(f"| {i} | {i} |\n" for i in range(9))
    cells = [_md("# Chapter 9 — Title"), _md("## The story\nOnce"), _md("More story."),
             _code("import course_lib as cl"), _md("### A sub-question"),
             _md("**Derivation.** $t = a + b$"), _code("cl.explorers.ch09.explorer().show();"),
             _md(table), _md("> **Takeaway.** Short."),
             _md("## Appendix: all numbers"), _code("print(1)"), _md("### Deeper"),
             _md("## Quiz"), _code("cl.quiz.show(cl.content.chapter_quiz(9));"),
             _md("## Summary\n* one")]
    assert slide_metadata.slide_types(cells) == [
        "slide", "slide", "-", "-", "subslide", "subslide", "slide", "skip", "subslide",
        "skip", "skip", "skip", "slide", "-", "slide"]


def test_apply_is_idempotent_and_touches_only_slideshow():
    nb = {"cells": [_md("# T"), _md("## S"), _code("x = 1")], "metadata": {},
          "nbformat": 4, "nbformat_minor": 5}
    nb["cells"][2]["metadata"]["tags"] = ["keep-me"]
    assert slide_metadata.apply(nb) is True
    first = json.dumps(nb, sort_keys=True)
    assert slide_metadata.apply(nb) is False
    assert json.dumps(nb, sort_keys=True) == first
    assert nb["cells"][2]["metadata"] == {"tags": ["keep-me"], "slideshow": {"slide_type": "-"}}


# ---------------------------------------------------------------------------
# a real deck in a real browser
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def deck_server(tmp_path_factory):
    if not (REPO / "deploy" / "node_modules" / "reveal.js" / "dist" / "reveal.js").exists():
        _need("reveal.js is not installed: bash scripts/ensure_node.sh")
    if not os.path.exists(CHROMIUM):
        _need(f"{CHROMIUM} not found: bash scripts/ensure_chromium.sh")
    import build_slides

    out = tmp_path_factory.mktemp("slides")
    results = build_slides.build(REPO / "notebooks", out, only=["01"])
    assert [r[2] for r in results] == [""], results
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(out))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", results[0][1]
    server.shutdown()
    server.server_close()


@pytest.mark.browser
@pytest.mark.slow
def test_a_deck_steps_through_its_slides_offline(deck_server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(f"playwright is not installed: {exc}")
    url, deck = deck_server
    nb = json.loads((REPO / "notebooks" / "01_city_at_night.ipynb").read_text(encoding="utf-8"))
    n_slides = sum(1 for c in nb["cells"] if c["metadata"]["slideshow"]["slide_type"] == "slide")
    requests = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(f"{url}/{deck.name}", wait_until="load", timeout=60_000)
            # reveal.js is loaded as an AMD module (require.js): read its state from the DOM
            page.wait_for_function("() => !!document.querySelector('.reveal.ready')",
                                   timeout=60_000)
            sections = "[...document.querySelectorAll('.reveal .slides > section')]"
            here = f"() => {sections}.findIndex(s => s.classList.contains('present'))"
            total = page.evaluate(f"() => {sections}.length")
            seen = [page.evaluate(here)]
            titles = [page.evaluate(f"() => {sections}[{seen[-1]}].textContent.trim()")]
            for _ in range(3):
                page.locator("body").press("ArrowRight")
                page.wait_for_function(f"h => ({here})() > h", arg=seen[-1], timeout=10_000)
                seen.append(page.evaluate(here))
                titles.append(page.evaluate(f"() => {sections}[{seen[-1]}].textContent.trim()"))
            mathjax = page.evaluate("() => !!window.MathJax")
        finally:
            browser.close()
    assert total == n_slides, (total, n_slides)
    assert seen == [0, 1, 2, 3], seen
    assert titles[0].startswith("Chapter 1"), titles[0][:80]
    assert len(set(titles)) == 4, [t[:40] for t in titles]
    outside = [r for r in requests if not r.startswith((url, "data:", "blob:"))]
    assert not outside, outside
    assert mathjax, "MathJax did not load from the local copy"
