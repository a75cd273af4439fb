"""Chapter 8's numbers in prose agree with the models that print them."""

import pytest

import course_lib as cl
from course_lib.apps.prose import BOUND, CITED
from course_lib.values import ch08 as values08


@pytest.fixture(scope="module")
def nb(notebook_text):
    """The chapter's text by cell kind, as read (value/cite markers dropped): ``nb("markdown")``."""
    return lambda kind: CITED.sub(r"\2", BOUND.sub(r"\2", notebook_text("08_traffic_lights", kind)))


def test_per_layer_barriers_cost_more_not_less(nb):
    t = cl.traffic.straggler_phase_times_s(8, 24, 0.01, jitter=0.1, seed=7)
    every = cl.traffic.barrier_step_time_s(t, every_phase=True)
    once = cl.traffic.barrier_step_time_s(t, every_phase=False)
    assert every > once
    code, md = nb("code"), nb("markdown")
    assert "% less)" not in code and "more)" in code
    # "about a tenth of a layer's time, 9 % of the step over 23 extra barriers"
    assert "a tenth of a\n> layer's time, 9 % of the step" in md
    assert round(every / once - 1, 2) == 0.09
    assert abs((every - once) / 23 / 0.01 - 0.1) < 0.02
    assert "about a tenth of the step" not in md


def test_overlap_hides_only_behind_the_backward_pass(nb):
    md = nb("markdown")
    assert r"T \ge T_{fwd} + \max(T_{bwd}, T_{comm})" in md
    grad = cl.gradient_bytes(7e9)
    t_pcie = cl.predict_collective("allreduce", grad, cl.cluster("H100", fabric="pcie")).time_s
    # "PCIe's 0.52 s AllReduce still fits -- just -- behind the backward pass's 0.53 s"
    assert "PCIe's 0.52 s AllReduce still fits" in md and round(t_pcie, 2) == 0.52
    assert t_pcie < 2 * 0.8 / 3


def test_exercise_answers_match_the_models(nb):
    md = nb("markdown")
    c = cl.cluster("H100", fabric="pcie")
    g, tb = 1e9, 0.03
    steps = {k: cl.traffic.bucket_overlap_schedule(
        tb, k * cl.predict_collective("allreduce", g / k, c).time_s, k)["iteration_s"]
        for k in range(1, 129)}
    best = min(steps, key=steps.get)
    assert f"About {best} buckets (about {cl.format_bytes(g / best, digits=0)} each)" in md
    assert round(steps[1] * 1e3) == 68 and round(steps[7] * 1e3) == 46
    from course_lib.explorers import ch08_overlap
    e = ch08_overlap.stragglers_explorer()
    cost = {n: (lambda d: d["every_s"] / d["once_s"] - 1)(e.update(n_gpus=n, n_phases=24))
            for n in (8, 32)}
    assert "From about 10 % to about 16 %" in md
    assert round(cost[8], 2) == 0.10 and round(cost[32], 2) == 0.16


def test_explorer_try_answer_matches_the_explorer(nb):
    md = " ".join(nb("markdown").split())
    from course_lib.explorers import ch08_overlap
    e = ch08_overlap.explorer()
    nv = {k: e.update(system="8x H100, NVSwitch", n_buckets=k, overlap=True) for k in (1, 8, 64)}
    ms = lambda t: cl.format_time(t, digits=2)
    assert f"one bucket leaves the whole {ms(nv[1]['exposed_s'])} AllReduce exposed" in md
    assert round(nv[1]["exposed_s"] * 1e3) == 51 and nv[1]["algorithm"] == "nvls"
    assert "where NCCL runs NVLS" in md
    assert f"8 buckets leave about {ms(nv[8]['exposed_s'])}" in md
    assert f"64 buckets about {nv[64]['exposed_s'] * 1e3:.1f} ms" in md
    assert (f"({ms(nv[1]['t_comm_bucketed_s'])} → {ms(nv[64]['t_comm_bucketed_s'])} from 1 to 64 "
            "buckets)") in md
    pc = {k: e.update(system="8x H100, PCIe Gen5 only", n_buckets=k, overlap=True)
          for k in (1, 8, 64)}
    assert "from about 1.02 s to about 0.59 s, 64 buckets to about 0.57 s" in md
    assert [round(pc[k]["iteration_s"], 2) for k in (1, 8, 64)] == [1.02, 0.59, 0.57]


