#!/bin/sh
# Profile-guided optimization, step 1 of 2 (docs/performance.md, "Build"): learns which
# branches and calls of the engine are hot, for `make build` to compile the extension with
# `-Cprofile-use`.
#
#   sh scripts/pgo-profile.sh VENV_BIN OUT_DIR
#
# Installs the extension instrumented (`maturin develop` in target/pgo-generate), runs every
# scenario shipped with the reproductions through it (python/dsim/scenarios: each mechanism
# family, TCP and UDP; the scenarios of `dsim bench` are not among them, so the benchmark
# measures code trained on other work), and merges the counts into OUT_DIR/dsim.profdata.
# The profile must come from the extension itself: the same engine built into another
# binary gets other symbol hashes, and LLVM would match none of its functions.
#
# Needs llvm-profdata of the same LLVM as rustc (rustup's llvm-tools component; it is
# added if rustup is there). Without it, prints why and writes no profile: `make build`
# then builds without PGO.
set -eu
bin=${1:?usage: pgo-profile.sh VENV_BIN OUT_DIR}
out=${2:?usage: pgo-profile.sh VENV_BIN OUT_DIR}

find_profdata() {
    find "$(rustc --print sysroot)/lib/rustlib" -name llvm-profdata -type f 2>/dev/null | head -n 1
}
profdata=$(find_profdata)
if [ -z "$profdata" ] && command -v rustup >/dev/null 2>&1; then
    echo "pgo: adding rustup's llvm-tools (llvm-profdata)"
    rustup component add llvm-tools >/dev/null 2>&1 || true
    profdata=$(find_profdata)
fi
if [ -z "$profdata" ]; then
    echo "pgo: no llvm-profdata for this rustc (rustup component add llvm-tools): building without PGO"
    rm -f "$out/dsim.profdata"
    exit 0
fi

mkdir -p "$out"
raw=$(cd "$out" && pwd)/raw
rm -rf "$raw"
echo "pgo: building the instrumented extension"
RUSTFLAGS="-Cprofile-generate=$raw" CARGO_TARGET_DIR=target/pgo-generate \
    "$bin/maturin" develop --release --quiet
echo "pgo: training on the shipped scenarios"
"$bin/python" - <<'PY'
from pathlib import Path
import dsim
for path in sorted(Path("python/dsim/scenarios").glob("*/*.toml")):
    sc = dsim.Scenario.from_toml(path)
    sc.data.pop("sweep", None)  # a sweep's base point: the same mechanisms
    dsim.run(sc, replications=1, jobs=1)
# One run large enough that the loop prefetches the next event's lines (the flows' state
# above a core's L2, sim.rs PREFETCH_ABOVE): none of the shipped scenarios is, and a
# profile that never saw that branch would lay it out as cold code.
from dsim.bench import dumbbell
dsim.run(dsim.Scenario.from_toml(dumbbell(600, 2.0, scaled=True).toml), replications=1, jobs=1)
PY
"$profdata" merge -o "$out/dsim.profdata" "$raw"
rm -rf "$raw"
echo "pgo: profile written to $out/dsim.profdata"
