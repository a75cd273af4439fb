"""Review 3 (issue 20), chapters 8-11: what an independent expert read found.

Each test recomputes a number the text states from the model or the catalog
it names, so a text that drifts from its model (or the old, wrong sentence)
fails here.
"""

import pytest

import course_lib as cl
from course_lib import scenarios
from course_lib.explorers import ch10_scenarios


@pytest.fixture(scope="module")
def ch10(notebook_text):
    from course_lib.apps import prose
    return prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", notebook_text("10_city_at_work")))


def _tp(**kw):
    return scenarios.tp_inference_70b(**kw)


# ---------------------------------------------------------------------------
# chapter 10, scenario 1: the line-rate PCIe ring flatters the baseline
# ---------------------------------------------------------------------------
def test_70b_nccl_gain_is_computed_from_the_predictor():
    """The scenario's NCCL gain is the same step with predict_collective's
    AllReduce times on a PCIe-only and an NVSwitch A100 server."""
    r = _tp()
    msg = r["params"]["batch"] * 8192 * 2
    t = {k: cl.predict_collective("allreduce", msg, cl.cluster("A100", **kw)).time_s
         for k, kw in (("pcie", {"fabric": "pcie"}), ("nvlink", {}))}
    t_comp = r["baseline"]["compute_s"]
    assert r["nccl_gain"] == pytest.approx((t_comp + 160 * t["pcie"]) / (t_comp + 160 * t["nvlink"]),
                                           rel=1e-12)
    # the line-rate model is the optimistic end for PCIe: NCCL's gain is larger
    assert r["nccl_gain"] > r["model_gain"]
    assert any("NCCL's calibrated" in k for k, _ in r["rows"])


def test_70b_prose_states_the_nccl_gain(ch10):
    """Old text: 'No setting reaches 3.2×: the baseline must have been slower than
    PCIe alone explains' -- false with the course's own calibrated predictor."""
    assert "No setting reaches 3.2×: the baseline must" not in ch10
    assert "never passes about 2×; the cost" not in ch10
    assert "about 2.5× at batch 64" in ch10 and round(_tp()["nccl_gain"], 1) == 2.5
    assert "about 3.1× at ten times the batch" in " ".join(ch10.split()) and round(_tp(load=10)["nccl_gain"], 1) == 3.1
    # "At 60 % of peak FLOP/s it reaches 3.22× at five times the batch"
    assert (f"At 60 % of peak FLOP/s it reaches {_tp(load=5, efficiency=0.6)['nccl_gain']:.2f}× "
            "at five times the batch") in " ".join(ch10.split())
    assert _tp(load=5, efficiency=0.6)["nccl_gain"] > 3.2
    assert _tp(load=5, efficiency=0.5)["nccl_gain"] < 3.2       # so 60 % is needed there
    # the explorer answer: "at 90 % from twice it"
    assert "at 90 % from twice the batch" in " ".join(ch10.split())
    assert _tp(load=2, efficiency=0.9)["nccl_gain"] > 3.2 > _tp(load=1, efficiency=0.9)["nccl_gain"]
    # still true of the line-rate model: it never reaches 3.2x
    assert max(_tp(load=x, efficiency=0.9)["model_gain"] for x in (1, 10, 100)) < 3.2


def test_70b_prose_pcie_ring_busbw_a_fifth_of_line_rate(ch10):
    """The PCIe ring's predicted busbw for the 1 MB messages is about a fifth of line rate."""
    p = cl.predict_collective("allreduce", 64 * 8192 * 2, cl.cluster("A100", fabric="pcie"))
    share = p.busbw_bytes_per_s / cl.pcie_bw_per_dir_bytes_per_s(4)
    assert abs(share - 0.2) < 0.03
    assert f"at about {share:.0%} of that for these 1 MB messages".replace("%", " %") in " ".join(ch10.split())


