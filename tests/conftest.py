"""Shared test set-up: headless matplotlib, the `cl` alias for doctests, the
one reader of a chapter's text for the prose tests, and the rule that nothing
required may skip under CI=true."""

import json
import os
import pathlib

import pytest
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

# CI replays the same fuzz examples every run (reproducible failures); a local
# run explores new random ones each time.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def notebook_text():
    """``notebook_text("07_sharing_the_load", "markdown")``: the sources of one
    chapter's cells of that kind, joined by newlines (the prose tests check
    that the numbers in this text are the ones the models give).  Markdown reads
    as the learner sees it: a bound or cited number (``<!--v:name-->54 ms<!--/v-->``,
    course_lib.apps.prose) is its text."""
    from course_lib.apps.prose import shown

    folder = pathlib.Path(__file__).resolve().parents[1] / "notebooks"

    def read(stem: str, kind: str = "markdown") -> str:
        cells = json.loads((folder / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == kind)
        return shown(text) if kind == "markdown" else text

    return read


@pytest.fixture(autouse=True)
def _cl_alias(doctest_namespace):
    import course_lib

    doctest_namespace["cl"] = course_lib


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (os.environ.get("CI") == "true" and report.skipped
            and item.get_closest_marker("gpu") is None and call.when in ("setup", "call")):
        # A skip under CI=true is a failure unless the test needs a GPU.
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped under CI=true, where only GPU tests may skip: {reason}"
