# The two commands of the README: `make run` and `make test`. Each creates the
# virtual environment and installs the project into it when needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
EXAMPLE := resources/examples/example.onnx

.PHONY: run test lint bench examples system-deps install-desktop check-install clean

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
	rm -rf $(VENV) .pytest_cache