def test_overlap_is_not_free_and_its_bound_is_ddps(nb):
    """Issue 20: NCCL's kernels share SMs and HBM; the backward-only bound is DDP's."""
    md = " ".join(nb("markdown").split())
    assert "kernels on the GPU's own SMs" in md and "HBM" in md
    assert "FSDP" in md and "cross-iteration" in md
    code = nb("code")
    assert "cl.traffic.overlap_step_time_s(t_compute_s, t_comm)" in code
    t = cl.traffic.overlap_step_time_s(0.8, 0.522)
    assert t == pytest.approx(0.8 / 3 + max(1.6 / 3, 0.522))


def test_nccl_moves_buckets_with_kernels_not_copy_engines(nb):
    md = " ".join(nb("markdown").split())
    assert "while the copy engines and NVLink/PCIe move the finished bucket" not in md
    assert "NCCL's kernels push the finished bucket" in md


def test_the_chapters_inputs_are_the_values_modules(nb):
    """The inputs the prose binds (values/ch08.py) are the literals the code cells run."""
    code = nb("code")
    v = values08
    assert (f"compute_s={v.STRAGGLER_COMPUTE_S}" in code and f"slow_by_s={v.STRAGGLER_SLOW_BY_S}" in code
            and "straggler_step(net, 1e9" in code and v.STRAGGLER_BYTES == 1e9)
    assert (f"straggler_phase_times_s({v.BARRIER_GPUS}, {v.BARRIER_LAYERS}, {v.BARRIER_LAYER_S}, "
            f"jitter={v.BARRIER_JITTER}, seed={v.BARRIER_SEED})") in code
    assert f"t_compute_s = {v.ARTICLE_COMPUTE_S}" in code
    assert "shared_links(two_nodes, jobs, 1e9)" in code and v.CONTENTION_BYTES == 1e9
    from course_lib.explorers import ch08_overlap
    assert ch08_overlap.CONTROLS["t_backward_s"]["value"] == 0.5
    assert ch08_overlap.CONTROLS["n_params"]["value"] == v.PARAMS


def test_ddp_bucket_quiz_gives_the_models_share_of_the_plateau():
    """Issue 30: Q4 said 25 MiB is 'well above the half-bandwidth size'; the predictor gives a
    25 MiB AllReduce 63 % of the plateau busbw on one DGX H100 and 36 % on 16 nodes."""
    from course_lib import content
    q = content.chapter_quiz(8)[3]
    text = " ".join([q.prompt, *q.options, q.explanation])
    assert "well above the half-bandwidth size" not in text
    share = {}
    for key, clu in (("one", cl.cluster("H100")), ("many", cl.cluster("H100", nodes=16, nic="NDR"))):
        plateau = cl.predict_collective("allreduce", 16 * cl.GiB, clu).busbw_bytes_per_s
        share[key] = cl.predict_collective("allreduce", 25 * 2 ** 20, clu).busbw_bytes_per_s / plateau
    assert 0.55 < share["one"] < 0.7 and 0.3 < share["many"] < 0.4     # well below the plateau
    assert f"{share['one']:.0%} of the plateau busbw".replace("%", " %") in q.explanation
    assert f"{share['many']:.0%} across 16".replace("%", " %") in q.explanation


def test_overlap_lab_prose_follows_the_labs_defaults(nb):
    """Issue 31: the default gradient moved to 16 MiB (overlap-4 beat the sum in 12 of 12
    loaded quick runs, 11 of 12 with 8 MiB); the prose reads it from overlap_lab."""
    import inspect
    from course_lib.measure import overlap_lab
    from course_lib.measure.mpi_overlap_worker import POLL_S, main as worker_main  # noqa: F401
    d = {k: p.default for k, p in inspect.signature(overlap_lab).parameters.items()}
    assert d["grad_bytes"] == 16 * cl.MiB
    md = nb("markdown")
    assert f"**{cl.format_bytes(d['grad_bytes'], binary=True)} of gradients**" in md
    assert f"**forward pass** ({cl.format_time(d['forward_s'])})" in md
    assert f"every {cl.format_time(POLL_S)} whether" in " ".join(md.split())
    assert "`overlap-4` hides most" not in md
    assert 'grad_bytes="32MiB"' not in md and "About five" not in md


