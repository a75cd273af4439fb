"""Review pass 4 (second reading), chapters 0-5, the README and the instructor
guide: what the text, the readouts and the drawings state is what the models
and the notebooks give."""

import json
import pathlib
import re

import pytest

import course_lib as cl
from course_lib.explorers import ch05_rdma

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")


def _diagram_texts(diagram) -> str:
    return " ".join(re.sub("<[^>]+>", "", t) for t in
                    re.findall(r"<text[^>]*>(.*?)</text>", diagram.svg, re.S))


# --- chapter 5: GPUDirect RDMA cannot go faster than the GPU's PCIe link ----------
def test_gpudirect_rate_is_capped_by_the_gpus_pcie_link_as_in_the_route_model():
    """The chapter says a port faster than the GPU's PCIe link cannot be filled and the
    route model takes the smaller of the two; the explorer priced GPUDirect RDMA over an
    XDR port at the port's 100 GB/s (1 GiB in 10.7 ms instead of 17 ms)."""
    pcie = cl.pcie_bw_per_dir_bytes_per_s(cl.gpu(ch05_rdma.GPU).pcie_gen)
    xdr = cl.nic("XDR").bw_per_dir_bytes_per_s
    assert xdr > pcie                                     # the case where it matters
    d = ch05_rdma.compute(100.0, "XDR", 2.0 ** 30, "gpudirect_rdma_one_way")
    route = cl.route_parameters("rdma", gpu=ch05_rdma.GPU, nic="XDR", distance_m=100.0)
    assert d["bw_bytes_per_s"] == pytest.approx(min(xdr, pcie))
    assert d["bw_bytes_per_s"] == pytest.approx(route["bw_bytes_per_s"])
    assert d["serialisation_s"] == pytest.approx(2.0 ** 30 / pcie)
    assert d["time_s"] == pytest.approx(cl.route_transfer_time_s(
        2.0 ** 30, "rdma", gpu=ch05_rdma.GPU, nic="XDR", distance_m=100.0))
    # the curve of that end point follows the same rate: slope 1/pcie at the large end
    t = d["times_s"]["gpudirect_rdma_one_way"]
    sizes = d["sizes_bytes"]
    assert (t[-1] - t[-2]) / (sizes[-1] - sizes[-2]) == pytest.approx(1 / pcie)
    text = ch05_rdma.readout(d)
    assert cl.format_bandwidth(pcie) in text and cl.format_bandwidth(xdr) in text
    caption = _diagram_texts(ch05_rdma.diagram(d))
    assert f"size / {cl.format_bandwidth(pcie)}" in caption
    assert cl.format_time(d["time_s"]) in caption


@pytest.mark.parametrize("endpoint", ["rdma_small_one_way", "roce_small_one_way",
                                      "tcp_kernel_path"])
def test_host_memory_end_points_keep_the_port_rate(endpoint):
    """Host memory to host memory the cap does not apply (the catalog models no NIC
    PCIe limit), and with NDR (50 GB/s) not even GPU memory is capped."""
    d = ch05_rdma.compute(100.0, "XDR", 2.0 ** 30, endpoint)
    assert d["bw_bytes_per_s"] == pytest.approx(cl.nic("XDR").bw_per_dir_bytes_per_s)
    d = ch05_rdma.compute(100.0, "NDR", 2.0 ** 30, "gpudirect_rdma_one_way")
    assert d["bw_bytes_per_s"] == pytest.approx(cl.nic("NDR").bw_per_dir_bytes_per_s)
    assert "caps" not in _diagram_texts(ch05_rdma.diagram(d))


# --- chapter 4: exercise 1 with a slider in powers of two ----------------------------
def test_ch04_exercise_1_bracket_matches_the_model(notebook_text):
    """The answer asks for the piece size at which batching 1000 copies saves 10 %
    (about 3.6 MB); the slider moves in powers of two, and the answer's bracket
    (2 MiB about 16 %, 4 MiB about 9 %) must be what the explorer computes."""
    from course_lib.explorers import ch04_batching

    text = notebook_text("04_freight_fleet", "markdown")
    m = re.search(r"2 MiB per copy saves about (\d+) %, 4 MiB about (\d+) %", text)
    assert m, "the answer gives the two slider positions around 3.6 MB"
    for size, stated in ((2 ** 21, int(m.group(1))), (2 ** 22, int(m.group(2)))):
        d = ch04_batching.compute(1000, float(size), "pinned", 5, "pcie_small_copy_sync")
        saving = 1 - d["t_batched_s"] / d["t_separate_s"]
        assert round(100 * saving) == stated
    # and the exact answer lies between them
    b = cl.host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    a = cl.latency_s("pcie_small_copy_sync")
    n = 1000
    # (N-1) a = 0.1 N (a + d/B)  ->  d = B ((N-1) a / (0.1 N) - a)
    d_exact = b * ((n - 1) * a / (0.1 * n) - a)
    assert 2 ** 21 < d_exact < 2 ** 22
    assert d_exact / 1e6 == pytest.approx(3.6, abs=0.05)


