"""docs/instructor_guide.md runs as written on a bare Debian machine.

Every command the guide gives -- each line of its ``bash`` blocks and each inline
code span that starts with a command -- is a ``make`` target of this Makefile, a
``.venv/bin/...`` call of something the venv has (a script, an importable module,
a file of the checkout), a script of the checkout run with ``bash``, or one of the
few system tools a bare Debian gets from apt (``apt-get``, ``git``, ``cd``) or that
the guide says where to get (``helm``, ``certbot``).  Never a bare ``python``,
``jupyter`` or ``pip``: Debian has no ``python`` and its ``python3`` lacks the course's
packages.  The safe commands run: every ``make`` command as a dry run (``make -n``:
the target and its variables exist), every ``--help`` and ``hub status``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import course_lib as cl

REPO = Path(__file__).resolve().parents[1]
GUIDE = (REPO / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
VENV_BIN = Path(sys.executable).parent
SYSTEM_TOOLS = {"apt-get", "git", "cd", "helm", "certbot"}
STARTS = ("make", ".venv/", "sudo", "bash", "python", "python3", "jupyter", "nbgrader", "pip",
          *SYSTEM_TOOLS)


def guide_commands() -> list[str]:
    """Each command of the guide: bash-block lines and command-like inline spans."""
    cmds = []
    for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", GUIDE, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].split(" # ")[0].strip()
            if line and not line.startswith("#"):
                cmds += [c.strip() for c in line.split("&&")]
    prose = re.sub(r"```.*?```", "", GUIDE, flags=re.S)
    for span in re.findall(r"`([^`\n]+)`", prose):
        words = span.split()
        if len(words) < 2 and not span.startswith(".venv/bin/"):
            continue                    # a tool named in prose (`make`, `python3`)
        if words[0] in STARTS or words[0].startswith(".venv/bin/"):
            cmds += [c.strip() for c in span.split("&&")]
    return cmds


COMMANDS = guide_commands()


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*):(?!=)", text, re.M))


def make_variables() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Z_]+)\s*[?:]?=", text, re.M)) | set(
        re.findall(r"\$\(([A-Z_]+)\)", text))


def test_the_guide_has_commands():
    assert len(COMMANDS) > 20, COMMANDS
    assert "make hub" in COMMANDS and "make lock" in COMMANDS


def check(cmd: str) -> None:
    words = shlex.split(cmd.replace("<", "_").replace(">", "_").replace("…", ""))
    if words[0] == "sudo":
        words = words[1:]
    head = words[0]
    if head == "make":
        args = [w for w in words[1:] if "=" not in w]
        assert args and all(a in make_targets() for a in args), f"{cmd}: no such make target"
        for var in (w.split("=")[0] for w in words[1:] if "=" in w):
            assert var in make_variables(), f"{cmd}: the Makefile has no {var}"
    elif head.startswith(".venv/bin/"):
        tool = head.removeprefix(".venv/bin/")
        assert (VENV_BIN / tool).exists(), f"{cmd}: .venv/bin/{tool} is not installed"
        if tool == "python" and len(words) > 1:
            if words[1] == "-m":
                assert importlib.util.find_spec(words[2]), f"{cmd}: no module {words[2]}"
            else:
                assert (REPO / words[1]).is_file(), f"{cmd}: no file {words[1]}"
    elif head == "bash":
        assert (REPO / words[1]).is_file(), f"{cmd}: no script {words[1]}"
    else:
        assert head in SYSTEM_TOOLS, (
            f"{cmd!r}: not a make target or a .venv/bin call (a bare Debian has no `python`, "
            "and its python3 lacks the course's packages)")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_each_command_names_something_that_exists(cmd):
    check(cmd)


def test_a_bare_python_is_refused():
    for bad in ("python -m course_lib hub status", "python3 -m autograder export",
                "jupyter lab", "pip install -e ."):
        with pytest.raises(AssertionError):
            check(bad)


def _env():
    return dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                PYTHONPATH=str(REPO))


@pytest.mark.parametrize("cmd", sorted({c for c in COMMANDS if c.startswith("make ")}))
def test_make_commands_dry_run(cmd):
    proc = subprocess.run(["make", "-n", *shlex.split(cmd)[1:]], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


SAFE = sorted({c for c in COMMANDS if c.startswith(".venv/bin/python -m course_lib hub")
               and (c.endswith("--help") or c.endswith("hub status"))})


def test_safe_commands_are_there():
    assert any(c.endswith("--help") for c in SAFE) and any(c.endswith("status") for c in SAFE)


@pytest.mark.parametrize("cmd", SAFE)
def test_safe_commands_run(cmd, tmp_path):
    words = shlex.split(cmd)
    words[0] = sys.executable
    if words[-1] == "status":     # on a state folder of its own: no hub is running there
        words[words.index("hub") + 1:words.index("hub") + 1] = ["--state-dir", str(tmp_path)]
    proc = subprocess.run(words, cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert proc.returncode == 0 if words[-1] == "--help" else proc.returncode == 1, out
    assert ("usage:" in out) if words[-1] == "--help" else ("not running" in out), out


# --- the instructor guide --------------------------------------------------------
def test_guide_pageable_ratio_is_the_size_dependent_one():
    """The guide told instructors to stress 'typically 0.2-0.45x of pinned', while
    chapter 4 shows no penalty up to 16 KiB and 0.12x at 1 GiB on the H200."""
    section = GUIDE.split("### 4 — The Freight Fleet")[1].split("###")[0]
    assert "0.2–0.45" not in section
    for size, label in ((cl.MiB, "1 MiB"), (cl.GiB, "1 GiB")):
        m = re.search(r"(\d\.\d+)× (?:of pinned )?at " + label, section)
        assert m, label
        assert float(m.group(1)) == pytest.approx(cl.pageable_over_pinned(size), abs=0.005)
    assert cl.pageable_over_pinned(16 * cl.KiB) == pytest.approx(1.0, abs=0.02)
    assert "16 KiB" in section


def _slide_counts(stem: str) -> tuple[int, int]:
    cells = json.loads((REPO / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    kinds = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in cells]
    return kinds.count("slide"), kinds.count("subslide")


def test_guide_slide_table_matches_the_notebooks():
    """The table of slides per chapter said 14 / 5 for chapter 7 and 13 / 3 for
    chapter 9; the notebooks' metadata (scripts/slide_metadata.py) give 15 / 5 and 13 / 2."""
    rows = re.findall(r"^\| \d+ [^|]+\| `(\d\d_\w+)\.ipynb`[^|]*\| (\d+) / (\d+) \|$", GUIDE, re.M)
    assert len(rows) == 11                     # chapters 1-11 name their notebook
    m = re.search(r"^\| 0 Start here \|[^|]+\| (\d+) / (\d+) \|$", GUIDE, re.M)
    rows.append(("00_start_here", m.group(1), m.group(2)))
    for stem, slides, subslides in rows:
        assert _slide_counts(stem) == (int(slides), int(subslides)), stem
