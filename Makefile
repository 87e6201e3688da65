# pytvm: every target creates the virtual environment it needs, so each works on a fresh clone.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
LINT_PATHS := $(wildcard pytvm tests bench)

.PHONY: demo test bench lint typecheck clean distclean crt crt-test clang

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

# The C runtime is checked with both gcc and clang (and their sanitizers): install clang and its
# sanitizer runtime from Debian's packages when they are missing.
clang:
	@if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a >/dev/null 2>&1; then \
	  echo "installing clang and libclang-rt-dev from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null || \
	  { $$SUDO apt-get update >/dev/null && $$SUDO apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null; }; \
	fi

test: $(VENV)/.installed-test clang
	$(PY) -m pytest -q $(PYTEST_ARGS)

# pytvm-device (CRT + MinRPC over two file descriptors) into build/crt/.
crt:
	$(MAKE) -C pytvm/src/crt pytvm-device

# The C runtime's own unit tests, with gcc and clang, plain and under ASan/UBSan.
crt-test: clang
	$(MAKE) -C pytvm/src/crt test-all CC=gcc
	$(MAKE) -C pytvm/src/crt test-all CC=clang

bench: $(VENV)/.installed-base
	$(PY) bench/ffi.py
	$(PY) bench/rpc.py
	$(PY) bench/crt.py

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
