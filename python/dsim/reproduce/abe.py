"""ABE (seed 000, draft-hurley-alternative-best-effort-01): section 6's Tables 1-4 on the
testbed of figure 1, flat best effort alongside, and throughput transparency with
TCP-friendly sources and the control loop of section 5.1.

What the tables report (section 6): Tables 1 and 3, "Average loss rate (with 90% confidence
interval) experienced by green traffic" in %, i.e. green packets lost over green packets
sent, all green sources together; Tables 2 and 4, "Aggregate throughput of blue traffic
(Kbps)", the sum over the blue TCP connections. The testbed's blue throughputs plus the
green traffic delivered add up to about 990 kbit/s of the 1 Mbit/s bottleneck, more than
the TCP payload alone could reach (1460/1500 of it), so the tables count whole IP packets:
dsim uses the blue flows' ``throughput_bps`` (IP bytes of the data segments delivered,
retransmissions included), not their goodput (shown beside it). The text adds the mean
queueing delay of the UDP (green) traffic: "around 400ms" under flat best effort, "around
6ms" under ABE with d = 10 ms; dsim's is the mean one-way delay of the green packets
delivered minus their path's propagation and transmission times (so the few hundred
microseconds a green datagram may wait behind a TCP segment on its 10 Mbit/s access link
are included).

Choices where the document is silent (stated in the scenario files): which host carries
which flow (every host 1-4 the same share: N/4 blue and a quarter of the green sources),
the green datagram size (200 B), a fixed 25 kbit/s per green source (Tables 3, 4 vary
"the number of green/UDP sources": 4, 8, 20), the TCP settings of a Linux 2.2 host (SACK,
MSS 1460 B, 64 KB window, delayed ACKs, packet counting, 200 ms minimum RTO on a 10 ms
clock), the number of replications (10).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..stats import t_half_width
from .framework import Context, experiment

SOURCE = "draft-hurley-alternative-best-effort-01 (seed 000), section 6"

#: The green maximum delays d of the tables, ms, and the flat best-effort column.
DELAYS_MS = (10, 20, 50)
COLUMNS = ("10ms", "20ms", "50ms", "flat")

#: Published values: (mean, 90 % CI half width) per row and column.
TABLE1 = {  # green loss %, rows: blue TCP connections
    4: [(16.58, 12.07), (2.58, 0.71), (2.07, 0.25), (0.90, 0.34)],
    8: [(18.90, 1.59), (2.63, 0.44), (2.52, 0.62), (2.37, 0.40)],
    16: [(21.26, 6.44), (6.35, 0.59), (6.21, 0.41), (5.55, 0.41)],
}
TABLE2 = {  # blue aggregate throughput kbit/s, rows: blue TCP connections
    4: [(897.11, 1.87), (891.77, 0.44), (891.40, 0.51), (889.75, 0.65)],
    8: [(905.06, 3.91), (893.44, 0.51), (893.41, 0.16), (897.78, 0.57)],
    16: [(909.55, 4.74), (897.55, 0.61), (897.78, 0.57), (896.62, 0.85)],
}
TABLE3 = {  # green loss %, rows: green aggregate kbit/s (16 blue)
    100: [(21.26, 6.44), (6.35, 0.59), (6.21, 0.41), (5.55, 0.41)],
    200: [(32.07, 12.52), (8.95, 0.95), (8.66, 1.01), (7.56, 0.58)],
    500: [(55.62, 7.19), (31.50, 7.03), (20.01, 3.30), (17.99, 2.30)],
}
TABLE4 = {  # blue aggregate throughput kbit/s, rows: green aggregate kbit/s (16 blue)
    100: [(909.55, 4.74), (897.55, 0.61), (897.78, 0.57), (896.62, 0.85)],
    200: [(825.33, 3.30), (800.76, 2.20), (799.90, 2.59), (797.58, 2.10)],
    500: [(631.14, 44.06), (597.82, 16.15), (555.23, 8.20), (548.71, 7.81)],
}
#: Section 6's text: mean queueing delay of the UDP traffic, ms.
FLAT_UDP_DELAY_MS = 400.0
ABE10_UDP_DELAY_MS = 6.0

#: Bands of the numbers (set before running: a testbed is not a simulator, and the claims
#: carry the verdicts): green loss within 50 % or 1 percentage point, blue throughput
#: within 5 %, the delays within 50 %.
LOSS_REL, LOSS_ABS = 0.5, 1.0
TPUT_REL = 0.05
DELAY_REL = 0.5
#: The flat FIFO's delay: 25 %, since 50 % of 400 ms reaches 600 ms, the drain time of the
#: 75 KB buffer at 1 Mbit/s, so that band could only be missed from below.
FLAT_DELAY_REL = 0.25

#: Testbed geometry (abe.toml): access delays of hosts 1-4, bottleneck, receivers' links.
ACCESS_MS = {1: 20.0, 2: 40.0, 3: 60.0, 4: 80.0}
BOTTLENECK_MS, RECEIVER_MS = 50.0, 0.1
GREEN_BYTES = 200
GREEN_SOURCE_BPS = 25_000
#: Index of the bottleneck link and of the flow entries in abe.toml / abe-flat.toml.
BOTTLENECK = "link[8].queue"
GREEN_FLOWS = [f"flow[{k}].count" for k in range(4)]
BLUE_FLOWS = [f"flow[{k}].count" for k in range(4, 8)]


def green_fixed_delay_ms(host: int) -> float:
    """Propagation plus transmission of a green datagram from host 1-4 to its receiver:
    access link (10 Mbit/s), bottleneck (1 Mbit/s), receiver's link (10 Mbit/s)."""
    tx = GREEN_BYTES * 8 * (1 / 10e6 + 1 / 1e6 + 1 / 10e6) * 1e3
    return ACCESS_MS[host] + BOTTLENECK_MS + RECEIVER_MS + tx


