"""Speed of course_lib.sim: explorer scale, cluster scale, SimPy ratio, scaling.

(a) 8-GPU ring AllReduce, 8 chunks per step: on an ideal NVSwitch topology
    and on the calibrated single-node H100 cluster (target <= 20 ms, median);
(b) the issue-22 call: ring AllReduce of 1 GiB on ``cl.cluster("H100", 8,
    128, "nvswitch", "NDR", 8)`` -- 1,024 GPUs, one ring per NIC (8
    channels), one chunk, trace kept: ~16.8 million transfers.  Median of
    warm calls and the first call of the process, each beside the target
    (<= 1 s) and as a ratio to wave 1's 0.82 s (wave 1 ran one ring: 2.1
    million transfers);
(c) the same ring schedule as a straightforward SimPy model (a process per
    transfer, links as FIFO resources) in this process: transfers per second
    of each and the ratio (target >= 10x);
(e) the calibrated tree and two-level AllReduce (NCCL's chains and double
    binary tree; the pipelined two-level schedule) on 2-8 H100 nodes at
    1 GiB, the sizes simulate_collective cuts them into (<= 250,000
    transfers): wall time and the Python heap's peak (tracemalloc), and the
    ratio to the predictor's time (target within 5 %);
(d) scaling of (b)'s call (H100 nodes of 8 GPUs and 8 NDR NICs, one ring
    per NIC) from 8 to 16,384 ranks with ``trace=False`` (the ring played
    step by step, nothing kept per transfer): wall time of the whole
    ``simulate_collective`` call (building the cluster's topology included),
    transfers per second and peak RSS, each size in fresh child processes
    (median of 3 up to 8,192 ranks) so its peak RSS is its own; target at
    8,192 ranks: <= 10 s.  Stops after a size that takes more than ~120 s.

Run: .venv/bin/python benchmarks/bench_sim.py [--only abcde] [--max-ranks 65536]
(``--only-d`` and ``--only-e`` as before; needs the ``bench`` extra for (c): simpy)
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
WAVE1_1024_S = 0.82  # (b)'s call when the simulator landed (wave 1), 2.1 M transfers
TARGET_A_S, TARGET_B_S, TARGET_D_S = 0.020, 1.0, 10.0


def timed(fn, repeat=1, cpu=None):
    """Median wall time of ``repeat`` calls and the last result; with a list
    ``cpu``, the median CPU time of this process is appended to it (on a
    shared machine the wall time also counts the waits for a core)."""
    out, used = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        out.append(time.perf_counter() - t0)
        used.append(time.process_time() - c0)
    if cpu is not None:
        cpu.append(statistics.median(used))
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


def issue_cluster(ranks):
    """(b)'s and (d)'s machine: H100 nodes of 8 GPUs on NVSwitch, 8 NDR NICs each."""
    return cl.cluster("H100", 8, max(1, ranks // 8), "nvswitch", "NDR", 8)


def explorer_scale():
    """(a) 8 GPUs, 8 chunks per step: ideal NVSwitch and calibrated H100 node."""
    for label, machine in (("ideal NVSwitch topology", nvswitch_topology(8, gpu="H100")),
                           ("calibrated H100 node", cl.cluster("H100", nodes=1))):
        cpu = []
        t_a, r_a = timed(lambda: cl.simulate_collective("allreduce", 1e9, machine,
                                                        chunks=8), 15, cpu)
        print(f"(a) 8-GPU ring AllReduce, 8 chunks/step, {label}: {r_a.n_transfers} "
              f"transfers, median {t_a * 1e3:.1f} ms, CPU {cpu[0] * 1e3:.1f} ms "
              f"(target <= {TARGET_A_S * 1e3:.0f} ms)")


def cluster_scale():
    """(b) the issue's 1,024-rank call, trace kept: first call, then the median of 5."""
    c = issue_cluster(1024)

    def call():
        return cl.simulate_collective("allreduce", 1 << 30, c, algorithm="ring", chunks=1)
    cpu = []
    t_first, r = timed(call, 1, cpu)
    t_b, r = timed(call, 5, cpu)
    rate = r.n_transfers / t_b
    print(f"(b) 1,024-GPU ring AllReduce, 1 GiB, 128 x 8 H100, 8 NDR NICs/node, one ring "
          f"per NIC, trace kept: {r.n_transfers:,} transfers")
    print(f"    median {t_b:.2f} s, CPU {cpu[1]:.2f} s (target <= {TARGET_B_S:.0f} s); "
          f"first call {t_first:.2f} s, CPU {cpu[0]:.2f} s; {rate:,.0f} transfers/s")
    print(f"    vs wave 1 ({WAVE1_1024_S} s, one ring, 2.1 M transfers): time x"
          f"{t_b / WAVE1_1024_S:.2f}, transfers/s x"
          f"{rate / (2 * 1024 * 1023 / WAVE1_1024_S):.1f}")


