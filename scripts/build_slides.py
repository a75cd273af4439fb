#!/usr/bin/env python3
"""Static reveal.js decks of every chapter (``make slides``), with no CDN at run time.

Each chapter is executed headless the way the static edition does it
(:func:`course_lib.apps.site.kernel_env`: explorers drawn once at their
default settings, quiz answers folded), then exported with nbconvert's slides
exporter, which reads the cells' ``metadata.slideshow`` (set by
``scripts/slide_metadata.py``).  Every script and style sheet the decks load
comes from ``deploy/node_modules`` (``bash scripts/ensure_node.sh``: reveal.js,
require.js, jQuery, MathJax 2, Font Awesome) and is copied (hard-linked where
possible) next to the decks, so ``_slides/`` works offline and can be served by
any static web server::

    _slides/index.html                  the list of decks
    _slides/01_city_at_night.slides.html ...
    _slides/reveal.js/  _slides/lib/    the scripts

Usage: ``python scripts/build_slides.py [OUTDIR] [--src notebooks] [--only 01 03]``;
exits 1 naming every chapter that failed.  Open a deck, press → to advance,
``s`` for the speaker view.
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NODE = REPO / "deploy" / "node_modules"
#: What each deck loads, as (path under OUTDIR, path under deploy/node_modules).
ASSETS = [
    ("reveal.js/dist", "reveal.js/dist"),
    ("reveal.js/plugin", "reveal.js/plugin"),
    ("lib/require.js", "requirejs/require.js"),
    ("lib/jquery.min.js", "jquery/dist/jquery.min.js"),
    ("lib/font-awesome", "font-awesome"),
    ("lib/mathjax", "mathjax"),
]
#: Parts of the npm packages a deck never loads.
_IGNORE = shutil.ignore_patterns("unpacked", "test", "docs", "*.md", "less", "scss", "src",
                                 "SVG", "PreviewHTML", "NativeMML", "PlainSource")


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def copy_assets(out: Path) -> None:
    """Copy the decks' scripts from deploy/node_modules into ``out``."""
    missing = [npm for _, npm in ASSETS if not (NODE / npm).exists()]
    if missing:
        raise FileNotFoundError(f"missing in {NODE}: {', '.join(missing)}; run "
                                "`bash scripts/ensure_node.sh` (npm ci in deploy/)")
    (out / "lib").mkdir(parents=True, exist_ok=True)
    (out / "lib" / "mermaid-none.mjs").write_text(MERMAID_STANDIN, encoding="utf-8")
    for rel, npm in ASSETS:
        src, dst = NODE / npm, out / rel
        if dst.exists():
            shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=_IGNORE, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(src), str(dst))


def exporter():
    """nbconvert's slides exporter, pointed at the local copies."""
    from nbconvert import SlidesExporter

    return SlidesExporter(
        reveal_url_prefix="reveal.js",
        reveal_theme="white",  # its fonts ship with reveal.js ("simple" loads web fonts)
        reveal_scroll=True,          # long cells (the summaries) scroll inside the slide
        reveal_number="c/t",
        # A 1280 x 720 projector shows the whole slide; reveal.js scales it to other screens.
        reveal_width=str(SLIDE_SIZE[0]),
        reveal_height=str(SLIDE_SIZE[1]),
        require_js_url="lib/require.js",
        jquery_url="lib/jquery.min.js",
        mathjax_url="lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
        font_awesome_url="lib/font-awesome/css/font-awesome.min.css",
        # The chapters draw no Mermaid diagrams (build() checks); a stand-in module
        # replaces the template's CDN import so that nothing is fetched from outside.
        mermaid_js_url="lib/mermaid-none.mjs",
        mermaid_layout_elk_js_url="lib/mermaid-none.mjs",
        embed_images=True,
    )


#: The slide in reveal.js's own pixels: a 1280 x 720 (16:9) projector, the usual one.
SLIDE_SIZE = (1280, 720)

