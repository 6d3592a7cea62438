# The two commands of the README: `make run` and `make test`. Each creates the
# virtual environment and installs the project into it when needed, with the versions of
# constraints.txt. `make test-latest` runs the tests against the newest release of every
# dependency instead, in its own environment (.venv-latest); CI runs both.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
LATEST := .venv-latest
EXAMPLE := resources/examples/example.onnx

.PHONY: run test test-latest lint bench examples system-deps install-desktop check-install clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]" -c constraints.txt
	@touch $(STAMP)

system-deps:
	@sh scripts/ensure-system-deps.sh

run: $(STAMP) system-deps
	$(PY) -m onnxviz $(EXAMPLE)

test: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/ruff check onnxviz tests bench resources scripts
	$(VENV)/bin/mypy
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(PYTEST_ARGS)

# pytest only: the linters and the type check belong to the pinned run (the newest numpy's type
# stubs, or a new ruff rule, would fail the code without a bug a user meets).
test-latest:
	@test -x $(LATEST)/bin/python || $(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[test]"
	@$(LATEST)/bin/python -m pip list 2>/dev/null | grep -iE '^(pyside6|shiboken6|numpy|onnx|onnxruntime|protobuf|ml.dtypes|pyqtgraph|pytest)[-_a-z]* ' || true
	QT_QPA_PLATFORM=offscreen $(LATEST)/bin/python -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check onnxviz tests bench resources

bench: $(STAMP)
	$(PY) bench/bench_open.py

examples: $(STAMP)
	$(PY) resources/make_examples.py

install-desktop:
	sh scripts/install-desktop.sh

# `pip install .` into a fresh venv (dependencies from PyPI) and use the installed command
check-install:
	sh scripts/check-install.sh

clean:
	rm -rf $(VENV) $(LATEST) .pytest_cache .cache
