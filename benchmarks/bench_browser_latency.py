"""How long does a learner wait in the browser? Control move -> new picture on screen.

    .venv/bin/python benchmarks/bench_browser_latency.py [--moves 4] [--only ch03,ch09]
        [--compare OTHER_CHECKOUT] [--json out.json] [--port 18530]

``benchmarks/bench_explorers.py`` times the kernel's side only (model, redraw,
PNG).  This one measures what a learner waits for: a learner's JupyterLab
(``scripts/lab_session.py``, as the browser tests start it) driven by Debian's
chromium (Playwright).  For every explorer a chapter shows (the chapter's own
``.show()`` line, run in a notebook of its own next to ``import course_lib as
cl``, so no chapter's lab runs first), the benchmark

* moves every control a learner can move: each slider one position at a time
  by keyboard, ``--moves`` times one way (every move a setting not shown
  before), each dropdown and toggle group to the next option and the one
  after it;
* for each move, records the time from just before the key press (or click)
  to the last change of the explorer's picture: a ``MutationObserver`` on the
  figure (``.ic-plot``), the drawing (``.ic-drawing``) and the readout
  (``.ic-readout``), plus the ``load`` event of the figure's new image (the
  PNG decoded), all in the page's own clock (``performance.now()``); a move is
  over when nothing has changed for ``--quiet-ms``;
* reports per explorer the median and the largest of those times over the
  fresh settings (a move back to a setting already shown, which an explorer
  shows again without a redraw, is counted apart), and its slowest control.

Chapter 7's ring stepper (the explorer with ▶ Play) is also played: when each
step reaches the slider and when the drawing shows it (the drawing's lag), and
the interval between drawn steps against the declared ``play_interval``.

``--compare CHECKOUT`` starts a second Lab on another checkout of the course
(e.g. ``git archive <commit> | tar -x -C /tmp/before``) and measures each
explorer on both in turn (alternating which goes first), so that a busy,
shared machine loads both alike; the table is then before/after.

Goal: median <= 300 ms per explorer on the course's 2-core reference machine.
Wall-clock numbers depend on the load: run it on a quiet machine, and compare
before/after only under the same conditions.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import lab_session  # noqa: E402

GOAL_S = 0.300
TOKEN = "bench-browser-latency"

_ARM_JS = """el => {
  const st = window.__icBench = window.__icBench || {};
  if (st.obs) st.obs.disconnect();
  st.t0 = performance.now(); st.last = null; st.n = 0;
  const mark = () => { st.last = performance.now(); st.n += 1; };
  st.obs = new MutationObserver(mark);
  for (const sel of ['.ic-plot', '.ic-drawing', '.ic-readout'])
    for (const node of el.querySelectorAll(sel))
      st.obs.observe(node, {subtree: true, childList: true, attributes: true,
                            characterData: true});
  if (!el.__icLoad) { el.__icLoad = true;
    el.addEventListener('load', () => { const s = window.__icBench;
      if (s) { s.last = performance.now(); s.n += 1; } }, true); }
  return st.t0;
}"""
_STATE_JS = "() => { const s = window.__icBench; return [s.t0, s.last, s.n, performance.now()]; }"


def _notebook(call: str) -> dict:
    """A one-explorer notebook: the chapter's own call after ``import course_lib as cl``."""
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1",
                       "metadata": {}, "outputs": [],
                       "source": ["import course_lib as cl\n", call]}],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def explorer_calls() -> list[tuple[str, str, str]]:
    """``(chapter, explorer name, call)`` for every ``.show()`` line of the chapters and of
    the optional your_cluster notebook."""
    found, seen = [], set()
    paths = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    paths += [p for p in [REPO / "notebooks" / "your_cluster.ipynb"] if p.exists()]
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                m = re.search(r"cl\.explorers\.(\w+)\.(\w+)\(.*\)\.show\(\)", line)
                if m and line.strip() not in seen:
                    seen.add(line.strip())
                    name = m.group(1) + ("" if m.group(2) == "explorer" else "." + m.group(2))
                    chapter = path.stem[:2] if path.stem[:2].isdigit() else path.stem
                    found.append((chapter, name, line.strip()))
    return found


