"""A workshop on one machine: the course on a JupyterHub, graded through nbgrader's exchange.

``python -m course_lib hub start`` (``make hub``) starts JupyterHub with the
configuration in ``deploy/jupyterhub_config.py``; ``python -m course_lib hub
stop`` (``make hub-stop``) ends it and every server it started.  Each learner
is a real Unix user with their own JupyterLab server and a copy of the
chapters; the instructor is the hub's admin, with nbgrader's formgrader; the
release → fetch → submit → collect → autograde → feedback round trip goes
through a shared exchange folder.  ``docs/instructor_guide.md`` walks through a
workshop from a bare Debian machine.

Commands (run as root: the hub switches users):

``start``     start the hub in the background; print the address and the passwords
``stop``      stop the hub, its proxy and the processes of this hub's users;
              ``--purge`` also deletes this hub's Unix users, their homes, its group,
              its cgroups and its state folder (nothing of any other hub)
``status``    is it running; which users have a server
``add-users`` create hub users through the REST API (``--admin`` for instructors)
``remove-user`` delete learners: their server, processes and account; what they own
              in the exchange is handed to root (their uid may not be reused anyway)
``release``   put an assignment into the exchange, as the instructor
``grade``     collect from the exchange, autograde and release feedback with the
              course's pipeline (``python -m autograder``), as root
``as``        run a command as a course user, in the same fenced namespace as
              their server (``hub as alice -- nbgrader list``)

Everything the hub keeps lives in one state folder (default
``/srv/interconnect-city``; ``--state-dir``):

::

    hub/          root only: hub database, cookie secret, API token, passwords, logs
    exchange/     nbgrader's exchange (mode 1777), shared by every course user
    config/       the learners' and the instructor's Jupyter configuration
    course/       the instructor's nbgrader course directory (gradebook, submissions,
                  grades.csv), owned by the instructor, mode 0700; ``~instructor/course``
                  is a link to it, inside their server's root as the formgrader requires

One hub never touches another: each hub is an *instance* with a name derived
from its state folder (``--name`` to choose it), and everything it makes on the
machine carries that name -- the Unix group its users belong to, its parent
cgroup, the record of its users in ``hub/users.json``.  ``stop`` and ``--purge``
act on the members of that group that the record says this hub created, never on
a machine-wide group, so two hubs (a live class and the test suite) can share a
machine.  Uids are never reused: every uid a hub hands out is written to
``/var/lib/interconnect-city/uids`` (append only) and the next user gets a uid above
every one there and in ``/etc/passwd``, so a new learner can never inherit what a
deleted one owned.

This module is an app (``course_lib.apps``): nothing in the library imports it,
and it imports nothing from the library's models.  It does not import
JupyterHub either (``deploy/course_spawner.py`` does), so that ``--help``
works anywhere.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .command import UsageError

__all__ = ["HubPaths", "parse_size", "valid_username", "instance_name", "prepare_state",
           "prepare_user", "remove_user", "next_uid", "make_cgroups", "remove_cgroups",
           "course_users", "end_user_processes",
           "server_env", "exposed_paths", "hidden_paths", "HubClient", "add_arguments",
           "main"]

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CONFIG_FILE = DEPLOY / "jupyterhub_config.py"
PROXY = DEPLOY / "node_modules" / ".bin" / "configurable-http-proxy"
LAUNCHER = str(Path(__file__).resolve().parent / "hub_launch.py")
DEFAULT_STATE_DIR = "/srv/interconnect-city"
DEFAULT_INSTRUCTOR = "instructor"
COURSE_ID = "interconnect-city"  # nbgrader's course id (autograder.COURSE_ID)
#: The chapters' folder in each home (nbgrader fetches into ``~/interconnect-city/``).
COURSE_FOLDER = "chapters"
#: Hub user names: lower-case letters, digits, ``-`` and ``_``, starting with a letter;
#: they are Unix user names too.
USERNAME_PATTERN = r"^[a-z][a-z0-9_-]{0,30}$"
NPROC_LIMIT = 512  # processes per course user (a fork bomb stops here)
AUTH_KINDS = ("native", "shared")
#: nbgrader's JupyterLab plugins and server extensions a learner does not get.
LEARNER_OFF_PLUGINS = ("@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                       "@jupyter/nbgrader:course-list")
LEARNER_OFF_SERVER = ("nbgrader.server_extensions.formgrader",
                      "nbgrader.server_extensions.course_list")
#: Every nbgrader plugin and server extension a role's config names explicitly, on or
#: off: the venv's own config may have switched them off for a learner's Lab
#: (scripts/learner_lab.sh, run by `make lab` and `make test`), and a role's config
#: folder (JUPYTER_CONFIG_PATH) outranks the venv's.
NBGRADER_PLUGINS = ("@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                    "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:assignment-list",
                    "@jupyter/nbgrader:menu", "@jupyter/nbgrader:validate-assignment")
NBGRADER_SERVER = ("nbgrader.server_extensions.formgrader",
                   "nbgrader.server_extensions.course_list",
                   "nbgrader.server_extensions.assignment_list",
                   "nbgrader.server_extensions.validate_assignment")
_CGROUP_ROOT = "/sys/fs/cgroup"
_CGROUP_NAME = "interconnect-city"   # the folder above every hub's own cgroup
#: Every uid and gid any hub on this machine has handed out, one ``uid gid name instance``
#: line each, append only: a freed uid is never given to someone else.
UID_LEDGER = "/var/lib/interconnect-city/uids"
UID_MIN, UID_MAX = 2000, 59999      # course users' uids (Debian's useradd hands out 1000 up)
#: JupyterLab's "Would you like to get notified about official Jupyter news?" pop-up.
NEWS_PLUGIN = "@jupyterlab/apputils-extension:announcements"
_SIZE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


# ---------------------------------------------------------------------------
# small checked helpers
# ---------------------------------------------------------------------------
def parse_size(text) -> int:
    """Bytes from ``"2G"``, ``"512M"`` or a plain number of bytes (K/M/G/T are powers of 1024).

    >>> parse_size("2G"), parse_size("512M"), parse_size(1024)
    (2147483648, 536870912, 1024)
    >>> parse_size("lots")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: mem_limit must be a number of bytes ... (e.g. 2G), not 'lots'
    """
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise TypeError(f"mem_limit must be a str such as '2G' or an int of bytes, "
                        f"not {type(text).__name__}")
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(text), flags=re.I)
    if not m or float(m.group(1)) <= 0:
        raise ValueError("mem_limit must be a number of bytes with an optional K, M, G or T "
                         f"suffix (e.g. 2G), not {text!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


def valid_username(name) -> str:
    """``name`` if it may be both a hub user and a Unix user of the course.

    >>> valid_username("alice")
    'alice'
    >>> valid_username("Root")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: user name must match ^[a-z][a-z0-9_-]{0,30}$ (...), not 'Root'
    """
    if not isinstance(name, str):
        raise TypeError(f"user name must be a str, not {type(name).__name__}")
    if not re.fullmatch(USERNAME_PATTERN, name):
        raise ValueError(f"user name must match {USERNAME_PATTERN} (lower-case letters, digits, "
                         f"- and _, starting with a letter), not {name!r}")
    return name


def instance_name(state_dir: str) -> str:
    """The hub instance's name from its state folder: the folder's name and a hash of its path.

    It names the hub's Unix group and its cgroup, so it is a valid group name.

    >>> instance_name("/srv/interconnect-city")
    'interconnect-city-8cb7c2'
    >>> instance_name("/tmp/ic-hub-test-x_Y1") != instance_name("/var/ic-hub-test-x_Y1")
    True
    """
    import hashlib

    if not isinstance(state_dir, str) or not os.path.isabs(state_dir):
        raise ValueError(f"state_dir must be an absolute path, not {state_dir!r}")
    path = os.path.normpath(state_dir)
    base = re.sub(r"[^a-z0-9-]+", "-", os.path.basename(path).lower()).strip("-")[:20]
    if not base or not base[0].isalpha():
        base = "hub" + (f"-{base}" if base else "")
    return f"{base[:20]}-{hashlib.sha256(path.encode()).hexdigest()[:6]}"


@dataclass(frozen=True)
class HubPaths:
    """Where the hub keeps its state, and the instance's name (see the module's docstring).

    The instructor's course directory is ``<state>/course``; ``~instructor/course``
    links to it (nbgrader's formgrader works only on a course directory inside
    the server's root).

    >>> p = HubPaths("/srv/ic", instructor="ict-nobody")
    >>> p.exchange, p.course, p.token_file, p.name
    ('/srv/ic/exchange', '/home/ict-nobody/course', '/srv/ic/hub/api_token', 'ic-7f877c')
    >>> p.course_store, HubPaths("/srv/ic", name="workshop-a").group
    ('/srv/ic/course', 'workshop-a')
    """

    state_dir: str = DEFAULT_STATE_DIR
    instructor: str = DEFAULT_INSTRUCTOR
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.state_dir, str) or not os.path.isabs(self.state_dir):
            raise ValueError(f"state_dir must be an absolute path, not {self.state_dir!r}")
        valid_username(self.instructor)
        if not self.name:
            object.__setattr__(self, "name", instance_name(self.state_dir))
        elif not isinstance(self.name, str) or not re.fullmatch(USERNAME_PATTERN, self.name):
            raise ValueError(f"name (the hub instance's) must match {USERNAME_PATTERN}, "
                             f"not {self.name!r}")

    def _p(self, *parts) -> str:
        return os.path.join(self.state_dir, *parts)

    hub = property(lambda self: self._p("hub"))
    exchange = property(lambda self: self._p("exchange"))
    #: The instance's Unix group: every user this hub created, and no one else.
    group = property(lambda self: self.name)
    #: The course directory itself, outside every home (it outlives any account).
    course_store = property(lambda self: self._p("course"))
    users_file = property(lambda self: self._p("hub", "users.json"))
    cgroup_file = property(lambda self: self._p("hub", "cgroups.json"))

    @property
    def course(self) -> str:
        """``~instructor/course``: the link the instructor's server and nbgrader use."""
        try:
            home = pwd.getpwnam(self.instructor).pw_dir
        except KeyError:
            home = os.path.join("/home", self.instructor)
        return os.path.join(home, "course")
    config = property(lambda self: self._p("config"))
    stage = property(lambda self: self._p("hub", "stage"))
    token_file = property(lambda self: self._p("hub", "api_token"))
    pid_file = property(lambda self: self._p("hub", "jupyterhub.pid"))
    log_file = property(lambda self: self._p("hub", "jupyterhub.log"))
    settings_file = property(lambda self: self._p("hub", "settings.json"))
    user_password_file = property(lambda self: self._p("hub", "workshop_password"))
    admin_password_file = property(lambda self: self._p("hub", "instructor_password"))

    def role_config(self, role: str) -> str:
        return self._p("config", role)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _secret_file(path: str, nbytes: int) -> str:
    """The secret in ``path`` (mode 0600), created on first use."""
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(nbytes))
    with open(path, encoding="utf-8") as fh:
        return fh.read().strip()


