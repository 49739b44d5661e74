"""dsim and ns-3 side by side with CUBIC and DCTCP (docs/tcp.md, "Validation against ns-3").

    python benchmarks/peers/cc_compare.py [--only NAME ...] [--seeds K] [--duration S]
                                          [--warmup S] [--json FILE] [--markdown FILE]
    make bench-cc [CC_ARGS="--only dctcp-step-10 --seeds 2"]

Each network is a dumbbell: N bulk TCP connections from N sources to N sinks, source i
behind an access link of 1 Gbit/s and a one-way delay spread evenly over 1-30 ms, one
bottleneck (its rate and delay below), 1 Gbit/s and 1 ms to each sink: round trips of
2 (d_i + bottleneck delay + 1 ms). Start times are drawn uniformly in [0, 1 s] per seed and
given to both simulators. Both run SACK with IW 10, 1460-byte segments, delayed ACKs (two
segments or 40 ms), minimum RTO 200 ms on a 1 ms clock, 4 MB buffers, a handshake, no
timestamps, no limited transmit; ns-3's TcpCubic without HyStart (dsim models none; ns-3
turns it on by default) and with its classic (RFC 6675-style) recovery.

Per network and seed it runs ns-3 (benchmarks/peers/cc-ns3.cc) and dsim twice: with
RFC 9438's CUBIC and dsim's defaults, and as ns-3.37 runs (the CUBIC it implements: no
Reno-friendly region, `rtt = "min"`; its retransmission timer, which a retransmission does
not restart: `rto_restart = "on_new_ack"`); DCTCP has one dsim run. It compares, over
[warmup, duration): the goodput of each connection (its ratio dsim / ns-3 of the means over
seeds; for ns-3's row, the same measure between its own runs of two seeds; and the Jain
index of the connections), the link's utilization, the queueing delay of the data packets
(their one-way delay's median and 99th percentile less the propagation and serialization
delay of their path, averaged over connections) and the bottleneck's drop and mark rates
(per packet arriving there), each against a stated tolerance. The default warm-up, 20 s,
leaves out the start-up's timeouts (ns-3's last came at 11.4 s on cubic-red-10, seed 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from compare import build_ns3

import dsim

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cc-ns3.cc"
LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control", "flow-monitor", "stats"]

SEG = 1460
PKT = SEG + 40


@dataclass(frozen=True)
class Network:
    name: str
    flows: int
    rate_mbps: int
    delay_ms: int
    cc: str  # cubic | dctcp
    queue: str  # droptail | red | step
    limit: int  # packets
    red: tuple[int, int, float, float] = (0, 0, 0.0, 0.0)  # min_th, max_th, max_p, wq
    k: int = 0  # step marking threshold, packets


NETWORKS = [
    Network("cubic-droptail-10", 10, 20, 10, "cubic", "droptail", 200),
    Network("cubic-red-10", 10, 20, 10, "cubic", "red", 300, red=(30, 90, 0.1, 0.002)),
    Network("dctcp-step-10", 10, 20, 10, "dctcp", "step", 300, k=20),
    Network("cubic-droptail-50", 50, 100, 10, "cubic", "droptail", 500),
    Network("cubic-red-50", 50, 100, 10, "cubic", "red", 1000, red=(100, 300, 0.1, 0.002)),
    Network("dctcp-step-50", 50, 100, 10, "dctcp", "step", 1000, k=65),
]

#: Tolerances on dsim against ns-3 (on each dsim run; the ns-3-like one is expected within).
TOLERANCE = {
    "utilization": 0.02,  # absolute difference of the link's utilization
    "goodput_ratio": 0.25,  # mean |dsim / ns-3 - 1| of the connections' goodputs
    "qdelay": 0.25,  # relative difference of the mean queueing delays (p50 and p99)
    "loss": 0.30,  # relative difference of the drop (mark) rates
}


def access_delays_us(n: int) -> list[int]:
    return [1000 + round(29000 * i / max(n - 1, 1)) for i in range(n)]


def starts_us(n: int, seed: int) -> list[int]:
    r = random.Random(seed)
    return [r.randint(0, 1_000_000) for _ in range(n)]


def base_delay_ms(net: Network, access_us: int) -> float:
    """Propagation and serialization of a full data packet from source to sink."""
    ser = PKT * 8 / 1e9 * 2 + PKT * 8 / (net.rate_mbps * 1e6)
    return access_us / 1e3 + net.delay_ms + 1.0 + ser * 1e3


def run_ns3(net: Network, seed: int, duration: float, warmup: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".plan", delete=False) as f:
        for i, (d, s) in enumerate(zip(access_delays_us(net.flows), starts_us(net.flows, seed), strict=True)):
            f.write(f"{i} {d} {s}\n")
        plan = f.name
    min_th, max_th, max_p, wq = net.red
    argv = [str(build_ns3(SOURCE, LIBS)), f"--plan={plan}", f"--cc={net.cc}", f"--queue={net.queue}", f"--rate={net.rate_mbps}Mbps",
            f"--delay={net.delay_ms}ms", f"--limit={net.limit}", f"--minth={min_th}", f"--maxth={max_th}",
            f"--maxp={max_p}", f"--wq={wq}", f"--k={net.k}", f"--duration={duration}", f"--warmup={warmup}",
            f"--run={seed}"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    Path(plan).unlink()
    flows, queue = [], {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "flow":
            flows.append({"goodput_bps": float(w[3]), "delay_p50_ms": float(w[5]), "delay_p99_ms": float(w[7]),
                          "recoveries": int(w[9]), "timeouts": int(w[11])})
        elif w[0] == "queue":
            queue = {"arrivals": int(w[2]), "drops": int(w[4]), "marks": int(w[6])}
    return {"flows": flows, **queue}


def dsim_scenario(net: Network, seed: int, duration: float, warmup: float, ns3_like: bool) -> dsim.Scenario:
    sc = dsim.Scenario(duration=f"{duration}s", warmup=f"{warmup}s", name=net.name)
    n = net.flows
    sc.hosts(*[f"s{i}" for i in range(n)], *[f"d{i}" for i in range(n)])
    sc.routers("R0", "R1")
    big = dsim.droptail("10000p")
    if net.queue == "droptail":
        bottleneck = dsim.droptail(f"{net.limit}p")
    elif net.queue == "red":
        min_th, max_th, max_p, wq = net.red
        bottleneck = dsim.red(f"{net.limit}p", f"{min_th}p", f"{max_th}p", max_p=max_p, wq=wq, mean_pkt_size=f"{PKT}B")
    else:
        bottleneck = dsim.droptail(f"{net.limit}p", mark_threshold=f"{net.k}p")
    sc.link("R0", "R1", rate=f"{net.rate_mbps}Mbps", delay=f"{net.delay_ms}ms", queue=big, forward={"queue": bottleneck})
    if net.cc == "cubic":
        cc = {"congestion": "cubic"}
        if ns3_like:
            cc.update(cubic=dsim.cubic(reno_friendly=False, rtt="min"), rto_restart="on_new_ack")
    else:
        cc = {"congestion": "dctcp", "ecn": True}
    tcp = dsim.tcp("sack", mss=f"{SEG}B", window="4MB", initial_window="10p", delayed_ack="40ms", min_rto="200ms",
                   granularity="1ms", handshake=True, **cc)
    for i, (d, s) in enumerate(zip(access_delays_us(n), starts_us(n, seed), strict=True)):
        sc.link(f"s{i}", "R0", rate="1Gbps", delay=f"{d}us", queue=big)
        sc.link("R1", f"d{i}", rate="1Gbps", delay="1ms", queue=big)
        sc.flow(f"f{i}", src=f"s{i}", dst=f"d{i}", app=dsim.ftp(), tcp=tcp, start=f"{s}us")
    return sc


def run_dsim(net: Network, seed: int, duration: float, warmup: float, ns3_like: bool) -> dict:
    res = dsim.run(dsim_scenario(net, seed, duration, warmup, ns3_like), seed=seed, replications=1, jobs=1)
    f = res.flows.sort_values("flow", key=lambda c: c.str[1:].astype(int))
    flows = [{"goodput_bps": r.goodput_bps, "delay_p50_ms": r.delay_p50_ms, "delay_p99_ms": r.delay_p99_ms,
              "recoveries": r.fast_retransmits, "timeouts": r.timeouts} for r in f.itertuples()]
    q = res.queues[res.queues.port == "R0->R1"].iloc[0]
    return {"flows": flows, "arrivals": int(q.arrivals_pkts), "drops": int(q.dropped_pkts), "marks": int(q.marks_pkts)}


def summary(net: Network, runs: list[dict]) -> dict:
    """Means over seeds of the network's numbers; per-connection goodputs kept."""
    delays = access_delays_us(net.flows)
    line = net.rate_mbps * 1e6 * SEG / PKT

    def per_run(r: dict) -> dict:
        g = [f["goodput_bps"] for f in r["flows"]]
        q50 = [f["delay_p50_ms"] - base_delay_ms(net, d) for f, d in zip(r["flows"], delays, strict=True)]
        q99 = [f["delay_p99_ms"] - base_delay_ms(net, d) for f, d in zip(r["flows"], delays, strict=True)]
        return {
            "goodput": g,
            "utilization": sum(g) / line,
            "jain": sum(g) ** 2 / (len(g) * sum(x * x for x in g)),
            "qdelay_p50_ms": statistics.mean(q50),
            "qdelay_p99_ms": statistics.mean(q99),
            "drop_rate": r["drops"] / r["arrivals"],
            "mark_rate": r["marks"] / r["arrivals"],
            "recoveries": statistics.mean(f["recoveries"] for f in r["flows"]),
            "timeouts": statistics.mean(f["timeouts"] for f in r["flows"]),
        }

    rs = [per_run(r) for r in runs]
    out = {k: statistics.mean(r[k] for r in rs) for k in rs[0] if k != "goodput"}
    out["goodput"] = [statistics.mean(r["goodput"][i] for r in rs) for i in range(net.flows)]
    if len(rs) > 1:
        out["goodput_seed_spread"] = goodput_ratio(rs[0]["goodput"], rs[1]["goodput"])
    return out


