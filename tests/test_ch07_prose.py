"""Chapter 7's conventions and numbers agree with the models and the explorer; so do
those of its optional companion, notebooks/your_cluster.ipynb (the predictor against
measurements and calibrated on a run of your own), which holds the validation and
"run it on your cluster" material that used to close the chapter."""

import json
import pathlib
import re

import numpy as np
import pytest

import course_lib as cl
from course_lib import values
from course_lib.apps.prose import BOUND, CITED
from course_lib.explorers import ch07_allreduce
from course_lib.values import ch07 as values07


def _plain(text):
    """The text a learner reads: bound and cited figures without their markers."""
    return CITED.sub(r"\2", BOUND.sub(r"\2", text))


@pytest.fixture(scope="module")
def cells(notebook_text):
    """The chapter's text by cell kind (as read: markers dropped): ``cells("markdown")``."""
    return lambda kind: _plain(notebook_text("07_sharing_the_load", kind))


@pytest.fixture(scope="module")
def yc(notebook_text):
    """The optional companion notebook's text by cell kind (markers dropped)."""
    return lambda kind: _plain(notebook_text("your_cluster", kind))


def test_trace_steps_are_numbered_like_the_explorer(cells):
    """The trace prints step = tag + 1; the explorer's step k shows the same sends."""
    assert "row['tag'] + 1" in cells("code")
    n = 4
    sim = cl.simulate_collective("allreduce", 64 * cl.MiB, cl.ring_topology(n, gpu="H100"),
                                 algorithm="ring")
    schedule = cl.traffic.ring_allreduce_schedule(n)
    printed = {}
    for row in sim.trace.to_rows():
        m = schedule[row["tag"]][row["src"]]
        printed.setdefault(row["tag"] + 1, set()).add((row["src"], row["dst"], m["chunk"]))
    assert sorted(printed) == list(range(1, 2 * (n - 1) + 1))
    e = ch07_allreduce.FACTORIES["ring_steps"]()
    for k, sends in printed.items():
        shown = e.update(n_ranks=n, step=k)["sends"]
        assert {(m["src"], m["dst"], m["chunk"]) for m in shown} == sends
    # the prose formula for step s (from 1): GPU r sends chunk (r - s + 1) mod n
    for s in range(1, n):
        assert printed[s] == {(r, (r + 1) % n, (r - s + 1) % n) for r in range(n)}


def test_one_unit_convention_for_buffer_sizes(cells):
    code, md = cells("code"), cells("markdown")
    # power-of-two buffers are printed in binary units, never as "65.5 kB"
    assert not re.search(r"format_bytes\(S\)", code)
    assert "1 MB" not in md and " kB" not in md
    assert "KiB = 1,024 bytes" in md


def test_nvls_gain_explained_with_the_predictors_numbers(cells):
    """Issue 30: NCCL's NVLS moves (1 + 1/n) S through each port, each way (the head's own
    slice crosses the switch too), so the ideal gain over the ring at 8 GPUs is 1.56x, not
    the 1.75x of busbw's factor; the rest of the way to ~1.3x is the rates, in the model."""
    md = _md(cells)
    n = 8
    g = cl.gradient_bytes(7e9)
    dgx = cl.cluster("H100")
    ring = cl.predict_collective("allreduce", g, dgx, algorithm="ring")
    nvls = cl.predict_collective("allreduce", g, dgx, algorithm="nvls")
    port = cl.nvls_allreduce_bytes_per_port(1.0, n)
    assert port == pytest.approx(9 / 8)
    ideal = cl.ring_allreduce_bytes_per_rank(1.0, n) / port
    assert round(ideal, 2) == 1.56
    assert "ideally 1.75×" not in md and "1.75× faster" not in md
    assert "each GPU sends $S$ once" not in md.replace("Each", "each")
    assert f"1.75 S): ideally {ideal:.2f}× faster" in md
    assert f"made NVLS {ring.time_s / nvls.time_s:.2f}× faster than its ring" in md
    # the gain is modelled: per-port bytes x (port busy / ring busy) = the predictor's ratio
    busy = cl.calibration("nvls_efficiency") * port
    rate_gain = ideal * busy / cl.calibration("simple_efficiency")
    assert round(rate_gain, 2) == round(ring.time_s / nvls.time_s, 2)
    assert f"= {rate_gain:.2f}×, all in the model" in md
    # NCCL's Hopper nvlsEfficiency 0.85 is the port's share; x n/(n+1) it is the fitted 0.74
    assert abs(values07.NCCL_HOPPER_NVLS_EFFICIENCY / port - cl.calibration("nvls_efficiency")) < 0.02
    assert "nvlsEfficiency" in cells("markdown")
    # one rate: NCCL's planning rate; 98 % of it is 81 % of the spec's 450 GB/s
    plan = dgx.intra_bw_bytes_per_s()
    assert f"{cl.format_bandwidth(plan)} per direction" in md
    ring_rate = cl.calibration("simple_efficiency") * plan
    spec = cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    assert (f"({cl.format_bandwidth(ring_rate)}, {ring_rate / spec:.0%}".replace("%", " %")
            + f" of the {cl.format_bandwidth(spec)} spec)") in md
    # the readout prints the per-port ideal, not busbw's factor
    code = cells("code")
    assert "ideal = cl.busbw_factor" not in code and "cl.nvls_allreduce_bytes_per_port(grad, 8)" in code


