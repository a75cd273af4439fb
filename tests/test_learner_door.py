"""The course through the learner's own door: ``make lab`` exactly as the README
says (``make lab PORT=<port> LAB_ARGS=--no-browser``, this process's environment
as it is: no MPLBACKEND, no PYTHONPATH added), in a copy of the repository
(scripts/lab_session.py), driven in Debian's chromium as a learner drives it --
menus and clicks, no JupyterLab internals.  Every chapter is opened from the
Lab's root and every cell run (Run -> Run All Cells); then, per chapter:

* every figure cell (a top-level plotting call: ``.plot(``, ``cl.plots.plot_*``,
  ``plt.subplots``) shows an image -- with ``MPLBACKEND=Agg`` reaching the kernel
  they showed nothing;
* every quiz option selects itself, whether its control or its text is clicked
  (for a long option: each line of its wrapped text), and no option's row
  overlaps another's;
* no output prints a raw dict of the labs' internal names
  (``{'staged_over_resident': 0.769, ...}``): results read as tables;
* the chapter's links open in the Lab (for chapter 0, each link to ``docs/``
  opens the Markdown file in a tab, with no "Could not find path").

An exercise (``exercises/ring_allreduce``) opens from the same Lab and its
Validate button runs nbgrader's validation.  Without chromium or playwright the
tests skip with the reason, except under ``CI=true``, where they fail
(tests/conftest.py).  The links of every notebook are also checked statically
(every relative target exists), which needs no browser.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import time
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from lab_session import CHROMIUM, CHROMIUM_ARGS, lab_checkout, start_lab, stop_lab  # noqa: E402

CHAPTERS = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: A figure cell: a plotting call at the cell's top level (not inside an ``if``,
#: as the GPU-only cells are).
FIGURE_CALL = re.compile(r"^(?!\s)(?!#).*(\.plot\(|plots\.plot_\w+\(|plt\.subplots\()", re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)|href=\"([^\"]+)\"")


def _cells(path: pathlib.Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def figure_cells(notebook: str) -> list[int]:
    """Indices (among all cells) of the cells that draw a figure."""
    return [i for i, c in enumerate(_cells(REPO / "notebooks" / notebook))
            if c["cell_type"] == "code" and FIGURE_CALL.search("".join(c["source"]))]


def relative_links(path: pathlib.Path) -> list[str]:
    """Every link in the notebook's Markdown that points into the course (no scheme,
    not a bare #anchor)."""
    out = []
    for c in _cells(path):
        if c["cell_type"] != "markdown":
            continue
        for a, b in _LINK.findall("".join(c["source"])):
            target = a or b
            if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not target.startswith("#"):
                out.append(target)
    return out


