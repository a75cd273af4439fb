"""No notebook or exercise types a bandwidth or latency that the catalog owns.

Code cells may not assign non-zero numeric literals to bandwidth or latency
names (``bw_bytes_per_s=450e9``).  Figures in GB/s or Gb/s, in Markdown and in
code strings (feedback messages), must be catalog values (per direction or
both ways), round toy numbers used for hand-checkable arithmetic (1, 10, 100
GB/s: no hardware is claimed), or sit on a line that marks them as a claim
being checked (a seed article's figure)."""

import json
import pathlib
import re

import pytest

import course_lib as cl
from course_lib.apps.prose import BOUND

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    [p for d in ("notebooks", "solutions", "exercises") for p in (REPO / d).rglob("*.ipynb")
     if ".ipynb_checkpoints" not in p.parts])

RATE = re.compile(r"(\d+(?:\.\d+)?)\s*(TB/s|GB/s|Gb/s|Gbps|MB/s|Tb/s)")
STRING = re.compile(r"""(["'])(?:(?!\1).)*\1""")
CODE_ASSIGN = re.compile(
    r"\b\w*(?:bw|bandwidth|latency|alpha)\w*\s*=\s*[-+]?(?!0\.?0*\b)\d[\d_.]*(?:e[-+]?\d+)?\b(?!\s*\*)",
    re.IGNORECASE)
CLAIM_WORDS = re.compile(r"seed|article|claim|says|myth|rumou?r|quoted|marketing|wrong|not\b",
                         re.IGNORECASE)


def allowed_rates_gb():
    vals = set()
    for _name, value, unit, direction, _src in cl.hardware.all_facts():
        if unit == "bytes/s":
            vals.update({value / 1e9, 2 * value / 1e9, 8 * value / 1e9, 16 * value / 1e9})
    vals.update({1.0, 10.0, 100.0})  # toy numbers for arithmetic by hand
    for rec in cl.NICS.values():
        vals.add(rec.rate_gbit_per_s)
    for g in cl.GPUS.values():
        vals.update({g.nvlink_bw_per_dir_bytes_per_s / 1e9, g.nvlink_bw_bidir_bytes_per_s / 1e9})
    return vals


ALLOWED = allowed_rates_gb()


def cells(path):
    nb = json.loads(path.read_text())
    for i, c in enumerate(nb["cells"]):
        yield i, c["cell_type"], "".join(c["source"])


def rate_problems(text):
    """Rates in ``text`` that are neither catalog values nor toy numbers."""
    if CLAIM_WORDS.search(text):
        return []
    bad = []
    for m in RATE.finditer(text):
        value = float(m.group(1))
        if m.group(2) in ("TB/s", "Tb/s"):
            value *= 1000
        elif m.group(2) == "MB/s":
            value /= 1000
        if not any(abs(value - a) <= 0.02 * max(a, 1e-9) for a in ALLOWED):
            bad.append(m.group(0))
    return bad


def test_scanner_catches_literals():
    assert CODE_ASSIGN.search("nvlink_bw = 450e9")
    assert CODE_ASSIGN.search("t = f(latency_s=2e-6)")
    assert not CODE_ASSIGN.search("def f(n_bytes, latency_s=0.0):")
    assert not CODE_ASSIGN.search("bw = cl.gpu('H100').nvlink_bw_per_dir_bytes_per_s")
    assert rate_problems("about 43 GB/s per direction") == ["43 GB/s"]
    assert rate_problems("450 GB/s per direction") == []
    assert rate_problems("the seed article says 600 GB/s") == []
    assert 450.0 in ALLOWED and 900.0 in ALLOWED and 400.0 in ALLOWED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS])
def test_no_bandwidth_literals(path):
    problems = []
    for i, kind, src in cells(path):
        for line in src.splitlines():
            if kind == "code":
                code = STRING.sub("''", line).split("#", 1)[0]
                if CODE_ASSIGN.search(code):
                    problems.append(f"cell {i} (code): {line.strip()}")
                for s in STRING.finditer(line):
                    for bad in rate_problems(s.group(0)):
                        problems.append(f"cell {i} (string): {bad!r} in: {line.strip()[:120]}")
            elif kind == "markdown":
                # a number bound to course_lib/values is computed by a model: not a literal
                for bad in rate_problems(BOUND.sub(" ", line)):
                    problems.append(f"cell {i} (markdown): {bad!r} in: {line.strip()[:120]}")
    assert not problems, ("bandwidth/latency literals the catalog should own "
                          "(compute them from cl.* instead):\n" + "\n".join(problems))
