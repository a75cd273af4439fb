"""Review 4 (issue 20), second reader of chapters 6-11 and the graded assignments.

Each test recomputes what the corrected text, readout or hidden test states
from the model, catalog or measurement it names, so the old version fails.
"""

import json
import pathlib
import re

import numpy as np
import pytest

import course_lib as cl
from course_lib.explorers import ch07_allreduce, ch09_scaling

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _prose(text: str) -> str:
    """Markdown as one line: value markers and blockquote markers dropped, whitespace collapsed."""
    from course_lib.apps import prose
    text = prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", text))
    return " ".join(re.sub(r"(?m)^>\s?", "", text).split())


def _cell(path: pathlib.Path, cell_id: str) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c.get("id") == cell_id)


def _nb(stem: str) -> pathlib.Path:
    return ROOT / "notebooks" / f"{stem}.ipynb"


# ---------------------------------------------------------------------------
# ring_allreduce, part C: the "one link instead of 18" diagnosis must fire
# ---------------------------------------------------------------------------
def _run_part_c_test(bw_bytes_per_s):
    """The hidden test of part C on an answer computed with ``bw_bytes_per_s``
    as B (everything else right); returns the assertion message or None."""
    source = _cell(ROOT / "solutions" / "ring_allreduce" / "ring_allreduce.ipynb",
                   "part-c-test")
    grad = cl.gradient_bytes(7e9, bytes_per_element=2)
    ns = {"math": __import__("math"), "cl": cl, "grad_bytes": grad,
          "sent_bytes": cl.ring_allreduce_bytes_per_rank(grad, 8),
          "t_nvlink_ideal_s": cl.ring_allreduce_time_s(grad, 8, bw_bytes_per_s),
          "t_nvlink_real_s": cl.ring_allreduce_time_s(
              grad, 8, cl.MEASURED["busbw_allreduce_8xH100_ring"].value),
          "t_pcie_s": cl.ring_allreduce_time_s(grad, 8, cl.pcie_bw_per_dir_bytes_per_s(5)),
          # the learner's own (right) Part A/B functions, which Part C's checks call
          "ring_allreduce_time_s": cl.ring_allreduce_time_s,
          "bytes_sent_per_rank": cl.ring_allreduce_bytes_per_rank}
    try:
        exec(compile(source, "part-c-test", "exec"), ns)
    except AssertionError as e:
        return str(e)
    return None


def test_ring_allreduce_part_c_names_the_one_link_mistake():
    """A student who divides by one NVLink link (25 GB/s) gets a time 18x too
    large; the hidden test compared the ratio with 1/18, so its message never
    fired and the student read only the generic 'should be 0.0544 s'."""
    h100 = cl.gpu("H100")
    one_link = h100.nvlink_per_link_per_dir_bytes_per_s
    assert h100.nvlink_bw_per_dir_bytes_per_s / one_link == pytest.approx(18)
    msg = _run_part_c_test(one_link)
    assert msg is not None and "18x too large" in msg and "one link" in msg
    # the bidirectional trap keeps its own message, and the right answer passes
    assert "bidirectional" in _run_part_c_test(h100.nvlink_bw_bidir_bytes_per_s)
    assert _run_part_c_test(h100.nvlink_bw_per_dir_bytes_per_s) is None


# ---------------------------------------------------------------------------
# chapter 9 explorer: the readout must say where the rule lies above the curve
# ---------------------------------------------------------------------------
def _above_past_node(d):
    return [n for n, r, m in zip(d["n_gpus"], d["seeds_speedup"], d["model_speedup"])
            if n > ch09_scaling.GPUS_PER_NODE and r > m]


def test_ch09_readout_places_the_rule_as_the_curves_do():
    """At the explorer's defaults the seeds' rule lies *below* the predicted
    strong-scaling curve from 16 to 256 GPUs and above it only from 512: the old
    readout said 'past the node it lies above it' whatever the curves showed."""
    e = ch09_scaling.explorer()
    d = e.update(regime="strong")
    above = _above_past_node(d)
    past = [n for n in d["n_gpus"] if n > 8]
    assert above and len(above) < len(past)          # both sides of the curve
    first = min(above)
    assert all(n in above for n in past if n >= first)
    text = ch09_scaling.readout(d)
    assert "past the node it lies above it" not in text
    assert f"from N = {first:,}" in text
    below = max(n for n in past if n < first)
    assert f"up to N = {below:,}" in text
    # where the predicted AllReduce is shorter than the rule's 2S/B, it says so
    t_rule = d["t_rule_s"]
    assert all(t < t_rule for n, t in zip(d["n_gpus"], d["t_comm_s"]) if 8 < n <= below)
    assert cl.format_time(t_rule) in text
    # one NIC a node: the rule lies above at every N past the node, and says so
    one = e.update(regime="strong", nics_per_node=1)
    assert len(_above_past_node(one)) == len(past)
    assert "lies above the predicted curve, where the road narrows" in ch09_scaling.readout(one)


