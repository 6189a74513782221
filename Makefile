# ascend_lab — the two commands a fresh machine needs:  make book  and  make test
# Both create (or refresh) the local virtual environment .venv from pyproject.toml + requirements.lock.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: venv book test lint bench lab clean

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -c requirements.lock -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

## Build the static site into _build/html (executes every chapter).
book: $(STAMP)
	rm -rf _build/html _build/jupyter_execute _build/.doctrees
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

## Run the whole test suite: lint, unit + property tests, every notebook under nbval.
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest tests chapters --nbval-lax --nbval-current-env --nbval-cell-timeout=300 -p no:cacheprovider

lint: $(STAMP)
	$(PY) -m ruff check .

## Speed and memory benchmarks (ratios against a numpy baseline measured in the same run).
bench: $(STAMP)
	$(PY) -m benchmarks

## Open the chapters live in JupyterLab (MyST .md files open as notebooks through jupytext).
lab: $(STAMP)
	$(PY) -m pip install -q -c requirements.lock jupyterlab
	$(VENV)/bin/jupyter lab chapters

clean:
	rm -rf _build .pytest_cache
