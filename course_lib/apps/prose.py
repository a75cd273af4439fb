"""Chapter prose bound to the models: ``python -m course_lib.apps.prose [--check | --scan]``.

A number in a chapter notebook's Markdown that a course model or the catalog
produces is written with its name::

    one ring AllReduce of 1 GiB takes <!--v:ring_1gib-->54.4 ms<!--/v--> on ...

The comments do not show in JupyterLab, the static site or the slides; the
text between them is what a learner reads.  The name is a key of the
chapter's :mod:`course_lib.values` module (``course_lib/values/ch07.py`` for
``notebooks/07_*.ipynb``), or ``chNN.key`` for another chapter's value.

* ``python -m course_lib.apps.prose`` (``make prose``) rewrites every bound
  text from its value: change a model or a catalog entry, re-run, and the prose
  follows;
* ``--check`` changes nothing and exits 1, listing each place where the text
  differs from the value (the test suite runs it, like ``autograder release
  --check``): the prose cannot drift from the model a cell away;
* ``--scan`` lists every number-with-unit in the Markdown (and in the quiz
  bank's text) that is neither bound to a value nor a cited figure.

A figure the course quotes rather than computes -- an article's claim, a
vendor's datasheet line, a measurement in a public issue -- is marked with its
source and is not rewritten::

    the article says <!--cite:the NVLink article-->600 GB/s<!--/cite-->

What the scanner does not count: formulas (``$...$``), code (`` `...` ``),
and message sizes that are powers of two in binary units (``1 GiB``,
``64 KiB``: sizes the prose picks as inputs, not results).

Exit codes: 0 done (or no difference); 1 differences (``--check``) or an
unknown value name; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from dataclasses import dataclass

from .. import values as _values
from ..content import CITE_FIELD

__all__ = ["BOUND", "CITED", "NUMBER", "Difference", "shown", "notebook_namespace", "bind_text",
           "bind_notebook", "unbound_numbers", "scan_notebook", "scan_quiz_bank",
           "chapter_notebooks", "main"]

REPO = pathlib.Path(__file__).resolve().parents[2]

#: ``<!--v:name-->text<!--/v-->``: a bound value (``name`` or ``chNN.name``).
BOUND = re.compile(r"<!--v:((?:ch\d\d\.|your_cluster\.)?[A-Za-z_]\w*)-->(.*?)<!--/v-->")
#: ``<!--cite:source-->text<!--/cite-->``: a quoted figure and where it comes from.
CITED = re.compile(r"<!--cite:([^>]+?)-->(.*?)<!--/cite-->")
_UNIT = (r"TB/s|GB/s|MB/s|GiB/s|Tb/s|Gb/s|Gbit/s|Gbps|GT/s|ns|µs|μs|us|ms|s|%|×|x|"
         r"TiB|GiB|MiB|KiB|TB|GB|MB|KB|kB|B|W|km|m")
#: A number followed by a unit (``54.4 ms``, ``7×``, ``450 GB/s``, ``81 %``).
NUMBER = re.compile(r"(?<![\w.\-/])[-−]?\d+(?:[.,]\d+)*(?:\s|&nbsp;|\\,)?\s*(?:" + _UNIT
                    + r")(?![\w/])")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
_LINE_START = re.compile(r"^\s*(?:(?:[-*+>]|\d+[.)])\s+)*<!--(?:v|cite):")
_POW2_SIZE = re.compile(r"^(\d+)\s*(?:KiB|MiB|GiB|TiB)$")


@dataclass(frozen=True)
class Difference:
    """A bound text that is not its value's text."""
    path: str
    cell: str
    name: str
    text: str
    value: str

    def __str__(self):
        return (f"{self.path} cell {self.cell}: <!--v:{self.name}--> reads {self.text!r}, "
                f"the model gives {self.value!r}")


def notebook_namespace(path) -> str:
    """The value namespace of a notebook: ``07_sharing_the_load.ipynb`` -> ``"ch07"``."""
    name = pathlib.Path(path).name
    m = re.match(r"(\d\d)_", name)
    if m:
        return f"ch{m.group(1)}"
    stem = pathlib.Path(path).stem
    if stem in _values.NAMESPACES:
        return stem
    raise ValueError(f"notebook {name!r} has no value namespace: its name must start with "
                     f"'NN_' (a chapter) or be one of {', '.join(_values.NAMESPACES)}")