def test_nvls_drawing_caption_counts_bytes_per_port():
    svg = cl.draw.collectives.nvls(8, step=1).svg
    assert "Each GPU sends S once" not in svg
    assert "(1+1/n)·S = 1.12 S each way" in svg and "2(n−1)/n·S = 1.75 S" in svg


def test_ch07_quiz_and_glossary_count_nvls_per_port():
    from course_lib import content
    q = content.chapter_quiz(7)[2]
    right = q.options[min(q.answer)]
    assert "sends S once" not in right and "(1+1/n) S each way" in right
    assert "1.125" in right and "1.56×" in q.explanation
    nvls = [t for t in content.glossary() if t[1].startswith("NVLS (")]
    assert nvls and "sends and receives S once" not in nvls[0][2] and "(1+1/n) S" in nvls[0][2]


def test_seven_b_summary_names_the_predictors_algorithm(cells):
    """Issue 30: the predictor runs NVLS for the 7B gradients (~51 ms); the summary said
    "≈0.067 s realistic", the measured ring's time."""
    md = _md(cells)
    g = cl.gradient_bytes(7e9)
    auto = cl.predict_collective("allreduce", g, cl.cluster("H100"))
    assert auto.algorithm == "nvls"
    assert "≈0.067 s realistic" not in md
    summary = md[md.index("## Summary"):]
    assert f"≈{auto.time_s:.2g} s predicted (NCCL runs NVLS)" in summary


def test_the_articles_linear_volume_is_corrected_per_gpu(cells):
    """Issue 30: the article's params x bytes x GPUs grows with n; what one GPU sends,
    2(n-1)/n S, stays under 2 S."""
    md = _md(cells)
    g = cl.gradient_bytes(7e9)
    per = {n: cl.ring_allreduce_bytes_per_rank(g, n) for n in (8, 64)}
    assert per[8] < per[64] < 2 * g
    assert "growing linearly, is what all the GPUs send together, $2(n-1)S$" in md
    assert (f"{cl.format_bytes(per[8])} at 8 GPUs, {cl.format_bytes(per[64])} at 64, never more "
            f"than $2S$ = {cl.format_bytes(2 * g)}") in md


def test_seven_b_example_numbers(cells):
    md = cells("markdown")
    sent = cl.ring_allreduce_bytes_per_rank(cl.gradient_bytes(7e9), 8)
    assert "≈0.067 s" in md and "≈0.066 s" not in md
    assert round(sent / cl.MEASURED["busbw_allreduce_8xH100_ring"].value, 3) == 0.067
    assert round(sent / cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s, 3) == 0.054
    assert round(sent / cl.pcie_bw_per_dir_bytes_per_s(5), 2) == 0.39


