"""scripts/ensure_node.sh picks the apt packages that install on this machine.

Debian's Node is two packages (``nodejs``, ``npm``); NodeSource's ``nodejs`` ships npm
inside and conflicts with Debian's ``npm``, so asking for both fails where NodeSource's
repository is set up.  The script runs here in a copy of ``scripts/`` and ``deploy/``
with stand-ins for ``apt-get``, ``apt-cache``, ``dpkg-query``, ``node`` and ``npm`` on
PATH that record what they were asked and behave like each kind of machine (and an
``id`` that says root, who may apt-get).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STUB = """#!/bin/bash
echo "$(basename "$0") $*" >> "{log}"
case "$(basename "$0")" in
  apt-cache) echo "nodejs:"; echo "  Installed: (none)"; echo "  Candidate: {candidate}" ;;
  dpkg-query) {dpkg} ;;
  apt-get) if [[ " $* " == *" install "* ]]; then
             if [[ "{conflict}" == yes && " $* " == *" npm"* ]]; then
               echo "nodejs : Conflicts: npm" >&2; exit 100; fi
             for tool in node npm; do printf '#!/bin/bash\\necho v20\\n' > "{bin}/$tool";
               chmod +x "{bin}/$tool"; done
           fi ;;
esac
exit 0
"""


def run_script(tmp_path, candidate, dpkg="exit 1", conflict="no", have=()):
    tree = tmp_path / "repo"
    (tree / "scripts").mkdir(parents=True)
    (tree / "deploy").mkdir()
    shutil.copy(REPO / "scripts" / "ensure_node.sh", tree / "scripts")
    (tree / "deploy" / "package-lock.json").write_text("{}")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "calls.log"
    for tool in ("apt-get", "apt-cache", "dpkg-query", *have):
        text = STUB.format(log=log, candidate=candidate, dpkg=dpkg, conflict=conflict, bin=bin_)
        if tool in ("node", "npm"):
            text = f"#!/bin/bash\necho \"{tool} $*\" >> \"{log}\"\nexit 0\n"
        (bin_ / tool).write_text(text)
        (bin_ / tool).chmod(0o755)
    for tool in ("bash", "sha256sum", "cut", "cat", "awk", "dirname", "basename", "chmod"):
        os.symlink(shutil.which(tool), bin_ / tool)
    (bin_ / "id").write_text("#!/bin/bash\necho 0\n")   # as root, who may apt-get
    (bin_ / "id").chmod(0o755)
    env = {"PATH": str(bin_), "CI": "true", "HOME": str(tmp_path)}
    proc = subprocess.run([str(bin_ / "bash"), str(tree / "scripts" / "ensure_node.sh")],
                          env=env, capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc, [c for c in calls if c.startswith("apt-get") and " install " in f" {c} "]


def test_debian_gets_nodejs_and_npm(tmp_path):
    proc, installs = run_script(tmp_path, candidate="18.19.0+dfsg-6~deb12u2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installs == ["apt-get install -y -qq nodejs npm"], installs


def test_nodesource_gets_only_nodejs(tmp_path):
    proc, installs = run_script(tmp_path, candidate="20.19.2-1nodesource1", conflict="yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installs == ["apt-get install -y -qq nodejs"], installs


def test_debians_node_without_npm_gets_npm(tmp_path):
    proc, installs = run_script(tmp_path, candidate="18.19.0+dfsg-6~deb12u2",
                                dpkg="echo -n 18.19.0+dfsg-6~deb12u2", have=("node",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installs == ["apt-get install -y -qq npm"], installs


def test_node_and_npm_present_installs_nothing(tmp_path):
    proc, installs = run_script(tmp_path, candidate="20.19.2-1nodesource1",
                                dpkg="echo -n 20.19.2-1nodesource1", have=("node", "npm"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installs == []
