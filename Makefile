# Interconnect City -- two commands: `make lab` opens the course, `make test` checks it.
SHELL := /bin/bash
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# nbgrader calls `alembic` (and jupyter its sub-commands) by name: the venv's bin goes first on PATH.
export PATH := $(abspath $(VENV))/bin:$(PATH)
# Headless recipes (tests, benchmarks, site builds, grading) draw with Agg.  A Lab a person
# looks at must not inherit it: ipykernel picks its inline backend only when MPLBACKEND is
# unset, so with Agg every static figure is invisible.  The Lab starts without it, whatever
# the shell exported (`make doctor` starts a kernel the same way and checks it draws).
export MPLBACKEND ?= Agg
LAB_ENV := env -u MPLBACKEND
# One Lab with the whole course: the repository is its root (chapters, exercises, docs in
# the file browser), and it opens on the start page.
LAB_CMD  = $(LAB_ENV) jupyter lab --ServerApp.root_dir=$(CURDIR) --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS) notebooks/00_start_here.ipynb
PORT   ?= 8888
LAB_ARGS ?=

.PHONY: lab lock test setup browser openmpi bubblewrap fonts learner-lab instructor-lab site clean-venv release autograde doctor bench node hub hub-stop slides prose

# Every Python package at the exact version in requirements.lock (made by `make lock`
# with uv's pip compile from pyproject.toml's ranges; tested together by `make test`).
LOCK   := requirements.lock
UV_VERSION := 0.13.9
# JupyterLab's "get notified about official Jupyter news?" pop-up: off (as on the hub and Binder)
NEWS_PLUGIN := @jupyterlab/apputils-extension:announcements
$(VENV)/.installed: pyproject.toml $(LOCK)
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed (nbgrader 0.9.6); found " + sys.version.split()[0]' \
	  || { echo "Install Python 3.11 or newer, or run: make PYTHON=python3.12 ..."; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c $(LOCK) -e ".[course,test,bench]"
	$(PY) -m jupyterlab.labextensions disable --level=sys_prefix $(NEWS_PLUGIN) >/dev/null
	touch $@

# The workshop hub (JupyterHub and its services): `make test` and `make hub` add it.
$(VENV)/.hub-installed: $(VENV)/.installed pyproject.toml $(LOCK)
	$(PY) -m pip install --quiet -c $(LOCK) -e ".[course,test,hub,bench]"
	touch $@

# Refresh requirements.lock from pyproject.toml's ranges (newest versions that fit, the
# same pins for Python 3.11 and 3.12); then `make test` before a workshop (the guide).
lock: setup  ## re-pin every Python dependency (requirements.lock) with uv pip compile
	$(PY) -m pip install --quiet "uv==$(UV_VERSION)"
	$(VENV)/bin/uv pip compile pyproject.toml --extra course --extra test --extra hub --extra bench \
	  --universal --fork-strategy fewest --python-version 3.11 --upgrade -o $(LOCK)

setup: $(VENV)/.installed  ## create .venv and install everything

lab: setup fonts learner-lab  ## open the course in JupyterLab on its start page
	$(LAB_CMD)

learner-lab: setup  ## a learner's JupyterLab: nbgrader's instructor tools off, Validate on (as on Binder)
	@bash scripts/learner_lab.sh $(PY)

instructor-lab: setup fonts  ## switch nbgrader's instructor tools back on in this venv (Create Assignment, Formgrader) and open the Lab
	@bash scripts/learner_lab.sh $(PY) --instructor
	$(LAB_CMD)

fonts:  ## a CJK font for the glossary's Chinese terms (Debian's fonts-noto-cjk; needs root and apt-get)
	@bash scripts/ensure_cjk_fonts.sh

browser:  ## Debian's chromium for the real-browser tests (needs root and apt-get)
	@bash scripts/ensure_chromium.sh

openmpi:  ## Debian's Open MPI, to test the MPI lab under Open MPI too (needs root and apt-get)
	@bash scripts/ensure_openmpi.sh

node:  ## Node.js and deploy/'s npm packages: the hub's proxy, reveal.js for the slides
	@bash scripts/ensure_node.sh

bubblewrap:  ## Debian's bubblewrap, the grading sandbox (needs root and apt-get)
	@bash scripts/ensure_bubblewrap.sh

test: setup $(VENV)/.hub-installed browser openmpi bubblewrap node fonts learner-lab  ## run the whole test suite (in the learner's Lab)
	$(PY) -m pytest

doctor: setup  ## is this machine ready for the course? (instructors: make doctor DOCTOR_ARGS=--instructor)
	$(PY) -m course_lib doctor $(DOCTOR_ARGS)

release: setup  ## regenerate exercises/ (student release) from solutions/ (nbgrader source)
	$(PY) -m autograder release

autograde: setup bubblewrap  ## collect an LMS zip, autograde, feedback, grades.csv: make autograde ASSIGNMENT=ring_allreduce ZIP=subs.zip
	@test -n "$(ASSIGNMENT)" -a -n "$(ZIP)" || { echo "usage: make autograde ASSIGNMENT=<name> ZIP=<lms-download.zip>"; exit 2; }
	$(PY) -m autograder all --zip $(ZIP) $(ASSIGNMENT)

bench: setup  ## benchmarks (speed, memory, calibration error)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

HUB_STATE ?= /srv/interconnect-city
HUB_ARGS ?=
hub: $(VENV)/.hub-installed node  ## a JupyterHub for a workshop on this machine (root): make hub HUB_ARGS="--auth shared"
	$(PY) -m course_lib hub --state-dir $(HUB_STATE) start $(HUB_ARGS)

hub-stop:  ## stop the workshop hub and every learner's server (HUB_ARGS=--purge: delete the users too)
	$(PY) -m course_lib hub --state-dir $(HUB_STATE) stop $(HUB_ARGS)

prose: setup  ## rewrite every number bound in the chapters' prose from course_lib/values (--check: the tests)
	$(PY) -m course_lib.apps.prose

slides: setup node  ## static reveal.js decks of every chapter in _slides/ (offline)
	$(PY) scripts/build_slides.py _slides

site: setup node  ## static HTML edition with outputs in _site/ (its scripts from deploy/node_modules: no CDN)
	$(PY) -m course_lib site _site

clean-venv:
	rm -rf $(VENV)