def bind_text(text: str, namespace: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``text`` with every bound span rewritten; and the ``(name, old, new)`` that changed."""
    changes = []
    for line in text.splitlines():
        if _LINE_START.match(line):
            raise ValueError(f"a bound or cited number may not start a line (Markdown would read "
                             f"the line as raw HTML and drop its formatting): {line.strip()[:60]!r}")

    def sub(m):
        name, old = m.group(1), m.group(2)
        new = _values.value(name, namespace)
        if new != old:
            changes.append((name, old, new))
        return f"<!--v:{name}-->{new}<!--/v-->"

    return BOUND.sub(sub, text), changes


def _read(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: pathlib.Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def bind_notebook(path, write: bool = False) -> list[Difference]:
    """The differences between ``path``'s bound prose and its values; with
    ``write``, the notebook rewritten so that there are none."""
    path = pathlib.Path(path)
    ns = notebook_namespace(path)
    nb = _read(path)
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        new, changes = bind_text(text, ns)
        found += [Difference(str(path.relative_to(REPO) if path.is_relative_to(REPO) else path),
                             cell.get("id", str(i)), name, old, val)
                  for name, old, val in changes]
        if changes and write:
            cell["source"] = new.splitlines(keepends=True)
    if found and write:
        _write(path, nb)
    return found


def shown(text: str) -> str:
    """Markdown ``text`` as a learner reads it: bound and cited numbers as their text.

    >>> shown("takes <!--v:ring-->54 ms<!--/v-->, not <!--cite:the article-->30 ms<!--/cite-->")
    'takes 54 ms, not 30 ms'
    """
    return CITED.sub(r"\2", BOUND.sub(r"\2", text))


def unbound_numbers(text: str) -> list[str]:
    """The numbers-with-units of Markdown ``text`` that are neither bound nor cited."""
    text = BOUND.sub(" ", text)
    text = CITED.sub(" ", text)
    text = _CODE.sub(" ", text)
    text = _MATH.sub(" ", text)
    text = re.sub(r"<[^>]+>", " ", text)  # HTML tags and their attributes
    out = []
    for m in NUMBER.finditer(text):
        token = m.group(0).strip()
        if token.endswith("B") and token[-2:-1].isdigit():
            continue  # "7B", "70B": a model's parameter count, not bytes
        pow2 = _POW2_SIZE.match(token.replace("&nbsp;", " "))
        if pow2 and (int(pow2.group(1)) & (int(pow2.group(1)) - 1)) == 0:
            continue
        out.append(token)
    return out


def scan_notebook(path) -> list[tuple[str, str]]:
    """``(cell id, number)`` for every unbound number in ``path``'s Markdown."""
    nb = _read(pathlib.Path(path))
    return [(c.get("id", str(i)), n) for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "markdown" for n in unbound_numbers("".join(c["source"]))]


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            if k not in ("source", "id", "key", "values", "answer", "answers", "chapter"):
                yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def scan_quiz_bank(lang: str = "en") -> dict[str, list[str]]:
    """Unbound numbers in the quiz bank's learner-facing text, per chapter file
    (``{name}`` fields are bound; the articles' own figures in a question's
    ``source`` are not text a learner is told is true; ``{cite:source|figure}`` is a quoted
    figure)."""
    import yaml

    out = {}
    for p in sorted((REPO / "course_lib" / "content_bank" / lang).glob("ch*.yaml")):
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        found = []
        for s in _strings(doc):
            found += unbound_numbers(re.sub(r"\{\w+\}", " ", CITE_FIELD.sub(" ", s)))
        out[p.stem] = found
    return out


def chapter_notebooks() -> list[pathlib.Path]:
    """The notebooks whose prose is bound: the chapters and the optional one."""
    nbs = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    extra = REPO / "notebooks" / "your_cluster.ipynb"
    return nbs + ([extra] if extra.exists() else [])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.apps.prose",
                                     description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 where a bound text differs from its value")
    mode.add_argument("--scan", action="store_true",
                      help="list the numbers-with-units that are neither bound nor cited")
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path,
                        help="notebooks to treat (default: every chapter and your_cluster)")
    args = parser.parse_args(argv)
    paths = args.notebooks or chapter_notebooks()
    for p in paths:
        if not p.exists():
            parser.error(f"notebooks: {p} does not exist")
    if args.scan:
        total = 0
        for p in paths:
            found = scan_notebook(p)
            total += len(found)
            print(f"{p.name}: {len(found)} unbound")
            for cell, n in found:
                print(f"    cell {cell}: {n}")
        if not args.notebooks:
            for ch, found in scan_quiz_bank().items():
                total += len(found)
                print(f"content_bank/en/{ch}.yaml: {len(found)} unbound"
                      + (f" ({', '.join(found)})" if found else ""))
        print(f"total: {total} unbound numbers")
        return 0
    try:
        diffs = [d for p in paths for d in bind_notebook(p, write=not args.check)]
    except (KeyError, ValueError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 1
    for d in diffs:
        print(d)
    if args.check:
        print(f"{len(diffs)} bound value(s) differ from the models"
              + (" (run `make prose` to rewrite them)" if diffs else ""))
        return 1 if diffs else 0
    print(f"rewrote {len(diffs)} bound value(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
