"""The longer fuzz campaign of `make fuzz` (issue 27): the strategies of tests/test_fuzz.py
with many more cases, each strategy run in a child process under an address-space limit,
with a bound on each case's time. A case that kills its child (a signal, a Rust abort, the
memory limit) or outlives the bound is counted as a crash or a hang and the child is
restarted; the campaign prints the counts per category and outcome, and the cases that
did not end well.

    python tests/fuzz_campaign.py [--cases N] [--seconds S] [--memory-mb M] [--only scenario|trace|api]
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
STRATEGIES = ("scenario", "trace", "api")


def worker(strategy: str, seed: int, cases: int) -> None:
    """Runs `cases` cases of `strategy`, saying on stdout when each starts and how it ended."""
    sys.path.insert(0, str(HERE))
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    import fuzz_strategies as fs

    strategy_of = {"scenario": fs.scenario_case, "trace": fs.trace_case, "api": fs.api_case}

    def say(*words: str) -> None:
        print(" ".join(w.replace("\n", " ")[:300] for w in words), flush=True)

    @hseed(seed)
    @settings(max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy_of[strategy]())
    def run(case) -> None:
        say("start", case.category, case.what or "-")
        with tempfile.TemporaryDirectory() as tmp:
            try:
                say("done", case.category, fs.outcome(case, Path(tmp)))
            except BaseException as e:  # noqa: BLE001 - every other ending is what the campaign counts
                where = traceback.extract_tb(e.__traceback__)[-1]
                say("fail", case.category, f"{type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})")

    run()


def campaign(strategy: str, cases: int, seconds: float, memory_mb: int, counts: Counter, bad: list[str]) -> None:
    seen, seed = 0, 0
    while seen < cases:
        cap = memory_mb * 2**20

        def limit(cap: int = cap) -> None:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

        # preexec_fn: the memory cap must hold before the worker allocates; no thread runs here.
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", strategy, "--seed", str(seed), "--cases", str(cases - seen)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=limit,  # noqa: PLW1509
        )
        assert proc.stdout is not None
        current: str | None = None
        last = time.monotonic()
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if not ready:
                if current is not None and time.monotonic() - last > seconds:
                    proc.kill()
                    counts[(current.split()[0], "hang")] += 1
                    bad.append(f"hang: {current}")
                    seen += 1
                    current = None
                    break
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            if not line:
                break
            words = line.rstrip("\n").split(" ", 2)
            last = time.monotonic()
            if words[0] == "start":
                current = " ".join(words[1:])
            elif words[0] == "done":
                counts[(words[1], words[2])] += 1
                seen += 1
                current = None
            elif words[0] == "fail":
                counts[(words[1], "not one dsim line")] += 1
                bad.append(f"{words[1]}: {words[2] if len(words) > 2 else ''}")
                seen += 1
                current = None
        proc.wait()
        if current is not None:  # the child died inside a case
            how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
            counts[(current.split()[0], f"crash ({how})")] += 1
            bad.append(f"crash ({how}): {current}")
            seen += 1
        elif proc.returncode != 0 and seen < cases:
            counts[(strategy, f"worker ended ({proc.returncode})")] += 1
            seen += 1
        seed += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=2000, help="cases per strategy (default 2000)")
    p.add_argument("--seconds", type=float, default=20.0, help="bound on one case's wall time (default 20)")
    p.add_argument("--memory-mb", type=int, default=3000, help="address space of a child (default 3000 MB)")
    p.add_argument("--only", choices=STRATEGIES, action="append")
    p.add_argument("--worker", choices=STRATEGIES, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.seed, args.cases)
        return 0
    counts: Counter = Counter()
    bad: list[str] = []
    t0 = time.monotonic()
    for strategy in args.only or STRATEGIES:
        campaign(strategy, args.cases, args.seconds, args.memory_mb, counts, bad)
    outcomes = sorted({o for _, o in counts})
    categories = sorted({c for c, _ in counts})
    width = max(len(c) for c in categories) if categories else 10
    print(f"{'category':{width}}  " + "  ".join(f"{o:>10}" for o in outcomes))
    for c in categories:
        print(f"{c:{width}}  " + "  ".join(f"{counts[(c, o)]:>10}" for o in outcomes))
    total = sum(counts.values())
    print(f"\n{total} cases in {time.monotonic() - t0:.0f} s; {len(bad)} did not end well")
    for b in bad[:50]:
        print(f"  {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    sys.exit(main())
