"""Chapter 8 measured: your own job's profiler traces, and the overlap lab, beside the models.

The traces: PyTorch profiler (Kineto) files, one per rank.

``torch.profiler`` writes one JSON file per rank (``*.pt.trace.json``, often
gzipped) in the Chrome trace format: ``traceEvents``, a list of events with
``ph`` ("X" = a span), ``cat`` (``kernel`` for a GPU kernel, ``cpu_op``,
``cuda_runtime``, ``user_annotation`` ...), ``name``, ``ts`` and ``dur`` (in
microseconds), and ``args``; plus ``distributedInfo`` (``rank``,
``world_size``, ``backend``) and ``deviceProperties``.  This module reads that
format directly (no HolisticTraceAnalysis needed) and reports what chapter 8
teaches, per ``ProfilerStep#N``:

``step_s``
    the step's length (the CPU annotation ``ProfilerStep#N``, which
    ``torch.profiler``'s ``schedule`` writes);
``compute_s``
    GPU time busy with compute kernels (every kernel whose name does not start
    with ``nccl``), overlapping kernels counted once;
``comm_s``
    GPU time busy with NCCL kernels (the collectives);
``hidden_s``
    the part of ``comm_s`` during which compute kernels also ran: the overlap;
``exposed_s``
    ``comm_s - hidden_s``: communication nothing hid, what the step pays for it.

Kernels belong to the step whose CPU span launched them (``args.correlation``
joins a kernel to its ``cudaLaunchKernel``); a kernel without a launch event is
placed by its own start time.  For each NCCL kernel: the collective (``args``
"Collective name", else the kernel's name: ``ncclKernel_AllReduce_RING_LL_...``
or ``ncclDevKernel_AllGather_...``), the message size where the trace records
it (``args`` "In msg nelems" x the size of "dtype"; PyTorch >= 2.1 writes it)
and the group size ("Group size", else the world size).

Across ranks, :func:`read_job` lines the ranks' steps up by step number and
reports the skew: the spread of each step's compute time between ranks, and
which rank computes longest (the straggler the others wait for in their NCCL
kernels; ranks' clocks differ, so the comparison uses durations, never
timestamps across files).

:func:`predict_collectives` puts the course's prediction
(:func:`course_lib.predict.predict_collective`, one process per GPU) on a
cluster beside each collective's measured kernel time -- the cluster named by
the user, or calibrated on their nccl-tests log (:func:`course_lib.calibrate`).

Bad input: a file that is not JSON, a truncated gzip or JSON, a trace without
``traceEvents``, without GPU kernels or without ``ProfilerStep`` annotations
raises ``ValueError`` naming the file and what is missing.

Command line: ``python -m course_lib trace DIR [--cluster SPEC] [--log FILE]``.
Chapter 8 ("Your own job"); how to record a trace: ``docs/your_job.md``.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .units import US

__all__ = ["RankTrace", "Job", "read_rank_trace", "read_job", "predict_collectives",
           "overlap_vs_model", "overlap_markdown",
           "DTYPE_BYTES", "collective_of_kernel", "example_trace_dir", "job_report"]

#: bytes per element of the dtype names PyTorch writes in ``args["dtype"]``
DTYPE_BYTES = {"float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2,
               "float16": 2, "bfloat16": 2, "int": 4, "int32": 4, "long": 8, "int64": 8,
               "byte": 1, "uint8": 1, "char": 1, "int8": 1, "bool": 1, "short": 2,
               "int16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1}
_KERNEL_COLL = re.compile(r"nccl(?:Dev)?Kernel_(AllReduce|AllGather|ReduceScatter|Broadcast|"
                          r"Reduce|SendRecv|AllToAll|Send|Recv)", re.IGNORECASE)
_COURSE_NAME = {"allreduce": "allreduce", "allgather": "allgather",
                "reducescatter": "reducescatter", "broadcast": "broadcast",
                "reduce": "reduce", "sendrecv": "sendrecv", "send": "sendrecv",
                "recv": "sendrecv", "alltoall": "alltoall", "all_reduce": "allreduce",
                "all_gather": "allgather", "reduce_scatter": "reducescatter",
                "_allgather_base": "allgather", "_reduce_scatter_base": "reducescatter",
                "allgather_into_tensor_coalesced": "allgather",
                "reduce_scatter_tensor_coalesced": "reducescatter",
                "all_to_all": "alltoall", "alltoall_base": "alltoall"}
_STEP = re.compile(r"^ProfilerStep#(\d+)$")


def collective_of_kernel(name: str, args: dict | None = None) -> str | None:
    """The course's collective name of an NCCL kernel, or None for a kernel
    that is not NCCL's.

    >>> collective_of_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)")
    'allreduce'
    >>> collective_of_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
    'allgather'
    >>> collective_of_kernel("volta_sgemm_128x64_nn") is None
    True
    """
    if not name.lower().startswith("nccl"):
        return None
    given = (args or {}).get("Collective name")
    if isinstance(given, str) and given.strip():
        key = given.strip().lower()
        return _COURSE_NAME.get(key, key)
    m = _KERNEL_COLL.search(name)
    return _COURSE_NAME[m.group(1).lower()] if m else "unknown"


def _union(iv: list) -> list:
    """Merge [start, end) intervals (sorted output)."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _length(iv: list) -> float:
    return float(sum(e - s for s, e in iv))