def api_token(paths: HubPaths) -> str:
    """The course-admin service's API token (created on first use, root only)."""
    return _secret_file(paths.token_file, 32)


def workshop_passwords(paths: HubPaths) -> tuple[str, str]:
    """(learners' shared password, instructor's password) for ``--auth shared``."""
    return _secret_file(paths.user_password_file, 9), _secret_file(paths.admin_password_file, 30)


# ---------------------------------------------------------------------------
# the state folder and the two Jupyter configurations
# ---------------------------------------------------------------------------
def _write(path: str, text: str, mode: int = 0o644) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, mode)


def _nbgrader_config(paths: HubPaths, role: str) -> str:
    lines = ["# Written by `python -m course_lib hub start`; rewritten at every start.",
             "c = get_config()  # noqa: F821",
             f"c.CourseDirectory.course_id = {COURSE_ID!r}",
             f"c.Exchange.root = {paths.exchange!r}",
             "c.Exchange.path_includes_course = True"]
    if role == "instructor":
        lines.append(f"c.CourseDirectory.root = {paths.course!r}")
    return "\n".join(lines) + "\n"


def prepare_state(paths: HubPaths) -> None:
    """Create the state folder with its permissions and write both configurations.

    ``hub/`` is root's only (0700); ``exchange/`` is world-writable with the
    sticky bit (1777, what nbgrader's exchange needs between real users);
    ``config/`` is readable by all.  Idempotent.
    """
    os.makedirs(paths.state_dir, exist_ok=True)
    os.chmod(paths.state_dir, 0o755)
    os.makedirs(paths.stage, exist_ok=True)
    os.chmod(paths.hub, 0o700)
    os.makedirs(paths.exchange, exist_ok=True)
    os.chmod(paths.exchange, 0o1777)
    os.makedirs(paths.config, exist_ok=True)
    os.chmod(paths.config, 0o755)
    for role in ("learner", "instructor"):
        folder = paths.role_config(role)
        _write(os.path.join(folder, "nbgrader_config.py"), _nbgrader_config(paths, role))
        off_plugins = LEARNER_OFF_PLUGINS if role == "learner" else ()
        off_server = LEARNER_OFF_SERVER if role == "learner" else ()
        # JupyterLab reads labconfig/page_config.json from every config folder; a
        # locked plugin cannot be switched back on from the Plugin Manager.
        # The news pop-up ("get notified about official Jupyter news?") is off for everyone.
        disabled = {p: p in off_plugins for p in NBGRADER_PLUGINS}
        disabled[NEWS_PLUGIN] = True
        _write(os.path.join(folder, "labconfig", "page_config.json"), json.dumps(
            {"disabledExtensions": disabled,
             "lockedExtensions": {p: True for p in [*NBGRADER_PLUGINS, NEWS_PLUGIN]}},
            indent=1) + "\n")
        _write(os.path.join(folder, "jupyter_server_config.json"), json.dumps(
            {"ServerApp": {"jpserver_extensions": {e: e not in off_server
                                                   for e in NBGRADER_SERVER}}},
            indent=1) + "\n")


