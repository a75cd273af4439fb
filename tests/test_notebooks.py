"""Every notebook in notebooks/: committed with outputs stripped, built to the
chapter rhythm, and executing without an error in a fresh ``python3`` kernel.

Parametrised over ``notebooks/*.ipynb``, so chapters added later are checked
automatically; an optional notebook (``OPTIONAL_FILES``) is held to the same rhythm,
less the quiz.  The execution test runs each notebook with nbclient
(``MPLBACKEND=Agg``, the repository on ``PYTHONPATH``, quick labs) and a
per-notebook timeout; run time and peak memory are measured by
``benchmarks/bench_notebooks.py``, not here.
"""

import json
import os
import pathlib
import re
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
NB_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(p for p in NB_DIR.glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
#: the course's chapter files (chapters.md); links must point at these names
CHAPTER_FILES = {
    "00_start_here.ipynb", "01_city_at_night.ipynb", "02_maglev_line.ipynb",
    "03_arterial_roads.ipynb", "04_freight_fleet.ipynb", "05_high_speed_rail.ipynb",
    "06_road_map.ipynb", "07_sharing_the_load.ipynb", "08_traffic_lights.ipynb",
    "09_how_big.ipynb", "10_city_at_work.ipynb", "11_rumours_and_interviews.ipynb",
}
#: optional notebooks beside the chapters (not numbered): built like a chapter, with
#: explorers but no quiz of their own; the start page and the chapter they extend link them
OPTIONAL_FILES = {"your_cluster.ipynb": "07_sharing_the_load.ipynb"}
TIMEOUT_S = 180


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def sources(nb, kind=None):
    return ["".join(c["source"]) for c in nb["cells"] if kind is None or c["cell_type"] == kind]


def chapter_number(path):
    """The chapter's number, or None for an optional notebook."""
    return None if path.name in OPTIONAL_FILES else int(path.name[:2])


def test_notebooks_exist():
    names = {p.name for p in NOTEBOOKS}
    for n in ["00_start_here.ipynb", "01_city_at_night.ipynb", "02_maglev_line.ipynb",
              "03_arterial_roads.ipynb", "04_freight_fleet.ipynb",
              "05_high_speed_rail.ipynb", "06_road_map.ipynb"]:
        assert n in names
    known = CHAPTER_FILES | set(OPTIONAL_FILES)
    assert names <= known, f"unexpected notebook names: {names - known}"
    assert set(OPTIONAL_FILES) <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_outputs_stripped_and_kernel(path):
    nb = load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {i} has outputs: strip them"
            assert cell.get("execution_count") is None, f"cell {i} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_chapter_structure(path):
    nb = load(path)
    md = "\n".join(sources(nb, "markdown"))
    code = "\n".join(sources(nb, "code"))
    assert md.lstrip().startswith("# "), "a notebook opens with its title"
    assert re.search(r"learning objectives", md, re.I), "learning objectives missing"
    assert re.search(r"^> \*\*Takeaway\.\*\*", md, re.M), "no '> **Takeaway.**' box"
    assert re.search(r"^## Summary", md, re.M), "no '## Summary'"
    assert re.search(r"^## Exercises", md, re.M), "no '## Exercises'"
    assert "import course_lib as cl" in code
    number = chapter_number(path)
    if number is None or number >= 1:
        assert re.search(r"explorers\.\w+\.\w+\([^)]*\)\.show\(\)", code), "no explorer shown"
    if number is not None and number >= 1:
        assert re.search(r"quiz\.show\(", code), "no quiz"
    for target in re.findall(r"\]\(([^)#]+\.ipynb)", md):
        assert target in CHAPTER_FILES | set(OPTIONAL_FILES), f"link to unknown notebook {target}"


def test_start_page_maps_every_chapter_and_runs_the_doctor():
    nb = load(NB_DIR / "00_start_here.ipynb")
    md = "\n".join(sources(nb, "markdown"))
    for name in (CHAPTER_FILES | set(OPTIONAL_FILES)) - {"00_start_here.ipynb"}:
        assert f"]({name})" in md, f"start page does not link {name}"
    for name, chapter in OPTIONAL_FILES.items():
        text = "\n".join(sources(load(NB_DIR / chapter), "markdown"))
        assert f"]({name})" in text, f"{chapter} does not link its optional {name}"
    code = "\n".join(sources(nb, "code"))
    assert "doctor" in code and "ImportError" in code


def test_no_error_cells_are_committed():
    # a committed notebook with an error output would show a traceback to learners
    for path in NOTEBOOKS:
        for cell in load(path)["cells"]:
            for out in cell.get("outputs", []):
                assert out.get("output_type") != "error", path.name


@pytest.fixture(scope="module")
def kernel_env():
    env = {"MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "PATH": os.pathsep.join([str(pathlib.Path(sys.executable).parent),
                                    os.environ.get("PATH", "")])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield env
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes(path, kernel_env):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NB_DIR)}})
    client.execute()            # raises CellExecutionError on the first failing cell
    errors, widgets = [], 0
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                errors.append(f"cell {i}: {out.ename}: {out.evalue}")
            if out.output_type == "stream" and out.name == "stderr" and \
                    "Traceback" in out.text:
                errors.append(f"cell {i}: traceback on stderr")
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:
                widgets += 1
    assert not errors, "\n".join(errors)
    number = chapter_number(path)
    if number is None or number >= 1:
        assert widgets >= 2, "an explorer and a quiz (or two explorers) should display widgets"


# --- the notebooks of chapters 0-6 --------------------------------------------------
def _notebook_text(name):
    nb = json.loads((REPO / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"])


NOTEBOOKS_TEACHING = sorted(p.name for p in (REPO / "notebooks").glob("0[0-6]_*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOKS_TEACHING)
def test_chapter_has_folded_answers_and_no_private_paths(name):
    text = _notebook_text(name)
    assert "../shared" not in text
    if name.startswith("00_"):
        assert "catalog_table()" not in text        # the 90-row dump is behind a link
        return
    exercises = text[text.index("## Exercises"):]
    assert "<details>" in exercises and "</details>" in exercises
