"""The course's two source articles are named as a learner can follow them
("the NVLink article", "the heterogeneous-communication article"), explained once
in chapter 0, and never called "seeds" in what a learner reads: the notebooks,
the glossary, the docs and the scenario reports chapter 10 prints."""

import json
import pathlib
import re

import pytest

import course_lib as cl

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SEED = re.compile(r"seed", re.IGNORECASE)
#: code-cell uses of the word that are not prose: a random generator's seed, and a
#: data key another module owns (the catalog's "dma_setup_seed"); chapter 11 selects its
#: quizzes by the article's name (content.source_label), not the bank's "seed 000" key
CODE_ALLOWED = re.compile(r"\bseed=\d+|\"dma_setup_seed\"")
ANCHOR = "00_start_here.ipynb#The-two-source-articles"


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_seed_in_a_notebook(path):
    problems = []
    for i, c in enumerate(_cells(path)):
        for line in "".join(c["source"]).splitlines():
            rest = CODE_ALLOWED.sub("", line) if c["cell_type"] == "code" else line
            if SEED.search(rest):
                problems.append(f"cell {i} ({c['cell_type']}): {line.strip()[:100]}")
    assert not problems, "\n".join(problems)


def test_scanner_catches_the_word():
    assert SEED.search("One seed article says") and SEED.search("the Seeds' rule")
    assert not SEED.search(CODE_ALLOWED.sub("", "t = f(8, jitter=0.1, seed=7)"))
    assert SEED.search(CODE_ALLOWED.sub("", 'print("the seed\'s demo")'))


def test_no_seed_in_the_glossary():
    for zh, en, meaning, _ch in cl.content.glossary():
        assert not SEED.search(" ".join((zh, en, meaning))), en


@pytest.mark.parametrize("name", ["README.md", "docs/sources.md", "docs/your_cluster.md",
                                  "docs/grading.md", "docs/instructor_guide.md"])
def test_no_seed_in_the_docs(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    prose = re.sub(r"`[^`\n]*`", "", text)          # identifiers in code spans are data keys
    hits = [line for line in prose.splitlines() if SEED.search(line)]
    assert not hits, hits[:5]


@pytest.mark.parametrize("name", cl.scenarios.scenario_names())
def test_scenario_reports_name_the_article(name):
    r = cl.scenarios.scenario(name)
    text = cl.scenarios.report_markdown(r)
    assert not SEED.search(text), [ln for ln in text.splitlines() if SEED.search(ln)][:3]
    assert r["source"].startswith(("heterogeneous-communication article", "NVLink article"))


def test_chapter_0_explains_the_two_articles_and_every_link_finds_it():
    cells = _cells(ROOT / "notebooks" / "00_start_here.ipynb")
    md = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    note = next(s for s in md if s.startswith("### The two source articles\n"))
    assert "**The heterogeneous-communication article**" in note and "**The NVLink article**" in note
    assert "异构通信" in note and "NVSwitch" in note
    links = 0
    for path in NOTEBOOKS:
        for c in _cells(path):
            text = "".join(c["source"])
            for target in re.findall(r"\]\(([^)]*#The-two-source-articles)\)", text):
                assert target == ANCHOR, (path.name, target)
                links += 1
    assert links >= 8          # the chapters that quote an article point to the note


def test_what_a_learner_reads_names_the_articles_not_the_bank_keys():
    """The bank files each item under its article's key ("seed 000"); a learner reads
    prompts, options, explanations, myths and chapter 11's corrections, where the articles
    are named by their subject (cl.content.source_label)."""
    texts = [t for c in range(1, 12) for q in cl.content.chapter_quiz(c)
             for t in (q.prompt, *q.options, q.explanation, *q.why_wrong.values())]
    texts += [t for m in cl.content.MYTHS for t in (m.claim, m.truth, m.verdict)]
    texts += list(cl.content.QUESTION_FIXES.values())
    assert [t for t in texts if re.search(r"\bseeds?\b", t, re.I)] == []
    labels = [cl.content.source_label(k) for k in cl.content.QUESTION_FIXES]
    labels += [cl.content.source_label(m.source) for m in cl.content.MYTHS]
    assert labels and all(lb.startswith(("the NVLink article", "the heterogeneous-communication article"))
                          for lb in labels), labels
    ch11 = json.loads((ROOT / "notebooks" / "11_rumours_and_interviews.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in ch11["cells"] if c["cell_type"] == "code")
    assert "source_label(k)" in code and "source_label(m.source)" in code


def test_no_seed_in_what_the_drawings_and_explorers_write():
    """Captions, legends and readouts are string literals in course_lib's drawing and
    explorer modules; chapter 6's hop caption once said "as the seeds do"."""
    import ast
    hits = []
    for path in sorted((ROOT / "course_lib").glob("draw/*.py")) + \
            sorted((ROOT / "course_lib").glob("explorers/*.py")) + [ROOT / "course_lib" / "widgets.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr)
                      and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docstrings and re.search(r"\bseeds?\b", node.value, re.I)):
                hits.append(f"{path.name}:{node.lineno}: {node.value[:60]!r}")
    assert hits == [], hits
