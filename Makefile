# Two entry points (see README): `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/erahbo: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev,ray,optuna,tune,hydra,smac]"
	touch $(BIN)/erahbo

.PHONY: setup demo test test-slow lint bench api hypersweeper-env
setup: $(BIN)/erahbo

demo: setup
	$(BIN)/erahbo demo --out results/demo

# `make test`: every test but the long ones (marked slow; each behaviour they check is also
# checked by a fast test); `make test-slow`: the long ones alone.
test: setup hypersweeper-env
	$(BIN)/ruff check src tests benchmarks
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m "not slow" -n 2

test-slow: setup
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m slow

bench: setup
	$(BIN)/python benchmarks/bench_iteration.py

api: setup
	$(BIN)/python scripts/apidoc.py

# The real hypersweeper 0.2.3 in a venv of its own (it pins numpy~=1.24, pandas~=2.1, wandb:
# it cannot share erahbo's; Python 3.10 or 3.11; about 2 min): tests/test_hypersweeper_compat.py
# runs it when it exists; `make test` builds it, so CI tests against the real package.
hypersweeper-env: .venv-hypersweeper/bin/python
.venv-hypersweeper/bin/python:
	$(PY) -m venv .venv-hypersweeper
	.venv-hypersweeper/bin/pip install -q hypersweeper==0.2.3
