"""The course's words as data: every chapter's quiz, the 8 myths, the 20
interview questions, the zh/en glossary -- and what comes next.

The text lives in one chapter-keyed bank of YAML files,
``course_lib/content_bank/<lang>/chNN.yaml`` (``en`` today; a translation is a
second folder with the same files and keys).  What must be computed stays here,
in Python, and the data names it by key:

* a myth's ``evidence`` key names a function in :data:`EVIDENCE` that computes
  its case from the course's models (and, for the small-message myth, from the
  measured nccl-tests curve in ``course_lib/data/calibration_measurements.csv``);
* a chapter file's ``values`` key names a function in :data:`QUIZ_VALUES`
  whose catalog-derived strings fill the ``{name}`` fields of its questions, so
  a quiz never disagrees with the hardware catalog.

One entry point serves every chapter's quiz: ``chapter_quiz(7)`` returns the
questions as :class:`course_lib.quiz.Question` objects, and a notebook shows
them with ``cl.quiz.show(cl.content.chapter_quiz(7))``.  :func:`myths`,
:func:`interview_questions`, :func:`question_fixes` and :func:`glossary` read
the rest; each takes ``lang="en"``.  The English bank is also kept under the
module names older code uses (:data:`MYTHS`, :data:`INTERVIEW_QUESTIONS`,
:data:`CHAPTER_QUESTIONS`, :data:`QUESTION_FIXES`, :data:`GLOSSARY`).
:data:`NEXT` (NVLink 5, NVLink-C2C, optical links, UALink) is built from the
catalog here.

Seeds: ``000`` is the heterogeneous-communication article (城市交通 overview),
``003`` the NVLink article (磁悬浮专线).  Where our answer or explanation
differs from a seed's, :func:`question_fixes` says so.

Examples
--------
>>> len(MYTHS), len(INTERVIEW_QUESTIONS), len(GLOSSARY) >= 30
(8, 20, True)
>>> myth("barriers").evidence()["extra_barrier_cost"] > 0
True
>>> [len(chapter_quiz(c)) >= 2 for c in range(1, 12)] == [True] * 11
True
>>> chapter_quiz(2)[0].options[3]     # filled from the catalog
'P100'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from functools import lru_cache
from importlib import resources

import re

import yaml

from .analytic import (batched_transfer_time_s,
                       effective_utilisation, fibre_rtt_s, gradient_bytes,
                       host_copy_bw_bytes_per_s,
                       iteration_time_s, ring_allreduce_time_s,
                       route_crossover_bytes, route_parameters, route_transfer_time_s)
from .hardware import pageable_extra_time_s
from .hardware import (FUTURE_LINKS, MEASURED, NVLINK_GENERATIONS, calibration_data_path,
                       calibration_rows, gpu, latency_s, nic, nvlink_generation,
                       pcie_bw_per_dir_bytes_per_s, system)
from .quiz import Question
from .topology import fully_connected_topology, link_count
from .traffic import barrier_step_time_s, straggler_phase_times_s
from .values import chapter_values
from .units import check_choice, check_int, format_bandwidth, format_bytes, format_time

__all__ = ["chapter_quiz", "myths", "interview_questions", "question_fixes", "source_label", "glossary",
           "languages", "EVIDENCE", "QUIZ_VALUES",
           "Myth", "MYTHS", "myth", "myth_keys", "INTERVIEW_QUESTIONS", "CHAPTER_QUESTIONS",
           "QUESTION_FIXES", "GLOSSARY", "NEXT", "calibration_rows",
           "CALIBRATION_CSV"]

#: Where the measured collective and copy curves live (package data).
CALIBRATION_CSV = str(calibration_data_path())


@dataclass(frozen=True)
class Myth:
    """One misconception from a seed article, and the evidence against it.

    Parameters
    ----------
    key : str
        Short name.
    source : str
        Seed article and section, e.g. ``"seed 000, 常见误区 #1"``.
    claim : str
        The misconception, in our words.
    verdict : str
        ``"false"``, ``"misleading"`` or ``"half true"``.
    truth : str
        What is right instead.
    evidence : callable
        ``evidence() -> dict`` of numbers from the models (and a
        ``"summary"`` string); no arguments, deterministic.
    kind : str
        Where the evidence comes from: ``"model"``, ``"simulation"``,
        ``"measurement"``.
    chapter : int
        The chapter that teaches the physics behind it.
    """

    key: str
    source: str
    claim: str
    verdict: str
    truth: str
    evidence: Callable[[], dict] = field(repr=False)
    kind: str = "model"
    chapter: int = 11


# ---------------------------------------------------------------------------
# evidence: each a few model calls, numbers only from the catalog
# ---------------------------------------------------------------------------
def _ev_nvlink_everywhere():
    gb = 1e9
    h2d = route_transfer_time_s(gb, "h2d", gpu="H100")
    nv = route_transfer_time_s(gb, "p2p-nvlink", gpu="H100")
    rd = route_transfer_time_s(gb, "rdma", gpu="H100", nic="NDR")
    small = {r: route_transfer_time_s(4096, r, gpu="H100")
             for r in ("h2d", "p2p-nvlink", "rdma")}
    return {"h2d_1GB_s": h2d, "nvlink_1GB_s": nv, "rdma_1GB_s": rd,
            "small_4kB_s": small, "bar_unit": "s",
            "bars": [("1 GB host->GPU (PCIe only)", h2d),
                     ("1 GB GPU->GPU, NVLink", nv),
                     ("1 GB GPU->other server, RDMA", rd)],
            "summary": (f"1 GB host->GPU can only take PCIe: {format_time(h2d)}. "
                        f"GPU->GPU in the same server over NVLink: {format_time(nv)}; "
                        f"to another server NVLink does not reach, RDMA takes "
                        f"{format_time(rd)}. For 4 KiB every road costs a few "
                        f"microseconds of start-up: "
                        + ", ".join(f"{k} {format_time(v)}" for k, v in small.items())
                        + ". Each road has its own job.")}


def _ev_dma_cpu_idle():
    n, size = 10_000, 4096
    api = latency_s("cuda_api_call")             # the host's share of one copy
    alpha = latency_s("pcie_small_copy_sync")    # one copy, end to end
    bw = host_copy_bw_bytes_per_s(5, "pinned", measured=True)
    one_by_one = batched_transfer_time_s(n, size, bw, alpha, batched=False)
    merged = batched_transfer_time_s(n, size, bw, alpha, batched=True)
    cpu_busy = n * api
    return {"n_copies": n, "cpu_issue_s": cpu_busy, "one_by_one_s": one_by_one,
            "merged_s": merged, "speedup": one_by_one / merged, "bar_unit": "s",
            "bars": [("10,000 copies one by one", one_by_one),
                     ("CPU time issuing them", cpu_busy), ("one merged copy", merged)],
            "summary": (f"{n:,} separate 4 KiB copies: the CPU spends about "
                        f"{format_time(cpu_busy)} issuing and completing them "
                        f"({format_time(api)} of host work per copy, measured on an "
                        f"H200), and the whole job, waiting for each copy, takes "
                        f"{format_time(one_by_one)}; merged into one copy (the pieces "
                        f"already in one pinned buffer: gathering them is a pass of its "
                        f"own, chapter 4) it takes {format_time(merged)} "
                        f"({one_by_one / merged:.0f}x faster). DMA frees the CPU from moving bytes, not from "
                        "setting up and completing the moves.")}


def _ev_hardware_is_enough():
    h100 = gpu("H100")
    s, n, b = gradient_bytes(7e9), 8, h100.nvlink_bw_per_dir_bytes_per_s
    # naive software: gather all gradients on one GPU, then send the sum back
    naive = 2 * (n - 1) * s / b
    ring = ring_allreduce_time_s(s, n, b)
    t_comp = 0.8  # the seed's own compute time per step, seconds
    worst = iteration_time_s(t_comp, naive, overlap=False)
    # buckets overlap the backward pass only (about 2/3 of the compute, chapter 8)
    best = t_comp / 3 + iteration_time_s(2 * t_comp / 3, ring, overlap=True)
    return {"naive_s": naive, "ring_s": ring, "collective_ratio": naive / ring,
            "step_naive_s": worst, "step_good_s": best, "step_ratio": worst / best,
            "bar_unit": "s",
            "bars": [("gather + send back", naive), ("ring AllReduce", ring),
                     ("step, naive, no overlap", worst),
                     ("step, ring, overlapped", best)],
            "summary": (f"Same 8 x H100, same 14 GB of gradients. Naive software "
                        f"(gather on one GPU, send back): {format_time(naive)}. "
                        f"A ring AllReduce: {format_time(ring)} ({naive / ring:.0f}x). "
                        f"With the NVLink article's 0.8 s of compute, naive and serial vs a "
                        f"ring overlapped with the backward pass makes the step {format_time(worst)} vs {format_time(best)} "
                        f"({worst / best:.1f}x). The roads are the same; the "
                        "traffic plan is not.")}


def _ev_barriers():
    t = straggler_phase_times_s(8, 24, 0.01, jitter=0.1, seed=7)
    every = barrier_step_time_s(t, every_phase=True)
    once = barrier_step_time_s(t, every_phase=False)
    ideal = float(t.mean(axis=0).sum())
    return {"every_phase_s": every, "one_barrier_s": once, "mean_gpu_s": ideal,
            "extra_barrier_cost": every / once - 1, "bar_unit": "s",
            "bars": [("barrier after every layer", every),
                     ("one barrier per step", once), ("average GPU's work", ideal)],
            "summary": (f"8 GPUs, 24 layers of 10 ms each with 10 % random noise "
                        f"(simulated, fixed seed). A barrier after every layer: "
                        f"{format_time(every)} a step; one barrier at the end (the "
                        f"AllReduce): {format_time(once)}. The extra lights cost "
                        f"{every / once - 1:.0%} and add no correctness: the "
                        "AllReduce already makes every GPU wait for the same "
                        "gradients.")}


def _ev_nvlink_is_pcie():
    h100 = gpu("H100")
    rows = {}
    for size in (4096, 1e9):
        rows[size] = (route_transfer_time_s(size, "p2p-staged", gpu="H100"),
                      route_transfer_time_s(size, "p2p-nvlink", gpu="H100"))
    ratio_bw = h100.nvlink_bw_per_dir_bytes_per_s / pcie_bw_per_dir_bytes_per_s(5)
    staged = MEASURED["p2p_staged_8xH100"].value      # NVIDIA/nccl#1264, P2P disabled
    return {"staged_4kB_s": rows[4096][0], "nvlink_4kB_s": rows[4096][1],
            "staged_1GB_s": rows[1e9][0], "nvlink_1GB_s": rows[1e9][1],
            "bandwidth_ratio": ratio_bw, "bar_unit": "s",
            "bars": [("1 GB staged through host", rows[1e9][0]),
                     ("1 GB over NVLink", rows[1e9][1])],
            "summary": (f"GPU to GPU through host memory over PCIe crosses PCIe twice "
                        f"and pays the host's start-up: 4 KiB takes "
                        f"{format_time(rows[4096][0])}, 1 GB {format_time(rows[1e9][0])} "
                        f"(one leg after the other: the driver pipelines the legs, and "
                        f"measured it moves {format_bandwidth(staged)} per direction, "
                        f"{format_time(1e9 / staged)} for 1 GB)."
                        f" Over NVLink: {format_time(rows[4096][1])} and "
                        f"{format_time(rows[1e9][1])}. The bandwidth alone differs "
                        f"{ratio_bw:.1f}x (per direction). Where PCIe peer-to-peer "
                        "works (same PCIe switch) the host copy disappears too, but "
                        "the bandwidth stays PCIe's; NVLink adds its own route, "
                        "loads, stores and atomics to peer memory at NVLink "
                        "bandwidth, and NVSwitch to scale it.")}


def _ev_box_flies():
    from .predict import cluster, predict_collective
    from .traffic import overlap_step_time_s

    s = gradient_bytes(7e9)
    # the same AllReduces as chapters 8 and 9: the predictor on 8 x H100, NVLink or PCIe only
    nv = predict_collective("allreduce", s, cluster("H100")).time_s
    pc = predict_collective("allreduce", s, cluster("H100", fabric="pcie")).time_s
    t_comp, t_data = 0.8, 1.0  # seed's compute; a CPU data loader, seconds
    loader = {k: t_data + iteration_time_s(t_comp, c, overlap=False)
              for k, c in (("pcie", pc), ("nvlink", nv))}
    # buckets overlap the backward pass only: T_fwd + max(T_bwd, T_comm)
    overlapped = {k: overlap_step_time_s(t_comp, c)
                  for k, c in (("pcie", pc), ("nvlink", nv))}
    return {"allreduce_nvlink_s": nv, "allreduce_pcie_s": pc,
            "gain_with_slow_loader": loader["pcie"] / loader["nvlink"],
            "gain_with_overlap": overlapped["pcie"] / overlapped["nvlink"],
            "bar_unit": "s",
            "bars": [("step, PCIe, slow loader", loader["pcie"]),
                     ("step, NVLink, slow loader", loader["nvlink"]),
                     ("step, PCIe, overlapped", overlapped["pcie"]),
                     ("step, NVLink, overlapped", overlapped["nvlink"])],
            "summary": (f"7B, 8 x H100, the predictor (NCCL's rates): AllReduce "
                        f"{format_time(nv)} on NVLink (NCCL's NVLS: the switch adds) vs "
                        f"{format_time(pc)} on PCIe Gen5 (NCCL's planning rate, below the "
                        f"line rate chapter 3 uses). With a data loader that "
                        f"stalls each step for 1 s, NVLink speeds the step up only "
                        f"{loader['pcie'] / loader['nvlink']:.2f}x; with overlap, "
                        f"PCIe's {format_time(pc)} already hides behind the "
                        f"{format_time(2 * t_comp / 3)} backward pass and NVLink gains "
                        f"{overlapped['pcie'] / overlapped['nvlink']:.2f}x. The "
                        "slowest stage sets the pace, not the fastest link.")}


def _ev_no_domain_limit():
    from .predict import cluster, predict_collective

    s = gradient_bytes(7e9)
    h100 = gpu("H100")
    port = nic("NDR").bw_per_dir_bytes_per_s
    cases = {"one node (8 GPUs, NVSwitch)": cluster("H100"),
             "128 nodes, 8 NDR NICs a node": cluster("H100", nodes=128, nic="NDR"),
             "128 nodes, 1 NDR NIC a node": cluster("H100", nodes=128, nic="NDR",
                                                    nics_per_node=1)}
    pred = {k: predict_collective("allreduce", s, c) for k, c in cases.items()}
    keys = list(cases)
    return {"time_s": {k: p.time_s for k, p in pred.items()},
            "busbw_bytes_per_s": {k: p.busbw_bytes_per_s for k, p in pred.items()},
            "p2p_ratio": h100.nvlink_bw_per_dir_bytes_per_s / port,
            "bar_unit": "s", "bars": [(k, pred[k].time_s) for k in keys],
            "summary": (f"AllReduce of 14 GB, predicted: {format_time(pred[keys[0]].time_s)}"
                        f" inside one node (busbw {format_bandwidth(pred[keys[0]].busbw_bytes_per_s)});"
                        f" {format_time(pred[keys[1]].time_s)} over 1,024 GPUs with one "
                        f"400 Gb/s NIC per GPU (busbw {format_bandwidth(pred[keys[1]].busbw_bytes_per_s)})"
                        f" -- DGX H100 carries 8 NICs precisely so that the network keeps "
                        f"up; with one NIC a node: {format_time(pred[keys[2]].time_s)} "
                        f"(busbw {format_bandwidth(pred[keys[2]].busbw_bytes_per_s)}, the NIC "
                        f"rate). And any single GPU still reaches a GPU in another node "
                        f"{h100.nvlink_bw_per_dir_bytes_per_s / port:.0f}x slower than one "
                        f"in its own node. The NVLink domain ends at the node "
                        f"({system('DGX H100').n_gpus} GPUs in a DGX H100).")}


#: Myth 8's check of the predictor: a run it was never fitted on (split "heldout" of
#: course_lib/data/validation/nccl_tests_public.csv), AllReduce on 4 x H100 (NVSwitch).
SMALL_MESSAGES_HELDOUT = "Lambda 4x H100 SXM instance"


def _heldout_small_messages(small: float) -> dict:
    """The held-out run's measured and predicted AllReduce busbw at ``small`` and at its
    plateau (:func:`course_lib.predict.validation_rows`, split "heldout")."""
    from .predict import validation_rows

    rows = [r for r in validation_rows(split="heldout")
            if r["system"].startswith(SMALL_MESSAGES_HELDOUT) and r["collective"] == "AllReduce"]
    if not rows:
        return {}
    at = min(rows, key=lambda r: abs(r["n_bytes"] - small))
    top = max(rows, key=lambda r: r["measured_busbw"])
    return {"heldout_system": at["system"], "heldout_split": at["split"],
            "heldout_measured_busbw_GBps": at["measured_busbw"] / 1e9,
            "heldout_predicted_busbw_GBps": at["predicted_busbw"] / 1e9,
            "heldout_rel_error": at["rel_error"],
            "heldout_measured_share": at["measured_busbw"] / top["measured_busbw"],
            "heldout_predicted_share": at["predicted_busbw"] / top["predicted_busbw"]}


def _ev_small_messages():
    """Myth 8: one measure on both sides -- AllReduce busbw at 256 KiB over the
    plateau, measured (nccl-tests CSV) and predicted (:func:`predict_collective`).
    The predictor is checked on a run it was not fitted on (the held-out 4 x H100
    run); on the 8 x H100 curve it was calibrated on, agreement proves nothing."""
    from .predict import cluster, predict_collective

    small = 262144
    rows = [r for r in calibration_rows()
            if r["collective"] == "AllReduce" and r["system"].startswith("H100")]
    out = {}
    dgx = cluster("H100")
    big = max(rows, key=lambda r: r["busbw_GBps"])["bytes"] if rows else 8 * 2 ** 30
    p_small = predict_collective("allreduce", small, dgx)
    p_big = predict_collective("allreduce", big, dgx)
    share = p_small.busbw_bytes_per_s / p_big.busbw_bytes_per_s
    if rows:
        rows.sort(key=lambda r: r["bytes"])
        peak = max(r["busbw_GBps"] for r in rows)
        at = min(rows, key=lambda r: abs(r["bytes"] - small))
        out.update({"measured_peak_busbw_GBps": peak,
                    "measured_256kB_busbw_GBps": at["busbw_GBps"],
                    "measured_share_at_256kB": at["busbw_GBps"] / peak})
        measured = (f"Measured on 8 x H100 (nccl-tests): AllReduce busbw is "
                    f"{at['busbw_GBps']:g} GB/s at 256 KiB against a plateau of "
                    f"{peak:g} GB/s, {at['busbw_GBps'] / peak:.0%} of it. ")
    else:
        measured = "(measured curve not found in course_lib/data/) "
    held = _heldout_small_messages(small)
    out.update(held)
    out["bar_unit"] = "fraction"
    out["bars"] = [("predicted: 256 KiB AllReduce busbw / plateau", share)]
    if rows:
        out["bars"].insert(0, ("measured: 256 KiB AllReduce busbw / plateau",
                               out["measured_share_at_256kB"]))
    if held:
        out["bars"] += [("held-out 4 x H100, measured: 256 KiB / plateau",
                         held["heldout_measured_share"]),
                        ("held-out 4 x H100, predicted: 256 KiB / plateau",
                         held["heldout_predicted_share"])]
        check = (f" Checked where it was not fitted -- a held-out nccl-tests run on 4 x H100 "
                 f"({held['heldout_system']}) -- the predictor gives "
                 f"{held['heldout_predicted_busbw_GBps']:.1f} GB/s at 256 KiB against "
                 f"{held['heldout_measured_busbw_GBps']:.1f} GB/s measured, "
                 f"{held['heldout_rel_error']:+.0%}: not exact, but the same verdict, "
                 f"{held['heldout_measured_share']:.0%} of that run's plateau measured, "
                 f"{held['heldout_predicted_share']:.0%} predicted.")
    else:
        check = ""
    out.update({"model_256kB_share": share,
                "model_256kB_time_s": p_small.time_s,
                "model_256kB_algorithm": p_small.algorithm,
                "summary": measured + (
                    f"The course's predictor (cl.predict_collective, same machine, same "
                    f"collective), calibrated on that curve, gives a 256 KiB AllReduce "
                    f"{format_time(p_small.time_s)} ({p_small.algorithm}), "
                    f"{share:.0%} of the plateau busbw -- moving the bytes takes about a "
                    f"microsecond, the launch and synchronisation the rest." + check
                    + " Small messages are paid in start-ups: bucket them.")})
    return out


#: Evidence key (as the bank's myths name it) -> ``evidence() -> dict``.
EVIDENCE: dict[str, Callable[[], dict]] = {
    "nvlink_everywhere": _ev_nvlink_everywhere,
    "dma_cpu_idle": _ev_dma_cpu_idle,
    "hardware_is_enough": _ev_hardware_is_enough,
    "barriers": _ev_barriers,
    "nvlink_is_pcie": _ev_nvlink_is_pcie,
    "box_flies": _ev_box_flies,
    "no_domain_limit": _ev_no_domain_limit,
    "small_messages": _ev_small_messages,
}


# ---------------------------------------------------------------------------
# named values: every chapter's computed numbers live in course_lib/values/chNN.py
# (its quiz fills {name} fields from them, its notebook binds its prose to them)
# ---------------------------------------------------------------------------
QUIZ_VALUES: dict[str, Callable[[], dict]] = {
    f"ch{c:02d}": (lambda c=c: chapter_values(c)) for c in range(0, 12)}


# ---------------------------------------------------------------------------
# the bank: course_lib/content_bank/<lang>/chNN.yaml
# ---------------------------------------------------------------------------
_BANK = "content_bank"
_CHAPTERS = range(1, 12)
_LETTERS = "ABCDEFGH"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where built: 5x faster


def languages() -> list[str]:
    """The languages the bank holds (folder names, e.g. ``["en"]``)."""
    root = resources.files(__package__) / _BANK
    return sorted(p.name for p in root.iterdir() if p.is_dir())


@lru_cache(maxsize=None)
def _read(chapter: int, lang: str) -> dict:
    """One chapter file, parsed (cached: callers must not change it)."""
    path = resources.files(__package__) / _BANK / lang / f"ch{chapter:02d}.yaml"
    if not path.is_file():
        return {}
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}
    if doc.get("chapter", chapter) != chapter:
        raise ValueError(f"{_BANK}/{lang}/ch{chapter:02d}.yaml says chapter "
                         f"{doc['chapter']}")
    return doc


def _chapter(chapter, lang) -> tuple[int, dict]:
    c = check_int(chapter, "chapter", minimum=_CHAPTERS.start, maximum=_CHAPTERS.stop - 1)
    return c, _read(c, check_choice(lang, "lang", languages()))


def _index(letter: str, chapter: int) -> int:
    if letter not in _LETTERS:
        raise ValueError(f"chapter {chapter}: option letter must be one of "
                         f"{_LETTERS}, got {letter!r}")
    return _LETTERS.index(letter)


#: ``{cite:source|600 GB/s}`` in the bank: a figure the course quotes (an article's claim, a
#: public measurement), shown as its text; the scanner (course_lib.apps.prose) counts it as cited.
CITE_FIELD = re.compile(r"\{cite:([^|{}]+)\|([^{}]+)\}")


def uncite(text: str) -> str:
    """``text`` with every ``{cite:source|figure}`` shown as its figure.

    >>> uncite("the article says {cite:the NVLink article|600 GB/s}")
    'the article says 600 GB/s'
    """
    return CITE_FIELD.sub(r"\2", text)


def _question(entry: dict, values: dict | None, chapter: int) -> Question:
    def fill(text):
        text = uncite(text)
        try:
            return text if values is None else text.format_map(values)
        except KeyError as err:
            raise ValueError(f"chapter {chapter}: the bank's field {{{err.args[0]}}} has "
                             f"no value; values are {sorted(values)}") from None

    return Question(fill(entry["prompt"]), [fill(o) for o in entry["options"]],
                    {_index(a, chapter) for a in entry["answer"]}, fill(entry["explanation"]),
                    {_index(k, chapter): fill(v)
                     for k, v in entry.get("why_wrong", {}).items()},
                    source=entry.get("source", ""))


def chapter_quiz(chapter: int, lang: str = "en", source: str | None = None) -> list[Question]:
    """The quiz of ``chapter`` (1-11) as a list of :class:`~course_lib.quiz.Question`.

    Chapter 11's quiz is the seeds' twenty interview questions.  ``source``
    keeps only the questions whose source starts with it (e.g.
    ``"seed 000"``).  Show them with ``cl.quiz.show(...)``.

    >>> [q.source for q in chapter_quiz(11, source="seed 003, 面试题 Q9")]
    ['seed 003, 面试题 Q9']
    >>> len(chapter_quiz(11, source="the NVLink article"))   # by the article's name too
    10
    >>> chapter_quiz(12)
    Traceback (most recent call last):
    ...
    ValueError: chapter must be an integer >= 1 and <= 11, got 12
    """
    c, doc = _chapter(chapter, lang)
    values = QUIZ_VALUES[doc["values"]]() if doc.get("values") else None
    questions = [_question(e, values, c) for e in doc.get("quiz", [])]
    if not questions:
        raise ValueError(f"chapter {c} has no quiz in lang {lang!r} "
                         f"({_BANK}/{lang}/ch{c:02d}.yaml)")
    if source is not None:
        picked = [q for q in questions
                  if q.source.startswith(source) or source_label(q.source).startswith(source)]
        if not picked:
            known = sorted({source_label(q.source) for q in questions if q.source})
            raise ValueError(f"source {source!r} starts no question of chapter {c}; "
                             f"sources are {known}")
        questions = picked
    return questions


def _gather(key: str, lang: str) -> list[tuple[int, object]]:
    """``(chapter, item)`` for every item under ``key`` in the chapter files, in order."""
    out = []
    for c in _CHAPTERS:
        _c, doc = _chapter(c, lang)
        items = doc.get(key) or []
        out.extend((c, item) for item in (items.items() if isinstance(items, dict) else items))
    return out


def interview_questions(lang: str = "en") -> list[Question]:
    """The twenty interview questions (10 from each seed): chapter 11's quiz."""
    return chapter_quiz(11, lang)


