"""Chapter 6's claims agree with the topology model (course_lib.topology) and the catalog."""

import itertools
import json
import re
from pathlib import Path

import pytest

import course_lib as cl
from course_lib import explorers, topology

N = 8


@pytest.fixture(scope="module")
def md(notebook_text):
    return notebook_text("06_road_map", "markdown")


@pytest.fixture(scope="module")
def code(notebook_text):
    return notebook_text("06_road_map", "code")


def _paragraph(md, start):
    i = md.index(start)
    return md[i:md.find("\n\n", i)]


def test_the_switch_is_compared_at_one_port_budget_not_by_bundles(md, code):
    """Issue 30: "a non-blocking switch gives every GPU its full bandwidth ... with N
    cables" counted the switch box's 8 bundles; a DGX H100 runs 8 x 18 = 144 NVLinks into
    4 NVSwitch chips.  At the same budget (each H100's 18 ports) the ring crosses its middle
    at 2 x 9 links, the mesh (2 links a pair) at 4 x 4 x 2, the switch at 4 x 18."""
    assert not re.search(r"with \$?N\$? cables", md)
    h100 = cl.gpu("H100")
    ports, b = h100.nvlink_links, h100.nvlink_per_link_per_dir_bytes_per_s
    ring_bis = 2 * (ports // 2) * b
    mesh_bis = (N // 2) ** 2 * (ports // (N - 1)) * b
    nvs_bis = (N // 2) * ports * b
    budget = cl.equal_port_budget_topologies(N, "H100")
    assert [cl.bisection_bw_bytes_per_s(budget[k]) for k in ("ring", "full mesh", "NVSwitch")] == \
        pytest.approx([ring_bis, mesh_bis, nvs_bis])
    assert {k: cl.gpu_links(t, 0) for k, t in budget.items()} == {
        "ring": ports, "full mesh": (N - 1) * (ports // (N - 1)), "NVSwitch": ports}
    text = _paragraph(md, "At one budget")
    for bw in (ring_bis, mesh_bis, nvs_bis):
        assert cl.format_bandwidth(bw) in text
    # the cables: 144 NVLinks into 4 chips, twice the ring's 72 -- more, not fewer
    assert f"{N * ports} NVLinks" in text
    assert f"{cl.system('DGX H100').nvswitches} NVSwitch chips" in text
    assert f"the ring's {N * (ports // 2)}" in text
    assert "equal_port_budget_topologies" in code
    takeaway = _paragraph(md, "> **Takeaway.** Rings are cheap")
    assert "not with" in takeaway and "fewer" in takeaway


def test_placement_divides_a_shared_nic_among_the_rings_hops(md, code):
    """Issue 30: the placement model ignored links that several hops share.  [0, 4, 1, 5]
    on two nodes with one NIC each: all four hops cross, two leave and two enter each NIC,
    each gets half the port -- the prose says what the model computes."""
    port = cl.nic("NDR").bw_per_dir_bytes_per_s
    nvlink = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    one_nic = cl.two_level_topology(2, 4, nics_per_node=1)
    assert cl.ring_bottleneck_bw_bytes_per_s(one_nic, [0, 4, 1, 5]) == pytest.approx(port / 2)
    assert "nics_per_node=1" in code and "ring_link_flows" in code
    text = _paragraph(md, "Same GPUs, same job")
    assert f"{nvlink / port:.2g}× the communication time" in text
    assert cl.format_bandwidth(port / 2) in text
    assert f"{2 * nvlink / port:.2g}×" in text
    assert "2 of\nthem leave each NIC" in text or "2 of them leave each NIC" in text
    # the chapter's advice and its model agree: the story tells learners to count the flows
    assert "count how many flows share the narrowest link" in md
    assert "divided by the hops that cross that link" in md.replace("*", "").replace("\n", " ")


def test_summary_narrowing_is_nvlink_over_the_nic_port(md):
    cluster = cl.two_level_topology(2, 4)
    ratio = (cl.path_bottleneck_bw_bytes_per_s(cluster, 0, 1)
             / cl.path_bottleneck_bw_bytes_per_s(cluster, 0, 4))
    assert ratio == pytest.approx(cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
                                  / cl.nic("NDR").bw_per_dir_bytes_per_s)
    assert f"narrow {ratio:.2g}× at the node boundary" in md


def _prose(text: str) -> str:
    """Markdown as one line, as read: value/cite markers and blockquote markers dropped,
    whitespace collapsed."""
    from course_lib.apps.prose import BOUND, CITED
    text = CITED.sub(r"\2", BOUND.sub(r"\2", text))
    return " ".join(re.sub(r"(?m)^>\s?", "", text).split())


# --- chapter 6: the full-mesh quiz's distractor 16 --------------------------------------
def test_ch06_quiz_explains_the_distractor_16_by_what_has_16():
    """'counts each GPU's cables twice' named nothing that has 16 cables; 16 is a
    ring's 8 cables counted from both ends, or the cube-mesh's 16 linked pairs."""
    q = next(q for q in cl.content.chapter_quiz(6) if "full mesh of 8 GPUs" in q.prompt)
    b = q.options.index("16")
    text = q.why_wrong[b]
    assert "each GPU's cables twice" not in text
    ring, cube = cl.ring_topology(8), cl.hybrid_cube_mesh_topology("V100")
    assert f"ring's {cl.link_count(ring)} cables" in text and 2 * cl.link_count(ring) == 16
    assert f"{cl.link_count(cube)} linked pairs of the DGX-1 cube-mesh" in " ".join(text.split())
    assert cl.link_count(cube) == 16


def test_ch06_corrects_the_seeds_full_mesh_between_servers(notebook_text):
    """Seed 000 calls the InfiniBand between DGX servers a full mesh (全网状)."""
    md = _prose(notebook_text("06_road_map", "markdown"))
    assert '"full mesh", 全网状' in md and "switched network" in md
    # the course's own two-level map: every network cable runs NIC to switch,
    # none server to server
    t = cl.two_level_topology(4, 4)
    kinds = {n: d["kind"] for n, d in t.nodes(data=True)}
    network = [(u, v) for u, v, d in t.edges(data=True) if d["kind"] == "network"]
    assert network and all({kinds[u], kinds[v]} == {"nic", "switch"} for u, v in network)


ROOT = Path(__file__).resolve().parents[1]


# --- chapter 6 ------------------------------------------------------------------
def _exhaustive_bisection(topo):
    ranks = cl.gpus(topo)
    edges = [(u, v, d["bw_bytes_per_s"]) for u, v, d in topo.edges(data=True)]
    best = float("inf")
    for rest in itertools.combinations(ranks[1:], len(ranks) // 2 - 1):
        left = [ranks[0], *rest]
        right = [r for r in ranks if r not in left]
        best = min(best, topology._min_cut(edges, left, right))
    return best


def test_topology_explorer_bisection_for_three_nodes():
    d = explorers.ch06_topology.explorer().update(kind="two-level", n_gpus=6)
    assert d["bisection_bytes_per_s"] == pytest.approx(
        _exhaustive_bisection(cl.two_level_topology(3, 2)))


def test_gpu_hops_between_servers_count_nic_switch_nic():
    t = cl.two_level_topology(2, 4)
    assert cl.hops(t, 0, 1, count="gpu-hops") == 1
    assert cl.hops(t, 0, 4, count="gpu-hops") == 3
    d = explorers.ch06_topology.explorer().update(kind="two-level", n_gpus=8,
                                                   count="gpu-hops")
    assert list(d["hops_from_source"]) == [0, 1, 1, 1, 3, 3, 3, 3]


# --- the notebooks of chapters 0-6 --------------------------------------------------
def _notebook_text(name):
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def test_no_notebook_claims_every_eight_gpu_server_uses_nvswitch():
    text = _notebook_text("06_road_map.ipynb")
    assert not re.search(r"every modern 8-GPU server", text)
    assert "MI300X" in text


def test_chapter6_says_nccl_detects_the_topology_itself():
    text = _notebook_text("06_road_map.ipynb")
    assert "reads it to build its rings" not in text
    assert "NCCL_TOPO_DUMP_FILE" in text
