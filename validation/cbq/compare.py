"""dsim's CBQ against ns-2's (2.35, Debian package ns2) on two small networks (docs/ef.md,
"Validation against ns-2").

    .venv/bin/python validation/cbq/compare.py [--duration 60] [--warmup 5]

- three classes (cbq.tcl, cbq.toml): a bounded CBR class, a CBR class and a SACK TCP
  class that may borrow, on 1.5 Mbit/s, under packet-by-packet round robin (ns-2
  Queue/CBQ) and weighted round robin (Queue/CBQ/WRR);
- the EF case (ef.tcl, ef.toml): RFC 2598 A.3's bottleneck under CBQ/WRR, a bounded EF
  class allotted 1.03 times its 450 kbit/s against four backlogged classes, every leaf at
  priority 0 (ns-2's default) and at 1. The EF class's throughput is compared as a whole
  (and the delays of one 1500 B and one 160 B microflow): the microflows share one
  overflowing queue, and which of them a full queue refuses is decided by their phases to
  the nanosecond, not by the scheduler (compared one by one, 3 of the 8 microflow
  throughputs of the first run were 2.8 to 7.5 % apart, the class 0.3 % apart).

For each it runs the network in ns-2 and in dsim and prints per flow the throughput across
the bottleneck and the one-way delay percentiles (emission at the source to arrival at D)
of the packets that arrive after the warm-up, with the tolerance each is held to, stated
before the runs:

- throughput: 2 % (a bounded class is held to its share by the estimator, whose
  arithmetic is ns-2's in floating point and dsim's in integer nanoseconds; TCP as
  docs/tcp.md compares goodput with ns-2);
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dsim

HERE = Path(__file__).resolve().parent
#: ns-2's node id of D (created second, after R, in both scripts).
NS2_D = 1
THROUGHPUT_TOL = 0.02
DELAY_TOL, DELAY_FLOOR_MS = 0.10, 1000 * 8 / 1.5e6 * 1e3
PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class Case:
    """One run of a network in both simulators."""

    label: str
    ns2_arg: str
    #: Sets the case's choice in the dsim scenario (its R -> D queue table).
    dsim_edit: Callable[[dict], None]


@dataclass(frozen=True)
class Network:
    tcl: str
    toml: str
    #: What is compared: a dsim flow name -> its ns-2 flow id, or a class -> its flows
    #: (name -> ns-2 id), whose throughput is compared as a whole.
    flows: dict[str, dict[str, int]]
    cases: tuple[Case, ...]
    #: Flows whose delays alone are compared (their throughput is their class's).
    delay_only: frozenset[str] = frozenset()


def _scheduler(name: str) -> Callable[[dict], None]:
    def edit(queue: dict) -> None:
        queue["scheduler"] = name

    return edit


def _priority(p: int) -> Callable[[dict], None]:
    def edit(queue: dict) -> None:
        for c in queue["classes"]:
            c["priority"] = p

    return edit


NETWORKS = (
    Network(
        "cbq.tcl",
        "cbq.toml",
        {"a": {"a": 1}, "b": {"b": 2}, "c": {"c": 3}},
        (Case("prr", "prr", _scheduler("prr")), Case("wrr", "wrr", _scheduler("wrr"))),
    ),
    # The EF class as a whole: which microflow's packet a full EF queue refuses depends on
    # the arrivals' phases to the nanosecond, not on the scheduler.
    Network(
        "ef.tcl",
        "ef.toml",
        {"EF class": {f"ef{i}": i for i in range(1, 9)}, "ef1": {"ef1": 1}, "ef5": {"ef5": 5}, "c1": {"c1": 11}},
        (Case("ef, priority 0", "0", _priority(0)), Case("ef, priority 1", "1", _priority(1))),
        delay_only=frozenset({"ef1", "ef5"}),
    ),
)


def ns2_measure(net: Network, case: Case, duration: float, warmup: float) -> dict[str, dict[str, float]]:
    """Runs the network's Tcl script and reads its trace: per flow compared, the bytes that
    reached D after the warm-up (throughput, kbit/s) and, for a single flow, the delays of
    those packets (ms), a packet's emission being the first time the trace shows it."""
    fids = {fid for members in net.flows.values() for fid in members.values()}
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "ns2.tr"
        subprocess.run(["ns", str(HERE / net.tcl), case.ns2_arg, str(trace), str(duration)], check=True, cwd=tmp)
        sent: dict[str, float] = {}
        got: dict[int, list[tuple[float, int]]] = {fid: [] for fid in fids}
        with Path(trace).open() as f:
            for line in f:
                ev, t, _, dst, kind, size, _, fid, *_, uid = line.split()
                if kind not in ("cbr", "tcp"):
                    continue
                sent.setdefault(uid, float(t))
                if ev == "r" and int(dst) == NS2_D and float(t) >= warmup and int(fid) in got:
                    got[int(fid)].append((float(t) - sent[uid], int(size)))
    out = {}
    for label, members in net.flows.items():
        pkts = [p for fid in members.values() for p in got[fid]]
        row = {"throughput_kbps": sum(s for _, s in pkts) * 8 / (duration - warmup) / 1e3}
        if len(members) == 1:
            delays = np.array([d for d, _ in pkts]) * 1e3
            row |= {f"delay_p{p}_ms": float(np.percentile(delays, p)) for p in PERCENTILES}
        out[label] = row
    return out


def dsim_measure(net: Network, case: Case, duration: float, warmup: float) -> dict[str, dict[str, float]]:
    sc = dsim.Scenario.from_toml((HERE / net.toml).read_text())
    sc.set("duration", f"{duration}s")
    sc.set("warmup", f"{warmup}s")
    [i] = [i for i, lk in enumerate(sc.data["link"]) if (lk["from"], lk["to"]) == ("R", "D")]
    queue = sc.get(f"link[{i}].forward.queue")
    case.dsim_edit(queue)
    sc.set(f"link[{i}].forward.queue", queue)
    flows = dsim.run(sc).flows.set_index("flow")
    out = {}
    for label, members in net.flows.items():
        row = {"throughput_kbps": sum(flows.loc[name, "throughput_bps"] for name in members) / 1e3}
        if len(members) == 1:
            [name] = members
            row |= {f"delay_p{p}_ms": flows.loc[name, f"delay_p{p}_ms"] for p in PERCENTILES}
        out[label] = row
    return out


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
    print("| network | flow | measure | dsim | ns-2 | dsim / ns-2 | within |")
    print("|---|---|---|---|---|---|---|")
    for net in NETWORKS:
        for case in net.cases:
            theirs = ns2_measure(net, case, args.duration, args.warmup)
            ours = dsim_measure(net, case, args.duration, args.warmup)
            for flow in net.flows:
                for metric, o in ours[flow].items():
                    if flow in net.delay_only and metric.startswith("throughput"):
                        continue
                    t = theirs[flow][metric]
                    ok = within(metric, o, t)
                    misses += not ok
                    print(f"| {case.label} | {flow} | {metric} | {o:.1f} | {t:.1f} | {o / t:.3f} | {'yes' if ok else 'NO'} |")
    print(f"\n{misses} outside the tolerance")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
