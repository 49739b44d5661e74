"""The `dsim` command.

    dsim run FILE [--seed N] [--replications R] [--jobs J | --dask ADDR] [--out DIR] [--format parquet|csv]
                  [--all] [--record [INTERVAL]]
    dsim plot RESULTS_DIR [KIND ...] [--svg] [--out DIR]
    dsim sweep FILE [--set KEY=V1,V2,... | --set KEY=START:STOP:STEP[UNIT]]... [--zip]
               [--replications R] [--seed N] [--out DIR] [--jobs J | --dask ADDR] [--new]
    dsim validate FILE ...
    dsim replay CONFIG TRACE [--rate R] [--time-unit U] [--seed N] [--series] [--out FILE]
    dsim reproduce [--list] [NAME ...] [--full] [--out DIR] [--strict] [--jobs J | --dask ADDR]
    dsim bench [--quick] [--repeat R] [--duration S] [--only NAME ...] [--json FILE] [--save DIR]
               [--replications N] [--jobs J]
    dsim bench --scale [--flows N ...] [--duration S] [--repeat R] [--no-run] [--json FILE] [--save DIR]

ADDR is tcp://host:port (a running Dask scheduler) or local:N (a LocalCluster of N workers).

Exit status: 0 done; 1 a sweep task or an experiment failed (or, with --strict, a check's
verdict differs from its expected one);
2 errors in what the user gave (a scenario, a sweep axis, a flag), printed as one precise
line, never with a traceback; 130 interrupted (Ctrl-C; a sweep keeps its finished tasks);
141 the reader of the output went away (`dsim ... | head`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .errors import DsimError, ScenarioError, shorten
from .plot import KINDS as PLOT_KINDS

if TYPE_CHECKING:
    from rich.console import Console

    from .bench import Benchmark, Result, Run, ScaleRow
    from .executors import Executor
    from .sweep import SweepReport, SweepResults

# rich (and pandas behind the results) load only in the commands that print tables, so
# that `dsim --version`, `--help` and `validate` answer at once.

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: What a shell reports for a program that SIGPIPE ended (`git log | head`).
EXIT_BROKEN_PIPE = 141


def _console() -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich exits with status 1 here; `main` ends quietly with the status of a closed pipe.
            raise BrokenPipeError

    con = _Console(highlight=False)
    if not con.is_terminal:  # a pipe or a CI log: wide enough for the side-by-side tables
        con = _Console(highlight=False, width=160)
    return con


def _bench_console() -> Console:
    """The console of `dsim bench`: off a terminal, 200 columns, which its tables of 12
    and 14 columns need (at 160 rich cut the longest case name and a header)."""
    con = _console()
    if not con.is_terminal:
        con.width = 200
    return con


def escape(text: str) -> str:
    """`text` with what rich would read as markup escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _table(title: str, columns: list[str], left: tuple[str, ...] = ()) -> Any:
    from rich.table import Table

    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="left" if col in left else "right")
    return t


def _err(msg: str) -> int:
    # Plain text, red on a terminal: `[sweep]` or `dsim[dask]` in a message is not markup.
    # One line, whatever a file name or a value quoted in it holds (a newline, a control
    # character: escaped).
    head = "\033[1;31mdsim: error:\033[0m" if sys.stderr.isatty() else "dsim: error:"
    msg = "".join(c if c.isprintable() else repr(c)[1:-1] for c in msg)
    print(f"{head} {msg}", file=sys.stderr)
    return EXIT_USAGE


def _integer(text: str, base: int = 10) -> int:
    """A flag's integer; at most 20 digits (a 64-bit number), so that neither the parse nor
    the message about it meets Python's limit on digits."""
    digits = text.strip().lstrip("+-")
    if len(digits) > 22:
        raise argparse.ArgumentTypeError(f"{shorten(text)} is not a 64-bit integer")
    try:
        return int(text, base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shorten(text)} is not an integer") from None


def _positive_int(text: str) -> int:
    v = _integer(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return v


def _seed(text: str) -> int:
    v = _integer(text, 0)
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"{text} must lie in [0, 2^64)")
    return v


#: The limits a flag raises (docs/limits.md); the others through DSIM_MAX_* or set_limits.
LIMIT_FLAGS = ("flows", "nodes", "links", "points")


def _limit_args(p: argparse.ArgumentParser) -> None:
    for name in LIMIT_FLAGS:
        p.add_argument(
            f"--max-{name}", type=_positive_int, metavar="N", dest=f"max_{name}",
            help=f"most {name} a scenario may have (default from DSIM_MAX_{name.upper()}, else dsim's; docs/limits.md)",
        )


def _apply_limits(args: argparse.Namespace) -> None:
    from .limits import set_limits

    given = {name: getattr(args, f"max_{name}", None) for name in LIMIT_FLAGS}
    set_limits(**{k: v for k, v in given.items() if v is not None})


def _estimate_text(estimate: dict[str, int] | None) -> str:
    """The core's estimate of one run, in words: 'about 1.2 M events and 35 MB'."""
    if not estimate:
        return ""
    return f"about {_si(estimate['events'])} events and {_si(estimate['memory_bytes'], 'B')}"