def _overlap(a: list, b: list) -> float:
    """Length of the intersection of two merged interval lists."""
    i = j = 0
    tot = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            tot += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


@dataclass
class RankTrace:
    """One rank's trace, read.

    ``steps``: one dict per ``ProfilerStep#N`` (``step``, ``step_s``,
    ``compute_s``, ``comm_s``, ``hidden_s``, ``exposed_s``, ``copy_s``,
    ``n_kernels``, ``n_nccl``).  ``collectives``: one dict per NCCL kernel
    (``step``, ``collective``, ``kernel``, ``time_s``, ``n_bytes`` or None,
    ``group_size``, ``dtype``).
    """

    path: str
    rank: int | None
    world_size: int | None
    device: str | None
    steps: list = field(default_factory=list)
    collectives: list = field(default_factory=list)

    def step(self, n: int) -> dict:
        return next(s for s in self.steps if s["step"] == n)


def _load(path: Path) -> dict:
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{name}: cannot read the trace: {exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{name}: the gzip file is truncated or damaged ({exc}); "
                             f"copy the whole .json.gz again") from None
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: not a complete JSON trace ({exc.msg} at character "
                         f"{exc.pos} of {len(raw)}: truncated? a trace is written when "
                         f"the profiler stops)") from None
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise ValueError(f"{name}: no 'traceEvents' list: not a PyTorch profiler (Kineto) "
                         f"trace")
    return data