def server_env(paths: HubPaths, role: str) -> dict:
    """The environment a course user's server gets on top of the hub's defaults."""
    bindir = os.path.dirname(sys.executable)
    env = {"PATH": os.pathsep.join([bindir, "/usr/local/bin", "/usr/bin", "/bin"]),
           "PYTHONPATH": str(REPO),
           "JUPYTER_CONFIG_PATH": paths.role_config(role),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "PYTHONDONTWRITEBYTECODE": "1"}
    if role == "instructor":
        env["INTERCONNECT_COURSE_DIR"] = paths.course
    return env


def exposed_paths() -> list[str]:
    """What every course user's server must reach: the interpreter, the venv, the checkout."""
    return sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix),
                   str(REPO)})


def hidden_paths(role: str) -> list[str]:
    """What a course user must not read: answers and hidden tests (learners only)."""
    if role == "instructor":
        return []
    return [str(REPO / "solutions"), str(REPO / ".git"), str(REPO / "course")]


# ---------------------------------------------------------------------------
# Unix users
# ---------------------------------------------------------------------------
def _run(*cmd: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")


def _in_group(name: str, group: str) -> bool:
    try:
        return name in grp.getgrnam(group).gr_mem
    except KeyError:
        return False


def _recorded_users(paths: HubPaths) -> dict:
    """{name: {"uid", "gid", "role"}} of the users this hub created (``hub/users.json``)."""
    try:
        with open(paths.users_file, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def _record_user(paths: HubPaths, name: str, entry, role: str, drop: bool = False) -> None:
    users = _recorded_users(paths)
    if drop:
        users.pop(name, None)
    else:
        users[name] = {"uid": entry.pw_uid, "gid": entry.pw_gid, "role": role}
    os.makedirs(paths.hub, exist_ok=True)
    _write(paths.users_file, json.dumps(users, indent=1, sort_keys=True) + "\n", 0o600)


def course_users(paths: HubPaths) -> list[str]:
    """The Unix users this hub created: members of its group *and* in its record, with the
    uid it gave them (an account someone re-made under the same name is not ours)."""
    try:
        members = set(grp.getgrnam(paths.group).gr_mem)
    except KeyError:
        return []
    out = []
    for name, rec in _recorded_users(paths).items():
        try:
            if name in members and pwd.getpwnam(name).pw_uid == rec["uid"]:
                out.append(name)
        except KeyError:
            pass
    return sorted(out)


def _ledger_ids(ledger: str) -> set[int]:
    ids = set()
    try:
        with open(ledger, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                ids.update(int(x) for x in parts[:2] if x.isdigit())
    except OSError:
        pass
    return ids


def next_uid(ledger: str = UID_LEDGER, taken=None) -> int:
    """A uid (and gid, the same number) no account, group or earlier course user ever had.

    Above every id in the ledger and every uid/gid of ``/etc/passwd`` and
    ``/etc/group`` within ``UID_MIN..UID_MAX``, so it is never one freed by a deleted
    user.  ``taken``: extra ids to avoid (tests).

    >>> next_uid("/nonexistent/ledger", taken={5003}) > 5003
    True
    """
    used = _ledger_ids(ledger) | set(taken or ())
    used |= {e.pw_uid for e in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    top = max([u for u in used if UID_MIN <= u <= UID_MAX], default=UID_MIN - 1)
    if top >= UID_MAX:
        raise RuntimeError(f"no course uid left below {UID_MAX} (see {ledger})")
    return top + 1


def _create_account(name: str, role: str, paths: HubPaths):
    """groupadd + useradd with a never-used uid (= gid), written to the ledger first."""
    import fcntl

    os.makedirs(os.path.dirname(UID_LEDGER), exist_ok=True)
    with open(UID_LEDGER, "a+", encoding="utf-8") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)          # two hubs spawning at once
        uid = next_uid(UID_LEDGER)
        ledger.write(f"{uid} {uid} {name} {paths.name} {int(time.time())}\n")
        ledger.flush()
        _run("groupadd", "--gid", str(uid), name)
        try:
            _run("useradd", "--create-home", "--shell", "/bin/bash", "--uid", str(uid),
                 "--gid", str(uid), "--groups", paths.group,
                 "--comment", f"Interconnect City {role} ({paths.name})", name)
        except RuntimeError:
            subprocess.run(["groupdel", name], capture_output=True)
            raise
    return pwd.getpwnam(name)


def prepare_user(name: str, role: str, paths: HubPaths) -> pwd.struct_passwd:
    """The course user ``name``: created on first use, with the chapters in the home.

    An existing Unix account that this hub did not create (another hub's learner,
    ``root``, ``postgres``...) is refused: a hub user named ``root`` must never
    become root's server, and one hub never takes over another's users.
    """
    valid_username(name)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = None
    if entry is not None and name not in course_users(paths):
        raise PermissionError(f"Unix user {name!r} exists and is not one of this hub's "
                              f"(group {paths.group}); pick another hub user name")
    if entry is None:
        try:
            grp.getgrnam(paths.group)
        except KeyError:
            _run("groupadd", "--system", paths.group)
        entry = _create_account(name, role, paths)
        _record_user(paths, name, entry, role)
    if entry.pw_uid == 0:
        raise PermissionError(f"user {name!r} has uid 0")
    os.chmod(entry.pw_dir, 0o700)
    target = os.path.join(entry.pw_dir, COURSE_FOLDER)
    if not os.path.exists(target):  # first login: a private copy of the chapters
        shutil.copytree(REPO / "notebooks", target,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "lab_results",
                                                      "__pycache__"))
        for root, dirs, files in os.walk(target):
            for item in [root, *(os.path.join(root, f) for f in files)]:
                os.chown(item, entry.pw_uid, entry.pw_gid)
    if role == "instructor":
        _link_course(paths, entry)
    return entry


def _link_course(paths: HubPaths, entry) -> None:
    """``<state>/course`` owned by the instructor (0700), and ``~instructor/course`` linking it."""
    os.makedirs(paths.course_store, exist_ok=True)
    os.chmod(paths.course_store, 0o700)
    _chown_tree(paths.course_store, entry.pw_uid, entry.pw_gid)
    link = os.path.join(entry.pw_dir, "course")
    if os.path.islink(link) and os.readlink(link) == paths.course_store:
        return
    if os.path.islink(link) or os.path.isfile(link):
        os.remove(link)
    elif os.path.isdir(link):
        raise RuntimeError(f"{link} is a folder, not the link to {paths.course_store}: "
                           "move it away first")
    os.symlink(paths.course_store, link)
    os.lchown(link, entry.pw_uid, entry.pw_gid)


def disown_exchange(paths: HubPaths, uid: int) -> int:
    """Hand whatever ``uid`` owns in the exchange to root (no write for others); how many."""
    n = 0
    for root, dirs, files in os.walk(paths.exchange):
        for item in [root, *(os.path.join(root, f) for f in files)]:
            try:
                st = os.lstat(item)
                if st.st_uid == uid:
                    os.lchown(item, 0, 0)
                    if not os.path.islink(item):
                        os.chmod(item, st.st_mode & ~0o022)
                    n += 1
            except OSError:
                pass
    return n


def remove_user(paths: HubPaths, name: str) -> list[str]:
    """Delete the course user ``name`` of this hub: processes, cgroups, account and home.

    What they own in the exchange (their submissions, a release) is handed to root
    first, so it stays for grading and nobody can inherit it.
    """
    valid_username(name)
    if name not in course_users(paths):
        raise PermissionError(f"{name!r} is not a user of this hub (group {paths.group})")
    uid = pwd.getpwnam(name).pw_uid
    done = []
    n = end_user_processes(name, paths)
    if n:
        done.append(f"{name}: {n} process(es) ended")
    remove_cgroups(name, paths)
    n = disown_exchange(paths, uid)
    if n:
        done.append(f"{name}: {n} file(s) in the exchange handed to root")
    subprocess.run(["userdel", "--remove", name], capture_output=True)
    subprocess.run(["groupdel", name], capture_output=True)   # the user's own group
    _record_user(paths, name, None, "", drop=True)
    done.append(f"user {name} and its home deleted")
    return done


def _chown_tree(top: str, uid: int, gid: int) -> None:
    for root, dirs, files in os.walk(top):
        for item in [root, *(os.path.join(root, f) for f in files)]:
            if not os.path.islink(item):
                os.chown(item, uid, gid)


def _pids_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


def end_user_processes(name: str, paths: HubPaths, grace_s: float = 3.0) -> int:
    """End every process of this hub's user ``name`` (TERM, then KILL); how many there were.

    Nothing happens to a user this hub did not create."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return 0
    if uid == 0 or name not in course_users(paths):
        return 0
    pids = _pids_of(uid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _pids_of(uid):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.time() + grace_s
        while _pids_of(uid) and time.time() < deadline:
            time.sleep(0.1)
    return len(pids)


# ---------------------------------------------------------------------------
# cgroups: memory and CPU per user, where the machine lets us
# ---------------------------------------------------------------------------
def _own_cgroup(controller: str) -> str:
    """The hub's own cgroup path for ``controller`` (v1) or the unified one ("" key)."""
    with open("/proc/self/cgroup", encoding="utf-8") as fh:
        for line in fh:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if (controller == "" and ctrls == "") or controller in ctrls.split(","):
                return path.lstrip("/")
    return ""


def _instance_cgroups(paths: HubPaths) -> dict:
    """{controller: folder} of this hub's parent cgroups: recorded at the first user's
    cgroup (``hub/cgroups.json``), so ``stop`` finds them from any shell."""
    try:
        with open(paths.cgroup_file, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        pass
    if os.path.exists(os.path.join(_CGROUP_ROOT, "cgroup.controllers")):  # v2
        return {"unified": os.path.join(_CGROUP_ROOT, _own_cgroup(""), _CGROUP_NAME,
                                        paths.name)}
    out = {}
    for ctrl in ("memory", "cpu"):
        mount = os.path.join(_CGROUP_ROOT, ctrl)
        if os.path.isdir(mount):
            out[ctrl] = os.path.join(mount, _own_cgroup(ctrl), _CGROUP_NAME, paths.name)
    return out


def _cgroup_dirs(name: str, paths: HubPaths) -> dict:
    """{controller: folder} of this hub's user ``name``'s cgroups (v2 or v1)."""
    return {k: os.path.join(v, name) for k, v in _instance_cgroups(paths).items()}


def make_cgroups(name: str, mem_limit, cpu_limit, paths: HubPaths) -> tuple[list[str], str]:
    """Create the user's cgroups (below this hub's own) with the limits; (folders to
    join, why not or "").

    ``mem_limit`` in bytes (None: none), ``cpu_limit`` in CPUs (None: none).
    """
    if not mem_limit and not cpu_limit:
        return [], ""
    parents = _instance_cgroups(paths)
    if not os.path.exists(paths.cgroup_file) and os.path.isdir(paths.hub):
        _write(paths.cgroup_file, json.dumps(parents) + "\n", 0o600)
    dirs = _cgroup_dirs(name, paths)
    try:
        if "unified" in dirs:
            folder = dirs["unified"]
            parent = os.path.dirname(folder)
            os.makedirs(parent, exist_ok=True)
            top = os.path.dirname(parent)
            for p in (os.path.dirname(top), top, parent):
                with open(os.path.join(p, "cgroup.subtree_control"), "w") as fh:
                    fh.write("+memory +cpu")
            os.makedirs(folder, exist_ok=True)
            if mem_limit:
                _write_value(folder, "memory.max", int(mem_limit))
            if cpu_limit:
                _write_value(folder, "cpu.max", f"{int(float(cpu_limit) * 100000)} 100000")
            return [folder], ""
        joined = []
        if mem_limit and "memory" in dirs:
            os.makedirs(dirs["memory"], exist_ok=True)
            _write_value(dirs["memory"], "memory.limit_in_bytes", int(mem_limit))
            joined.append(dirs["memory"])
        if cpu_limit and "cpu" in dirs:
            os.makedirs(dirs["cpu"], exist_ok=True)
            _write_value(dirs["cpu"], "cpu.cfs_period_us", 100000)
            _write_value(dirs["cpu"], "cpu.cfs_quota_us", int(float(cpu_limit) * 100000))
            joined.append(dirs["cpu"])
        if not joined:
            return [], "no memory or cpu cgroup controller on this machine: limits are off"
        return joined, ""
    except OSError as exc:
        return [], f"cgroups are not writable here ({exc}): memory and CPU limits are off"


def _write_value(folder: str, key: str, value) -> None:
    with open(os.path.join(folder, key), "w") as fh:
        fh.write(str(value))


def remove_cgroups(name: str, paths: HubPaths) -> None:
    """Remove this hub's user ``name``'s cgroups (once their processes are gone)."""
    for folder in _cgroup_dirs(name, paths).values():
        try:
            os.rmdir(folder)
        except OSError:
            pass


def cgroup_limits_of(pid: int) -> dict:
    """The memory limit (bytes) and CPU quota (CPUs) of the cgroups ``pid`` is in."""
    out = {}
    with open(f"/proc/{pid}/cgroup", encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split(":", 2) for line in fh]
    for _, ctrls, path in rows:
        if ctrls == "" and os.path.exists(os.path.join(_CGROUP_ROOT, "cgroup.controllers")):
            folder = os.path.join(_CGROUP_ROOT, path.lstrip("/"))
            mem = open(os.path.join(folder, "memory.max")).read().strip()
            quota, period = open(os.path.join(folder, "cpu.max")).read().split()
            out["memory"] = None if mem == "max" else int(mem)
            out["cpus"] = None if quota == "max" else int(quota) / int(period)
        elif "memory" in ctrls.split(","):
            folder = os.path.join(_CGROUP_ROOT, "memory", path.lstrip("/"))
            out["memory"] = int(open(os.path.join(folder, "memory.limit_in_bytes")).read())
        elif "cpu" in ctrls.split(","):
            folder = os.path.join(_CGROUP_ROOT, "cpu", path.lstrip("/"))
            quota = int(open(os.path.join(folder, "cpu.cfs_quota_us")).read())
            period = int(open(os.path.join(folder, "cpu.cfs_period_us")).read())
            out["cpus"] = None if quota < 0 else quota / period
    return out


# ---------------------------------------------------------------------------
# the REST API
# ---------------------------------------------------------------------------
class HubClient:
    """A small client of JupyterHub's REST API with the course-admin token."""

    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/")
        self.token = token

    def request(self, method: str, path: str, body=None, token: str | None = None,
                timeout: float = 30.0):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}/hub/api{path}", data=data, method=method,
                                     headers={"Authorization": f"token {token or self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode()
        return json.loads(text) if text.strip() else None

    def add_users(self, names, admin: bool = False):
        names = [valid_username(n) for n in names]
        out = self.request("POST", "/users", {"usernames": names, "admin": admin})
        return sorted(u["name"] for u in out or [])

    def users(self) -> dict:
        return {u["name"]: u for u in self.request("GET", "/users")}


# ---------------------------------------------------------------------------
# start, stop and the other commands
# ---------------------------------------------------------------------------
def _settings(a) -> dict:
    if a.auth not in AUTH_KINDS:
        raise UsageError(f"--auth must be one of {', '.join(AUTH_KINDS)}, not {a.auth!r}")
    valid_username(a.instructor)
    if not 0 < a.port < 65536:
        raise UsageError(f"--port must be between 1 and 65535, not {a.port}")
    mem = parse_size(a.mem_limit) if a.mem_limit not in (None, "", "0", "none") else None
    if a.cpu_limit is not None and a.cpu_limit <= 0:
        raise UsageError(f"--cpu-limit must be a positive number of CPUs, not {a.cpu_limit}")
    if bool(a.ssl_cert) != bool(a.ssl_key):
        raise UsageError("--ssl-cert and --ssl-key go together")
    return {"ip": a.ip, "port": a.port, "auth": a.auth, "instructor": a.instructor,
            "mem_limit": mem, "cpu_limit": a.cpu_limit, "cull_idle_s": a.cull_idle,
            "ssl_cert": a.ssl_cert or "", "ssl_key": a.ssl_key or "",
            "assignments": list(a.assignments or [])}


def hub_env(paths: HubPaths) -> dict:
    """The environment ``jupyterhub -f deploy/jupyterhub_config.py`` reads its state folder from."""
    env = dict(os.environ)
    env["INTERCONNECT_HUB_STATE"] = paths.state_dir
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), str(PROXY.parent),
                                   env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _hub_pid(paths: HubPaths) -> int | None:
    try:
        pid = int(open(paths.pid_file).read().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def url_of(settings: dict) -> str:
    scheme = "https" if settings.get("ssl_cert") else "http"
    host = "127.0.0.1" if settings["ip"] in ("", "0.0.0.0") else settings["ip"]
    return f"{scheme}://{host}:{settings['port']}"


def prepare_course(paths: HubPaths, assignments=()) -> None:
    """The instructor's nbgrader course directory, made with the course's pipeline.

    ``python -m autograder --course DIR release --check`` creates the directory,
    its nbgrader configuration and the generated student versions in
    ``course/exercises`` without touching the checkout; its ``exchange`` is the
    hub's shared exchange (a link).
    """
    entry = prepare_user(paths.instructor, "instructor", paths)   # <state>/course and the link
    link = os.path.join(paths.course, "exchange")
    if not os.path.islink(link):
        if os.path.isdir(link):
            shutil.rmtree(link)
        os.symlink(paths.exchange, link)
    proc = subprocess.run([sys.executable, "-m", "autograder", "--course", paths.course,
                           "release", "--check", *assignments], cwd=REPO,
                          capture_output=True, text=True, env=hub_env(paths))
    if proc.returncode not in (0, 1):  # 1: the checkout's exercises/ is stale; still generated
        raise RuntimeError("autograder release --check failed:\n" + proc.stdout + proc.stderr)
    _chown_tree(paths.course_store, entry.pw_uid, entry.pw_gid)


LOCK_FILE = REPO / "requirements.lock"
#: The packages whose versions must be the locked ones for the hub to work (JupyterHub 6
#: with nativeauthenticator 1.3.0 answers every login with HTTP 500).
HUB_PINNED = ("jupyterhub", "jupyterhub-nativeauthenticator", "jupyterhub-idle-culler",
              "nbgrader", "jupyterlab", "jupyter-server")


def unpinned(lock=LOCK_FILE, names=HUB_PINNED) -> list[str]:
    """The hub's packages installed at another version than ``lock`` pins, one line each.

    >>> import tempfile, os
    >>> fd, lock = tempfile.mkstemp(); os.write(fd, b"jupyterhub==0.0.1\\n") and None
    >>> unpinned(lock, ["jupyterhub"])  # doctest: +ELLIPSIS
    ['jupyterhub ... installed, 0.0.1 in ...']
    """
    import importlib.metadata

    pins = {}
    try:
        for line in open(lock, encoding="utf-8"):
            spec = line.split(";")[0].split("#")[0].strip()
            if "==" in spec:
                name, version = spec.split("==", 1)
                pins[name.strip().lower().replace("_", "-")] = version.strip()
    except OSError:
        return [f"{lock} is missing"]
    out = []
    for name in names:
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            have = "not"
        if name in pins and have != pins[name]:
            out.append(f"{name} {have} installed, {pins[name]} in {lock}")
    return out


def start(paths: HubPaths, settings: dict, wait_s: float = 90.0) -> str:
    """Start the hub in the background; return its address once it answers."""
    if os.geteuid() != 0:
        raise PermissionError("the hub must run as root: it creates the course's Unix users "
                              "and switches to them (sudo make hub)")
    if not PROXY.exists():
        raise FileNotFoundError(f"{PROXY} is missing: run `bash scripts/ensure_node.sh` "
                                "(Node.js and the hub's proxy from npm)")
    wrong = unpinned()
    if wrong:
        raise RuntimeError("the hub runs only on the tested versions: " + "; ".join(wrong)
                           + " (make hub installs them; or: make setup)")
    if _hub_pid(paths):
        raise RuntimeError(f"a hub is already running from {paths.state_dir} "
                           f"(pid {_hub_pid(paths)}); stop it with `make hub-stop`")
    prepare_state(paths)
    _write(paths.settings_file, json.dumps(settings, indent=1) + "\n", 0o600)
    prepare_user(paths.instructor, "instructor", paths)   # the course directory is in ~
    prepare_course(paths, settings.get("assignments") or ())
    api_token(paths)
    if settings["auth"] == "shared":
        workshop_passwords(paths)
    log = open(paths.log_file, "a")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG_FILE)],
        cwd=paths.hub, env=hub_env(paths), stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True)
    _write(paths.pid_file, f"{proc.pid}\n", 0o600)
    url = url_of(settings)
    client = HubClient(url, api_token(paths))
    deadline = time.time() + wait_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyterhub exited ({proc.returncode}); the end of "
                               f"{paths.log_file}:\n" + _tail(paths.log_file))
        try:
            client.request("GET", "/", timeout=2)
            return url
        except (OSError, urllib.error.URLError):
            time.sleep(0.5)
    stop(paths)
    raise TimeoutError(f"the hub did not answer at {url} within {wait_s:.0f} s; see "
                       f"{paths.log_file}")