def _si(n: int, unit: str = "") -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.1f} {prefix}{unit}"
    return f"{n} {unit}".rstrip()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors: one line, exit 2
        self.print_usage(sys.stderr)
        raise SystemExit(_err(message))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="dsim",
        description="Packet-level simulation of Differentiated Services mechanisms.",
        epilog=(
            "--dask ADDR: tcp://host:port joins a running Dask scheduler, local:N starts N local workers.\n"
            "Exit status: 0 done; 1 a sweep task or an experiment failed (with --strict, also a verdict\n"
            "other than expected); 2 bad input (scenario, axis, flag: one line, no traceback); 130 interrupted\n"
            "(a sweep keeps its finished tasks); 141 the reader of the output went away."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    r = sub.add_parser("run", help="run a scenario file and print its results")
    r.add_argument("file", help="scenario file (TOML)")
    r.add_argument("--seed", type=_seed, help="base seed (default: the scenario's)")
    r.add_argument("--replications", "-r", type=_positive_int, help="replications (default: the scenario's)")
    _executor_args(r)
    _limit_args(r)
    r.add_argument("--out", "-o", type=Path, help="folder for the tables, summary.json and pcap captures (default: results/<scenario name>)")
    r.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="table format (default: parquet)")
    r.add_argument("--all", action="store_true", help="print every flow and every port with traffic (default: a summary; the tables always hold every row)")
    r.add_argument(
        "--record", nargs="?", const=RECORD_ALL, metavar="INTERVAL",
        help="record time series and delay distributions for `dsim plot` (every series; INTERVAL: their "
        "resolution, e.g. 100ms; default: the window in 100 intervals); replaces the file's [record] table",
    )

    pl = sub.add_parser(
        "plot",
        help="draw the figures of a run's results (PNG, and SVG with --svg)",
        description="Draws figures from the folder `dsim run` wrote: throughput of each flow and class over time, "
        "queue length and AQM averages, cwnd / ssthresh, delay and jitter CDFs per class, conditioner colours over time. "
        "The series come from a run with --record (or a [record] table); TCP and RED series from the scenario's own "
        "`series` settings.",
    )
    pl.add_argument("results", type=Path, help="the folder `dsim run` wrote (--out), or a sweep's result store (its flows against its points)")
    pl.add_argument("kinds", nargs="*", metavar="KIND", help="figures to draw (default: every one the results have data for): " + ", ".join(PLOT_KINDS))
    pl.add_argument("--svg", action="store_true", help="also write SVG")
    pl.add_argument("--out", "-o", type=Path, help="folder for the figures (default: RESULTS/figures)")

    sw = sub.add_parser(
        "sweep",
        help="run a scenario over sweep axes into a resumable result store",
        description="Runs every point of the sweep (the file's [sweep] table and the --set axes) "
        "times every replication, each task with seed derive_seed(seed, [point, replication]), "
        "into a result store that the same command resumes.",
    )
    sw.add_argument("file", help="scenario file (TOML), with or without a [sweep] table")
    sw.add_argument(
        "--set", "-s", dest="axes", action="append", default=[], metavar="KEY=VALUES",
        help="an axis: KEY=V1,V2,... or KEY=START:STOP:STEP[UNIT] (e.g. 'flow[0].app.rate=1Mbps,2Mbps', "
        "'link[1].queue.limit=10:50:10p'); replaces a file axis of the same key; repeatable",
    )
    sw.add_argument("--zip", action="store_true", help="take the i-th value of every axis together (default: every combination)")
    sw.add_argument("--seed", type=_seed, help="base seed (default: the scenario's)")
    sw.add_argument("--replications", "-r", type=_positive_int, help="replications per point (default: the scenario's)")
    sw.add_argument("--out", "-o", type=Path, help="result store folder (default: results/<scenario name>-sweep)")
    sw.add_argument("--new", action="store_true", help="replace a store that holds another sweep")
    _executor_args(sw)
    _limit_args(sw)

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("files", nargs="+", help="scenario files (TOML)")
    _limit_args(v)

    rp = sub.add_parser("replay", help="run one mechanism over a packet trace (CSV or pcap)")
    rp.add_argument("config", help="the mechanism's table as in a scenario file (TOML), e.g. type = \"droptail\"")
    rp.add_argument("trace", help="pcap capture (IPv4), or CSV with columns time (or time_ns), size, and optionally dscp, flow, color, ecn")
    rp.add_argument("--rate", help="link rate a queue discipline feeds, e.g. 10Mbps")
    rp.add_argument("--time-unit", default="ns", choices=("ns", "us", "ms", "s"), help="unit of the trace's time column")
    rp.add_argument("--seed", type=_seed, default=1, help="seed of the mechanism's random draws")
    rp.add_argument("--out", "-o", type=Path, help="output CSV, or a .pcap (for a pcap trace: DSCP and ECN rewritten, drops removed); default: CSV on standard output")
    rp.add_argument("--series", action="store_true", help="add a queue's state after each arrival: RED / MRED average (avg, avg_unit); DSD's g, penalty, losses and waits")

    rep = sub.add_parser("reproduce", help="run the published experiments and compare with the documents")
    rep.add_argument("names", nargs="*", help="experiments or families to run (default: all)")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--full", action="store_true", help="the documents' run lengths and replications (slow)")
    rep.add_argument("--out", "-o", type=Path, default=Path("results"), help="folder for report.md, report.json and figures")
    rep.add_argument("--strict", action="store_true", help="exit with status 1 when a verdict differs from the expected one: a miss not listed, or a listed miss that passes (an experiment that fails to run always does)")
    _executor_args(rep)

    b = sub.add_parser(
        "bench",
        help="time dsim on its benchmark scenarios (wall time, events/s, packets/s, peak memory)",
        description="Runs the benchmark suite (seed 002 dumbbell at 50, 100 and 200 TCP flows and with 50 CUBIC flows, a CBR chain, "
        "the seed 004 network), each scenario in a child process, and prints wall time, simulated seconds "
        "per wall second, events per second, packets across the bottleneck per second and peak memory; "
        "then times replications run sequentially and in parallel. See docs/performance.md.",
    )
    b.add_argument("--quick", action="store_true", help="10 s of simulated time per scenario instead of 100 s, one repetition")
    b.add_argument("--repeat", type=_positive_int, help="runs per scenario (default 3, 1 with --quick); the table shows medians")
    b.add_argument("--duration", type=_duration_s, help="simulated time per scenario, e.g. 20s (overrides --quick's 10 s)")
    b.add_argument("--only", nargs="+", metavar="NAME", help="run only these scenarios")
    b.add_argument("--json", type=Path, help="write the measurements and the machine's description to this JSON file")
    b.add_argument("--save", type=Path, help="write the benchmark scenario files to this folder")
    b.add_argument("--replications", type=int, help="replications for the sequential / parallel comparison (default 4, 2 with --quick; 0 skips it)")
    b.add_argument("--jobs", "-j", type=_positive_int, help="threads for the parallel replications (default: all cores)")
    b.add_argument(
        "--scale", action="store_true",
        help="instead of the suite, the dumbbell grown with its load (N flows, N Mbit/s bottleneck, buffers and RIO "
        "thresholds scaled) at 50 to 10,000 flows: events, ns per event and per bottleneck packet, peak memory and "
        "memory per flow, the build / loop / results phases, and the same file through `dsim run`",
    )
    b.add_argument("--flows", nargs="+", type=_positive_int, metavar="N", help="with --scale: these sizes only (default: 50 200 500 1000 2000 5000 10000)")
    b.add_argument("--no-run", action="store_true", help="with --scale: skip the `dsim run` of each size")
    return p


