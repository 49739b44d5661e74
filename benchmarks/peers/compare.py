"""dsim, ns-2 and ns-3 side by side on the seed 002 dumbbell (docs/performance.md describes the equivalence).

    python benchmarks/peers/compare.py [--flows 50 100 200] [--duration 100] [--repeat R]
                                       [--dsim-repeat R] [--json FILE] [--markdown FILE]
                                       [--no-ns2] [--no-ns3] [--ns3-max-flows N] [--no-tcp]
                                       [--tcp-seeds K] [--scale]

For each number of connections it runs, each in its own measured process (wall time, CPU
time, peak resident memory from wait4, as `dsim bench` measures):
  dsim  dumbbell-N      RIO with token-bucket profilers on half the connections
  ns-2  dumbbell.tcl    the same with dsRED (edge: token bucket per Assured host; core: RIO-C)
  dsim  dumbbell-N-red  RED with the OUT curve, no profilers
  ns-3  dumbbell-ns3    the same with RedQueueDisc
and prints one table with the packets each sent across the bottleneck (they did the same
work) and how many times longer each peer took than dsim on the same network.

With ns-2 (unless --no-tcp) it then compares the TCP connections themselves, flow by flow,
on the RIO network (dsim's RIO as the RED paper spaces marks, and again with
`count_overflow = "pass"`, ns-2 dsRED's rule: docs/af.md), on the RED one (ns-2's
Queue/RED with the same settings) and on a drop-tail variant (no profilers, a 1050-packet drop-tail bottleneck): per connection the timeouts, retransmitted packets, fast retransmits, drops
at the bottleneck and goodput of dsim's SACK sender and ns-2's Sack1 agent, each averaged
over K seeds (dsim's replications; ns-2's RNG seeds 1..K), and prints the means per flow
(dsim's also with `rto_restart = "on_new_ack"`), the ratio dsim / ns-2 and the tolerance
each is held to (docs/tcp.md, "Validation against ns-2").
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
NS3_LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


def build_ns3(source: Path = NS3_SOURCE, libs: list[str] = NS3_LIBS, say=print) -> Path:
    """Compiles an ns-3 program of this folder against the Debian libraries into build/
    (once; again when it or the header the programs share changes)."""
    binary = HERE / "build" / source.stem
    newest = max(source.stat().st_mtime, (HERE / "ns3-peers.h").stat().st_mtime)
    if binary.exists() and binary.stat().st_mtime >= newest:
        return binary
    binary.parent.mkdir(exist_ok=True)
    cxx = os.environ.get("CXX", "g++")
    cmd = [cxx, "-O2", "-std=c++17", "-o", str(binary), str(source), *(f"-lns3-{lib}" for lib in libs)]
    say(f"compiling {source.name}: {' '.join(cmd)}")
    subprocess.run(cmd, check=True)
    return binary


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


def ns2_bottleneck(flows: int, scaled: bool) -> list[str]:
    """The KEY=VALUE arguments of dumbbell.tcl for the `flows`-connection dumbbell grown
    with its load (none for the plain one): the values of dsim's `scale-N`."""
    if not scaled:
        return []
    b = bench.scaled_bottleneck(flows)
    (in_min, in_max, _), (out_min, out_max, _) = b["rio_in"], b["rio_out"]
    return [f"rate_mbps={b['bottleneck_rate_bps'] // 1_000_000}", f"limit={b['bottleneck_limit_pkts']}", f"in_min={in_min}",
            f"in_max={in_max}", f"out_min={out_min}", f"out_max={out_max}"]