def queue_spec(column: str, overshoot: bool = True) -> dict[str, Any]:
    """The bottleneck queue of a table column: DSD with d, or the flat 75 KB FIFO; with
    dummynet's byte rule (`overshoot`, as in the scenario files) or dsim's default."""
    if column == "flat":
        return {"type": "droptail", "limit": "75KB", "overshoot": overshoot}
    return {"type": "dsd", "buffer": "75KB", "overshoot": overshoot, "d": column}


def point_metrics(flows: pd.DataFrame) -> pd.DataFrame:
    """Per replication of one point: green loss (%), blue aggregate throughput and goodput
    (kbit/s), green mean queueing delay (ms, weighted by packets delivered)."""
    rows = []
    for rep, f in flows.groupby("replication"):
        green = f[f["flow"].str.startswith("green")]
        blue = f[f["flow"].str.startswith("blue")]
        hosts = green["src"].str.removeprefix("host").astype(int)
        fixed = hosts.map(green_fixed_delay_ms)
        delivered = green["delivered_pkts"].astype(float)
        wait = ((green["delay_mean_ms"] - fixed) * delivered).sum() / delivered.sum()
        rows.append(
            {
                "replication": rep,
                "green_loss_pct": 100.0 * green["dropped_pkts"].sum() / green["sent_pkts"].sum(),
                "blue_kbps": blue["throughput_bps"].sum() / 1e3,
                "blue_goodput_kbps": blue["goodput_bps"].sum() / 1e3,
                "green_wait_ms": wait,
                "green_kbps": green["throughput_bps"].sum() / 1e3,
                "blue_loss_pct": 100.0 * blue["dropped_pkts"].sum() / blue["sent_pkts"].sum(),
            }
        )
    return pd.DataFrame(rows)


def _mean_ci(values: pd.Series | np.ndarray) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(np.mean(v)), (t_half_width(v) if v.size > 1 else math.nan)


def _cell(mean: float, ci: float) -> str:
    return f"{mean:.2f}" if not math.isfinite(ci) else f"{mean:.2f} ({ci:.2f})"


def _run_grid(ctx: Context, rows: list[Any], counts: dict[Any, tuple[list[int], list[int]]], overshoot: bool = True) -> dict[tuple[Any, str], pd.DataFrame]:
    """Runs every (row, column) point of a table in one sweep (zip of the bottleneck queue
    and the per-host source counts); returns the per-replication metrics of each point."""
    sc = ctx.scenario("abe/abe.toml")
    points = [(r, c) for r in rows for c in COLUMNS]
    axes: dict[str, Any] = {BOTTLENECK: [queue_spec(c, overshoot) for _, c in points]}
    for i, key in enumerate(GREEN_FLOWS):
        axes[key] = [counts[r][0][i] for r, _ in points]
    for i, key in enumerate(BLUE_FLOWS):
        axes[key] = [counts[r][1][i] for r, _ in points]
    res = ctx.sweep(
        sc,
        axes,
        mode="zip",
        replications=ctx.pick(4, 10),
        duration=ctx.pick("240s", "540s"),
        warmup=ctx.pick("60s", "60s"),
    )
    return {pt: point_metrics(res.flows[res.flows["point"] == p]) for p, pt in enumerate(points)}


