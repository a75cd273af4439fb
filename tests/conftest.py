"""Shared test set-up: headless matplotlib, the `cl` alias for doctests, and
the rule that nothing required may skip under CI=true."""

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _cl_alias(doctest_namespace):
    import course_lib

    doctest_namespace["cl"] = course_lib


def pytest_collection_modifyitems(config, items):
    # GPU tests may skip anywhere (CI has no GPU); everything else must run in CI.
    pass


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