#: Put into every deck's <head>: nothing on a slide is cut off.  A slide taller than the
#: screen scrolls inside itself from the top (reveal.js would centre it and clip both
#: ends); wide pictures shrink to the slide's width, wide tables and code scroll sideways.
FIT_CSS = """<style id="ic-fit">
.reveal .slides > section > section {
  height: 100% !important; top: 0 !important; margin-top: 0 !important;
  overflow-y: auto !important; box-sizing: border-box; }
.reveal .slides section img, .reveal .slides section svg { max-width: 100%; height: auto; }
.reveal .slides section pre, .reveal .slides section table,
.reveal .slides section .ic-diagram { max-width: 100%; overflow-x: auto; box-sizing: border-box; }
.reveal .slides section .jp-Cell, .reveal .slides section .jp-OutputArea,
.reveal .slides section .jp-OutputArea-output, .reveal .slides section .jp-InputArea {
  max-width: 100%; box-sizing: border-box; }
</style>
"""


def fit_to_screen(body: str) -> str:
    """The deck's HTML with :data:`FIT_CSS` at the end of its <head>."""
    if "</head>" not in body:
        raise ValueError("the exported deck has no </head>")
    return body.replace("</head>", FIT_CSS + "</head>", 1)


MERMAID_STANDIN = """// Written by scripts/build_slides.py. The chapters draw no Mermaid diagrams,
// so the decks need no Mermaid: this module stands in for the CDN copy that
// nbconvert's template imports.
export default { initialize() {}, run() {} };
"""


def build(src: Path, out: Path, only=(), timeout_s: float = 600.0) -> list[tuple]:
    """Execute and export every chapter; [(notebook, deck path or None, error, seconds)]."""
    import nbformat
    from nbclient import NotebookClient

    from course_lib.apps.site import kernel_env, notebook_title

    notebooks = sorted(src.glob("[0-9][0-9]_*.ipynb"))
    if only:
        notebooks = [p for p in notebooks if any(p.name.startswith(o) for o in only)]
    if not notebooks:
        raise ValueError(f"no chapter notebooks (NN_*.ipynb) in {src}"
                         + (f" matching {list(only)}" if only else ""))
    out.mkdir(parents=True, exist_ok=True)
    copy_assets(out)
    exp, env = exporter(), kernel_env()
    results = []
    for path in notebooks:
        t0 = time.perf_counter()
        try:
            nb = nbformat.read(path, as_version=4)
            NotebookClient(nb, timeout=timeout_s, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute(env=env)
            nb.metadata.pop("widgets", None)   # its renderer would come from a CDN
            if any("text/vnd.mermaid" in o.get("data", {}) for c in nb.cells
                   for o in c.get("outputs", [])):
                raise ValueError("a Mermaid output: add mermaid to deploy/package.json "
                                 "and point mermaid_js_url at it")
            body, _ = exp.from_notebook_node(
                nb, resources={"metadata": {"name": notebook_title(nb, path.stem)}})
            deck = out / f"{path.stem}.slides.html"
            deck.write_text(fit_to_screen(body), encoding="utf-8")
            results.append((path, deck, "", time.perf_counter() - t0))
        except Exception as exc:  # report every chapter, then fail
            results.append((path, None, f"{type(exc).__name__}: {exc}"[:500],
                            time.perf_counter() - t0))
    items = "\n".join(f'<li><a href="{html.escape(d.name)}">{html.escape(p.stem)}</a></li>'
                      for p, d, _, _ in results if d)
    (out / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>Interconnect City: slides</title>"
        f"<h1>Interconnect City: slides</h1><ol>\n{items}\n</ol>\n", encoding="utf-8")
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", nargs="?", default=str(REPO / "_slides"))
    p.add_argument("--src", default=str(REPO / "notebooks"))
    p.add_argument("--only", nargs="+", default=(), metavar="NN",
                   help="only chapters whose file name starts with these (e.g. 01 07)")
    a = p.parse_args(argv)
    try:
        results = build(Path(a.src), Path(a.outdir), only=a.only)
    except (ValueError, FileNotFoundError) as exc:
        print(f"slides: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in results if r[2]]
    for path, deck, err, secs in results:
        print(f"slides: {path.name}: " + (f"FAILED {err}" if err else f"{deck} ({secs:.1f} s)"))
    print(f"slides: {len(results) - len(failed)}/{len(results)} decks in {a.outdir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
