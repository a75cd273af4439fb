"""Real-browser tests: JupyterLab + Debian's chromium (via Playwright).

One JupyterLab for the module, started through the learner's door:
``make lab PORT=<free port> LAB_ARGS="--no-browser --LabApp.expose_app_in_browser=True"``
in a copy of the repository (``scripts/lab_session.py``; the extra Lab option
lets the tests drive JupyterLab's own commands), so the Lab under test is the
one learners get.  ``tests/test_learner_door.py`` drives the same door with
``LAB_ARGS=--no-browser`` alone, by menus and clicks.  Every chapter is opened once (a module-scoped,
parametrised fixture: its tests run together, then its kernel is shut down),
every cell is run, and the chapter's explorers (``.ic-explorer``; as many as
the notebook has ``.show()`` calls) must all draw.  Then, per chapter:

* each explorer redraws when a learner drives one control (the first slider by
  keyboard, ArrowRight five times, or ArrowLeft at its maximum; with no slider
  another dropdown option): its figure, readout or drawing must change -- the
  redraw the inline backend alone does not do in JupyterLab;
* the first screens (three viewport heights) show a drawn diagram
  (``.ic-diagram`` holding an ``<svg>``, the class contract of
  :mod:`course_lib.draw`);
* no slider readout reads in scientific notation (``1e+07``).

Chapter 7's ring animation must advance when its Play button (``.ic-play``)
is clicked; chapter 11's glossary must draw its Chinese terms with a font
(not empty boxes); nbgrader's instructor tools must be absent and Validate
present.

Chromium must be Debian's (``/usr/bin/chromium``; ``bash scripts/ensure_chromium.sh``
installs it); Playwright never downloads a browser here.  Without it the tests
skip with the reason, except under ``CI=true``, where they fail.
"""

import os
import pathlib
import re
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
from lab_session import (CHROMIUM, CHROMIUM_ARGS, REPO, explorer_count,  # noqa: E402
                         lab_checkout, start_lab, stop_lab)

pytestmark = pytest.mark.browser

#: (notebook, number of explorers) for every chapter that has one.
CHAPTERS = [(p.name, n) for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
            if (n := explorer_count(p))]
#: The Lab's commands exposed to the page (window.jupyterapp), on top of `make lab`.
LAB_ARGS = ("--no-browser", "--LabApp.expose_app_in_browser=True")


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


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """`make lab` (scripts/lab_session.py) in a copy of the course."""
    _need_browser()
    checkout = lab_checkout(tmp_path_factory.mktemp("lab"))
    try:
        lab = start_lab(checkout, lab_args=LAB_ARGS)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield lab
    stop_lab(lab)


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


IDLE = ("() => !!document.querySelector(\"[data-status='idle']\") || "
        "document.body.textContent.includes('Kernel status: Idle')")
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")
#: What a learner sees of an explorer: its figure (an image URL), readout and drawing.
_OUTPUTS_JS = """e => [
  (e.querySelector('.ic-plot img') || {}).src || '',
  (e.querySelector('.ic-readout') || {}).innerHTML || '',
  (e.querySelector('.ic-drawing') || {}).innerHTML || '']"""


def _outputs(explorer):
    return explorer.evaluate(_OUTPUTS_JS)


def _png_bytes(page, src):
    """The PNG behind an image ``src`` (a blob: or data: URL), read in the page."""
    return page.evaluate(
        "async src => { const b = await (await fetch(src)).arrayBuffer();"
        " return Array.from(new Uint8Array(b)); }", src)