def test_folded_answers_match_the_models(cells, yc):
    md = _md(cells)
    got = [m["chunk"] for step in cl.traffic.ring_allreduce_schedule(5) for m in step
           if m["dst"] == 2]
    assert "chunks 1, 0, 4, 3 during the ReduceScatter" in md and got[:4] == [1, 0, 4, 3]
    assert "then 2, 1, 0, 4 during the AllGather" in md and got[4:] == [2, 1, 0, 4]
    multi = cl.cluster("H100", nodes=16, nic="NDR")
    # the algorithm-switch exercise moved to the optional notebook with the predictor's checks
    ymd = _md(yc)
    algo = lambda n_bytes: cl.predict_collective("allreduce", n_bytes, multi).algorithm
    t_text, r_text = (values.value(f"your_cluster.{k}") for k in ("ex2_tree_to_nvls",
                                                                  "ex2_nvls_to_ring"))
    assert f"the **tree** up to about {t_text}" in ymd
    assert f"up to about {r_text}, then the **ring**" in ymd
    tree_to_nvls = float(t_text.removesuffix(" MiB")) * cl.MiB
    nvls_to_ring = float(r_text.removesuffix(" GiB")) * cl.GiB
    # the printed switch points are where the model switches, to the digits printed
    assert algo(0.99 * tree_to_nvls) == "tree" and algo(1.01 * tree_to_nvls) == "nvls"
    assert algo(0.97 * nvls_to_ring) == "nvls" and algo(1.03 * nvls_to_ring) == "ring"
    dgx = cl.cluster("H100")
    auto = cl.predict_collective("allreduce", cl.GiB, dgx)
    ring = cl.predict_collective("allreduce", cl.GiB, dgx, algorithm="ring")
    assert auto.algorithm == "nvls" and round(ring.time_s / auto.time_s, 1) == 1.3
    assert (f"about a third higher than with the ring (about {cl.format_time(auto.time_s)} against "
            f"{cl.format_time(ring.time_s)})") in md
    assert 1.25 < auto.busbw_bytes_per_s / ring.busbw_bytes_per_s < 1.4
    assert round(auto.time_s * 1e3, 1) == 4.0 and round(ring.time_s * 1e3, 1) == 5.3
    one = cl.cluster("H100", nodes=16, nic="NDR", nics_per_node=1)
    t8, t1 = (cl.predict_collective("allreduce", cl.GiB, c).time_s for c in (multi, one))
    assert (f"about {cl.format_time(t8)} with eight NDR ports a node against about "
            f"{cl.format_time(t1)}") in md
    assert "seven to eight times slower" in md and 7 <= t1 / t8 < 8
    assert round(t8 * 1e3) == 6 and round(t1 * 1e3) == 45


def test_explorer_axis_uses_binary_units():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    e = ch07_allreduce.FACTORIES["allreduce"]()
    data = e.update(n_bytes=2 ** 30)
    fig = plt.figure()
    ch07_allreduce.plot(data, fig)
    ax = fig.axes[0]
    fmt = ax.xaxis.get_major_formatter()
    assert fmt(2 ** 30, 0) == "1 GiB" and fmt(2 ** 20, 0) == "1 MiB"
    plt.close(fig)


def test_half_plateau_answer(yc):
    md = _md(yc)
    from course_lib import content
    rows = {int(r["bytes"]): r["busbw_GBps"] for r in content.calibration_rows()
            if r["collective"] == "AllReduce" and r["system"].startswith("H100")}
    peak = max(rows.values())
    dgx = cl.cluster("H100")
    model = lambda s: cl.predict_collective("allreduce", s, dgx).busbw_bytes_per_s  # noqa: E731
    model_peak = model(8 * cl.GiB)
    assert "measured busbw is 49 % of its plateau and the model's 52 %" in md
    assert round(rows[16 * 2**20] / peak, 2) == 0.49
    assert round(model(16 * cl.MiB) / model_peak, 2) == 0.52
    assert model(32 * cl.MiB) / model_peak > 0.5


# --- "Read the table": every claim about the held-out runs follows from the data --------
@pytest.fixture(scope="module")
def heldout():
    rows = cl.predict.validation_rows(split="heldout")
    return rows, cl.predict.validation_errors(rows)


def _md(cells):
    """Markdown as one line: value markers and blockquote markers dropped, whitespace collapsed."""
    from course_lib.apps import prose
    text = prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", cells("markdown")))
    return " ".join(re.sub(r"(?m)^>\s?", "", text).split())


