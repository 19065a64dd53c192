# Two entry points (see README): `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/erahbo: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev,ray,optuna,tune,hydra]"
	touch $(BIN)/erahbo

.PHONY: setup demo test test-slow lint bench api
setup: $(BIN)/erahbo

demo: setup
	$(BIN)/erahbo demo --out results/demo

# `make test`: every test but the long ones (marked slow; each behaviour they check is also
# checked by a fast test); `make test-slow`: the long ones alone.
test: setup
	$(BIN)/ruff check src tests benchmarks
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m "not slow"

test-slow: setup
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m slow

bench: setup
	$(BIN)/python benchmarks/bench_iteration.py

api: setup
	$(BIN)/python scripts/apidoc.py
