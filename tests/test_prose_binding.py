"""Chapter prose bound to the models (course_lib/apps/prose.py, course_lib/values).

Every bound number in a chapter's Markdown must read exactly what its model
gives today (``--check``, as ``make prose`` would rewrite it); the scanner's
count of numbers that are neither bound nor cited may only fall."""

from __future__ import annotations

import json
import shutil

import pytest

from course_lib import values
from course_lib.apps import prose

#: Unbound numbers-with-units per notebook, at most (lower it as prose is bound; target 0).
UNBOUND_BUDGET = {
    "00_start_here.ipynb": 0, "01_city_at_night.ipynb": 0, "02_maglev_line.ipynb": 0,
    "03_arterial_roads.ipynb": 0, "04_freight_fleet.ipynb": 0, "05_high_speed_rail.ipynb": 0,
    "06_road_map.ipynb": 0, "07_sharing_the_load.ipynb": 0, "08_traffic_lights.ipynb": 0,
    "09_how_big.ipynb": 0, "10_city_at_work.ipynb": 0,
    "11_rumours_and_interviews.ipynb": 0, "your_cluster.ipynb": 0,
}


def test_every_bound_number_reads_what_its_model_gives():
    diffs = [d for p in prose.chapter_notebooks() for d in prose.bind_notebook(p)]
    assert not diffs, "\n".join(map(str, diffs)) + "\nrun `make prose` to rewrite them"


@pytest.mark.parametrize("path", prose.chapter_notebooks(), ids=lambda p: p.name)
def test_unbound_numbers_do_not_grow(path):
    found = prose.scan_notebook(path)
    assert len(found) <= UNBOUND_BUDGET[path.name], (
        f"{path.name}: {len(found)} numbers are neither bound to course_lib/values nor cited "
        f"(budget {UNBOUND_BUDGET[path.name]}): {found}")


def _notebook(tmp_path, text, name="03_test.ipynb"):
    nb = {"cells": [{"cell_type": "markdown", "id": "x", "metadata": {}, "source": [text]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / name
    path.write_text(json.dumps(nb, indent=1) + "\n")
    return path


def test_a_stale_bound_number_is_found_and_rewritten(tmp_path):
    pcie5 = values.value("ch03.pcie5")
    path = _notebook(tmp_path, "PCIe Gen5 x16 carries <!--v:pcie5-->64 GB/s<!--/v--> per direction.")
    assert prose.main(["--check", str(path)]) == 1
    (diff,) = prose.bind_notebook(path)
    assert (diff.name, diff.text, diff.value) == ("pcie5", "64 GB/s", pcie5)
    assert prose.main([str(path)]) == 0
    assert prose.main(["--check", str(path)]) == 0
    text = json.loads(path.read_text())["cells"][0]["source"][0]
    assert text == f"PCIe Gen5 x16 carries <!--v:pcie5-->{pcie5}<!--/v--> per direction."


def test_another_chapters_value_binds_by_its_full_name(tmp_path):
    path = _notebook(tmp_path, "PCIe: <!--v:ch03.pcie5-->?<!--/v-->", name="09_test.ipynb")
    (diff,) = prose.bind_notebook(path)
    assert diff.value == values.value("ch03.pcie5")


def test_an_unknown_value_name_is_an_error_that_names_it(tmp_path, capsys):
    path = _notebook(tmp_path, "takes <!--v:no_such_value-->1 ms<!--/v-->")
    assert prose.main(["--check", str(path)]) == 1
    assert "'ch03.no_such_value' is not defined" in capsys.readouterr().err


def test_a_notebook_without_a_chapter_number_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no value namespace"):
        prose.bind_notebook(_notebook(tmp_path, "x", name="notes.ipynb"))


def test_the_scanner_counts_what_is_neither_bound_nor_cited():
    assert prose.unbound_numbers("one ring takes 54.4 ms, about 7× faster at 450 GB/s") == [
        "54.4 ms", "7×", "450 GB/s"]
    assert prose.unbound_numbers("takes <!--v:x-->54.4 ms<!--/v-->") == []
    assert prose.unbound_numbers("says <!--cite:the NVLink article-->600 GB/s<!--/cite-->") == []
    assert prose.unbound_numbers("$T = 10\\,\\mu s$ and `grad_bytes='32MiB'`") == []
    assert prose.unbound_numbers("a 1 GiB buffer, 64 KiB chunks") == []     # sizes picked as inputs
    assert prose.unbound_numbers("a 3 GiB buffer of a 7B model") == ["3 GiB"]


def test_make_prose_is_the_rewrite_step():
    text = (prose.REPO / "Makefile").read_text()
    assert "course_lib.apps.prose" in text


def test_a_marker_at_the_start_of_a_line_is_refused(tmp_path):
    # CommonMark reads a line that starts with "<!--" as an HTML block: the rest of it would lose
    # its Markdown (bold, links, math) in JupyterLab and on the site.
    path = _notebook(tmp_path, "text\n<!--v:pcie5-->63 GB/s<!--/v--> is **the** rate")
    with pytest.raises(ValueError, match="may not start a line"):
        prose.bind_notebook(path)
    with pytest.raises(ValueError, match="may not start a line"):
        prose.bind_notebook(_notebook(tmp_path, "- <!--v:pcie5-->63 GB/s<!--/v--> each way"))


def test_the_quiz_bank_cites_with_a_field_the_learner_never_sees():
    from course_lib import content
    assert content.uncite("says {cite:the NVLink article|600 GB/s} each way") == "says 600 GB/s each way"
    assert prose.unbound_numbers(content.CITE_FIELD.sub(" ", "{cite:x|600 GB/s} vs 450 GB/s")) == [
        "450 GB/s"]