def _side_by_side(published: dict[Any, list[tuple[float, float]]], sim: dict[tuple[Any, str], pd.DataFrame], column: str, label: str, verdicts: dict[tuple[Any, str], str] | None = None) -> pd.DataFrame:
    """Published (CI) beside dsim (CI), one row per table row; with `verdicts`, each dsim
    cell ends with the verdict of its number check."""
    out = []
    for r, cells in published.items():
        row: dict[str, Any] = {label: r}
        for (pm, pc), c in zip(cells, COLUMNS):
            m, ci = _mean_ci(sim[(r, c)][column])
            row[f"{c} published"] = _cell(pm, pc)
            row[f"{c} dsim"] = _cell(m, ci) + (f" {verdicts[(r, c)]}" if verdicts else "")
        out.append(row)
    return pd.DataFrame(out)


def _slack(a: tuple[float, float], b: tuple[float, float]) -> float:
    return sum(0.0 if math.isnan(c) else c for c in (a[1], b[1]))


def _not_below(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """a >= b, or a below b by no more than the two confidence half widths together."""
    return a[0] >= b[0] - _slack(a, b)


def _falls(seq: list[tuple[float, float]]) -> bool:
    """A falling trend: the last value clearly (beyond both CIs) below the first, and no
    step up beyond the CIs."""
    first, last = seq[0], seq[-1]
    return last[0] < first[0] - _slack(first, last) and all(_not_below(a, b) for a, b in zip(seq, seq[1:]))


def _record_table(ctx: Context, tid: str, what: str, published: dict[Any, list[tuple[float, float]]], sim: dict[tuple[Any, str], pd.DataFrame], column: str, row_name: str, unit: str, loss: bool, notes: dict[Any, str] | None = None) -> dict[tuple[Any, str], str]:
    """One number check per cell; `notes[row]` goes on the row's misses. Returns the
    verdict of each cell."""
    verdicts = {}
    for r, cells in published.items():
        for (pm, _), c in zip(cells, COLUMNS):
            where = "flat BE" if c == "flat" else f"ABE d = {c}"
            kw = {"rel_tol": LOSS_REL, "abs_tol": LOSS_ABS} if loss else {"rel_tol": TPUT_REL}
            check = ctx.number(f"{tid}-{r}-{c}", f"{what}, {row_name} {r}, {where}", published=pm, simulated=sim[(r, c)][column], unit=unit, **kw)
            if check.verdict != "pass" and notes and r in notes:
                check.note = notes[r]
            verdicts[(r, c)] = check.verdict
    return verdicts


def _common_claims(ctx: Context, tid: str, rows: list[Any], sim: dict[tuple[Any, str], pd.DataFrame], row_name: str) -> None:
    """The claims both table pairs support: green loss under ABE >= flat and falling as d
    grows; blue throughput under ABE >= flat (within CI); green delay <= d, flat hundreds
    of ms."""
    for r in rows:
        loss = {c: _mean_ci(sim[(r, c)]["green_loss_pct"]) for c in COLUMNS}
        tput = {c: _mean_ci(sim[(r, c)]["blue_kbps"]) for c in COLUMNS}
        shown = ", ".join(f"{c} {loss[c][0]:.2f}" for c in COLUMNS)
        ctx.claim(
            f"{tid}-green-loss-abe-vs-flat-{r}",
            f"{row_name} {r}: green loss under ABE >= flat BE for every d (within CI)",
            all(_not_below(loss[c], loss["flat"]) for c in COLUMNS[:3]),
            published="yes (Tables 1, 3)",
            simulated=shown,
        )
        ctx.claim(
            f"{tid}-green-loss-falls-with-d-{r}",
            f"{row_name} {r}: green loss falls as d grows: 50 ms clearly below 10 ms, no step up beyond the CIs",
            _falls([loss[c] for c in COLUMNS[:3]]),
            published="yes",
            simulated=shown,
        )
        ctx.claim(
            f"{tid}-blue-abe-vs-flat-{r}",
            f"{row_name} {r}: blue aggregate throughput under ABE >= flat BE (within CI)",
            all(_not_below(tput[c], tput["flat"]) for c in COLUMNS[:3]),
            published="yes (Tables 2, 4)",
            simulated=", ".join(f"{c} {tput[c][0]:.1f}" for c in COLUMNS),
        )
        waits = {c: _mean_ci(sim[(r, c)]["green_wait_ms"]) for c in COLUMNS}
        ctx.claim(
            f"{tid}-green-delay-bound-{r}",
            f"{row_name} {r}: green mean queueing delay <= d under ABE",
            all(waits[c][0] <= d for c, d in zip(COLUMNS[:3], DELAYS_MS)),
            published="<= d",
            simulated=", ".join(f"{c} {waits[c][0]:.1f} ms" for c in COLUMNS[:3]),
        )
        ctx.claim(
            f"{tid}-flat-delay-{r}",
            f"{row_name} {r}: flat-BE green (UDP) queueing delay is hundreds of ms",
            waits["flat"][0] >= 200.0,
            published="around 400 ms",
            simulated=f"{waits['flat'][0]:.0f} ms",
        )


def _delay_table(sim: dict[tuple[Any, str], pd.DataFrame], rows: list[Any], label: str) -> pd.DataFrame:
    out = []
    for r in rows:
        row: dict[str, Any] = {label: r}
        for c in COLUMNS:
            m, ci = _mean_ci(sim[(r, c)]["green_wait_ms"])
            row[c] = _cell(m, ci)
        row["blue goodput kbit/s (flat)"] = _cell(*_mean_ci(sim[(r, "flat")]["blue_goodput_kbps"]))
        row["TCP segment loss % (flat)"] = _cell(*_mean_ci(sim[(r, "flat")]["blue_loss_pct"]))
        out.append(row)
    return pd.DataFrame(out)


@experiment("abe-t1/t2", "ABE Tables 1, 2: green loss and blue throughput, 4 green UDP and 4-16 blue TCP", SOURCE, families=("abe", "seed-000"))
def abe_t1_t2(ctx: Context) -> None:
    """4 green UDP sources (100 kbit/s in all) and 4, 8, 16 persistent blue TCP SACK
    connections through the 1 Mbit/s bottleneck of figure 1: DSD with d = 10, 20, 50 ms and
    flat best effort (a 75 KB FIFO), 10 minutes less the first and last (full mode)."""
    rows = [4, 8, 16]
    counts = {n: ([1, 1, 1, 1], [n // 4] * 4) for n in rows}
    sim = _run_grid(ctx, rows, counts)
    row4 = (
        "with 4 blue connections the testbed's green loses 1.2-1.7 points more under DSD with "
        "d >= 20 ms than under flat BE; dsim's loses about what flat BE loses (the section 5 "
        "admission test rarely refuses green when the blue backlog is short). Not explained by "
        "the document's setup: its DSD implementation may refuse green more often than section 5 says"
    )
    v1 = _record_table(ctx, "t1", "green loss", TABLE1, sim, "green_loss_pct", "blue TCP", "%", loss=True, notes={4: row4})
    v2 = _record_table(ctx, "t2", "blue throughput", TABLE2, sim, "blue_kbps", "blue TCP", "kbit/s", loss=False)
    _common_claims(ctx, "t1", rows, sim, "blue TCP")
    for n in rows:
        ctx.number(
            f"t1-green-delay-10ms-{n}",
            f"blue TCP {n}: green mean queueing delay, ABE d = 10 ms (text: around 6 ms)",
            published=ABE10_UDP_DELAY_MS,
            simulated=sim[(n, "10ms")]["green_wait_ms"],
            unit="ms",
            rel_tol=DELAY_REL,
        )
        ctx.number(
            f"t1-green-delay-flat-{n}",
            f"blue TCP {n}: UDP mean queueing delay, flat BE (text: around 400 ms)",
            published=FLAT_UDP_DELAY_MS,
            simulated=sim[(n, "flat")]["green_wait_ms"],
            unit="ms",
            rel_tol=FLAT_DELAY_REL,
            note=(
                "a FIFO's delay is its mean occupancy over the link rate: dsim's blue TCP keep the 75 KB "
                "buffer 80-90 % full (480-550 ms), the testbed's about two thirds (400 ms); the document "
                "gives one rounded figure for every row and not its hosts' TCP windows"
            ),
        )
    ctx.table("Table 1: green loss rate % (90 % CI)", _side_by_side(TABLE1, sim, "green_loss_pct", "blue TCP", v1))
    ctx.table("Table 2: blue aggregate throughput kbit/s (90 % CI)", _side_by_side(TABLE2, sim, "blue_kbps", "blue TCP", v2))
    ctx.table("Green mean queueing delay ms (90 % CI; text: about 6 ms at d = 10 ms, about 400 ms flat); blue goodput and TCP segment loss under flat BE", _delay_table(sim, rows, "blue TCP"))
    ctx.figure("against-d", _figure(sim, rows, TABLE1, TABLE2, "blue TCP connections", against_d=True))
    _explain(ctx, sim, rows, TABLE1)
    # Sensitivity: the same grid with dsim's default byte rule (a packet must fit).
    fit = _run_grid(ctx, rows, counts, overshoot=False)
    ctx.table(
        "Table 1 again with dsim's default byte limit (a packet is admitted only if it fits): green loss % (90 % CI)",
        _side_by_side(TABLE1, fit, "green_loss_pct", "blue TCP"),
    )
    ctx.note(
        "With dsim's default byte limit, green loss under flat BE is "
        + ", ".join(f"{n}: {_mean_ci(fit[(n, 'flat')]['green_loss_pct'])[0]:.2f} %" for n in rows)
        + " against "
        + ", ".join(f"{_mean_ci(sim[(n, 'flat')]['green_loss_pct'])[0]:.2f} %" for n in rows)
        + " with dummynet's rule (the scenario files' setting) and "
        + ", ".join(f"{TABLE1[n][3][0]:.2f} %" for n in rows)
        + " on the testbed: a 200 B datagram fits into the last bytes a 1500 B segment cannot use, "
        "so under the default rule green is refused far less often than TCP; dummynet refuses every "
        "packet once the queue is above its size."
    )


@experiment("abe-t3/t4", "ABE Tables 3, 4: green loss and blue throughput, 16 blue TCP and 100-500 kbit/s of green UDP", SOURCE, families=("abe", "seed-000"))
def abe_t3_t4(ctx: Context) -> None:
    """16 blue TCP SACK connections and green UDP sources of 25 kbit/s each, 4, 8 and 20 of
    them (100, 200, 500 kbit/s), DSD with d = 10, 20, 50 ms and flat best effort."""
    rows = [100, 200, 500]
    counts = {r: ([r * 1000 // GREEN_SOURCE_BPS // 4] * 4, [4, 4, 4, 4]) for r in rows}
    sim = _run_grid(ctx, rows, counts)
    row500 = (
        "the testbed's 500 kbit/s row: its green loses 2-4 times what dsim's does under every "
        "column, flat BE included, and its blue gets correspondingly more; since flat BE misses too, "
        "the gap is not DSD's but the testbed's at high green load (see the notes: what dsim does "
        "not model there)"
    )
    v3 = _record_table(ctx, "t3", "green loss", TABLE3, sim, "green_loss_pct", "green kbit/s", "%", loss=True, notes={500: row500})
    v4 = _record_table(ctx, "t4", "blue throughput", TABLE4, sim, "blue_kbps", "green kbit/s", "kbit/s", loss=False, notes={500: row500})
    _common_claims(ctx, "t3", rows, sim, "green kbit/s")
    for c in COLUMNS:
        loss = [_mean_ci(sim[(r, c)]["green_loss_pct"]) for r in rows]
        tput = [_mean_ci(sim[(r, c)]["blue_kbps"]) for r in rows]
        where = "flat BE" if c == "flat" else f"ABE d = {c}"
        ctx.claim(
            f"t3-green-loss-grows-with-rate-{c}",
            f"{where}: green loss grows with the green rate: 500 clearly above 100 kbit/s, no step down beyond the CIs",
            _falls([(-m, ci) for m, ci in loss]),
            published=" < ".join(f"{TABLE3[r][COLUMNS.index(c)][0]:.2f}" for r in rows),
            simulated=", ".join(f"{m:.2f}" for m, _ in loss),
            note=(
                "at d = 10 ms the admission test (section 5) refuses green by the blue backlog due "
                "within d + pg, which the green rate hardly changes; see the notes"
                if c == "10ms"
                else ""
            ),
        )
        ctx.claim(
            f"t4-blue-falls-with-rate-{c}",
            f"{where}: blue throughput falls as the green rate grows: clearly at 500, no step up beyond the CIs",
            _falls(tput),
            published=" > ".join(f"{TABLE4[r][COLUMNS.index(c)][0]:.0f}" for r in rows),
            simulated=", ".join(f"{m:.0f}" for m, _ in tput),
        )
    ctx.table("Table 3: green loss rate % (90 % CI)", _side_by_side(TABLE3, sim, "green_loss_pct", "green kbit/s", v3))
    ctx.table("Table 4: blue aggregate throughput kbit/s (90 % CI)", _side_by_side(TABLE4, sim, "blue_kbps", "green kbit/s", v4))
    ctx.table("Green mean queueing delay ms (90 % CI); blue goodput and TCP segment loss under flat BE", _delay_table(sim, rows, "green kbit/s"))
    ctx.figure("against-green-rate", _figure(sim, rows, TABLE3, TABLE4, "green aggregate kbit/s", against_d=False))
    _explain(ctx, sim, rows, TABLE3)
    d10 = [_mean_ci(sim[(r, "10ms")]["green_loss_pct"])[0] for r in rows]
    ctx.note(
        "At d = 10 ms dsim's green loss hardly depends on the green rate ("
        + ", ".join(f"{v:.1f}" for v in d10)
        + " %): the admission test refuses green when the blue packets due within d + pg and the "
        "green queue exceed c (d + pg) = 1450 B, which the blue backlog alone decides. The testbed's "
        "loss grows to 55.6 % (with CIs up to 12.5 points); the document itself suspects its d = 10 ms "
        "column ('a threshold for the maximum green delay beyond which there is a very high increase "
        "in the green loss rate ... may be pathological ... or a characteristic of the ABE "
        "implementation'). A hypothesis dsim cannot check: dummynet serves its pipes on a kernel "
        "clock tick (1 ms at HZ = 1000, 10 ms at FreeBSD's default HZ = 100), coarse against a 10 ms "
        "deadline."
    )
    flat500 = sim[(500, "flat")]
    g_loss, b_loss = _mean_ci(flat500["green_loss_pct"])[0], _mean_ci(flat500["blue_loss_pct"])[0]
    filled = _mean_ci(flat500["blue_kbps"] + flat500["green_kbps"])[0]
    pub_filled = TABLE4[500][3][0] + 500 * (1 - TABLE3[500][3][0] / 100)
    ctx.note(
        f"At 500 kbit/s of green under flat BE the testbed loses {TABLE3[500][3][0]:.1f} % of the green "
        f"packets and its blue + green IP throughput is about {pub_filled:.0f} kbit/s; dsim's flat FIFO "
        f"loses {g_loss:.1f} % of the green packets and {b_loss:.1f} % of the TCP segments, and blue + "
        f"green deliver {filled:.0f} kbit/s. dsim does not model what else limited the testbed there "
        "(green sources in phase, the 14 B of Ethernet header per 200 B datagram a frame-pacing bridge "
        "charges, Linux 2.2's TCP at windows of two or three segments); the document gives too little "
        "to tell which."
    )


def _explain(ctx: Context, sim: dict[tuple[Any, str], pd.DataFrame], rows: list[Any], loss_table: dict[Any, list[tuple[float, float]]]) -> None:
    """Notes on the gaps that recur, computed from the runs (not fitted)."""
    flat = [_mean_ci(sim[(r, "flat")]["green_loss_pct"])[0] for r in rows]
    pub_flat = [loss_table[r][3][0] for r in rows]
    ctx.note(
        "Green loss under flat best effort, dsim vs testbed: "
        + ", ".join(f"{r}: {s:.2f} vs {p:.2f} %" for r, s, p in zip(rows, flat, pub_flat))
        + ". The testbed's numbers come from one dummynet bridge with Linux 2.2 stacks, one run each "
        "(their CIs span runs we do not have); dsim's TCP is a model of the standard algorithms "
        "(docs/tcp.md), its queue excludes the packet on the wire (dummynet's includes it) and counts "
        "75 000 B (ipfw's 75 Kbytes may be 76 800 B)."
    )
    ctx.note(
        "Blue throughput counts IP bytes of the data segments delivered (retransmissions included): "
        "the testbed's blue throughput plus its green traffic add up to about 99 % of the 1 Mbit/s "
        "link, more than TCP payload alone could reach, so its tables count whole packets too. Under "
        "flat BE dsim's blue + green deliver "
        + ", ".join(f"{r}: {_mean_ci(sim[(r, 'flat')]['blue_kbps'] + sim[(r, 'flat')]['green_kbps'])[0]:.0f}" for r in rows)
        + " kbit/s of IP bytes, the testbed's about 1 % less: a dummynet bridge paces Ethernet "
        "frames (14 B more per packet: 1500/1514 of 1 Mbit/s is 990.8 kbit/s of IP), which would "
        "account for it."
    )


def _figure(sim: dict[tuple[Any, str], pd.DataFrame], rows: list[Any], loss_table: dict[Any, Any], tput_table: dict[Any, Any], row_label: str, against_d: bool):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_l, ax_t) = plt.subplots(1, 2, figsize=(10, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, col, table, ylabel in ((ax_l, "green_loss_pct", loss_table, "green loss (%)"), (ax_t, "blue_kbps", tput_table, "blue aggregate throughput (kbit/s)")):
        if against_d:
            # One line per number of blue connections, x = d; flat BE as a dashed level.
            for i, r in enumerate(rows):
                color = colors[i % len(colors)]
                m = [_mean_ci(sim[(r, c)][col]) for c in COLUMNS]
                ax.errorbar(DELAYS_MS, [v for v, _ in m[:3]], yerr=[0 if math.isnan(e) else e for _, e in m[:3]], marker="o", color=color, label=f"dsim, {r} {row_label}")
                ax.axhline(m[3][0], color=color, linestyle="--", linewidth=1)
                ax.plot(DELAYS_MS, [table[r][k][0] for k in range(3)], "x", color=color, markersize=8, label=f"published, {r}")
            ax.set_xlabel("green maximum delay d (ms); dashed: flat BE (dsim)")
        else:
            # One line per column (d or flat), x = green rate.
            for i, c in enumerate(COLUMNS):
                color = colors[i % len(colors)]
                m = [_mean_ci(sim[(r, c)][col]) for r in rows]
                label = "flat BE" if c == "flat" else f"d = {c}"
                ax.errorbar(rows, [v for v, _ in m], yerr=[0 if math.isnan(e) else e for _, e in m], marker="o", color=color, label=f"dsim, {label}")
                ax.plot(rows, [table[r][i][0] for r in rows], "x", color=color, markersize=8, label=f"published, {label}")
            ax.set_xlabel(row_label)
        ax.set_ylabel(ylabel)
    ax_l.legend(fontsize=7)
    fig.suptitle("ABE (draft-hurley-alternative-best-effort-01, section 6): dsim (o, 90 % CI) and the testbed (x)")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------
# Throughput transparency with TCP-friendly sources (sections 2 and 5.1)

#: Settings (blue TFRC sources, d) of the transparency runs, as in crates/dsim-core/tests/abe.rs.
TRANSPARENCY_SETTINGS = ((4, "20ms"), (8, "10ms"))
#: The control-loop modes: off (section 5 alone), the default loop (g and green penalty),
#: the loop restricted to the document's actuator g (max_penalty = 0).
LOOP_MODES: dict[str, dict[str, Any] | None] = {"off": None, "on": {}, "g only": {"max_penalty": 0}}


@experiment(
    "abe-transparency",
    "ABE throughput transparency to blue: an entirely green TFRC source against the same source blue",
    "draft-hurley-alternative-best-effort-01 (seed 000), sections 2 and 5.1",
    families=("abe", "seed-000"),
)
def abe_transparency(ctx: Context) -> None:
    """n blue TFRC sources (RFC 5348) and one test TFRC source through the 1 Mbit/s, 75 KB
    bottleneck with DSD; the test source is entirely green or entirely blue, with the same
    seeds (paired runs). Section 2: without a correction "by becoming green, a source would
    be allowed a higher data rate, due to the reduction in round trip time"; "the ABE node
    must ensure that an entirely green flow gets a lesser or equal throughput than if it
    were blue". The control loop (section 5.1, dsim's design: sched/dsd/control.rs) drives
    g and, below g = 0, a green penalty; its state is read from the queues table
    (dsd_g_mean, dsd_penalty_mean) and the dsd_control table."""
    base = ctx.scenario("abe/transparency.toml")
    settings = TRANSPARENCY_SETTINGS
    reps = ctx.pick(3, 10)
    duration, warmup = ctx.pick(("200s", "20s"), ("300s", "20s"))
    seed = 7
    rows = []
    control_series = None
    g_range = (math.inf, -math.inf)
    for n_blue, d in settings:
        for mode, control in LOOP_MODES.items():
            queue: dict[str, Any] = {"type": "dsd", "buffer": "75KB", "d": d}
            if control is not None:
                queue["control"] = control
            per_colour = {}
            for colour, share in (("blue", 0.0), ("green", 1.0)):
                sc = base.copy().set("link[2].queue", queue).set("flow[0].count", n_blue).set("flow[1].app.green", share)
                res = ctx.run(sc, replications=reps, seed=seed, duration=duration, warmup=warmup)
                f = res.flows
                test = f[f["flow"] == "test"].set_index("replication")["throughput_bps"] / 1e3
                others = f[f["flow"].str.startswith("blue")].groupby("replication")["throughput_bps"].mean() / 1e3
                q = res.queues[(res.queues["port"] == "R1->R2") & (res.queues["queue"] == 0)].set_index("replication")
                per_colour[colour] = (test, others, q)
                if control is not None and not res.dsd_control.empty:
                    g_range = (min(g_range[0], res.dsd_control["g"].min()), max(g_range[1], res.dsd_control["g"].max()))
                    if mode == "on" and colour == "green" and control_series is None:
                        dc = res.dsd_control
                        control_series = (f"{n_blue} blue, d = {d}", dc[(dc["replication"] == 0) & (dc["port"] == "R1->R2")])
            (tb, ob, _), (tg, og, qg) = per_colour["blue"], per_colour["green"]
            ratio = tg / tb
            rows.append(
                {
                    "blue sources": n_blue,
                    "d": d,
                    "loop": mode,
                    "test blue kbit/s": tb.mean(),
                    "test green kbit/s": tg.mean(),
                    "green / blue": ratio.mean(),
                    "ratio CI": t_half_width(ratio.to_numpy()) if len(ratio) > 1 else math.nan,
                    "others, test blue": ob.mean(),
                    "others, test green": og.mean(),
                    "g mean": qg["dsd_g_mean"].mean(),
                    "penalty mean": qg["dsd_penalty_mean"].mean(),
                    "_ratio": ratio,
                    "_others": (ob, og),
                }
            )
            tag = f"{n_blue}-{d}"
            if mode == "off":
                ctx.claim(
                    f"loop-off-green-gains-{tag}",
                    f"{n_blue} blue, d = {d}, no control loop: an entirely green source gets more than as blue (section 2's risk)",
                    ratio.mean() > 1.0,
                    published="green/blue > 1 is possible (section 2)",
                    simulated=f"{ratio.mean():.2f}",
                )
            elif mode == "on":
                ctx.claim(
                    f"loop-on-transparency-{tag}",
                    f"{n_blue} blue, d = {d}, control loop: the green source gets no more than as blue (throughput transparency)",
                    bool((ratio <= 1.0).all()),
                    published="green/blue <= 1",
                    simulated=", ".join(f"{v:.2f}" for v in ratio),
                )
                m_b, c_b = _mean_ci(ob)
                m_g, c_g = _mean_ci(og)
                ctx.claim(
                    f"loop-on-blue-not-hurt-{tag}",
                    f"{n_blue} blue, d = {d}, control loop: the blue sources get no less when the test source turns green (within CI)",
                    _not_below((m_g, c_g), (m_b, c_b)),
                    published="green does not hurt blue (section 2, requirement 4)",
                    simulated=f"{m_b:.1f} -> {m_g:.1f} kbit/s",
                )
            else:
                # dsim's own finding, not the document's: reported, not scored.
                ctx.note(
                    f"{n_blue} blue, d = {d}, loop on g alone (dsim's design question, not a claim of the "
                    f"document): g ends at {qg['dsd_g'].max():.2f} and the green source still gets "
                    f"{ratio.mean():.2f} times its blue throughput: g delays green by at most d, too "
                    "little to offset its lower loss (sched/dsd/control.rs)."
                )
    # g in [0, 1] holds by construction (control.rs clamps it; unit-tested there): shown, not scored.
    ctx.note(f"The control loop's g over every period of these runs: [{g_range[0]:.2f}, {g_range[1]:.2f}].")
    table = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    ctx.table("Throughput transparency: test TFRC source entirely blue vs entirely green (kbit/s, means)", table.round(3))
    ctx.figure("transparency", _transparency_figure(table, control_series))


def _transparency_figure(table: pd.DataFrame, control_series: tuple[str, pd.DataFrame] | None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_r, ax_g) = plt.subplots(1, 2, figsize=(10, 4))
    labels = [f"{r['blue sources']} blue, d={r['d']}\nloop {r['loop']}" for _, r in table.iterrows()]
    ax_r.bar(range(len(table)), table["green / blue"], yerr=table["ratio CI"].fillna(0), color=["#999", "#2a7", "#c63"] * (len(table) // 3 + 1))
    ax_r.axhline(1.0, color="k", linewidth=1)
    ax_r.set_xticks(range(len(table)), labels, fontsize=7)
    ax_r.set_ylabel("test source throughput, green / blue")
    ax_r.set_title("throughput transparency needs green / blue <= 1")
    if control_series is not None:
        name, s = control_series
        ax_g.plot(s["time_s"], s["g"], label="g")
        ax_g.plot(s["time_s"], s["penalty"], label="green penalty")
        ax_g.set_xlabel("time (s)")
        ax_g.set_ylabel("control loop output")
        ax_g.set_title(f"control loop, test source green ({name})")
        ax_g.legend()
    fig.tight_layout()
    return fig