def test_where_the_model_holds_is_within_ten_percent(yc, heldout):
    md = _md(yc)
    _, errs = heldout
    holds = ["HGX H200 (8 GPUs, NVSwitch)", "HGX A100 x2 nodes, 4x HDR InfiniBand",
             "A100 x8 node(s), 4x 200G InfiniBand (nccl-tests #175)",
             "Dell XE9680 H100 x2 nodes, 8x 400G IB (nccl-tests #309)",
             "H100 x4 VMs, 8x 400G IB (nccl-tests #309)",
             "AWS p4d(n).24xlarge (8 A100, 4x 100G EFA)",
             "Dell XE8545 4x A100-SXM4 NVLink (Stanage gpu01)",
             "Lambda 4x H100 SXM instance, NV18 (dudeperf3ct blog)"]
    assert "have median errors of 1–10 % from 1 MiB up" in md
    for system in holds:
        assert round(errs[system]["median_big"], 2) <= 0.10, system
    assert min(round(100 * errs[s]["median_big"]) for s in holds) == 1


def test_volta_and_second_cluster_claims(yc, heldout):
    md = _md(yc)
    rows, errs = heldout
    volta = ["8x V100-SXM2 hybrid cube-mesh (konnase blog, 2019)",
             "DGX-2, 12 of 16 V100-SXM3 (wohlbier nccl-tests)"]
    assert "so the model is low on them, by a median of 17–26 %" in md
    assert sorted(round(100 * errs[s]["median_big"]) for s in volta) == [17, 26]
    for s in volta:  # low: predicted below measured
        assert all(r["rel_error"] < 0 for r in rows if r["system"] == s
                   and r["n_bytes"] >= 2**26)
    big = {(r["system"][:14], int(r["nodes"])): r for r in rows if r["n_bytes"] == 2**33}
    second = [big[("H100 x2/x4/x8 ", k)] for k in (4, 8)]
    vms = float(big[("H100 x4 VMs, 8", 4)]["busbw_GBps"])
    assert "11–12 % less busbw on four and eight nodes than the four VMs do on four" in md
    assert sorted(round(100 * (1 - float(r["busbw_GBps"]) / vms)) for r in second) == [11, 12]
    assert "so the model is 16–17 % high there" in md
    assert sorted(round(100 * r["rel_error"]) for r in second) == [16, 17]


def test_software_generation_and_launch_claims(yc, heldout):
    md = _md(yc)
    rows, _ = heldout
    at_1g = {r["system"]: float(r["busbw_GBps"]) for r in rows
             if r["n_bytes"] == 2**30 and int(r["nodes"]) == 2 and "p4d" in r["system"]}
    assert ("reach only about 57 % of the busbw NCCL 2.9.9 reaches on the same "
            "instance type") in md
    ratio = (at_1g["AWS p4d.24xlarge x2 on EKS (aws-efa-eks)"]
             / at_1g["AWS p4d(n).24xlarge (8 A100, 4x 100G EFA)"])
    assert round(100 * ratio) == 57
    # p3dn: 4 -> 8 nodes adds 8 network and 56 NVLink steps to an 8-byte ring
    t = {int(r["nodes"]): float(r["time_us"]) for r in rows
         if "p3dn" in r["system"] and r["n_bytes"] == 8}
    per_net = (t[8] - t[4] - 56 * cl.nccl_hop_s("ring", "ll", "nvlink") * 1e6) / 8
    assert "spend about 35 µs per network step where today's EFA adds 13" in md
    assert round(per_net / 5) * 5 == 35
    assert round(cl.hardware.network_hop_s("EFA") * 1e6) == 13
    one = cl.calibration("launch_s") / cl.calibration("launch_gpus")
    assert "(about 3.5 µs each)" in md and round(one * 1e6, 1) == 3.5
    assert "starts about 42 µs late" in md and round(12 * one * 1e6) == 42
    dgx2 = [r for r in rows if r["system"].startswith("DGX-2")]
    assert all("launch_gpus=12" in r["cluster"] for r in dgx2)


# --- issue 20 -------------------------------------------------------------------------
def test_ring_lower_bound_is_derived_and_cited(cells):
    md = _md(cells)
    assert "Patarasuk" in md and "2009" in md
    # the bound 2(n-1)/n S/B: the ring meets it, gather-and-send-back costs n times it
    n, s, b = 8, 64 * 2**20, 450e9
    bound = 2 * (n - 1) / n * s / b
    assert cl.collective_time_s("allreduce", s, n, b, algorithm="ring") == pytest.approx(bound)
    assert cl.collective_time_s("allreduce", s, n, b, algorithm="tree") > bound
    assert cl.collective_time_s("allreduce", s, n, b, algorithm="in-switch") < bound
    assert 2 * (n - 1) * s / b == pytest.approx(n * bound)
    assert "$n$ times the bound" in md