#: How a learner sees an article's key ("seed 000" is how the content bank files it).
ARTICLES = {"seed 000": "the heterogeneous-communication article", "seed 003": "the NVLink article"}


#: The same, where a title has little room.
ARTICLES_SHORT = {"seed 000": "communication article", "seed 003": "NVLink article"}


def source_label(source: str, short: bool = False) -> str:
    """A content-bank source as a learner reads it: the article by its subject
    (``short``: a title's few words, without the item).

    >>> source_label("seed 003, 面试题 Q9")
    'the NVLink article, 面试题 Q9'
    >>> source_label("seed 000, 常见误区 #2")
    'the heterogeneous-communication article, 常见误区 #2'
    >>> source_label("seed 000, 常见误区 #2", short=True)
    'communication article'
    """
    for key, name in (ARTICLES_SHORT if short else ARTICLES).items():
        if source.startswith(key):
            return name if short else name + source[len(key):]
    return source


def _filled(text: str, chapter: int) -> str:
    """Bank text as a learner reads it: cited figures as their text, ``{name}`` fields
    filled from the chapter's values (course_lib/values/chNN.py)."""
    text = uncite(text)
    return text.format_map(chapter_values(chapter)) if "{" in text else text


def question_fixes(lang: str = "en") -> dict[str, str]:
    """Question source -> where our answer or explanation differs from the seed's."""
    return {k: _filled(v, c) for c, (k, v) in _gather("question_fixes", lang)}


