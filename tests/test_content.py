"""The content bank (course_lib.content): every chapter's quiz read from
course_lib/content_bank/<lang>/chNN.yaml, 8 myths with evidence, the 20
interview questions keyed and explained, the glossary, what comes next.

Expected values are derived here from the seeds' own answer keys and from the
definitions (lane counts, rates, the nccl-tests CSV read with the csv module),
not copied from the library's output.
"""

import collections
import csv
import importlib.util
import json
import math
import pathlib
import re
import string
import tomllib

import pytest
import yaml

import course_lib as cl
from course_lib import content
from course_lib.apps.prose import BOUND
from course_lib.quiz import Question, check

REPO = pathlib.Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")

# The seeds' answer keys, read off their 面试题 sections (letters -> indices).
SEED_KEYS = {
    "seed 000, 面试题": ["B", "B", "B", "B", "ABC", "B", "ABC", "B", "B", "ABC"],
    "seed 003, 面试题": ["A", "B", "C", "ABC", "A", "ABC", "B", "BCD", "B", "A"],
}
#: Where each option of the course's question sits in the seed: the course shows the
#: options in its own order (right answers spread over the positions), so option k of
#: the course is the seed's option ORDER[k].
SEED_OPTION_ORDER = {
    "seed 000, 面试题": ["ABCD", "ACBD", "ACDB", "BACD", "ABCD", "ACBD", "DABC", "ABCD", "ABCD",
                      "ADBC"],
    "seed 003, 面试题": ["BCDA", "BACD", "ABCD", "ABDC", "BCDA", "ABCD", "ACBD", "ABCD", "BACD",
                      "BCAD"],
}
#: Where the course corrects a seed's key: (seed, number) -> (course key, why).
SEED_CORRECTIONS = {
    ("seed 003, 面试题", 7): ("C", "max(T_comp, T_comm) needs the forward pass to hide "
                             "communication; only the backward pass can (chapter 8)"),
}


# --- myths -------------------------------------------------------------------
def test_eight_myths_four_from_each_seed():
    assert len(content.MYTHS) == 8
    sources = [m.source for m in content.MYTHS]
    for seed in ("seed 000", "seed 003"):
        numbers = sorted(int(s.rsplit("#", 1)[1]) for s in sources if s.startswith(seed))
        assert numbers == [1, 2, 3, 4], (seed, sources)
    assert all("常见误区" in s for s in sources)
    assert len({m.key for m in content.MYTHS}) == 8


@pytest.mark.parametrize("m", content.MYTHS, ids=lambda m: m.key)
def test_each_myth_has_claim_verdict_and_evidence(m):
    assert len(m.claim) > 30 and len(m.truth) > 30
    assert m.verdict in ("false", "misleading", "half true")
    assert m.kind in ("model", "simulation", "measurement")
    assert 1 <= m.chapter <= 11
    ev = m.evidence()
    assert isinstance(ev["summary"], str) and len(ev["summary"]) > 60
    assert ev["bar_unit"] in ("s", "fraction") and ev["bars"]
    for label, value in ev["bars"]:
        assert label and math.isfinite(value) and value > 0
    assert m.evidence()["summary"] == ev["summary"], "evidence must be deterministic"


def test_myth_lookup_and_bad_key():
    assert content.myth("barriers").key == "barriers"
    with pytest.raises(ValueError, match="key"):
        content.myth("no-such-myth")


def test_barrier_myth_evidence_obeys_max_of_sums_rule():
    ev = content.myth("barriers").evidence()
    # max_g sum_p t <= sum_p max_g t, and the average GPU's work is below both
    assert ev["every_phase_s"] >= ev["one_barrier_s"] >= ev["mean_gpu_s"]
    assert ev["extra_barrier_cost"] > 0.0


def test_naive_software_costs_n_times_the_ring():
    ev = content.myth("hardware_is_enough").evidence()
    # gather+broadcast through one GPU: 2(N-1) S/B; ring: 2(N-1)/N S/B  -> ratio N = 8
    assert ev["collective_ratio"] == pytest.approx(8.0)
    s = 7e9 * 2
    b = 18 * 2 * 100e9 / 8                     # H100: 18 links x 2 lanes x 100 Gb/s
    assert ev["ring_s"] == pytest.approx(2 * 7 / 8 * s / b)


