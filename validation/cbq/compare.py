"""dsim's CBQ against ns-2's (2.35, Debian package ns2) on one small network: three classes
on a 1.5 Mbit/s link, CBR and TCP, one class bounded (docs/ef.md, "Validation against
ns-2").

    .venv/bin/python validation/cbq/compare.py [--duration 60] [--warmup 5]

For each scheduler, packet-by-packet round robin (ns-2 Queue/CBQ) and weighted round robin
(Queue/CBQ/WRR), it runs validation/cbq/cbq.tcl in ns-2 and validation/cbq/cbq.toml in
dsim, and prints per class the throughput across the bottleneck and the one-way delay
percentiles (emission at the source to arrival at D) of the packets that arrive after the
warm-up, with the tolerance each is held to, stated before the runs:

- throughput: 2 % (the bounded class is held to its share by the estimator, whose
  arithmetic is ns-2's in floating point and dsim's in integer nanoseconds; the TCP class
  as docs/tcp.md compares goodput with ns-2);
- delay percentiles: 10 % or one 1000 B packet time at the bottleneck (5.33 ms), the
  larger: a scheduler decision moves a packet by whole packet times.

Exit status 1 if a number is outside its tolerance.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import dsim

HERE = Path(__file__).resolve().parent
#: ns-2 node ids in cbq.tcl's order of creation: R, D, then S1, S2, S3.
NS2_D = 1
NS2_SOURCES = {2: "a", 3: "b", 4: "c"}
#: Flow id -> class name in cbq.tcl.
NS2_FID = {1: "a", 2: "b", 3: "c"}
THROUGHPUT_TOL = 0.02
DELAY_TOL, DELAY_FLOOR_MS = 0.10, 1000 * 8 / 1.5e6 * 1e3
PERCENTILES = (50, 90, 99)


def ns2_measure(scheduler: str, duration: float, warmup: float) -> dict[str, dict[str, float]]:
    """Runs cbq.tcl and reads its trace: per class the bytes that reached D after the
    warm-up (throughput, bit/s) and the delays of those packets (ms)."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "cbq.tr"
        subprocess.run(["ns", str(HERE / "cbq.tcl"), scheduler, str(trace), str(duration)], check=True, cwd=tmp)
        sent: dict[int, float] = {}
        got: dict[str, list[tuple[float, int]]] = {c: [] for c in NS2_FID.values()}
        with open(trace) as f:
            for line in f:
                ev, t, src, dst, kind, size, _, fid, *_, uid = line.split()
                if kind not in ("cbr", "tcp"):
                    continue
                if ev == "+" and int(src) in NS2_SOURCES and int(uid) not in sent:
                    sent[int(uid)] = float(t)
                elif ev == "r" and int(dst) == NS2_D and float(t) >= warmup:
                    got[NS2_FID[int(fid)]].append((float(t) - sent[int(uid)], int(size)))
    out = {}
    for c, pkts in got.items():
        delays = np.array([d for d, _ in pkts]) * 1e3
        row = {"throughput_kbps": sum(s for _, s in pkts) * 8 / (duration - warmup) / 1e3}
        row |= {f"delay_p{p}_ms": float(np.percentile(delays, p)) for p in PERCENTILES}
        out[c] = row
    return out


def dsim_measure(scheduler: str, duration: float, warmup: float) -> dict[str, dict[str, float]]:
    sc = dsim.Scenario.from_toml((HERE / "cbq.toml").read_text())
    sc.set("duration", f"{duration}s")
    sc.set("warmup", f"{warmup}s")
    links = sc.data["link"]
    [i] = [i for i, l in enumerate(links) if (l["from"], l["to"]) == ("R", "D")]
    sc.set(f"link[{i}].forward.queue.scheduler", scheduler)
    flows = dsim.run(sc).flows.set_index("flow")
    return {
        c: {"throughput_kbps": flows.loc[c, "throughput_bps"] / 1e3} | {f"delay_p{p}_ms": flows.loc[c, f"delay_p{p}_ms"] for p in PERCENTILES}
        for c in NS2_FID.values()
    }


def within(metric: str, ours: float, theirs: float) -> bool:
    if metric.startswith("throughput"):
        return abs(ours - theirs) <= THROUGHPUT_TOL * theirs
    return abs(ours - theirs) <= max(DELAY_TOL * theirs, DELAY_FLOOR_MS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0, help="seconds simulated (default 60)")
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds left out at the start (default 5)")
    args = ap.parse_args()
    if shutil.which("ns") is None:
        print("ns-2 is not installed (apt-get install -y ns2)", file=sys.stderr)
        return 2
    misses = 0
    print("| scheduler | class | measure | dsim | ns-2 | dsim / ns-2 | within |")
    print("|---|---|---|---|---|---|---|")
    for scheduler in ("prr", "wrr"):
        theirs = ns2_measure(scheduler, args.duration, args.warmup)
        ours = dsim_measure(scheduler, args.duration, args.warmup)
        for c in NS2_FID.values():
            for metric in ours[c]:
                o, t = ours[c][metric], theirs[c][metric]
                ok = within(metric, o, t)
                misses += not ok
                print(f"| {scheduler} | {c} | {metric} | {o:.1f} | {t:.1f} | {o / t:.3f} | {'yes' if ok else 'NO'} |")
    print(f"\n{misses} outside the tolerance")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
