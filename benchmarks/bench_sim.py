"""Speed of course_lib.sim: explorer scale, cluster scale, SimPy ratio, scaling.

(a) 8-GPU NVSwitch ring AllReduce, 8 chunks per step (target <= 20 ms);
(b) ring AllReduce on 1,024 GPUs (128 nodes x 8, two-level topology, sharing
    on, one chunk per step: ~2.1 million transfers) (target <= 5 s);
(c) the same ring schedule as a straightforward SimPy model (a process per
    transfer, links as FIFO resources) in this process: transfers per second
    of each and the ratio (target >= 10x);
(e) the calibrated tree and two-level AllReduce (NCCL's chains and double
    binary tree; the pipelined two-level schedule) on 2-8 H100 nodes at
    1 GiB, the sizes simulate_collective cuts them into (<= 250,000
    transfers): wall time and the Python heap's peak (tracemalloc), and the
    ratio to the predictor's time (target within 5 %);
(d) scaling of the ring AllReduce (two-level, 8 GPUs per node, one chunk)
    from 8 to 16,384 ranks with ``trace=False`` (the ring played step by
    step, nothing kept per transfer): wall time, transfers per second and
    peak RSS, each size in a fresh child process so its peak RSS is its own;
    stops after a size that takes more than ~120 s.

Run: .venv/bin/python benchmarks/bench_sim.py [--max-ranks 65536] [--only-d] [--only-e]
(needs the ``bench`` extra for (c): simpy)
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import course_lib as cl  # noqa: E402
from course_lib.sim import Network  # noqa: E402
from course_lib.topology import nvswitch_topology, two_level_topology  # noqa: E402

MAX_RANKS = 16384  # (d) goes up to this; --max-ranks N (up to 65,536) for more
STOP_AFTER_S = 120.0


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
    scaling()


def pipelined():
    """(e) calibrated tree / two-level AllReduce: time, heap peak, sim/predict."""
    import tracemalloc

    print("(e) calibrated pipelined schedules, 1 GiB, H100 over 8x NDR per node")
    print("    algorithm      nodes   transfers   wall s  heap peak MB  sim/predict")
    for algo in ("tree", "hierarchical"):
        for nodes in (2, 4, 8):
            c = cl.cluster("H100", nodes=nodes, nic="NDR")
            tracemalloc.start()
            t, r = timed(lambda: cl.simulate_collective("allreduce", 2**30, c,
                                                        algorithm=algo), 1)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            p = cl.predict_collective("allreduce", 2**30, c, algorithm=algo)
            ref = p.candidates.get(f"{algo}/simple", p.time_s)
            print(f"    {algo:13s} {nodes:6d} {r.n_transfers:11,d} {t:8.2f} "
                  f"{peak / 1e6:13.0f} {r.time_s / ref:12.3f}")


def one_size(n):
    """Child process of (d): simulate n ranks with trace=False, print one line."""
    import resource

    t0 = time.perf_counter()
    topo = cluster_topo(n)
    t1 = time.perf_counter()
    r = cl.simulate_collective("allreduce", 1e9, topo, trace=False)
    t2 = time.perf_counter()
    try:  # VmHWM: this process's own peak (ru_maxrss would keep the parent's from fork)
        with open("/proc/self/status") as f:
            rss = next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmHWM:"))
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps(dict(n=n, transfers=r.n_transfers, build_s=t1 - t0, sim_s=t2 - t1,
                          rss_bytes=rss, time_s=r.time_s)))


def scaling():
    """(d) ring AllReduce, trace=False, 8 ... MAX_RANKS ranks, one child per size."""
    import subprocess

    max_ranks = MAX_RANKS
    if "--max-ranks" in sys.argv:
        max_ranks = int(sys.argv[sys.argv.index("--max-ranks") + 1])
    print("(d) ring AllReduce, two-level H100/NDR, 1 GB, trace=False (fresh process per size)")
    print("    ranks      transfers  topology s     sim s   transfers/s  peak RSS (GB)"
          "  simulated ms")
    n = 8
    while n <= max_ranks:
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], check=True,
                             capture_output=True, text=True).stdout
        d = json.loads(out.strip().splitlines()[-1])
        print(f"    {n:6d}  {d['transfers']:13,d}  {d['build_s']:10.3f}  {d['sim_s']:8.3f}"
              f"  {d['transfers'] / d['sim_s']:12,.0f}  {d['rss_bytes'] / 1e9:13.2f}"
              f"  {d['time_s'] * 1e3:12.3f}")
        if d["build_s"] + d["sim_s"] > STOP_AFTER_S:
            print(f"    stopped: {n} ranks took more than {STOP_AFTER_S:.0f} s")
            break
        n *= 2


if __name__ == "__main__":
    if "--one" in sys.argv:
        one_size(int(sys.argv[sys.argv.index("--one") + 1]))
    elif "--only-d" in sys.argv:
        scaling()
    elif "--only-e" in sys.argv:
        pipelined()
    else:
        main()
        pipelined()
