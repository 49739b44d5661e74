# The two commands: `make run` and `make test`. Both set everything up on a fresh machine:
# a virtual environment in .venv, maturin and the Python dependencies, and the Rust
# extension built in release mode.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test build test-rust test-python bench bench-peers clean

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

# dsim, ns-2 (dsRED) and ns-3 (RED) side by side on the seed 002 dumbbell (docs/performance.md).
# Installs the Debian packages ns2, ns3 and libns3-dev if they are missing (apt-get, as root
# or through sudo). ns-3 needs minutes per point: PEERS_FLOWS="50" for the acceptance point alone.
PEERS_FLOWS ?= 50 100 200
PEERS_ARGS  ?=
bench-peers: build
	sh benchmarks/peers/install.sh
	$(BIN)/python benchmarks/peers/compare.py --flows $(PEERS_FLOWS) --json results/bench-peers.json --markdown results/bench-peers.md $(PEERS_ARGS)

clean:
	rm -rf $(VENV) target results
