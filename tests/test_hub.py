"""The workshop hub for real: JupyterHub, real Unix users, nbgrader's exchange between them.

Two hubs side by side, as on a workshop machine where someone runs the tests
beside a live class.  The *live* hub (shared password, one learner with a
running kernel) starts first; the hub under test starts with the course's own
command and its default sign-in (``python -m course_lib hub start``, the
native authenticator) on a free loopback port with a temporary state folder.  Through the hub's REST API
(the course-admin token from the state folder) the test creates the
instructor and three learners and starts their servers.  Then, each step as
the user whose step it is, through that user's own server behind the hub:

* the instructor releases ``ring_allreduce`` from the formgrader;
* every learner sees it in the assignment list and fetches it; ``ict-ada`` and
  ``ict-cy`` fill in the solutions (contents API), ``ict-bo`` hands in the blank
  release; all three submit;
* the course's pipeline collects, autogrades and releases feedback
  (``python -m course_lib hub grade``, which runs ``python -m autograder`` as
  root); the learners fetch their feedback;
* a learner is deleted (``hub remove-user``): their submission is handed to root,
  and the next new learner gets a uid no one ever had;
* in Debian's chromium, the sign-in a learner uses: the instructor signs up, a
  learner signs up, the instructor approves them at ``/hub/authorize`` and opens
  the formgrader in its own tab, the learner logs in through the login page,
  opens chapter 1 and runs a cell.

The expected scores come from the points in the source notebook.  Then the hub
under test stops with ``--purge`` (no process, user or home of its own left),
the load benchmark runs one learner on a third hub and cleans up, and the live
hub's users, homes, course directory, server and kernel are checked untouched.

Needs root (the hub creates Unix users), the hub's Python packages (``.[hub]``)
and the proxy from npm (``bash scripts/ensure_node.sh``); without them the
tests skip and say why, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
RING = "ring_allreduce"
COURSE = "interconnect-city"
INSTRUCTOR = "ict-teacher"
LEARNERS = {"ict-ada": "full", "ict-bo": "blank", "ict-cy": "full"}
SIGNUP = "ict-dee"          # signs up in the browser; the instructor approves
LATE = "ict-eve"            # created after ict-cy is deleted
LIVE_INSTRUCTOR, LIVE_LEARNER = "icl-teacher", "icl-ann"
MEM_LIMIT = 1536 * 2**20


def _missing():
    """Why the hub cannot run here, or None."""
    if os.geteuid() != 0:
        return "the hub must run as root (it creates Unix users); run the tests as root"
    for mod in ("jupyterhub", "jupyterhub_idle_culler", "nativeauthenticator"):
        try:
            __import__(mod)
        except ImportError:
            return f"{mod} is not installed: pip install -e '.[hub]'"
    if not (REPO / "deploy" / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        return "the hub's proxy is not installed: bash scripts/ensure_node.sh"
    for tool in ("unshare", "useradd", "userdel", "mount"):
        if not shutil.which(tool):
            return f"{tool} is not on PATH"
    return None


def _need(reason):
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(state, *args, timeout=300):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "course_lib", "hub", "--state-dir", state,
                           *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


class Hub:
    """The hub under test: its URL, the admin token, each user's token."""

    def __init__(self, url, state):
        self.url, self.state = url, state
        self.token = open(os.path.join(state, "hub", "api_token")).read().strip()
        self.user_tokens = {}

    def call(self, method, path, body=None, token=None, form=None, timeout=60):
        """A request to ``url + path``; (status, parsed JSON or text)."""
        headers = {"Authorization": f"token {token or self.token}"}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, text = resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def as_user(self, name, method, path, **kw):
        return self.call(method, f"/user/{name}{path}", token=self.user_tokens[name], **kw)


def _source_nb():
    return nbformat.read(REPO / "solutions" / RING / f"{RING}.ipynb", as_version=4)


def max_points():
    """The assignment's maximum, summed from the graded cells of the source notebook."""
    return sum(float(c.metadata.nbgrader["points"]) for c in _source_nb().cells
               if c.metadata.get("nbgrader", {}).get("grade"))


