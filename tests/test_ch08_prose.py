"""Chapter 8's numbers in prose agree with the models that print them."""

import pytest

import course_lib as cl

@pytest.fixture(scope="module")
def nb(notebook_text):
    """The chapter's text by cell kind: ``nb("markdown")``."""
    return lambda kind: notebook_text("08_traffic_lights", kind)


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
    assert "About 7 buckets" in md and best == 7
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
    assert "one bucket leaves the whole 51 ms AllReduce exposed" in md
    assert round(nv[1]["exposed_s"] * 1e3) == 51
    assert "8 buckets leave about 6 ms" in md and round(nv[8]["exposed_s"] * 1e3) == 6
    assert "64 buckets about 1 ms" in md and round(nv[64]["exposed_s"] * 1e3) == 1
    assert "(51 → 55 ms from 1 to 64 buckets)" in md
    assert round(nv[1]["t_comm_bucketed_s"] * 1e3) == 51
    assert round(nv[64]["t_comm_bucketed_s"] * 1e3) == 55
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