# --- every link of every notebook, statically --------------------------------
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted(REPO.glob("exercises/*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_link_in_every_notebook_resolves(path):
    """Each relative link resolves to a file of the course inside the repository
    (the Lab's root, so the file browser and the link reach the same file)."""
    bad = []
    for target in relative_links(path):
        file = urllib.parse.unquote(target.split("#", 1)[0].split("?", 1)[0])
        resolved = (path.parent / file).resolve()
        if REPO.resolve() not in resolved.parents or not resolved.is_file():
            bad.append(target)
    assert not bad, f"{path.relative_to(REPO)}: links that do not resolve in the course: {bad}"


def test_chapter_zero_links_the_docs():
    """Chapter 0 points at the sources, the instructor guide and the grading guide."""
    links = relative_links(REPO / "notebooks" / "00_start_here.ipynb")
    assert sum(link.startswith("../docs/") and link.endswith(".md") for link in links) >= 3


# --- the Lab, through `make lab` ------------------------------------------------
def _need_browser():
    problems = []
    if not os.path.exists(CHROMIUM):
        problems.append(f"{CHROMIUM} not found: install Debian's chromium "
                        "(bash scripts/ensure_chromium.sh)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        problems.append(f"playwright is not installed: {exc}")
    if problems:
        if os.environ.get("CI") == "true":
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`make lab PORT=<free port> LAB_ARGS=--no-browser` in a copy of the course."""
    _need_browser()
    checkout = lab_checkout(tmp_path_factory.mktemp("learner"))
    t0 = time.perf_counter()
    try:
        server = start_lab(checkout)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    print(f"\nmake lab served in {time.perf_counter() - t0:.1f} s")
    yield server
    stop_lab(server)


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


IDLE = ("() => document.body.textContent.includes('Idle') && "
        "!![...document.querySelectorAll('.jp-InputPrompt')].length")


def _menu(page, menu: str, item: str):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).first.click()


def _open(page, lab, path: str):
    page.goto(lab.url(path), wait_until="domcontentloaded", timeout=90_000)
    page.locator(".jp-Notebook").first.wait_for(timeout=90_000)
    page.wait_for_function(IDLE, timeout=120_000)
    news = page.locator(".jp-toast-container button", has_text=re.compile("^No$"))
    if news.count():                      # JupyterLab's "notified about Jupyter news?" toast
        news.first.click()


_PROMPTS = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim())"
_ERRORS = """() => [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.textContent).filter(t => /Traceback|Error:/.test(t))"""


def _run_every_cell(page, notebook: str, timeout_s: float = 400):
    """Run -> Run All Cells (again if a cold kernel dropped it), then wait until
    every code cell has its execution count; a traceback fails at once."""
    n_code = sum(c["cell_type"] == "code" for c in _cells(REPO / "notebooks" / notebook))
    for _attempt in range(3):
        _menu(page, "Run", "Run All Cells")
        started = time.time()
        while time.time() - started < 30 and all(p == "[ ]:" for p in page.evaluate(_PROMPTS)):
            page.wait_for_timeout(500)
        if not all(p == "[ ]:" for p in page.evaluate(_PROMPTS)):
            break
    deadline = time.time() + timeout_s
    last, since, reruns = None, time.time(), 0
    while time.time() < deadline:
        prompts = page.evaluate(_PROMPTS)
        errors = page.evaluate(_ERRORS)
        assert not errors, f"{notebook}: a cell failed in the Lab: {errors[0][-1500:]}"
        if len(prompts) >= n_code and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts):
            return
        if prompts != last:
            last, since = prompts, time.time()
        elif (time.time() - since > 60 and reruns < 2 and not any("*" in p for p in prompts)
              and page.evaluate(IDLE)):
            # the kernel is idle, nothing queued, cells left unrun: the run was dropped
            # (a kernel still settling); run every cell again, as a learner would
            _menu(page, "Run", "Run All Cells")
            reruns, since = reruns + 1, time.time()
        page.wait_for_timeout(1000)
    raise AssertionError(f"{notebook}: not every cell ran in {timeout_s:.0f} s: {prompts}")


@pytest.fixture(scope="module", params=CHAPTERS)
def chapter(request, lab, browser):
    """One chapter opened from the Lab's root, every cell run: ``(page, notebook)``."""
    notebook = request.param
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    t0 = time.perf_counter()
    try:
        _open(page, lab, f"notebooks/{notebook}")
        _run_every_cell(page, notebook)
        print(f"\n{notebook}: opened and run in {time.perf_counter() - t0:.1f} s")
        yield page, notebook
    finally:
        try:
            _menu(page, "Kernel", "Shut Down Kernel")
            page.wait_for_timeout(500)
        except Exception:
            pass
        page.close()


def test_every_figure_cell_shows_an_image(chapter):
    page, notebook = chapter
    cells = figure_cells(notebook)
    shown = page.evaluate("""idx => { const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
        return idx.map(i => { const c = cells[i]; if (!c) return -1;
          return [...c.querySelectorAll('.jp-OutputArea-output img')]
                 .filter(im => im.src.startsWith('data:image/png') && im.naturalWidth > 50).length; }); }""",
                          cells)
    blank = [i for i, n in zip(cells, shown) if n < 1]
    assert not blank, (f"{notebook}: figure cells {blank} show no image (of {len(cells)} figure "
                       f"cells {cells}); is MPLBACKEND reaching the kernel?")


#: A dict printed as Python shows it, with a snake_case key: ``{'pin_fresh_bw_bytes_per_s': ...``.
RAW_DICT = re.compile(r"\{\s*'[a-z0-9]+(?:_[a-z0-9]+)+'\s*:")


def test_no_output_prints_a_raw_dict_of_internal_names(chapter):
    page, notebook = chapter
    texts = page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea-output')]
        .filter(o => !o.closest('.ic-explorer')).map(o => o.textContent)""")
    raw = [t[:200] for t in texts if RAW_DICT.search(t)]
    assert not raw, f"{notebook}: outputs print a dict of internal names: {raw}"


_LINE_RECTS = """label => { const r = document.createRange(); r.selectNodeContents(label);
  const input = label.querySelector('input'); const box = label.getBoundingClientRect();
  const rects = [...r.getClientRects()].filter(x => x.width > 2 && x.height > 2 &&
      !(input && Math.abs(x.left - input.getBoundingClientRect().left) < 1 && x.width < 30));
  return {box: [box.left, box.top, box.right, box.bottom],
          lines: rects.map(x => [x.left + x.width / 2, x.top + x.height / 2]),
          text: label.textContent.trim().slice(0, 50)}; }"""


def _on_screen(page, label) -> dict:
    """Scroll the option into the middle of the window (JupyterLab lays cells out
    as they come into view, so wait until it stays put) and measure it."""
    last = None
    for _ in range(20):
        label.evaluate("l => l.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(100)
        geo = label.evaluate(_LINE_RECTS)
        if geo == last:
            return geo
        last = geo
    return last


def _state(quiz):
    return quiz.evaluate("q => [...q.querySelectorAll('.ic-quiz-options input')].map(i => i.checked)")


_HITS = """(q, lines) => { const labels = [...q.querySelectorAll('.ic-quiz-options label')]
    .filter(l => l.querySelector('input'));
  return lines.map(([k, x, y]) => { const e = document.elementFromPoint(x, y);
    const owner = e && labels.findIndex(l => l.contains(e));
    return [k, owner, e ? e.tagName + '.' + e.className + ': ' + e.textContent.trim().slice(0, 40)
                        : 'nothing']; }); }"""


def test_every_quiz_option_selects_itself(chapter):
    """Every line of every option's text belongs to that option's row (what the
    browser finds at the middle of each wrapped line is inside that label, so a
    click there selects it); then a real click on each option's text (its last
    line, where an overflowing option once covered its neighbour) and on each
    control selects that option, and only that one."""
    page, notebook = chapter
    quizzes = page.locator(".ic-quiz")
    assert quizzes.count() >= 1, f"{notebook}: no quiz (.ic-quiz)"
    for qi in range(quizzes.count()):
        quiz = quizzes.nth(qi)
        labels = quiz.locator(".ic-quiz-options label:has(input)")
        n = labels.count()
        assert n >= 2, f"{notebook} Q{qi + 1}: {n} option rows"
        multiple = quiz.locator(".ic-quiz-options input[type=checkbox]").count() > 0
        _on_screen(page, quiz)                       # the question in the middle, settled
        height = page.viewport_size["height"]
        for k in range(n):
            geo = labels.nth(k).evaluate(_LINE_RECTS)
            if not all(0 < y < height for _x, y in geo["lines"]):
                geo = _on_screen(page, labels.nth(k))  # a tall question: this option
            assert geo["lines"], f"{notebook} Q{qi + 1}: option {k + 1} has no text on screen"
            left, top, right, bottom = geo["box"]
            assert all(left <= x <= right and top <= y <= bottom for x, y in geo["lines"]), (
                f"{notebook} Q{qi + 1}: option {k + 1}'s text runs out of its own row")
            hits = quiz.evaluate(_HITS, [[k, x, y] for x, y in geo["lines"]])
            wrong = [(j, owner, what) for j, (_k, owner, what) in enumerate(hits) if owner != k]
            assert not wrong, (f"{notebook} Q{qi + 1}: line(s) of option {k + 1}'s text "
                               f"({geo['text']!r}) lie under another row or element "
                               f"(line, row index, element): {wrong}")
            x, y = geo["lines"][-1]
            before = _state(quiz)
            page.mouse.click(x, y)
            page.wait_for_timeout(30)
            after = _state(quiz)
            if multiple:
                changed = [i for i in range(n) if before[i] != after[i]]
                assert changed == [k], (f"{notebook} Q{qi + 1}: a click on the text of "
                                        f"option {k + 1} ({geo['text']!r}) changed {changed}")
            else:
                assert after.count(True) == 1 and after.index(True) == k, (
                    f"{notebook} Q{qi + 1}: a click on the text of option {k + 1} "
                    f"({geo['text']!r}, at {x:.0f},{y:.0f}) selected "
                    f"{[i + 1 for i, v in enumerate(after) if v]}")
        for k in range(n):                               # the controls, in turn
            control = labels.nth(k).locator("input")
            control.scroll_into_view_if_needed()
            before = _state(quiz)
            control.click()
            after = _state(quiz)
            if multiple:
                assert [i for i in range(n) if before[i] != after[i]] == [k]
            else:
                assert after.count(True) == 1 and after.index(True) == k, (
                    f"{notebook} Q{qi + 1}: the control of option {k + 1} selected "
                    f"{[i + 1 for i, v in enumerate(after) if v]}")
        rows = quiz.evaluate("""q => [...q.querySelectorAll('.ic-quiz-options label')]
            .filter(l => l.querySelector('input')).map(l => { const b = l.getBoundingClientRect();
              return [b.top, b.bottom]; })""")
        for k in range(n - 1):                           # rows stacked, none over the next
            assert rows[k][1] <= rows[k + 1][0] + 1, (
                f"{notebook} Q{qi + 1}: option {k + 1}'s row overlaps option {k + 2}'s")


def _render_every_cell(page):
    """Scroll through the notebook: JupyterLab renders Markdown as it comes into view."""
    page.evaluate("""async () => { const s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        for (let y = 0; y <= s.scrollHeight; y += s.clientHeight / 2) {
          s.scrollTop = y; await new Promise(r => setTimeout(r, 80)); } }""")


def _dismiss_save_dialog(page):
    """Closing a notebook the link opened can ask "Save changes?" (JupyterLab marks it
    changed once its kernel has started and filled in the kernel's metadata); answer
    as a learner who changed nothing would: don't save."""
    dialog = page.locator(".jp-Dialog", has_text="Save")
    try:
        dialog.first.wait_for(timeout=1500)
    except Exception:
        return
    dialog.first.locator("button", has_text=re.compile("^(Discard|Don.t Save)$")).first.click()
    dialog.first.wait_for(state="detached", timeout=10_000)


def test_the_chapters_links_open_in_the_lab(chapter, lab):
    """Every link of the chapter is a link of the Lab (to a file under its root, the
    repository), and a learner's click opens it in a tab: chapter 0's links to
    docs/ open the Markdown files, and one opens the next chapter; no
    "Could not find path"."""
    page, notebook = chapter
    _render_every_cell(page)
    files = page.evaluate("""base => [...document.querySelectorAll('.jp-MarkdownOutput a[href]')]
        .map(a => a.href).filter(h => h.startsWith(base + '/files/'))
        .map(h => decodeURIComponent(h.slice(base.length + 7).split('?')[0].split('#')[0]))""",
                          lab.base)
    expected = {str(pathlib.PurePosixPath(os.path.normpath(f"notebooks/{t.split('#')[0]}")))
                for t in relative_links(REPO / "notebooks" / notebook)}
    assert set(files) == expected, (sorted(files), sorted(expected))
    sample = sorted(f for f in files if f.startswith("docs/"))
    if notebook.startswith("00_"):            # and one chapter (its kernel shut down after)
        sample += sorted(f for f in files if f.endswith(".ipynb"))[:1]
    for path in sample:
        name = pathlib.PurePosixPath(path).name
        link = page.locator(f".jp-MarkdownOutput a[href*='/files/{path}']").first
        link.scroll_into_view_if_needed()
        link.click()
        tab = page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text=name)
        try:
            tab.first.wait_for(timeout=60_000)
        except Exception:
            errors = page.locator(".jp-Dialog").all_inner_texts()
            raise AssertionError(f"{notebook}: the link to {path} opened no tab {name!r}; "
                                 f"dialogs: {errors}") from None
        assert not page.locator(".jp-Dialog", has_text="Could not find path").count()
        if name.endswith(".ipynb"):
            page.wait_for_function(IDLE, timeout=120_000)
            _menu(page, "Kernel", "Shut Down Kernel")
        else:   # the Markdown file, its text shown
            page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .cm-content, "
                         ".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-RenderedMarkdown"
                         ).first.wait_for(timeout=30_000)
        _menu(page, "File", "Close Tab")
        _dismiss_save_dialog(page)
        page.locator(".lm-TabBar-tabLabel", has_text=notebook).first.click()


def test_an_exercise_opens_and_validate_runs(lab, browser):
    """The graded exercise is in the learner's Lab; its Validate button runs
    nbgrader's validation and reports on the notebook."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, lab, "exercises/ring_allreduce/ring_allreduce.ipynb")
        assert not page.locator(".jp-Dialog", has_text="Could not find path").count()
        page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").first.click()
        dialog = page.locator(".jp-Dialog")
        dialog.first.wait_for(timeout=180_000)
        page.wait_for_function(
            "() => { const d = document.querySelector('.jp-Dialog');"
            " return d && !/Validating/i.test(d.textContent) && d.textContent.length > 20; }",
            timeout=180_000)
        text = dialog.first.inner_text()
        assert re.search(r"fail|error|pass|success|Validat", text, re.I), text[:500]
        assert "Could not find path" not in text
    finally:
        page.close()
