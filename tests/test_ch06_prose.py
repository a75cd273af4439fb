"""Chapter 6's claims agree with the topology model (course_lib.topology) and the catalog."""

import re

import pytest

import course_lib as cl

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
