"""Slides: every chapter carries slideshow metadata, and a static deck works offline.

* Every chapter's cells have ``metadata.slideshow.slide_type`` exactly as the
  rules of ``scripts/slide_metadata.py`` give them (``--check``), so RISE and
  nbconvert present the chapter; the rules themselves are checked on cells
  written for the purpose.
* ``scripts/build_slides.py`` builds every chapter's deck (``make slides``); a
  loopback web server serves them; Debian's chromium opens chapter 1's, steps
  through it with → and sees the slide change, and every request the page makes
  stays on that server (no CDN).
* On a 1280 x 720 screen, chromium steps through every slide and sub-slide of every
  deck and checks that nothing is cut off: the slide lies inside the screen, a
  slide taller than the screen scrolls inside itself and its last line can be
  scrolled into view, and nothing is wider than the slide unless it scrolls sideways.

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
    results = build_slides.build(REPO / "notebooks", out)
    assert [r[2] for r in results] == [""] * len(CHAPTERS), [r[2] for r in results if r[2]]
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(out))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    decks = {r[0].stem: r[1] for r in results}
    yield f"http://127.0.0.1:{server.server_address[1]}", decks
    server.shutdown()
    server.server_close()


@pytest.mark.browser
@pytest.mark.slow
def test_a_deck_steps_through_its_slides_offline(deck_server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(f"playwright is not installed: {exc}")
    url, decks = deck_server
    deck = decks["01_city_at_night"]
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


#: What is cut off on the slide now showing (a list of reasons; empty when all of it can be
#: seen): the slide outside the screen, content taller than the slide that does not scroll
#: or whose end cannot be scrolled into view, an element wider than the slide that does not
#: scroll sideways.
CUT_OFF_JS = """() => {
  const W = window.innerWidth, H = window.innerHeight, bad = [];
  const s = Reveal.getCurrentSlide(), r = s.getBoundingClientRect();
  if (r.top < -1 || r.left < -1 || r.bottom > H + 1 || r.right > W + 1)
    bad.push(`slide outside the screen: ${[r.left, r.top, r.right, r.bottom].map(Math.round)}`);
  if (s.scrollHeight > s.clientHeight + 2) {
    if (!/auto|scroll/.test(getComputedStyle(s).overflowY)) bad.push('taller than the slide');
    s.scrollTop = s.scrollHeight;
    const shown = e => e.getClientRects().length &&    // a closed <details> hides its body
      !(e.closest('details:not([open])') && !e.closest('summary'));
    const items = [...s.querySelectorAll('*')].filter(shown);
    const last = Math.max(...items.map(e => e.getBoundingClientRect().bottom));
    if (last > s.getBoundingClientRect().bottom + 2) bad.push('its end cannot be scrolled into view');
    s.scrollTop = 0;
  }
  const scrolls = e => { for (let a = e; a && a !== s; a = a.parentElement)
    if (/auto|scroll/.test(getComputedStyle(a).overflowX) &&
        a.getBoundingClientRect().right <= r.right + 2) return true; return false; };
  for (const e of s.querySelectorAll('img, svg, pre, table, .jp-OutputArea-output, .jp-Cell')) {
    const b = e.getBoundingClientRect();
    if (b.width && (b.right > r.right + 2 || b.left < r.left - 2) && !scrolls(e.parentElement))
      { bad.push(`${e.tagName.toLowerCase()} wider than the slide`); break; }
  }
  return bad;
}"""


#: MathJax has typeset the slide (it re-renders on every slide change).
MATH_DONE_JS = """() => !document.querySelector('.MJXc-processing, .MathJax_Processing') &&
  !(window.MathJax && MathJax.Hub && (MathJax.Hub.queue.pending || MathJax.Hub.queue.running))"""


@pytest.mark.browser
@pytest.mark.slow
def test_every_slide_of_every_deck_fits_1280_by_720(deck_server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(f"playwright is not installed: {exc}")
    url, decks = deck_server
    cut, steps = {}, {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            for stem, deck in decks.items():
                page.goto(f"{url}/{deck.name}", wait_until="load", timeout=60_000)
                page.wait_for_function("() => !!document.querySelector('.reveal.ready')",
                                       timeout=60_000)
                page.evaluate("() => { window.Reveal = require('reveal.js/dist/reveal.js');"
                              " Reveal.configure({transition: 'none'}); }")
                n = 0
                while True:
                    page.wait_for_timeout(50)         # layout after the slide change
                    page.wait_for_function(MATH_DONE_JS, timeout=30_000)
                    where = page.evaluate("() => JSON.stringify(Reveal.getIndices())")
                    reasons = page.evaluate(CUT_OFF_JS)
                    if reasons:                        # once more, after a late layout
                        page.wait_for_timeout(1000)
                        page.wait_for_function(MATH_DONE_JS, timeout=30_000)
                        reasons = page.evaluate(CUT_OFF_JS)
                    for reason in reasons:
                        cut.setdefault(stem, []).append(f"{where}: {reason}")
                    n += 1
                    if page.evaluate("() => Reveal.isLastSlide() && !Reveal.availableRoutes().down"):
                        break
                    page.evaluate("() => Reveal.next()")
                steps[stem] = n
        finally:
            browser.close()
    assert set(steps) == {p.stem for p in CHAPTERS}
    for stem, n in steps.items():       # every slide and sub-slide was visited
        nb = json.loads((REPO / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        kinds = [c["metadata"]["slideshow"]["slide_type"] for c in nb["cells"]]
        assert n >= kinds.count("slide") + kinds.count("subslide"), (stem, n)
    assert not cut, cut