def test_your_own_job_uses_the_ddp_like_trace_and_says_what_each_is(nb):
    """Issue 31: the 128-rank trace is TorchRec's AllToAll; the V100 trace has DDP's
    AllReduce beside the embedding AllToAll, and most of its communication hidden."""
    from course_lib import trace
    code, md = nb("code"), " ".join(nb("markdown").split())
    assert 'job = trace.read_job(trace.example_trace_dir("hta_v100_2ranks"))' in code
    job = trace.read_job(trace.example_trace_dir("hta_v100_2ranks"))
    import numpy as np
    steps = job.ranks[0].steps
    hidden = np.median([s["hidden_s"] for s in steps]) / np.median([s["comm_s"] for s in steps])
    assert hidden > 0.5
    assert f"compute hides {hidden:.0%}".replace("%", " %") in md
    assert "AllReduce — the dense layers' gradients, synchronised as DDP does" in md
    assert "128-rank TorchRec job whose NCCL time is all AllToAll" in md
    sources = (cl.trace.example_trace_dir("hta_v100_2ranks").parent / "SOURCES.md").read_text()
    assert "TorchRec" in sources


def test_the_partial_overlap_formula_is_the_articles_not_the_courses(notebook_text):
    """T_comp + T_comm - f min(T_comp, T_comm) is the articles' partial form: with f = 1 it is
    the max the chapter calls unreachable.  The text says so, beside the course's one model."""
    import course_lib as cl
    md = " ".join(notebook_text("08_traffic_lights", "markdown").split())
    assert "Partial, as the articles write it" in md
    assert cl.iteration_time_s(0.8, 0.5, overlap=1.0) == max(0.8, 0.5)


def test_what_a_bucketed_step_leaves_exposed_is_said_as_the_schedule_computes_it(notebook_text):
    """'Two things stay exposed: the last bucket's AllReduce and one start-up per bucket' was
    wrong when the AllReduces keep up with the backward pass: then only the last bucket shows
    (its start-up included), the other start-ups hide.  When they do not keep up, every
    start-up adds."""
    from course_lib.traffic import bucket_overlap_schedule
    k, alpha = 64, 60e-6
    quick = bucket_overlap_schedule(0.5, 0.1, n_buckets=k, bucket_latency_s=alpha)
    assert quick["exposed_comm_s"] == pytest.approx(0.1 / k + alpha, rel=1e-6)
    slow = bucket_overlap_schedule(0.5, 1.0, n_buckets=k, bucket_latency_s=alpha)
    assert slow["iteration_s"] == pytest.approx(0.5 / k + 1.0 + k * alpha, rel=1e-6)
    md = " ".join(notebook_text("08_traffic_lights", "markdown").replace(">", " ").split())
    assert "one start-up cost per bucket" not in md
    assert "only the last bucket's stays exposed" in md
    assert "$T_{fwd} + T_{bwd}/K + T_{comm}$ (start-ups included)" in md


def test_quiz_q2_the_articles_max_is_a_wrong_answer():
    """Quiz Q2's keyed 0.8 s was also max(T_comp, T_comm), the article's formula the chapter
    calls unreachable: a learner using it scored.  Now the AllReduce outlasts the backward
    pass, the key is T_fwd + T_comm and the article's max is a distractor that says so."""
    from course_lib import traffic
    from course_lib.content import chapter_quiz
    q = next(q for q in chapter_quiz(8) if "The step takes" in q.prompt)
    (key,) = q.answer
    step = traffic.overlap_step_time_s(0.8, 0.6)
    assert q.options[key] == f"{step:.2f} s" and abs(step - max(0.8, 0.6)) > 0.05
    (mx,) = [i for i, o in enumerate(q.options) if o == "0.8 s"]
    assert "article's max" in q.why_wrong[mx]


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


def test_quiz_buckets_say_mib_memory_and_exposure_as_the_chapter_does():
    """Readers: DDP's bucket_cap_mb=25 is 25 MiB (bucket_cap_mb * 1024 * 1024); Q3 and Q4
    disagreed on bucket memory; Q4 repeated 'the last bucket and the start-ups' exposed."""
    from course_lib.content import chapter_quiz
    text = " ".join(" ".join([q.prompt, *q.options, q.explanation, *q.why_wrong.values()])
                    for q in chapter_quiz(8))
    assert "25 MiB" in text and "25 MB)" not in text
    assert "Small buckets use less extra memory" not in text
    assert "last bucket and the start-ups" not in text
