"""Load check of the workshop hub: N learners spawning at once on this machine.

    sudo .venv/bin/python benchmarks/bench_hub.py [--learners 20] [--machine-gb 16 32 64]

Starts the hub with the course's own command (``python -m course_lib hub
start``, shared password, loopback, a temporary state folder, no memory limit
so that nothing is capped while measuring), creates N learners through the
REST API and asks for all N servers in the same second.  Reported:

* **time to all servers ready** -- from the first spawn request until the hub
  reports the last server ready (first login of each: Unix user created, the
  chapters copied, the server started); with the median and the 90th
  percentile of the per-learner times;
* **memory per learner** -- the resident set (RSS) of each learner's
  single-user server, idle after start-up (median, max), and of one idle
  kernel each learner starts through their server's REST API;
* **the kernel's working set** -- the peak RSS of a chapter's kernel while the
  chapter runs (``bench_notebooks.measure`` on chapters 0, 4 and 7, the
  heaviest);
* the hub's own processes (hub, proxy, culler);
* **class size**: for machines with the given memory, how many learners fit
  when each has a server and one running chapter kernel, keeping
  ``--reserve-gb`` for the system and the hub.  CPU is not the limit for a
  class that mostly reads and drags sliders; it is for the spawn storm at the
  start, which the time above measures on this machine's cores.

Then everything is stopped and the benchmark's users are deleted: ``hub stop
--purge`` on the benchmark's own state folder, which ends and deletes only what
that hub instance created (its group and its record of users), so the benchmark
may run on the machine of a live class (``tests/test_hub.py`` runs it beside one).
Root only (the hub creates Unix users).  The figures go into docs/instructor_guide.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(state, *args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "course_lib", "hub", "--state-dir", state,
                           *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _call(url, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Authorization": f"token {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        text = resp.read().decode()
    return json.loads(text) if text.strip() else None


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _procs_of(uid: int) -> list[tuple[int, str]]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    cmd = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ")
                    out.append((int(entry), cmd.decode(errors="replace")))
            except OSError:
                pass
    return out


def _tree(root_pid: int) -> list[int]:
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        if pid in parent and pid not in found:
            found.append(pid)
            todo += [c for c, p in parent.items() if p == pid]
    return found


def kernel_working_set(chapters=("00", "04", "07")) -> float:
    """The largest peak RSS (bytes) of a chapter's kernel over ``chapters``."""
    from bench_notebooks import measure

    peaks = []
    for stem in chapters:
        path = next((REPO / "notebooks").glob(f"{stem}_*.ipynb"))
        peaks.append(measure(path, 300.0)["kernel_peak_rss_bytes"])
    return max(peaks)


