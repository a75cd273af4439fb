"""MPI worker of the overlap lab (chapter 8): one training step per rank, for real.

Run under ``mpiexec`` (the lab, :func:`course_lib.measure.overlap_lab`, does it)::

    mpiexec -n 2 python -m course_lib.measure.mpi_overlap_worker --grad-bytes 16MiB \\
        --buckets 1,2,4,8 --forward-s 0.01 --backward-s 0.03 --out ov.json

A step is a forward pass, a backward pass that produces the gradients in
``K`` equal buckets (the last layers' first, as autograd does), and the
AllReduce of every bucket (``comm.Iallreduce`` on float32 NumPy buffers).
The compute of a pass lasts a set time and **polls** MPI all along (``Testall``
on the open requests every ``--poll-s``): it stands for the GPU computing
while the CPU drives the communication, so the rank's core stays free for
MPI's progress -- as NCCL's kernels progress beside the compute kernels.  (A
rank that really computed on its one core could not overlap anything: the
data movement of a shared-memory AllReduce needs the same core.)

Variants, ``--repeats`` steps each after ``--warmup`` rounds; a step's time is the
**slowest rank's** (``MPI.MAX``), each step starts after a barrier.  The steps run
in **rounds** -- every variant once per round, in turn -- so a burst of load on a
shared machine falls on all variants alike instead of on one of them (the sum and
the overlap are compared with each other and with the communication alone):

``compute``            forward + backward, no communication
``comm-K``             the K buckets' AllReduces alone, back to back
``sequential-K``       compute, then the K AllReduces (communication after compute)
``overlap-K``          bucket k's Iallreduce starts when the backward pass has made it
``straggler-K``        overlap-K with rank 0 sleeping ``--straggler-s`` before its
                       backward pass (one slow rank)

Every AllReduce result is checked (each rank sends ``rank + 1``): the number
of wrong elements is reported.  Rank 0 prints ``PROGRESS i n`` lines and
writes the JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

#: How often the compute asks MPI for progress, seconds (``--poll-s``).
POLL_S = 2e-4


def _compute(seconds, requests, poll_s, MPI):
    """Busy for ``seconds`` (the deadline, not the work, ends it), polling the
    open requests every ``poll_s``."""
    end = time.perf_counter() + seconds
    while True:
        if requests:
            MPI.Request.Testall(requests)
        left = end - time.perf_counter()
        if left <= 0:
            return
        time.sleep(min(poll_s, left))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.measure.mpi_overlap_worker",
                                 description="one training step per rank: compute, "
                                             "buckets, Iallreduce")
    ap.add_argument("--grad-bytes", default="16MiB", help="all gradients, bytes")
    ap.add_argument("--buckets", default="1,2,4,8", help="bucket counts K, comma list")
    ap.add_argument("--forward-s", type=float, default=0.01)
    ap.add_argument("--backward-s", type=float, default=0.03)
    ap.add_argument("--straggler-s", type=float, default=0.01)
    ap.add_argument("--poll-s", type=float, default=POLL_S)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import numpy as np
    from mpi4py import MPI

    from course_lib.units import parse_size

    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    total = int(parse_size(args.grad_bytes, "grad_bytes")) // 4 * 4
    ks = sorted({int(k) for k in args.buckets.split(",") if k.strip()})
    expected = n * (n + 1) / 2
    grads = np.full(total // 4, rank + 1, dtype=np.float32)
    out_buf = np.zeros_like(grads)
    wrong = 0

    def buckets(k):
        edges = np.linspace(0, grads.size, k + 1).astype(int)
        return [(grads[a:b], out_buf[a:b]) for a, b in zip(edges[:-1], edges[1:])]

    def step(kind, k):
        nonlocal wrong
        bs = buckets(k) if k else []
        out_buf[:] = 0
        comm.Barrier()
        t0 = time.perf_counter()
        reqs = []
        if kind != "comm":
            _compute(args.forward_s, reqs, args.poll_s, MPI)
            if kind == "straggler" and rank == 0:
                time.sleep(args.straggler_s)
        if kind == "comm":
            reqs = [comm.Iallreduce(s, r, op=MPI.SUM) for s, r in bs]
        elif kind in ("compute", "sequential"):
            _compute(args.backward_s, reqs, args.poll_s, MPI)
            if kind == "sequential":
                reqs = [comm.Iallreduce(s, r, op=MPI.SUM) for s, r in bs]
        else:                           # overlap, straggler: bucket by bucket
            for s, r in reversed(bs):   # the last layers' gradients are ready first
                _compute(args.backward_s / k, reqs, args.poll_s, MPI)
                reqs.append(comm.Iallreduce(s, r, op=MPI.SUM))
        t_compute = time.perf_counter() - t0
        MPI.Request.Waitall(reqs)
        t = time.perf_counter() - t0
        if bs:
            wrong += int(np.count_nonzero(out_buf != expected))
        return comm.allreduce(t, op=MPI.MAX), comm.allreduce(t_compute, op=MPI.MAX)

    plan = [("compute", 0)]
    for k in ks:
        plan += [("comm", k), ("sequential", k), ("overlap", k)]
    plan.append(("straggler", max(ks) if 4 not in ks else 4))
    for _ in range(args.warmup):
        for kind, k in plan:
            step(kind, k)
    samples = {v: [] for v in plan}
    computes = {v: [] for v in plan}
    done = 0
    for _ in range(args.repeats):                 # rounds: every variant once, in turn
        for kind, k in plan:
            t, tc = step(kind, k)
            samples[kind, k].append(t)
            computes[kind, k].append(tc)
            done += 1
            if rank == 0:
                print(f"PROGRESS {done} {args.repeats * len(plan)}", flush=True)
    records = [{"variant": kind if not k else f"{kind}-{k}", "kind": kind,
                "n_buckets": k, "samples_s": samples[kind, k],
                "compute_done_s": computes[kind, k]} for kind, k in plan]
    wrong = comm.allreduce(wrong, op=MPI.SUM)
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    if rank == 0:
        out = {"n_ranks": n, "hosts": sorted(set(hosts)), "grad_bytes": total,
               "forward_s": args.forward_s, "backward_s": args.backward_s,
               "straggler_s": args.straggler_s, "poll_s": args.poll_s,
               "mpi_library": MPI.Get_library_version().replace("\x00", "").strip()
               .splitlines()[0], "wrong": wrong, "records": records}
        text = json.dumps(out)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            print("JSON:" + text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