# --- the instructor guide --------------------------------------------------------
def test_guide_pageable_ratio_is_the_size_dependent_one():
    """The guide told instructors to stress 'typically 0.2-0.45x of pinned', while
    chapter 4 shows no penalty up to 16 KiB and 0.12x at 1 GiB on the H200."""
    section = GUIDE.split("### 4 — The Freight Fleet")[1].split("###")[0]
    assert "0.2–0.45" not in section
    for size, label in ((cl.MiB, "1 MiB"), (cl.GiB, "1 GiB")):
        m = re.search(r"(\d\.\d+)× (?:of pinned )?at " + label, section)
        assert m, label
        assert float(m.group(1)) == pytest.approx(cl.pageable_over_pinned(size), abs=0.005)
    assert cl.pageable_over_pinned(16 * cl.KiB) == pytest.approx(1.0, abs=0.02)
    assert "16 KiB" in section


def _slide_counts(stem: str) -> tuple[int, int]:
    cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    kinds = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in cells]
    return kinds.count("slide"), kinds.count("subslide")


def test_guide_slide_table_matches_the_notebooks():
    """The table of slides per chapter said 14 / 5 for chapter 7 and 13 / 3 for
    chapter 9; the notebooks' metadata (scripts/slide_metadata.py) give 15 / 5 and 13 / 2."""
    rows = re.findall(r"^\| \d+ [^|]+\| `(\d\d_\w+)\.ipynb`[^|]*\| (\d+) / (\d+) \|$", GUIDE, re.M)
    assert len(rows) == 11                     # chapters 1-11 name their notebook
    m = re.search(r"^\| 0 Start here \|[^|]+\| (\d+) / (\d+) \|$", GUIDE, re.M)
    rows.append(("00_start_here", m.group(1), m.group(2)))
    for stem, slides, subslides in rows:
        assert _slide_counts(stem) == (int(slides), int(subslides)), stem


# --- chapter 0: the GPU extra goes into the course's environment -------------------
def test_gpu_install_command_targets_the_course_venv(notebook_text):
    """Chapter 0 said `pip install -e ".[gpu]"`: a bare pip installs CuPy into whatever
    Python comes first on the PATH, not the `.venv` that `make lab` runs; the README
    says `.venv/bin/pip`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ch00 = notebook_text("00_start_here", "markdown")
    for text in (readme, ch00):
        commands = re.findall(r"`([^`]*pip install -e \"\.\[gpu\]\")`", text)
        assert commands and all(c.startswith(".venv/bin/pip") for c in commands)


# --- chapter 4: what the graded assignment really asks ------------------------------
def test_ch04_describes_the_variants_the_assignment_measures(notebook_text):
    """Chapter 4 sent learners to `pinned_vs_pageable` to 'explain the
    fresh/resident/locked differences'; the assignment measures only the resident and
    the staged copy (and fits the H200's pinned copies)."""
    source = json.loads((ROOT / "solutions" / "pinned_vs_pageable" / "pinned_vs_pageable.ipynb")
                        .read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    m = re.search(r'run_lab\("pageable".*?variants=\(([^)]*)\)', code, re.S)
    measured = set(re.findall(r'"([\w-]+)"', m.group(1)))
    assert measured == {"resident", "staged"}
    text = notebook_text("04_freight_fleet", "markdown")
    bullet = text.split("Graded: **`exercises/pinned_vs_pageable`**")[1].split("\n1.")[0]
    named = {v for v in ("fresh", "resident", "locked", "staged", "pin-fresh") if v in bullet}
    assert named == measured
    assert "H200" in bullet                       # part F: the shipped GPU run


# --- quiz explanations that state a hardware fact ----------------------------------
def _why_wrong(chapter: int, prompt_start: str, option: int) -> str:
    q = next(q for q in cl.content.chapter_quiz(chapter) if q.prompt.startswith(prompt_start))
    return q.why_wrong[option]


def test_ch01_quiz_staged_beats_one_link_only_where_the_model_says_so():
    """'A PCIe route through the host has more bandwidth than a single NVLink link' holds
    for an H100 (31.5 vs 25 GB/s delivered) but not for an A100 (15.8 vs 25) or a V100:
    the explanation must name the GPU it is true for."""
    def staged_over_one_link(gpu):
        staged = cl.route_parameters("p2p-staged", gpu=gpu)
        link = cl.route_parameters("p2p-nvlink", gpu=gpu, nvlink_links=1)
        return (staged["bw_bytes_per_s"] / staged["legs"]) / link["bw_bytes_per_s"]
    assert staged_over_one_link("H100") > 1 > staged_over_one_link("A100")
    text = _why_wrong(1, "The city's planners", 3)
    assert "H100" in text and "start-up" in text


def test_ch05_quiz_nvlink_domain_is_not_always_one_server():
    """The catalog holds a 72-GPU NVLink domain (GB200 NVL72, 18 trays); 'NVLink connects
    GPUs inside one [server]' was wrong for it."""
    nvl72 = cl.hardware.system("GB200 NVL72")
    assert nvl72.n_gpus > 8
    text = _why_wrong(5, "What is the key architectural idea", 3)
    assert "NVLink domain" in text and "NVL72" in text
