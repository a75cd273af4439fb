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
        new_markdown_cell("# Beta\n\nBack to [the first stop](00_alpha.ipynb#top)."),
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
    print(f"full static site: {len(notebooks)} notebooks in {seconds:.1f} s")
