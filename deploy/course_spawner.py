"""The hub's spawner: each course user's server as that Unix user, fenced in.

:class:`CourseSpawner` is JupyterHub's ``LocalProcessSpawner`` with what a
workshop on one machine needs around it (``deploy/jupyterhub_config.py``
selects it):

* on a user's first spawn, the Unix account (in this hub instance's group, with
  a uid no one ever had; home mode 0700) and a copy of the chapters in
  ``~/chapters/`` (:func:`course_lib.apps.hub.prepare_user`); an existing account
  this hub did not create (``root``, another hub's learner...) is refused;
* memory and CPU limits in a cgroup per user below this hub's own, where the
  machine's cgroups are writable (:func:`course_lib.apps.hub.make_cgroups`);
  otherwise the hub logs that the limits are off;
* the server starts through :mod:`course_lib.apps.hub_launch` in its own mount
  namespace: the interpreter and the course reachable, ``solutions/`` and
  ``.git`` hidden from learners, then the drop to the user;
* learners get the learner configuration (nbgrader's assignment list on, the
  instructor tools off and locked), the instructor the instructor's
  (formgrader on the hub's course directory);
* on stop, every process still running as the user is ended and the cgroups
  are removed.

It lives beside the hub's configuration, not in ``course_lib``, because it
imports JupyterHub (the ``hub`` extra), which the course library does not need.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Unicode, default

from course_lib.apps import hub

__all__ = ["CourseSpawner"]


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner in a private mount namespace, with per-user cgroups."""

    state_dir = Unicode(hub.DEFAULT_STATE_DIR, config=True,
                        help="the hub's state folder (exchange, course, configuration)")
    instructor = Unicode(hub.DEFAULT_INSTRUCTOR, config=True,
                         help="the instructor's user name (gets the instructor's tools)")
    instance = Unicode("", config=True,
                       help="the hub instance's name (its group and cgroup); default: "
                       "from the state folder")

    @default("cmd")
    def _cmd_default(self):
        return [sys.executable, "-m", "jupyterhub.singleuser"]

    def make_preexec_fn(self, name):
        # Stay root: hub_launch makes the mounts first, then drops to the user.
        return None

    def _paths(self) -> hub.HubPaths:
        return hub.HubPaths(self.state_dir, self.instructor, self.instance)

    def get_env(self):
        env = super().get_env()
        role = "instructor" if self.user.name == self.instructor else "learner"
        env.update(hub.server_env(self._paths(), role))
        return env

    async def start(self):
        paths = self._paths()
        role = "instructor" if self.user.name == self.instructor else "learner"
        entry = await asyncio.to_thread(hub.prepare_user, self.user.name, role, paths)
        cgroups, why = await asyncio.to_thread(
            hub.make_cgroups, self.user.name, self.mem_limit, self.cpu_limit, paths)
        if why:
            self.log.warning("%s: %s", self.user.name, why)
        spec = {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir,
                "stage": paths.stage, "expose": hub.exposed_paths(),
                "hide": hub.hidden_paths(role), "cgroups": cgroups, "nproc": hub.NPROC_LIMIT}
        base = list(self._cmd_default())
        self.cmd = ["unshare", "--mount", "--propagation", "private", "--",
                    sys.executable, "-I", "-S", hub.LAUNCHER, json.dumps(spec), "--", *base]
        self.popen_kwargs = {"cwd": entry.pw_dir}
        return await super().start()

    async def stop(self, now=False):
        await super().stop(now=now)
        paths = self._paths()
        await asyncio.to_thread(hub.end_user_processes, self.user.name, paths)
        await asyncio.to_thread(hub.remove_cgroups, self.user.name, paths)