def _duration_s(text: str) -> float:
    """A duration option in seconds, read as a scenario's durations are (dsim.units)."""
    from .units import duration_ns

    try:
        ns = duration_ns(text.strip(), "--duration")
    except ScenarioError as e:
        raise argparse.ArgumentTypeError(e.rule) from None
    if ns <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be positive")
    return ns / 1e9


def _executor_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--jobs", "-j", type=_positive_int, help="local worker threads (default: all cores; 1 runs in this process, one task after the other)")
    g.add_argument("--dask", metavar="ADDR", help="run on Dask: tcp://host:port joins a running scheduler, local:N starts a LocalCluster of N workers")


def _executor(args: argparse.Namespace) -> Executor:
    from .executors import make_executor

    return make_executor(f"dask:{args.dask}" if args.dask else None, args.jobs)


def _out_dir(given: Path | None, name: str, suffix: str = "") -> Path:
    """The output folder (`--out`, or results/<scenario name><suffix>), checked before
    anything runs."""
    if given is None:
        if name in ("", ".", "..") or "/" in name or "\\" in name:
            raise ScenarioError(
                f"name = {name!r}: the default output folder results/<name> must be a folder inside results/; give --out, or a name without / or ..",
                "name", repr(name), "a name usable as a folder name",
            )
        given = Path("results") / f"{name}{suffix}"
    if given.exists() and not given.is_dir():
        raise ScenarioError(f"--out {given}: exists and is not a folder", "--out", str(given), "the output is a folder")
    return given


def cmd_run(args: argparse.Namespace) -> int:
    from .api import run
    from .scenario import Scenario

    sc = Scenario.from_toml(Path(args.file))  # validated: the run does not build it twice
    record = None if args.record is None else True if args.record == RECORD_ALL else args.record
    con = _console()
    out = _out_dir(args.out, sc.name)
    con.print(f"{sc.name}: one replication is {_estimate_text(sc.estimate)} (estimated)", soft_wrap=True, highlight=False)
    started = time.perf_counter()
    with _executor(args) as ex:
        res = run(
            sc, seed=args.seed, replications=args.replications, executor=ex, progress=True, console=con, capture_dir=out,
            record=record, validate=False,
        )
    elapsed = time.perf_counter() - started
    res.save(out, args.format)
    print_run(con, res, every_row=args.all)
    run_t = res.run
    recorded = f"; recorded {', '.join(res.recorded)} (dsim plot {out})" if res.recorded else ""
    con.print(
        f"{len(run_t)} replication(s), {int(run_t['events'].sum()):,} events in {elapsed:.2f} s "
        f"({run_t['wall_s'].sum():.2f} s of simulation summed over the replications); "
        f"scenario hash {run_t['scenario_hash'].iloc[0]}. Tables in {out}/{recorded}",
        soft_wrap=True,
    )
    return 0


