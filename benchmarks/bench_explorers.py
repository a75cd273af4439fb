"""How fast does every explorer respond? Median compute + redraw, per explorer.

    .venv/bin/python benchmarks/bench_explorers.py [--repeats 20] [--json out.json] [--strict]

For every explorer the course has (``course_lib.explorers.iter_explorers()``:
chapters added later are picked up automatically) this times
``Explorer.time_update``: the model call, the redraw on the reused figure and
the PNG encoding -- what a learner waits for after moving a slider (the
browser's own display time is not included).  Each explorer is timed at its
default settings and at each control's *other* values (one alternative per
control: the next option of a dropdown, the opposite end of a slider), and the
worst of those medians is reported too.  Also reported: the CPU time of the
median (``time.process_time``), which is less sensitive than wall time to
other work on a shared machine, the machine's load average, and the *floor*:
the same timing for an explorer that draws one line on one axes -- what any
matplotlib explorer costs on this machine before it draws anything of its own.

Budget: <= 100 ms median compute + redraw (120-dpi figures, with the diagram).  The
script prints OVER for an explorer above it and, with ``--strict``, exits 1.

Explorers that draw a diagram beside the plot (``Explorer(diagram=...)``: the
route or topology on the city map, :mod:`course_lib.draw`) are also timed
with the diagram drawn (``png`` + ``svg``, what ``Explorer.show`` redraws on a
change), against a budget of 100 ms; the table gives the ratio against the
same explorer without its diagram.  ``--only ch01,ch06`` times only the
explorers whose names start so.
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

BUDGET_S = 0.100  # issue 19: redraw (with its diagram) <= 100 ms median on this machine
DIAGRAM_BUDGET_S = 0.100


def _alternatives(explorer) -> list[dict]:
    """One changed value per control: a different option, or the other end of a slider."""
    from course_lib.widgets import _options

    alts = []
    for name, spec in explorer.controls.items():
        kind, value = spec["type"], spec["value"]
        if kind in ("Dropdown", "ToggleButtons"):
            opts = _options(spec)
            alt = opts[(opts.index(value) + 1) % len(opts)]
        elif kind == "Checkbox":
            alt = not value
        elif kind == "FloatLogSlider":
            base = spec.get("base", 10)
            lo, hi = base ** spec["min"], base ** spec["max"]
            alt = lo if value > (lo * hi) ** 0.5 else hi
        else:
            lo, hi = spec["min"], spec["max"]
            alt = lo if value > (lo + hi) / 2 else hi
        alts.append({name: alt})
    return alts


def _time(explorer, repeats, diagram=False, **values):
    """Median wall and CPU seconds of a redraw (with the diagram when asked: the
    worst-setting scan)."""
    wall, cpu = [], []
    explorer.png(**values)                      # warm up: fonts, caches, first figure
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        data, _png = explorer.png(**values)
        if diagram:
            explorer.svg(data)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _time_pair(explorer, repeats, **values):
    """Median wall and CPU seconds without and with the diagram, the two timed
    in turn in one loop (so that a change of load on a shared machine falls on
    both alike), and the median CPU seconds of the diagram alone."""
    plain, drawn, alone = [], [], []
    explorer.png(**values)
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        explorer.png(**values)
        plain.append((time.perf_counter() - t0, time.process_time() - c0))
        t0, c0 = time.perf_counter(), time.process_time()
        data, _png = explorer.png(**values)
        c1 = time.process_time()
        explorer.svg(data)
        c2 = time.process_time()
        drawn.append((time.perf_counter() - t0, c2 - c0))
        alone.append(c2 - c1)
    med = statistics.median
    return (med(w for w, _ in plain), med(c for _, c in plain),
            med(w for w, _ in drawn), med(c for _, c in drawn), med(alone))


def _floor_explorer():
    """The cheapest possible explorer: one axes, one line, fixed margins.  Its
    time is this machine's floor for any matplotlib explorer (figure clear,
    axes, draw, PNG encode) -- a yardstick for the others."""
    from course_lib.widgets import Explorer

    def plot(data, fig):
        fig.set_layout_engine("none")
        fig.add_subplot(1, 1, 1).plot([0, 1, 2], [0, data["x"], 0])

    return Explorer("floor", {"x": {"type": "FloatSlider", "min": 0, "max": 1, "value": 0.5}},
                    lambda x: {"x": x}, plot, figsize=(7.2, 3.6))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when an explorer's default median is over budget")
    parser.add_argument("--only", default="",
                        help="comma-separated name prefixes of the explorers to time")
    args = parser.parse_args(argv)

    from course_lib import explorers

    rows = []
    prefixes = tuple(p for p in args.only.split(",") if p)
    for name, factory in explorers.iter_explorers():
        if prefixes and not name.startswith(prefixes):
            continue
        ex = factory()
        wall, cpu = _time(ex, args.repeats)
        worst_wall, worst_at = wall, "defaults"
        for alt in _alternatives(ex):
            try:
                w, _ = _time(ex, max(3, args.repeats // 4), **alt)
            except (ValueError, TypeError):
                continue                        # a combination the explorer refuses
            if w > worst_wall:
                worst_wall, worst_at = w, ", ".join(f"{k}={v!r}" for k, v in alt.items())
        row = {"explorer": name, "median_s": wall, "median_cpu_s": cpu,
               "worst_median_s": worst_wall, "worst_at": worst_at,
               "over_budget": wall > BUDGET_S}
        if ex.diagram is not None:
            plain_w, plain_c, with_d, with_cpu, alone = _time_pair(ex, args.repeats)
            worst_d = with_d
            for alt in _alternatives(ex):
                try:
                    w, _ = _time(ex, max(3, args.repeats // 4), diagram=True, **alt)
                except (ValueError, TypeError):
                    continue
                worst_d = max(worst_d, w)
            row.update(without_diagram_median_s=plain_w, without_diagram_median_cpu_s=plain_c,
                       with_diagram_median_s=with_d, with_diagram_worst_s=worst_d,
                       with_diagram_median_cpu_s=with_cpu, diagram_alone_cpu_s=alone,
                       diagram_ratio=with_d / plain_w, diagram_cpu_ratio=with_cpu / plain_c,
                       diagram_over_budget=with_d > DIAGRAM_BUDGET_S)
        rows.append(row)

    floor_wall, floor_cpu = _time(_floor_explorer(), args.repeats)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"# Explorer response: median compute + redraw + PNG ({args.repeats} repeats); "
          f"budget {BUDGET_S * 1e3:.0f} ms; load average {load[0]:.2f} on "
          f"{os.cpu_count()} CPUs\n")
    print("| explorer | median (wall) | median (CPU) | worst setting, median | at | |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows:
        flag = "OVER" if r["over_budget"] else "ok"
        print(f"| {r['explorer']} | {r['median_s'] * 1e3:.1f} ms | {r['median_cpu_s'] * 1e3:.1f} ms"
              f" | {r['worst_median_s'] * 1e3:.1f} ms | {r['worst_at']} | {flag} |")
    print(f"| *(floor: one axes, one line)* | {floor_wall * 1e3:.1f} ms | "
          f"{floor_cpu * 1e3:.1f} ms | | | |")
    drawn = [r for r in rows if "with_diagram_median_s" in r]
    if drawn:
        print(f"\n# With the diagram beside the plot (png + svg, timed in turn with png "
              f"alone); budget {DIAGRAM_BUDGET_S * 1e3:.0f} ms\n")
        print("| explorer | without (wall / CPU) | with (wall / CPU) | worst setting, with "
              "| ratio (wall / CPU) | diagram alone (CPU) | |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for r in drawn:
            flag = "OVER" if r["diagram_over_budget"] else "ok"
            print(f"| {r['explorer']} | {r['without_diagram_median_s'] * 1e3:.1f} / "
                  f"{r['without_diagram_median_cpu_s'] * 1e3:.1f} ms | "
                  f"{r['with_diagram_median_s'] * 1e3:.1f} / "
                  f"{r['with_diagram_median_cpu_s'] * 1e3:.1f} ms | "
                  f"{r['with_diagram_worst_s'] * 1e3:.1f} ms | {r['diagram_ratio']:.2f} / "
                  f"{r['diagram_cpu_ratio']:.2f} | {r['diagram_alone_cpu_s'] * 1e3:.1f} ms "
                  f"| {flag} |")
        ratios = sorted(r["diagram_cpu_ratio"] for r in drawn)
        print(f"\n{len(drawn)} explorers draw a diagram; CPU-time ratio with/without: median "
              f"{statistics.median(ratios):.2f}, largest {ratios[-1]:.2f}; over "
              f"{DIAGRAM_BUDGET_S * 1e3:.0f} ms: {sum(r['diagram_over_budget'] for r in drawn)}")
    meds = [r["median_s"] for r in rows]
    print(f"\n{len(rows)} explorers; median of medians {statistics.median(meds) * 1e3:.1f} ms; "
          f"slowest {max(meds) * 1e3:.1f} ms; over budget: "
          f"{sum(r['over_budget'] for r in rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"budget_s": BUDGET_S, "load_average": load,
                                               "floor_s": floor_wall, "rows": rows}, indent=2))
    return 1 if args.strict and any(r["over_budget"] or r.get("diagram_over_budget")
                                    for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
