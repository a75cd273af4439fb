"""The workshop hub's checks that need neither root nor a running hub.

Bad input to ``python -m course_lib hub`` gets exit status 2 with the usage and
the parameter named; the helpers reject what they must; the learners' and the
instructor's Jupyter configurations differ exactly by the instructor tools.
"""

from __future__ import annotations

import importlib.metadata
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
    with pytest.raises(PermissionError, match="not one of this hub's"):
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

    assert set(learner_lab["disabledExtensions"]) == {*hub.NBGRADER_PLUGINS, hub.NEWS_PLUGIN}
    assert off(learner_lab) == {*hub.LEARNER_OFF_PLUGINS, hub.NEWS_PLUGIN}
    assert set(learner_lab["lockedExtensions"]) == {*hub.NBGRADER_PLUGINS, hub.NEWS_PLUGIN}
    assert learner_lab["disabledExtensions"]["@jupyter/nbgrader:assignment-list"] is False
    assert off(teacher_lab) == {hub.NEWS_PLUGIN}
    for config in (learner_lab, teacher_lab):   # no "Jupyter news?" pop-up, for anyone
        assert config["disabledExtensions"][hub.NEWS_PLUGIN] is True
        assert config["lockedExtensions"][hub.NEWS_PLUGIN] is True
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


def test_each_state_folder_is_its_own_instance():
    a, b = hub.HubPaths("/srv/workshop"), hub.HubPaths("/tmp/x/workshop")
    assert a.name != b.name and a.name.startswith("workshop-") and b.name.startswith("workshop-")
    assert a.group == a.name == hub.HubPaths("/srv/workshop/").name   # stable for one folder
    assert hub.HubPaths("/srv/workshop", name="class-a").group == "class-a"
    assert hub.HubPaths("/srv/123").name.startswith("hub-123-")       # a group name
    for bad in ("Class A", "../x", "a" * 40):
        with pytest.raises(ValueError, match="name"):
            hub.HubPaths("/srv/workshop", name=bad)


def test_course_directory_outlives_the_instructors_home():
    p = hub.HubPaths("/srv/ic", instructor="ict-nobody")
    assert p.course_store == "/srv/ic/course"
    assert not p.course_store.startswith("/home/")


def test_a_hub_knows_no_user_it_did_not_record(tmp_path):
    paths = hub.HubPaths(str(tmp_path / "state"))
    assert hub.course_users(paths) == []                   # no group, no record
    with pytest.raises(PermissionError, match="not a user of this hub"):
        hub.remove_user(paths, "root")
    assert hub.end_user_processes("root", paths) == 0      # not ours: nothing ended


def test_next_uid_is_above_every_uid_ever_handed_out(tmp_path):
    import grp
    import pwd

    ledger = tmp_path / "uids"
    first = hub.next_uid(str(ledger))
    used = {e.pw_uid for e in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    assert hub.UID_MIN <= first <= hub.UID_MAX and first not in used
    # a uid in the ledger stays taken after its account is gone
    ledger.write_text(f"{first} {first} gone hub-x 0\n{first + 5} {first + 5} gone2 hub-y 0\n")
    assert hub.next_uid(str(ledger)) == first + 6


def test_remove_user_and_stop_name_the_parameter():
    proc = _cli("--state-dir", "/tmp/hub-no-such-state", "remove-user", "root")
    assert proc.returncode == 2 and "not a user of this hub" in proc.stderr, proc.stderr


def test_the_hub_refuses_versions_other_than_the_locks(tmp_path):
    assert hub.unpinned() == []            # this environment holds requirements.lock's pins
    lock = tmp_path / "lock"
    lock.write_text("jupyterhub==6.1.1\n")   # the release that broke nativeauthenticator 1.3.0
    assert hub.unpinned(str(lock), ["jupyterhub"]) == [
        f"jupyterhub {importlib.metadata.version('jupyterhub')} installed, 6.1.1 in {lock}"]
    assert hub.unpinned(str(tmp_path / "none")) == [f"{tmp_path / 'none'} is missing"]