def _settled(page, explorer, timeout_s=60):
    """``(outputs, png bytes)`` once the explorer has stopped changing.  Each
    redraw replaces the image's blob: URL and revokes the old one, so a URL read
    while several key presses are still being drawn can be gone before it is
    fetched: wait for two unchanged polls, and read again if the fetch fails."""
    deadline = time.time() + timeout_s
    last, unchanged, error = None, 0, None
    while time.time() < deadline:
        now = _outputs(explorer)
        unchanged = unchanged + 1 if now == last else 0
        last = now
        if now[0] and unchanged >= 2:
            try:
                return now, _png_bytes(page, now[0])
            except Exception as exc:        # revoked between the read and the fetch
                error, unchanged = exc, 0
        page.wait_for_timeout(300)
    raise AssertionError(f"the explorer never settled ({timeout_s} s); last fetch error: {error}")


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


def _open_chapter(page, lab_server, notebook, n_explorers):
    page.goto(lab_server.url(f"notebooks/{notebook}"),
              wait_until="domcontentloaded", timeout=60_000)
    page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    explorers = page.locator(".ic-explorer")
    for attempt in range(3):                # a cold server or kernel can drop the first run
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
    page.wait_for_function(IDLE, timeout=120_000)
    assert explorers.count() == n_explorers


@pytest.fixture(scope="module", params=CHAPTERS, ids=[c[0] for c in CHAPTERS])
def chapter(request, lab_server, browser):
    """One chapter open in JupyterLab with every cell run: ``(page, notebook,
    number of explorers)``.  Module-scoped, so a chapter's tests share one run;
    its kernel is shut down afterwards."""
    notebook, n_explorers = request.param
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open_chapter(page, lab_server, notebook, n_explorers)
        yield page, notebook, n_explorers
    finally:
        try:
            page.evaluate("async () => { const w = window.jupyterapp.shell.currentWidget;"
                          " if (w && w.sessionContext) await w.sessionContext.shutdown(); }")
        except Exception:
            pass
        page.close()


def test_every_explorer_redraws_in_jupyterlab(chapter):
    page, notebook, n_explorers = chapter
    explorers = page.locator(".ic-explorer")
    for i in range(n_explorers):
        explorer = explorers.nth(i)
        explorer.scroll_into_view_if_needed()
        title = (explorer.inner_text().strip().splitlines() or ["?"])[0][:60]
        before, png_before = _settled(page, explorer)
        assert before[0].startswith(("blob:", "data:image/png"))
        action = _drive_one_control(page, explorer)
        deadline = time.time() + 30
        while _outputs(explorer) == before and time.time() < deadline:
            page.wait_for_timeout(200)
        after, png_after = _settled(page, explorer)
        changed = [what for what, a, b in zip(("figure", "readout", "drawing"), before, after)
                   if a != b and (what != "figure" or png_after != png_before)]
        assert changed, (f"{notebook} / {title!r}: the figure, the readout and the drawing "
                         f"are the same after {action}")


def test_first_screens_show_a_drawn_diagram(chapter):
    """The city drawn in every chapter, near its top: an ``.ic-diagram`` with an
    ``<svg>`` within the first three viewport heights of the notebook."""
    page, notebook, _n = chapter
    found = page.evaluate("""() => {
      const panel = window.jupyterapp.shell.currentWidget.node;
      const scroller = panel.querySelector('.jp-WindowedPanel-outer') || panel;
      const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
      const screens = 3 * scroller.clientHeight;
      const all = [...panel.querySelectorAll('.ic-diagram')];
      const drawn = all.filter(d => d.querySelector('svg'));
      const near = drawn.filter(d => d.getBoundingClientRect().top - top < screens);
      return {all: all.length, drawn: drawn.length, near: near.length,
              first: drawn.length ? Math.round(drawn[0].getBoundingClientRect().top - top) : null,
              screens: screens};
    }""")
    assert found["near"] >= 1, (
        f"{notebook}: no drawn diagram (.ic-diagram with an <svg>) in the first three "
        f"screens ({found['screens']} px): {found['all']} .ic-diagram element(s), "
        f"{found['drawn']} with an svg, the first at {found['first']} px")


