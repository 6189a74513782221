# ascend_lab — the two commands a fresh machine needs:  make book  and  make test
# Both create (or refresh) the local virtual environment .venv from pyproject.toml + requirements.lock
# (requirements.lock = `pip freeze` of a fresh venv with `-e ".[dev,lab]"`, minus pip/setuptools/wheel; soupsieve
# is held at 2.10, its last release that installs on Python 3.11.2, Debian's 3.11: 3.0.2 and later need 3.11.5).
# --no-compile: a module is byte-compiled when it is first imported, not all ~600 MB of the venv at install time
# (on 2 busy cores: install CPU 36 s -> 15 s).
# The interpreter of the venv: Debian's CPython 3.11 where the machine has it, else python3. On this project's
# machines python3 is pyenv's 3.11.7, built without --enable-optimizations; Debian's 3.11.2 runs the unit tests
# with 12% less CPU (262 -> 232 CPU-s, two alternating pairs, issue 19). If its venv module is missing, the venv is
# made with python3.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3.11) python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTEST := $(PY) -m pytest -p no:cacheprovider
# The site's browser assets (MathJax, ipywidgets html-manager), fetched by scripts/vendor.sh, which pins them.
VENDOR := _vendor/.vendor-stamp
# pyodide's core for the live tiling page, fetched by scripts/vendor_pyodide.sh (pinned), and the package's
# numpy-free tiling modules + compile facts beside it (scripts/live_tiling_bundle.py, rebuilt every time).
PYODIDE := _vendor_pyodide/.vendor-stamp
LAB_STAMP := $(VENV)/.lab-installed
# Under PYTHONDONTWRITEBYTECODE (set in some shells and CI images) no module of the --no-compile venv is ever
# byte-compiled to disk, and every Python process compiles pytest, hypothesis, jupyter, sphinx... from source again.
# Every process make starts writes and reads its bytecode under _build/pycache instead (as conftest.py does for the
# processes the tests start): the book build 21.5 -> 16 CPU s, each pytest's start-up 3.1 -> 1.1 CPU s.
ifneq ($(PYTHONDONTWRITEBYTECODE),)
export PYTHONPYCACHEPREFIX ?= $(CURDIR)/_build/pycache
unexport PYTHONDONTWRITEBYTECODE
endif

.PHONY: venv vendor chromium setup-book setup-test book test check test-site test-lab lint bench lab clean live-tiling

$(PY):
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); python3 -m venv $(VENV); }
	$(PY) -m pip install -q -U pip

$(STAMP): pyproject.toml requirements.lock | $(PY)
	$(PY) -m pip install -q --no-compile -c requirements.lock -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

## MathJax, the widget manager and the timeline viewer (npm + PyPI) into _vendor/ (git-ignored; skipped when up to date).
$(VENDOR): scripts/vendor.sh ascend_lab/ascendc/timeline.py | $(PY)
	bash scripts/vendor.sh _vendor

$(PYODIDE): scripts/vendor_pyodide.sh | $(PY)
	bash scripts/vendor_pyodide.sh _vendor_pyodide

live-tiling: $(STAMP) $(PYODIDE)
	$(PY) scripts/live_tiling_bundle.py _vendor_pyodide/live-tiling

vendor: $(VENDOR) $(PYODIDE)

## Debian's Chromium at /usr/bin/chromium (+ chromium-headless-shell, as root) for the browser tests (apt-get; never
## `playwright install`).
chromium:
	bash scripts/ensure_chromium.sh

## Build the static site into _build/html: every chapter executed, warnings are errors, offline-clean.
BUILD_BOOK := rm -rf _build/html _build/jupyter_execute _build/.doctrees && $(VENV)/bin/jupyter-book build . -W -n --keep-going
## The set-up `make book` and `make test` need, three jobs at a time: the vendored assets are fetched (network) while
## pip installs the project into the venv (a fresh clone's set-up: 33 s -> 28 s; pip's install is the longest job).
## The venv and its pip come first, as vendor.sh downloads one wheel with that pip. --output-sync keeps each job's
## lines together.
SETUP := $(STAMP) $(VENDOR) live-tiling
setup-book:
	@$(MAKE) --no-print-directory -j3 --output-sync=target $(SETUP)
setup-test:
	@$(MAKE) --no-print-directory -j3 --output-sync=target $(SETUP) chromium

book: setup-book
	$(BUILD_BOOK)

## `make test` executes each notebook once: nbval runs it (every cell, in a kernel), and conftest.py's
## --nbval-book-cache stores what it printed and drew, rebuilt as nbclient builds it, in a jupyter-cache for the
## book build, which reads it from there (execute_notebooks: cache, in a copy of _config.yml) instead of
## executing the notebook again; a notebook nbval could not hand over is executed by the book build as usual.
NB_CACHE    := $(CURDIR)/_build/.nbval-book-cache
TEST_CONFIG := _build/_config.test.yml
TEST_CONFIG_PY := import sys, yaml; c = yaml.safe_load(open("_config.yml")); \
    c["execute"].update(execute_notebooks="cache", cache=sys.argv[1]); yaml.safe_dump(c, open(sys.argv[2], "w"))
