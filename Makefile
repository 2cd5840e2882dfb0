# Two entry points on a fresh machine: `make demo` (the main job) and `make test` (the suite).
# Both create a local virtual environment in .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/distractd demo

test: $(STAMP)
	$(BIN)/python -m pytest -q distractd tests

clean:
	rm -rf $(VENV)
