# Two entry points on a fresh machine: `make demo` (the main job) and `make test` (the suite).
# Both create a local virtual environment in .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean default-model

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	# compile every numba kernel now (into the package's __pycache__, or NUMBA_CACHE_DIR), so
	# that no daemon start, demo or test pays for a cold cache
	$(BIN)/distractd run --check --quiet
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/distractd demo

test: $(STAMP)
	$(BIN)/python -m pytest -q distractd tests

# The shipped model, rebuilt by the public commands: a cohort SS-ELM over 8 simulated drivers
# (cohort seed 2026), each driving the cognitive, the visual-manual and a no-task protocol once.
# The demo replays a driver of another cohort, one the model never saw.
MODEL_DATA := build/default-model
default-model: $(STAMP)
	rm -rf $(MODEL_DATA) && mkdir -p $(MODEL_DATA)
	for protocol in cognitive visual-manual none; do \
	  $(BIN)/distractd simulate --cohort 8 --seed 2026 --protocol $$protocol \
	    --out $(MODEL_DATA)/$$protocol.npz || exit 1; \
	done
	$(BIN)/distractd train --cohort $(MODEL_DATA) --model sselm --drive-side right --seed 0 \
	  --out distractd/data/default_model.npz

clean:
	rm -rf $(VENV)
