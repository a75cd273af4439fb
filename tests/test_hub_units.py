"""The workshop hub's checks that need neither root nor a running hub.

Bad input to ``python -m course_lib hub`` gets exit status 2 with the usage and
the parameter named; the helpers reject what they must; the learners' and the
instructor's Jupyter configurations differ exactly by the instructor tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.apps import hub

REPO = Path(__file__).resolve().parents[1]


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "course_lib", "hub", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args,named", [
    (["start", "--auth", "ldap"], "--auth"),
    (["start", "--port", "70000"], "--port"),
    (["start", "--mem-limit", "lots"], "mem_limit"),
    (["start", "--cpu-limit", "-1"], "--cpu-limit"),
    (["start", "--instructor", "Root"], "user name"),
    (["start", "--ssl-cert", "c.pem"], "--ssl-key"),
    (["add-users"], "names"),
])
def test_bad_arguments_exit_2_naming_the_parameter(tmp_path, args, named):
    proc = _cli("--state-dir", str(tmp_path / "state"), *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "usage:" in proc.stderr and named in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "state").exists()         # nothing was made


def test_status_of_a_hub_that_is_not_running(tmp_path):
    proc = _cli("--state-dir", str(tmp_path), "status")
    assert proc.returncode == 1 and "not running" in proc.stdout


@pytest.mark.parametrize("text,expected", [("2G", 2 * 2**30), ("512M", 512 * 2**20),
                                           ("1.5GiB", int(1.5 * 2**30)), (4096, 4096)])
def test_parse_size(text, expected):
    assert hub.parse_size(text) == expected


@pytest.mark.parametrize("bad,exc", [("", ValueError), ("0G", ValueError), ("-1G", ValueError),
                                     ("2X", ValueError), (2.5, TypeError), (True, TypeError)])
def test_parse_size_rejects(bad, exc):
    with pytest.raises(exc, match="mem_limit"):
        hub.parse_size(bad)


@pytest.mark.parametrize("name", ["root", "ada", "bo-2", "cy_x"])
def test_valid_usernames(name):
    assert hub.valid_username(name) == name


@pytest.mark.parametrize("name", ["", "Ada", "1ada", "ada/../x", "a" * 32, "ada smith", "-x"])
def test_invalid_usernames(name):
    with pytest.raises(ValueError, match="user name"):
        hub.valid_username(name)


def test_state_dir_must_be_absolute():
    with pytest.raises(ValueError, match="state_dir"):
        hub.HubPaths("relative/dir")


def test_existing_system_account_is_refused(tmp_path):
    paths = hub.HubPaths(str(tmp_path), instructor="ict-nobody")
    with pytest.raises(PermissionError, match="not one of the course's"):
        hub.prepare_user("root", "learner", paths)       # root exists, not in the group


def test_learner_and_instructor_configurations(tmp_path):
    paths = hub.HubPaths(str(tmp_path / "state"), instructor="ict-nobody")
    hub.prepare_state(paths)
    assert os.stat(paths.exchange).st_mode & 0o7777 == 0o1777
    assert os.stat(paths.hub).st_mode & 0o777 == 0o700

    def read(role, *parts):
        return (Path(paths.role_config(role)).joinpath(*parts)).read_text()

    learner_lab = json.loads(read("learner", "labconfig", "page_config.json"))
    teacher_lab = json.loads(read("instructor", "labconfig", "page_config.json"))
    # every nbgrader plugin named, on or off: a role's config outranks the venv's, which
    # scripts/learner_lab.sh may have switched to a learner's Lab
    def off(config):
        return {k for k, v in config["disabledExtensions"].items() if v}

    assert set(learner_lab["disabledExtensions"]) == set(hub.NBGRADER_PLUGINS)
    assert off(learner_lab) == set(hub.LEARNER_OFF_PLUGINS)
    assert set(learner_lab["lockedExtensions"]) == set(hub.NBGRADER_PLUGINS)
    assert learner_lab["disabledExtensions"]["@jupyter/nbgrader:assignment-list"] is False
    assert off(teacher_lab) == set()
    server = json.loads(read("learner", "jupyter_server_config.json"))["ServerApp"]
    assert {e for e, on in server["jpserver_extensions"].items() if not on} == \
        set(hub.LEARNER_OFF_SERVER)
    assert server["jpserver_extensions"]["nbgrader.server_extensions.assignment_list"] is True
    teacher = json.loads(read("instructor", "jupyter_server_config.json"))["ServerApp"]
    assert all(teacher["jpserver_extensions"].values())
    assert "CourseDirectory.root" in read("instructor", "nbgrader_config.py")
    assert "CourseDirectory.root" not in read("learner", "nbgrader_config.py")
    for role in ("learner", "instructor"):
        assert f"c.Exchange.root = {paths.exchange!r}" in read(role, "nbgrader_config.py")
    assert hub.hidden_paths("learner") and not hub.hidden_paths("instructor")
    assert str(REPO / "solutions") in hub.hidden_paths("learner")


def test_closed_ancestor():
    from course_lib.apps import hub_launch

    assert hub_launch.closed_ancestor("/usr/bin") is None
    if os.path.isdir("/root") and not os.stat("/root").st_mode & 0o001:
        assert hub_launch.closed_ancestor("/root/x/y") == "/root"
