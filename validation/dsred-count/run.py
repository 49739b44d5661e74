"""ns-2's dsRED against dsim's RIO on the 50-flow seed 002 dumbbell of `make bench-peers`:
the count rule that makes their drops differ (issue 20; docs/af.md, "Against ns-2's
dsRED"; docs/tcp.md, "Validation against ns-2").

    .venv/bin/python validation/dsred-count/run.py [--seeds 3] [--duration 100]
        [--figure docs/figures/dsred-count.png]

dsRED computes RED's pa = pb / (1 - count pb) with no bound: once a rising average makes
count pb jump past 1, pa is negative and the precedence is not dropped early again until
its average passes max_th, where every packet is a forced drop. This runs, on the same
network (benchmarks/peers/dumbbell.tcl, dsim.bench.dumbbell):
  ns-2     dsRED RIO-C (ns-2's RNG seeds 1..K), its virtual queues sampled every 10 ms;
  dsim     RIO with RED's rule (`count_overflow = "drop"`, the default), K replications;
  dsim     RIO with dsRED's rule (`count_overflow = "pass"`).
It prints each run's drops at the bottleneck and how many were forced (the average at or
above max_th; ns-2's "ldrops": its buffer never fills here), and draws the average of all
packets (RIO's OUT average) of the first run of each, with OUT's thresholds.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

import dsim
from dsim import bench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))
import compare  # noqa: E402  (the peers' dumbbell, with its variants)

TCL = ROOT / "benchmarks" / "peers" / "dumbbell.tcl"
FLOWS = 50
SAMPLE_MS = 10


def ns2_run(ns: str, plan: Path, duration_s: float, seed: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """One ns-2 run: its samples (time_s, in_pkts, all_pkts, in_avg, all_avg) and its drops."""
    argv = [ns, str(TCL), str(plan), f"{duration_s:g}", "rio", str(seed), f"sample_ms={SAMPLE_MS}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rows, counts = [], {}
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["sample"]:
            rows.append([float(x) for x in parts[1:6]])
        elif parts[:1] == ["All"]:  # TOTAL TX LDROPS EDROPS
            forced, early = int(parts[3]), int(parts[4])
            counts = {"drops": forced + early, "forced": forced}
    samples = pd.DataFrame(rows, columns=["time_s", "in_pkts", "all_pkts", "in_avg", "all_avg"])
    return samples, counts


def dsim_runs(duration_s: float, seeds: int, overflow: str) -> tuple[pd.DataFrame, list[dict[str, int]]]:
    """dsim's RIO with `count_overflow = overflow`: the first replication's samples of the
    average of all packets, and every replication's drops at the bottleneck."""
    sc = compare.tcp_dumbbell(FLOWS, duration_s, {"drop": "rio", "pass": "rio-dsred"}[overflow], "on_retransmit")
    sc.set(f"link[{compare.bottleneck_index(sc)}].queue.series", f"{SAMPLE_MS}ms")
    res = dsim.run(sc, replications=seeds)
    s = res.queue_series
    s = s[(s["replication"] == 0) & (s["port"] == "R0->R1") & (s["precedence"] == 1)]
    samples = pd.DataFrame({"time_s": s["time_s"], "all_pkts": s["len"], "all_avg": s["avg"]})
    d = res.drops[res.drops["site"] == "R0->R1"]
    counts = []
    for r in range(seeds):
        mine = d[d["replication"] == r]
        counts.append({"drops": int(mine["pkts"].sum()), "forced": int(mine.loc[mine["cause"] == "forced", "pkts"].sum())})
    return samples, counts


def draw(panels: list[tuple[str, pd.DataFrame, dict[str, int]]], path: Path) -> None:
    from matplotlib.figure import Figure

    out_min, out_max, _ = bench.DUMBBELL["rio_out"]
    fig = Figure(figsize=(9, 1.2 + 2.2 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    for ax, (title, s, c) in zip(axes, panels, strict=True):
        ax.plot(s["time_s"], s["all_pkts"], color="0.75", linewidth=0.4, label="queue (all packets)")
        ax.plot(s["time_s"], s["all_avg"], color="C0", linewidth=1.2, label="average (all packets: OUT's)")
        for y, name in ((out_min, "OUT min_th"), (out_max, "max_th")):
            ax.axhline(y, color="C3", linestyle="--", linewidth=0.8)
            ax.text(0.005, y, f"{name} {y}", transform=ax.get_yaxis_transform(), ha="left", va="bottom", fontsize="x-small", color="C3")
        ax.set_title(f"{title}: {c['drops']:,} drops, {c['forced']:,} forced", loc="left", fontsize="small")
        ax.set_ylabel("packets")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize="x-small", framealpha=0.9)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"RIO at the bottleneck of the {FLOWS}-flow seed 002 dumbbell, first run of each", x=0.01, ha="left", fontsize="medium")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=3, help="ns-2 seeds 1..K and dsim replications (default 3)")
    p.add_argument("--duration", type=float, default=100.0, help="simulated seconds (default 100)")
    p.add_argument("--figure", type=Path, help="draw the first run of each into this PNG")
    args = p.parse_args(argv)
    runs: dict[str, tuple[pd.DataFrame, list[dict[str, int]]]] = {}
    ns = shutil.which("ns")
    if ns is None:
        print("ns-2 not found (`make bench-peers` installs the Debian package ns2): dsim only", file=sys.stderr)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            plan = Path(tmp) / "plan.txt"
            bench.write_plan(bench.dumbbell_plan(FLOWS), plan)
            ns2 = [ns2_run(ns, plan, args.duration, seed) for seed in range(1, args.seeds + 1)]
        runs["ns-2 2.35 dsRED RIO-C"] = (ns2[0][0], [c for _, c in ns2])
    runs['dsim RIO, count_overflow = "drop" (default)'] = dsim_runs(args.duration, args.seeds, "drop")
    runs['dsim RIO, count_overflow = "pass" (dsRED\'s rule)'] = dsim_runs(args.duration, args.seeds, "pass")
    print(f"{FLOWS} flows, {args.duration:g} s: drops at the bottleneck (forced) per seed / replication")
    for name, (samples, counts) in runs.items():
        cells = ", ".join(f"{c['drops']:,} ({c['forced']:,})" for c in counts)
        print(f"  {name:48s} {cells}; average of all packets: mean {samples['all_avg'].mean():.0f}, max {samples['all_avg'].max():.0f}")
    if args.figure:
        draw([(name, samples, counts[0]) for name, (samples, counts) in runs.items()], args.figure)
        print(f"figure: {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