def class_size(machine_gb: float, per_learner_bytes: float, reserve_gb: float) -> int:
    """Learners that fit in ``machine_gb`` GB (10^9 bytes) after ``reserve_gb``.

    >>> class_size(16, 0.5e9, 2)
    28
    """
    if per_learner_bytes <= 0:
        raise ValueError(f"per_learner_bytes must be positive, got {per_learner_bytes}")
    return max(0, int((machine_gb - reserve_gb) * 1e9 // per_learner_bytes))


def run(n: int, prefix: str = "icb") -> dict:
    state = tempfile.mkdtemp(prefix="ic-hub-bench-")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    names = [f"{prefix}{i:02d}" for i in range(n)]
    for name in names:
        try:
            pwd.getpwnam(name)
            raise SystemExit(f"Unix user {name} exists already; remove it first")
        except KeyError:
            pass
    t_start = time.perf_counter()
    proc = _cli(state, "start", "--ip", "127.0.0.1", "--port", str(port), "--auth", "shared",
                "--instructor", f"{prefix}-teacher", "--mem-limit", "none",
                "--assignments", "ring_allreduce")
    if proc.returncode != 0:
        _cli(state, "stop", "--purge")
        raise SystemExit("hub start failed:\n" + proc.stdout + proc.stderr)
    start_s = time.perf_counter() - t_start
    token = open(os.path.join(state, "hub", "api_token")).read().strip()
    try:
        _call(url, token, "POST", "/hub/api/users", {"usernames": names})
        # every request at once: the hub answers each within 10 s (202 while starting)
        from concurrent.futures import ThreadPoolExecutor

        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(lambda nm: _call(url, token, "POST", f"/hub/api/users/{nm}/server"),
                          names))
        ready_at, deadline = {}, t0 + 900
        while len(ready_at) < n and time.perf_counter() < deadline:
            for user in _call(url, token, "GET", "/hub/api/users"):
                if user["name"] in names and user["name"] not in ready_at and \
                        user["servers"].get("", {}).get("ready"):
                    ready_at[user["name"]] = time.perf_counter() - t0
            time.sleep(0.5)
        if len(ready_at) < n:
            raise SystemExit(f"only {len(ready_at)} of {n} servers ready after 900 s")
        time.sleep(5)                   # let the servers settle after start-up
        server_rss, kernel_rss = [], []
        for name in names:
            uid = pwd.getpwnam(name).pw_uid
            server_rss += [_rss_bytes(p) for p, c in _procs_of(uid) if "jupyterhub.singleuser" in c]
        for name in names:              # one idle kernel per learner, through their server
            tok = _call(url, token, "POST", f"/hub/api/users/{name}/tokens",
                        {"note": "bench", "expires_in": 600})["token"]
            _call(url, tok, "POST", f"/user/{name}/api/kernels", {"name": "python3"})
        time.sleep(10)
        for name in names:
            uid = pwd.getpwnam(name).pw_uid
            kernel_rss += [_rss_bytes(p) for p, c in _procs_of(uid) if "ipykernel" in c]
        hub_pid = int(open(os.path.join(state, "hub", "jupyterhub.pid")).read())
        proxy_pid = int(open(os.path.join(state, "hub", "jupyterhub-proxy.pid")).read())
        hub_rss = sum(_rss_bytes(p) for p in set(_tree(hub_pid) + _tree(proxy_pid))
                      if os.stat(f"/proc/{p}").st_uid == 0)
    finally:
        stop = _cli(state, "stop", "--purge")
    times = sorted(ready_at.values())
    return {"learners": n, "cpus": os.cpu_count(), "hub_start_s": start_s,
            "all_ready_s": times[-1], "median_ready_s": statistics.median(times),
            "p90_ready_s": times[int(0.9 * (n - 1))],
            "server_rss_median": statistics.median(server_rss), "server_rss_max": max(server_rss),
            "idle_kernel_rss_median": statistics.median(kernel_rss),
            "hub_rss": hub_rss, "stopped": stop.returncode == 0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--learners", type=int, default=20)
    p.add_argument("--machine-gb", type=float, nargs="+", default=[8, 16, 32, 64, 128])
    p.add_argument("--reserve-gb", type=float, default=2.0,
                   help="kept for the system and the hub (default %(default)s)")
    p.add_argument("--json", help="also write the figures to this file")
    a = p.parse_args(argv)
    if os.geteuid() != 0:
        print("bench_hub: skipped: needs root (the hub creates Unix users)")
        return 0
    if a.learners < 1:
        p.error("--learners must be at least 1")
    r = run(a.learners)
    r["kernel_peak_rss"] = kernel_working_set()
    per_learner = r["server_rss_max"] + r["kernel_peak_rss"]
    r["per_learner_bytes"] = per_learner
    mb = 1e6
    print(f"## {r['learners']} learners spawning at once ({r['cpus']} CPUs)\n")
    print("| measure | value |\n|---|---:|")
    print(f"| hub start (`hub start`: course directory, hub, proxy) | {r['hub_start_s']:.1f} s |")
    print(f"| time to all servers ready | {r['all_ready_s']:.1f} s |")
    print(f"| per learner: median / 90th percentile | {r['median_ready_s']:.1f} s / "
          f"{r['p90_ready_s']:.1f} s |")
    print(f"| single-user server RSS: median / max | {r['server_rss_median'] / mb:.0f} MB / "
          f"{r['server_rss_max'] / mb:.0f} MB |")
    print(f"| idle kernel RSS (median) | {r['idle_kernel_rss_median'] / mb:.0f} MB |")
    print(f"| a chapter's kernel, peak RSS (chapters 0, 4, 7) | "
          f"{r['kernel_peak_rss'] / mb:.0f} MB |")
    print(f"| hub + proxy + culler RSS | {r['hub_rss'] / mb:.0f} MB |")
    print(f"| per learner (server max + chapter kernel peak) | {per_learner / mb:.0f} MB |")
    print(f"\n## Class size (memory; {a.reserve_gb:g} GB kept for the system and the hub)\n")
    print("| machine memory | learners |\n|---:|---:|")
    for gb in a.machine_gb:
        print(f"| {gb:g} GB | {class_size(gb, per_learner, a.reserve_gb)} |")
    load = os.getloadavg()
    print(f"\nstopped and cleaned up: {r['stopped']}; load average at the end "
          f"{load[0]:.1f} (other work on the machine slows every figure above)")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
