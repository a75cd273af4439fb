"""Chapter 0's "Why is my multi-GPU job slow?" path: every symptom a learner brings
has a row, and every section a row sends them to exists in the chapter it links."""

import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks"


def _md(stem):
    cells = json.loads((NB / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _table():
    md = _md("00_start_here")
    head = next(i for i, s in enumerate(md) if s.startswith("## Why is my multi-GPU job slow?"))
    text = "\n".join(md[head:head + 2])
    rows = [r for r in text.splitlines() if r.startswith("| ") and not r.startswith("| what")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows]


def test_every_symptom_has_a_row():
    seen = " ".join(r[0] for r in _table()).lower()
    for symptom in ("low gpu utilisation", "step time grows with the gpu count",
                    "slow first token", "slow host-to-device copies",
                    "fast inside a node, slow across nodes", "one slow rank"):
        assert symptom in seen, symptom


def test_every_row_points_to_sections_that_exist():
    headings = {}
    for path in NB.glob("*.ipynb"):
        text = "\n".join(_md(path.stem))
        headings[path.name] = " ".join(re.findall(r"(?m)^#{2,3} (.+)$", text)).lower()
    rows = _table()
    assert len(rows) >= 6
    for symptom, cause, read in rows:
        assert cause and read, symptom
        refs = re.findall(r"\]\(([\w.]+\.ipynb)\)((?:, \*[^*]+\*(?: and \*[^*]+\*)?)?)", read)
        assert refs, (symptom, read)
        for target, sections in refs:
            assert target in headings, target
            for section in re.findall(r"\*([^*]+)\*", sections):
                assert section.lower() in headings[target], (symptom, target, section)