def test_domain_limit_ratio_from_lane_counts():
    ev = content.myth("no_domain_limit").evidence()
    nvlink = 18 * 2 * 100e9 / 8                # bytes/s per direction
    ndr = 400e9 / 8
    assert ev["p2p_ratio"] == pytest.approx(nvlink / ndr)
    times = list(ev["time_s"].values())
    assert times[0] < times[1] < times[2], "in node < 8 NICs a node < 1 NIC a node"


def test_small_message_myth_uses_the_measured_csv():
    path = REPO / "course_lib" / "data" / "calibration_measurements.csv"
    rows = [r for r in csv.DictReader(path.open(encoding="utf-8"))
            if r["collective"] == "AllReduce" and r["system"].startswith("H100")]
    peak = max(float(r["busbw_GBps"]) for r in rows)
    at = [float(r["busbw_GBps"]) for r in rows if int(r["bytes"]) == 262144][0]
    ev = content.myth("small_messages").evidence()
    assert ev["measured_share_at_256kB"] == pytest.approx(at / peak)
    assert ev["measured_share_at_256kB"] < 0.05
    # model: the same measure from the predictor -- AllReduce busbw at 256 KiB over
    # its busbw at the measured plateau's size (not a point-to-point copy)
    big = max((r for r in rows), key=lambda r: float(r["busbw_GBps"]))
    dgx = cl.cluster("H100")
    small_p = cl.predict_collective("allreduce", 262144, dgx)
    big_p = cl.predict_collective("allreduce", int(big["bytes"]), dgx)
    assert ev["model_256kB_share"] == pytest.approx(
        small_p.busbw_bytes_per_s / big_p.busbw_bytes_per_s, rel=1e-12)
    assert ev["model_256kB_time_s"] == pytest.approx(small_p.time_s)
    # both sides are AllReduce busbw shares: they agree within a factor of 2
    assert 0.5 < ev["model_256kB_share"] / ev["measured_share_at_256kB"] < 2
    assert "predicted" in ev["bars"][1][0] and "AllReduce" in ev["bars"][1][0]


# --- interview questions -----------------------------------------------------
def test_overlap_question_uses_the_courses_one_overlap_model():
    """The seed's key, max(T_comp, T_comm), is the bound chapter 8 calls unreachable."""
    q = next(q for q in content.INTERVIEW_QUESTIONS if q.source.endswith("面试题 Q7")
             and q.source.startswith("seed 003"))
    (k,) = q.answer
    assert "forward" in q.options[k] and "backward" in q.options[k]
    t_fwd_plus_max = cl.traffic.overlap_step_time_s(0.9, 0.8)
    assert t_fwd_plus_max == pytest.approx(0.9 / 3 + max(0.6, 0.8))
    assert t_fwd_plus_max > max(0.9, 0.8)        # the seed's answer is too optimistic


def test_twenty_questions_ten_from_each_seed():
    qs = content.INTERVIEW_QUESTIONS
    assert len(qs) == 20 and all(isinstance(q, Question) for q in qs)
    for seed in SEED_KEYS:
        nums = sorted(int(q.source.rsplit("Q", 1)[1]) for q in qs if q.source.startswith(seed))
        assert nums == list(range(1, 11)), seed


@pytest.mark.parametrize("i", range(20))
def test_question_keyed_explained_and_matching_the_seed(i):
    q = content.INTERVIEW_QUESTIONS[i]
    seed, number = q.source.rsplit(" Q", 1)
    letters = SEED_KEYS[seed][int(number) - 1]
    order = SEED_OPTION_ORDER[seed][int(number) - 1]
    assert sorted(order) == list("ABCD")
    if (seed, int(number)) in SEED_CORRECTIONS:
        corrected = SEED_CORRECTIONS[seed, int(number)][0]
        assert corrected != letters
        # the seed's own key is offered and explained as wrong
        assert order.index(letters) in q.why_wrong
        letters = corrected
    assert q.answer == frozenset(order.index(c) for c in letters)
    assert len(q.options) == 4 and len(q.explanation) > 40
    wrong = set(range(len(q.options))) - set(q.answer)
    assert set(q.why_wrong) == wrong, "every wrong option needs an explanation"
    assert all(len(q.why_wrong[k]) > 10 for k in wrong)
    assert check(q, set(q.answer))[0] is True
    for k in wrong:
        ok, text = check(q, {k})
        assert ok is False and text == q.why_wrong[k]


