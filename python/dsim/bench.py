"""`dsim bench`: how fast dsim runs a fixed set of scenarios, and how much memory it takes.

The suite (generated here, deterministic; `dsim bench --save DIR` writes the files):

- ``dumbbell-50``, ``dumbbell-100``, ``dumbbell-200``: seed 002's network (figure 1 of
  draft-ibanez-diffserv-assured-eval-00): N long-lived TCP SACK connections, each between
  its own pair of hosts, 10 Mbit/s access links, a 50 Mbit/s bottleneck, 576-byte packets,
  propagation round-trip times spread evenly over 50-150 ms, starts spread evenly over the
  first second; half the connections (the even ones) are Assured: a token-bucket profiler
  (1 Mbit/s, 20 KB) at the host marks their in-profile packets AF11; RIO at the bottleneck
  (OUT 420/840/0.05, IN 500/840/0.02, wq 0.002, 1050 packets; section 2.1.2 with its IN/OUT
  labels put right: a defect of the document known before the implementation). TCP configured as ns-2's agents behave (no
  delayed ACKs, packet counting, initial window 2, RTO clock 10 ms, initial RTO 3 s) with a
  100-segment window, so that `benchmarks/peers/` can run the same network in ns-2 and ns-3.
- ``dumbbell-50-cubic``: the same network without profilers, 50 CUBIC connections (RFC
  9438, with delayed ACKs, byte counting and a 1 MB window, so that CUBIC's window function
  rather than the receiver's window limits them) through a 1050-packet drop-tail bottleneck.
- ``dumbbell-50-cubic-fq-codel``: the same CUBIC connections through FQ-CoDel (its
  defaults, the same packet limit): the two modern mechanisms together.
- ``cbr-chain``: 50 CBR flows at 90 % load through a line of 10 routers at 100 Mbit/s:
  nothing but packets moving through ports, the event loop's own cost.
- ``rashaper-100``: seed 004's network (RFC 2963 appendix A.1, figure A.1): ten LANs of
  ten SACK workstations (MSS 1460 B, 64 KB window) behind customer routers with a trTCM
  (CIR 2-10 Mbit/s, PIR = 2 CIR, CBS 3 KB, PBS 6 KB) marking AF11/AF12/AF13, 34 Mbit/s
  to the edge, a 70 Mbit/s bottleneck with three-colour RIO (green 400/800/0.02, yellow
  200/400/0.05, red 100/200/0.1, wq 0.002), 100 TCP connections.

Each scenario runs in a child process that loads only the compiled module (no pandas, no
pyarrow) and runs one replication (build, event loop, result tables). The parent reads
the child's peak resident memory (``ru_maxrss`` from ``wait4``) and CPU time, and the
child reports the events handled and the packets that crossed the scenario's bottleneck.
With ``--repeat R`` each scenario runs R times; the table shows medians and the spread
(min-max) of the wall time.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Benchmark",
    "DumbbellFlow",
    "ProcessMeasurement",
    "cbr_chain",
    "dumbbell",
    "dumbbell_plan",
    "machine_info",
    "measure_process",
    "rashaper",
    "run_benchmark",
    "run_scale",
    "run_suite",
    "scale_suite",
    "suite",
]

SEED = 1


@dataclass(frozen=True)
class Benchmark:
    """One benchmark scenario: its TOML and the port whose packets it counts."""

    name: str
    title: str
    toml: str
    #: The port ("FROM->TO") whose departures are "packets across the bottleneck".
    bottleneck: str
    simulated_s: float
    flows: int


# ---------------------------------------------------------------------------------------
# Seed 002 dumbbell


@dataclass(frozen=True)
class DumbbellFlow:
    """Connection i of the dumbbell: what the peers' scripts read from the plan file."""

    index: int
    assured: bool
    #: One-way delay of the source host's access link, in microseconds.
    src_delay_us: int
    #: Start time, in microseconds.
    start_us: int

    @property
    def rtt_us(self) -> int:
        """Propagation round trip: 2 (access + bottleneck + destination access)."""
        return 2 * (self.src_delay_us + int(DUMBBELL["bottleneck_delay_us"]) + int(DUMBBELL["dst_delay_us"]))