def _tail(path: str, n: int = 3000) -> str:
    try:
        return open(path, encoding="utf-8", errors="replace").read()[-n:]
    except OSError:
        return ""


def stop(paths: HubPaths, purge: bool = False, wait_s: float = 30.0) -> list[str]:
    """Stop the hub (which stops its proxy and every server), then end whatever is left.

    With ``purge``, also delete the course's Unix users with their homes, the
    group and the state folder.  Returns what was done, one line each.
    """
    done = []
    pid = _hub_pid(paths)
    if pid:
        os.kill(pid, signal.SIGTERM)  # the hub stops the servers and the proxy it started
        deadline = time.time() + wait_s
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            time.sleep(0.2)
        else:
            os.killpg(pid, signal.SIGKILL)
        done.append(f"hub (pid {pid}) stopped")
    proxy_pid_file = os.path.join(paths.hub, "jupyterhub-proxy.pid")
    if os.path.exists(proxy_pid_file):  # the proxy, if it outlived the hub
        try:
            ppid = int(open(proxy_pid_file).read().strip())
            cmdline = open(f"/proc/{ppid}/cmdline", "rb").read()
            if b"configurable-http-proxy" in cmdline:
                os.kill(ppid, signal.SIGTERM)
                done.append(f"proxy (pid {ppid}) stopped")
        except (OSError, ValueError):
            pass
        os.remove(proxy_pid_file)
    for name in course_users(paths):          # this hub's users only
        n = end_user_processes(name, paths)
        remove_cgroups(name, paths)
        if n:
            done.append(f"{name}: {n} leftover process(es) ended")
    if os.path.exists(paths.pid_file):
        os.remove(paths.pid_file)
    if purge:
        for name in course_users(paths):
            subprocess.run(["userdel", "--remove", name], capture_output=True)
            subprocess.run(["groupdel", name], capture_output=True)
            done.append(f"user {name} and its home deleted")
        try:
            members = grp.getgrnam(paths.group).gr_mem
        except KeyError:
            members = None
        if members == []:                       # this hub's group, now empty
            subprocess.run(["groupdel", paths.group], capture_output=True)
        elif members:
            done.append(f"group {paths.group} kept: {', '.join(members)} not made by this hub")
        for folder in _instance_cgroups(paths).values():   # this hub's parent cgroups
            for empty in (folder, os.path.dirname(folder)):  # the second if no hub is left
                try:
                    os.rmdir(empty)
                except OSError:
                    pass
        if os.path.isdir(paths.state_dir):
            shutil.rmtree(paths.state_dir, ignore_errors=True)
            done.append(f"{paths.state_dir} deleted")
    return done


