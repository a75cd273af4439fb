"""Chapter 2's prose agrees with the models and the catalog (issue 30): every
number of its Markdown and quiz is bound to course_lib/values/ch02.py or cited
as the source articles' claim it corrects."""

import json
import re
from pathlib import Path

import pytest

import course_lib as cl
from course_lib import content
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


# --- chapter 2: NVSwitch came with the V100 --------------------------------------
def test_chapter2_does_not_say_the_v100_generation_had_no_interchange(notebook_text):
    """'Two generations back there was no interchange' (V100): the V100's DGX-2
    already had NVSwitch (12 of them, 16 GPUs)."""
    md = notebook_text("02_maglev_line", "markdown")
    assert "Two generations back there was no interchange" not in md
    dgx2, dgx1 = cl.hardware.system("DGX-2"), cl.hardware.system("DGX-1")
    assert dgx2.gpu == dgx1.gpu == "V100" and dgx2.nvswitches > 0 == dgx1.nvswitches
    assert f"{dgx2.n_gpus}-GPU DGX-2" in md


# --- chapters 2 and 3: terms defined where they are first used ---------------------
def test_chapter2_defines_nccl_and_names_the_sm_numbers_it_prints(notebook_text):
    md = notebook_text("02_maglev_line", "markdown")
    first = md.index("NCCL")
    assert "collective communication library" in md[first:first + 200]
    said = dict(re.findall(r"SM(\d+) (?:is )?the (\w+)", md))
    assert set(said) == {str(k) for k in cl.NCCL_LINK_BW}
    for sm, name in said.items():
        assert cl.gpu(name).sm_arch == int(sm)


ROOT = Path(__file__).resolve().parents[1]


# --- quizzes: PCIe peer-to-peer is not "through host memory" by necessity -----------
def test_ch2_quiz_does_not_claim_only_nvlink_avoids_host_memory():
    q = content.chapter_quiz(2)[2]
    for k in q.answer:
        assert "host memory" not in q.options[k]
    wrong = [k for k, o in enumerate(q.options) if "host memory" in o]
    assert wrong and all("switch" in q.why_wrong[k] for k in wrong)


# --- the notebooks of chapters 0-6 --------------------------------------------------
def _notebook_text(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def test_seed_slips_in_chapters_2_and_4_are_corrected():
    t2 = _notebook_text("02_maglev_line.ipynb")
    rec = cl.nvlink_generation(4)
    literal = rec.lanes_per_link_per_dir * rec.lane_rate_gbit_per_s * rec.links * 2
    assert literal == 7200 and "7,200" in t2
    assert literal / 8 == cl.gpu("H100").nvlink_bw_bidir_bytes_per_s / 1e9
    t4 = _notebook_text("04_freight_fleet.ipynb")
    assert "pinning is paid once" in t4
    assert round(2**30 / 1e9, 3) == 1.074 and "1.074 s" in t4