#: The dumbbell's fixed parameters (the peers' scripts take the same values).
DUMBBELL: dict[str, Any] = {
    "access_rate_bps": 10_000_000,
    "bottleneck_rate_bps": 50_000_000,
    "bottleneck_delay_us": 5_000,
    "dst_delay_us": 2_000,
    "mss": 536,  # payload: 536 + 40 header bytes = 576-byte packets
    "window_pkts": 100,  # receiver window in segments (53 600 bytes)
    "access_limit_pkts": 100,
    "bottleneck_limit_pkts": 1050,
    "rio_in": (500, 840, 0.02),
    "rio_out": (420, 840, 0.05),
    "wq": 0.002,
    "profile_rate_bps": 1_000_000,
    "profile_depth_bytes": 20_000,
}


def dumbbell_plan(flows: int) -> list[DumbbellFlow]:
    """The connections of the N-flow dumbbell: round-trip times spread evenly over
    50-150 ms (integer microseconds), starts spread evenly over the first second, the even
    connections Assured."""
    plan = []
    fixed = DUMBBELL["bottleneck_delay_us"] + DUMBBELL["dst_delay_us"]
    for i in range(flows):
        rtt_us = 50_000 + (100_000 * i) // max(flows - 1, 1)
        plan.append(DumbbellFlow(i, i % 2 == 0, rtt_us // 2 - fixed, (1_000_000 * i) // flows))
    return plan


def write_plan(plan: Sequence[DumbbellFlow], path: Path) -> None:
    """The plan as the peers' scripts read it: one line per connection,
    ``index assured src_delay_us start_us``."""
    lines = [f"{f.index} {int(f.assured)} {f.src_delay_us} {f.start_us}" for f in plan]
    path.write_text("\n".join(lines) + "\n")


#: The dumbbell's variants by `aqm`: (the scenario's description, the table's title).
DUMBBELL_VARIANTS = {
    "rio": ("RIO with token-bucket profilers on half", "RIO + token-bucket profilers"),
    "red": ("RED", "RED"),
    "fq_codel": ("FQ-CoDel", "FQ-CoDel"),
    "cubic": ("CUBIC over drop-tail", "CUBIC, drop-tail"),
    "cubic_fq_codel": ("CUBIC over FQ-CoDel", "CUBIC, FQ-CoDel"),
}


#: The flows of the dumbbell whose bottleneck and buffers `scaled` dumbbells multiply.
SCALE_BASE_FLOWS = 50


def scaled_bottleneck(flows: int) -> dict[str, Any]:
    """The bottleneck of the dumbbell grown with its load (issue 24): `flows` Mbit/s, so
    that each connection keeps the 1 Mbit/s share it has in the 50-flow dumbbell, and the
    bottleneck's and the reverse path's buffers and RIO's thresholds multiplied by
    flows / 50 (rounded to whole packets), so that they hold the same time of traffic."""
    d = DUMBBELL
    f = flows / SCALE_BASE_FLOWS

    def times(curve: tuple[int, int, float]) -> tuple[int, int, float]:
        return round(curve[0] * f), round(curve[1] * f), curve[2]

    return {
        "bottleneck_rate_bps": 1_000_000 * flows,
        "bottleneck_limit_pkts": round(d["bottleneck_limit_pkts"] * f),
        "rio_in": times(d["rio_in"]),
        "rio_out": times(d["rio_out"]),
    }


def dumbbell(flows: int, duration_s: float = 100.0, *, aqm: str = "rio", scaled: bool = False) -> Benchmark:
    """The seed 002 dumbbell with `flows` connections; `aqm` "rio" (profilers on the even
    connections and RIO, as ns-2's dsRED runs it), "red" (no profilers, RED with the OUT
    curve on the whole queue, as the ns-3 program runs it), "fq_codel" (no profilers,
    FQ-CoDel with its defaults and the same packet limit: the cost of its flow queues and
    per-queue CoDel, docs/aqm.md), "cubic" (no profilers, drop-tail, CUBIC senders with
    delayed ACKs and a 1 MB window) or "cubic_fq_codel" (those senders through FQ-CoDel). `scaled`: the bottleneck grown with the load
    (`scaled_bottleneck`), named ``scale-N``."""
    if aqm not in DUMBBELL_VARIANTS:
        raise ValueError(f"aqm {aqm!r}: one of {', '.join(DUMBBELL_VARIANTS)}")
    description, title = DUMBBELL_VARIANTS[aqm]
    d = {**DUMBBELL, **scaled_bottleneck(flows)} if scaled else DUMBBELL
    plan = dumbbell_plan(flows)
    name = f"{'scale' if scaled else 'dumbbell'}-{flows}" + ("" if aqm == "rio" else f"-{aqm}".replace("_", "-"))
    hosts = [f"s{i}" for i in range(flows)] + [f"d{i}" for i in range(flows)]
    out = [
        f'name = "bench-{name}"',
        f'description = "Seed 002 dumbbell, {flows} TCP SACK connections, {description}"',
        f'duration = "{_seconds(duration_s)}"',
        f"seed = {SEED}",
        "[nodes]",
        "hosts = [" + ", ".join(f'"{h}"' for h in hosts) + "]",
        'routers = ["R0", "R1"]',
    ]
    access_q = f'{{ type = "droptail", limit = "{d["access_limit_pkts"]}p" }}'
    limit = d["bottleneck_limit_pkts"]
    (in_min, in_max, in_p), (out_min, out_max, out_p) = d["rio_in"], d["rio_out"]
    if aqm == "rio":
        bottleneck_q = (
            f'{{ type = "mred", limit = "{limit}p", wq = {d["wq"]}, mean_pkt_size = "{d["mss"] + 40}B", precedence = ['
            f'{{ dscp = ["AF11"], min_th = "{in_min}p", max_th = "{in_max}p", max_p = {in_p} }}, '
            f'{{ min_th = "{out_min}p", max_th = "{out_max}p", max_p = {out_p} }}] }}'
        )
    elif aqm == "red":
        bottleneck_q = (
            f'{{ type = "red", limit = "{limit}p", wq = {d["wq"]}, mean_pkt_size = "{d["mss"] + 40}B", '
            f'min_th = "{out_min}p", max_th = "{out_max}p", max_p = {out_p} }}'
        )
    else:
        queue = "fq_codel" if aqm.endswith("fq_codel") else "droptail"
        bottleneck_q = f'{{ type = "{queue}", limit = "{limit}p" }}'
    for f in plan:
        out += _link(f"s{f.index}", "R0", d["access_rate_bps"], f.src_delay_us, access_q)
    out += _link("R0", "R1", d["bottleneck_rate_bps"], d["bottleneck_delay_us"], bottleneck_q)
    out.append(f'reverse = {{ queue = {{ type = "droptail", limit = "{limit}p" }} }}')
    for f in plan:
        out += _link("R1", f"d{f.index}", d["access_rate_bps"], d["dst_delay_us"], access_q)
    tcp = (
        f'{{ variant = "sack", mss = "{d["mss"]}B", window = "{d["mss"] * d["window_pkts"]}B", initial_window = "2p", '
        'counting = "packets", delayed_ack = false, min_rto = "200ms", initial_rto = "3s", granularity = "10ms" }'
    )
    if aqm.startswith("cubic"):
        tcp = f'{{ variant = "sack", congestion = "cubic", mss = "{d["mss"]}B", window = "1MB", min_rto = "200ms" }}'
    for f in plan:
        out += [
            "[[flow]]",
            f'name = "f{f.index}"',
            f'src = "s{f.index}"',
            f'dst = "d{f.index}"',
            f'start = "{f.start_us}us"',
            'app = { type = "ftp" }',
            f"tcp = {tcp}",
        ]
    if aqm == "rio":
        for f in plan:
            if f.assured:
                out += [
                    "[[conditioner]]",
                    f'name = "profiler{f.index}"',
                    f'at = "s{f.index}"',
                    f'match = {{ flow = ["f{f.index}"] }}',
                    f'meter = {{ type = "token_bucket", rate = "{d["profile_rate_bps"]}bps", depth = "{d["profile_depth_bytes"]}B" }}',
                    'in = { mark = "AF11" }',
                ]
    title = f"seed 002 dumbbell, {flows} TCP, {title}"
    if scaled:
        title += f", {d['bottleneck_rate_bps'] // 1_000_000} Mbit/s bottleneck"
    return Benchmark(name, title, "\n".join(out) + "\n", "R0->R1", duration_s, flows)


# ---------------------------------------------------------------------------------------
# CBR chain and seed 004


def cbr_chain(routers: int = 10, flows: int = 50, duration_s: float = 100.0) -> Benchmark:
    """CBR flows at 90 % of 100 Mbit/s through a line of routers (the event-loop benchmark
    of crates/dsim-core/benches/event_loop.rs, longer)."""
    names = [f"R{i}" for i in range(routers)]
    out = [
        'name = "bench-cbr-chain"',
        f'description = "{flows} CBR flows at 90 % load through {routers} routers"',
        f'duration = "{_seconds(duration_s)}"',
        f"seed = {SEED}",
        "[nodes]",
        'hosts = ["A", "B"]',
        "routers = [" + ", ".join(f'"{n}"' for n in names) + "]",
    ]
    path = ["A", *names, "B"]
    for a, b in itertools.pairwise(path):
        out += _link(a, b, 100_000_000, 1_000, None)
    out += [
        "[[flow]]",
        'name = "cbr"',
        f"count = {flows}",
        'src = "A"',
        'dst = "B"',
        f'app = {{ type = "cbr", rate = "{90_000 // flows}kbps", size = "1000B", spacing_variation = "10%" }}',
    ]
    middle = names[routers // 2 - 1], names[routers // 2]
    return Benchmark("cbr-chain", f"CBR chain, {routers} routers, {flows} flows", "\n".join(out) + "\n", f"{middle[0]}->{middle[1]}", duration_s, flows)


def rashaper(duration_s: float = 100.0) -> Benchmark:
    """Seed 004's LAN interconnection network (RFC 2963 appendix A.1) with trTCMs and
    three-colour RIO, 100 TCP SACK connections."""
    lans, per_lan = 10, 10
    left = [f"C{c}" for c in range(1, lans + 1)]
    right = [f"D{c}" for c in range(1, lans + 1)]
    hosts = [f"w{c}_{k}" for c in range(1, lans + 1) for k in range(per_lan)]
    hosts += [f"v{c}_{k}" for c in range(1, lans + 1) for k in range(per_lan)]
    out = [
        'name = "bench-rashaper-100"',
        'description = "Seed 004 topology: 10 LANs x 10 SACK workstations, trTCM at the customer routers, 3-colour RIO"',
        f'duration = "{_seconds(duration_s)}"',
        f"seed = {SEED}",
        "[nodes]",
        "hosts = [" + ", ".join(f'"{h}"' for h in hosts) + "]",
        "routers = [" + ", ".join(f'"{r}"' for r in [*left, "ER1", "ER2", *right]) + "]",
    ]
    big = '{ type = "droptail", limit = "1000p" }'
    for c in range(1, lans + 1):
        for k in range(per_lan):
            out += _link(f"w{c}_{k}", f"C{c}", 10_000_000, 1_000, None)
        out += _link(f"C{c}", "ER1", 34_000_000, 2_500, big)
    rio3 = (
        '{ type = "mred", limit = "1000p", wq = 0.002, mean_pkt_size = "1500B", precedence = ['
        '{ dscp = ["AF11"], min_th = "400p", max_th = "800p", max_p = 0.02 }, '
        '{ dscp = ["AF12"], min_th = "200p", max_th = "400p", max_p = 0.05 }, '
        '{ min_th = "100p", max_th = "200p", max_p = 0.1 }] }'
    )
    out += _link("ER1", "ER2", 70_000_000, 10_000, rio3)
    out.append(f"reverse = {{ queue = {big} }}")
    for c in range(1, lans + 1):
        out += _link("ER2", f"D{c}", 34_000_000, 2_500, big)
        for k in range(per_lan):
            out += _link(f"D{c}", f"v{c}_{k}", 10_000_000, 1_000, None)
    for c in range(1, lans + 1):
        for k in range(per_lan):  # one connection per workstation, to its companion
            out += [
                "[[flow]]",
                f'name = "lan{c}_{k}"',
                f'src = "w{c}_{k}"',
                f'dst = "v{c}_{k}"',
                'start = { uniform = ["0s", "1s"] }',
                'app = { type = "ftp" }',
                'tcp = { variant = "sack", mss = "1460B", window = "64KB", counting = "packets", delayed_ack = false }',
            ]
    for c in range(1, lans + 1):
        cir = 2 * (1 + (c - 1) % 5)  # table A.1: C1..C5 and C6..C10 at 2, 4, 6, 8, 10 Mbit/s
        out += [
            "[[conditioner]]",
            f'name = "trtcm{c}"',
            f'at = "C{c}"',
            'interface = "ER1"',
            f'meter = {{ type = "trtcm", cir = "{cir}Mbps", cbs = "3KB", pir = "{2 * cir}Mbps", pbs = "6KB" }}',
            'green = { mark = "AF11" }',
            'yellow = { mark = "AF12" }',
            'red = { mark = "AF13" }',
        ]
    return Benchmark("rashaper-100", "seed 004 LANs, 100 TCP, trTCM + 3-colour RIO", "\n".join(out) + "\n", "ER1->ER2", duration_s, 100)


def _seconds(s: float) -> str:
    return f"{int(s)}s" if float(s).is_integer() else f"{round(s * 1000)}ms"


def _link(a: str, b: str, rate_bps: int, delay_us: int, queue: str | None) -> list[str]:
    lines = ["[[link]]", f'from = "{a}"', f'to = "{b}"', f'rate = "{rate_bps}bps"', f'delay = "{delay_us}us"']
    if queue:
        lines.append(f"queue = {queue}")
    return lines


def suite(quick: bool = False, duration_s: float | None = None) -> list[Benchmark]:
    """The benchmark scenarios: 100 s of simulated time each (10 s with `quick`), or
    `duration_s`."""
    d = duration_s if duration_s is not None else (10.0 if quick else 100.0)
    return [
        dumbbell(50, d),
        dumbbell(100, d),
        dumbbell(200, d),
        dumbbell(50, d, aqm="fq_codel"),
        dumbbell(50, d, aqm="cubic"),
        dumbbell(50, d, aqm="cubic_fq_codel"),
        cbr_chain(duration_s=d),
        rashaper(d),
    ]


# ---------------------------------------------------------------------------------------
# Measuring


@dataclass
class ProcessMeasurement:
    """A child process: wall time, CPU time (user + system) and peak resident memory."""

    wall_s: float
    cpu_s: float
    maxrss_mb: float
    returncode: int
    stdout: str
    stderr: str


#: A launcher that starts the measured process and reports its resource usage. Why not
#: wait4 here directly: Linux counts in a process's ru_maxrss the resident set of the
#: process it was forked from (the pages a forked copy maps before exec), so a child of
#: this interpreter (pandas, pyarrow: over 150 MB) would report at least that much. The
#: launcher is a bare interpreter (python -S, about 8 MB), so a measured process's peak is
#: exact above that floor.
_LAUNCHER = r"""
import json, os, sys, time
fd = int(sys.argv[1])
os.set_inheritable(fd, False)
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
os.write(fd, json.dumps({"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss,
                         "returncode": os.waitstatus_to_exitcode(status)}).encode())
"""


def measure_process(argv: Sequence[str], stdin: str | None = None, cwd: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> ProcessMeasurement:
    """Runs `argv` and measures it: wall time from start to exit, CPU time (user +
    system) and peak resident memory (``ru_maxrss`` from ``wait4``), read by a small
    launcher process (see `_LAUNCHER`)."""
    r, w = os.pipe()
    try:
        p = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, str(w), *argv], pass_fds=(w,),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
        )
        os.close(w)
        w = -1
        try:
            out, err = p.communicate(stdin)
        except BaseException:
            p.kill()
            p.wait()
            raise
        with os.fdopen(r, "rb") as f:
            r = -1
            report = f.read()
    finally:
        for fd in (r, w):
            if fd >= 0:
                os.close(fd)
    if p.returncode != 0 or not report:
        raise RuntimeError(f"could not measure {argv[0]}: launcher exit {p.returncode}: {err.strip()[-2000:]}")
    m = json.loads(report)
    return ProcessMeasurement(m["wall_s"], m["cpu_s"], m["maxrss_kb"] / 1024.0, m["returncode"], out, err)


#: Code of the child that runs one benchmark: it loads the compiled module alone (a stub
#: stands in for the `dsim` package, so neither pandas nor pyarrow is imported), reads the
#: scenario on stdin and prints the run's counts as JSON.
_CHILD = r"""
import importlib.util, json, sys, types
pkg = types.ModuleType("dsim"); pkg.__path__ = []; sys.modules.setdefault("dsim", pkg)
spec = importlib.util.spec_from_file_location("dsim._dsim", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
r = mod.bench_run(sys.stdin.read(), int(sys.argv[2]), sys.argv[3])
print(json.dumps(r))
"""


def _extension_path() -> str:
    from . import _dsim

    return _dsim.__file__


@dataclass
class Run:
    """One run of one benchmark."""

    wall_s: float
    cpu_s: float
    maxrss_mb: float
    events: int
    run_s: float
    run_cpu_s: float
    build_s: float
    results_s: float
    bottleneck_pkts: int
    bottleneck_drops: int


def run_benchmark(b: Benchmark, seed: int = SEED) -> Run:
    """Runs `b` once in a child process."""
    m = measure_process([sys.executable, "-c", _CHILD, _extension_path(), str(seed), b.bottleneck], stdin=b.toml)
    if m.returncode != 0:
        raise RuntimeError(f"benchmark {b.name} failed (exit {m.returncode}): {m.stderr.strip()[-2000:]}")
    r = json.loads(m.stdout.strip().splitlines()[-1])
    return Run(
        m.wall_s, m.cpu_s, m.maxrss_mb, int(r["events"]), float(r["run_s"]), float(r["run_cpu_s"]), float(r["build_s"]),
        float(r["results_s"]), int(r["port_departures_pkts"]), int(r["port_drops_pkts"]),
    )


@dataclass
class Result:
    """The runs of one benchmark and their summary."""

    name: str
    title: str
    flows: int
    simulated_s: float
    bottleneck: str
    runs: list[Run] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return float(statistics.median(getattr(r, attr) for r in self.runs))

    def spread(self, attr: str) -> tuple[float, float]:
        values = [getattr(r, attr) for r in self.runs]
        return min(values), max(values)

    def summary(self) -> dict[str, Any]:
        wall, run_s = self.median("wall_s"), self.median("run_s")
        events = self.runs[0].events
        pkts = self.runs[0].bottleneck_pkts
        lo, hi = self.spread("wall_s")
        return {
            "name": self.name,
            "title": self.title,
            "flows": self.flows,
            "simulated_s": self.simulated_s,
            "repeats": len(self.runs),
            "wall_s_median": wall,
            "wall_s_min": lo,
            "wall_s_max": hi,
            "cpu_s_median": self.median("cpu_s"),
            "event_loop_s_median": run_s,
            "event_loop_cpu_s_median": self.median("run_cpu_s"),
            "sim_s_per_wall_s": self.simulated_s / wall,
            "events": events,
            "events_per_s": events / run_s if run_s > 0 else float("nan"),
            "events_per_cpu_s": events / self.median("run_cpu_s") if self.median("run_cpu_s") > 0 else float("nan"),
            "bottleneck": self.bottleneck,
            "bottleneck_pkts": pkts,
            "bottleneck_drops": self.runs[0].bottleneck_drops,
            "bottleneck_pkts_per_s": pkts / wall,
            "peak_rss_mb_median": self.median("maxrss_mb"),
            "peak_rss_mb_max": self.spread("maxrss_mb")[1],
        }


def machine_info() -> dict[str, Any]:
    """Date, machine and how busy it was (load averages: other processes' share of the cores)."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from . import __version__, _dsim

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "dsim": __version__,
        # Profile-guided optimization (`make build`; docs/performance.md, "Build").
        "build": "release + PGO" if getattr(_dsim, "__pgo__", False) else "release",
        "load_avg_1_5_15": [round(x, 2) for x in load],
    }


def run_suite(
    benchmarks: Sequence[Benchmark], repeat: int = 1, on_run: Callable[[Benchmark, int, Run], None] | None = None,
) -> list[Result]:
    """Runs every benchmark `repeat` times, interleaved (round r runs each benchmark once),
    so that a change in the machine's load spreads over all of them."""
    results = [Result(b.name, b.title, b.flows, b.simulated_s, b.bottleneck) for b in benchmarks]
    for r in range(repeat):
        for b, res in zip(benchmarks, results, strict=True):
            run = run_benchmark(b)
            if res.runs and run.events != res.runs[0].events:
                raise RuntimeError(f"{b.name}: {run.events} events, {res.runs[0].events} before: the run is not deterministic")
            res.runs.append(run)
            if on_run:
                on_run(b, r, run)
    return results


@dataclass
class Replications:
    """Replications of one scenario run sequentially and on `jobs` threads."""

    scenario: str
    replications: int
    jobs: int
    sequential_s: float
    parallel_s: float
    identical: bool

    @property
    def speedup(self) -> float:
        return self.sequential_s / self.parallel_s


def replications_speedup(b: Benchmark, replications: int, jobs: int) -> Replications:
    """Runs `replications` replications of `b` with one thread, then with `jobs` threads
    (``dsim.run(..., jobs=)``), and checks the tables are the same bit for bit (all but the
    wall_s column)."""
    from .api import run

    t0 = time.perf_counter()
    seq = run(b.toml, replications=replications, jobs=1)
    t1 = time.perf_counter()
    par = run(b.toml, replications=replications, jobs=jobs)
    t2 = time.perf_counter()
    identical = all(
        _same(getattr(seq, t), getattr(par, t)) for t in ("flows", "queues", "drops", "conditioners")
    ) and _same(seq.run.drop(columns=["wall_s"]), par.run.drop(columns=["wall_s"]))
    return Replications(b.name, replications, jobs, t1 - t0, t2 - t1, identical)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.shape == b.shape and a.equals(b)


def to_json(results: Sequence[Result], info: dict[str, Any], reps: Replications | None = None) -> dict[str, Any]:
    return {
        "machine": info,
        "benchmarks": [r.summary() for r in results],
        "runs": {r.name: [asdict(x) for x in r.runs] for r in results},
        "replications": None if reps is None else {**asdict(reps), "speedup": reps.speedup},
    }


# ---------------------------------------------------------------------------------------
# Scale: the dumbbell grown with its load (issue 24)

#: The sizes `dsim bench --scale` runs.
SCALE_FLOWS = (50, 200, 500, 1_000, 2_000, 5_000, 10_000)


def scale_duration_s(flows: int) -> float:
    """Simulated seconds of the `flows`-connection scaled dumbbell: 10 s up to 2,000
    connections, 5 s at 5,000 and 3 s at 10,000 (the starts still spread over the first
    second, so the largest runs spend more of their time in slow start)."""
    return 10.0 if flows <= 2_000 else 5.0 if flows <= 5_000 else 3.0


def scale_suite(flows: Sequence[int] = SCALE_FLOWS, duration_s: float | None = None) -> list[Benchmark]:
    """The scaled dumbbells (`dumbbell(..., scaled=True)`), each for `scale_duration_s`
    or `duration_s`."""
    return [dumbbell(n, duration_s or scale_duration_s(n), scaled=True) for n in flows]


@dataclass
class ScaleRow:
    """One size of `dsim bench --scale`: the simulation alone (the benchmark child's
    runs) and, unless skipped, the `dsim run` of the same file (the front included) of
    median CPU time."""

    result: Result
    front: ProcessMeasurement | None

    def summary(self, base: ScaleRow | None = None) -> dict[str, Any]:
        """The row's numbers; `base` (the smallest size) gives the memory each further
        connection costs, (peak - base's peak) / (flows - base's flows)."""
        r = self.result
        events, pkts = r.runs[0].events, r.runs[0].bottleneck_pkts
        loop_cpu, rss = r.median("run_cpu_s"), r.median("maxrss_mb")
        out: dict[str, Any] = {
            "name": r.name,
            "flows": r.flows,
            "simulated_s": r.simulated_s,
            "repeats": len(r.runs),
            "events": events,
            "bottleneck_pkts": pkts,
            "build_s": r.median("build_s"),
            "loop_s": r.median("run_s"),
            "loop_cpu_s": loop_cpu,
            "results_s": r.median("results_s"),
            "sim_wall_s": r.median("wall_s"),
            "sim_cpu_s": r.median("cpu_s"),
            "ns_per_event": 1e9 * loop_cpu / events,
            "ns_per_bottleneck_pkt": 1e9 * loop_cpu / pkts if pkts else float("nan"),
            "peak_rss_mb": rss,
            "rss_kb_per_flow": float("nan"),
        }
        if base is not None and r.flows > base.result.flows:
            out["rss_kb_per_flow"] = 1024 * (rss - base.result.median("maxrss_mb")) / (r.flows - base.result.flows)
        if self.front is not None:
            out |= {
                "run_wall_s": self.front.wall_s,
                "run_cpu_s": self.front.cpu_s,
                "run_peak_rss_mb": self.front.maxrss_mb,
                "run_cpu_over_sim_cpu": self.front.cpu_s / out["sim_cpu_s"],
            }
        return out


def measure_dsim_run(b: Benchmark, workdir: Path) -> ProcessMeasurement:
    """`dsim run FILE -r 1 --out DIR` on `b`'s scenario, as a user types it (the front:
    the CLI, the run, the tables written in Parquet, the summary printed), measured like
    the benchmark children."""
    scenario = workdir / f"{b.name}.toml"
    scenario.write_text(b.toml)
    argv = [sys.executable, "-m", "dsim", "run", str(scenario), "-r", "1", "--out", str(workdir / b.name)]
    m = measure_process(argv, env={**os.environ, "COLUMNS": "120"})
    if m.returncode != 0:
        raise RuntimeError(f"dsim run {b.name} failed (exit {m.returncode}): {m.stderr.strip()[-2000:]}")
    return m


def run_scale(
    benchmarks: Sequence[Benchmark], repeat: int = 1, front: bool = True, on_row: Callable[[ScaleRow], None] | None = None,
) -> list[ScaleRow]:
    """Each scaled dumbbell `repeat` times in the benchmark child, then `repeat` times
    through `dsim run` (unless `front` is false; the run of median CPU time is kept), one
    size after the other."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="dsim-scale-") as tmp:
        for b in benchmarks:
            (result,) = run_suite([b], repeat)
            fronts = sorted((measure_dsim_run(b, Path(tmp)) for _ in range(repeat if front else 0)), key=lambda m: m.cpu_s)
            row = ScaleRow(result, fronts[len(fronts) // 2] if fronts else None)
            rows.append(row)
            if on_row:
                on_row(row)
    return rows


def scale_to_json(rows: Sequence[ScaleRow], info: dict[str, Any]) -> dict[str, Any]:
    base = rows[0] if rows else None
    return {
        "machine": info,
        "scale": [row.summary(base) for row in rows],
        "runs": {row.result.name: [asdict(x) for x in row.result.runs] for row in rows},
        "dsim_run": {row.result.name: asdict(row.front) | {"stdout": None, "stderr": None} for row in rows if row.front},
    }
