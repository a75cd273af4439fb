"""The static edition: every chapter executed and rendered to HTML, plus an index.

``python -m course_lib site OUTDIR [--src notebooks] [--timeout 600]`` (or
``python -m course_lib site OUTDIR``; ``make site`` writes ``_site/``).  Each notebook is executed headless with nbclient in
a fresh ``python3`` kernel whose environment has ``COURSE_STATIC=1``, so
explorers draw one static figure at their default settings and quizzes print
with the answers folded (see :func:`course_lib.widgets.static_mode`); it is
then exported with nbconvert's JupyterLab template, images embedded, and links
between notebooks (``02_maglev_line.ipynb``) pointed at the HTML pages.
``index.html`` is the chapter map.

Nothing is fetched from a CDN: the scripts the pages load (require.js and
MathJax 2, for the formulas) are the course's own npm packages
(``deploy/node_modules``, installed by ``make node``: ``bash scripts/ensure_node.sh``),
copied next to the pages (hard-linked where possible) under ``lib/``, as the
slide decks do (``scripts/build_slides.py``).  The site works offline and from
any static web server.

The run goes on past a failing notebook so that one build shows every problem,
then exits non-zero naming each notebook that failed.

This module is an app on top of the library's layers (``course_lib.apps``): it
imports nothing from ``course_lib``'s models.  Its command line lives in
:mod:`course_lib.apps.cli`.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["build_site", "copy_assets", "exporter", "find_notebooks", "notebook_title", "notebook_summary",
           "rewrite_notebook_links", "main", "add_arguments"]

_REPO = Path(__file__).resolve().parents[2]  # the repository (course_lib/apps/site.py)
DEFAULT_TIMEOUT_S = 600.0  # per cell
COURSE_TITLE = "Interconnect City"
NODE_MODULES = _REPO / "deploy" / "node_modules"
#: What the pages load, as (path under the site, path under deploy/node_modules).
ASSETS = [("lib/require.js", "requirejs/require.js"), ("lib/mathjax", "mathjax")]
#: How the pages load them (relative to a page).
REQUIRE_JS_URL = "lib/require.js"
MATHJAX_URL = "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
MERMAID_URL = "./lib/mermaid-none.mjs"
#: Parts of the npm packages a page never loads.
_IGNORE = shutil.ignore_patterns("unpacked", "test", "docs", "*.md", "SVG", "PreviewHTML",
                                 "NativeMML", "PlainSource")
_MERMAID_STANDIN = """// Written by course_lib/apps/site.py. The chapters draw no Mermaid diagrams,
// so the pages need none: this module stands in for the CDN copy that
// nbconvert's template imports.
export default { initialize() {}, run() {} };
"""


@dataclass
class PageResult:
    """What happened to one notebook."""

    source: Path
    html_path: Path | None
    title: str
    summary: str
    seconds: float
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def find_notebooks(src_dir) -> list[Path]:
    """The ``*.ipynb`` files directly in ``src_dir``, sorted by name."""
    src = Path(src_dir)
    if not src.is_dir():
        raise ValueError(f"src_dir must be a folder of notebooks, got {str(src)!r}")
    return sorted(p for p in src.glob("*.ipynb") if not p.name.startswith("."))


def _markdown_sources(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            yield cell.source if isinstance(cell.source, str) else "".join(cell.source)


def notebook_title(nb, fallback: str = "") -> str:
    """The first level-1 heading in the notebook's Markdown, else ``fallback``.

    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter 2: The Maglev Line\\nText")])
    >>> notebook_title(nb)
    'Chapter 2: The Maglev Line'
    """
    for src in _markdown_sources(nb):
        for line in src.splitlines():
            m = re.match(r"^#\s+(.+?)\s*#*\s*$", line)
            if m:
                return _strip_markdown(m.group(1))
    return fallback


def _strip_markdown(text: str) -> str:
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)          # images
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)      # links -> their text
    text = re.sub(r"<[^>]+>", "", text)                       # inline HTML
    text = re.sub(r"[*_`]+", "", text)                        # emphasis, code
    return re.sub(r"\s+", " ", text).strip()


def notebook_summary(nb, max_chars: int = 220) -> str:
    """The first prose paragraph of the notebook (no headings, lists, quotes), shortened.

    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
    ...     "# Title\\n\\nWhy **bandwidth** is not the whole story.\\n\\n- a list")])
    >>> notebook_summary(nb)
    'Why bandwidth is not the whole story.'
    """
    for src in _markdown_sources(nb):
        for para in re.split(r"\n\s*\n", src):
            para = para.strip()
            if not para or para[0] in "#-*>|<!" or re.match(r"^\d+\.\s", para):
                continue
            text = _strip_markdown(para)
            if len(text) > max_chars:
                text = text[: max_chars - 1].rsplit(" ", 1)[0] + "…"
            return text
    return ""


_LINK = re.compile(r'href="(?![a-zA-Z][a-zA-Z0-9+.-]*:)([^"#?]+?)\.ipynb((?:#[^"]*)?)"')


def rewrite_notebook_links(page: str) -> str:
    """Point relative links to ``*.ipynb`` at the matching ``*.html`` page.

    >>> rewrite_notebook_links('<a href="02_maglev_line.ipynb#nvlink">x</a>')
    '<a href="02_maglev_line.html#nvlink">x</a>'
    >>> rewrite_notebook_links('<a href="https://example.org/a.ipynb">x</a>')
    '<a href="https://example.org/a.ipynb">x</a>'
    """
    return _LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2)}"', page)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def copy_assets(out, node_modules=None) -> None:
    """Put the pages' scripts (:data:`ASSETS`) from ``deploy/node_modules`` into
    ``out``; raises FileNotFoundError naming what is missing and ``make node``."""
    node = Path(node_modules) if node_modules is not None else NODE_MODULES
    missing = [npm for _, npm in ASSETS if not (node / npm).exists()]
    if missing:
        raise FileNotFoundError(
            f"the static edition's scripts are missing in {node}: {', '.join(missing)}; "
            "run `make node` (bash scripts/ensure_node.sh: npm ci in deploy/)")
    out = Path(out)
    (out / "lib").mkdir(parents=True, exist_ok=True)
    (out / MERMAID_URL).write_text(_MERMAID_STANDIN, encoding="utf-8")
    for rel, npm in ASSETS:
        src, dst = node / npm, out / rel
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst, ignore=_IGNORE, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(src), str(dst))


def exporter():
    """nbconvert's JupyterLab HTML exporter, images embedded, its scripts local."""
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab", embed_images=True,
                        require_js_url=REQUIRE_JS_URL, mathjax_url=MATHJAX_URL,
                        mermaid_js_url=MERMAID_URL, mermaid_layout_elk_js_url=MERMAID_URL)