#: `dsim run --record` without an interval: every series, 100 intervals over the window.
RECORD_ALL = "all"
#: Rows of the flows table `dsim run` prints without --all: all of them up to this many...
FLOWS_SHOWN = 20
#: ... else the flows with the highest throughput and those with the lowest.
TOP_FLOWS, BOTTOM_FLOWS = 10, 5
#: Ports in the bottleneck table without --all.
PORTS_SHOWN = 5
#: Conditioners in the colour table without --all (those that metered most).
CONDITIONERS_SHOWN = 10


def _fmt(mean: float, ci: float, scale: float = 1.0, digits: int = 3) -> str:
    if math.isnan(mean):
        return "-"
    text = f"{mean / scale:.{digits}f}"
    if not math.isnan(ci):
        text += f" ± {ci / scale:.{digits}f}"
    return text


def _count(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:,.0f}"


def print_run(con: Console, res: Any, every_row: bool = False) -> None:
    """What `dsim run` prints: the classes, the bottleneck ports and their queues, the
    flows (every one up to FLOWS_SHOWN, else the top and the bottom), the TCP flows and
    the conditioners; with `every_row`, every flow and every port with traffic. Each
    table is computed for all its rows at once (no Python per row but the printed ones)."""
    n = res.replications
    if n > 1:
        con.print(f"{res.name}: {n} replications; each number is their mean ± the half width of its 90 % Student-t interval", soft_wrap=True)
    print_classes(con, res)
    ports = res.ports()
    shown = ports if every_row else ports.head(PORTS_SHOWN)
    print_ports(con, shown, len(ports))
    print_queues(con, res, list(shown["port"]))
    flows = res.summary("flows")
    print_flows(con, res, flows, every_row)
    print_conditioners(con, res, every_row)


def print_classes(con: Console, res: Any) -> None:
    s = res.classes()
    if s.empty:
        return
    t = _table(
        "Classes: the flows of each DSCP the sources set",
        ["DSCP", "flows", "offered Mbit/s", "throughput Mbit/s", "loss %", "delay mean ms", "worst flow's delay p99 ms", "worst flow's jitter p90 ms"],
        left=("DSCP",),
    )
    for row in s.itertuples(index=False):
        t.add_row(
            res.class_label(row.dscp), _count(row.flows),
            _fmt(row.offered_bps, row.offered_bps_ci, 1e6), _fmt(row.throughput_bps, row.throughput_bps_ci, 1e6),
            _fmt(row.loss_pct, row.loss_pct_ci, digits=2), _fmt(row.delay_mean_ms, row.delay_mean_ms_ci),
            _fmt(row.delay_p99_ms, row.delay_p99_ms_ci), _fmt(row.jitter_p90_ms, row.jitter_p90_ms_ci),
        )
    con.print(t)


def print_ports(con: Console, s: Any, total: int) -> None:
    if s.empty:
        return
    which = f"the {len(s)} of {total:,} ports with traffic that dropped most, then queued longest" if len(s) < total else "every port with traffic, most drops first"
    t = _table(
        f"Ports: {which}",
        ["port", "arrivals pkts", "throughput Mbit/s", "drops pkts", "loss %", "CE marks pkts", "mean queue pkts"],
        left=("port",),
    )
    for row in s.itertuples(index=False):
        t.add_row(
            str(row.port), _count(row.arrivals_pkts), _fmt(row.throughput_bps, row.throughput_bps_ci, 1e6),
            _count(row.dropped_pkts), _fmt(row.loss_pct, row.loss_pct_ci, digits=2), _count(row.marks_pkts),
            _fmt(row.mean_len_pkts, row.mean_len_pkts_ci, digits=2),
        )
    con.print(t)


def print_queues(con: Console, res: Any, ports: list[str]) -> None:
    """The queues and precedences of those of `ports` that have more than one."""
    q = res.queues
    q = q[q["port"].isin(ports)]
    classes = q.groupby("port").size() // res.replications
    ports = [p for p in ports if classes.get(p, 0) > 1]
    if not ports:
        return
    s = res.summary("queues")
    s = s[s["port"].isin(ports) & (s["arrivals_pkts"] > 0)]
    order = {p: i for i, p in enumerate(ports)}
    s = s.sort_values("port", key=lambda c: c.map(order), kind="stable")
    t = _table(
        "Queues and precedences of these ports",
        ["port", "queue", "prec", "arrivals pkts", "departures pkts", "drops pkts", "mean length pkts", "throughput Mbit/s"],
        left=("port",),
    )
    for row in s.itertuples(index=False):
        t.add_row(
            str(row.port), str(int(row.queue)), str(int(row.precedence)), _count(row.arrivals_pkts), _count(row.departures_pkts),
            _count(row.dropped_pkts), _fmt(row.mean_len_pkts, row.mean_len_pkts_ci, digits=2), _fmt(row.throughput_bps, row.throughput_bps_ci, 1e6),
        )
    con.print(t)


def _shown_flows(s: Any, every_row: bool) -> tuple[Any, str]:
    """The rows of the flow summary `s` to print, and what they are."""
    if every_row or len(s) <= FLOWS_SHOWN:
        return s, "Flows"
    top = s.nlargest(TOP_FLOWS, "throughput_bps", keep="first")
    bottom = s.drop(top.index).nsmallest(BOTTOM_FLOWS, "throughput_bps", keep="first")
    what = f"Flows: the {TOP_FLOWS} with the highest throughput and the {BOTTOM_FLOWS} with the lowest, of {len(s):,} (--all prints every one)"
    return s.loc[list(top.index) + list(bottom.index)], what


