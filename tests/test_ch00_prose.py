"""Chapter 0's "Why is my multi-GPU job slow?" path: every symptom a learner brings
has a row, and every section a row sends them to exists in the chapter it links."""

import json
import pathlib
import re

import course_lib as cl
from course_lib.apps.prose import shown

ROOT = pathlib.Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks"


def _md(stem):
    """A notebook's Markdown cells as a learner reads them (bound and cited numbers as
    their text: a row names a section by the heading it shows)."""
    cells = json.loads((NB / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return [shown("".join(c["source"])) for c in cells if c["cell_type"] == "markdown"]


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


def _row(symptom):
    return next(r for r in _table() if r[0].lower().startswith(symptom))


def test_first_token_and_decode_have_their_own_causes():
    """Prefill's AllReduces are large (bandwidth); decode's are small (start-ups)."""
    first = _row("slow first token")
    assert "large" in first[1] and "bandwidth" in first[1] and "start-up" not in first[1]
    assert "*5. Tensor-parallel token latency*" in first[2]
    decode = _row("slow tokens after the first (decode)")
    assert "start-ups" in decode[1] and "*1. 70B tensor-parallel inference" in decode[2]


def test_utilisation_row_separates_nccl_kernels_from_host_gaps():
    row = _row("low gpu utilisation")
    assert "NCCL kernel" in row[1] and "host" in row[1]
    assert "the step spends its time moving data, not computing" not in row[1]


def test_growing_step_time_points_at_the_node_boundary_not_amdahl():
    row = _row("step time grows")
    assert "NICs' speed" in row[1]
    assert "*The NVLink-domain boundary*" in row[2] and "Amdahl" not in row[2]


def test_peer_copy_row_reads_the_topology_matrix_right():
    row = _row("gpu-to-gpu copies")
    assert "`NV#`" in row[1] and "peer access not enabled" in row[1]
    assert "different CPU sockets" not in row[1]
    for word in ("PIX", "PXB", "PHB", "NODE", "SYS"):
        assert word in row[1]


def test_bits_versus_bytes_is_a_misreading_not_a_cause_of_slowness():
    assert "bits" not in _row("fast inside a node")[1]
    assert "*What does the kernel path cost?*" in _row("fast inside a node")[2]
    assert "400 Gb/s read as 400 GB/s" in _row("allreduce \"bandwidth\"")[1]


def test_map_says_where_it_simplifies_the_host_side_and_the_chapter_split():
    md = "\n".join(_md("00_start_here"))
    assert "two sockets with four GPUs" in md and "its own NIC" in md
    assert "Chapters 1–6 are" not in md and "Chapters 1–5 are" in md
    assert "chapter 7, with\nits two labs, about an hour" in md


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


# --- the notebooks of chapters 0-6 --------------------------------------------------
def _notebook_text(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def test_chapter0_does_not_undercount_the_catalog():
    text = _notebook_text("00_start_here.ipynb")
    assert "ninety numbers" not in text
    assert len(cl.all_facts()) > 130
    assert "from course_lib.apps import doctor" in text
