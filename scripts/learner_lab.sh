#!/usr/bin/env bash
# A learner's JupyterLab: switch off nbgrader's instructor tools (Create Assignment,
# Formgrader, the course and assignment lists, the Nbgrader menu) and keep Validate.
#
#   bash scripts/learner_lab.sh [PYTHON]               # learner (make lab, Binder's postBuild)
#   bash scripts/learner_lab.sh [PYTHON] --instructor  # switch them back on (and unlock)
#
# PYTHON is the environment's interpreter (default: `python` on PATH).  The switches go
# into that environment's own config (sys-prefix), never the user's ~/.jupyter, and are
# locked, so the Plugin Manager cannot turn them back on (JupyterLab >= 4.1).  The lists
# come from autograder/__init__.py (STUDENT_DISABLED_EXTENSIONS and
# STUDENT_DISABLED_SERVER_EXTENSIONS), the grading pipeline's single source; make lab and
# postBuild both call this script, so they cannot drift apart.  Idempotent: a stamp in the
# environment records what was done, and a second run with the same lists does nothing.
# nbgrader's command line (the grading pipeline, the tests) does not read these switches.
set -euo pipefail
cd "$(dirname "$0")/.."

py=python
mode=learner
for arg in "$@"; do
  case "$arg" in
    --instructor) mode=instructor ;;
    -*) echo "usage: $0 [PYTHON] [--instructor]" >&2; exit 2 ;;
    *) py=$arg ;;
  esac
done

lab_plugins=$("$py" -c 'import autograder; print(" ".join(autograder.STUDENT_DISABLED_EXTENSIONS))')
server_exts=$("$py" -c 'import autograder; print(" ".join(autograder.STUDENT_DISABLED_SERVER_EXTENSIONS))')
prefix=$("$py" -c 'import sys; print(sys.prefix)')
stamp="$prefix/etc/jupyter/.interconnect-city-lab"
want="$mode: $lab_plugins $server_exts"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

# The modules themselves, run by this interpreter: the environment changed is PYTHON's,
# whatever `jupyter` on PATH would be.
lab=("$py" -m jupyterlab.labextensions)
server=("$py" -m jupyter_server.extension.serverextension)
# shellcheck disable=SC2086  # the names are word-split on purpose
if [ "$mode" = learner ]; then
  "${lab[@]}" disable --level=sys_prefix $lab_plugins
  "${lab[@]}" lock --level=sys_prefix $lab_plugins
  "${server[@]}" disable --sys-prefix $server_exts
else
  "${lab[@]}" unlock --level=sys_prefix $lab_plugins
  "${lab[@]}" enable --level=sys_prefix $lab_plugins
  "${server[@]}" enable --sys-prefix $server_exts
fi
mkdir -p "$(dirname "$stamp")"
printf '%s' "$want" > "$stamp"
echo "learner_lab: $mode set-up in $prefix (nbgrader: $lab_plugins $server_exts)"
