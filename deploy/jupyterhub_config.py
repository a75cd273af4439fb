# JupyterHub configuration for an Interconnect City workshop on one machine.
#
# Started by `make hub` (`python -m course_lib hub start`), which writes the
# settings below into <state>/hub/settings.json; it also runs on its own, as
# root, from the repository root:
#
#     INTERCONNECT_HUB_STATE=/srv/interconnect-city jupyterhub -f deploy/jupyterhub_config.py
#
# (then with the defaults: port 8000 on every address, NativeAuthenticator, 2 GB
# and 1 CPU per user, servers culled after an idle hour).  The guide is
# docs/instructor_guide.md, "A workshop on a JupyterHub".
#
# What is where:
#   users      each learner is a Unix user (in this hub's own group, named after its
#              state folder: `hub stop` touches no other hub's users) with their own
#              JupyterLab server (CourseSpawner: LocalProcessSpawner fenced in a
#              private mount namespace with per-user cgroups), and a copy of the
#              chapters in ~/chapters/ made at the first login (deploy/course_spawner.py)
#   auth       native: learners sign up, the instructor approves them at /hub/authorize
#              shared: one workshop password for the learners the instructor added
#   instructor the hub's admin; their server has nbgrader's formgrader on the
#              course directory <state>/course (~instructor/course links to it), opened
#              in its own tab at /user/<instructor>/formgrader; learners' servers do not
#   exchange   <state>/exchange, nbgrader's exchange shared by all course users
#   culler     jupyterhub-idle-culler stops idle servers
#   API        a service token in <state>/hub/api_token (root only) for the course's
#              command line (`hub add-users`, `hub status`) and the tests
import json
import os
import sys

_deploy = os.path.dirname(os.path.abspath(__file__))
_repo = os.path.dirname(_deploy)
for _p in (_repo, _deploy):          # course_lib, and course_spawner.py beside this file
    if _p not in sys.path:
        sys.path.insert(0, _p)

from course_lib.apps import hub  # noqa: E402

c = get_config()  # noqa: F821  (traitlets provides it when it loads this file)

_state = os.environ.get("INTERCONNECT_HUB_STATE", hub.DEFAULT_STATE_DIR)
try:
    with open(hub.HubPaths(_state).settings_file, encoding="utf-8") as fh:
        settings = json.load(fh)
except OSError:
    settings = {}
paths = hub.HubPaths(_state, settings.get("instructor", hub.DEFAULT_INSTRUCTOR),
                     settings.get("name", ""))
hub.prepare_state(paths)
ip = settings.get("ip", "0.0.0.0")
port = int(settings.get("port", 8000))
auth = settings.get("auth", "native")
instructor = paths.instructor
mem_limit = settings.get("mem_limit", hub.parse_size("2G"))
cpu_limit = settings.get("cpu_limit", 1.0)
cull_idle_s = int(settings.get("cull_idle_s", 3600))

# --- the hub, its database and its proxy -------------------------------------
c.JupyterHub.ip = ip
c.JupyterHub.port = port
c.JupyterHub.hub_ip = "127.0.0.1"       # the hub's own API: loopback only
c.JupyterHub.hub_port = hub.free_port()  # any free port (two hubs can coexist in tests)
c.JupyterHub.db_url = "sqlite:///" + os.path.join(paths.hub, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(paths.hub, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(paths.hub, "jupyterhub-hub.pid")
c.ConfigurableHTTPProxy.command = [str(hub.PROXY)]          # npm's, installed in deploy/
c.ConfigurableHTTPProxy.pid_file = os.path.join(paths.hub, "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub.free_port()}"  # loopback only
c.JupyterHub.cleanup_servers = True     # stopping the hub stops every server
c.JupyterHub.cleanup_proxy = True
if settings.get("ssl_cert"):            # HTTPS straight from the proxy (or see the guide:
    c.JupyterHub.ssl_cert = settings["ssl_cert"]    # a reverse proxy with Let's Encrypt)
    c.JupyterHub.ssl_key = settings["ssl_key"]

# --- who may log in ---------------------------------------------------------------
c.Authenticator.admin_users = {instructor}
c.Authenticator.username_pattern = hub.USERNAME_PATTERN   # hub names are Unix names
if auth == "shared":
    # One password for the whole workshop: it keeps out whoever does not have it,
    # but any learner who has it can log in as any other learner (not as the
    # instructor, who has their own).  Only users the instructor added may log in.
    user_pw, admin_pw = hub.workshop_passwords(paths)
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = user_pw
    c.SharedPasswordAuthenticator.admin_password = admin_pw
    c.Authenticator.allow_existing_users = True
else:
    # Each learner signs up with their own password (stored hashed); nobody gets in
    # until the instructor approves them at /hub/authorize.  Protects learners from
    # each other.  Sign up as the instructor first: an admin name is approved on sign-up.
    c.JupyterHub.authenticator_class = "native"
    c.NativeAuthenticator.open_signup = False
    c.NativeAuthenticator.minimum_password_length = 8
    c.NativeAuthenticator.check_common_password = True
    c.Authenticator.allow_all = True      # every *approved* user
    c.JupyterHub.template_paths = [
        os.path.join(os.path.dirname(__import__("nativeauthenticator").__file__), "templates")]

# --- each user's server -----------------------------------------------------------
c.JupyterHub.spawner_class = "course_spawner.CourseSpawner"   # deploy/course_spawner.py
c.CourseSpawner.state_dir = paths.state_dir
c.CourseSpawner.instructor = instructor
c.CourseSpawner.instance = paths.name     # this hub's group and cgroup: it touches no other's
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/{hub.COURSE_FOLDER}/00_start_here.ipynb"
c.Spawner.mem_limit = mem_limit          # a cgroup per user, where cgroups are writable
c.Spawner.cpu_limit = cpu_limit
c.Spawner.start_timeout = 300            # 20 first logins at once on 2 cores take minutes
c.Spawner.http_timeout = 300
c.Spawner.environment = {"LANG": "C.UTF-8"}

# --- services: the course's admin token and the idle culler -----------------------
c.JupyterHub.services = [
    {"name": "course-admin", "api_token": hub.api_token(paths)},
    {"name": "idle-culler",
     "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                 f"--timeout={cull_idle_s}", "--cull-every=300", "--concurrency=5"]},
]
c.JupyterHub.load_roles = [
    {"name": "course-admin", "services": ["course-admin"],
     "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users",
                "read:users"]},
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