def test_no_slider_readout_in_scientific_notation(chapter):
    """Every slider shows its readout, in a learner's units (``4 KiB``, ``7 B
    params``), never ``1e+07``."""
    page, notebook, _n = chapter
    found = page.evaluate("""() => {
      const sliders = [...document.querySelectorAll('.ic-explorer .widget-hslider')];
      return sliders.map(s => { const r = s.querySelector('.widget-readout');
        return r ? (r.value !== undefined && r.value !== '' ? r.value : r.textContent).trim()
                 : null; }); }""")
    missing = sum(r is None or r == "" for r in found)
    assert not missing, f"{notebook}: {missing} of {len(found)} sliders show no readout"
    bad = [r for r in found if SCIENTIFIC.search(r)]
    assert not bad, f"{notebook}: slider readouts in scientific notation: {bad}"


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c[0].startswith("07_")],
                         indirect=True, ids=["07"])
def test_ring_animation_plays(chapter):
    """Chapter 7's ring: ▶ Play steps the animation (the drawing changes)."""
    page, notebook, _n = chapter
    players = page.locator(".ic-explorer:has(.ic-play)")
    assert players.count() >= 1, (f"{notebook}: no explorer with a Play control "
                                  f"(.ic-play) -- the ring animation's step slider")
    explorer = players.first
    explorer.scroll_into_view_if_needed()
    before, _png = _settled(page, explorer)
    explorer.locator(".ic-play button").first.click()
    deadline = time.time() + 20
    while time.time() < deadline and _outputs(explorer)[2] == before[2]:
        page.wait_for_timeout(250)
    after = _outputs(explorer)
    assert after[2] != before[2], f"{notebook}: Play did not change the ring's drawing in 20 s"
    assert after[2], f"{notebook}: the ring explorer has no drawing (.ic-drawing)"


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c[0].startswith("11_")],
                         indirect=True, ids=["11"])
def test_glossary_chinese_terms_render(chapter):
    """The glossary's 中文 is drawn with a CJK font, not as empty boxes: the
    glyphs of a Chinese word differ from those of unassigned code points (what
    a missing font draws, the same box for each)."""
    page, notebook, _n = chapter
    assert page.locator(".jp-Cell", has_text="中文").count(), f"{notebook}: no glossary with 中文"
    family = page.evaluate("() => getComputedStyle(document.querySelector("
                           "'.jp-RenderedHTMLCommon') || document.body).fontFamily")
    same = page.evaluate("""family => {
      const draw = text => { const c = document.createElement('canvas');
        c.width = 120; c.height = 50; const g = c.getContext('2d');
        g.font = '32px ' + family; g.fillText(text, 4, 38); return c.toDataURL(); };
      return draw('\\u4e2d\\u6587') === draw('\\u0378\\u0379');
    }""", family)
    assert not same, (f"{notebook}: 中文 draws as boxes in {family!r}: no CJK font "
                      f"(bash scripts/ensure_cjk_fonts.sh installs fonts-noto-cjk)")


def test_learner_lab_hides_the_instructor_tools(lab_server, browser):
    """The Lab under test is a learner's (scripts/learner_lab.sh, as make lab and
    Binder): no Nbgrader menu, no Create Assignment, no Formgrader; Validate stays."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(lab_server.url("notebooks/00_start_here.ipynb"),
                  wait_until="domcontentloaded", timeout=60_000)
        page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
        page.wait_for_function(IDLE, timeout=60_000)
        page.wait_for_timeout(1000)
        menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
        assert "Nbgrader" not in menus, f"the Nbgrader menu is shown: {menus}"
        commands = page.evaluate("() => window.jupyterapp.commands.listCommands()")
        for cmd in ("nbgrader:open-formgrader", "nbgrader:open-create-assignment",
                    "nbgrader:open-assignment-list", "nbgrader:open-course-list"):
            assert cmd not in commands, f"{cmd} is available to learners"
        toolbar = page.locator(".jp-NotebookPanel-toolbar").first
        assert toolbar.get_by_text("Validate").count() >= 1, "no Validate button on the notebook"
    finally:
        page.close()