def ns3_bottleneck(flows: int, scaled: bool) -> list[str]:
    """The arguments of dumbbell-ns3 for the grown dumbbell (none for the plain one): the
    rate, the buffers and RED's thresholds (RIO's OUT curve) of dsim's `scale-N-red`."""
    if not scaled:
        return []
    b = bench.scaled_bottleneck(flows)
    out_min, out_max, _ = b["rio_out"]
    return [f"--rate={b['bottleneck_rate_bps'] // 1_000_000}", f"--limit={b['bottleneck_limit_pkts']}", f"--min_th={out_min}",
            f"--max_th={out_max}"]


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
    p.add_argument("--ns3-max-flows", type=int, help="run ns-3 only up to this many connections (it needs minutes at 200)")
    p.add_argument("--no-tcp", action="store_true", help="skip the flow-by-flow TCP comparison with ns-2")
    p.add_argument("--tcp-seeds", type=int, default=3, help="seeds of the TCP comparison (default 3)")
    p.add_argument(
        "--scale", action="store_true",
        help="the dumbbell grown with its load (dsim's `scale-N`: N Mbit/s bottleneck, buffers and RIO thresholds times "
        "N/50, passed to the ns-2 script and to the ns-3 program); no TCP comparison",
    )
    args = p.parse_args(argv)
    if args.scale:
        args.no_tcp = True

    con = Console(highlight=False, width=200)
    ns2 = None if args.no_ns2 else shutil.which("ns")
    if not args.no_ns2 and ns2 is None:
        con.print("[yellow]ns-2 not found (`make bench-peers` installs the Debian package ns2); skipping it[/]")
    ns3 = None
    if not args.no_ns3:
        if Path("/usr/include/ns3/core-module.h").exists() or os.environ.get("NS3_INCLUDE"):
            ns3 = build_ns3(say=lambda m: con.print(m, soft_wrap=True))
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
            entry["dsim_rio"] = measure_dsim(bench.dumbbell(n, args.duration, scaled=args.scale), args.dsim_repeat)
            con.print(f"  dsim RIO: {entry['dsim_rio']['wall_s']:.2f} s")
            if ns2:
                entry["ns2"] = measure_peer([ns2, str(HERE / "dumbbell.tcl"), str(plan), dur, *ns2_bottleneck(n, args.scale)], args.repeat)
                con.print(f"  ns-2 dsRED: {entry['ns2']['wall_s']:.2f} s")
            run_ns3 = ns3 is not None and (args.ns3_max_flows is None or n <= args.ns3_max_flows)
            if run_ns3 or not args.scale:
                entry["dsim_red"] = measure_dsim(bench.dumbbell(n, args.duration, aqm="red", scaled=args.scale), args.dsim_repeat)
                con.print(f"  dsim RED: {entry['dsim_red']['wall_s']:.2f} s")
            if run_ns3:
                argv = [str(ns3), f"--plan={plan}", f"--duration={dur}", *ns3_bottleneck(n, args.scale)]
                entry["ns3"] = measure_peer(argv, args.repeat)
                con.print(f"  ns-3 RED: {entry['ns3']['wall_s']:.2f} s")
            rows.append(entry)
    info["load_avg_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]

    grown = ", bottleneck N Mbit/s, buffers and thresholds times N/50" if args.scale else ""
    table = Table(title=f"Seed 002 dumbbell{grown}, {args.duration:g} s simulated: dsim / ns-2 / ns-3 ({info['date']})")
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
    tcp_rows = []
    if ns2 and not args.no_tcp:
        tcp_rows = compare_tcp(con, ns2, args.flows, args.duration, args.tcp_seeds)
        if args.markdown:
            with args.markdown.open("a") as out:
                out.write("\n" + tcp_markdown(tcp_rows, args.duration, args.tcp_seeds, info["date"]))
    if args.json:
        doc = {"machine": info, "duration_s": args.duration, "rows": rows, "tcp": tcp_rows}
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


# ---------------------------------------------------------------------------------------
# TCP, flow by flow: dsim's SACK sender against ns-2's Sack1 agent

#: Per-connection counters compared, and the tolerance of the ratio dsim / ns-2 of their
#: means per flow. Timeouts are rare events (a few per flow in 100 s): a factor of 2; the
#: rest are driven by the same drops: 20 %; goodput is the network's result: 2 %.
TCP_METRICS = (
    ("timeouts", "timeouts", 2.0),
    ("retransmits", "retransmitted packets", 1.2),
    ("fast_retransmits", "fast retransmits", 1.2),
    ("drops", "bottleneck drops", 1.2),
    ("drop_rate", "drop rate (drops / data packets)", 1.2),
    ("goodput_bps", "goodput", 1.02),
)
TCP_AQMS = ("rio", "rio-dsred", "red", "droptail")
#: The ns-2 network each dsim variant is compared with, when its name is not ns-2's.
NS2_AQM = {"rio-dsred": "rio"}
TCP_COLUMNS = ("metric", "dsim", 'dsim, "on_new_ack"', "ns-2", "dsim / ns-2", "tolerance", "within")


def tcp_dumbbell(n: int, duration_s: float, aqm: str, rto_restart: str):
    """The benchmark's dumbbell with `aqm` "rio" or "red" as `dsim.bench` writes it,
    "rio-dsred": the RIO one with ns-2 dsRED's count rule (`count_overflow = "pass"`), or
    "droptail": the RED one with a 1050-packet drop-tail bottleneck; its connections'
    retransmission timer restarted as `rto_restart` says."""
    from dsim import Scenario, droptail

    base = {"droptail": "red", "rio-dsred": "rio"}.get(aqm, aqm)
    sc = Scenario.from_toml(bench.dumbbell(n, duration_s, aqm=base).toml)
    k = bottleneck_index(sc)
    if aqm == "droptail":
        sc.set(f"link[{k}].queue", droptail(f"{bench.DUMBBELL['bottleneck_limit_pkts']}p"))
    if aqm == "rio-dsred":
        sc.set(f"link[{k}].queue.count_overflow", "pass")
    for i in range(n):
        sc.set(f"flow[{i}].tcp.rto_restart", rto_restart)
    return sc


def bottleneck_index(sc) -> int:
    """The index of the R0 -> R1 link in the dumbbell `sc` (a dsim.Scenario)."""
    return next(i for i, link in enumerate(sc.get("link")) if (link["from"], link["to"]) == ("R0", "R1"))


def dsim_tcp(n: int, duration_s: float, aqm: str, seeds: int, rto_restart: str) -> list[dict]:
    """Per-connection counters of dsim, means over `seeds` replications."""
    import dsim

    res = dsim.run(tcp_dumbbell(n, duration_s, aqm, rto_restart), replications=seeds)
    f = res.flows
    drops = res.drops
    bottleneck = drops[drops["site"] == "R0->R1"].groupby(["replication", "flow"])["pkts"].sum()
    f = f.set_index(["replication", "flow"])
    f["drops"] = bottleneck.reindex(f.index, fill_value=0)
    per = f.groupby(level="flow").agg(
        timeouts=("timeouts", "mean"),
        retransmits=("retransmitted_pkts", "mean"),
        fast_retransmits=("fast_retransmits", "mean"),
        drops=("drops", "mean"),
        data_pkts=("sent_pkts", "mean"),
        goodput_bps=("goodput_bps", "mean"),
    )
    return [{"flow": int(name[1:]), **{k: float(v) for k, v in row.items()}} for name, row in per.iterrows()]


def ns2_tcp(ns2: str, plan: Path, duration_s: float, aqm: str, seeds: int) -> list[dict]:
    """Per-connection counters of ns-2's Sack1 agents, means over RNG seeds 1..`seeds`."""
    acc: dict[int, dict[str, float]] = {}
    for seed in range(1, seeds + 1):
        out = subprocess.run([ns2, str(HERE / "dumbbell.tcl"), str(plan), f"{duration_s:g}", aqm, str(seed), "flows"],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if parts[:1] != ["tcp"]:
                continue
            i, data, rexmit, timeouts, cuts, ack, drops = (int(float(x)) for x in parts[1:8])
            row = {
                "timeouts": timeouts,
                "retransmits": rexmit,
                # ncwndcuts_ counts every window reduction: fast retransmits and timeouts
                # (no ECN, no idle periods here).
                "fast_retransmits": cuts - timeouts,
                "drops": drops,
                "data_pkts": data,
                # ack_ is the highest cumulative ACK in segments, numbered from 0.
                "goodput_bps": (ack + 1) * bench.DUMBBELL["mss"] * 8 / duration_s,
            }
            slot = acc.setdefault(i, dict.fromkeys(row, 0.0))
            for k, v in row.items():
                slot[k] += v / seeds
    return [{"flow": i, **acc[i]} for i in sorted(acc)]


def tcp_summary(n: int, aqm: str, dsim_flows: list[dict], letter_flows: list[dict], ns2_flows: list[dict]) -> dict:
    """Means per flow of both simulators (dsim also with `rto_restart = "on_new_ack"`, the
    letter of RFC 6298), the ratio dsim / ns-2 and whether it is within its tolerance;
    goodput also per class (Assured = even connections) and Jain's index."""
    for flows in (dsim_flows, letter_flows, ns2_flows):
        for f in flows:
            f["drop_rate"] = f["drops"] / f["data_pkts"] if f["data_pkts"] else 0.0

    def mean(flows: list[dict], key: str, pick=lambda f: True) -> float:
        vals = [f[key] for f in flows if pick(f)]
        return sum(vals) / len(vals)

    def jain(flows: list[dict]) -> float:
        x = [f["goodput_bps"] for f in flows]
        return sum(x) ** 2 / (len(x) * sum(v * v for v in x))

    checks = [(key, label, tol, lambda f: True) for key, label, tol in TCP_METRICS]
    if aqm.startswith("rio"):
        checks += [
            ("goodput_bps", "goodput, Assured (even) connections", 1.02, lambda f: f["flow"] % 2 == 0),
            ("goodput_bps", "goodput, best-effort (odd) connections", 1.02, lambda f: f["flow"] % 2 == 1),
        ]
    rows = []
    for key, label, tol, pick in checks:
        d, s = mean(dsim_flows, key, pick), mean(ns2_flows, key, pick)
        ratio = d / s if s else float("nan")
        rows.append({"metric": label, "dsim": d, "dsim_on_new_ack": mean(letter_flows, key, pick), "ns2": s,
                     "ratio": ratio, "tolerance": tol, "ok": bool(s) and 1 / tol <= ratio <= tol})
    rows.append({"metric": "Jain index of goodput", "dsim": jain(dsim_flows), "dsim_on_new_ack": jain(letter_flows),
                 "ns2": jain(ns2_flows), "ratio": jain(dsim_flows) / jain(ns2_flows), "tolerance": None, "ok": None})
    return {"flows": n, "aqm": aqm, "summary": rows, "dsim_flows": dsim_flows, "dsim_on_new_ack_flows": letter_flows,
            "ns2_flows": ns2_flows}


def compare_tcp(con: Console, ns2: str, flow_counts: list[int], duration_s: float, seeds: int) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in flow_counts:
            plan = Path(tmp) / f"plan-{n}.txt"
            bench.write_plan(bench.dumbbell_plan(n), plan)
            ns2_runs: dict[str, list[dict]] = {}
            for aqm in TCP_AQMS:
                con.print(f"TCP flow by flow, {n} connections, {aqm}: dsim and ns-2, {seeds} seed(s) each")
                dsim_flows = dsim_tcp(n, duration_s, aqm, seeds, "on_retransmit")
                letter_flows = dsim_tcp(n, duration_s, aqm, seeds, "on_new_ack")
                peer = NS2_AQM.get(aqm, aqm)
                if peer not in ns2_runs:
                    ns2_runs[peer] = ns2_tcp(ns2, plan, duration_s, peer, seeds)
                out.append(tcp_summary(n, aqm, dsim_flows, letter_flows, ns2_runs[peer]))
    for e in out:
        table = Table(title=f"TCP per connection, {e['flows']} connections, bottleneck {e['aqm']}: dsim SACK vs ns-2 Sack1 "
                            f"(means per flow over {seeds} seed(s), {duration_s:g} s)")
        for c in TCP_COLUMNS:
            table.add_column(c, justify="left" if c == "metric" else "right")
        for r in e["summary"]:
            table.add_row(*tcp_cells(r))
        con.print(table)
    return out


def tcp_cells(r: dict) -> list[str]:
    def fmt(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4f}" if abs(v) < 1 else f"{v:.2f}"

    tol = "" if r["tolerance"] is None else f"1/{r['tolerance']:g} - {r['tolerance']:g}"
    ok = "" if r["ok"] is None else ("yes" if r["ok"] else "NO")
    return [r["metric"], fmt(r["dsim"]), fmt(r["dsim_on_new_ack"]), fmt(r["ns2"]), f"{r['ratio']:.3f}", tol, ok]


def tcp_markdown(rows: list[dict], duration_s: float, seeds: int, date: str) -> str:
    out = [(f"TCP per connection, dsim SACK vs ns-2 2.35 Sack1, means per flow over {seeds} seed(s) of "
            f"{duration_s:g} s ({date})"), ""]
    cols = ("connections", "bottleneck", *TCP_COLUMNS)
    out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for e in rows:
        for r in e["summary"]:
            out.append("| " + " | ".join([str(e["flows"]), e["aqm"], *tcp_cells(r)]) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
