"""The static edition (course_lib.apps.site): executed chapters rendered to HTML, plus an index."""

from __future__ import annotations

import base64
import os
import re
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_lib.apps import site

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"

EXPLORER_CELL = """\
from course_lib.widgets import Explorer

def compute(n):
    return {"x": list(range(n)), "y": [i * i for i in range(n)]}

def plot(data, fig):
    ax = fig.add_subplot()
    ax.plot(data["x"], data["y"], marker="o")

Explorer("Squares", {"n": {"type": "IntSlider", "min": 2, "max": 20, "value": 6}},
         compute=compute, plot=plot,
         readout=lambda d: f"largest square: {d['y'][-1]}").show()
"""


#: Formulas as the chapters write them, inline and displayed.
FORMULAS = ("A ring AllReduce takes $t = 2\\frac{n-1}{n}\\frac{S}{B}$, and one copy\n\n"
            "$$T = \\alpha + \\frac{D}{B}$$")


def offline_page_check(pages) -> list[dict]:
    """Open each page in Debian's chromium with every non-local request aborted (the
    network off, as behind a firewall) and report what it shows: MathJax's rendered
    formulas, any ``$...$`` left raw in the prose, and every request that would
    have left the machine."""
    from playwright.sync_api import sync_playwright

    sys_path = str(REPO / "scripts")
    import sys

    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    from lab_session import CHROMIUM, CHROMIUM_ARGS

    found = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for page_path in pages:
            page = browser.new_page()
            outside = []

            def route(r, outside=outside):
                if r.request.url.startswith(("file://", "data:", "blob:")):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(Path(page_path).resolve().as_uri(), wait_until="load", timeout=60_000)
            try:
                page.wait_for_function(
                    "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue &&"
                    " MathJax.Hub.queue.pending === 0 && MathJax.Hub.queue.running === 0 &&"
                    " document.querySelectorAll('.MathJax_CHTML').length > 0",
                    timeout=60_000)
            except Exception:
                pass
            found.append(page.evaluate(r"""() => ({
                rendered: document.querySelectorAll('.MathJax_CHTML').length,
                display: document.querySelectorAll('.MJXc-display').length,
                errors: document.querySelectorAll('.MathJax_Error, merror').length,
                raw: [...document.querySelectorAll('.jp-MarkdownOutput')]
                       .map(e => e.innerText).filter(t => /\$[^$\n]*\\[a-z]+[^$\n]*\$/.test(t))
                       .map(t => t.slice(0, 120)),
                mathjax: !!window.MathJax, require: typeof window.require === 'function'})"""))
            found[-1]["outside"] = outside
            found[-1]["page"] = Path(page_path).name
            page.close()
        browser.close()
    return found


