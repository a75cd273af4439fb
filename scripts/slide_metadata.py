#!/usr/bin/env python3
"""Give every chapter's cells their slideshow metadata, by rule (idempotent).

The instructor presents a chapter live with jupyterlab-rise, and ``make
slides`` builds static reveal.js decks with nbconvert; both read each cell's
``metadata.slideshow.slide_type``.  This script sets it from the cells' content
alone, so that it can be re-run whenever a chapter changes:

===========================================================  ==============
cell                                                         slide type
===========================================================  ==============
the chapter's title (``# ...``), a section (``## ...``)      ``slide``
a sub-section (``### ...``)                                  ``subslide``
a takeaway (``> **Takeaway``) or a derivation (``**Derivation``)  ``subslide``
an explorer or a quiz (a code cell calling ``.show()``)      ``slide``, or
                                                             ``-`` right after
                                                             its heading
a long table (more than :data:`LONG_TABLE_ROWS` rows)        ``skip``
a section that is reference material (glossary, appendix,    ``skip`` (heading
optional GPU measurements, reference runs, notes for         and everything
instructors)                                                 up to the next
                                                             heading)
anything else                                                ``-`` (on the
                                                             slide above)
===========================================================  ==============

Usage::

    python scripts/slide_metadata.py            # rewrite notebooks/[0-9][0-9]_*.ipynb
    python scripts/slide_metadata.py --check    # exit 1, naming them, if any would change
    python scripts/slide_metadata.py PATH...    # only these notebooks

Only ``metadata.slideshow`` changes; everything else in the file stays
byte-for-byte as nbformat writes it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: A markdown table with more rows than this is skipped in the slides.
LONG_TABLE_ROWS = 8
#: Section headings (after the #s) that mark reference material, skipped in the slides.
SKIP_SECTIONS = re.compile(r"^(glossary|appendix|optional\b|reference\b|for instructors)",
                           re.IGNORECASE)
SLIDE_TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _heading(text: str):
    """(level, title) of a markdown cell that starts with a heading, else None.

    >>> _heading("## The story\\nOnce upon a time")
    (2, 'The story')
    >>> _heading("Plain text") is None
    True
    """
    m = re.match(r"\s*(#{1,6})\s+(.*)", text)
    return (len(m.group(1)), m.group(2).strip()) if m else None


def _table_rows(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("|"))


def slide_types(cells) -> list[str]:
    """The slide type of each cell, by the rules in the module docstring.

    >>> md = lambda s: {"cell_type": "markdown", "source": s}
    >>> code = lambda s: {"cell_type": "code", "source": s}
    >>> slide_types([md("# Chapter 1"), md("## The story"), md("Once..."),
    ...              code("x = 1"), code("cl.explorers.ch01.explorer().show();"),
    ...              md("> **Takeaway.** ..."), md("## Glossary"), md("| a |"),
    ...              md("## Quiz"), code("cl.quiz.show(q);")])
    ['slide', 'slide', '-', '-', 'slide', 'subslide', 'skip', 'skip', 'slide', '-']
    """
    out = []
    skipping_level = None  # inside a skipped section of this heading level
    for cell in cells:
        text = _source(cell)
        head = _heading(text) if cell.get("cell_type") == "markdown" else None
        if head and skipping_level is not None and head[0] <= skipping_level:
            skipping_level = None
        if head and head[0] >= 2 and SKIP_SECTIONS.match(head[1]):
            skipping_level = head[0]
        if skipping_level is not None:
            out.append("skip")
            continue
        if cell.get("cell_type") == "markdown":
            stripped = text.lstrip()
            if head and head[0] <= 2:
                kind = "slide"
            elif head:
                kind = "subslide"
            elif _table_rows(text) > LONG_TABLE_ROWS:
                kind = "skip"
            elif stripped.startswith(("> **Takeaway", "**Takeaway", "**Derivation")):
                kind = "subslide"
            else:
                kind = "-"
        elif cell.get("cell_type") == "code" and ".show(" in text:
            kind = "-" if out and out[-1] in ("slide", "subslide") and \
                _heading(_source(cells[len(out) - 1])) else "slide"
        else:
            kind = "-"
        out.append(kind)
    return out


def apply(nb: dict) -> bool:
    """Set ``metadata.slideshow.slide_type`` on every cell of ``nb``; True if anything changed."""
    changed = False
    for cell, kind in zip(nb["cells"], slide_types(nb["cells"])):
        meta = cell.setdefault("metadata", {})
        if meta.get("slideshow") != {"slide_type": kind}:
            meta["slideshow"] = {"slide_type": kind}
            changed = True
    return changed


def chapters() -> list[Path]:
    return sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _dumps(nb: dict) -> str:
    # nbformat's own layout: one-space indent, sorted keys, UTF-8 kept
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every chapter)")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if any notebook lacks its metadata")
    a = p.parse_args(argv)
    stale = []
    for path in a.paths or chapters():
        if not path.exists():
            print(f"slide_metadata: no such notebook: {path}", file=sys.stderr)
            return 2
        nb = json.loads(path.read_text(encoding="utf-8"))
        if apply(nb):
            stale.append(path)
            if not a.check:
                path.write_text(_dumps(nb), encoding="utf-8")
    verb = "lack slide metadata (run python scripts/slide_metadata.py)" if a.check else "updated"
    for path in stale:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        print(f"slide_metadata: {shown}: {verb}")
    return 1 if (a.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