def kernel_env() -> dict:
    """The kernel's environment: static explorers, inline figures, course_lib importable."""
    env = dict(os.environ)
    env["COURSE_STATIC"] = "1"
    # `make` exports MPLBACKEND=Agg for headless runs; in a kernel that would
    # hide every pyplot figure, so use the inline backend ipykernel defaults to.
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(_REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _short_error(exc: BaseException) -> str:
    ename = getattr(exc, "ename", None)
    if ename:  # nbclient's CellExecutionError
        return f"{ename}: {getattr(exc, 'evalue', '')}".strip()
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return f"{type(exc).__name__}: {last}" if last else type(exc).__name__


def _index_html(results: list[PageResult], title: str) -> str:
    rows = []
    for r in results:
        m = re.match(r"^(\d+)_", r.source.name)
        num = str(int(m.group(1))) if m else ""
        name = html.escape(r.title or r.source.stem)
        link = (f'<a href="{html.escape(r.html_path.name)}">{name}</a>' if r.html_path
                else f"{name} <em>(failed to build)</em>")
        rows.append(f"<tr><td class='num'>{num}</td><td>{link}</td>"
                    f"<td>{html.escape(r.summary)}</td></tr>")
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} - static edition</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: .5rem; vertical-align: top; text-align: left; }}
td.num {{ width: 2.5rem; color: #666; }}
.note {{ background: #f4f6fa; border-left: 4px solid #4a6fa5; padding: .6rem 1rem; }}
</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>How data moves inside and between GPU machines, told as a city's transport system.</p>
<p class="note">This is the <b>static edition</b>: every chapter was run once and saved with its
outputs. The explorers show one figure at their default settings and the quizzes show their
answers folded. To move the sliders, open the notebooks in JupyterLab (<code>make lab</code>)
or on Binder.</p>
<h2>Chapter map</h2>
<table><thead><tr><th>#</th><th>Chapter</th><th>What it is about</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
<p><small>Built {when}.</small></p>
</body></html>
"""


def build_site(src_dir, out_dir, timeout_s: float = DEFAULT_TIMEOUT_S,
               kernel_name: str = "python3", progress: bool = True,
               title: str = COURSE_TITLE) -> list[PageResult]:
    """Execute and render every notebook in ``src_dir`` into ``out_dir``.

    Parameters
    ----------
    src_dir : path
        Folder holding the chapter notebooks (``*.ipynb``).
    out_dir : path
        Where the HTML pages and ``index.html`` go (created if missing).
    timeout_s : float
        Per-cell execution limit, seconds.
    kernel_name : str
        The Jupyter kernel to run the notebooks with.
    progress : bool
        Show a tqdm progress bar on stderr.

    Returns
    -------
    list of PageResult
        One per notebook, in order; ``error`` is non-empty for a failure.
    """
    import nbformat
    from nbclient import NotebookClient

    if not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    notebooks = find_notebooks(src_dir)
    if not notebooks:
        raise ValueError(f"no notebooks (*.ipynb) in {str(src_dir)!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    copy_assets(out)
    export = exporter()
    env = kernel_env()

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(notebooks), unit="notebook", file=sys.stderr)
    results = []
    for path in notebooks:
        if bar is not None:
            bar.set_description(path.name)
        t0 = time.perf_counter()
        page_title, summary, html_path, error = path.stem, "", None, ""
        try:
            nb = nbformat.read(path, as_version=4)
            page_title = notebook_title(nb, fallback=path.stem)
            summary = notebook_summary(nb)
            client = NotebookClient(nb, timeout=timeout_s, kernel_name=kernel_name,
                                    resources={"metadata": {"path": str(path.parent)}})
            client.execute(env=env)
            body, _ = export.from_notebook_node(
                nb, resources={"metadata": {"name": page_title, "path": str(path.parent)}})
            html_path = out / (path.stem + ".html")
            html_path.write_text(rewrite_notebook_links(body), encoding="utf-8")
        except Exception as exc:  # report every notebook, then fail
            error = _short_error(exc)
            html_path = None
        results.append(PageResult(path, html_path, page_title, summary,
                                  time.perf_counter() - t0, error))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    (out / "index.html").write_text(_index_html(results, title=title), encoding="utf-8")
    return results


#: One line for ``python -m course_lib --help``; the parser's description.
SUMMARY = "build the static HTML edition"
DESCRIPTION = ("Build the static HTML edition: execute every chapter (COURSE_STATIC=1) "
               "and export it with its outputs, plus an index.html chapter map.")


def add_arguments(parser) -> None:
    """The ``site`` command's options, on ``parser`` (see :mod:`course_lib.apps.command`)."""
    parser.add_argument("outdir", help="folder to write the site into (e.g. _site)")
    parser.add_argument("--src", default=str(_REPO / "notebooks"),
                        help="folder of notebooks (default: the repository's notebooks/)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help="per-cell time limit in seconds (default %(default)s)")
    parser.add_argument("--kernel", default="python3", help="kernel name (default python3)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_command, command_parser=parser)


def _command(a) -> int:
    t0 = time.perf_counter()
    try:
        results = build_site(a.src, a.outdir, timeout_s=a.timeout, kernel_name=a.kernel,
                             progress=not a.no_progress)
    except ValueError as exc:
        print(f"site: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"site: {exc}", file=sys.stderr)
        return 1
    failed = [r for r in results if not r.ok]
    total = time.perf_counter() - t0
    for r in failed:
        print(f"site: FAILED {r.source}: {r.error}", file=sys.stderr)
    print(f"site: {len(results) - len(failed)}/{len(results)} notebooks rendered into "
          f"{a.outdir} in {total:.1f} s (index: {Path(a.outdir) / 'index.html'})")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib site OUTDIR`` (or ``python -m course_lib.site
    OUTDIR``); exit 1 if any notebook failed."""
    from .command import Parser, run_parser

    parser = Parser(prog="python -m course_lib site", description=DESCRIPTION)
    add_arguments(parser)
    return run_parser(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
