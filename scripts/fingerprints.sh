#!/bin/sh
# The result fingerprint of every scenario shipped with the reproductions and of the
# benchmark suite (docs/performance.md): an optimization of the engine must leave each one
# the same, bit for bit.
#
#   sh scripts/fingerprints.sh [BENCH_DIR]  > before.txt
#   ... change the engine ...
#   sh scripts/fingerprints.sh [BENCH_DIR]  > after.txt && diff before.txt after.txt
#
# BENCH_DIR holds the benchmark scenario files (`dsim bench --save BENCH_DIR`); without it
# only the shipped scenarios are printed. Each line: scenario, events, fingerprint (the
# `run_scenario` example: replication 0 of seed 1, the `[sweep]` table ignored).
set -eu
cd "$(dirname "$0")/.."
cargo build --quiet --release -p dsim-core --example run_scenario
runner=${CARGO_TARGET_DIR:-target}/release/examples/run_scenario
files=$(ls python/dsim/scenarios/*/*.toml)
if [ $# -ge 1 ]; then
    files="$files $(ls "$1"/*.toml)"
fi
for f in $files; do
    # "N events in T s: R M events/s; results H" -> "file N H" (the time varies).
    "$runner" "$f" | awk -v f="$f" '/results/ {print f, $1, $NF}'
done
