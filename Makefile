# The two commands: `make run` and `make test`. Both set everything up on a fresh machine:
# a virtual environment in .venv, maturin and the Python dependencies, and the Rust
# extension built in release mode.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test build lint lint-rust lint-python test-rust test-python bench bench-peers bench-peers-scale bench-cc dist guide fuzz clean

run: build
	$(BIN)/dsim reproduce --out results

test: lint test-rust test-python

# Lints and types, before any test: rustfmt and clippy first (they need neither the virtual
# environment nor the extension, so a slip fails before the build), then, once the build has
# installed the `lint` extra, ruff and mypy --strict (both configured in pyproject.toml).
# tests/test_stub.py checks the stubs of the compiled module against it.
lint: lint-rust lint-python

# clippy builds dsim-py, whose pyo3 build script needs the interpreter of the virtual
# environment: a fresh clone's `make test` creates it first.
lint-rust: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --release -- -D warnings

lint-python: build
	$(BIN)/ruff check
	$(BIN)/mypy

# Optimized, but with debug assertions and overflow checks on (in a target directory of
# their own): a time that runs backwards or an integer that wraps fails the test that
# causes it instead of passing silently.
test-rust:
	CARGO_TARGET_DIR=target/checked CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
	CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true cargo test --workspace --exclude dsim-py --release

test-python: build
	$(BIN)/pytest -q

# The extension is compiled with profile-guided optimization (docs/performance.md, "Build"):
# scripts/pgo-profile.sh first runs an instrumented extension on the shipped scenarios, then
# the extension is compiled with what it learned (in target/pgo-use, apart from the plain
# build of `cargo test`). The profile is redone when a Rust source changes. `make PGO=0 ...`
# builds without it: quicker to compile, 15-18 % slower to run.
PGO ?= 1
DEVELOP      := $(BIN)/maturin develop --release --extras test,dask,lint --quiet
PGO_PROFILE  := target/pgo/dsim.profdata
RUST_SOURCES := Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml) $(wildcard python/dsim/scenarios/*/*.toml)

ifeq ($(PGO),1)
build: $(STAMP) $(PGO_PROFILE)
	@if [ -s $(PGO_PROFILE) ]; then \
	    echo "building the extension with PGO"; \
	    DSIM_PGO=1 RUSTFLAGS="-Cprofile-use=$(abspath $(PGO_PROFILE))" CARGO_TARGET_DIR=target/pgo-use $(DEVELOP); \
	else \
	    $(DEVELOP); \
	fi

$(PGO_PROFILE): $(STAMP) $(RUST_SOURCES) scripts/pgo-profile.sh
	sh scripts/pgo-profile.sh $(BIN) target/pgo
else
build: $(STAMP)
	$(DEVELOP)
endif

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "maturin>=1.7,<2"
	touch $(STAMP)

# The longer fuzz campaign (docs/limits.md): the Rust target for the TOML-to-simulation path
# (crates/dsim-core/tests/hostile.rs) with FUZZ_RUST_CASES mutated scenarios, then the Python
# strategies (tests/fuzz_campaign.py) with FUZZ_CASES cases each, every case in a child
# process under limits; prints the counts per category and outcome. `make test` runs a few
# hundred of each.
FUZZ_RUST_CASES ?= 50000
FUZZ_CASES      ?= 2000
fuzz: build
	PROPTEST_CASES=$(FUZZ_RUST_CASES) cargo test --release -p dsim-core --test hostile mutated
	$(BIN)/python tests/fuzz_campaign.py --cases $(FUZZ_CASES)

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
	$(MAKE) bench-peers-scale

# The dumbbell grown with its load (issue 24; `dsim bench --scale`): dsim and ns-2 at 50,
# 200, 1,000 and 2,000 connections, ns-3 up to 200 (it needs minutes there), 10 s
# simulated, bottleneck N Mbit/s.
PEERS_SCALE_FLOWS ?= 50 200 1000 2000
bench-peers-scale: build
	sh benchmarks/peers/install.sh
	$(BIN)/python benchmarks/peers/compare.py --scale --ns3-max-flows 200 --flows $(PEERS_SCALE_FLOWS) --duration 10 --json results/bench-peers-scale.json --markdown results/bench-peers-scale.md

# dsim and ns-3 side by side with CUBIC and DCTCP (docs/tcp.md, "Validation against ns-3"):
# six dumbbells, 3 seeds of 80 s each, about 20 minutes. CC_ARGS="--only dctcp-step-10 --seeds 2"
# for less.
CC_ARGS ?=
bench-cc: build
	sh benchmarks/peers/install.sh
	$(BIN)/python benchmarks/peers/cc_compare.py --json results/bench-cc.json --markdown results/bench-cc.md $(CC_ARGS)

# A wheel for this machine and the source distribution, into dist/ (what `pip install`
# takes; a fresh environment needs no make: `pip install .` or `pip install dist/dsim-*.tar.gz`
# builds the extension with maturin, given a Rust toolchain).
dist: $(STAMP)
	$(BIN)/maturin build --release --out dist
	$(BIN)/maturin sdist --out dist

# The user guide (docs/guide.md): the outputs it shows rewritten where dsim prints
# something else now (tests/guide_blocks.py; tests/test_guide.py checks them), and its
# figures redrawn from the examples at the guide's settings into docs/figures/.
GUIDE_FIGURES := ef-voice:delay police-trtcm:colors police-trtcm:aqm af-tcp-udp:throughput abe-game:delay
guide: build
	$(BIN)/python tests/guide_blocks.py --update
	rm -rf results/guide
	for f in $(GUIDE_FIGURES); do ex=$${f%%:*}; kind=$${f##*:}; \
	    [ -d results/guide/$$ex ] || $(BIN)/dsim run docs/examples/$$ex.toml --out results/guide/$$ex > /dev/null || exit 1; \
	    $(BIN)/dsim plot results/guide/$$ex $$kind > /dev/null || exit 1; \
	    cp results/guide/$$ex/figures/$$kind.png docs/figures/$$ex-$$kind.png; \
	done
	$(BIN)/dsim sweep docs/examples/sweep-buffer.toml --out results/guide/sweep-buffer > /dev/null
	$(BIN)/dsim plot results/guide/sweep-buffer > /dev/null
	cp results/guide/sweep-buffer/figures/sweep.png docs/figures/sweep-buffer-sweep.png

clean:
	rm -rf $(VENV) target results dist
