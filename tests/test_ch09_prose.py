"""Chapter 9's numbers in prose agree with the models that print them."""

import json
import pathlib
import re

import numpy as np
import pytest

import course_lib as cl
from course_lib.apps import prose
from course_lib.explorers import ch09_scaling

T, GRAD = 0.8, 14e9


@pytest.fixture(scope="module")
def md(notebook_text):
    # line breaks and the value markers do not matter to a phrase
    text = prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", notebook_text("09_how_big")))
    return " ".join(text.split())


def _cluster(n, **kw):
    if n <= 8:
        return cl.cluster("H100", gpus_per_node=n)
    return cl.cluster("H100", nodes=n // 8, nic="NDR", **kw)


def test_rule_is_derived_not_dismissed(md):
    assert "wrong growth law" not in md and "pessimistic rough rule" not in md
    assert "exact for strong scaling" in md
    b = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    assert "cap any number of GPUs at a speed-up of 20" in md
    assert cl.comm_speedup(10**9, 0.05 * T, T) == pytest.approx(20, rel=1e-6)
    assert "step at about 13" in md and round(T / (2 * GRAD / b)) == 13


def test_predictor_strong_and_weak_at_1024(md):
    p = cl.predict_collective("allreduce", GRAD, _cluster(1024))
    strong = T / cl.iteration_time_s(T / 1024, p.time_s, overlap=False)
    weak = 1024 * T / cl.iteration_time_s(T, p.time_s, overlap=False)
    rule = cl.comm_speedup(1024, 2 * GRAD / cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s, T)
    assert "it gives 9.7 against 12.7" in md
    assert round(strong, 1) == 9.7 and round(rule, 1) == 12.7 and strong < rule
    assert "still gives over 900" in md and weak > 900
    assert "About 929× (91 % efficiency)" in md and round(weak) == 929
    assert round(weak / 1024, 2) == 0.91
    assert "to about 82 ms" in md and round(p.time_s * 1e3) == 82


def test_explorer_answers(md):
    e = ch09_scaling.explorer()
    full = e.update(regime="strong", overlap=1.0)
    speedup = full["model_speedup"]
    # one overlap model (issue 20): the backward pass hides, the forward pass never does
    assert "strong scaling peaks at 16 GPUs (about 14" not in md
    assert list(full["n_gpus"])[4] == 16 and max(speedup) == speedup[4]
    assert f"between {min(speedup[4:]):.1f} and {max(speedup[4:]):.1f}" in md
    weak_full = e.update(regime="weak", overlap=1.0)
    assert "Weak scaling becomes linear in this model" in md
    assert np.allclose(weak_full["model_speedup"], weak_full["n_gpus"])
    none = e.update(regime="strong", overlap=0.0)
    s, rule = none["model_speedup"], none["seeds_speedup"]
    # the rule's B is a ring's busbw: below the NVLS model at 8, above it only near 1,024
    assert "the rule (4.8) sits a little below the model (5.3)" in md
    assert (round(rule[3], 1), round(s[3], 1)) == (4.8, 5.3)
    assert "At 1,024 GPUs: 9.7 against 10.3" in md and (round(s[-1], 1), round(rule[-1], 1)) == (9.7, 10.3)
    assert s[4] > rule[4] and s[-1] < rule[-1]
    one = e.update(regime="weak", overlap=0.0, nics_per_node=1)
    assert "about 57 % efficiency at 1,024 GPUs" in md
    assert round(one["efficiency_model"][-1], 2) == 0.57
    strong_one = e.update(regime="strong", nics_per_node=1)["model_speedup"]
    assert "from about 5 at 8 GPUs to about 2 at 16 and under 1.5 beyond" in md
    assert round(strong_one[3]) == 5 and round(strong_one[4]) == 2 and max(strong_one[5:]) < 1.5


def test_exercise_answers(md):
    assert "2. At most 26 GPUs" in md and cl.max_gpus_at_efficiency(1.0, 0.01, 0.8) == 26
    c = _cluster(1024, nics_per_node=1)
    f = lambda p: cl.predict_collective("allreduce", cl.gradient_bytes(p), c).time_s  # noqa: E731
    assert "about 9.4 billion parameters" in md
    assert f(9.3e9) < T < f(9.5e9)
    assert "takes about 0.59 s there" in md and round(f(7e9), 2) == 0.59


def test_seed_efficiency_claim_and_aggregate(md):
    eff = {}
    for name, c in [("nv", cl.cluster("H100")), ("pcie", cl.cluster("H100", fabric="pcie"))]:
        t = cl.predict_collective("allreduce", GRAD, c).time_s
        eff[name] = T / (T + t)
    assert "about 94 % with NVLink (a speed-up of 7.5)" in md
    assert round(eff["nv"], 2) == 0.94 and round(8 * eff["nv"], 1) == 7.5
    assert "about 61 % over PCIe (4.8)" in md
    assert round(eff["pcie"], 2) == 0.61 and round(8 * eff["pcie"], 1) == 4.8
    h = cl.gpu("H100")
    assert 4 * h.nvlink_bw_bidir_bytes_per_s == pytest.approx(3.6e12)
    assert "450 GB/s per direction" in md and h.nvlink_bw_per_dir_bytes_per_s == 450e9


def test_five_percent_is_ours_and_mtotal_is_the_scale_of_total_traffic(md):
    """Issue 20: the NVLink article gives 0.8 s, not the 5 %; a ring's total traffic is 2(N-1)S."""
    text = " ".join(md.split())
    assert "the article gives the 0.8 s, not the 5 %" in text
    assert "communication 5 % of that" not in text
    assert "$M_{total}$ is a memory count" not in text
    n = 1024
    assert n * cl.ring_allreduce_bytes_per_rank(GRAD, n) == pytest.approx(2 * (n - 1) * GRAD)
    assert "all wires together carry $2(N-1)S$" in text


# ---------------------------------------------------------------------------
# teaching pass 4 (issue 30): the rule's gap past the node is the rate, not the road
# ---------------------------------------------------------------------------
def _strong(n):
    p = cl.predict_collective("allreduce", GRAD, _cluster(n))
    return T / cl.iteration_time_s(T / n, p.time_s, overlap=False), p


def test_the_rules_gap_is_the_spec_rate_not_a_narrower_road(md):
    """With 8 NDR ports a node the ring's busbw past the node stays at the one-node ring's
    rate; most of the 12.7 -> 9.7 gap at 1,024 GPUs is spec 450 GB/s against the ~363 GB/s
    NCCL's ring reaches, visible at 2 GPUs. The text said B 'drops to the NICs'' and that the
    rule is optimistic 'because the road narrows'."""
    b_spec = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    b_ring = cl.predict_collective("allreduce", GRAD, _cluster(8), algorithm="ring").busbw_bytes_per_s
    for n in (32, 64, 128, 256):
        assert _strong(n)[1].busbw_bytes_per_s >= b_ring          # the road does not narrow
    model, _ = _strong(1024)
    rule_spec = cl.comm_speedup(1024, 2 * GRAD / b_spec, T)
    rule_ring = cl.comm_speedup(1024, 2 * GRAD / b_ring, T)
    assert rule_spec - rule_ring > 3 * (rule_ring - model) > 0     # most of the gap is the rate
    assert _strong(2)[0] < cl.comm_speedup(2, 2 * GRAD / b_spec, T)  # already at 2 GPUs
    assert "drops to the NICs' (chapter 6)" not in md
    assert "because the road narrows and the latency steps add up" not in md
    assert "the ring's bus bandwidth does *not* narrow" in md
    assert (f"the rule gives {rule_ring:.1f} at 1,024 GPUs" in md
            and f"{cl.format_bandwidth(b_ring)} reached instead of {cl.format_bandwidth(b_spec)}" in md)


def test_the_quiz_names_the_rate_as_the_main_cause():
    (q,) = [q for q in cl.content.chapter_quiz(9) if "What causes most of the gap" in q.prompt]
    (answer,) = q.answer
    assert "not the spec sheet's" in q.options[answer]
    narrows = next(i for i, o in enumerate(q.options) if "narrows" in o)
    assert narrows != answer and "does not narrow" in q.why_wrong[narrows]
    ch11 = next(q for q in cl.content.chapter_quiz(11) if "T_comm / T_compute" in q.prompt)
    assert "Latency and slower links past the node make it worse" not in ch11.explanation
    assert "spec rate" in ch11.explanation


def test_one_rate_per_argument_named(md):
    """The prose argued with 450 GB/s and the explorer with 363 GB/s and they disagreed about
    which side of the rule the model lies; now each comparison names its rate."""
    d = ch09_scaling.explorer().update(regime="strong")
    b_ring = d["busbw_node_bytes_per_s"]
    assert cl.format_bandwidth(b_ring) in ch09_scaling.readout(d)
    assert "not the spec sheet's NVLink rate" in ch09_scaling.readout(d)
    assert "**Against the spec-sheet rule** the model is below wherever a ring or a tree runs" in md
    assert "**Against the rule at NCCL's ring rate** the two stay close" in md
    b_spec = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    above = []
    for n in (2, 4, 8, 16, 32, 64, 256, 1024):
        s, p = _strong(n)
        if s > cl.comm_speedup(n, 2 * GRAD / b_spec, T):
            above.append(n)
            assert p.algorithm == "nvls", n   # a ring or a tree stays below the spec rule
    assert above == [8, 16]
    assert "only at 8 and 16 GPUs, where NVLS adds inside the switch" in md
    # the explorer's readout blames the road only when there are fewer NICs than GPUs
    assert "road narrows" not in ch09_scaling.readout(d)


def test_pcie_only_server_names_its_sockets(md):
    """'61 % over PCIe' assumed all eight GPUs behind one CPU socket; split over two, the ring
    crosses the socket link and the AllReduce takes about 1.1 s."""
    one = cl.predict_collective("allreduce", GRAD, cl.cluster("H100", fabric="pcie")).time_s
    two = cl.predict_collective("allreduce", GRAD, cl.cluster(
        "H100", fabric="pcie", sockets=2, cpu="intel-spr")).time_s
    assert round(two, 1) == 1.1 and two > 2 * one
    assert "with all eight GPUs behind one CPU socket" in md
    assert f"the PCIe AllReduce takes {two:.1f} s instead of {one:.2f} s" in md
    e2 = T / (T + two)
    assert f"efficiency falls to {e2:.0%}".replace("%", " %") in md and f"({8 * e2:.1f})" in md


def test_full_overlap_strong_scaling_is_described_as_the_model_draws_it(md):
    """Answer 4: with full overlap the strong-scaling speed-up from 16 GPUs on wanders
    (it dips, climbs again and ends below where it was at 16), it does not 'peak at 16 and
    sink back towards 10'; and weak scaling is linear only in the model."""
    from course_lib.scaling import scaling_curves
    full = scaling_curves("strong", 0.8, 7e9, "NDR", 8, 1.0)["model_speedup"][4:]
    assert f"wanders between {min(full):.1f} and {max(full):.1f} ({full[-1]:.1f} at 1,024)" in md
    assert "peaks at 16" not in md and "exactly linear" not in md


# ---------------------------------------------------------------------------
# chapter 9: every glossary term the chapter claims is taught in it
# ---------------------------------------------------------------------------
def test_ch09_teaches_its_glossary_terms(notebook_text):
    """The glossary sent learners to chapter 9 for 'gradient compression', which the
    chapter never mentioned."""
    from course_lib.apps import prose
    md = prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", notebook_text("09_how_big")))
    md = " ".join(md.split()).lower()
    flat = md.replace("-", " ")
    terms = [en for zh, en, meaning, ch in cl.content.GLOSSARY if ch == 9]
    assert "gradient compression" in terms
    for en in terms:
        head = en.split(" (")[0].lower().replace("-", " ").replace(" training", "")
        assert head in flat, f"chapter 9's glossary term {en!r} is not in chapter 9"
    # the one number: 8-bit values are half of BF16's bytes
    assert "8-bit values halve bf16's bytes" in md
    assert cl.gradient_bytes(7e9, bytes_per_element=1) * 2 == cl.gradient_bytes(7e9)


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


def test_mixed_precision_is_not_said_to_halve_the_bytes(md):
    """Final reader: standard AMP (autocast) all-reduces FP32 gradients; only 16-bit gradients
    on the wire halve the traffic -- as chapter 11's quiz says.  The takeaway and the glossary
    said 'mixed precision halves the traffic'."""
    from course_lib import content
    assert "(mixed precision) halves the traffic" not in md
    assert "mixed precision with autocast alone keeps" in md
    (entry,) = [g for g in content.GLOSSARY if "mixed-precision training" in g]
    assert any("autocast alone keeps FP32 gradients" in str(f) for f in entry)
