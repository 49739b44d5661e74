#!/bin/sh
# The result fingerprint of every scenario shipped with the reproductions and of the
# benchmark suite (docs/performance.md): an optimization of the engine must leave each one
# the same, bit for bit.
#
#   sh scripts/fingerprints.sh [BENCH_DIR]  > before.txt
#   ... change the engine ...
#   sh scripts/fingerprints.sh [BENCH_DIR]  > after.txt && diff before.txt after.txt
#
# Beside the shipped scenarios, scripts/fingerprints/ holds short networks for what those
# leave out (plain RED in packets and bytes, gentle RED, ECN marking, queue series, MRED
# coupled and decoupled in bytes, srTCM, shapers, priority, WRR, DRR and CBQ with AQM
# inside; TCP Reno and NewReno, ECN, byte counting, delayed ACK, the handshake, finite
# transfers and the series, in tcp-*.toml), run at two seeds. BENCH_DIR holds the benchmark scenario files (`dsim bench
# --save BENCH_DIR`); without it they are left out. Each line: scenario, seed, events,
# fingerprint (the `run_scenario` example: replication 0 of the seed, the `[sweep]` table
# ignored).
set -eu
cd "$(dirname "$0")/.."
cargo build --quiet --release -p dsim-core --example run_scenario
runner=${CARGO_TARGET_DIR:-target}/release/examples/run_scenario
print() {
    # "N events in T s: R M events/s; results H" -> "file seed N H" (the time varies).
    "$runner" "$1" "$2" | awk -v f="$1" -v s="$2" '/results/ {print f, s, $1, $NF}'
}
for f in python/dsim/scenarios/*/*.toml; do print "$f" 1; done
for f in scripts/fingerprints/*.toml; do print "$f" 1; print "$f" 7; done
if [ $# -ge 1 ]; then
    for f in "$1"/*.toml; do print "$f" 1; done
fi