def _every_quiz():
    return [(c, q) for c in range(1, 12) for q in content.chapter_quiz(c)]


def test_right_answers_spread_over_the_positions():
    """A learner who always picks one letter must not pass: no position holds more
    than 40 % of the single-answer keys, and the multiple-answer keys vary (not
    always A, B and C)."""
    quizzes = _every_quiz()
    single = collections.Counter(next(iter(q.answer)) for _c, q in quizzes if not q.multiple)
    n_single = sum(single.values())
    assert n_single >= 40
    worst, count = single.most_common(1)[0]
    assert count <= 0.4 * n_single, (f"option {'ABCDE'[worst]} is right in {count} of "
                                     f"{n_single} single-answer questions: {dict(single)}")
    assert len(single) >= 4, f"right answers only at positions {sorted(single)}"
    multi = collections.Counter(tuple(sorted(q.answer)) for _c, q in quizzes if q.multiple)
    n_multi = sum(multi.values())
    assert n_multi >= 5
    assert len(multi) >= 4 and multi.most_common(1)[0][1] <= n_multi / 2, (
        f"multiple-answer keys: {dict(multi)}")
    # where the right options sit: each position is right somewhere
    positions = collections.Counter(k for _c, q in quizzes if q.multiple for k in q.answer)
    assert set(positions) >= {0, 1, 2, 3}


def test_every_wrong_option_of_every_quiz_keeps_its_explanation():
    for c, q in _every_quiz():
        wrong = set(range(len(q.options))) - set(q.answer)
        assert set(q.why_wrong) == wrong, f"chapter {c}: {q.prompt[:60]!r}"
        for k in wrong:
            assert check(q, {k}) == (False, q.why_wrong[k])
        # explanations name options by what they say, never by a letter that moves
        for text in [q.explanation, *q.why_wrong.values()]:
            assert not re.search(r"\b(option|answer|choice)s? [A-E]\b", text), (c, text)


def test_single_and_multiple_choice_both_present():
    kinds = {q.multiple for q in content.INTERVIEW_QUESTIONS}
    assert kinds == {True, False}


def test_direction_is_said_for_the_900_gb_question():
    q = next(q for q in content.INTERVIEW_QUESTIONS if q.source == "seed 003, 面试题 Q3")
    right = q.options[next(iter(q.answer))]
    assert "both directions" in right and "450" in right


def test_fixes_name_real_questions():
    sources = {q.source for q in content.INTERVIEW_QUESTIONS}
    assert content.QUESTION_FIXES and set(content.QUESTION_FIXES) <= sources
    assert "seed 003, 面试题 Q9" in content.QUESTION_FIXES


@pytest.mark.parametrize("chapter", [7, 8, 9, 10])
def test_chapter_quizzes_complete(chapter):
    qs = content.CHAPTER_QUESTIONS[chapter]
    assert len(qs) >= 2
    for q in qs:
        assert set(q.why_wrong) == set(range(len(q.options))) - set(q.answer)


@pytest.mark.parametrize("chapter", range(1, 12))
def test_multiple_choice_hint_said_once(chapter):
    """The quiz adds "(choose all that apply)" to a multiple-choice prompt; a
    bank prompt that says it too would show it twice."""
    from course_lib.quiz import prompt_text

    qs = content.chapter_quiz(chapter) + (content.INTERVIEW_QUESTIONS if chapter == 11 else [])
    for q in qs:
        shown = prompt_text(q).lower()
        assert shown.count("all that apply") == (1 if q.multiple else 0), q.prompt
        assert "all that apply" not in q.prompt.lower(), \
            f"chapter {chapter}: the bank's prompt says the hint itself: {q.prompt!r}"