def goodput_ratio(a: list[float], b: list[float]) -> float:
    """Mean |a_i / b_i - 1| over the connections."""
    return statistics.mean(abs(x / y - 1) for x, y in zip(a, b, strict=True))


def compare(d: dict, n: dict) -> dict:
    """dsim (d) against ns-3 (n): the differences the tolerances hold."""
    rel = lambda a, b: abs(a - b) / b if b else (0.0 if a == b else float("inf"))  # noqa: E731
    ratios = [a / b for a, b in zip(d["goodput"], n["goodput"], strict=True)]
    return {
        "utilization": abs(d["utilization"] - n["utilization"]),
        "goodput_ratio": goodput_ratio(d["goodput"], n["goodput"]),
        "goodput_ratio_min": min(ratios),
        "goodput_ratio_max": max(ratios),
        "qdelay_p50": rel(d["qdelay_p50_ms"], n["qdelay_p50_ms"]),
        "qdelay_p99": rel(d["qdelay_p99_ms"], n["qdelay_p99_ms"]),
        "drop_rate": rel(d["drop_rate"], n["drop_rate"]),
        "mark_rate": rel(d["mark_rate"], n["mark_rate"]),
    }


def within(c: dict) -> dict[str, bool]:
    t = TOLERANCE
    return {
        "utilization": c["utilization"] <= t["utilization"],
        "goodput_ratio": c["goodput_ratio"] <= t["goodput_ratio"],
        "qdelay_p50": c["qdelay_p50"] <= t["qdelay"],
        "qdelay_p99": c["qdelay_p99"] <= t["qdelay"],
        "drop_rate": c["drop_rate"] <= t["loss"],
        "mark_rate": c["mark_rate"] <= t["loss"],
    }