def _sources(stem):
    import json
    import pathlib
    nb = json.loads((pathlib.Path(__file__).resolve().parents[1] / "notebooks" /
                     f"{stem}.ipynb").read_text(encoding="utf-8"))
    return [("".join(c["source"]), c["cell_type"]) for c in nb["cells"]]


def test_protocol_box_comes_before_any_protocol_is_printed():
    srcs = [_plain(s) for s, _ in _sources("07_sharing_the_load")]
    box = next(i for i, s in enumerate(srcs) if "LL128" in s and "Simple" in s)
    printed = [i for i, s in enumerate(srcs) if "p.protocol" in s]
    assert all(box < i for i in printed)
    assert "120 bytes of data" in srcs[box]
    # the rates NCCL plans each protocol at (tuning.cc), not the format's 94 % or 50 %
    assert f"{cl.nccl_tuning('ll128_efficiency'):.0%}".replace("%", " %") in srcs[box]
    assert f"{cl.nccl_tuning('ll_efficiency'):.0%}".replace("%", " %") in srcs[box]
    # the optional notebook prints protocols: before the first, its prose points to them
    yc = _sources("your_cluster")
    first = next(i for i, (s, kind) in enumerate(yc) if kind == "code" and "p.protocol" in s)
    before = " ".join(s for s, kind in yc[:first] if kind == "markdown")
    assert "[protocols](11_rumours_and_interviews.ipynb#Glossary)" in before


def test_hierarchical_is_not_called_an_nccl_algorithm_and_tree_latency_is_chain_plus_tree(cells):
    md = _md(cells)
    assert "not one of NCCL's algorithms" in md
    assert "Libraries pick by size and machine" not in md
    g, m = 8, 128
    assert 2 * ((g - 1) + 7) == 28 and "28 for 1,024 GPUs in 128 nodes of 8" in md
    assert "both directions of nobody's road" not in md


def test_algorithm_switch_exercise_names_nccls_estimate_with_its_numbers(yc):
    from course_lib.predict import _nccl_estimate_s
    md = _md(yc)
    c = cl.cluster("H100", nodes=16, nic="NDR")
    est = {a: _nccl_estimate_s("allreduce", 4 * 2**30, c, a, "simple") for a in ("ring", "tree", "nvls")}
    assert min(est, key=est.get) == "ring"
    for a, text in (("ring", "ring/simple 24.7 ms"), ("tree", "tree/simple 25.8 ms"),
                    ("nvls", "NVLS-tree 25.9 ms")):
        assert text in md and f"{est[a] * 1e3:.1f}" in text
    assert "0.8 % at 128 ranks" in md and round(100 / 128, 1) == 0.8
    assert "outweighs its many steps" not in md


def test_accuracy_takeaway_states_the_measured_errors(yc, heldout):
    plain = _md(yc)
    rows, _ = heldout
    report = cl.predict.validation_report(rows)
    last = [line for line in report.splitlines() if line.startswith("all held-out points")][0]
    assert "17%" in last and "131%" in last and "22%" in last
    assert "median error is 17 % and the 90th percentile 131 %" in plain
    assert "within about 10 % on most machines" not in plain


def test_validation_lives_in_the_optional_notebook_linked_from_the_chapter():
    ch07 = _sources("07_sharing_the_load")
    yc = _sources("your_cluster")
    for calls in ("validation_rows", "cl.calibrate(", "ch07_your_cluster", "calibration_curves"):
        assert all(calls not in s for s, _ in ch07), calls
        assert any(calls in s for s, kind in yc if kind == "code"), calls
    md = " ".join(s for s, kind in ch07 if kind == "markdown")
    assert "](your_cluster.ipynb)" in md
    assert "## Appendix" not in md and "Run it on your cluster" not in md
    title = yc[0][0]
    assert title.startswith("# ") and "(optional)" in title.splitlines()[0]
    assert "](07_sharing_the_load.ipynb)" in title


def test_chapter_7_core_is_at_most_2500_words():
    """The ring, its proof, busbw, tree, NVLS and two levels fit in 2,500 words of Markdown."""
    words = sum(len(_plain(s).split()) for s, kind in _sources("07_sharing_the_load")
                if kind == "markdown")
    assert words <= 2500, words


