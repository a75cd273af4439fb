# Interconnect City -- two commands: `make lab` opens the course, `make test` checks it.
SHELL := /bin/bash
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# nbgrader calls `alembic` (and jupyter its sub-commands) by name: the venv's bin goes first on PATH.
export PATH := $(abspath $(VENV))/bin:$(PATH)
export MPLBACKEND ?= Agg
PORT   ?= 8888
LAB_ARGS ?=

.PHONY: lab test setup browser openmpi bubblewrap site clean-venv release autograde doctor bench

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed (nbgrader 0.9.6); found " + sys.version.split()[0]' \
	  || { echo "Install Python 3.11 or newer, or run: make PYTHON=python3.12 ..."; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[course,test]"
	touch $@

setup: $(VENV)/.installed  ## create .venv and install everything

lab: setup  ## open the course in JupyterLab on its start page
	cd notebooks && jupyter lab --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS) 00_start_here.ipynb

browser:  ## Debian's chromium for the real-browser tests (needs root and apt-get)
	@bash scripts/ensure_chromium.sh

openmpi:  ## Debian's Open MPI, to test the MPI lab under Open MPI too (needs root and apt-get)
	@bash scripts/ensure_openmpi.sh

bubblewrap:  ## Debian's bubblewrap, the grading sandbox (needs root and apt-get)
	@bash scripts/ensure_bubblewrap.sh

test: setup browser openmpi bubblewrap  ## run the whole test suite
	$(PY) -m pytest

doctor: setup  ## is this machine ready for the course?
	$(PY) -m course_lib doctor

release: setup  ## regenerate exercises/ (student release) from solutions/ (nbgrader source)
	$(PY) -m autograder release

autograde: setup bubblewrap  ## collect an LMS zip, autograde, feedback, grades.csv: make autograde ASSIGNMENT=ring_allreduce ZIP=subs.zip
	@test -n "$(ASSIGNMENT)" -a -n "$(ZIP)" || { echo "usage: make autograde ASSIGNMENT=<name> ZIP=<lms-download.zip>"; exit 2; }
	$(PY) -m autograder all --zip $(ZIP) $(ASSIGNMENT)

bench: setup  ## benchmarks (speed, memory, calibration error)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

site: setup  ## static HTML edition with outputs in _site/
	$(PY) -m course_lib.site _site

clean-venv:
	rm -rf $(VENV)
