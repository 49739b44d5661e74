"""dsim, ns-2 and ns-3 side by side on the seed 002 dumbbell (docs/performance.md describes the equivalence).

    python benchmarks/peers/compare.py [--flows 50 100 200] [--duration 100] [--repeat R]
                                       [--dsim-repeat R] [--json FILE] [--markdown FILE]
                                       [--no-ns2] [--no-ns3]

For each number of connections it runs, each in its own measured process (wall time, CPU
time, peak resident memory from wait4, as `dsim bench` measures):
  dsim  dumbbell-N      RIO with token-bucket profilers on half the connections
  ns-2  dumbbell.tcl    the same with dsRED (edge: token bucket per Assured host; core: RIO-C)
  dsim  dumbbell-N-red  RED with the OUT curve, no profilers
  ns-3  dumbbell-ns3    the same with RedQueueDisc
and prints one table with the packets each sent across the bottleneck (they did the same
work) and how many times longer each peer took than dsim on the same network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dsim import bench

HERE = Path(__file__).resolve().parent
NS3_SOURCE = HERE / "dumbbell-ns3.cc"
NS3_BINARY = HERE / "build" / "dumbbell-ns3"
NS3_LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


def build_ns3(con: Console) -> Path:
    """Compiles the ns-3 program against the Debian libraries (once; again when the source
    changes)."""
    if NS3_BINARY.exists() and NS3_BINARY.stat().st_mtime >= NS3_SOURCE.stat().st_mtime:
        return NS3_BINARY
    NS3_BINARY.parent.mkdir(exist_ok=True)
    cxx = os.environ.get("CXX", "g++")
    cmd = [cxx, "-O2", "-std=c++17", "-o", str(NS3_BINARY), str(NS3_SOURCE), *(f"-lns3-{lib}" for lib in NS3_LIBS)]
    con.print(f"compiling {NS3_SOURCE.name}: {' '.join(cmd)}", soft_wrap=True)
    subprocess.run(cmd, check=True)
    return NS3_BINARY


def parse_counts(stdout: str) -> dict[str, int]:
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("bottleneck_pkts", "bottleneck_drops", "events", "flows"):
            out[parts[0]] = int(float(parts[1]))
    return out


def measure_peer(argv: list[str], repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        m = bench.measure_process(argv)
        if m.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed with exit {m.returncode}: {m.stderr.strip()[-2000:]}")
        runs.append({"wall_s": m.wall_s, "cpu_s": m.cpu_s, "maxrss_mb": m.maxrss_mb, **parse_counts(m.stdout)})
    return summarize(runs)


def measure_dsim(b: bench.Benchmark, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        r = bench.run_benchmark(b)
        runs.append({"wall_s": r.wall_s, "cpu_s": r.cpu_s, "maxrss_mb": r.maxrss_mb, "bottleneck_pkts": r.bottleneck_pkts,
                     "bottleneck_drops": r.bottleneck_drops, "events": r.events})
    return summarize(runs)


def summarize(runs: list[dict]) -> dict:
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
    return {
        "repeats": len(runs),
        "wall_s": med("wall_s"),
        "wall_s_min": min(r["wall_s"] for r in runs),
        "wall_s_max": max(r["wall_s"] for r in runs),
        "cpu_s": med("cpu_s"),
        "maxrss_mb": med("maxrss_mb"),
        "bottleneck_pkts": runs[0].get("bottleneck_pkts"),
        "bottleneck_drops": runs[0].get("bottleneck_drops"),
        "events": runs[0].get("events"),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, nargs="+", default=[50, 100, 200])
    p.add_argument("--duration", type=float, default=100.0, help="simulated seconds (default 100)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each peer (default 1: ns-3 takes minutes)")
    p.add_argument("--dsim-repeat", type=int, default=3, help="runs of each dsim scenario (default 3)")
    p.add_argument("--json", type=Path, help="write all measurements to this file")
    p.add_argument("--markdown", type=Path, help="write the table as Markdown to this file")
    p.add_argument("--no-ns2", action="store_true")
    p.add_argument("--no-ns3", action="store_true")
    args = p.parse_args(argv)

    con = Console(highlight=False, width=200)
    ns2 = None if args.no_ns2 else shutil.which("ns")
    if not args.no_ns2 and ns2 is None:
        con.print("[yellow]ns-2 not found (`make bench-peers` installs the Debian package ns2); skipping it[/]")
    ns3 = None
    if not args.no_ns3:
        if Path("/usr/include/ns3/core-module.h").exists() or os.environ.get("NS3_INCLUDE"):
            ns3 = build_ns3(con)
        else:
            con.print("[yellow]ns-3 headers not found (`make bench-peers` installs ns3 and libns3-dev); skipping it[/]")
    info = bench.machine_info()
    con.print(f"{info['date']}; {info['machine']}; dsim build: {info['build']}; load average {info['load_avg_1_5_15']}", soft_wrap=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.flows:
            plan = Path(tmp) / f"plan-{n}.txt"
            bench.write_plan(bench.dumbbell_plan(n), plan)
            dur = f"{args.duration:g}"
            entry = {"flows": n}
            con.print(f"{n} connections, {dur} s simulated:")
            entry["dsim_rio"] = measure_dsim(bench.dumbbell(n, args.duration), args.dsim_repeat)
            con.print(f"  dsim RIO: {entry['dsim_rio']['wall_s']:.2f} s")
            if ns2:
                entry["ns2"] = measure_peer([ns2, str(HERE / "dumbbell.tcl"), str(plan), dur], args.repeat)
                con.print(f"  ns-2 dsRED: {entry['ns2']['wall_s']:.2f} s")
            entry["dsim_red"] = measure_dsim(bench.dumbbell(n, args.duration, aqm="red"), args.dsim_repeat)
            con.print(f"  dsim RED: {entry['dsim_red']['wall_s']:.2f} s")
            if ns3:
                entry["ns3"] = measure_peer([str(ns3), f"--plan={plan}", f"--duration={dur}"], args.repeat)
                con.print(f"  ns-3 RED: {entry['ns3']['wall_s']:.2f} s")
            rows.append(entry)
    info["load_avg_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]

    table = Table(title=f"Seed 002 dumbbell, {args.duration:g} s simulated: dsim / ns-2 / ns-3 ({info['date']})")
    cols = ("flows", "simulator", "bottleneck AQM", "wall s", "CPU s", "peak MB", "bottleneck pkts", "bottleneck drops", "wall / dsim", "CPU / dsim")
    for c in cols:
        table.add_column(c, justify="left" if c in ("simulator", "bottleneck AQM") else "right")
    md = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for e in rows:
        for key, sim, aqm, ref in (
            ("dsim_rio", "dsim", "RIO + TB profilers", None),
            ("ns2", "ns-2 2.35", "dsRED RIO-C + TB", "dsim_rio"),
            ("dsim_red", "dsim", "RED", None),
            ("ns3", "ns-3.37", "RED", "dsim_red"),
        ):
            if key not in e:
                continue
            m = e[key]
            spread = f" [{m['wall_s_min']:.2f}-{m['wall_s_max']:.2f}]" if m["repeats"] > 1 else ""
            ratio = cpu_ratio = ""
            if ref:
                ratio = f"{m['wall_s'] / e[ref]['wall_s']:.1f}x"
                cpu_ratio = f"{m['cpu_s'] / e[ref]['cpu_s']:.1f}x"
            cells = [str(e["flows"]), sim, aqm, f"{m['wall_s']:.2f}{spread}", f"{m['cpu_s']:.2f}", f"{m['maxrss_mb']:.1f}",
                     f"{m['bottleneck_pkts']:,}", f"{m['bottleneck_drops']:,}", ratio, cpu_ratio]
            table.add_row(*cells)
            md.append("| " + " | ".join(cells) + " |")
    con.print(table)
    note = (
        f"Machine: {info['machine']}; dsim build: {info['build']}; load average {info['load_avg_1_5_15']} before, {info['load_avg_1_5_15_after']} after "
        f"(other jobs may share the cores: compare the CPU columns). Wall and CPU: medians of {args.dsim_repeat} dsim runs and {args.repeat} peer run(s); "
        "peak MB: ru_maxrss of the process. wall / dsim: the peer's wall time over dsim's on the same network."
    )
    con.print(note, soft_wrap=True)
    for out in (args.markdown, args.json):
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
    if args.markdown:
        args.markdown.write_text("\n".join(md) + "\n\n" + note + "\n")
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "duration_s": args.duration, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