def fill_in_solutions(nb):
    """Put the instructor's solution into every solution cell of a fetched notebook."""
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    sol = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in _source_nb().cells}
    n = 0
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = "\n".join(line for line in sol[meta["grade_id"]].splitlines()
                                    if line.strip() not in markers)
            n += 1
    assert n >= 3, "the fetched notebook should have the assignment's solution cells"
    return nb


def _wait_ready(hub, names, timeout_s=240):
    deadline = time.time() + timeout_s
    pending = set(names)
    while pending and time.time() < deadline:
        for name in sorted(pending):
            status, user = hub.call("GET", f"/hub/api/users/{name}")
            if status == 200 and user["servers"].get("", {}).get("ready"):
                pending.discard(name)
        time.sleep(1)
    assert not pending, f"servers not ready after {timeout_s} s: {sorted(pending)}"


def _processes_of(uids):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid in uids:
                    out.append(int(entry))
            except OSError:
                pass
    return out


def _descendants(root_pid):
    """``root_pid`` and every process below it: {pid: command line}."""
    parent, cmd = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
                cmd[int(entry)] = open(f"/proc/{entry}/cmdline", "rb").read().replace(
                    b"\0", b" ").decode(errors="replace")[:160]
            except (OSError, ValueError, IndexError):
                pass
    found, todo = {}, [root_pid]
    while todo:
        pid = todo.pop()
        if pid in cmd and pid not in found:
            found[pid] = cmd[pid]
            todo += [c for c, p in parent.items() if p == pid]
    return found


def _alive(pids):
    out = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            out.append(pid)
        except OSError:
            pass
    return out


