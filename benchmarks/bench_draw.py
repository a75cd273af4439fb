"""How fast do the chapters 7-11 explorers redraw with their diagrams, and what does each drawing cost?

    .venv/bin/python benchmarks/bench_draw.py [--repeats 15] [--json out.json] [--strict]

Part 1 -- every explorer of chapters 7-11 that draws a diagram: the median of
``Explorer.time_update`` (model call + figure redraw + PNG encoding + the
diagram's SVG), what a learner waits for after moving a control, at the
default settings and at each control's other end (worst median reported), the
CPU time of the median (``time.process_time``, steadier than wall time on a
shared machine), the diagram alone, and the *floor*: an explorer that draws
one line on one axes and no diagram (``bench_explorers``), what any
matplotlib explorer costs on this machine at this moment.  Budget (issue 19): <= 100 ms
median per redraw with its diagram; ``--strict`` exits 1 above it.

Part 2 -- each drawing of :mod:`course_lib.draw.collectives` and
:mod:`course_lib.draw.timeline` alone: median time to build one state and the
whole animation (what the static edition embeds), and its size in bytes; and
the drawings of the city (:func:`course_lib.draw.city_map`, its close-ups)
and chapter 6's road maps, which draw the same GPU glyph.
``--drawings-only`` skips part 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

BUDGET_S = 0.100
CHAPTERS = ("ch07", "ch08", "ch09", "ch10", "ch11")


def _median(fn, repeats):
    wall, cpu = [], []
    fn()                                        # warm up: fonts, caches
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def explorer_rows(repeats):
    from bench_explorers import _alternatives
    from course_lib import explorers

    rows = []
    for name, factory in explorers.iter_explorers():
        if not name.startswith(CHAPTERS):
            continue
        ex = factory()
        if ex.diagram is None:
            continue

        def redraw(values):
            data, _png = ex.png(**values)
            ex.svg(data)

        wall, cpu = _median(lambda: redraw({}), repeats)
        data = ex.update()
        svg_wall, _ = _median(lambda: ex.svg(data), repeats)
        worst, at = wall, "defaults"
        for alt in _alternatives(ex):
            try:
                w, _ = _median(lambda: redraw(alt), max(3, repeats // 3))
            except (ValueError, TypeError):
                continue
            if w > worst:
                worst, at = w, ", ".join(f"{k}={v!r}" for k, v in alt.items())
        rows.append({"explorer": name, "median_s": wall, "median_cpu_s": cpu,
                     "diagram_s": svg_wall, "worst_median_s": worst, "worst_at": at,
                     "over_budget": wall > BUDGET_S})
    return rows


def drawing_rows(repeats):
    import course_lib as cl
    from course_lib.draw import collectives as C
    from course_lib.draw import timeline as T

    sched = cl.traffic.bucket_overlap_schedule(0.5, 0.4, n_buckets=8, t_forward_s=0.25)
    clu = cl.cluster("H100", nodes=2, nic="NDR")
    cases = {
        "ring_allreduce(8, step=3)": lambda: C.ring_allreduce(8, step=3),
        "ring_allreduce(8) animated, 15 frames": lambda: C.ring_allreduce(8),
        "ring_allreduce_strip(8)": lambda: C.ring_allreduce_strip(8),
        "double_binary_tree(16, step=2)": lambda: C.double_binary_tree(16, step=2),
        "double_binary_tree(16) animated": lambda: C.double_binary_tree(16),
        "nvls(8) animated": lambda: C.nvls(8),
        "hierarchical(2, 8, step=2, cluster)": lambda: C.hierarchical(2, 8, step=2, cluster=clu),
        "hierarchical(4, 8) animated": lambda: C.hierarchical(4, 8),
        "two_way_tracks(H100)": lambda: C.two_way_tracks("H100"),
        "collective_effect(allgather, 8)": lambda: C.collective_effect("allgather", 8),
        "tree_chain(8, step=2)": lambda: C.tree_chain(8, step=2),
        "city_map(H100 x 8, 2 nodes, NDR, route rdma)": lambda: cl.draw.city_map(
            clu, route="rdma", pair=(0, 8)),
        "copy_path(pageable)": lambda: cl.draw.copy_path("pageable"),
        "network_path(rdma)": lambda: cl.draw.network_path("rdma"),
        "topology_map(two-level 2 x 8, route 0-9)": lambda: cl.draw.topology_map(
            cl.topology.two_level_topology(2, 8), highlight_pair=(0, 9)),
        "topology_map(ring 8, route 0-4)": lambda: cl.draw.topology_map(
            cl.topology.ring_topology(8), highlight_pair=(0, 4)),
        "bucket_timeline, 8 buckets": lambda: T.bucket_timeline([("s", sched)], n_ranks=8),
        "barrier_timeline 8 x 24": lambda: T.barrier_timeline(
            cl.traffic.straggler_phase_times_s(8, 24, 0.01, jitter=0.1, seed=7)),
    }
    rows = []
    for name, fn in cases.items():
        wall, cpu = _median(fn, repeats)
        rows.append({"drawing": name, "median_s": wall, "median_cpu_s": cpu,
                     "svg_bytes": len(fn().svg)})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when an explorer's default median is over budget")
    parser.add_argument("--drawings-only", action="store_true",
                        help="only part 2: each drawing alone (no explorer redraws)")
    args = parser.parse_args(argv)

    from bench_explorers import _floor_explorer

    ex_rows = [] if args.drawings_only else explorer_rows(args.repeats)
    dr_rows = drawing_rows(args.repeats)
    floor = _floor_explorer()
    floor_wall, floor_cpu = _median(lambda: floor.png(), args.repeats)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"# Chapters 7-11: explorer redraw with its diagram ({args.repeats} repeats); "
          f"budget {BUDGET_S * 1e3:.0f} ms; load average {load[0]:.2f} on "
          f"{os.cpu_count()} CPUs\n")
    print("| explorer | median (wall) | median (CPU) | diagram alone | worst setting, "
          "median | at | |")
    print("|---|---:|---:|---:|---:|---|---|")
    for r in ex_rows:
        print(f"| {r['explorer']} | {r['median_s'] * 1e3:.1f} ms | "
              f"{r['median_cpu_s'] * 1e3:.1f} ms | {r['diagram_s'] * 1e3:.1f} ms | "
              f"{r['worst_median_s'] * 1e3:.1f} ms | {r['worst_at']} | "
              f"{'OVER' if r['over_budget'] else 'ok'} |")
    print(f"| *(floor: one axes, one line, no diagram)* | {floor_wall * 1e3:.1f} ms | "
          f"{floor_cpu * 1e3:.1f} ms | | | | |")
    print("\n| drawing | median (wall) | median (CPU) | SVG size |")
    print("|---|---:|---:|---:|")
    for r in dr_rows:
        print(f"| {r['drawing']} | {r['median_s'] * 1e3:.1f} ms | "
              f"{r['median_cpu_s'] * 1e3:.1f} ms | {r['svg_bytes'] / 1024:.0f} KiB |")
    meds = [r["median_s"] for r in ex_rows]
    if meds:
        print(f"\n{len(ex_rows)} explorers with diagrams; median of medians "
              f"{statistics.median(meds) * 1e3:.1f} ms; slowest {max(meds) * 1e3:.1f} ms; "
              f"over budget: {sum(r['over_budget'] for r in ex_rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"budget_s": BUDGET_S, "load_average": load,
                                               "floor_s": floor_wall,
                                               "floor_cpu_s": floor_cpu,
                                               "explorers": ex_rows, "drawings": dr_rows},
                                              indent=2))
    return 1 if args.strict and any(r["over_budget"] for r in ex_rows) else 0


if __name__ == "__main__":
    sys.exit(main())
