# pytvm: every target creates the virtual environment it needs, so each works on a fresh clone.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
LINT_PATHS := $(wildcard pytvm tests bench)

.PHONY: demo test bench lint typecheck clean distclean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

$(VENV): $(PY)

# Install stamps: redone when pyproject.toml changes.
$(VENV)/.installed-base: pyproject.toml | $(PY)
	$(PY) -m pip install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[test]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[dev]'
	touch $@

demo: $(VENV)/.installed-base
	$(PY) -m pytvm.demo

test: $(VENV)/.installed-test
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: $(VENV)/.installed-base
	$(PY) bench/ffi.py
	$(PY) bench/rpc.py

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)

typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy --strict $(wildcard pytvm/ffi pytvm/runtime pytvm/rpc pytvm/tir)

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f $(VENV)/.installed-*

distclean: clean
	rm -rf $(VENV)