def _snapshot(folder):
    """{relative path: (uid, mode, size)} of everything under ``folder``."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for item in [root, *(os.path.join(root, f) for f in files)]:
            try:
                st = os.lstat(item)
                out[os.path.relpath(item, folder)] = (st.st_uid, st.st_mode, st.st_size)
            except OSError:
                pass
    return out


def _live_view(live):
    """What the live hub has on the machine now."""
    view = {"accounts": {}, "homes": {}}
    for name in (LIVE_INSTRUCTOR, LIVE_LEARNER):
        try:
            e = pwd.getpwnam(name)
            view["accounts"][name] = (e.pw_uid, e.pw_gid, e.pw_dir)
            view["homes"][name] = sorted(os.listdir(e.pw_dir))
        except (KeyError, OSError) as exc:
            view["accounts"][name] = repr(exc)
    view["course"] = _snapshot(os.path.join(live["state"], "course"))
    return view


@pytest.fixture(scope="module")
def live_hub():
    """A hub with a learner and a running kernel, standing for a class in progress."""
    _need(_missing())
    for name in (LIVE_INSTRUCTOR, LIVE_LEARNER):
        try:
            pwd.getpwnam(name)
            pytest.fail(f"Unix user {name} exists before the test; remove it (userdel -r {name})")
        except KeyError:
            pass
    state = tempfile.mkdtemp(prefix="ic-live-")
    port = _free_port()
    proc = _cli(state, "start", "--ip", "127.0.0.1", "--port", str(port), "--auth", "shared",
                "--instructor", LIVE_INSTRUCTOR, "--assignments", RING)
    live = {"state": state}
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        hub = Hub(f"http://127.0.0.1:{port}", state)
        live["hub"] = hub
        status, out = hub.call("POST", "/hub/api/users", body={"usernames": [LIVE_LEARNER]})
        assert status == 201, (status, out)
        status, out = hub.call("POST", f"/hub/api/users/{LIVE_LEARNER}/server")
        assert status in (201, 202), (status, out)
        _wait_ready(hub, [LIVE_LEARNER])
        status, tok = hub.call("POST", f"/hub/api/users/{LIVE_LEARNER}/tokens",
                               body={"note": "live", "expires_in": 7200})
        hub.user_tokens[LIVE_LEARNER] = tok["token"]
        status, kernel = hub.as_user(LIVE_LEARNER, "POST", "/api/kernels",
                                     body={"name": "python3"})
        assert status == 201, (status, kernel)
        live["kernel"] = kernel["id"]
        uid = pwd.getpwnam(LIVE_LEARNER).pw_uid
        live["pids"] = sorted(_processes_of({uid}))
        live["before"] = _live_view(live)
        yield live
    finally:
        _cli(state, "stop", "--purge")
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def hub_run(live_hub):
    _need(_missing())
    for name in [INSTRUCTOR, *LEARNERS, SIGNUP, LATE]:
        try:
            pwd.getpwnam(name)
            pytest.fail(f"Unix user {name} exists before the test; remove it (userdel -r {name})")
        except KeyError:
            pass
    state = tempfile.mkdtemp(prefix="ic-hub-test-")
    port = _free_port()
    t0 = time.perf_counter()
    t_start = time.perf_counter()
    proc = _cli(state, "start", "--ip", "127.0.0.1", "--port", str(port),   # --auth native
                "--instructor", INSTRUCTOR, "--mem-limit", str(MEM_LIMIT), "--cpu-limit", "1",
                "--cull-idle", "3600", "--assignments", RING)
    if proc.returncode != 0:
        _cli(state, "stop", "--purge")
        pytest.fail(f"hub start failed:\n{proc.stdout}{proc.stderr}")
    hub = Hub(f"http://127.0.0.1:{port}", state)
    print(f"hub start: {time.perf_counter() - t_start:.1f} s")
    run = {"hub": hub, "state": state, "start_out": proc.stdout, "stopped": False,
           "uids": {}, "homes": {}}
    try:
        _round_trip(hub, run)
        run["seconds"] = time.perf_counter() - t0
        print("round trip phases (s):", run["phases"])
        yield run
    finally:
        if not run["stopped"]:
            _cli(state, "stop", "--purge")
        shutil.rmtree(state, ignore_errors=True)


def _round_trip(hub, run):
    run["phases"] = phases = {}
    mark = time.perf_counter()

    def lap(label):
        nonlocal mark
        now = time.perf_counter()
        phases[label] = round(now - mark, 1)
        mark = now

    # -- users through the REST API, then their servers ---------------------------
    status, made = hub.call("POST", "/hub/api/users",
                            body={"usernames": sorted(LEARNERS), "admin": False})
    assert status == 201, (status, made)
    run["created"] = sorted(u["name"] for u in made)
    status, _ = hub.call("POST", f"/hub/api/users/{INSTRUCTOR}")  # admin_users made it: 409
    assert status in (201, 409), status
    status, users = hub.call("GET", "/hub/api/users")
    run["admins"] = sorted(u["name"] for u in users if u["admin"])
    everyone = [INSTRUCTOR, *LEARNERS]
    for name in everyone:
        status, out = hub.call("POST", f"/hub/api/users/{name}/server")
        assert status in (201, 202), (name, status, out)
    _wait_ready(hub, everyone)
    for name in everyone:
        status, tok = hub.call("POST", f"/hub/api/users/{name}/tokens",
                               body={"note": "test", "expires_in": 3600})
        assert status == 201, (name, status, tok)
        hub.user_tokens[name] = tok["token"]
        entry = pwd.getpwnam(name)
        run["uids"][name], run["homes"][name] = entry.pw_uid, entry.pw_dir
    lap("users and servers")

    # -- the instructor releases from the formgrader ---------------------------------
    status, out = hub.as_user(INSTRUCTOR, "POST", f"/formgrader/api/assignment/{RING}/release",
                              form={}, timeout=120)
    assert status == 200 and isinstance(out, dict) and out.get("success"), (status, out)
    run["formgrader"] = {n: hub.as_user(n, "GET", "/formgrader/api/status")[0]
                         for n in (INSTRUCTOR, "ict-ada")}
    run["lab_disabled"] = {}
    for name in (INSTRUCTOR, "ict-ada"):       # the plugins JupyterLab leaves out
        status, page = hub.as_user(name, "GET", "/lab")
        data = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S)
        assert status == 200 and data, (name, status)
        run["lab_disabled"][name] = set(json.loads(data.group(1)).get("disabledExtensions", []))

    lap("release")
    # -- learners: list, fetch, work, submit -----------------------------------------
    nb_path = f"{COURSE}/{RING}/{RING}.ipynb"
    run["listed"], run["fetched_text"] = {}, {}
    for name, kind in LEARNERS.items():
        status, listing = hub.as_user(name, "GET", f"/assignments?course_id={COURSE}")
        assert status == 200 and listing["success"], (name, status, listing)
        run["listed"][name] = {(a["assignment_id"], a["status"]) for a in listing["value"]}
        status, out = hub.as_user(name, "POST", "/assignments/fetch",
                                  form={"course_id": COURSE, "assignment_id": RING})
        assert status == 200 and out["success"], (name, status, out)
        status, model = hub.as_user(name, "GET", f"/api/contents/{nb_path}?content=1")
        assert status == 200, (name, status, model)
        nb = nbformat.from_dict(model["content"])
        run["fetched_text"][name] = nbformat.writes(nb)
        if kind == "full":
            fill_in_solutions(nb)
            status, out = hub.as_user(name, "PUT", f"/api/contents/{nb_path}",
                                      body={"type": "notebook", "format": "json",
                                            "content": json.loads(nbformat.writes(nb))})
            assert status == 200, (name, status, out)
        status, out = hub.as_user(name, "POST", "/assignments/submit",
                                  form={"course_id": COURSE, "assignment_id": RING})
        assert status == 200 and out["success"], (name, status, out)
    inbound = Path(run["state"], "exchange", COURSE, "inbound")
    run["inbound_owners"] = {p.name.split("+")[0]: pwd.getpwuid(p.stat().st_uid).pw_name
                             for p in inbound.iterdir()}

    lap("fetch and submit")
    # -- the instructor's pipeline: collect, autograde, feedback ------------------------
    proc = _cli(run["state"], "grade", RING, timeout=600)
    run["grade_out"] = proc.stdout + proc.stderr
    assert proc.returncode == 0, run["grade_out"]
    csv_path = os.path.join(run["state"], "course", "grades.csv")   # written by `hub grade`
    run["grades_owner"] = pwd.getpwuid(os.stat(csv_path).st_uid).pw_name
    run["course_link"] = (os.path.islink(f"/home/{INSTRUCTOR}/course"),
                          os.path.realpath(f"/home/{INSTRUCTOR}/course"))
    import csv
    with open(csv_path, newline="", encoding="utf-8") as fh:
        run["grades"] = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(fh)
                         if r["assignment"] == RING}
    course_owner = pwd.getpwuid(os.stat(f"/home/{INSTRUCTOR}/course").st_uid).pw_name
    run["course_owner"] = course_owner

    lap("collect, autograde, feedback")
    # -- learners fetch their feedback ---------------------------------------------------
    run["feedback"] = {}
    for name in LEARNERS:
        status, out = hub.as_user(name, "POST", "/assignments/fetch_feedback",
                                  form={"course_id": COURSE, "assignment_id": RING})
        assert status == 200 and out["success"], (name, status, out)
        status, folder = hub.as_user(name, "GET", f"/api/contents/{COURSE}/{RING}/feedback")
        assert status == 200, (name, status, folder)
        htmls = []
        run.setdefault("feedback_dirs", []).extend(s["path"] for s in folder["content"])
        for stamp in folder["content"]:
            status, inner = hub.as_user(name, "GET",
                                        f"/api/contents/{urllib.parse.quote(stamp['path'])}")
            htmls += [f["path"] for f in inner["content"] if f["name"].endswith(".html")]
        assert htmls, f"{name}: no feedback HTML fetched"
        status, page = hub.as_user(name, "GET", f"/api/contents/{urllib.parse.quote(htmls[0])}"
                                                "?content=1&type=file&format=text")
        run["feedback"][name] = page["content"]

    lap("fetch feedback")
    # -- what a learner's server may and may not reach -----------------------------------
    ada = "ict-ada"
    probe = _cli(run["state"], "as", ada, "--", "sh", "-c",
                 f"cat {REPO}/solutions/{RING}/{RING}.ipynb >/dev/null 2>&1 && echo SOLUTIONS;"
                 f" ls {run['homes']['ict-bo']} >/dev/null 2>&1 && echo OTHER_HOME;"
                 f" ls /home/{INSTRUCTOR}/course >/dev/null 2>&1 && echo GRADEBOOK;"
                 " python -c 'import course_lib; print(\"COURSE_LIB\")'")
    run["probe"] = probe.stdout + probe.stderr
    server_pid = [p for p in _processes_of({run["uids"][ada]})
                  if b"jupyterhub.singleuser" in open(f"/proc/{p}/cmdline", "rb").read()]
    from course_lib.apps import hub as hubapp
    run["limits"] = hubapp.cgroup_limits_of(server_pid[0]) if server_pid else {}
    run["hub_log"] = Path(run["state"], "hub", "jupyterhub.log").read_text(errors="replace")

    # -- a learner leaves; the next one must not inherit what was theirs -----------------
    cy_uid = run["uids"]["ict-cy"]
    run["removed"] = ["ict-cy"]
    proc = _cli(run["state"], "remove-user", "ict-cy")
    run["remove_out"] = proc.stdout + proc.stderr
    assert proc.returncode == 0, run["remove_out"]
    run["cy_gone"] = not os.path.exists(run["homes"]["ict-cy"])
    run["cy_inbound"] = {p.name: p.stat().st_uid for p in inbound.iterdir()
                         if p.name.startswith("ict-cy+")}
    proc = _cli(run["state"], "as", LATE, "--", "id", "-u")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run["late_uid"] = int(proc.stdout.split()[-1])
    run["cy_uid"] = cy_uid
    run["late_owns"] = sorted(str(p) for p in Path(run["state"], "exchange").rglob("*")
                              if p.lstat().st_uid == run["late_uid"])
    lap("remove a learner, add one")


def test_users_made_through_the_rest_api_are_unix_users_with_the_course(hub_run):
    assert hub_run["created"] == sorted(LEARNERS)
    assert hub_run["admins"] == [INSTRUCTOR]
    for name, home in hub_run["homes"].items():
        if name in hub_run["removed"]:
            continue                                 # deleted on purpose below
        assert home == f"/home/{name}"
        assert os.stat(home).st_mode & 0o777 == 0o700, name
        assert os.stat(home).st_uid == hub_run["uids"][name] != 0
        chapters = sorted(p.name for p in Path(home, "chapters").glob("*.ipynb"))
        assert chapters == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb")), name


def test_formgrader_is_the_instructors_only(hub_run):
    assert hub_run["formgrader"][INSTRUCTOR] == 200
    assert hub_run["formgrader"]["ict-ada"] == 404
    learner, teacher = hub_run["lab_disabled"]["ict-ada"], hub_run["lab_disabled"][INSTRUCTOR]
    for plugin in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"):
        assert plugin in learner and plugin not in teacher, plugin
    news = "@jupyterlab/apputils-extension:announcements"   # no "Jupyter news?" pop-up
    assert news in learner and news in teacher
    assert "@jupyter/nbgrader:assignment-list" not in learner


def test_learners_see_the_release_and_fetch_it_without_answers(hub_run):
    for name in LEARNERS:
        assert (RING, "released") in hub_run["listed"][name], hub_run["listed"][name]
        text = hub_run["fetched_text"][name]
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, name
        assert "raise NotImplementedError()" in text, name


def test_each_submission_belongs_to_its_learner(hub_run):
    assert hub_run["inbound_owners"] == {n: n for n in LEARNERS}


def test_scores_come_from_the_points_in_the_source(hub_run):
    top = max_points()
    assert top > 0
    expected = {n: (top if kind == "full" else 0.0) for n, kind in LEARNERS.items()}
    assert hub_run["grades"] == expected, hub_run["grade_out"][-3000:]
    assert hub_run["course_owner"] == INSTRUCTOR   # handed back for the formgrader
    assert hub_run["grades_owner"] == INSTRUCTOR   # grades.csv too, not root


def test_the_course_directory_lives_outside_any_home(hub_run):
    is_link, target = hub_run["course_link"]
    assert is_link and target == os.path.join(hub_run["state"], "course")


def test_a_deleted_learners_uid_is_never_handed_out_again(hub_run):
    assert hub_run["cy_gone"], hub_run["remove_out"]
    assert hub_run["cy_inbound"] and set(hub_run["cy_inbound"].values()) == {0}, \
        hub_run["cy_inbound"]                      # kept for grading, owned by root
    assert hub_run["late_uid"] != hub_run["cy_uid"]
    assert hub_run["late_uid"] > max(hub_run["uids"].values())
    assert hub_run["late_owns"] == []              # nothing of anyone else's in the exchange


def test_feedback_lands_where_the_guide_says(hub_run):
    guide = (REPO / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    assert f"~/{COURSE}/{RING}/feedback/<timestamp>/{RING}.html" in guide
    for path in hub_run["feedback_dirs"]:
        assert re.fullmatch(rf"{COURSE}/{RING}/feedback/[\d\-: .]+[\w:.+-]*", path), path


def test_learners_fetch_feedback_with_their_score(hub_run):
    top = max_points()
    for name, kind in LEARNERS.items():
        page = hub_run["feedback"][name]
        assert RING in page and "<html" in page.lower(), name
        got = re.search(rf"{RING} \(Score: ([\d.]+) / ([\d.]+)\)", page)
        assert got, f"{name}: no score heading in the feedback"
        assert float(got.group(2)) == top, name
        assert float(got.group(1)) == (top if kind == "full" else 0.0), name


def test_a_learner_is_fenced_in(hub_run):
    probe = hub_run["probe"]
    assert "COURSE_LIB" in probe, probe              # the course is reachable...
    for leak in ("SOLUTIONS", "OTHER_HOME", "GRADEBOOK"):
        assert leak not in probe, probe              # ...answers, others' work are not
    limits = hub_run["limits"]
    if limits.get("memory") and limits["memory"] < 2**60:   # cgroups writable here
        assert limits["memory"] == MEM_LIMIT
        assert limits["cpus"] == pytest.approx(1.0)
    else:                                   # not allowed here: the hub must say so
        assert "limits are off" in hub_run["hub_log"], limits


def _browser(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def sign_up(page, url, user, password):
    """Sign up at the hub's sign-up page, as the guide asks learners and the instructor."""
    page.goto(f"{url}/hub/signup", wait_until="domcontentloaded", timeout=60_000)
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.fill("#password_confirmation_input", password)
    page.click("#signup_submit")
    page.wait_for_load_state("domcontentloaded")
    return page.inner_text("body")