XDIST       := -n 2 --dist loadscope --no-loadscope-reorder   # conftest.py's SLOW_FIRST order, longest first

## Run the whole test suite, in two stages (issue 19: the two cores stay busy; nothing is dropped):
##   set-up (venv, vendored assets, chromium) -> ruff ->
##   1. every chapter and lab under nbval, on two pytest-xdist workers (a notebook's cells stay on one worker:
##      --dist loadscope); what each printed and drew is stored for the book build (--nbval-book-cache);
##   2. at once: the unit + property tests on two workers, and (scripts/site_stage.sh, its output shown when both
##      are done) the book build (`make book`'s, with -W, reading stage 1's outputs) followed by the browser tests
##      of _build/html (tests/test_site*.py). `make test` fails if either side fails.
NBVAL := --nbval-lax --nbval-current-env --nbval-cell-timeout=300
SITE_LOG := _build/site-stage.log
test: setup-test
	$(PY) -m ruff check .
	$(PYTEST) $(XDIST) chapters labs $(NBVAL) --nbval-book-cache=$(NB_CACHE)
	$(PY) -c '$(TEST_CONFIG_PY)' $(NB_CACHE) $(TEST_CONFIG)
	@echo "stage 2: unit tests here; the book build and the browser tests in the background (log: $(SITE_LOG))"
	@bash scripts/site_stage.sh "$(BUILD_BOOK) --config $(TEST_CONFIG)" "$(PYTEST) -n 1 tests/test_site*.py" \
	    > $(SITE_LOG) 2>&1 & site=$$!; \
	$(PYTEST) $(XDIST) tests --ignore-glob='tests/test_site*.py'; unit=$$?; \
	wait $$site; site=$$?; echo "--- book build and browser tests ($(SITE_LOG)) ---"; cat $(SITE_LOG); \
	echo "stage 2: unit tests exit $$unit, book build + browser tests exit $$site"; [ $$unit -eq 0 ] && [ $$site -eq 0 ]

## The inner loop: ruff, then the unit tests that import a module changed since BASE (default HEAD: the uncommitted
## changes; e.g. `make check BASE=HEAD~3`), chosen by scripts/changed_tests.py, the seeded fuzz tests among them on a
## 5 s budget each (`make test`: 6 s and 10 s). `make test` runs everything.
BASE ?= HEAD
check: $(STAMP)
	$(PY) -m ruff check .
	@tests=$$($(PY) scripts/changed_tests.py $(BASE)) || exit 1; \
	if [ -z "$$tests" ]; then echo "check: no test imports a module changed since $(BASE)"; \
	else echo "check: $$(echo $$tests | wc -w) test files:" $$tests; \
	ASCEND_LAB_FUZZ_SECONDS=$${ASCEND_LAB_FUZZ_SECONDS:-5} $(PYTEST) $(XDIST) -q $$tests; fi

## Only the browser test, against the _build/html already there (after `make book`).
test-site: $(STAMP) chromium
	$(PYTEST) tests/test_site*.py

lint: $(STAMP)
	$(PY) -m ruff check .

## Speed and memory benchmarks (ratios against numpy in the same process, interleaved with the simulator runs).
bench: $(STAMP)
	$(PY) -m benchmarks

## Open the chapters and labs live in JupyterLab; jupytext makes MyST .md files open as notebooks (double-click).
$(LAB_STAMP): $(STAMP) scripts/jupyterlab-overrides.json
	$(PY) -m pip install -q -c requirements.lock -e ".[dev,lab]"
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp scripts/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(LAB_STAMP)

lab: $(LAB_STAMP)
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) .

## The live path as a reader meets it (issue 26 item 10): the JupyterLab `make lab` installs, headless on a free
## loopback port with a token, driven in Chromium -- a chapter's explorer run and moved, a lab's exercise edited and
## checked (tests/browser_jupyterlab.py, on a copy of chapters/ and labs/). CI runs it after `make test`.
test-lab: $(LAB_STAMP) chromium
	$(PYTEST) tests/browser_jupyterlab.py

clean:
	rm -rf _build .pytest_cache

## Longer seeded fuzz runs, each in a subprocess: the C-named API (acl.* and aclnn.*; `make test` runs ~9 s of it)
## and the front doors (convenience layer, tiling, CLI; `make test` runs ~16 s). ASCEND_LAB_FUZZ_SECONDS (default
## 600, per file) and ASCEND_LAB_FUZZ_SEED (default 14) change the run.
.PHONY: fuzz
fuzz: $(STAMP)
	ASCEND_LAB_FUZZ_SECONDS=$${ASCEND_LAB_FUZZ_SECONDS:-600} $(PYTEST) tests/test_fuzz_capi.py tests/test_fuzz_front.py -s -q