def read_rank_trace(path) -> RankTrace:
    """Read one rank's Kineto trace (``.json`` or ``.json.gz``).

    Raises ``ValueError`` naming the file when it is not a complete trace, has
    no GPU kernels (a CPU-only profile: ``activities`` lacked CUDA) or no
    ``ProfilerStep#N`` annotations (no ``schedule``/``prof.step()``).
    """
    path = Path(path)
    data = _load(path)
    events = [e for e in data["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"]
    info = data.get("distributedInfo") or {}
    props = data.get("deviceProperties") or []
    device = props[0].get("name") if props and isinstance(props[0], dict) else None
    steps, launches, kernels = [], {}, []
    for e in events:
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        cat, name = e.get("cat"), str(e.get("name", ""))
        m = _STEP.match(name)
        if m and cat in ("user_annotation", "cpu_instant_event", None):
            steps.append((int(m.group(1)), ts, ts + dur))
        elif cat == "cuda_runtime" and isinstance(e.get("args"), dict):
            corr = e["args"].get("correlation")
            if corr is not None:
                launches[corr] = ts
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            kernels.append((cat, name, ts, ts + dur, e.get("args") or {}))
    if not [k for k in kernels if k[0] == "kernel"]:
        raise ValueError(f"{path}: no GPU kernels in the trace (a CPU-only profile?); record "
                         f"with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
    if not steps:
        raise ValueError(f"{path}: no 'ProfilerStep#N' annotations; record with "
                         f"schedule=torch.profiler.schedule(...) and call prof.step() "
                         f"once per training step (docs/your_job.md)")
    steps.sort(key=lambda s: s[1])
    starts = np.array([s[1] for s in steps])

    def step_of(t):
        i = int(np.searchsorted(starts, t, side="right")) - 1
        if i < 0 or t > steps[i][2]:
            return None
        return steps[i][0]

    per = {n: {"compute": [], "comm": [], "copy": [], "n": 0, "nccl": 0} for n, _, _ in steps}
    rt = RankTrace(str(path), info.get("rank"), info.get("world_size"), device)
    for cat, name, t0, t1, args in kernels:
        launched = launches.get(args.get("correlation"))
        n = step_of(launched if launched is not None else t0)
        if n is None:
            continue
        p = per[n]
        p["n"] += 1
        if cat != "kernel":
            p["copy"].append((t0, t1))
            continue
        coll = collective_of_kernel(name, args)
        if coll is None:
            p["compute"].append((t0, t1))
            continue
        p["comm"].append((t0, t1))
        p["nccl"] += 1
        nel, dt = args.get("In msg nelems"), args.get("dtype")
        size = (int(nel) * DTYPE_BYTES[str(dt).lower()]
                if isinstance(nel, (int, float)) and str(dt).lower() in DTYPE_BYTES
                else None)
        group = args.get("Group size") or info.get("world_size")
        rt.collectives.append({"step": n, "collective": coll, "kernel": name.split("(")[0],
                               "time_s": (t1 - t0) * US, "n_bytes": size,
                               "group_size": int(group) if group else None,
                               "dtype": dt})
    for n, s0, s1 in steps:
        p = per[n]
        comp, comm = _union(p["compute"]), _union(p["comm"])
        hidden = _overlap(comp, comm)
        rt.steps.append({"step": n, "step_s": (s1 - s0) * US,
                         "compute_s": _length(comp) * US, "comm_s": _length(comm) * US,
                         "hidden_s": hidden * US,
                         "exposed_s": (_length(comm) - hidden) * US,
                         "copy_s": _length(_union(p["copy"])) * US,
                         "n_kernels": p["n"], "n_nccl": p["nccl"]})
    return rt


@dataclass
class Job:
    """All ranks of one job: ``ranks`` (RankTrace, by rank), ``steps`` (the step
    numbers every rank has) and ``skew`` (one dict per common step:
    ``compute_min_s``, ``compute_max_s``, ``skew_s`` = max - min,
    ``straggler_rank`` (computes longest), ``comm_max_s``, ``comm_min_s``)."""

    directory: str
    ranks: list
    steps: list
    skew: list

    def summary(self) -> dict:
        """Medians over the job's steps and ranks, seconds."""
        rows = [s for r in self.ranks for s in r.steps if s["step"] in self.steps]
        med = {k: float(np.median([s[k] for s in rows]))
               for k in ("step_s", "compute_s", "comm_s", "hidden_s", "exposed_s")}
        comm = med["comm_s"]
        med["hidden_share"] = med["hidden_s"] / comm if comm > 0 else float("nan")
        med["skew_s"] = float(np.median([k["skew_s"] for k in self.skew])) if self.skew else 0.0
        med["n_ranks_read"] = len(self.ranks)
        med["world_size"] = self.ranks[0].world_size
        return med


def read_job(directory) -> Job:
    """Read every ``*.json`` / ``*.json.gz`` trace in ``directory`` (one per
    rank) and line the ranks' steps up."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder of traces (one .json or .json.gz per rank)")
    files = sorted(p for p in d.iterdir() if p.name.endswith((".json", ".json.gz")))
    if not files:
        raise ValueError(f"{d}: no trace files (*.json or *.json.gz) in the folder")
    ranks = [read_rank_trace(p) for p in files]
    seen = {}
    for i, r in enumerate(ranks):
        key = r.rank if r.rank is not None else i
        if key in seen:
            raise ValueError(f"{r.path} and {seen[key]} both say rank {key}: traces of two "
                             f"jobs (or the same file twice) in one folder")
        seen[key] = r.path
        r.rank = key
    ranks.sort(key=lambda r: r.rank)
    common = sorted(set.intersection(*[{s["step"] for s in r.steps} for r in ranks]))
    if not common:
        have = "; ".join(f"rank {r.rank}: {[s['step'] for s in r.steps]}" for r in ranks)
        raise ValueError(f"{d}: the ranks' traces share no ProfilerStep number ({have}); "
                         f"were they recorded in one run with the same schedule?")
    skew = []
    for n in common:
        comp = {r.rank: r.step(n)["compute_s"] for r in ranks}
        comm = {r.rank: r.step(n)["comm_s"] for r in ranks}
        straggler = max(comp, key=comp.get)
        skew.append({"step": n, "compute_min_s": min(comp.values()),
                     "compute_max_s": max(comp.values()),
                     "skew_s": max(comp.values()) - min(comp.values()),
                     "straggler_rank": straggler, "comm_max_s": max(comm.values()),
                     "comm_min_s": min(comm.values())})
    return Job(str(d), ranks, common, skew)


def _group_cluster(clu, group: int):
    """The cluster resized to a collective's group (what_if keeps the calibration)."""
    from .calibrating import what_if

    if group is None or group == clu.n_ranks:
        return clu
    if group <= clu.gpus_per_node:
        return what_if(clu, nodes=1, gpus_per_node=group)
    if group % clu.gpus_per_node == 0:
        return what_if(clu, nodes=group // clu.gpus_per_node)
    return None


def predict_collectives(job: Job, cluster, *, log: str | None = None) -> list[dict]:
    """Per (collective, size, group size) the trace shows: the measured NCCL
    kernel time (median over kernels, steps and ranks) beside the course's
    prediction on ``cluster`` (a :class:`course_lib.Cluster`, or a
    ``cluster_from_spec`` string such as ``"gpu=A100;gpus_per_node=2"``),
    calibrated first on the nccl-tests log text ``log`` when given.

    A row whose size the trace does not record, or whose collective the model
    has no formula for (SendRecv), gets ``predicted_s = None`` and a ``note``.
    """
    from .calibrating import calibrate
    from .clusters import Cluster, cluster_from_spec
    from .nccl_log import read_nccl_tests
    from .predict import predict_collective

    if isinstance(cluster, str):
        cluster = cluster_from_spec(cluster)
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster or a cluster_from_spec string, got "
                        f"{type(cluster).__name__}")
    if log is not None:
        cluster = calibrate(cluster, read_nccl_tests(log))
    groups: dict = {}
    for r in job.ranks:
        for c in r.collectives:
            if c["step"] in job.steps:
                groups.setdefault((c["collective"], c["n_bytes"], c["group_size"]),
                                  []).append(c["time_s"])
    out = []
    for (coll, size, group), times in sorted(groups.items(),
                                             key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        row = {"collective": coll, "n_bytes": size, "group_size": group,
               "count": len(times), "measured_s": float(np.median(times)),
               "predicted_s": None, "note": ""}
        if size is None:
            row["note"] = "size not in the trace (PyTorch >= 2.1 records it)"
        elif coll not in ("allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                          "alltoall"):
            row["note"] = f"no model for {coll}"
        else:
            clu = _group_cluster(cluster, group)
            if clu is None:
                row["note"] = (f"group of {group} does not fit {cluster.gpus_per_node} GPUs "
                               f"per node")
            else:
                p = predict_collective(coll, size, clu, launch_gpus=1)
                row["predicted_s"] = p.time_s
                row["model_over_measured"] = p.time_s / row["measured_s"]
        out.append(row)
    return out


def example_trace_dir(name: str = "hta_sampled_2ranks") -> Path:
    """A shipped real trace folder (``course_lib/data/traces/<name>``; sources
    in ``course_lib/data/traces/SOURCES.md``)."""
    from .hardware import data_path

    d = data_path("traces", name)
    if not Path(d).is_dir():
        raise ValueError(f"no shipped trace folder {name!r}; see course_lib/data/traces")
    return Path(d)


def job_report(job: Job, predictions: list | None = None) -> str:
    """The job in plain text: per rank and step, then the skew, then the
    collectives beside the model."""
    from .units import format_bytes, format_time

    lines = [f"{job.directory}: {len(job.ranks)} rank trace(s) of a job of "
             f"{job.ranks[0].world_size or '?'} ranks; steps {job.steps}"]
    lines.append(f"{'rank':>4} {'step':>6} {'step':>10} {'compute':>10} {'comm':>10} "
                 f"{'hidden':>10} {'exposed':>10} {'hidden%':>8}")
    for r in job.ranks:
        for s in r.steps:
            if s["step"] not in job.steps:
                continue
            share = s["hidden_s"] / s["comm_s"] if s["comm_s"] else float("nan")
            lines.append(f"{r.rank:>4} {s['step']:>6} {format_time(s['step_s']):>10} "
                         f"{format_time(s['compute_s']):>10} {format_time(s['comm_s']):>10} "
                         f"{format_time(s['hidden_s']):>10} {format_time(s['exposed_s']):>10} "
                         f"{share:>8.0%}")
    if len(job.ranks) > 1:
        lines.append("skew between ranks (compute time; the rank computing longest is the "
                     "straggler the others wait for):")
        for k in job.skew:
            lines.append(f"  step {k['step']}: compute {format_time(k['compute_min_s'])} .. "
                         f"{format_time(k['compute_max_s'])} (skew "
                         f"{format_time(k['skew_s'])}), straggler rank {k['straggler_rank']}")
    if predictions:
        lines.append(f"{'collective':<14}{'size':>12}{'group':>6}{'kernels':>8}"
                     f"{'measured':>11}{'model':>11}  note")
        for p in predictions:
            size = format_bytes(p["n_bytes"], binary=True) if p["n_bytes"] else "?"
            model = format_time(p["predicted_s"]) if p["predicted_s"] else "-"
            lines.append(f"{p['collective']:<14}{size:>12}{p['group_size'] or '?':>6}"
                         f"{p['count']:>8}{format_time(p['measured_s']):>11}{model:>11}  "
                         f"{p['note']}")
    return "\n".join(lines)


def overlap_vs_model(result) -> list[dict]:
    """The overlap lab (:func:`course_lib.measure.overlap_lab`) beside
    :func:`course_lib.traffic.bucket_overlap_schedule` on the same numbers.

    The model's inputs are measured: the forward pass as set
    (``metadata["forward_s"]``), the backward pass as the variant's own
    measured compute (``compute_done_s``, the slowest rank's) minus the
    forward pass -- on a busy machine the compute of a step that also drives
    communication runs longer than the compute alone -- and the AllReduce of
    all gradients as the measured ``comm-K`` of the same bucket count (so the
    per-bucket start-up is inside it).  For ``straggler-K`` the slowest
    rank's forward pass is longer by the sleep.  Returns one dict per compared variant: ``variant``,
    ``measured_s``, ``model_s``, ``ratio`` (measured / model),
    ``measured_exposed_s``, ``model_exposed_s`` (communication after the
    compute ended).
    """
    from .traffic import bucket_overlap_schedule

    if getattr(result, "skipped", None):
        raise ValueError(f"the overlap lab was skipped: {result.skipped}")
    s, m = result.summary, result.metadata
    if "compute_s" not in s:
        raise ValueError("the overlap result has no 'compute' variant to take the "
                         "compute time from")
    t_fwd = float(m["forward_s"])
    out = []
    for r in result.records:
        kind, k = r["kind"], r["n_buckets"]
        if kind not in ("sequential", "overlap", "straggler"):
            continue
        comm = s.get(f"comm_K{k}_s")
        if comm is None:
            continue
        extra = float(m["straggler_s"]) if kind == "straggler" else 0.0
        t_bwd = max(r["compute_done_s"] - t_fwd - extra, 0.0)
        sched = bucket_overlap_schedule(t_bwd, comm, n_buckets=k,
                                        overlap=kind != "sequential",
                                        t_forward_s=t_fwd + extra)
        out.append({"variant": r["variant"], "n_buckets": k, "measured_s": r["median_s"],
                    "spread_s": r["spread_s"], "model_s": sched["iteration_s"],
                    "ratio": r["median_s"] / sched["iteration_s"],
                    "measured_exposed_s": r["exposed_s"],
                    "model_exposed_s": sched["exposed_comm_s"]})
    return out


def overlap_markdown(result) -> str:
    """The overlap lab's steps beside the model, as a Markdown table (or the
    reason the lab was skipped)."""
    from .units import format_time

    if getattr(result, "skipped", None):
        return f"The overlap lab was skipped here: {result.skipped}"
    s, m = result.summary, result.metadata
    lines = [f"{m['n_ranks']} MPI ranks ({m.get('mpi_library') or 'MPI'}), "
             f"{m['grad_bytes'] / 2**20:.0f} MiB of gradients; compute alone "
             f"{format_time(s['compute_s'])}, the AllReduce of all gradients alone "
             + ", ".join(f"{format_time(v)} in {k[len('comm_K'):-2]} bucket(s)"
                         for k, v in s.items() if k.startswith("comm_K")) + ".", "",
             "| step | measured (IQR) | model | measured / model | exposed tail: measured | model |",
             "|---|---|---|---|---|---|"]
    for r in overlap_vs_model(result):
        lines.append(f"| {r['variant']} | {format_time(r['measured_s'])} "
                     f"({format_time(r['spread_s'])}) | {format_time(r['model_s'])} | "
                     f"{r['ratio']:.2f} | {format_time(r['measured_exposed_s'])} | "
                     f"{format_time(r['model_exposed_s'])} |")
    return "\n".join(lines)
