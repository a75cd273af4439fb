"""The terms a learner meets in the chapters are in the glossary, and the first
time each appears in the course it comes with a link to the glossary (chapter
11, ``#Glossary``) beside its definition.

Reading order is chapters 0 to 11; the optional notebook ``your_cluster.ipynb``
is read on its own as well (a learner may arrive there from chapter 7 only), so
a term's first use there needs its link too.
"""

import json
import pathlib
import re

import pytest

import course_lib as cl

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LINK = "(11_rumours_and_interviews.ipynb#Glossary)"
#: characters either side of a first use within which the glossary link must sit
WINDOW = 300

#: (term, how it is spelled in the chapters, what the glossary's English entry contains)
TERMS = [
    ("NVLS", r"\bNVLS\b(?!-tree)", "NVLS (NVLink SHARP)"),
    ("NVLS-tree", r"\bNVLS-tree\b", "NVLS-tree"),
    ("CollNet", r"\bCollNet\b", "CollNet"),
    ("SHARP", r"\bSHARP\b", "SHARP (Scalable Hierarchical Aggregation and Reduction Protocol)"),
    ("LL", r"\bLL\b", "LL / LL128 / Simple"),
    ("LL128", r"\bLL128\b", "LL / LL128 / Simple"),
    ("Simple (protocol)", r"\bLL128, Simple\b|\bSimple protocol\b|\bSimple\*\*", "LL / LL128 / Simple"),
    ("PIX", r"\bPIX\b", "PIX / PXB / PHB / NODE / SYS"),
    ("PXB", r"\bPXB\b", "PIX / PXB / PHB / NODE / SYS"),
    ("PHB", r"\bPHB\b", "PIX / PXB / PHB / NODE / SYS"),
    ("NODE", r"`NODE`|\bNODE\b", "PIX / PXB / PHB / NODE / SYS"),
    ("SYS", r"`SYS`|\bSYS\b", "PIX / PXB / PHB / NODE / SYS"),
    ("busbw", r"\bbusbw\b", "busbw (bus bandwidth)"),
    ("algbw", r"\balgbw\b", "algbw (algorithm bandwidth)"),
    ("EFA", r"\bEFA\b", "EFA (Elastic Fabric Adapter)"),
    ("SRD", r"\bSRD\b", "SRD (Scalable Reliable Datagram)"),
    ("TCPX", r"TCPX", "GPUDirect-TCPX / TCPXO"),
    ("fat tree", r"\bfat[- ]tree", "fat tree"),
    ("RoCE", r"\bRoCE", "RoCE (RDMA over Converged Ethernet)"),
    ("GPUDirect RDMA", r"GPUDirect RDMA", "GPUDirect RDMA"),
]


def _markdown(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [("".join(c["source"]), i) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def _first_use(paths, pattern):
    """(notebook name, cell index, text, match) of the first use, or None."""
    for path in paths:
        for text, i in _markdown(path):
            m = re.search(pattern, text)
            if m:
                return path.name, i, text, m
    return None


CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
OPTIONAL = [NOTEBOOKS / "your_cluster.ipynb"]


@pytest.mark.parametrize("term, pattern, entry", TERMS, ids=[t[0] for t in TERMS])
def test_term_is_in_the_glossary(term, pattern, entry):
    rows = [(en, meaning) for _zh, en, meaning, _ch in cl.content.glossary()]
    hits = [meaning for en, meaning in rows if entry in en]
    assert hits, f"{term}: no glossary entry containing {entry!r}"
    assert all(len(m.split()) >= 5 for m in hits), f"{term}: the glossary's meaning is a stub"


@pytest.mark.parametrize("reader", ["chapters", "your_cluster"])
@pytest.mark.parametrize("term, pattern, entry", TERMS, ids=[t[0] for t in TERMS])
def test_first_use_links_the_glossary(term, pattern, entry, reader):
    paths = CHAPTERS + OPTIONAL if reader == "chapters" else OPTIONAL
    found = _first_use(paths, pattern)
    if found is None:
        assert reader == "your_cluster", f"{term} is never used in the chapters"
        return                                   # the optional notebook does not use it
    name, i, text, m = found
    near = text[max(0, m.start() - WINDOW):m.end() + WINDOW]
    assert LINK in near, (f"{term}: its first use ({name}, cell {i}) has no glossary link "
                          f"within {WINDOW} characters: ...{text[max(0, m.start() - 80):m.end() + 80]}...")


def test_the_glossary_link_has_its_anchor():
    """Chapter 11's glossary section is headed exactly "Glossary", the anchor every link names."""
    md = [t for t, _ in _markdown(NOTEBOOKS / "11_rumours_and_interviews.ipynb")]
    assert any(t.startswith("## Glossary\n") for t in md)
    code = json.loads((NOTEBOOKS / "11_rumours_and_interviews.ipynb").read_text())["cells"]
    assert any("cl.content.GLOSSARY" in "".join(c["source"]) for c in code)