def test_70b_h100_answer_states_the_nccl_gain(ch10):
    assert "gain at batch 64 is about 3.1×" in " ".join(ch10.split())
    assert round(_tp(gpu_name="H100")["nccl_gain"], 1) == 3.1


def test_ch10_explorer_readout_shows_both_gains():
    d = ch10_scenarios.explorer().update(scenario="tp_inference_70b", load=5.0, efficiency=0.6)
    text = ch10_scenarios.readout(d)
    r = d["result"]
    assert f"x{r['model_gain']:.2f} with line-rate links" in text
    assert f"x{r['nccl_gain']:.2f}</b> with NCCL's calibrated" in text


# ---------------------------------------------------------------------------
# chapter 10, scenario 3: what kernel bypass saves
# ---------------------------------------------------------------------------
def test_edge_kernel_bypass_share_of_round_trip(ch10):
    """Old text: 'saves tens of microseconds -- a few percent of a millisecond-scale
    round trip'; at the scenario's 50 km it is a sixth of the round trip."""
    assert "a few\npercent of a millisecond-scale round trip" not in ch10
    r = scenarios.edge_cloud_inference()
    saved = r["baseline"]["comm_s"] - r["improved"]["comm_s"]
    assert "saves about 0.1 ms" in ch10 and round(saved, 4) == 0.0001
    share = saved / scenarios.edge_cloud_inference()["baseline"]["comm_s"]
    assert round(share * 6) == 1                                   # about a sixth
    assert f"about {share:.0%} of the round trip at 50 km".replace("%", " %") in " ".join(ch10.split())
    assert r["params"]["distance_km"] == 50
    assert round(r["baseline"]["comm_s"] / saved) == 6
    far = scenarios.edge_cloud_inference(distance_km=300)
    assert "only about 3 % near the limit" in " ".join(ch10.split())
    assert round(scenarios.edge_cloud_inference()["max_distance_km"], -2) == 300   # "the limit"
    assert round(100 * saved / far["baseline"]["comm_s"]) == 3


# ---------------------------------------------------------------------------
# chapter 10, scenario 5: the seed's -60 % first token is NCCL's real PCIe ring
# ---------------------------------------------------------------------------
def test_ttft_nccl_cut_is_computed_from_the_predictor():
    r = scenarios.tp_token_latency()
    msg = r["params"]["prompt_tokens"] * 8192 * 2
    t = {k: cl.predict_collective("allreduce", msg, cl.cluster("A100", **kw)).time_s
         for k, kw in (("pcie", {"fabric": "pcie"}), ("nvlink", {}))}
    t_comp = r["baseline"]["compute_s"]
    assert r["nccl_ttft_cut"] == pytest.approx(
        1 - (t_comp + 160 * t["nvlink"]) / (t_comp + 160 * t["pcie"]), rel=1e-12)
    assert r["nccl_ttft_cut"] > r["ttft_cut"]


def test_ttft_prose_60_percent_needs_no_fast_maths(ch10):
    """Old text: 'so 60 % needs a very efficient prefill' and the summary's '-63 % only
    with fast (90 % of peak) maths' -- the course's own predictor gives 64 % at 50 %."""
    assert "60 % needs a very efficient prefill" not in ch10
    assert "−63 % only with fast (90 % of peak) maths" not in ch10
    assert "the 60 % needs fast maths" not in ch10
    r = scenarios.tp_token_latency()
    assert r["params"]["efficiency"] == 0.5
    # the report prints the calibrated cut a cell above; the prose names its row
    assert "the cut is about 64 % at the default 50 % of peak" not in ch10
    assert "*cut with NCCL's calibrated AllReduce times*" in " ".join(ch10.split())
    assert round(100 * r["nccl_ttft_cut"]) == 64
    assert "| 64% |" in scenarios.report_markdown(r)
    assert "about −64 % with NCCL's calibrated PCIe times" in ch10
    p = cl.predict_collective("allreduce", r["params"]["prompt_tokens"] * 8192 * 2,
                              cl.cluster("A100", fabric="pcie"))
    share = p.busbw_bytes_per_s / cl.pcie_bw_per_dir_bytes_per_s(4)
    assert abs(share - 0.5) < 0.05
    assert (f"at about {share:.0%} of its line rate in bus bandwidth for these 34 MB messages"
            .replace("%", " %") in " ".join(ch10.split()))
    assert round(r["params"]["prompt_tokens"] * 8192 * 2 / 1e6) == 34


