# ascend_lab — the two commands a fresh machine needs:  make book  and  make test
# Both create (or refresh) the local virtual environment .venv from pyproject.toml + requirements.lock
# (requirements.lock = `pip freeze` of a fresh venv with `-e ".[dev,lab]"`, minus pip/setuptools/wheel).
PYTHON ?= python3
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

.PHONY: venv vendor chromium book test test-site lint bench lab clean live-tiling

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -c requirements.lock -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

## MathJax, the widget manager and the timeline viewer (npm + PyPI) into _vendor/ (git-ignored; skipped when up to date).
$(VENDOR): scripts/vendor.sh ascend_lab/ascendc/timeline.py
	bash scripts/vendor.sh _vendor

$(PYODIDE): scripts/vendor_pyodide.sh
	bash scripts/vendor_pyodide.sh _vendor_pyodide

live-tiling: $(STAMP) $(PYODIDE)
	$(PY) scripts/live_tiling_bundle.py _vendor_pyodide/live-tiling

vendor: $(VENDOR) $(PYODIDE)

## Debian's Chromium at /usr/bin/chromium for the browser test (apt-get as root; never `playwright install`).
chromium:
	bash scripts/ensure_chromium.sh

## Build the static site into _build/html: every chapter executed, warnings are errors, offline-clean.
book: $(STAMP) $(VENDOR) live-tiling
	rm -rf _build/html _build/jupyter_execute _build/.doctrees
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

## Run the whole test suite, in this order:
##   set-up (venv, vendored assets, chromium) -> ruff -> unit + property tests and every chapter and lab under nbval
##   -> the book build (same as `make book`) -> the browser tests of _build/html (tests/test_site*.py).
test: $(STAMP) $(VENDOR) live-tiling chromium
	$(PY) -m ruff check .
	$(PYTEST) tests chapters labs --ignore-glob='tests/test_site*.py' --nbval-lax --nbval-current-env --nbval-cell-timeout=300
	$(MAKE) --no-print-directory book
	$(PYTEST) tests/test_site*.py

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

clean:
	rm -rf _build .pytest_cache

## Longer seeded fuzz runs, each in a subprocess: the C-named API (acl.* and aclnn.*; `make test` runs ~15 s of it)
## and the front doors (convenience layer, tiling, CLI; `make test` runs ~30 s). ASCEND_LAB_FUZZ_SECONDS (default
## 600, per file) and ASCEND_LAB_FUZZ_SEED (default 14) change the run.
.PHONY: fuzz
fuzz: $(STAMP)
	ASCEND_LAB_FUZZ_SECONDS=$${ASCEND_LAB_FUZZ_SECONDS:-600} $(PYTEST) tests/test_fuzz_capi.py tests/test_fuzz_front.py -s -q