def log_in(page, url, user, password):
    page.goto(f"{url}/hub/login", wait_until="domcontentloaded", timeout=60_000)
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/**", timeout=180_000)


def run_first_cell(page, url, user):
    """Open chapter 1 in the user's JupyterLab and run its first code cell; (prompt, output)."""
    page.goto(f"{url}/user/{user}/lab/tree/chapters/01_city_at_night.ipynb",
              wait_until="domcontentloaded", timeout=60_000)
    cell = page.locator(".jp-Notebook .jp-CodeCell").first
    cell.wait_for(timeout=120_000)
    # the kernel is up when the toolbar's kernel indicator reports idle
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator,"
        " .jp-StatusBar-TextItem')].some(e => /idle/i.test(e.getAttribute('data-status')"
        " || e.textContent))", timeout=120_000)
    output = cell.locator(".jp-OutputArea-output")
    for attempt in range(3):       # a cold kernel can drop the first request
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Escape")          # command mode on this cell
        page.keyboard.press("Control+Enter")   # run it, stay on it
        try:
            output.first.wait_for(timeout=40_000)
            break
        except Exception:
            if attempt == 2:
                raise
    page.wait_for_function(
        "c => /\\[\\d+\\]/.test(c.querySelector('.jp-InputPrompt').textContent)",
        arg=cell.element_handle(), timeout=60_000)
    return (cell.locator(".jp-InputPrompt").first.inner_text(),
            "\n".join(output.all_inner_texts()))


@pytest.fixture(scope="module")
def native_sign_in(hub_run):
    """The default sign-in, end to end in chromium (see the module's docstring)."""
    if not os.path.exists(CHROMIUM):
        _need(f"{CHROMIUM} not found: bash scripts/ensure_chromium.sh")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(f"playwright is not installed: {exc}")
    import secrets

    url = hub_run["hub"].url
    pw = {INSTRUCTOR: secrets.token_urlsafe(12), SIGNUP: secrets.token_urlsafe(12)}
    out = {}
    with sync_playwright() as p:
        browser = _browser(p)
        teacher = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        learner = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page = teacher
        try:
            out["teacher_signup"] = sign_up(teacher, url, INSTRUCTOR, pw[INSTRUCTOR])
            page = learner
            out["learner_signup"] = sign_up(learner, url, SIGNUP, pw[SIGNUP])
            # not approved yet: the login page does not let the learner in
            learner.goto(f"{url}/hub/login", wait_until="domcontentloaded")
            learner.fill("input[name=username]", SIGNUP)
            learner.fill("input[name=password]", pw[SIGNUP])
            learner.click("#login_submit")
            learner.wait_for_load_state("domcontentloaded")
            out["before_approval"] = learner.url
            page = teacher
            log_in(teacher, url, INSTRUCTOR, pw[INSTRUCTOR])
            teacher.goto(f"{url}/hub/authorize", wait_until="domcontentloaded")
            teacher.click(f"a[href$='authorize/{SIGNUP}']:has-text('Authorize')")
            teacher.wait_for_load_state("domcontentloaded")
            out["authorize_page"] = teacher.inner_text("body")
            # the formgrader, where the guide says: its own tab at /user/<instructor>/formgrader
            teacher.goto(f"{url}/user/{INSTRUCTOR}/formgrader", wait_until="domcontentloaded",
                         timeout=60_000)
            teacher.wait_for_selector(f"text={RING}", timeout=60_000)
            out["formgrader"] = teacher.inner_text("body")
            page = learner
            log_in(learner, url, SIGNUP, pw[SIGNUP])
            out["learner_url"] = learner.url
            out["prompt"], out["output"] = run_first_cell(learner, url, SIGNUP)
        except Exception:
            page.screenshot(path=os.path.join(tempfile.gettempdir(), "hub_native_sign_in.png"))
            raise
        finally:
            browser.close()
    return out


def test_native_sign_up_needs_the_instructors_approval(native_sign_in):
    assert "/hub/login" in native_sign_in["before_approval"], native_sign_in["before_approval"]
    assert "/user/" not in native_sign_in["before_approval"]
    assert "500" not in native_sign_in["learner_signup"], native_sign_in["learner_signup"]


def test_the_formgrader_opens_in_its_own_tab(native_sign_in):
    text = native_sign_in["formgrader"]
    assert "Manage Assignments" in text and RING in text, text[:2000]


def test_an_approved_learner_logs_in_and_runs_a_cell_of_chapter_1(native_sign_in):
    assert f"/user/{SIGNUP}/lab" in native_sign_in["learner_url"]
    prompt, output = native_sign_in["prompt"], native_sign_in["output"]
    assert "[1]" in prompt, prompt
    # the cell ran in the learner's kernel and printed or drew what the chapter's first
    # code cell makes (today the city's map), with no error
    assert output.strip() and "Traceback" not in output and "Error" not in output, output
    assert "city hall" in output or "gradients:" in output, output


def test_stop_leaves_no_process_user_or_home_behind(hub_run):
    hubdir = Path(hub_run["state"], "hub")
    hub_pid = int((hubdir / "jupyterhub.pid").read_text())
    proxy_pid = int((hubdir / "jupyterhub-proxy.pid").read_text())
    tree = _descendants(hub_pid) | _descendants(proxy_pid)    # hub, culler, proxy, servers
    assert any("jupyterhub_idle_culler" in c for c in tree.values()), tree
    assert any("configurable-http-proxy" in c for c in tree.values()), tree
    proc = _cli(hub_run["state"], "stop", "--purge")
    hub_run["stopped"] = True
    assert proc.returncode == 0, proc.stdout + proc.stderr
    time.sleep(1)
    assert _processes_of(set(hub_run["uids"].values())) == []
    assert _alive(tree) == [], {p: tree[p] for p in _alive(tree)}
    for name, home in hub_run["homes"].items():
        with pytest.raises(KeyError):
            pwd.getpwnam(name)
        assert not os.path.exists(home), home
    for name in (SIGNUP, LATE):
        with pytest.raises(KeyError):
            pwd.getpwnam(name)
    assert not os.path.exists(hub_run["state"])


def test_the_load_benchmark_beside_a_live_hub(live_hub, hub_run):
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_hub

    result = bench_hub.run(1)
    assert result["stopped"] and result["all_ready_s"] > 0, result


def test_a_live_hub_is_untouched_by_the_tests_and_the_benchmark(live_hub, hub_run):
    assert hub_run["stopped"]             # after the hub under test was purged...
    assert _live_view(live_hub) == live_hub["before"]     # ...accounts, homes, course
    assert _alive(live_hub["pids"]) == live_hub["pids"]   # server and kernel still running
    status, kernel = live_hub["hub"].as_user(LIVE_LEARNER, "GET",
                                             f"/api/kernels/{live_hub['kernel']}")
    assert status == 200 and kernel["id"] == live_hub["kernel"], (status, kernel)