def test_ttft_quiz_says_which_model_and_gives_nccl_cut():
    q = cl.content.chapter_quiz(10)[2]
    assert "line-rate model" in q.prompt
    nccl = scenarios.tp_token_latency()["nccl_ttft_cut"]
    assert f"the cut is {nccl:.0%} at the default 50 % of peak".replace("% at", " % at") in q.explanation


# ---------------------------------------------------------------------------
# chapter 11, interview question 2 (seed 000): pageable is slower only when large
# ---------------------------------------------------------------------------
def test_pinned_question_is_size_dependent_like_chapter_4():
    """Old explanation: 'that extra copy is why pageable transfers are slower' -- the
    course's own H200 run has pageable no slower up to 16 KiB."""
    from course_lib.hardware import pageable_over_pinned

    q = next(q for q in cl.content.chapter_quiz(11) if "pinned (page-locked)" in q.prompt)
    assert "why large pageable transfers are slower" in q.explanation
    assert "about an\neighth of pinned at 1 GiB".replace("\n", " ") in q.explanation
    assert round(1 / pageable_over_pinned(cl.GiB)) == 8
    assert "Up to about 16 KiB" in q.explanation and "no slower" in q.explanation
    assert pageable_over_pinned(16 * 1024) == pytest.approx(1.0)
    assert pageable_over_pinned(64 * 1024) < 0.7


# ---------------------------------------------------------------------------
# chapter 8: the overlap explorer's "step" is backward + communication only
# ---------------------------------------------------------------------------
def test_ch08_explorer_says_its_time_leaves_the_forward_pass_out(notebook_text):
    """The readout called backward + AllReduce 'Step', beside a chapter whose step is
    T_fwd + max(T_bwd, T_comm): the number is the backward part alone."""
    from course_lib.explorers import ch08_overlap

    e = ch08_overlap.explorer()
    d = e.update(system="8x H100, PCIe Gen5 only", n_buckets=8, overlap=True)
    sched = d["schedule"]
    # the explorer's time starts at the backward pass: no forward pass in it
    assert sched["compute"][0][0] == 0 and d["iteration_s"] < d["t_backward_s"] + d["t_comm_bucketed_s"]
    text = ch08_overlap.readout(d)
    assert "Step <b>" not in text and "Backward pass + communication <b>" in text
    assert "T_fwd + this" in text
    md = " ".join(notebook_text("08_traffic_lights").split())
    assert "bring backward + communication (the explorer leaves the forward pass out" in md


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


def test_70b_takeaway_threshold_batch_and_efficiency(ch10):
    """'reaches 3.2× only between about 320 and 1,280 sequences per step and at 60 % of
    peak FLOP/s' -- the NCCL gain's thresholds (a window: it falls back at larger batches)."""
    md = " ".join(ch10.replace("> ", " ").split())
    assert ("reaches 3.2× only between about 320 and 1,280 sequences per step and at 60 % "
            "of peak FLOP/s") in md
    assert max(_tp(batch=b, efficiency=0.5)["nccl_gain"] for b in range(64, 4097, 64)) < 3.2
    assert _tp(batch=100, efficiency=0.9)["nccl_gain"] < 3.2      # fast maths, batch 100
    assert _tp(batch=128, efficiency=0.9)["nccl_gain"] > 3.2
    assert _tp(batch=320, efficiency=0.6)["nccl_gain"] > 3.2
