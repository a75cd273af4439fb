"""MPI worker of the AllReduce lab: run under ``mpiexec``, one process per rank.

Usage (this machine, 4 ranks)::

    mpiexec -n 4 python -m course_lib.measure.mpi_worker --sizes 4K,64K,1M,16M --out ar.json

On a cluster, unchanged, with MPICH's hydra launcher (two nodes, 8 ranks each)::

    mpiexec -n 16 -ppn 8 -hosts node1,node2 \\
        python -m course_lib.measure.mpi_worker --sizes 1K:1G --out ar.json

(Open MPI's launcher spells it ``mpirun -np 16 --host node1:8,node2:8``.)
Then, in Python, ``course_lib.measure.allreduce_from_json("ar.json")`` gives
the records, the alpha-beta fit and the ring model beside them.

Each size: ``--warmup`` untimed AllReduces, then ``--repeats`` samples, each
the mean time of ``iters`` back-to-back ``comm.Allreduce`` calls on float32
NumPy buffers (``iters`` chosen so that a sample lasts about
``--sample-s``).  A sample is the **slowest rank's** time (``MPI.MAX``), as
a collective is done only when every rank is.  Every rank fills its buffer
with ``rank + 1``; the result must be ``n (n + 1) / 2`` everywhere, and the
number of wrong elements is reported (nccl-tests' ``#wrong``).

Rank 0 prints ``PROGRESS i n`` lines (flushed) for the launcher's progress bar
and writes the JSON (``--out``, or stdout after a ``JSON:`` marker).
Needs mpi4py; imports nothing from ``course_lib`` but the size parser.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def parse_sizes(text: str) -> list[int]:
    """Sizes from the command line to a sorted list of byte counts.

    ``"4K,64K,1M"`` lists them; ``"LOW:HIGH"`` steps from LOW to HIGH by a
    factor 4, ``"LOW:HIGH:2"`` by a factor 2.  Units as
    :func:`course_lib.units.parse_size` reads them (K = 1000, KiB = 1024).

    >>> parse_sizes("1K:16K")
    [1000, 4000, 16000]
    >>> parse_sizes("1KiB:16KiB")
    [1024, 4096, 16384]
    >>> parse_sizes("8,64")
    [8, 64]
    """
    from course_lib.units import parse_size

    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"sizes: write 'LOW:HIGH' or 'LOW:HIGH:FACTOR', got {text!r}")
        lo, hi = parse_size(parts[0], "sizes"), parse_size(parts[1], "sizes")
        factor = float(parts[2]) if len(parts) == 3 else 4.0
        if lo < 1 or hi < lo or factor <= 1:
            raise ValueError(f"sizes: need 1 <= LOW <= HIGH and FACTOR > 1, got {text!r}")
        out, s = [], lo
        while s <= hi * (1 + 1e-9):
            out.append(int(round(s)))
            s *= factor
        return out
    out = sorted({int(parse_size(p, "sizes")) for p in text.split(",") if p.strip()})
    if not out or out[0] < 1:
        raise ValueError(f"sizes: need sizes >= 1 byte, got {text!r}")
    return out


def _library_line(text: str) -> str:
    """First line of ``MPI.Get_library_version()`` (Open MPI's ends in a NUL).

    >>> _library_line("Open MPI v4.1.4, package: Debian\\x00")
    'Open MPI v4.1.4, package: Debian'
    """
    return text.replace("\x00", "").strip().splitlines()[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib.measure.mpi_worker",
                                 description="AllReduce sweep under mpiexec")
    ap.add_argument("--sizes", default="4KiB:16MiB", help="bytes: 'a,b,c' or 'LOW:HIGH[:FACTOR]'")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample-s", type=float, default=0.02,
                    help="target duration of one sample, seconds")
    ap.add_argument("--max-iters", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=20.0,
                    help="time budget per size, seconds")
    ap.add_argument("--out", default=None, help="JSON file (rank 0 writes it)")
    args = ap.parse_args(argv)

    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    sizes = parse_sizes(args.sizes)
    itemsize = 4
    expected = n * (n + 1) / 2
    records = []
    for i, n_bytes in enumerate(sizes):
        count = max(1, n_bytes // itemsize)
        send = np.full(count, rank + 1, dtype=np.float32)
        recv = np.zeros(count, dtype=np.float32)
        t_start = time.monotonic()
        comm.Barrier()
        t0 = MPI.Wtime()
        for _ in range(max(1, args.warmup)):
            comm.Allreduce(send, recv, op=MPI.SUM)
        est = comm.allreduce((MPI.Wtime() - t0) / max(1, args.warmup), op=MPI.MAX)
        iters = int(max(1, min(args.max_iters, round(args.sample_s / max(est, 1e-9)))))
        samples = []
        exhausted = False
        for _r in range(args.repeats):
            comm.Barrier()
            t0 = MPI.Wtime()
            for _ in range(iters):
                comm.Allreduce(send, recv, op=MPI.SUM)
            dt = (MPI.Wtime() - t0) / iters
            samples.append(comm.allreduce(dt, op=MPI.MAX))
            stop = comm.bcast(len(samples) >= 3 and
                              time.monotonic() - t_start > args.budget_s, root=0)
            if stop and len(samples) < args.repeats:
                exhausted = True
                break
        wrong = int(np.count_nonzero(recv != expected))
        wrong = comm.allreduce(wrong, op=MPI.SUM)
        records.append({"n_bytes": count * itemsize, "count": count,
                        "dtype": "float32", "op": "sum", "iters": iters,
                        "samples_s": samples, "wrong": wrong,
                        "budget_exhausted": exhausted})
        if rank == 0:
            print(f"PROGRESS {i + 1} {len(sizes)} {count * itemsize}", flush=True)
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    if rank == 0:
        out = {"n_ranks": n, "hosts": sorted(set(hosts)),
               "ranks_per_host": {h: hosts.count(h) for h in sorted(set(hosts))},
               "mpi_library": _library_line(MPI.Get_library_version()),
               "mpi4py": __import__("mpi4py").__version__,
               "timer": "MPI.Wtime, max over ranks of the mean over iters",
               "records": records}
        text = json.dumps(out)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            print("JSON:" + text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