def run_as(paths: HubPaths, name: str, cmd: list[str], role: str = "learner",
           timeout: float | None = 600, capture: bool = True) -> subprocess.CompletedProcess:
    """Run ``cmd`` as the course user ``name`` in the namespace their server gets."""
    entry = prepare_user(name, role, paths)
    spec = {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir,
            "stage": paths.stage, "expose": exposed_paths(), "hide": hidden_paths(role),
            "cgroups": [], "nproc": NPROC_LIMIT}
    env = {"HOME": entry.pw_dir, "USER": name, "LOGNAME": name, "SHELL": "/bin/bash",
           "LANG": os.environ.get("LANG", "C.UTF-8"), **server_env(paths, role)}
    env["MPLBACKEND"] = "Agg"
    full = ["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-I", "-S",
            LAUNCHER, json.dumps(spec), "--", *cmd]
    return subprocess.run(full, env=env, capture_output=capture, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _load_settings(paths: HubPaths) -> dict:
    try:
        return json.load(open(paths.settings_file, encoding="utf-8"))
    except OSError:
        raise RuntimeError(f"no hub settings in {paths.state_dir}: start the hub first "
                           "(make hub)") from None


def release(paths: HubPaths, assignment: str) -> subprocess.CompletedProcess:
    """``nbgrader release_assignment`` as the instructor, in the hub's course directory."""
    return run_as(paths, paths.instructor,
                  ["sh", "-c", f"cd {paths.course} && exec nbgrader release_assignment "
                               f"--force {_quote(assignment)}"], role="instructor")


def _quote(s: str) -> str:
    import shlex
    return shlex.quote(s)


def grade(paths: HubPaths, assignment: str) -> list[subprocess.CompletedProcess]:
    """Collect from the exchange, autograde and release feedback with the pipeline (as root).

    The pipeline runs as root, so each submission runs as its unprivileged
    grading user in its own namespaces (see docs/grading.md); the course
    directory -- gradebook, feedback and ``grades.csv`` (every learner's score) -- is
    handed back to the instructor afterwards (the formgrader writes to the gradebook).
    """
    out = []
    for verb in (["collect", assignment, "--exchange"], ["autograde", assignment],
                 ["feedback", assignment],
                 ["export", "--to", os.path.join(paths.course_store, "grades.csv")]):
        proc = subprocess.run([sys.executable, "-m", "autograder", "--course", paths.course,
                               *verb], cwd=REPO, env=hub_env(paths), capture_output=True,
                              text=True)
        out.append(proc)
        if proc.returncode not in (0, 3):  # 3: some submission needs a human
            break
    entry = pwd.getpwnam(paths.instructor)
    _chown_tree(paths.course_store, entry.pw_uid, entry.pw_gid)
    return out


def add_arguments(parser) -> None:
    """The ``hub`` command's sub-commands and options."""
    parser.add_argument("--state-dir", default=os.environ.get("INTERCONNECT_HUB_STATE",
                                                              DEFAULT_STATE_DIR),
                        help="the hub's state folder (default %(default)s)")
    parser.add_argument("--name", dest="instance", default="",
                        help="the hub instance's name: its Unix group and cgroup (default: "
                        "from the state folder, e.g. interconnect-city-8cb7c2; start records it)")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                help="start, stop, status, add-users, remove-user, release, "
                                "grade, as")
    p = sub.add_parser("start", help="start the hub in the background")
    p.add_argument("--ip", default="0.0.0.0", help="address to listen on (default %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port (default %(default)s)")
    p.add_argument("--auth", default="native", help="native (learners sign up, the instructor "
                   "approves) or shared (one workshop password); default %(default)s")
    p.add_argument("--instructor", default=DEFAULT_INSTRUCTOR,
                   help="the instructor's user name, the hub's admin (default %(default)s)")
    p.add_argument("--mem-limit", default="2G", help="memory per user, e.g. 2G; none for no "
                   "limit (default %(default)s)")
    p.add_argument("--cpu-limit", type=float, default=1.0,
                   help="CPUs per user (default %(default)s)")
    p.add_argument("--cull-idle", type=int, default=3600,
                   help="stop servers idle this many seconds (default %(default)s)")
    p.add_argument("--ssl-cert", default="", help="TLS certificate (PEM) for HTTPS")
    p.add_argument("--ssl-key", default="", help="TLS key (PEM) for HTTPS")
    p.add_argument("--assignments", nargs="+", default=None, metavar="NAME",
                   help="generate only these assignments for release (default: all)")
    p = sub.add_parser("stop", help="stop the hub and every process of this hub's users")
    p.add_argument("--purge", action="store_true",
                   help="also delete this hub's Unix users, their homes, its group, cgroups "
                   "and state folder (course directory included)")
    sub.add_parser("status", help="is the hub running; who has a server")
    p = sub.add_parser("add-users", help="create hub users through the REST API")
    p.add_argument("names", nargs="+")
    p.add_argument("--admin", action="store_true", help="as admins (instructors)")
    p = sub.add_parser("remove-user", help="delete learners of this hub (server, processes, "
                       "account, home; their exchange files go to root)")
    p.add_argument("names", nargs="+")
    p = sub.add_parser("release", help="release an assignment to the exchange, as the instructor")
    p.add_argument("assignment")
    p = sub.add_parser("grade", help="collect, autograde and release feedback (as root)")
    p.add_argument("assignment")
    p = sub.add_parser("as", help="run a command as a course user: hub as NAME -- CMD...")
    p.add_argument("name")
    p.add_argument("cmd", nargs="+")
    parser.set_defaults(run=_command, command_parser=parser)