def glossary(lang: str = "en") -> list[tuple[str, str, str, int]]:
    """The story's terms as ``(zh, en, meaning, chapter)``, in chapter order."""
    return [(g["zh"], g["en"], g["meaning"], c) for c, g in _gather("glossary", lang)]


def myths(lang: str = "en") -> list[Myth]:
    """The eight myths, each with its evidence function from :data:`EVIDENCE`."""
    return [Myth(m["key"], m["source"], uncite(m["claim"]), m["verdict"], _filled(m["truth"], c),
                 EVIDENCE[m["evidence"]], m.get("kind", "model"), m.get("chapter", c))
            for c, m in _gather("myths", lang)]


def myth_keys() -> list[str]:
    """Keys of :data:`MYTHS`."""
    return [m.key for m in MYTHS]


def myth(key: str) -> Myth:
    """The myth with this key.

    >>> myth("small_messages").source
    'seed 003, 常见误区 #4'
    """
    k = check_choice(key, "key", myth_keys())
    return next(m for m in MYTHS if m.key == k)


# ---------------------------------------------------------------------------
# what comes next: numbers from the catalog, sources named
# ---------------------------------------------------------------------------
NEXT: list[dict] = [
    {"name": "NVLink 5 (Blackwell, B200)",
     "what": "twice NVLink 4's lane rate; 18 links per GPU",
     "per_dir_bytes_per_s": nvlink_generation(5).total_per_dir_bytes_per_s,
     "bidir_bytes_per_s": nvlink_generation(5).total_bidir_bytes_per_s,
     "domain": f"{system('GB200 NVL72').n_gpus} GPUs in a GB200 NVL72 rack "
               f"({system('GB200 NVL72').nvswitches} NVSwitch chips); NVIDIA quotes "
               f"up to {FUTURE_LINKS['nvlink5_max_domain_gpus'].value:g}",
     "source": nvlink_generation(5).source + "; " + system("GB200 NVL72").source
               + "; " + FUTURE_LINKS["nvlink5_max_domain_gpus"].source},
    {"name": "NVLink-C2C",
     "what": "chip-to-chip NVLink between Grace CPU and Hopper/Blackwell GPU: the "
             "host link is no longer PCIe, and pageable copies run near pinned speed",
     "bidir_bytes_per_s": FUTURE_LINKS["nvlink_c2c_grace_hopper"].value,
     "per_dir_bytes_per_s": FUTURE_LINKS["nvlink_c2c_grace_hopper"].value / 2,
     "source": FUTURE_LINKS["nvlink_c2c_grace_hopper"].source},
    {"name": "Optical links and co-packaged optics",
     "what": "moving the optics next to the switch chip (co-packaged optics) cuts "
             "the power of electrical-to-optical conversion and lets scale-up "
             "links reach beyond a rack; copper reaches about a rack",
     "source": "NVIDIA press release 'NVIDIA Announces Spectrum-X Photonics, "
               "Co-Packaged Optics Networking Switches' (GTC, March 2025); UALink "
               "Consortium webinar Q&A (no optical requirements in 1.0)"},
    {"name": "UALink",
     "what": "an open scale-up standard (AMD, Intel, Google, Microsoft, Meta and "
             "others) for load/store links between accelerators through switches",
     "lane_bytes_per_s": FUTURE_LINKS["ualink_lane_rate"].value,
     "max_accelerators": FUTURE_LINKS["ualink_max_pod_accelerators"].value,
     "source": FUTURE_LINKS["ualink_lane_rate"].source},
]


# ---------------------------------------------------------------------------
# the English bank under the names older code uses
# ---------------------------------------------------------------------------
MYTHS: list[Myth] = myths()
INTERVIEW_QUESTIONS: list[Question] = interview_questions()
#: Where our answer or explanation differs from the seed's.
QUESTION_FIXES: dict[str, str] = question_fixes()
#: (zh, en, meaning, chapter)
GLOSSARY: list[tuple[str, str, str, int]] = glossary()
#: The short quizzes of chapters 7-10 (chapter_quiz serves every chapter).
CHAPTER_QUESTIONS: dict[int, list[Question]] = {c: chapter_quiz(c) for c in (7, 8, 9, 10)}