def test_ch09_answer_says_where_the_model_falls_below_the_rule():
    """The notebook's answer said 'only near 1,024 GPUs'; the model already falls
    below the rule at 512, and the algorithms past the node are mostly the ring,
    not 'NCCL's trees'."""
    d = ch09_scaling.explorer().update(regime="strong")
    first = min(_above_past_node(d))
    answer = _prose(_cell(_nb("09_how_big"), "ee8a5803"))
    assert "only near 1,024" not in answer
    assert f"from {first:,} GPUs on" in answer
    grad = cl.gradient_bytes(7e9)
    algos = {n: cl.predict_collective("allreduce", grad,
                                      ch09_scaling._cluster(n, "NDR", 8)).algorithm
             for n in (16, 32, 512, 1024)}
    assert algos == {16: "nvls", 32: "ring", 512: "ring", 1024: "tree"}
    assert "the ring from 32 to 512" in answer and "tree at 1,024" in answer


def test_ch09_boundary_drawing_rates_are_explained():
    """The two-district drawing labels its roads with the predictor's planning
    rates (371 and 48 GB/s per GPU), not the 450 and 50 GB/s the chapter prints
    a few cells later; the text now says which is which."""
    c = cl.cluster("H100", nodes=2, nic="NDR")
    intra = c.intra_bw_bytes_per_s()
    per_gpu_net = c.inter_bw_bytes_per_s() / c.gpus_per_node
    assert intra == pytest.approx(18 * 20.6e9)
    assert intra < cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    assert per_gpu_net < cl.nic("NDR").bw_per_dir_bytes_per_s
    svg = cl.draw.collectives.hierarchical(2, 8, cluster=c).svg
    assert cl.format_bandwidth(intra) in svg and cl.format_bandwidth(per_gpu_net) in svg
    text = _prose(_cell(_nb("09_how_big"), "517647bf"))
    for rate in (intra, per_gpu_net):
        assert cl.format_bandwidth(rate) in text
    assert "spec sheet" in text


# ---------------------------------------------------------------------------
# chapter 7's companion (your_cluster): where the 8xH100 curves cross half their plateau
# ---------------------------------------------------------------------------
def test_ch07_half_plateau_answer_matches_the_explorer():
    """The answer said both curves cross one half between 16 and 32 MiB; the
    model is already above half at 16 MiB (below at 8 MiB), the measurement
    below half at 16 MiB and above at its next dot, 64 MiB."""
    d = ch07_allreduce.explorer().update(collective="allreduce", algorithm="auto",
                                         system="8x H100, NVSwitch (one HGX/DGX H100)",
                                         n_bytes=2.0 ** 30)
    sizes = np.asarray(d["sizes_bytes"])
    model = np.asarray(d["busbw_bytes_per_s"]) / np.max(d["busbw_bytes_per_s"])
    share = dict(zip(sizes, model))
    assert share[8 * cl.MiB] < 0.5 < share[16 * cl.MiB]
    mb = np.asarray(d["measured_bytes"])
    meas = np.asarray(d["measured_busbw_bytes_per_s"]) / np.max(d["measured_busbw_bytes_per_s"])
    mshare = dict(zip(mb, meas))
    assert mshare[16 * cl.MiB] < 0.5 < mshare[64 * cl.MiB]
    answer = _prose(_cell(_nb("your_cluster"), "be1d69e2"))   # chapter 7's companion
    assert "both cross one half between 16 and 32 MiB" not in answer
    assert f"{share[8 * cl.MiB]:.0%} at 8 MiB".replace("%", " %") in answer
    assert f"{mshare[64 * cl.MiB]:.0%} at its next dot, 64 MiB".replace("%", " %") in answer
