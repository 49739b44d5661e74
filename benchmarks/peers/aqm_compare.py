"""CoDel, FQ-CoDel and PIE side by side with ns-3 on the same dumbbell (docs/aqm.md).

    .venv/bin/python benchmarks/peers/aqm_compare.py [--flows 10 50] [--rates 10 100]
        [--aqm codel fq_codel pie] [--duration 30] [--markdown FILE]

The network: N TCP SACK connections (NewReno congestion avoidance grown per ACK, 1460-byte
segments, no delayed ACKs, initial window 2, minimum RTO 200 ms) with round-trip times
spread evenly over 50-150 ms and starts over the first second (the plan of `dsim bench`'s
dumbbell), access links at ten times the bottleneck rate with 100-packet FIFOs, the
bottleneck's AQM with its defaults and a 1000-packet limit, ECN off. ns-3 runs
dumbbell-ns3.cc with --aqm (built here with g++ against the Debian packages ns3 and
libns3-dev, as compare.py does); dsim runs the same network written as a scenario. Compared: the goodput of each connection over the
whole run, the bottleneck's drop rate, and the sojourn time of the last packet that left
the bottleneck queue sampled every 10 ms (0 while the queue is empty), its percentiles.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import dsim
from dsim import bench

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import NS3_BINARY, NS3_LIBS, NS3_SOURCE

MSS = 1460
WINDOW = 1000


def build() -> Path:
    if not NS3_BINARY.exists() or NS3_BINARY.stat().st_mtime < NS3_SOURCE.stat().st_mtime:
        NS3_BINARY.parent.mkdir(exist_ok=True)
        cmd = ["g++", "-O2", "-std=c++17", "-o", str(NS3_BINARY), str(NS3_SOURCE), *(f"-lns3-{lib}" for lib in NS3_LIBS)]
        subprocess.run(cmd, check=True)
    return NS3_BINARY


def scenario(plan: list[bench.DumbbellFlow], rate_mbps: float, aqm: str, duration_s: float) -> str:
    """The dsim twin of dumbbell-ns3.cc --aqm."""
    n = len(plan)
    access = f"{int(rate_mbps * 10)}Mbps"
    fifo = '{ type = "droptail", limit = "100p" }'
    out = [
        f'name = "aqm-{aqm}-{n}-{rate_mbps:g}"',
        f'duration = "{duration_s}s"',
        "[nodes]",
        "hosts = [" + ", ".join(f'"s{f.index}", "d{f.index}"' for f in plan) + "]",
        'routers = ["R0", "R1"]',
    ]

    def link(a: str, b: str, rate: str, delay_us: int, queue: str) -> None:
        out.extend(["[[link]]", f'from = "{a}"', f'to = "{b}"', f'rate = "{rate}"', f'delay = "{delay_us}us"', f"queue = {queue}"])

    for f in plan:
        link(f"s{f.index}", "R0", access, f.src_delay_us, fifo)
        link("R1", f"d{f.index}", access, 2000, fifo)
    link("R0", "R1", f"{rate_mbps:g}Mbps", 5000, f'{{ type = "{aqm}", limit = "1000p", series = "10ms" }}')
    out.append('reverse = { queue = { type = "droptail", limit = "1000p" } }')
    tcp = (
        f'{{ variant = "sack", mss = "{MSS}B", window = "{WINDOW * MSS}B", initial_window = "2p", counting = "packets", '
        'delayed_ack = false, min_rto = "200ms", initial_rto = "3s", granularity = "10ms" }'
    )
    for f in plan:
        out += ["[[flow]]", f'name = "f{f.index}"', f'src = "s{f.index}"', f'dst = "d{f.index}"', f'start = "{f.start_us}us"', 'app = { type = "ftp" }', f"tcp = {tcp}"]
    return "\n".join(out) + "\n"


def percentiles(samples: np.ndarray) -> list[float]:
    return [float(np.percentile(samples, q)) for q in (50, 90, 99)] if len(samples) else [math.nan] * 3


def run_dsim(plan: list[bench.DumbbellFlow], rate: float, aqm: str, duration: float) -> dict:
    res = dsim.run(scenario(plan, rate, aqm, duration), seed=1)
    flows = res.flows.set_index("flow")
    goodput = [float(flows.loc[f"f{f.index}", "goodput_bytes"]) * 8 / duration / 1e6 for f in plan]
    q = res.queues[res.queues["port"] == "R0->R1"]
    s = res.aqm_series[res.aqm_series["port"] == "R0->R1"]
    sojourn = np.where(s["len_pkts"] == 0, 0.0, s["delay_ms"]).astype(float)
    return {
        "goodput": goodput,
        "drop_rate": float(q["dropped_pkts"].sum() / q["arrivals_pkts"].sum()),
        "sojourn": percentiles(sojourn[~np.isnan(sojourn)]),
    }


def run_ns3(plan: list[bench.DumbbellFlow], rate: float, aqm: str, duration: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan"
        bench.write_plan(plan, path)
        out = subprocess.run(
            [str(NS3_BINARY), f"--plan={path}", f"--duration={duration}", f"--rate={rate}", f"--access={10 * rate}",
             f"--aqm={aqm}", f"--mss={MSS}", f"--window={WINDOW}"],
            check=True, capture_output=True, text=True,
        ).stdout
    rx, counts, sojourn = {}, {}, []
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "flow":
            rx[int(parts[1])] = int(parts[2])
        elif parts[0] == "sojourn_ms":
            sojourn.append(float(parts[1]))
        elif len(parts) == 2:
            counts[parts[0]] = int(parts[1])
    return {
        "goodput": [rx[f.index] * 8 / duration / 1e6 for f in plan],
        "drop_rate": counts["bottleneck_drops"] / counts["bottleneck_arrivals"],
        "sojourn": percentiles(np.array(sojourn)),
    }


def jain(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def row(label: str, r: dict) -> str:
    g = r["goodput"]
    p50, p90, p99 = r["sojourn"]
    return (
        f"| {label} | {sum(g):.2f} | {min(g):.3f} / {max(g):.3f} | {jain(g):.3f} | {100 * r['drop_rate']:.2f} | "
        f"{p50:.1f} / {p90:.1f} / {p99:.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, nargs="+", default=[10, 50])
    p.add_argument("--rates", type=float, nargs="+", default=[10.0, 100.0], help="bottleneck Mbit/s")
    p.add_argument("--aqm", nargs="+", default=["codel", "fq_codel", "pie"])
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--markdown", type=Path)
    args = p.parse_args(argv)
    build()
    lines = [
        "| network | simulator | goodput Mbit/s (sum) | per flow min / max | Jain | drops % | sojourn p50 / p90 / p99 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for aqm in args.aqm:
        for n in args.flows:
            for rate in args.rates:
                plan = bench.dumbbell_plan(n)
                d, s = run_dsim(plan, rate, aqm, args.duration), run_ns3(plan, rate, aqm, args.duration)
                net = f"{aqm}, {n} flows, {rate:g} Mbit/s"
                lines += [row(f"{net} | dsim", d), row(f"{net} | ns-3", s)]
                print("\n".join(lines[-2:]), flush=True)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        args.markdown.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