def test_chapter_9_rule_question_is_strong_scaling():
    """Q1 keys the seeds' rule as strong scaling with a ring (T_comm = 2S/B)."""
    q = content.CHAPTER_QUESTIONS[9][0]
    right = q.options[next(iter(q.answer))]
    assert "N / (1 + (N-1) 2S/(B T_1))" in right
    t1, s, b = 0.8, 14e9, 450e9
    for n in (2, 8, 1024):
        t_n = t1 / n + 2 * (n - 1) / n * s / b
        assert t1 / t_n == pytest.approx(n / (1 + (n - 1) * 2 * s / (b * t1)), rel=1e-12)
    q8 = next(q for q in content.INTERVIEW_QUESTIONS if q.source == "seed 000, 面试题 Q8")
    assert "strong scaling" in q8.explanation and "2S/B" in q8.explanation
    assert "charges (N-1) T_comm" not in q8.explanation


def test_chapter_9_amdahl_question_matches_formula():
    q = content.CHAPTER_QUESTIONS[9][1]
    right = q.options[next(iter(q.answer))]
    assert str(round(1 / (0.01 + 0.99 / 1000))) in right


# --- glossary and what comes next ---------------------------------------------
def test_glossary_has_30_terms_with_chinese_and_english():
    g = content.GLOSSARY
    assert len(g) >= 30
    assert len({zh for zh, *_ in g}) == len(g), "duplicate Chinese terms"
    for zh, en, meaning, chapter in g:
        assert CJK.search(zh), zh
        assert en and not CJK.search(en) and meaning
        assert 1 <= chapter <= 11
    terms = {zh for zh, *_ in g}
    for must in ("锁页内存", "内核旁路", "拓扑感知调度", "木桶效应", "通信计算重叠"):
        assert must in terms


def test_next_lists_the_four_directions_with_sources():
    names = " ".join(item["name"] for item in content.NEXT)
    for word in ("NVLink 5", "NVLink-C2C", "ptic", "UALink"):
        assert word in names
    assert all(item["source"] for item in content.NEXT)
    nv5 = content.NEXT[0]
    assert nv5["per_dir_bytes_per_s"] == pytest.approx(18 * 2 * 200e9 / 8)
    assert nv5["bidir_bytes_per_s"] == pytest.approx(2 * nv5["per_dir_bytes_per_s"])
    c2c = next(i for i in content.NEXT if i["name"] == "NVLink-C2C")
    assert c2c["per_dir_bytes_per_s"] * 2 == pytest.approx(c2c["bidir_bytes_per_s"])


def test_calibration_rows_missing_file_is_empty(tmp_path):
    assert content.calibration_rows(str(tmp_path / "none.csv")) == []


def test_chapter_8_overlap_question_hides_only_behind_backward():
    q = content.CHAPTER_QUESTIONS[8][1]
    right = float(q.options[next(iter(q.answer))].split()[0])
    fwd, bwd, comm = 0.8 / 3, 1.6 / 3, 0.6
    assert right == pytest.approx(fwd + max(bwd, comm), abs=0.005)
    assert "backward" in q.prompt and "backward" in q.explanation


def test_chapter_10_decode_message_size_and_overlap_interview_answer():
    q = content.CHAPTER_QUESTIONS[10][0]
    assert "16 KiB" in q.prompt and 1 * 8192 * 2 == 16 * 1024     # batch x hidden x 2 B
    assert "tens of nanoseconds" in q.explanation and 10e-9 < 16384 / 300e9 < 100e-9
    q7 = next(q for q in content.INTERVIEW_QUESTIONS if q.source == "seed 003, 面试题 Q7")
    assert "backward" in q7.explanation and "seed 003, 面试题 Q7" in content.QUESTION_FIXES
    q4 = next(q for q in content.INTERVIEW_QUESTIONS if q.source == "seed 003, 面试题 Q4")
    assert "PCIe peer-to-peer" in q4.explanation


