# The two commands: `make run` and `make test`. Both set everything up on a fresh machine:
# a virtual environment in .venv, maturin and the Python dependencies, and the Rust
# extension built in release mode.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test build test-rust test-python bench clean

run: build
	$(BIN)/dsim reproduce --out results

test: build test-rust test-python

test-rust:
	cargo test --workspace --exclude dsim-py --release

test-python: build
	$(BIN)/pytest -q

build: $(STAMP)
	$(BIN)/maturin develop --release --extras test,dask --quiet

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "maturin>=1.7,<2"
	touch $(STAMP)

bench: build
	cargo bench -p dsim-core --bench event_loop

clean:
	rm -rf $(VENV) target results
