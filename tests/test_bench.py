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
    both = dsim.run(bench.dumbbell(4, 1.5, aqm="cubic_fq_codel").toml)
    assert both.aqm["aqm"].tolist() == ["fq_codel"] and "cubic" in bench.dumbbell(4, 1.5, aqm="cubic_fq_codel").toml
    with pytest.raises(ValueError, match="one of rio, red, fq_codel, cubic, cubic_fq_codel"):
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


def test_scaled_dumbbell_grows_the_bottleneck_and_its_buffers_with_the_flows() -> None:
    # 2,000 flows: 40 times the 50-flow dumbbell's load, so 2,000 Mbit/s, 40 x 1050 packets
    # and RIO's thresholds 40 times IN 500/840 and OUT 420/840; the drop probabilities stay.
    assert bench.scaled_bottleneck(2_000) == {
        "bottleneck_rate_bps": 2_000_000_000,
        "bottleneck_limit_pkts": 42_000,
        "rio_in": (20_000, 33_600, 0.02),
        "rio_out": (16_800, 33_600, 0.05),
    }
    b = bench.dumbbell(2_000, 3.0, scaled=True)
    assert b.name == "scale-2000" and b.flows == 2_000
    assert 'rate = "2000000000bps"' in b.toml and 'limit = "42000p"' in b.toml and 'min_th = "20000p"' in b.toml
    # At 50 flows the scaled dumbbell is the plain one.
    assert bench.dumbbell(50, 3.0, scaled=True).toml == bench.dumbbell(50, 3.0).toml.replace("dumbbell-50", "scale-50")


def test_cli_bench_scale_times_the_child_and_dsim_run(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    p = subprocess.run(
        [sys.executable, "-m", "dsim.cli", "bench", "--scale", "--flows", "20", "40", "--duration", "1500ms", "--json", str(out)],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stderr
    rows = json.loads(out.read_text())["scale"]
    assert [r["flows"] for r in rows] == [20, 40]
    for r in rows:
        assert r["events"] > 0 and r["bottleneck_pkts"] > 0 and r["ns_per_event"] > 0 and r["run_cpu_s"] > 0
    assert rows[1]["rss_kb_per_flow"] == pytest.approx(1024 * (rows[1]["peak_rss_mb"] - rows[0]["peak_rss_mb"]) / 20)
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "bench", "--flows", "20"], capture_output=True, text=True)
    assert p.returncode == 2 and "only with --scale" in p.stderr