def test_myths_overlap_only_behind_the_backward_pass():
    """Myths 3 and 6: the overlapped step is T_fwd + max(T_bwd, T_comm), not max(T, T_comm)."""
    h = cl.gpu("H100")
    ring = cl.ring_allreduce_time_s(14e9, 8, h.nvlink_bw_per_dir_bytes_per_s)
    ev = content.myth("hardware_is_enough").evidence()
    assert ev["step_good_s"] == pytest.approx(0.8 / 3 + max(1.6 / 3, ring))
    box = content.myth("box_flies").evidence()
    pc = cl.ring_allreduce_time_s(14e9, 8, cl.pcie_bw_per_dir_bytes_per_s(5))
    nv = cl.ring_allreduce_time_s(14e9, 8, h.nvlink_bw_per_dir_bytes_per_s)
    assert box["gain_with_overlap"] == pytest.approx(
        (0.8 / 3 + max(1.6 / 3, pc)) / (0.8 / 3 + max(1.6 / 3, nv)))
    assert "backward" in box["summary"]


# --- the bank: data files, one entry point ------------------------------------
BANK = REPO / "course_lib" / "content_bank"


def bank_files(lang="en"):
    return sorted((BANK / lang).glob("ch*.yaml"))


def test_one_file_per_chapter_each_naming_its_chapter():
    files = bank_files()
    assert [f.name for f in files] == [f"ch{c:02d}.yaml" for c in range(1, 12)]
    for f in files:
        assert yaml.safe_load(f.read_text(encoding="utf-8"))["chapter"] == int(f.stem[2:])
    assert content.languages() == ["en"]


@pytest.mark.parametrize("chapter", range(1, 12))
def test_every_chapter_quiz_comes_from_its_file(chapter):
    doc = yaml.safe_load((BANK / "en" / f"ch{chapter:02d}.yaml").read_text(encoding="utf-8"))
    qs = content.chapter_quiz(chapter)
    assert len(qs) == len(doc["quiz"]) >= 2
    for q, entry in zip(qs, doc["quiz"]):
        assert q.answer == frozenset("ABCDEFGH".index(a) for a in entry["answer"])
        assert set(q.why_wrong) == set(range(len(q.options))) - set(q.answer)
        if "values" not in doc:          # no {fields}: the text is the file's, as is
            assert q.prompt == entry["prompt"] and list(q.options) == entry["options"]