def print_flows(con: Console, res: Any, s: Any, every_row: bool) -> None:
    shown, what = _shown_flows(s, every_row)
    ends = res.flows.drop_duplicates("flow").set_index("flow").loc[shown["flow"], ["src", "dst", "dscp", "transport"]]
    t = _table(
        what,
        ["flow", "src → dst", "DSCP", "offered Mbit/s", "throughput Mbit/s", "loss %", "delay mean ms", "delay p99 ms", "jitter p90 ms"],
        left=("flow", "src → dst", "DSCP"),
    )
    for row, (src, dst, dscp, _) in zip(shown.itertuples(index=False), ends.itertuples(index=False), strict=True):
        loss = 100 * row.dropped_pkts / row.sent_pkts if row.sent_pkts else float("nan")
        t.add_row(
            str(row.flow), f"{src} → {dst}", res.class_label(dscp),
            _fmt(row.offered_bps, row.offered_bps_ci, 1e6), _fmt(row.throughput_bps, row.throughput_bps_ci, 1e6),
            "-" if math.isnan(loss) else f"{loss:.2f}",
            _fmt(row.delay_mean_ms, row.delay_mean_ms_ci), _fmt(row.delay_p99_ms, row.delay_p99_ms_ci), _fmt(row.jitter_p90_ms, row.jitter_p90_ms_ci),
        )
    con.print(t)
    tcp = shown[(ends["transport"] == "tcp").to_numpy()]
    if not tcp.empty:
        print_tcp(con, tcp, what.replace("Flows", "TCP flows", 1))


def print_tcp(con: Console, s: Any, what: str) -> None:
    """The goodput table of the TCP flows among those printed."""
    t = _table(
        what,
        ["flow", "goodput Mbit/s", "retransmits", "timeouts", "fast retransmits", "RTT mean ms", "ACKs dropped", "transfers", "completion s"],
        left=("flow",),
    )
    for row in s.itertuples(index=False):
        t.add_row(
            str(row.flow), _fmt(row.goodput_bps, row.goodput_bps_ci, 1e6), f"{row.retransmitted_pkts:.0f}", f"{row.timeouts:.0f}",
            f"{row.fast_retransmits:.0f}", _fmt(row.rtt_mean_ms, row.rtt_mean_ms_ci, digits=1), f"{row.dropped_ack_pkts:.0f}",
            f"{row.transfers:.0f}", _fmt(row.completion_s, row.completion_s_ci),
        )
    con.print(t)


def print_conditioners(con: Console, res: Any, every_row: bool) -> None:
    s = res.conditioner_colors()
    if s.empty:
        return
    total = s.groupby("conditioner", sort=False)["pkts"].sum()
    which = "a per-flow conditioner summed over its flows"
    if not every_row and len(total) > CONDITIONERS_SHOWN:
        busiest = total.nlargest(CONDITIONERS_SHOWN, keep="first").index
        s = s[s["conditioner"].isin(busiest)]
        which = f"the {CONDITIONERS_SHOWN} of {len(total):,} that metered most packets (--all prints every one); {which}"
    t = _table(
        f"Conditioners: packets per colour, {which}",
        ["conditioner", "colour", "pkts", "share %", "remarked pkts", "demoted pkts", "dropped pkts"],
        left=("conditioner", "colour"),
    )
    for row in s.itertuples(index=False):
        t.add_row(
            str(row.conditioner), str(row.color), _count(row.pkts), _fmt(row.share_pct, row.share_pct_ci, digits=1),
            _count(row.remarked_pkts), _count(row.demoted_pkts), _count(row.dropped_pkts),
        )
    con.print(t)