def _wait_quiet(page, quiet_ms, timeout_s):
    """Seconds from the arm to the last change, once nothing changed for quiet_ms;
    None if nothing changed within timeout_s."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        t0, last, n, now = page.evaluate(_STATE_JS)
        if n and now - last >= quiet_ms:
            return (last - t0) / 1000.0
        page.wait_for_timeout(50)
    t0, last, n, _now = page.evaluate(_STATE_JS)
    return (last - t0) / 1000.0 if n else None


def _move(page, explorer, quiet_ms, timeout_s, act):
    explorer.evaluate(_ARM_JS)
    act()
    return _wait_quiet(page, quiet_ms, timeout_s)


def _measure_moves(page, explorer, moves, quiet_ms, timeout_s):
    """``{control label: [(seconds or None, fresh) per move]}`` for every slider
    (keyboard, ``moves`` positions, one way where it has room: each a setting not
    shown before), dropdown and toggle group (the next option, then the one after
    it: fresh when the control has three or more).  ``fresh`` is False for a move
    back to a setting already shown (which an explorer may show without a redraw)."""
    result = {}
    handles = explorer.locator(".widget-hslider .noUi-handle")
    for i in range(handles.count()):
        handle = handles.nth(i)
        if handle.get_attribute("aria-disabled") == "true":
            continue
        label = handle.evaluate(
            "h => { const s = h.closest('.widget-hslider');"
            " const d = s && s.querySelector('.widget-label'); return d ? d.textContent : ''; }")
        now, lo, hi = (float(handle.get_attribute(a))
                       for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
        right = int(round(hi - now))
        keys = (["ArrowRight"] * moves if right >= moves else
                ["ArrowLeft"] * moves if now - lo >= moves else
                ["ArrowRight"] * right + ["ArrowLeft"] * (moves - right))
        samples, seen = [], {now}
        for key in keys:
            handle.focus()
            t = _move(page, explorer, quiet_ms, timeout_s,
                      lambda key=key: page.keyboard.press(key))
            at = float(handle.get_attribute("aria-valuenow"))
            samples.append((t, at not in seen))
            seen.add(at)
        result[f"slider {label or i}"] = samples
    selects = explorer.locator("select")
    for i in range(selects.count()):
        select = selects.nth(i)
        options = select.locator("option").all_inner_texts()
        k = options.index(select.evaluate("s => s.options[s.selectedIndex].text"))
        picks = [options[(k + 1) % len(options)], options[(k + 2) % len(options)]]
        result[f"dropdown {i}"] = [
            (_move(page, explorer, quiet_ms, timeout_s,
                   lambda label=label: select.select_option(label=label)),
             len(options) > 2 or j == 0)
            for j, label in enumerate(picks)]
    groups = explorer.locator(".widget-toggle-buttons")
    for i in range(groups.count()):
        buttons = groups.nth(i).locator("button")
        count = buttons.count()
        if count < 2:
            continue
        pressed = next(k for k in range(count)
                       if "mod-active" in (buttons.nth(k).get_attribute("class") or ""))
        result[f"toggle {i}"] = [
            (_move(page, explorer, quiet_ms, timeout_s,
                   lambda k=(pressed + j + 1) % count: buttons.nth(k).click()),
             count > 2 or j == 0)
            for j in range(2)]
    return result


_PLAY_JS = """el => {
  const st = window.__icPlay = {slider: {}, drawn: {}, order: []};
  const handle = el.querySelector('.ic-play').parentElement.querySelector('.noUi-handle');
  const drawing = el.querySelector('.ic-drawing');
  const shown = () => { const m = drawing.textContent.match(/step (\\d+) \\/ (\\d+)/);
    return m ? Number(m[1]) : null; };
  st.obsS = new MutationObserver(() => { const k = Number(handle.getAttribute('aria-valuenow'));
    if (!(k in st.slider)) st.slider[k] = performance.now(); });
  st.obsS.observe(handle, {attributes: true, attributeFilter: ['aria-valuenow']});
  st.obsD = new MutationObserver(() => { const k = shown();
    if (k !== null && !(k in st.drawn)) { st.drawn[k] = performance.now(); st.order.push(k); } });
  st.obsD.observe(drawing, {subtree: true, childList: true, characterData: true});
  el.querySelector('.ic-play button').click();
}"""


def _measure_play(page, explorer, seconds):
    """Play from step 0: when each step reaches the slider and the drawing."""
    explorer.evaluate(_PLAY_JS)
    page.wait_for_timeout(int(seconds * 1000))
    got = page.evaluate("() => { const s = window.__icPlay; s.obsS.disconnect();"
                        " s.obsD.disconnect(); return [s.slider, s.drawn, s.order]; }")
    explorer.locator(".ic-play button").first.click()         # pause
    slider = {int(k): v for k, v in got[0].items()}
    drawn = {int(k): v for k, v in got[1].items()}
    order = got[2]
    steps = sorted(set(slider) & set(drawn))
    lags = [(drawn[k] - slider[k]) / 1000 for k in steps]
    times = [drawn[k] for k in sorted(drawn)]
    gaps = [(b - a) / 1000 for a, b in zip(times, times[1:])]
    return {"steps_drawn": order, "steps_on_slider": sorted(slider),
            "median_interval_s": statistics.median(gaps) if gaps else None,
            "median_lag_s": statistics.median(lags) if lags else None,
            "max_lag_s": max(lags) if lags else None}


def _start(module, root, calls):
    """A Lab over the benchmark's notebooks: ``make lab`` in a copy of the course
    (``lab_session.lab_checkout``) where that checkout has it, else the older
    harness (a Lab over a folder of notebooks, fixed token)."""
    if hasattr(module, "lab_checkout"):
        checkout = module.lab_checkout(root)
        folder = checkout / "notebooks" / "bench"
    else:
        checkout, folder = root, root / "notebooks"
    folder.mkdir(parents=True)
    for i, (_ch, name, call) in enumerate(calls):
        (folder / f"{i:02d}_{name}.ipynb").write_text(json.dumps(_notebook(call)))
    if hasattr(module, "lab_checkout"):
        return module.start_lab(checkout, lab_args=("--no-browser",
                                                    "--LabApp.expose_app_in_browser=True"))
    return module.start_lab(root, TOKEN)


def _notebook_url(lab, notebook):
    if hasattr(lab, "url"):
        return lab.url(f"notebooks/bench/{notebook}")
    return f"{lab[1]}/lab/tree/{notebook}?token={TOKEN}&reset"


def _open_and_measure(page, lab, notebook, args):
    """Open one explorer's notebook, run it, measure its moves (and its Play)."""
    page.goto(_notebook_url(lab, notebook),
              wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.content); }", timeout=60_000)
    page.evaluate(
        "async () => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.context.ready; await w.sessionContext.ready;"
        " await window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function("() => !!document.querySelector('.ic-explorer .ic-plot img[src]')",
                           timeout=120_000)
    page.wait_for_timeout(1500)
    explorer = page.locator(".ic-explorer").first
    explorer.scroll_into_view_if_needed()
    per_control = _measure_moves(page, explorer, args.moves, args.quiet_ms, args.timeout_s)
    fresh = [t for v in per_control.values() for t, new in v if new and t is not None]
    every = [t for v in per_control.values() for t, _new in v if t is not None]
    medians = [(c, statistics.median([t for t, new in v if new and t is not None]))
               for c, v in per_control.items() if any(new and t is not None for t, new in v)]
    worst = max(medians, key=lambda cv: cv[1], default=("", None))
    row = {"controls": per_control,
           "median_s": statistics.median(fresh) if fresh else None,
           "max_s": max(fresh) if fresh else None,
           "median_all_s": statistics.median(every) if every else None,
           "moves": len(fresh), "revisits": sum(len(v) for v in per_control.values()) - len(fresh),
           "slowest_control": worst[0], "slowest_control_median_s": worst[1],
           "no_change": [c for c, v in per_control.items() if any(t is None for t, _ in v)]}
    if explorer.locator(".ic-play").count():
        row["play"] = _measure_play(page, explorer, args.play_s)
    return row


