"""Speed of course_lib.sim: explorer scale, cluster scale, SimPy ratio, scaling.

(a) 8-GPU NVSwitch ring AllReduce, 8 chunks per step (target <= 20 ms);
(b) ring AllReduce on 1,024 GPUs (128 nodes x 8, two-level topology, sharing
    on, one chunk per step: ~2.1 million transfers) (target <= 5 s);
(c) the same ring schedule as a straightforward SimPy model (a process per
    transfer, links as FIFO resources) in this process: transfers per second
    of each and the ratio (target >= 10x);
(d) time from 8 to 16,384 ranks, stopping once a size passes ~30 s or would
    need more than ``MAX_TRANSFERS`` transfers (memory on a shared machine).

Run: .venv/bin/python benchmarks/bench_sim.py   (needs the ``bench`` extra: simpy)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import course_lib as cl  # noqa: E402
from course_lib.sim import Network  # noqa: E402
from course_lib.topology import nvswitch_topology, two_level_topology  # noqa: E402

MAX_TRANSFERS = 5_000_000  # raise with --max-transfers N on a quiet machine


def timed(fn, repeat=1):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), res


def cluster_topo(ranks):
    return two_level_topology(max(1, ranks // 8), min(8, ranks), gpu="H100", nic="NDR")


def simpy_ring(topo, n_bytes):
    """The ring AllReduce schedule, one chunk, as a plain SimPy model."""
    import simpy

    net = Network(topo)
    ranks = net.gpus
    n = len(ranks)
    env = simpy.Environment()
    links = [simpy.Resource(env, capacity=1) for _ in net.link_names]
    piece = n_bytes / n
    steps = 2 * (n - 1)
    arrived = [[env.event() for _ in range(n)] for _ in range(steps)]
    routes = [net.route(ranks[i], ranks[(i + 1) % n]) for i in range(n)]
    lat = [net.route_latency_s(ranks[i], ranks[(i + 1) % n]) for i in range(n)]
    count = [0]

    def deliver(s, i):
        yield env.timeout(lat[i])
        count[0] += 1
        arrived[s][(i + 1) % n].succeed()

    def rank(i):
        # rank i sends one piece per step, after the piece from rank i-1 arrived;
        # it may send the next step as soon as its last byte has left
        for s in range(steps):
            if s > 0:
                yield arrived[s - 1][(i - 1) % n]
            reqs = [links[l].request() for l in routes[i]]
            yield env.all_of(reqs)
            yield env.timeout(piece / min(net.link_bw[l] for l in routes[i]))
            for l, r in zip(routes[i], reqs):
                links[l].release(r)
            env.process(deliver(s, i))

    for i in range(n):
        env.process(rank(i))
    env.run()
    return env.now, count[0]


def main():
    # (a) explorer scale
    topo8 = nvswitch_topology(8, gpu="H100")
    t_a, r_a = timed(lambda: cl.simulate_collective("allreduce", 1e9, topo8, chunks=8), 7)
    print(f"(a) 8-GPU ring AllReduce, 8 chunks/step: {len(r_a.schedule)} transfers, "
          f"median {t_a * 1e3:.1f} ms (target <= 20 ms)")
    # (b) cluster scale
    topo = cluster_topo(1024)
    t_b, r_b = timed(lambda: cl.simulate_collective("allreduce", 1e9, topo), 1)
    rate_b = len(r_b.schedule) / t_b
    print(f"(b) 1,024-GPU ring AllReduce (128 x 8, two-level): {len(r_b.schedule):,} "
          f"transfers in {t_b:.2f} s = {rate_b:,.0f} transfers/s (target <= 5 s)")
    # (c) SimPy on the same schedule, same process
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("(c) skipped: simpy is not installed (pip install -e '.[bench]')")
    else:
        topo_c = cluster_topo(256)
        t_ours, r_ours = timed(lambda: cl.simulate_collective("allreduce", 1e9, topo_c), 3)
        t_sp, (t_end, n_sp) = timed(lambda: simpy_ring(topo_c, 1e9), 1)
        ours, theirs = len(r_ours.schedule) / t_ours, n_sp / t_sp
        print(f"(c) 256-GPU ring ({n_sp:,} transfers): course_lib {ours:,.0f}/s, "
              f"SimPy {theirs:,.0f}/s, ratio {ours / theirs:.0f}x (target >= 10x); "
              f"simulated times {r_ours.time_s * 1e3:.4f} ms vs {t_end * 1e3:.4f} ms")
    # (d) scaling: measured while it fits, then extrapolated (said so)
    import resource

    max_transfers = MAX_TRANSFERS
    if "--max-transfers" in sys.argv:
        max_transfers = int(float(sys.argv[sys.argv.index("--max-transfers") + 1]))
    print("(d) ranks  transfers      wall s   transfers/s   peak RSS (GB)")
    n, rate, bytes_per_transfer = 8, None, None
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    while n <= 16384:
        transfers = 2 * (n - 1) * n
        if transfers > max_transfers or (rate is not None and transfers / rate > 60):
            est_s = transfers / rate if rate else float("nan")
            est_gb = transfers * bytes_per_transfer / 1e9 if bytes_per_transfer else float("nan")
            print(f"    {n:5d}  {transfers:12,d}  not run: extrapolated ~{est_s:,.0f} s and "
                  f"~{est_gb:,.1f} GB (schedule + trace hold every transfer)")
            n *= 2
            continue
        t_d, _ = timed(lambda: cl.simulate_collective("allreduce", 1e9, cluster_topo(n)), 1)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        rate = transfers / t_d
        if transfers >= 1_000_000:
            bytes_per_transfer = max(rss - base_rss, 1) / transfers
        print(f"    {n:5d}  {transfers:12,d}  {t_d:9.3f}  {rate:12,.0f}   {rss / 1e9:6.2f}")
        n *= 2


if __name__ == "__main__":
    main()