def cmd_plot(args: argparse.Namespace) -> int:
    from .plot import write_figures, write_sweep_figure
    from .results import Results

    out = args.out or args.results / "figures"
    if (args.results / "manifest.json").exists():  # a sweep's result store
        from .sweep import load

        if args.kinds:
            return _err(f"{args.results}: a sweep has one figure (its flows against its points); give no KIND")
        written = write_sweep_figure(load(args.results), out, svg=args.svg)
    else:
        written = write_figures(Results.load(args.results), args.kinds, out, svg=args.svg)
    if not written:
        return _err(f"{args.results}: nothing to draw; run with --record (or a [record] table), or give TCP / RED queues a series")
    for path in written:
        print(f"wrote {path}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from .axes import design_for, parse_cli_axis
    from .scenario import Scenario

    sc = Scenario.from_toml(Path(args.file))
    axes = [parse_cli_axis(a) for a in args.axes]
    design_for(sc, axes, "zip" if args.zip else None)  # bad axes refused before pandas loads
    out = _out_dir(args.out, sc.name, "-sweep")
    from .sweep import SweepInterrupted, load, run_sweep

    con = _console()

    def started(report: SweepReport, ex: Executor) -> None:
        con.print(
            f"Sweep of {sc.name}: {report.points} point(s) x {report.replications} replication(s) = {report.total} tasks "
            f"on {ex.describe()}; store {out}/"
            + (f"; {report.reused} task(s) already done" if report.reused else ""),
            soft_wrap=True,
        )
        if report.recovered is not None:
            con.print(
                f"[yellow]{out}/manifest.json was damaged ({escape(report.recovered)}): rebuilt from the task files, "
                f"{report.reused} verified and kept[/]", soft_wrap=True,
            )
        for point, rep, why in report.redone:
            con.print(f"[yellow]redoing point {point} replication {rep}: its file is not usable ({escape(why)})[/]", soft_wrap=True)
        if report.refused:
            con.print(f"[red]{len(report.refused)} point(s) refused by the validator (their tasks fail, the others run)[/]")
        if sc.data.get("capture"):
            con.print(escape("note: a sweep writes no packet captures; the [[capture]] entries are for `dsim run`"), soft_wrap=True)

    try:
        with _executor(args) as ex:
            report = run_sweep(
                sc, axes, mode="zip" if args.zip else None, replications=args.replications, seed=args.seed,
                out=out, executor=ex, new=args.new, progress=True, console=con, on_start=started,
            )
    except SweepInterrupted as e:
        _err(f"{e}; run the same command again to resume")
        return EXIT_INTERRUPTED
    print_sweep(con, load(out), report)
    return EXIT_FAILED if report.failed else 0


def print_sweep(con: Console, res: SweepResults, report: SweepReport) -> None:
    flows = res.tables.get("flows")
    s = res.summary("flows") if flows is not None and len(flows) else None
    if s is not None and len(s):
        t = _table(
            "Flows per point (mean ± 90 % CI half width over replications)",
            ["point", *res.axes, "flow", "n", "throughput Mbit/s", "loss %", "delay mean ms"],
            left=(*res.axes, "flow"),
        )
        limit = 60
        for _, row in s.head(limit).iterrows():
            loss = 100 * row["dropped_pkts"] / row["sent_pkts"] if row["sent_pkts"] else float("nan")
            t.add_row(
                str(row["point"]), *(str(row[a]) for a in res.axes), str(row["flow"]), str(row["n"]),
                _fmt(row["throughput_bps"], row["throughput_bps_ci"], 1e6),
                "-" if math.isnan(loss) else f"{loss:.2f}",
                _fmt(row["delay_mean_ms"], row["delay_mean_ms_ci"]),
            )
        con.print(t)
        if len(s) > limit:
            con.print(f"({len(s) - limit} more rows: dsim.load({str(report.path)!r}).summary('flows'))")
    if report.failed:
        con.print(f"[bold red]{len(report.failed)} task(s) failed:[/]")
        by_error: dict[str, list[tuple[int, int]]] = {}
        for f in report.failed:
            by_error.setdefault(f["error"], []).append((f["point"], f["replication"]))
        for error, where in by_error.items():
            points = sorted({p for p, _ in where})
            label = ", ".join(f"{k} = {res.points.loc[res.points['point'] == points[0], k].iloc[0]}" for k in res.axes)
            more = f" and {len(points) - 1} other point(s)" if len(points) > 1 else ""
            con.print(f"  point {points[0]} ({escape(label)}){more}, {len(where)} task(s): {escape(error)}", soft_wrap=True)
    done = report.total - len(report.failed)
    con.print(
        f"{report.total} task{'s' if report.total != 1 else ''}: {done} done ({report.ran} now, {report.reused} from the store), {len(report.failed)} failed; "
        f"{report.wall_s:.2f} s. Results in {report.path}/ (dsim.load({str(report.path)!r}))",
        soft_wrap=True,
    )


def cmd_validate(args: argparse.Namespace) -> int:
    from .scenario import Scenario

    failed = 0
    for f in args.files:
        try:
            sc = Scenario.from_toml(Path(f))
        except ScenarioError as e:
            _err(str(e))
            failed += 1
            continue
        except OSError as e:  # the next files still get checked
            _err(f"{e.strerror}: {e.filename}")
            failed += 1
            continue
        d = sc.data
        nodes = len(d.get("nodes", {}).get("hosts", [])) + len(d.get("nodes", {}).get("routers", []))
        flows = sum(int(fl.get("count", 1)) for fl in d.get("flow", []))
        line = f"ok: {f} ({nodes} nodes, {len(d.get('link', []))} links, {flows} flows, hash {sc.hash()}); one run: {_estimate_text(sc.estimate)}"
        if "sweep" in d:
            from .axes import prepare

            try:
                _, design, points, refused, _, _ = prepare(sc)
            except DsimError as e:
                _err(str(e))
                failed += 1
                continue
            for i, why in refused.items():
                _err(f"{f}: sweep point {i} ({points[i].label()}): {why}")
            failed += 1 if refused else 0
            n = len(design.axes)
            line += f"; sweep of {len(points)} point(s) over {n} {'axis' if n == 1 else 'axes'} ({design.mode})"
            if refused:
                continue
        print(line, flush=True)
    return EXIT_USAGE if failed else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import is_pcap, read_trace, replay, write_pcap

    try:
        out = replay(Path(args.config), read_trace(args.trace), rate=args.rate, seed=args.seed, time_unit=args.time_unit, series=args.series)
    except ScenarioError as e:
        if e.path == "rate" and e.line is None:  # the --rate flag, not a key of the file
            flag = "--rate" if args.rate is None else f"--rate {args.rate}"
            raise ScenarioError(f"{flag}: {e.rule}", "--rate", args.rate, e.rule) from None
        raise e.in_file(args.trace if e.path.startswith("trace") else args.config) from None
    counts = f"{len(out)} packets, {int(out['dropped'].sum())} dropped, {int(out['marked'].sum())} marked"
    if args.out and is_pcap(args.out):
        if not is_pcap(args.trace):
            raise ScenarioError(f"--out {args.out}: a pcap output needs a pcap trace to rewrite", "--out", str(args.out), "pcap in, pcap out")
        n = write_pcap(args.trace, args.out, out)
        _console().print(f"{counts}; {n} written to {args.out}")
    elif args.out:
        out.to_csv(args.out, index=False)
        _console().print(f"{counts}; written to {args.out}")
    else:
        out.to_csv(sys.stdout, index=False)
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import registry, run_experiments

    if args.list:
        con = _console()
        cols = ["name", "family", "source", "title"]
        t = _table("Experiments", cols, left=tuple(cols))
        for e in registry.all():
            t.add_row(e.name, e.family, e.source, e.title)
        con.print(t)
        return 0
    experiments = registry.select(args.names)
    with _executor(args) as ex:
        report = run_experiments(experiments, full=args.full, out=args.out, jobs=args.jobs, executor=ex, console=_console())
    return 1 if report.errors() or (args.strict and report.unexpected()) else 0


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    from . import bench
    from .executors import cores

    if args.duration is not None and args.duration <= 1.0:
        return _err(f"--duration {args.duration:g}s: must be longer than 1s (the dumbbell's connections start over the first second)")
    if args.scale:
        return cmd_bench_scale(args)
    if args.flows or args.no_run:
        return _err(f"{'--flows' if args.flows else '--no-run'}: only with --scale")
    benchmarks = bench.suite(quick=args.quick, duration_s=args.duration)
    if args.only:
        names = {b.name for b in benchmarks}
        unknown = [n for n in args.only if n not in names]
        if unknown:
            return _err(f"--only {' '.join(unknown)}: no such benchmark; choose from {', '.join(sorted(names))}")
        benchmarks = [b for b in benchmarks if b.name in args.only]
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for b in benchmarks:
            (args.save / f"{b.name}.toml").write_text(b.toml)
    repeat = args.repeat or (1 if args.quick else 3)
    reps_n = args.replications if args.replications is not None else (2 if args.quick else 4)
    if reps_n < 0:
        return _err(f"--replications {reps_n}: must be 0 (skip) or more")
    jobs = args.jobs or cores()
    con = _bench_console()
    info = bench.machine_info()
    con.print(f"dsim {info['dsim']} ({info['build']}) on {info['machine']}; {info['date']}; load average {info['load_avg_1_5_15']}", soft_wrap=True)
    start = time.perf_counter()

    def on_run(b: Benchmark, r: int, run: Run) -> None:
        con.print(
            f"  {b.name} (run {r + 1}/{repeat}): {run.wall_s:.2f} s wall, {run.events / max(run.run_s, 1e-9) / 1e6:.1f} M events/s, "
            f"{run.maxrss_mb:.1f} MB", highlight=False,
        )

    results = bench.run_suite(benchmarks, repeat, on_run=on_run)
    print_bench(con, results)
    reps = None
    if reps_n > 0:
        b = bench.dumbbell(50, benchmarks[0].simulated_s if args.duration or args.quick else 100.0)
        con.print(f"Replications: {reps_n} x {b.name} with 1 thread, then with {jobs} ...")
        reps = bench.replications_speedup(b, reps_n, jobs)
        con.print(
            f"{reps_n} replications of {b.name}: {reps.sequential_s:.2f} s with 1 thread, {reps.parallel_s:.2f} s with {jobs} "
            f"threads: speed-up {reps.speedup:.2f}; tables identical: {'yes' if reps.identical else '[bold red]NO[/]'}",
            soft_wrap=True,
        )
    info["load_avg_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]
    con.print(f"Total {time.perf_counter() - start:.1f} s; load average after {info['load_avg_1_5_15_after']}.")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(bench.to_json(results, info, reps), indent=2) + "\n")
        con.print(f"Measurements in {args.json}")
    return 0 if reps is None or reps.identical else EXIT_FAILED


def cmd_bench_scale(args: argparse.Namespace) -> int:
    import json

    from . import bench

    if args.only or args.quick:
        return _err(f"{'--only' if args.only else '--quick'}: not with --scale (choose the sizes with --flows, the simulated time with --duration)")
    benchmarks = bench.scale_suite(args.flows or bench.SCALE_FLOWS, args.duration)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for b in benchmarks:
            (args.save / f"{b.name}.toml").write_text(b.toml)
    con = _bench_console()
    info = bench.machine_info()
    con.print(f"dsim {info['dsim']} ({info['build']}) on {info['machine']}; {info['date']}; load average {info['load_avg_1_5_15']}", soft_wrap=True)
    start = time.perf_counter()

    def on_row(row: ScaleRow) -> None:
        s = row.summary()
        front = "" if row.front is None else f"; dsim run {row.front.cpu_s:.2f} s CPU"
        con.print(f"  {s['name']}: {s['events'] / 1e6:.1f} M events, {s['ns_per_event']:.0f} ns/event, {s['peak_rss_mb']:.0f} MB{front}", highlight=False)

    rows = bench.run_scale(benchmarks, args.repeat or 1, front=not args.no_run, on_row=on_row)
    print_scale(con, rows)
    info["load_avg_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]
    con.print(f"Total {time.perf_counter() - start:.1f} s; load average after {info['load_avg_1_5_15_after']}.")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(bench.scale_to_json(rows, info), indent=2) + "\n")
        con.print(f"Measurements in {args.json}")
    return 0


def print_scale(con: Console, rows: list[ScaleRow]) -> None:
    front = any(r.front is not None for r in rows)
    t = _table(
        "dsim bench --scale: N flows, N Mbit/s bottleneck (medians)",
        ["flows", "simulated s", "events", "build s", "loop s", "results s", "ns/event", "ns/bottleneck pkt", "peak MB",
         "KB/flow", *(["dsim run s", "dsim run CPU s", "dsim run MB", "run / sim CPU"] if front else [])],
    )
    for row in rows:
        s = row.summary(rows[0])
        cells = [
            f"{s['flows']:,}", f"{s['simulated_s']:g}", f"{s['events'] / 1e6:.1f} M", f"{s['build_s']:.3f}", f"{s['loop_s']:.2f}",
            f"{s['results_s']:.3f}", f"{s['ns_per_event']:.0f}", f"{s['ns_per_bottleneck_pkt']:.0f}", f"{s['peak_rss_mb']:.0f}",
            "-" if math.isnan(s["rss_kb_per_flow"]) else f"{s['rss_kb_per_flow']:.1f}",
        ]
        if front:
            cells += ["-"] * 4 if row.front is None else [
                f"{s['run_wall_s']:.2f}", f"{s['run_cpu_s']:.2f}", f"{s['run_peak_rss_mb']:.0f}", f"{s['run_cpu_over_sim_cpu']:.2f}x",
            ]
        t.add_row(*cells)
    con.print(t)
    con.print(
        "build / loop / results s: wall time of the three phases in the benchmark child (which loads the compiled module "
        "alone); ns/event and ns/bottleneck pkt: the loop's CPU time over the events, over the packets that crossed R0->R1; "
        "peak MB: the child's maximum resident set; KB/flow: (peak - the first size's peak) / (flows - its flows); "
        "dsim run: `dsim run FILE -r 1` on the same file (the front: Python, the tables in Parquet, the summary printed), "
        "as many times as the child, the run of median CPU kept; run / sim CPU: its CPU time over the child's median.", soft_wrap=True,
    )


def print_bench(con: Console, results: list[Result]) -> None:
    t = _table(
        "dsim bench (medians; wall time min-max over the repetitions)",
        ["scenario", "flows", "simulated s", "wall s", "CPU s", "sim s / wall s", "events", "M events/s",
         "M events/CPU s", "bottleneck pkts", "k pkts/s", "peak MB"],
        left=("scenario",),
    )
    for r in results:
        s = r.summary()
        spread = f" [{s['wall_s_min']:.2f}-{s['wall_s_max']:.2f}]" if s["repeats"] > 1 else ""
        t.add_row(
            s["name"], str(s["flows"]), f"{s['simulated_s']:g}", f"{s['wall_s_median']:.2f}{spread}", f"{s['cpu_s_median']:.2f}",
            f"{s['sim_s_per_wall_s']:.1f}", f"{s['events'] / 1e6:.1f} M", f"{s['events_per_s'] / 1e6:.1f}",
            f"{s['events_per_cpu_s'] / 1e6:.1f}",
            f"{s['bottleneck_pkts']:,}", f"{s['bottleneck_pkts_per_s'] / 1e3:.0f}", f"{s['peak_rss_mb_median']:.1f}",
        )
    con.print(t)
    con.print(
        "wall s: the child process from start to exit (Python start-up, build, run, result tables); CPU s: its user + system time; "
        "M events/s: events over the event loop's wall time; M events/CPU s: over its thread's CPU time (what the loop costs on a busy machine); k pkts/s: packets across the bottleneck per wall second; "
        "peak MB: the child's maximum resident set (ru_maxrss).", soft_wrap=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from . import __version__

        print(f"dsim {__version__}")
        return 0
    handlers = {"run": cmd_run, "plot": cmd_plot, "sweep": cmd_sweep, "validate": cmd_validate, "replay": cmd_replay, "reproduce": cmd_reproduce, "bench": cmd_bench}
    if args.command is None:
        build_parser().print_help()
        return EXIT_USAGE
    try:
        _apply_limits(args)
        return handlers[args.command](args)
    except ScenarioError as e:
        return _err(str(e))
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of our output went away (`dsim replay ... | head`): stop quietly, as
        # Unix tools do. Python's own recipe (docs of the signal module, "Note on
        # SIGPIPE"): point stdout at /dev/null so the flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as e:  # a file missing, unreadable or unwritable, a name too long, a full disk
        where = e.filename if e.filename is not None else ""
        return _err(f"{e.strerror or e}: {where}" if where else str(e.strerror or e))
    except DsimError as e:
        return _err(str(e))


if __name__ == "__main__":
    sys.exit(main())