def markdown(rows: list[dict], seeds: int, duration: float, warmup: float) -> str:
    date = datetime.date.today().isoformat()
    head = (f"{date}, {seeds} seeds, {duration:g} s ({warmup:g} s warm-up); ns-3.37. Utilization: goodput of all "
            "connections / (rate x 1460/1500). Goodput ratio: dsim / ns-3 per connection, mean |ratio - 1| "
            "[min, max]; in brackets, ns-3 seed 1 / seed 2. Queueing delay: one-way delay of the data packets "
            "less their path's fixed delay, median and 99th percentile, mean over the connections (ms). Rates "
            "per packet arriving at the bottleneck. Recoveries: loss recoveries entered (dsim: fast retransmits; "
            "ns-3: entries into CA_RECOVERY), timeouts: retransmission timeouts, per connection.\n\n")
    lines = [("| network | run | utilization | Jain | goodput ratio | qdelay p50 | qdelay p99 | drop rate | mark rate | "
              "recoveries / flow | timeouts / flow | within |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["ns3"]
        spread = f"({n['goodput_seed_spread']:.3f})" if "goodput_seed_spread" in n else ""
        lines.append(f"| {r['name']} | ns-3 | {n['utilization']:.3f} | {n['jain']:.3f} | {spread} | {n['qdelay_p50_ms']:.1f} | "
                     f"{n['qdelay_p99_ms']:.1f} | {n['drop_rate']:.5f} | {n['mark_rate']:.5f} | {n['recoveries']:.1f} | "
                     f"{n['timeouts']:.2f} | |")
        for label in ("dsim_ns3_like", "dsim"):
            if label not in r:
                continue
            d, c, w = r[label], r[f"{label}_vs_ns3"], r[f"{label}_within"]
            missed = [k for k, ok in w.items() if not ok]
            name = "dsim as ns-3" if label == "dsim_ns3_like" else "dsim"
            lines.append(
                f"| | {name} | {d['utilization']:.3f} | {d['jain']:.3f} | {c['goodput_ratio']:.3f} "
                f"[{c['goodput_ratio_min']:.2f}, {c['goodput_ratio_max']:.2f}] | {d['qdelay_p50_ms']:.1f} | "
                f"{d['qdelay_p99_ms']:.1f} | {d['drop_rate']:.5f} | {d['mark_rate']:.5f} | {d['recoveries']:.1f} | "
                f"{d['timeouts']:.2f} | {'yes' if not missed else 'no: ' + ', '.join(missed)} |")
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", help="networks to run (default all)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--duration", type=float, default=80.0)
    p.add_argument("--warmup", type=float, default=20.0)
    p.add_argument("--json", type=Path)
    p.add_argument("--markdown", type=Path)
    args = p.parse_args(argv)
    rows = []
    for net in NETWORKS:
        if args.only and net.name not in args.only:
            continue
        seeds = range(1, args.seeds + 1)
        row = {"name": net.name, "ns3": summary(net, [run_ns3(net, s, args.duration, args.warmup) for s in seeds])}
        variants = [("dsim_ns3_like", True), ("dsim", False)] if net.cc == "cubic" else [("dsim", False)]
        for label, ns3_like in variants:
            d = summary(net, [run_dsim(net, s, args.duration, args.warmup, ns3_like) for s in seeds])
            c = compare(d, row["ns3"])
            row.update({label: d, f"{label}_vs_ns3": c, f"{label}_within": within(c)})
        rows.append(row)
        print(markdown([row], args.seeds, args.duration, args.warmup).split("\n\n", 1)[1], flush=True)
    text = markdown(rows, args.seeds, args.duration, args.warmup)
    print(text)
    for path, content in ((args.markdown, text), (args.json, json.dumps(rows, indent=1))):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