def main():
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else "abcde"
    if "a" in only:
        explorer_scale()
    if "b" in only:
        cluster_scale()
    if "c" in only:
        simpy_ratio()
    if "d" in only:
        scaling()
    if "e" in only:
        pipelined()


def simpy_ratio():
    """(c) SimPy on the same schedule, same process."""
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("(c) skipped: simpy is not installed (pip install -e '.[bench]')")
        return
    topo_c = cluster_topo(256)
    t_ours, r_ours = timed(lambda: cl.simulate_collective("allreduce", 1e9, topo_c), 3)
    t_sp, (t_end, n_sp) = timed(lambda: simpy_ring(topo_c, 1e9), 1)
    ours, theirs = r_ours.n_transfers / t_ours, n_sp / t_sp
    print(f"(c) 256-GPU ring ({n_sp:,} transfers): course_lib {ours:,.0f}/s, "
          f"SimPy {theirs:,.0f}/s, ratio {ours / theirs:.0f}x (target >= 10x); "
          f"simulated times {r_ours.time_s * 1e3:.4f} ms vs {t_end * 1e3:.4f} ms")


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


def one_size(n, channels=None):
    """Child process of (d): simulate n ranks with trace=False, print one line."""
    import resource

    c = issue_cluster(n)
    t0, c0 = time.perf_counter(), time.process_time()
    r = cl.simulate_collective("allreduce", 1 << 30, c, trace=False, channels=channels)
    t1, c1 = time.perf_counter(), time.process_time()
    try:  # VmHWM: this process's own peak (ru_maxrss would keep the parent's from fork)
        with open("/proc/self/status") as f:
            rss = next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmHWM:"))
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps(dict(n=n, transfers=r.n_transfers, sim_s=t1 - t0, cpu_s=c1 - c0,
                          rss_bytes=rss, time_s=r.time_s)))


def child(n, channels=None):
    import subprocess

    cmd = [sys.executable, __file__, "--one", str(n)]
    if channels is not None:
        cmd += ["--channels", str(channels)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def scaling():
    """(d) (b)'s call with trace=False, 8 ... MAX_RANKS ranks, fresh children per size."""
    max_ranks = MAX_RANKS
    if "--max-ranks" in sys.argv:
        max_ranks = int(sys.argv[sys.argv.index("--max-ranks") + 1])
    print("(d) ring AllReduce, 1 GiB, H100 x 8 per node, 8 NDR NICs, one ring per NIC, "
          "trace=False (fresh process per run)")
    print("    ranks      transfers  runs  median s  median CPU s   transfers/s"
          "  peak RSS (GB)  simulated ms")

    def line(n, runs, note=""):
        d = runs[0]
        t = statistics.median(x["sim_s"] for x in runs)
        cpu = statistics.median(x["cpu_s"] for x in runs)
        rss = max(x["rss_bytes"] for x in runs)
        print(f"    {n:6d}  {d['transfers']:13,d}  {len(runs):4d}  {t:8.3f}  {cpu:12.3f}"
              f"  {d['transfers'] / t:12,.0f}  {rss / 1e9:13.2f}"
              f"  {d['time_s'] * 1e3:12.3f}{note}")
        return t
    n = 8
    while n <= max_ranks:
        runs = [child(n) for _ in range(3 if n <= 8192 else 1)]
        t = line(n, runs, f"   (target <= {TARGET_D_S:.0f} s)" if n == 8192 else "")
        if t > STOP_AFTER_S:
            print(f"    stopped: {n} ranks took more than {STOP_AFTER_S:.0f} s")
            break
        n *= 2
    if max_ranks >= 8192:
        print("    the same with one ring (channels=1), as the issue counted its transfers:")
        line(8192, [child(8192, 1) for _ in range(3)], f"   (target <= {TARGET_D_S:.0f} s)")


if __name__ == "__main__":
    if "--one" in sys.argv:
        ch = int(sys.argv[sys.argv.index("--channels") + 1]) if "--channels" in sys.argv \
            else None
        one_size(int(sys.argv[sys.argv.index("--one") + 1]), ch)
    elif "--only-d" in sys.argv:
        scaling()
    elif "--only-e" in sys.argv:
        pipelined()
    else:
        main()