def test_your_cluster_statistics_are_said_as_statistics(yc):
    """Teaching pass 4 (issue 30): 'all 346 held-out points from 1 MiB up' -- only 166 of the
    346 are from 1 MiB up; 'within a median of' reads a median as a bound; 'few fitted
    constants' -- the two machines' AllReduce curves set 5 of them."""
    from course_lib.hardware.fitted import CALIBRATION, SRC_CALIB
    md = _md(yc)
    rows = cl.predict.validation_rows(split="heldout")
    n_big = sum(r["n_bytes"] >= 2**20 for r in rows)
    assert (len(rows), n_big) == (346, 166)
    assert "all 346 held-out points from 1 MiB up" not in md
    assert f"Over the {n_big} held-out points from 1 MiB up (of {len(rows)} in all)" in md
    assert "within a median of" not in md and "miss by a median of" in md
    assert "half the points miss by less, half by more" in md
    fitted = [k for k, f in CALIBRATION.items() if f.source.startswith(SRC_CALIB) and "8x" in f.source]
    assert len(fitted) == 5 and f"the predictor's {len(fitted)} constants fitted to AllReduce curves" in md


def test_spec_sheet_takeaway_states_the_median_and_the_tail(yc, heldout):
    """Issue 30: "a spec sheet gives a timetable to within about a fifth" stood beside a 90th
    percentile of 131 %; the takeaway gives both, computed from the held-out validation."""
    import numpy as np
    md = _md(yc)
    rows, _ = heldout
    err = np.abs([r["rel_error"] for r in rows])
    big = np.array([r["n_bytes"] >= 2**20 for r in rows])
    med, p90 = np.median(err[big]), np.percentile(err[big], 90)
    assert 0.15 < med < 0.25 and p90 > 1.0
    assert "A spec sheet gives a timetable to within about a fifth;" not in md
    assert (f"typically off by about a fifth (a median of {med:.0%} on the held-out public runs "
            f"from 1 MiB up), but one size in ten misses by more than {p90:.0%}").replace(
                "%", " %") in md


def test_readers_pass_ring_directions_ll_version_and_nvls_tree(cells):
    """A one-way ring uses each point-to-point link in one direction (not 'both directions in
    use'); LL's 25 % is NCCL 2.20's plan (the predictor's version), 50 % from 2.21; across
    nodes the predictor's 'nvls' is NCCL's NVLS-tree (the cell prints 'nvls' for 16 nodes)."""
    import course_lib as cl
    md = " ".join(cells("markdown").replace(">", " ").split())
    assert "both directions in use" not in md
    assert "link of a ring is busy in one direction only" in md
    ll = f"{cl.nccl_tuning('ll_efficiency'):.0%}".replace("%", " %")
    assert f"NCCL 2.20 (the predictor's version) plans it at {ll}" in md
    assert "(2.21 on: 50 %)" in md
    many = cl.predict_collective("allreduce", cl.GiB, cl.cluster("H100", nodes=16, nic="NDR"))
    assert many.algorithm == "nvls" and "across nodes `nvls` is NVLS-tree" in md


NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def _prose(text: str) -> str:
    """Markdown as one line, as read: value/cite markers and blockquote markers dropped,
    whitespace collapsed."""
    from course_lib.apps.prose import BOUND, CITED
    text = CITED.sub(r"\2", BOUND.sub(r"\2", text))
    return " ".join(re.sub(r"(?m)^>\s?", "", text).split())


def _cell(stem: str, cell_id: str) -> str:
    cells = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c.get("id") == cell_id)


# --- chapter 7's companion (your_cluster): the model against the two calibration curves --
def test_model_vs_measured_takeaway_states_the_worst_error(notebook_text):
    """'within about 25 %' was false: on the A100 the model is 31 % high at 1 MiB."""
    md = _prose(notebook_text("your_cluster", "markdown"))
    curves = cl.predict.calibration_curves()
    worst = {}
    for (system, coll), c in curves.items():
        if coll != "AllReduce" or not system.startswith(("A100-SXM", "H100-SXM (HGX")):
            continue
        clu = cl.cluster("A100" if system.startswith("A100") else "H100")
        errs = {s: cl.predict_collective("allreduce", s, clu).busbw_bytes_per_s / b - 1
                for s, b in zip(c["n_bytes"], c["busbw_bytes_per_s"])}
        size = max(errs, key=lambda s: abs(errs[s]))
        worst[clu.gpu] = (size, errs[size])
    gpu, (size, err) = max(worst.items(), key=lambda kv: abs(kv[1][1]))
    assert "within about 25 %" not in md
    assert f"{round(err * 100)} % too high at worst, on the {gpu} at " \
           f"{cl.format_bytes(size, binary=True)}" in md
    assert err > 0.25 and abs(err) < 1 / 3 + 0.01          # "within about a third"
    dgx_a100 = cl.cluster("A100")
    below = cl.predict_collective("allreduce", size / 4, dgx_a100).algorithm
    at = cl.predict_collective("allreduce", size, dgx_a100).algorithm
    assert (below, at) == ("ring", "tree")                  # "hands over from the ring to the tree"


