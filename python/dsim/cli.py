"""The `dsim` command.

    dsim run FILE [--seed N] [--replications R] [--jobs J] [--out DIR] [--format parquet|csv]
    dsim validate FILE ...
    dsim reproduce [--list] [NAME ...] [--full] [--out DIR] [--strict] [--jobs J]

Errors in what the user gave (a scenario, a flag) are printed as one precise line and the
command exits with status 2, never with a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .errors import DsimError, ScenarioError

EXIT_USAGE = 2


def _console() -> Console:
    con = Console(highlight=False)
    if not con.is_terminal:  # a pipe or a CI log: wide enough for the side-by-side tables
        con = Console(highlight=False, width=160)
    return con


def _err(msg: str) -> int:
    Console(stderr=True, highlight=False).print(f"[bold red]dsim: error:[/] {msg}", markup=True, soft_wrap=True)
    return EXIT_USAGE


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return v


def _seed(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"{text} must lie in [0, 2^64)")
    return v


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        self.print_usage(sys.stderr)
        raise SystemExit(_err(message))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dsim", description="Packet-level simulation of Differentiated Services mechanisms.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    r = sub.add_parser("run", help="run a scenario file and print its results")
    r.add_argument("file", help="scenario file (TOML)")
    r.add_argument("--seed", type=_seed, help="base seed (default: the scenario's)")
    r.add_argument("--replications", "-r", type=_positive_int, help="replications (default: the scenario's)")
    r.add_argument("--jobs", "-j", type=_positive_int, help="worker threads (default: all cores)")
    r.add_argument("--out", "-o", type=Path, help="folder for the tables, summary.json and pcap captures (default: results/<scenario name>)")
    r.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="table format (default: parquet)")

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("files", nargs="+", help="scenario files (TOML)")

    rep = sub.add_parser("reproduce", help="run the published experiments and compare with the documents")
    rep.add_argument("names", nargs="*", help="experiments or families to run (default: all)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--full", action="store_true", help="the documents' run lengths and replications (slow)")
    rep.add_argument("--out", "-o", type=Path, default=Path("results"), help="folder for report.md, report.json and figures")
    rep.add_argument("--strict", action="store_true", help="exit with status 1 when a claim misses")
    rep.add_argument("--jobs", "-j", type=_positive_int, help="worker threads (default: all cores)")
    return p


def cmd_run(args: argparse.Namespace) -> int:
    from .api import run
    from .scenario import Scenario

    sc = Scenario.from_toml(Path(args.file))
    out = args.out or Path("results") / sc.name
    res = run(sc, seed=args.seed, replications=args.replications, jobs=args.jobs, capture_dir=out)
    res.save(out, args.format)
    con = _console()
    print_flows(con, res)
    print_queues(con, res)
    run_t = res.run
    con.print(
        f"{len(run_t)} replication(s), {int(run_t['events'].sum()):,} events in {run_t['wall_s'].sum():.2f} s "
        f"of simulation; scenario hash {run_t['scenario_hash'].iloc[0]}. Tables in {out}/"
    )
    return 0


def _fmt(mean: float, ci: float, scale: float = 1.0, digits: int = 3) -> str:
    if mean != mean:
        return "-"
    text = f"{mean / scale:.{digits}f}"
    if ci == ci:
        text += f" ± {ci / scale:.{digits}f}"
    return text


def print_flows(con: Console, res) -> None:
    s = res.summary("flows")
    n = int(s["n"].iloc[0]) if len(s) else 0
    t = Table(title=f"Flows (mean ± 90 % CI half width over {n} replication(s))" if n > 1 else "Flows")
    for col in ("flow", "src → dst", "DSCP", "offered Mbit/s", "throughput Mbit/s", "loss %", "delay mean ms", "delay p99 ms", "jitter p90 ms"):
        t.add_column(col, justify="left" if col in ("flow", "src → dst", "DSCP") else "right")
    flows = res.flows.drop_duplicates("flow").set_index("flow")
    for _, row in s.iterrows():
        f = flows.loc[row["flow"]]
        loss = 100 * row["dropped_pkts"] / row["sent_pkts"] if row["sent_pkts"] else float("nan")
        t.add_row(
            str(row["flow"]),
            f"{f['src']} → {f['dst']}",
            str(f["dscp"]),
            _fmt(row["offered_bps"], row["offered_bps_ci"], 1e6),
            _fmt(row["throughput_bps"], row["throughput_bps_ci"], 1e6),
            "-" if loss != loss else f"{loss:.2f}",
            _fmt(row["delay_mean_ms"], row["delay_mean_ms_ci"]),
            _fmt(row["delay_p99_ms"], row["delay_p99_ms_ci"]),
            _fmt(row["jitter_p90_ms"], row["jitter_p90_ms_ci"]),
        )
    con.print(t)
    print_tcp(con, res)


def print_tcp(con: Console, res) -> None:
    """The goodput table of the TCP flows, if there are any."""
    if "transport" not in res.flows or not (res.flows["transport"] == "tcp").any():
        return
    tcp = set(res.flows.loc[res.flows["transport"] == "tcp", "flow"])
    s = res.summary("flows")
    s = s[s["flow"].isin(tcp)]
    t = Table(title="TCP flows")
    for col in ("flow", "goodput Mbit/s", "retransmits", "timeouts", "fast retransmits", "RTT mean ms", "ACKs dropped", "transfers", "completion s"):
        t.add_column(col, justify="left" if col == "flow" else "right")
    for _, row in s.iterrows():
        t.add_row(
            str(row["flow"]),
            _fmt(row["goodput_bps"], row["goodput_bps_ci"], 1e6),
            f"{row['retransmitted_pkts']:.0f}",
            f"{row['timeouts']:.0f}",
            f"{row['fast_retransmits']:.0f}",
            _fmt(row["rtt_mean_ms"], row["rtt_mean_ms_ci"], digits=1),
            f"{row['dropped_ack_pkts']:.0f}",
            f"{row['transfers']:.0f}",
            _fmt(row["completion_s"], row["completion_s_ci"]),
        )
    con.print(t)


def print_queues(con: Console, res) -> None:
    s = res.summary("queues")
    s = s[s["arrivals_pkts"] > 0]
    if s.empty:
        return
    t = Table(title="Queues with traffic")
    for col in ("port", "queue", "prec", "arrivals", "departures", "drops", "mean length pkts", "throughput Mbit/s"):
        t.add_column(col, justify="left" if col == "port" else "right")
    for _, row in s.iterrows():
        t.add_row(
            row["port"],
            str(int(row["queue"])),
            str(int(row["precedence"])),
            f"{row['arrivals_pkts']:.0f}",
            f"{row['departures_pkts']:.0f}",
            f"{row['dropped_pkts']:.0f}",
            _fmt(row["mean_len_pkts"], row["mean_len_pkts_ci"], digits=2),
            _fmt(row["throughput_bps"], row["throughput_bps_ci"], 1e6),
        )
    con.print(t)


def cmd_validate(args: argparse.Namespace) -> int:
    from .scenario import Scenario

    con = _console()
    failed = 0
    for f in args.files:
        try:
            sc = Scenario.from_toml(Path(f))
        except ScenarioError as e:
            _err(str(e))
            failed += 1
            continue
        d = sc.data
        nodes = len(d.get("nodes", {}).get("hosts", [])) + len(d.get("nodes", {}).get("routers", []))
        flows = sum(int(fl.get("count", 1)) for fl in d.get("flow", []))
        con.print(f"ok: {f} ({nodes} nodes, {len(d.get('link', []))} links, {flows} flows, hash {sc.hash()})")
    return EXIT_USAGE if failed else 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import registry, run_experiments

    if args.list:
        con = _console()
        t = Table(title="Experiments")
        for col in ("name", "families", "source", "title"):
            t.add_column(col)
        for e in registry.all():
            t.add_row(e.name, ", ".join(e.families), e.source, e.title)
        con.print(t)
        return 0
    experiments = registry.select(args.names)
    report = run_experiments(experiments, full=args.full, out=args.out, jobs=args.jobs, console=_console())
    return 1 if args.strict and report.misses() else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from . import __version__

        print(f"dsim {__version__}")
        return 0
    handlers = {"run": cmd_run, "validate": cmd_validate, "reproduce": cmd_reproduce}
    if args.command is None:
        build_parser().print_help()
        return EXIT_USAGE
    try:
        return handlers[args.command](args)
    except (ScenarioError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        return _err(str(e) if isinstance(e, ScenarioError) else f"{e.strerror}: {e.filename}")
    except KeyboardInterrupt:
        return _err("interrupted")
    except DsimError as e:
        return _err(str(e))


if __name__ == "__main__":
    sys.exit(main())