@pytest.mark.parametrize("chapter", [*range(1, 7), 11])
def test_values_fill_every_field_and_every_value_is_used(chapter):
    doc = yaml.safe_load((BANK / "en" / f"ch{chapter:02d}.yaml").read_text(encoding="utf-8"))
    values = content.QUIZ_VALUES[doc["values"]]()
    fields = set()
    texts = [t for entry in doc["quiz"]
             for t in [entry["prompt"], *entry["options"], entry["explanation"],
                       *entry.get("why_wrong", {}).values()]]
    texts += list((doc.get("question_fixes") or {}).values())        # filled too (chapter 11)
    texts += [m["truth"] for m in doc.get("myths") or []]
    for text in texts:
        text = content.CITE_FIELD.sub(" ", text)
        fields |= {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    assert fields <= set(values), "a {field} without a value"
    # every value is read by the quiz or bound in the chapter's prose (issue 30)
    from course_lib.apps.prose import BOUND
    (nb,) = (REPO / "notebooks").glob(f"{chapter:02d}_*.ipynb")
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    bound = {m.group(1) for c in cells if c["cell_type"] == "markdown"
             for m in BOUND.finditer("".join(c["source"]))}
    unused = set(values) - fields - bound
    assert not unused, f"values neither the quiz nor the prose uses: {sorted(unused)}"
    for q in content.chapter_quiz(chapter):
        for text in (q.prompt, *q.options, q.explanation, *q.why_wrong.values()):
            assert "{" not in text and "}" not in text, text


def test_chapter_quiz_old_names_are_the_same_questions():
    # the old forwarding module course_lib.quiz_bank_ch01_06 is gone (issue 20)
    assert not (REPO / "course_lib" / "quiz_bank_ch01_06.py").exists()
    for c in (7, 8, 9, 10):
        assert content.CHAPTER_QUESTIONS[c] == content.chapter_quiz(c)
    assert content.INTERVIEW_QUESTIONS == content.chapter_quiz(11)
    seed0 = content.chapter_quiz(11, source="seed 000")
    seed3 = content.chapter_quiz(11, source="seed 003")
    assert seed0 + seed3 == content.INTERVIEW_QUESTIONS and len(seed0) == len(seed3) == 10
    assert content.chapter_quiz(11, source="the heterogeneous-communication article") == seed0
    assert content.chapter_quiz(11, source="the NVLink article") == seed3


def test_chapter_quiz_rejects_bad_input_by_name():
    with pytest.raises(ValueError, match="chapter"):
        content.chapter_quiz(0)
    with pytest.raises(ValueError, match="chapter"):
        content.chapter_quiz(12)
    with pytest.raises(ValueError, match="lang"):
        content.chapter_quiz(7, lang="xx")
    with pytest.raises(ValueError, match="source"):
        content.chapter_quiz(11, source="seed 999")


def test_a_chapter_missing_from_a_language_is_an_error_not_an_empty_quiz(monkeypatch):
    monkeypatch.setattr(content, "_read", lambda chapter, lang: {})
    with pytest.raises(ValueError, match="no quiz in lang 'en'"):
        content.chapter_quiz(5)


def test_myths_name_their_evidence_by_key():
    doc = yaml.safe_load((BANK / "en" / "ch11.yaml").read_text(encoding="utf-8"))
    keys = [m["evidence"] for m in doc["myths"]]
    assert keys == list(content.EVIDENCE) and len(set(keys)) == 8
    assert [m.evidence for m in content.MYTHS] == [content.EVIDENCE[k] for k in keys]


def test_glossary_is_read_from_the_chapter_files():
    per_file = [(g["zh"], c) for c in range(1, 12) for g in yaml.safe_load(
        (BANK / "en" / f"ch{c:02d}.yaml").read_text(encoding="utf-8")).get("glossary", [])]
    assert [(zh, ch) for zh, _en, _m, ch in content.GLOSSARY] == per_file


def test_bank_rates_pass_the_notebooks_literal_check():
    """The bank is text outside the notebooks: hold it to test_no_literals' rule."""
    spec = importlib.util.spec_from_file_location("no_literals", REPO / "tests" /
                                                  "test_no_literals.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    assert rules.rate_problems("an H100 link of 43 GB/s") == ["43 GB/s"]
    texts = [t for c in range(1, 12) for q in content.chapter_quiz(c)
             for t in (q.prompt, *q.options, q.explanation, *q.why_wrong.values())]
    texts += [t for m in content.MYTHS for t in (m.claim, m.truth)]
    texts += list(content.QUESTION_FIXES.values()) + [g[2] for g in content.GLOSSARY]
    assert len(texts) > 500
    assert [(t, rules.rate_problems(t)) for t in texts if rules.rate_problems(t)] == []


@pytest.mark.parametrize("chapter", range(0, 12))
def test_notebook_quiz_cells_use_the_one_entry_point(chapter):
    path = next((REPO / "notebooks").glob(f"{chapter:02d}_*.ipynb"))
    code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                     if c["cell_type"] == "code")
    shown = re.findall(r"quiz\.show\((.*)\)", code)
    assert shown and all(s.startswith("cl.content.chapter_quiz(") for s in shown), shown
    if chapter:
        assert f"chapter_quiz({chapter}" in code


def test_package_data_ships_every_bank_file():
    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["course_lib.content_bank"]
    shipped = {p for g in globs for p in BANK.glob(g)}
    yaml_files = set(BANK.rglob("*.yaml"))
    assert yaml_files <= shipped and len(yaml_files) == 11



# --- issue 20 -------------------------------------------------------------------------
@pytest.mark.parametrize("chapter", [7, 8, 9, 10])
def test_traffic_chapters_have_five_questions_or_more(chapter):
    assert len(content.chapter_quiz(chapter)) >= 5


def test_traffic_quizzes_cover_the_topics_a_learner_expects():
    text = {c: " ".join(q.prompt + " " + " ".join(q.options) + " " + q.explanation
                        for q in content.chapter_quiz(c)) for c in (7, 8, 9, 10)}
    for needle in ("NVLS-tree", "ZeRO-3", "AllToAll", "bisection"):
        assert needle in text[7], needle
    assert "bucket" in text[8] and "SMs" in text[8]
    assert "strong" in text[9].lower() and "weak" in text[9].lower()


def test_zero3_traffic_is_one_and_a_half_ddp():
    n, s = 64, 1e9
    ddp = cl.busbw_factor("allreduce", n) * s               # 2(n-1)/n S
    zero3 = 3 * cl.busbw_factor("allgather", n) * s         # AG + AG + RS
    assert zero3 / ddp == pytest.approx(1.5)
    q = next(q for q in content.chapter_quiz(7) if "ZeRO-3" in q.prompt)
    assert "1.5x" in q.options[next(iter(q.answer))]


def test_ch09_mtotal_question_says_total_traffic_grows_but_time_per_gpu_does_not():
    q = next(q for q in content.chapter_quiz(9) if "M_total" in q.prompt)
    right = q.options[next(iter(q.answer))]
    assert "2(N-1) S" in right and "2(N-1)/N S" in right
    # the old key called M_total "memory held, not traffic"
    assert "memory held, not" not in q.explanation
    n, s = 1024, 14e9
    assert n * cl.ring_allreduce_bytes_per_rank(s, n) == pytest.approx(2 * (n - 1) * s)


def test_ch10_quiz_numbers_come_from_the_scenarios():
    q = content.chapter_quiz(10)[2]
    cut = cl.scenarios.tp_token_latency()["ttft_cut"]
    assert f"{cut:.1%}".replace("%", " %") in q.prompt
    fast = cl.scenarios.tp_token_latency(efficiency=0.9)["ttft_cut"]
    assert fast > cut + 0.1 and f"{fast:.0%}".replace("%", " %") in q.explanation
    # within the model's context the cut hardly moves; far beyond it attention's L^2 takes over
    for load in (0.25, 2):
        assert cl.scenarios.tp_token_latency(load=load)["ttft_cut"] == pytest.approx(cut, abs=0.005)
    long = cl.scenarios.tp_token_latency(load=100)
    assert long["beyond_context"] and long["ttft_cut"] < cut - 0.15
    assert f"{long['ttft_cut']:.0%}".replace("%", " %") in q.why_wrong[0]


def test_ch03_quiz_does_not_say_only_the_full_bundle_beats_pcie():
    q = content.chapter_quiz(3)[1]
    assert "Only the full bundle" not in q.why_wrong[0]
    two = 2 * cl.gpu("H100").nvlink_per_link_per_dir_bytes_per_s
    assert two > cl.pcie_bw_per_dir_bytes_per_s(5) / 2     # two links beat staging everywhere
    assert cl.format_bandwidth(two) in q.why_wrong[0]


def test_myth_six_uses_the_same_allreduce_as_chapters_8_and_9():
    ev = content.myth("box_flies").evidence()
    pcie = cl.predict_collective("allreduce", cl.gradient_bytes(7e9),
                                 cl.cluster("H100", fabric="pcie")).time_s
    assert ev["allreduce_pcie_s"] == pytest.approx(pcie)
    assert 0.5 < ev["allreduce_pcie_s"] < 0.55          # 522 ms, not the ideal 389 ms


def test_myth_one_does_not_say_rdma_is_the_only_road_between_servers():
    m = content.myth("nvlink_everywhere")
    assert "RDMA is the only" not in m.truth
    assert "TCP" in m.truth


def lat(name):
    return cl.LATENCIES[name].value


def test_myth_one_small_messages_rank_neighbour_before_other_server():
    ev = content.myth("nvlink_everywhere").evidence()
    small = ev["small_4kB_s"]
    assert small["p2p-nvlink"] < small["rdma"]


def test_myth_dma_cpu_time_uses_the_derived_api_cost():
    ev = content.myth("dma_cpu_idle").evidence()
    assert ev["cpu_issue_s"] == pytest.approx(10_000 * lat("cuda_api_call"))
    # the job itself: each copy waited for, at the measured end-to-end start-up
    bw = cl.host_copy_bw_bytes_per_s(5, measured=True)
    assert ev["one_by_one_s"] == pytest.approx(10_000 * (lat("pcie_small_copy_sync") + 4096 / bw))
    assert ev["one_by_one_s"] > ev["cpu_issue_s"]