def _lab_module(tree: pathlib.Path):
    """``scripts/lab_session.py`` of another checkout (its Lab runs that checkout)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"lab_session_{abs(hash(tree))}",
                                                  tree / "scripts" / "lab_session.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=4, help="moves per slider")
    parser.add_argument("--quiet-ms", type=float, default=700.0)
    parser.add_argument("--timeout-s", type=float, default=15.0)
    parser.add_argument("--only", default="", help="comma-separated explorer-name prefixes")
    parser.add_argument("--port", type=int, default=0,
                        help="the Lab's port (default: a free one; --compare's Lab: port + 1)")
    parser.add_argument("--play-s", type=float, default=8.0)
    parser.add_argument("--compare", metavar="CHECKOUT",
                        help="also measure another checkout of the course (e.g. the commit "
                             "before a change), explorer by explorer in turn with this one, "
                             "so that both meet the same load")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    if not os.path.exists(lab_session.CHROMIUM):
        print(f"{lab_session.CHROMIUM} not found (bash scripts/ensure_chromium.sh)")
        return 2
    from playwright.sync_api import sync_playwright

    prefixes = tuple(p for p in args.only.split(",") if p)
    calls = [c for c in explorer_calls() if not prefixes or c[1].startswith(prefixes)]
    trees = [("this", REPO, lab_session)]
    if args.compare:
        other = pathlib.Path(args.compare).resolve()
        trees.insert(0, ("compared", other, _lab_module(other)))
    labs, roots = {}, []
    try:
        for k, (label, _tree, module) in enumerate(trees):
            if args.port:
                module.free_port = lambda port=args.port + k: port
            root = pathlib.Path(tempfile.mkdtemp(prefix="bench-browser-"))
            roots.append(root)
            labs[label] = _start(module, root, calls)
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=lab_session.CHROMIUM,
                                        args=lab_session.CHROMIUM_ARGS, headless=True)
            for i, (chapter, name, _call) in enumerate(calls):
                row = {"chapter": chapter, "explorer": name}
                order = [t[0] for t in trees]
                if i % 2:
                    order.reverse()                  # neither checkout always goes first
                for label in order:
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    try:
                        row[label] = _open_and_measure(page, labs[label],
                                                       f"{i:02d}_{name}.ipynb", args)
                    finally:
                        try:
                            page.evaluate(
                                "async () => { const w = window.jupyterapp.shell.currentWidget;"
                                " if (w && w.sessionContext) await w.sessionContext.shutdown(); }")
                        except Exception:
                            pass
                        page.close()
                rows.append(row)
                print(f"{name}: " + ", ".join(f"{k} {row[k]['median_s']}" for k in order),
                      file=sys.stderr, flush=True)
            browser.close()
    finally:
        for (label, _tree, module) in trees:
            if label in labs:
                module.stop_lab(labs[label] if hasattr(module, "lab_checkout")
                                else labs[label][0])
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)

    load = os.getloadavg()
    ms = lambda v: "—" if v is None else f"{v * 1e3:.0f} ms"  # noqa: E731
    print(f"# Browser latency: control move -> last change of the picture (fresh settings: "
          f"{args.moves} a slider, 2 a dropdown or toggle); goal {GOAL_S * 1e3:.0f} ms median; "
          f"load average {load[0]:.2f} on {os.cpu_count()} CPUs\n")
    if args.compare:
        print(f"before = {args.compare}, after = {REPO}, measured in turn\n")
        print("| ch | explorer | before: median | before: max | after: median | after: max "
              "| after: slowest control | |")
        print("|---|---|---:|---:|---:|---:|---|---|")
        for r in rows:
            b, a = r["compared"], r["this"]
            flag = "ok" if a["median_s"] is not None and a["median_s"] <= GOAL_S else "OVER"
            print(f"| {r['chapter']} | {r['explorer']} | {ms(b['median_s'])} | {ms(b['max_s'])} "
                  f"| {ms(a['median_s'])} | {ms(a['max_s'])} | {a['slowest_control']} "
                  f"({ms(a['slowest_control_median_s'])}) | {flag} |")
    else:
        print("| ch | explorer | moves | median | max | slowest control (its median) "
              "| median with moves back | controls with a move that changed nothing | |")
        print("|---|---|---:|---:|---:|---|---:|---|---|")
        for r in rows:
            a = r["this"]
            flag = "ok" if a["median_s"] is not None and a["median_s"] <= GOAL_S else "OVER"
            print(f"| {r['chapter']} | {r['explorer']} | {a['moves']} | {ms(a['median_s'])} | "
                  f"{ms(a['max_s'])} | {a['slowest_control']} "
                  f"({ms(a['slowest_control_median_s'])}) | {ms(a['median_all_s'])} | "
                  f"{', '.join(a['no_change']) or '—'} | {flag} |")
    for r in rows:
        for label in ("compared", "this"):
            pl = r.get(label, {}).get("play")
            if pl:
                who = {"compared": "before", "this": "after"}[label] if args.compare else ""
                print(f"\n▶ Play {who} ({r['explorer']}, {args.play_s:.0f} s): steps on the "
                      f"slider {pl['steps_on_slider']}, drawn {pl['steps_drawn']}; median "
                      f"interval between drawn steps {ms(pl['median_interval_s'])}; drawing "
                      f"behind the slider by {ms(pl['median_lag_s'])} (median), "
                      f"{ms(pl['max_lag_s'])} (max)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"load_average": load, "rows": rows},
                                                      indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
