"""`dsim bench`: the benchmark scenarios, the measured child runs, the JSON report and the
parallel replications (short runs only: no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dsim
from dsim import bench


def test_dumbbell_plan_spreads_rtt_and_starts() -> None:
    # By hand, 50 connections: RTT_i = 50 ms + 100 ms * i / 49 (integer microseconds);
    # the source access delay is RTT_i / 2 - (5 ms bottleneck + 2 ms destination access).
    # i = 0: 25 000 - 7 000 = 18 000 us; i = 49: 75 000 - 7 000 = 68 000 us;
    # i = 1: RTT 50 000 + 2 040 = 52 040 us -> 26 020 - 7 000 = 19 020 us.
    # Starts 1 s * i / 50: i = 1 at 20 000 us, i = 49 at 980 000 us.
    plan = bench.dumbbell_plan(50)
    assert len(plan) == 50
    assert (plan[0].src_delay_us, plan[1].src_delay_us, plan[49].src_delay_us) == (18_000, 19_020, 68_000)
    assert (plan[0].rtt_us, plan[49].rtt_us) == (50_000, 150_000)
    assert (plan[1].start_us, plan[49].start_us) == (20_000, 980_000)
    assert [f.assured for f in plan[:4]] == [True, False, True, False]


@pytest.mark.parametrize("b", [*bench.suite(duration_s=1.5), bench.dumbbell(50, 1.5, aqm="red")], ids=lambda b: b.name)
def test_benchmark_scenarios_are_valid(b: bench.Benchmark) -> None:
    q = dsim.run(b.toml).queues
    port = q[q["port"] == b.bottleneck]
    assert len(port) > 0 and port["departures_pkts"].sum() > 0, f"{b.bottleneck}: no departures"


def test_cubic_dumbbell_runs_cubic_senders_through_droptail() -> None:
    b = bench.dumbbell(4, 1.5, aqm="cubic")
    assert b.name == "dumbbell-4-cubic"
    # Recorded, the senders show CUBIC's state (the columns appear only when a flow runs it).
    toml = b.toml.replace('min_rto = "200ms" }', 'min_rto = "200ms", series = "100ms" }')
    res = dsim.run(toml)
    assert "cubic_wmax_bytes" in res.series.columns and set(res.series["flow"]) == {"f0", "f1", "f2", "f3"}
    q = res.queues[res.queues["port"] == "R0->R1"].iloc[0]
    assert q["drop_early_pkts"] == 0 and q["dropped_pkts"] == q["drop_overflow_pkts"]
    with pytest.raises(ValueError, match="one of rio, red, fq_codel, cubic"):
        bench.dumbbell(4, 1.5, aqm="codel")


def test_child_run_counts_and_is_deterministic() -> None:
    b = bench.dumbbell(50, 1.0)
    r1, r2 = bench.run_benchmark(b), bench.run_benchmark(b)
    assert r1.events > 0 and r1.bottleneck_pkts > 0
    assert (r1.events, r1.bottleneck_pkts, r1.bottleneck_drops) == (r2.events, r2.bottleneck_pkts, r2.bottleneck_drops)
    assert r1.maxrss_mb > 0 and r1.cpu_s > 0


def test_parallel_replications_match_sequential() -> None:
    reps = bench.replications_speedup(bench.dumbbell(50, 1.5), replications=2, jobs=2)
    assert reps.identical


def test_cli_bench_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    p = subprocess.run(
        [sys.executable, "-m", "dsim.cli", "bench", "--duration", "1500ms", "--only", "cbr-chain", "dumbbell-50",
         "--replications", "0", "--json", str(out)],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "dsim bench" in p.stdout and "cbr-chain" in p.stdout
    data = json.loads(out.read_text())
    names = [b["name"] for b in data["benchmarks"]]
    assert names == ["dumbbell-50", "cbr-chain"]
    for b in data["benchmarks"]:
        assert b["events"] > 0 and b["bottleneck_pkts"] > 0 and b["peak_rss_mb_median"] > 0
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "bench", "--only", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "no such benchmark" in p.stderr


def test_cli_bench_rejects_a_run_shorter_than_the_starts() -> None:
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "bench", "--duration", "500ms"], capture_output=True, text=True)
    assert p.returncode == 2 and "must be longer than 1s" in p.stderr and "Traceback" not in p.stderr