# --- chapter 7: the naive plan of the story -------------------------------------------
def test_ch07_story_naive_plan_counts_the_head_office_traffic(notebook_text):
    """'city hall ... seven times the traffic' mixed a ninth depot into eight
    factories; the head office (one of the n) takes n-1 ledgers in and sends n-1
    totals out, n times the ring's lower bound, as the proof section says."""
    md = _prose(notebook_text("07_sharing_the_load", "markdown"))
    assert "seven times the traffic" not in md
    n = 8
    assert "Eight factories" in md and "seven ledgers in and seven totals out" in md
    S, B = 64 * cl.MiB, cl.gpu("H100").nvlink_bw_per_dir_bytes_per_s
    head_office = 2 * (n - 1) * S / B
    bound = 2 * (n - 1) / n * S / B
    assert head_office / bound == pytest.approx(n)
    assert "$n$ times the bound" in md


def test_ch07_alpha_beta_cell_is_introduced_by_what_it_prints(notebook_text):
    """The sentence said 'the three' right after a list of tree, in-switch and
    hierarchical; the cell prints cl.ALGORITHMS (ring, tree, in-switch)."""
    md = _prose(notebook_text("07_sharing_the_load", "markdown"))
    assert "The alpha-beta formulas of the three" not in md
    assert cl.ALGORITHMS == ("ring", "tree", "in-switch")
    assert "formulas of the ring, the (flat) tree and in-switch reduction for 8 GPUs" in md
    code = notebook_text("07_sharing_the_load", "code")
    assert "for alg in cl.ALGORITHMS" in code


def test_ch07_pcie_prediction_is_explained_beside_the_ideal():
    """The cell prints 522 ms for 8 x H100 on PCIe right after the text's
    'about 0.39 s ... gives the same picture'; the gap is NCCL's PCIe plan."""
    md = _prose(_cell("07_sharing_the_load", "988ff1c7"))
    grad = cl.gradient_bytes(7e9)
    pcie = cl.cluster("H100", fabric="pcie")
    t = cl.predict_collective("allreduce", grad, pcie).time_s
    assert round(t, 2) == 0.52 and "about 0.52 s, not the ideal 0.39 s" in md
    ideal = cl.ring_allreduce_bytes_per_rank(grad, 8) / cl.pcie_bw_per_dir_bytes_per_s(5)
    assert round(ideal, 2) == 0.39
    plan = cl.hardware.pcie_generation(5).nccl_planning_x16_bytes_per_s
    assert plan == pcie.intra_bw_bytes_per_s() == 48 * cl.GB and "48 GB/s" in md
    assert round(plan / cl.pcie_bw_per_dir_bytes_per_s(5), 2) == 0.76   # "three quarters"


ROOT = pathlib.Path(__file__).resolve().parents[1]


def _prose_rev5(text: str) -> str:
    """Markdown as one line: value markers and blockquote markers dropped, whitespace collapsed."""
    from course_lib.apps import prose
    text = prose.CITED.sub(r"\2", prose.BOUND.sub(r"\2", text))
    return " ".join(re.sub(r"(?m)^>\s?", "", text).split())


def _cell_rev5(path: pathlib.Path, cell_id: str) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c.get("id") == cell_id)


def _nb(stem: str) -> pathlib.Path:
    return ROOT / "notebooks" / f"{stem}.ipynb"


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
    answer = _prose_rev5(_cell_rev5(_nb("your_cluster"), "be1d69e2"))   # chapter 7's companion
    assert "both cross one half between 16 and 32 MiB" not in answer
    assert f"{share[8 * cl.MiB]:.0%} at 8 MiB".replace("%", " %") in answer
    assert f"{mshare[64 * cl.MiB]:.0%} at its next dot, 64 MiB".replace("%", " %") in answer
