"""AllReduce bandwidth with torch.distributed (NCCL), printed as nccl-tests prints it.

Run one process per GPU with torchrun (under Slurm, srun starts torchrun on
every node; see docs/your_cluster.md)::

    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \\
        --rdzv-endpoint $HEAD_NODE:29500 scripts/torch_allreduce_bench.py -b 8 -e 8G > run.txt

Rank 0 prints nccl-tests' header and one row per size (size, count, type, redop,
root, time, algbw, busbw, #wrong, out-of-place; the in-place columns repeat
the out-of-place numbers: torch.distributed's all_reduce is always in place),
so ``python -m course_lib predict --from-log run.txt`` and
``cl.calibrating.load_log`` read it like an nccl-tests log.  Times are the
mean of ``--iters`` calls after ``--warmup`` calls, measured with CUDA events
on rank 0's stream, as nccl-tests times its loop; algbw = size / time,
busbw = algbw x 2 (n - 1) / n (nccl-tests' ``doc/PERFORMANCE.md``).

Only :func:`format_header` and :func:`format_row` run without torch (the tests
check that the course reads their output).
"""

from __future__ import annotations

import argparse
import os
import socket

_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text: str) -> int:
    """``8``, ``64K``, ``1M``, ``8G`` (binary, as nccl-tests' -b/-e)."""
    text = text.strip().upper()
    if text and text[-1] in _SUFFIX:
        return int(float(text[:-1]) * _SUFFIX[text[-1]])
    return int(text)


def format_header(n_ranks: int, min_bytes: int, max_bytes: int, warmup: int, iters: int,
                  hosts: list, torch_version: str = "", nccl_version: str = "") -> str:
    """The header nccl-tests prints (2.13+ layout), one device line per rank."""
    lines = [f"# torch.distributed all_reduce (scripts/torch_allreduce_bench.py) "
             f"torch {torch_version} NCCL {nccl_version}",
             f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor) "
             f"warmup iters: {warmup} iters: {iters} agg iters: 1 validation: 0 graph: 0",
             "#", "# Using devices"]
    for rank, host in enumerate(hosts):
        local = hosts[:rank].count(host)  # torchrun's LOCAL_RANK order
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {0:6d} on {host:>10s} device "
                     f"{local:2d} [0x00] GPU")
    lines += ["#",
              "#                                                              out-of-place"
              "                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw"
              " #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)       "]
    return "\n".join(lines)


def format_row(n_bytes: int, time_s: float, n_ranks: int, elem_bytes: int = 4) -> str:
    """One result row: float sum AllReduce, -c 0 (``N/A`` in #wrong)."""
    algbw = n_bytes / time_s / 1e9
    busbw = algbw * 2 * (n_ranks - 1) / n_ranks
    cols = (f"{n_bytes:12d}  {n_bytes // elem_bytes:12d}     float     sum      -1 "
            f"{time_s * 1e6:8.2f} {algbw:7.2f} {busbw:7.2f}    N/A")
    return f"{cols} {time_s * 1e6:8.2f} {algbw:7.2f} {busbw:7.2f}    N/A"


def main() -> None:
    import torch
    import torch.distributed as dist

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--minbytes", default="8")
    ap.add_argument("-e", "--maxbytes", default="1G")
    ap.add_argument("-w", "--warmup", type=int, default=5)
    ap.add_argument("-n", "--iters", type=int, default=20)
    a = ap.parse_args()
    lo, hi = parse_size(a.minbytes), parse_size(a.maxbytes)

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    hosts = [None] * world
    dist.all_gather_object(hosts, socket.gethostname())
    if rank == 0:
        v = torch.cuda.nccl.version()  # a tuple in recent torch, an int before
        print(format_header(world, lo, hi, a.warmup, a.iters, hosts, torch.__version__,
                            ".".join(map(str, v)) if isinstance(v, tuple) else str(v)),
              flush=True)
    n = lo
    while n <= hi:
        x = torch.ones(max(1, n // 4), dtype=torch.float32, device="cuda")
        for _ in range(a.warmup):
            dist.all_reduce(x)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        torch.cuda.synchronize()
        start.record()
        for _ in range(a.iters):
            dist.all_reduce(x)
        end.record()
        torch.cuda.synchronize()
        t = start.elapsed_time(end) / 1e3 / a.iters
        if rank == 0:
            print(format_row(x.numel() * 4, t, world), flush=True)
        n *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
