"""Golden traces: three fixed simulator runs, printed one op a line and diffed
against ``tests/golden/*.txt`` (the way SimPy checks its examples' output).

A change to the engines, the schedules or the calibrated roads that moves any
time by more than the 9 significant digits printed shows up as a diff.  After
a change that *should* move them, rewrite the files with
``UPDATE_GOLDEN=1 python -m pytest tests/test_sim_golden.py`` and review the
diff in git.
"""

import os
import pathlib

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim import Network, ScheduleBuilder, run_events, simulate_collective
from course_lib.sim.workloads import straggler_step

GOLDEN = pathlib.Path(__file__).parent / "golden"


def trace_text(title: str, trace) -> str:
    """One line per op: id, kind, route, bytes, start/sent/end in us, bottleneck link."""
    lines = [f"# {title}", f"# makespan_us {trace.makespan_s * 1e6:.9g}",
             "# op kind src->dst bytes start_us sent_us end_us bottleneck"]
    for i, r in enumerate(trace.to_rows()):
        lines.append(f"{i} {r['kind']} {r['src']}->{r['dst']} {r['n_bytes']:.9g} "
                     f"{r['start_s'] * 1e6:.9g} {r['sent_s'] * 1e6:.9g} "
                     f"{r['end_s'] * 1e6:.9g} {r['link'] or '-'}")
    return "\n".join(lines) + "\n"


def ring_on_a100_mesh():
    """Batched engine, calibrated roads: a 1 MiB ring AllReduce on 4x A100
    (NVLink mesh), one ring in rank order, cut in 2 chunks, with NCCL's overheads."""
    clu = cl.cluster("A100", gpus_per_node=4, fabric="mesh")
    r = simulate_collective("allreduce", 2**20, clu, "ring", chunks=2, channels=1)
    return "1 MiB ring AllReduce, 4x A100 mesh, chunks=2, batched", r.trace


def straggler_on_nvswitch():
    """Event engine with computes: 4 H100 on an ideal NVSwitch, rank 2 computes
    50 us longer, then all ring-AllReduce 4 MiB."""
    net = Network(cl.nvswitch_topology(4, gpu="H100"))
    res = straggler_step(net, 4 * 2**20, 100e-6, slow_rank=2, slow_by_s=50e-6)
    return "straggler: 4x H100 NVSwitch, rank 2 +50 us, 4 MiB AllReduce, events", res.trace


def random_contention_seed7():
    """Event engine, max-min fair sharing: 16 sends drawn with seed 7 between
    4 GPUs of two nodes (one NIC each), each waiting for one earlier send or
    none, on two queues per GPU -- several share the NICs at once."""
    rng = np.random.default_rng(7)
    net = Network(cl.two_level_topology(2, 2, gpu="A100", nic="HDR", nics_per_node=1))
    b = ScheduleBuilder()
    b.batched = False
    gpus = net.gpus
    for i in range(16):
        a, c = rng.choice(len(gpus), size=2, replace=False)
        dep = int(rng.integers(-1, i)) if i else -1
        b.add_sends([net.index[gpus[a]]], [net.index[gpus[c]]],
                    [float(rng.integers(1, 64)) * 2**16], queue=[2 * a + i % 2],
                    deps=[[dep]], extra_s=float(rng.integers(0, 5)) * 1e-6)
    return "16 random sends (seed 7), 2 nodes x 2 A100, 1 HDR NIC each, events", \
        run_events(b.build(), net)


EXAMPLES = {"ring_a100_mesh": ring_on_a100_mesh,
            "straggler_h100_nvswitch": straggler_on_nvswitch,
            "random_contention_seed7": random_contention_seed7}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_trace_matches_golden(name):
    text = trace_text(*EXAMPLES[name]())
    path = GOLDEN / f"sim_{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest {__file__}"
    want = path.read_text()
    if text != want:
        import difflib

        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                            str(path), "this run", n=1))
        pytest.fail(f"the simulator's trace moved:\n{diff[:4000]}")


def test_golden_traces_are_not_trivial():
    """The examples exercise what they claim: computes, overheads, contention."""
    _, ring = ring_on_a100_mesh()
    assert (ring.rows["start_s"] > 0).all()  # the launch and base latency come first
    _, strag = straggler_on_nvswitch()
    assert (strag.rows["kind"] == 1).sum() == 4
    _, rand = random_contention_seed7()
    sends = rand.to_rows()
    # some sends overlapped on a NIC link (max-min sharing had work to do)
    nic = [r for r in sends if r["link"] and "nic" in r["link"]]
    overlaps = sum(1 for x in nic for y in nic if x is not y and x["link"] == y["link"]
                   and x["start_s"] < y["sent_s"] and y["start_s"] < x["sent_s"])
    assert overlaps > 0