def _need_chromium():
    chromium = Path("/usr/bin/chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        reason = f"playwright is not installed: {exc}"
    else:
        reason = "" if chromium.exists() else (f"{chromium} not found: install Debian's "
                                               "chromium (bash scripts/ensure_chromium.sh)")
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def write(path: Path, cells):
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def tiny_course(tmp_path):
    src = tmp_path / "nbs"
    src.mkdir()
    write(src / "00_alpha.ipynb", [
        new_markdown_cell("# Alpha: the first stop\n\nWhere the **freight** starts its trip."),
        new_code_cell(EXPLORER_CELL),
    ])
    write(src / "01_beta.ipynb", [
        new_markdown_cell("# Beta\n\nBack to [the first stop](00_alpha.ipynb#top).\n\n"
                          + FORMULAS),
        new_code_cell("import os\nprint('static =', os.environ.get('COURSE_STATIC'))\n6 * 7"),
    ])
    return src


def test_builds_pages_with_static_explorer_figure_and_index(tiny_course, tmp_path):
    out = tmp_path / "site"
    results = site.build_site(tiny_course, out, timeout_s=120, progress=False)
    assert [r.ok for r in results] == [True, True], [r.error for r in results]

    alpha = (out / "00_alpha.html").read_text(encoding="utf-8")
    # the explorer drew its static figure, embedded as a base64 PNG, with its readout
    pngs = re.findall(r'<img[^>]+src="data:image/png;base64,([A-Za-z0-9+/=\s]+)"', alpha)
    assert pngs, "no embedded PNG in the explorer's page"
    assert base64.b64decode("".join(pngs[0].split())).startswith(b"\x89PNG")
    assert "static view at the default settings" in alpha
    assert "largest square: 25" in alpha          # readout at the default n = 6: 5**2
    assert "jp-Notebook" in alpha                  # the JupyterLab template

    beta = (out / "01_beta.html").read_text(encoding="utf-8")
    assert "static = 1" in beta                    # the kernel ran with COURSE_STATIC=1
    assert "42" in beta                            # outputs are in the page
    assert 'href="00_alpha.html#top"' in beta      # notebook links point at the pages
    assert "00_alpha.ipynb" not in beta

    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="00_alpha.html"' in index and 'href="01_beta.html"' in index
    assert "Alpha: the first stop" in index and "Where the freight starts its trip." in index
    assert index.index("00_alpha.html") < index.index("01_beta.html")


def test_the_static_edition_works_offline(tiny_course, tmp_path):
    """require.js and MathJax come from the course's own npm packages, copied beside
    the pages: in chromium with the network off, the formulas render (MathJax's
    output, no raw ``$...$``) and no request leaves the machine."""
    _need_chromium()
    out = tmp_path / "site"
    site.build_site(tiny_course, out, timeout_s=120, progress=False)
    page = (out / "01_beta.html").read_text(encoding="utf-8")
    assert 'src="lib/require.js"' in page and 'src="lib/mathjax/MathJax.js' in page
    assert not re.search(r'<script[^>]+src="https?://', page), "a script still comes from a CDN"
    assert (out / "lib" / "require.js").is_file() and (out / "lib" / "mathjax" / "MathJax.js").is_file()
    (shown,) = offline_page_check([out / "01_beta.html"])
    assert shown["mathjax"] and shown["require"], shown
    assert shown["outside"] == [], f"requests that left the machine: {shown['outside']}"
    assert shown["rendered"] >= 2 and shown["display"] >= 1 and not shown["errors"], shown
    assert not shown["raw"], f"formulas left as raw LaTeX: {shown['raw']}"


def test_a_site_without_the_npm_packages_says_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setattr(site, "NODE_MODULES", tmp_path / "none")
    with pytest.raises(FileNotFoundError, match=r"make node"):
        site.copy_assets(tmp_path / "out")


def test_failure_exits_non_zero_and_names_the_notebook(tiny_course, tmp_path, capsys):
    write(tiny_course / "02_broken.ipynb", [
        new_markdown_cell("# Broken"),
        new_code_cell("raise RuntimeError('the maglev is down')"),
    ])
    out = tmp_path / "site"
    rc = site.main([str(out), "--src", str(tiny_course), "--no-progress", "--timeout", "120"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "02_broken.ipynb" in err and "RuntimeError" in err and "maglev is down" in err
    # the good notebooks were still built, and the index says which one failed
    assert (out / "00_alpha.html").exists() and (out / "01_beta.html").exists()
    assert not (out / "02_broken.html").exists()
    assert "failed to build" in (out / "index.html").read_text(encoding="utf-8")


def test_bad_arguments(tmp_path, capsys):
    assert site.main([str(tmp_path / "o"), "--src", str(tmp_path / "missing"),
                      "--no-progress"]) == 2
    assert "must be a folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert site.main([str(tmp_path / "o"), "--src", str(empty), "--no-progress"]) == 2
    with pytest.raises(ValueError, match="timeout_s"):
        site.build_site(empty, tmp_path / "o", timeout_s=0)


def test_titles_summaries_and_links():
    nb = new_notebook(cells=[
        new_markdown_cell("Some intro without a heading."),
        new_markdown_cell("## Not level one\n\n# Chapter 5 — The *High-Speed* Rail\n"),
    ])
    assert site.notebook_title(nb) == "Chapter 5 — The High-Speed Rail"
    assert site.notebook_summary(nb) == "Some intro without a heading."
    assert site.notebook_title(new_notebook(), fallback="05_x") == "05_x"
    page = '<a href="06_road_map.ipynb">a</a> <a href="http://x.org/y.ipynb">b</a>'
    assert site.rewrite_notebook_links(page) == (
        '<a href="06_road_map.html">a</a> <a href="http://x.org/y.ipynb">b</a>')


@pytest.mark.slow
def test_full_site_builds(tmp_path, capsys):
    """Build the real course into a temp dir (the same as `make site`)."""
    notebooks = site.find_notebooks(NOTEBOOKS) if NOTEBOOKS.is_dir() else []
    if not notebooks:
        if os.environ.get("CI") == "true":
            pytest.fail("notebooks/ has no chapters: the static edition cannot be built")
        pytest.skip("notebooks/ has no chapters yet: nothing to build")
    t0 = time.perf_counter()
    rc = site.main([str(tmp_path / "_site"), "--no-progress"])
    seconds = time.perf_counter() - t0
    captured = capsys.readouterr()
    assert rc == 0, captured.err[-3000:]
    for nb in notebooks:
        page = tmp_path / "_site" / (nb.stem + ".html")
        assert page.exists(), f"{nb.name} was not rendered"
        if "explorer().show()" in nb.read_text(encoding="utf-8"):
            assert "data:image/png;base64," in page.read_text(encoding="utf-8"), (
                f"{nb.name}: its explorer drew no static figure")
    index = (tmp_path / "_site" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{nb.stem}.html"' in index for nb in notebooks)
    # the chapters with the most formulas, offline
    _need_chromium()
    for shown in offline_page_check([tmp_path / "_site" / (nb.stem + ".html") for nb in notebooks
                                     if nb.name[:2] in ("03", "07", "09")]):
        assert shown["outside"] == [] and shown["rendered"] > 0 and not shown["raw"], shown
    print(f"full static site: {len(notebooks)} notebooks in {seconds:.1f} s")
