"""Chapter 2's prose agrees with the models and the catalog (issue 30): every
number of its Markdown and quiz is bound to course_lib/values/ch02.py or cited
as the source articles' claim it corrects."""

import pytest

import course_lib as cl
from course_lib.apps import prose


@pytest.fixture(scope="module")
def md(notebook_text):
    return " ".join(notebook_text("02_maglev_line", "markdown").split())


def test_the_articles_formula_taken_literally_is_computed(md):
    rec = cl.nvlink_generation(4)
    gbit = rec.lanes_per_link_per_dir * rec.lane_rate_gbit_per_s * rec.links * 2
    assert (f"{rec.lanes_per_link_per_dir} × {rec.lane_rate_gbit_per_s:g} × {rec.links} × 2 is "
            f"{gbit:,.0f} \"GB/s\"") in md
    assert gbit / 8 == cl.gpu("H100").nvlink_bw_bidir_bytes_per_s / 1e9     # eight times


def test_every_number_is_bound_or_cited_in_the_chapter_and_its_quiz():
    assert prose.scan_notebook(prose.REPO / "notebooks" / "02_maglev_line.ipynb") == []
    assert prose.scan_quiz_bank()["ch02"] == []