def _command(a) -> int:
    try:
        state = os.path.abspath(a.state_dir)
        if a.action == "start":
            paths = HubPaths(state, a.instructor, a.instance)
        else:
            saved = _load_settings(HubPaths(state)) \
                if os.path.exists(HubPaths(state).settings_file) else {}
            if a.instance and saved.get("name") and a.instance != saved["name"]:
                raise UsageError(f"--name {a.instance!r} is not the name this hub started with "
                                 f"({saved['name']!r}, {state})")
            paths = HubPaths(state, saved.get("instructor", DEFAULT_INSTRUCTOR),
                             a.instance or saved.get("name", ""))
        if a.action == "start":
            settings = dict(_settings(a), name=paths.name)
            url = start(paths, settings)
            print(f"hub: running at {url} (listening on {settings['ip']}:{settings['port']}); "
                  f"log: {paths.log_file}")
            if settings["auth"] == "shared":
                user_pw, admin_pw = workshop_passwords(paths)
                print(f"hub: learners log in with the workshop password: {user_pw}")
                print(f"hub: {settings['instructor']} logs in with: {admin_pw}")
                print("hub: add learners with `python -m course_lib hub add-users NAME...`")
            else:
                print(f"hub: sign up as {settings['instructor']!r} at {url}/hub/signup now; "
                      f"approve learners at {url}/hub/authorize")
            return 0
        if a.action == "stop":
            for line in stop(paths, purge=a.purge):
                print("hub:", line)
            print("hub: stopped")
            return 0
        if a.action == "status":
            pid = _hub_pid(paths)
            if not pid:
                print(f"hub: not running (state folder {paths.state_dir})")
                return 1
            settings = _load_settings(paths)
            users = HubClient(url_of(settings), api_token(paths)).users()
            running = sorted(n for n, u in users.items() if u.get("server"))
            print(f"hub: running (pid {pid}) at {url_of(settings)}; {len(users)} users, "
                  f"servers running: {', '.join(running) or 'none'}")
            return 0
        if a.action == "add-users":
            settings = _load_settings(paths)
            made = HubClient(url_of(settings), api_token(paths)).add_users(a.names, a.admin)
            print("hub: added", ", ".join(made) or "nobody (all existed)")
            return 0
        if a.action == "remove-user":
            client = None
            if _hub_pid(paths):
                client = HubClient(url_of(_load_settings(paths)), api_token(paths))
            for name in a.names:
                if name not in course_users(paths):
                    raise UsageError(f"names: {name!r} is not a user of this hub "
                                     f"(group {paths.group})")
            for name in a.names:
                if client is not None:          # its server stopped, out of the hub's database
                    try:
                        client.request("DELETE", f"/users/{name}", timeout=120)
                    except urllib.error.HTTPError as exc:
                        if exc.code != 404:
                            raise
                for line in remove_user(paths, name):
                    print("hub:", line)
            return 0
        if a.action == "release":
            proc = release(paths, a.assignment)
            print(proc.stdout + proc.stderr, end="")
            return proc.returncode
        if a.action == "grade":
            procs = grade(paths, a.assignment)
            for p in procs:
                print(p.stdout + p.stderr, end="")
            return max(p.returncode for p in procs)
        if a.action == "as":
            cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
            proc = run_as(paths, a.name, cmd, capture=False, timeout=None)
            return proc.returncode
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    except (OSError, RuntimeError, urllib.error.URLError) as exc:
        print(f"hub: {exc}", file=sys.stderr)
        return 1
    return 2


#: One line for ``python -m course_lib --help``; the parser's description.
SUMMARY = "run the course on a JupyterHub for a workshop (start, stop, grade)"
DESCRIPTION = __doc__.split("\n\n")[0]


def main(argv: list[str] | None = None) -> int:
    """``python -m course_lib hub ACTION ...``; the exit status."""
    from .command import Parser, run_parser

    parser = Parser(prog="python -m course_lib hub", description=DESCRIPTION)
    add_arguments(parser)
    return run_parser(parser, argv)
