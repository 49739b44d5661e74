"""The Assured Service experiments of draft-ibanez-diffserv-assured-eval-00 (seed 002).

Scenario files: python/dsim/scenarios/as/ (written by :mod:`.assured_topology`, whose
headers state what the document gives and what dsim chooses). The document's figures are
not in its text, so figures 2-6 and 10-12 are compared through the relations its text
states about them (claims); Table 1, Table 2 and the figure 13 means number by number.
Its numbers come from ns-2 averaged over 5 or 10 runs, with no spread: their bands are
REPRODUCTIONS.md's (Table 1 ±15 %, figure 13 ±20 %).

Measures: a TCP connection's rate is its goodput (payload delivered in order), a CBR
source's its delivered datagram rate. KB = 1000 B ("1 Mbps (125 Kbytes/s)").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import assured_topology as topo
from .framework import (
    DOCUMENT,
    FULL,
    INVARIANT,
    QUICK,
    SETUP,
    TESTBED,
    All,
    Band,
    Claim,
    Experiment,
    Measures,
    Miss,
    Quantity,
    Runs,
    RunSet,
    Sample,
    Setup,
    Table,
    Values,
    above,
    below,
    falls,
    registry,
    rises,
)  # fmt: skip

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..results import Results
    from ..scenario import Scenario

FAMILY = "as"
SOURCE = "seed 002 (draft-ibanez-diffserv-assured-eval-00)"
BOTTLENECK, T1 = "r0->r1", "r6->r7"
#: Quick mode: 40 s runs (35 s measured after 5 s); full mode: the files' 100 s.
QUICK_RUNS = Runs(4, "40s", "5s")


def per_connection(res: Results) -> pd.DataFrame:
    """flows with the connection number, its rate (goodput for TCP, delivered datagrams for
    UDP, bit/s) and its loss ratio."""
    f = res.flows.copy()
    f["conn"] = f["flow"].str.split(".").str[0].str.lstrip("c").astype(int)
    f["rate_bps"] = np.where(f["transport"] == "tcp", f["goodput_bps"], f["throughput_bps"])
    f["loss"] = f["dropped_pkts"] / f["sent_pkts"].where(f["sent_pkts"] > 0)
    return f


def acks_lost(runs: RunSet) -> dict[str, Quantity]:
    """ACKs lost over every run of the experiment (section 2.2: none may be)."""
    return {"acks lost": sum(int(runs[name].flows["dropped_ack_pkts"].sum()) for name in runs)}


ACKS = Claim("setup-acks", "no ACK is lost in any run (section 2.2: only the RIO queue drops)", "section 2.2", below("acks lost", 0.5), kind=SETUP)


def rtt_dependence(rtt_ms: np.ndarray, rate: np.ndarray) -> float:
    """How much more a 50 ms connection gets than a 150 ms one on the exponential
    regression of rate on RTT (the document's trend lines): exp(-100 ms x slope)."""
    ok = rate > 0
    if ok.sum() < 3:
        return math.nan
    slope, _ = np.polyfit(rtt_ms[ok], np.log(rate[ok]), 1)
    return float(math.exp(-100.0 * slope))


def demoted_share(res: Results) -> Values:
    """Per replication: IN packets the policers demote over IN packets the profilers mark (%)."""
    c = res.conditioners
    marked = c[c["conditioner"].str.startswith("profiler-") & (c["color"] == "green")].groupby("replication")["pkts"].sum()
    demoted = c[c["conditioner"].str.startswith("policer")].groupby("replication")["demoted_pkts"].sum()
    return (100 * demoted / marked).to_numpy()


# -- 3.1: influence of the round-trip time ------------------------------------------------------

#: The configurations of figures 2-5: label -> number of AS hosts (h0..h{k-1}).
RTT_CASES = {"10 AS": 10, "25 AS": 25, "40 AS": 40, "all BE": 0, "all AS": 50}
RTTS = np.array(topo.rtts_ms(50))


def rtt_setup(label: str, k: int) -> Setup:
    def edit(sc: Scenario) -> Scenario:
        sc = topo.assured_hosts(sc, k)
        if label.startswith("all"):
            i = next(i for i, link in enumerate(sc.data["link"]) if (link["from"], link["to"]) == ("r0", "r1"))
            sc.set(f"link[{i}].forward.queue.series", "100ms")
        return sc

    return Setup(label, "as/rtt.toml", edit)


def rtt_measure(runs: RunSet) -> dict[str, Quantity]:
    out = acks_lost(runs)
    for label, k in RTT_CASES.items():
        res = runs[label]
        f = per_connection(res)
        per_rep = f.pivot(index="replication", columns="conn", values="rate_bps")
        for cls, conns in (("AS", range(k)), ("BE", range(k, 50))):
            if len(conns):
                sel = per_rep[list(conns)]
                out[f"dependence/{label}/{cls}"] = np.array([rtt_dependence(RTTS[list(conns)], row.to_numpy()) for _, row in sel.iterrows()])
                out[f"mean/{label}/{cls}"] = sel.mean(axis=1).to_numpy() / 8e3
        if k:
            out[f"demoted/{label}"] = demoted_share(res)
            # Connections below / above the target beyond their own 90 % CI over the runs.
            s = {c: Sample.of(np.asarray(per_rep[c]) / 1e6) for c in range(k)}
            out[f"below target/{label}"] = float(sum(x.hi < 1.0 for x in s.values()))
            out[f"above target/{label}"] = float(sum(x.lo > 1.0 for x in s.values()))
        if not res.queue_series.empty:
            qs = res.queue_series
            qs = qs[(qs["port"] == BOTTLENECK) & (qs["precedence"] == 1) & (qs["time_s"] >= 5.0)]
            out[f"queue std/{label}"] = qs.groupby("replication")["avg"].std().to_numpy()
    return out


def rtt_figures(runs: RunSet, m: Measures) -> list[tuple[str, Figure]]:
    """Figures 2-5: rate against RTT per connection (mean over runs), trend lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    for fig_no, labels in ((2, ["10 AS"]), (3, ["25 AS"]), (4, ["40 AS"]), (5, ["all BE", "all AS"])):
        fig, ax = plt.subplots(figsize=(6, 4))
        for label in labels:
            f = per_connection(runs[label])
            rate = f.groupby("conn")["rate_bps"].mean() / 8e3
            k = RTT_CASES[label]
            for cls, conns, marker, colour in (("AS", range(k), "o", "tab:blue"), ("best effort", range(k, 50), "s", "tab:orange")):
                if not len(conns):
                    continue
                x, y = RTTS[list(conns)], rate[list(conns)].to_numpy()
                ax.plot(x, y, marker, color=colour, ms=4, label=f"{cls} ({label})")
                slope, icpt = np.polyfit(x, np.log(y), 1)
                grid = np.linspace(50, 150, 50)
                ax.plot(grid, np.exp(icpt + slope * grid), "-", color=colour, lw=1)
        ax.axhline(125, color="grey", ls=":", lw=0.8, label="AS target")
        ax.set_xlabel("RTT (ms)")
        ax.set_ylabel("average rate (KB/s)")
        ax.set_title(f"Figure {fig_no}: average rate vs RTT, {' and '.join(labels)}")
        ax.legend(fontsize=7)
        out.append((f"figure{fig_no}", fig))
    return out


def dependence_claim(cid: str, text: str, small: str, large: str) -> Claim:
    return Claim(cid, text, "section 3.1", below(f"dependence/{small}", f"dependence/{large}"))


registry.add(
    Experiment(
        "as-rtt", "Assured Service: rate vs RTT with 10, 25, 40 and 50 AS of 50 connections (figures 2-6)", f"{SOURCE}, section 3.1", FAMILY,
        setups=[rtt_setup(label, k) for label, k in RTT_CASES.items()], measure=rtt_measure, quick=QUICK_RUNS, full=Runs(5),
        claims=[
            dependence_claim("as40-vs-be10", "'when the AS connections are in large number, they show less deviation (with respect to RTT) than the best-effort connections do in the reverse situation' (40 AS vs the 40 BE of figure 2)",
                             "40 AS/AS", "10 AS/BE"),
            dependence_claim("all-as-vs-all-be", "'In the all AS connections case there is less RTT unfairness than in the all best-effort connections case' (figure 5)", "all AS/AS", "all BE/BE"),
            dependence_claim("as-dependence-shrinks", "'having a significant amount of assured traffic ... lowers the dependency on the RTT for AS connections' (40 vs 10 AS)", "40 AS/AS", "10 AS/AS"),
            dependence_claim("be-dependence-shrinks", "'... but also for best-effort connections' (40 vs 10 AS)", "40 AS/BE", "10 AS/BE"),
            *[Claim(f"target-missed-and-exceeded-{k}", f"{k} AS: 'some connections do not achieve their target rate, while others exceed the target rate' (beyond each connection's CI)",
                    "section 3.1", All([above(f"below target/{k} AS", 0.5), above(f"above target/{k} AS", 0.5)])) for k in (25, 40)],
            Claim("fig6-oscillation", "'in the best-effort only case the average queue size oscillates substantially' (standard deviation of RIO's average over time, all BE vs all AS)",
                  "section 3.1, figure 6", above("queue std/all BE", "queue std/all AS")),
            Claim("remarking-under-3pct", "20 KB profilers and a 25 KB policer keep the remarking rate under 3 % (IN packets demoted, every AS case)", "section 2.1.3",
                  All([below(f"demoted/{label}", 3.0) for label in ("10 AS", "25 AS", "40 AS", "all AS")])),
            Claim("as-above-be", "10 AS: AS connections get more than best-effort ones (their profile protects them)", "section 2.1", above("mean/10 AS/AS", "mean/10 AS/BE"), kind=INVARIANT),
            ACKS,
        ],
        expected={
            "be-dependence-shrinks": Miss(
                TESTBED,
                "dsim's best-effort RTT dependence is {dependence/10 AS/BE:.2f} with 10 AS and {dependence/40 AS/BE:.2f} with 40 AS: "
                "best-effort connections lose OUT packets to RIO at a rate that does not depend on how much IN traffic shares the "
                "queue, and keep TCP's RTT bias whatever the AS share; the AS connections' dependence does shrink "
                "({dependence/10 AS/AS:.2f} to {dependence/40 AS/AS:.2f}). The document's claim rests on reading the spread of "
                "two scatter plots of ns-2 runs (figures 2 and 4).",
            ),
            "target-missed-and-exceeded-25": Miss(
                TESTBED,
                "with 25 AS connections (half the link subscribed) {below target/25 AS:.0f} of dsim's AS connections stay below their "
                "target beyond their CI and {above target/25 AS:.0f} above it: every AS connection of dsim reaches its target, even its "
                "longest-RTT one; the document's remark holds in dsim once the subscription is high ({below target/40 AS:.0f} below "
                "and {above target/40 AS:.0f} above with 40 AS).",
            ),
            "remarking-under-3pct": Miss(
                DOCUMENT,
                "demoted / IN-marked packets: {demoted/10 AS:.2f} %, {demoted/25 AS:.2f} %, {demoted/40 AS:.2f} %, {demoted/all AS:.2f} % "
                "(10, 25, 40 AS and all AS). The document does not say in which setup it measured its rate, nor whether it is relative to "
                "IN packets (as section 3.5's) or to all packets crossing the policer (about half as large here).",
            ),
        },
        full_only={"as-dependence-shrinks": "each run's trend line is fitted to one rate per connection: the quick runs' "
                                            "shorter window leaves it too noisy to tell the two dependences apart, the full runs do"},
        figures=[rtt_figures],
        doc="50 TCP connections with RTTs uniform in 50-150 ms through a 50 Mbit/s RIO bottleneck; hosts h0..h(k-1) AS capable "
        "(1 Mbit/s) for k = 10, 25, 40, then all best effort and all AS. The RTT dependence of a class is the ratio of its "
        "exponential trend line at 50 ms to that at 150 ms (1 = none), fitted in each run.",
    )
)


# -- 3.2: performance against target rates -------------------------------------------------------

#: Table 1, per target group: (target Mbit/s, connections, published mean of its connections).
TABLE1 = {2.0: [1.32, 1.27, 1.32, 1.31], 1.0: [0.93, 0.94, 0.95, 0.95], 0.5: [0.60, 0.58, 0.58, 0.58], 0.2: [0.38, 0.35, 0.39, 0.36], 0.1: [0.29, 0.30, 0.30, 0.30], 0.0: [0.25, 0.21]}
GROUPS = {2.0: range(4), 1.0: range(4, 8), 0.5: range(8, 12), 0.2: range(12, 16), 0.1: range(16, 20), 0.0: range(20, 40)}
NS2_15 = Band("ns-2, 10 runs, no spread given: REPRODUCTIONS.md's ±15 %", rel=0.15)


def targets_measure(runs: RunSet) -> dict[str, Quantity]:
    res = runs["targets"]
    f = per_connection(res)
    per_rep = f.pivot(index="replication", columns="conn", values="rate_bps") / 1e6
    groups: dict[str, Values] = {f"group/{t:g}": per_rep[list(c)].mean(axis=1).to_numpy() for t, c in GROUPS.items()}
    out = acks_lost(runs) | groups
    out |= {f"ratio/{t:g}": groups[f"group/{t:g}"] / t for t in GROUPS if t}
    conns = list(GROUPS[2.0])
    out["out share/2"] = 100 * f[f["conn"].isin(conns)]["red_sent_pkts"].sum() / f[f["conn"].isin(conns)]["sent_pkts"].sum()
    out["rtt/2"] = f[f["conn"].isin(conns)]["rtt_mean_ms"].mean()
    out["in lost"] = float(f["green_dropped_pkts"].sum())
    out["rio queue"] = res.queues[res.queues["port"] == BOTTLENECK].groupby("replication")["mean_len_pkts"].sum().to_numpy()
    return out


AS_TARGETS = [t for t in TABLE1 if t]
registry.add(
    Experiment(
        "as-targets", "Assured Service: achieved vs target rate, 20 AS with targets 2-0.1 Mbit/s (Table 1, figure 7)", f"{SOURCE}, section 3.2", FAMILY,
        setups=[Setup("targets", "as/targets.toml")], measure=targets_measure, quick=QUICK_RUNS, full=Runs(10),
        tables=[Table("group", "Table 1, mean measured rate of a target group", "Table 1", "Mbit/s", tuple(TABLE1), ("rate",),
                      {(t, "rate"): float(np.mean(v)) for t, v in TABLE1.items()}, lambda r, c: f"group/{r:g}", NS2_15, row_label="target Mbit/s")],
        claims=[
            Claim("high-targets-fall-short", "'connections with high targets (2 and 1 Mbit/s) fall short of them'", "section 3.2",
                  All([below("group/2", 2.0), below("group/1", 1.0)])),
            Claim("low-targets-exceed", "connections with low targets (0.2 and 0.1 Mbit/s) exceed them", "section 3.2", All([above("group/0.2", 0.2), above("group/0.1", 0.1)])),
            Claim("increasing", "the achieved rate increases with the target", "Table 1", rises(*(f"group/{t:g}" for t in sorted(AS_TARGETS)))),
            Claim("not-proportional", "... but not proportionally: achieved / target falls as the target rises", "Table 1", falls(*(f"ratio/{t:g}" for t in sorted(AS_TARGETS)))),
            ACKS,
        ],
        expected={
            "group-0.0-rate": Miss(
                TESTBED,
                "dsim's best-effort connections get {group/0:.3f} Mbit/s each against Table 1's {pub.group/0:.3f} (the mean of the "
                "two it lists): what dsim's 2 Mbit/s group lacks ({group/2:.2f} against {pub.group/2:.2f} per connection) goes to "
                "best effort and the low-target groups.",
            ),
            "group-2.0-rate": Miss(
                TESTBED,
                "dsim's 2 Mbit/s connections send {out share/2:.1f} % of their packets OUT (bursts beyond the profiler's bucket) and lose "
                "only OUT packets ({in lost:.0f} IN packets lost in all runs); their mean RTT is {rtt/2:.0f} ms with RIO holding "
                "{rio queue:.0f} packets, so each OUT loss halves a window that takes seconds to regrow: the document's own "
                "explanation of the shortfall (section 3.2), stronger in dsim than in its ns-2 runs.",
            ),
        },
        doc="40 connections (20 AS, 20 BE), RTT 100 ms, 20 Mbit/s bottleneck, RIO 347/694/0.05 390/694/0.02.",
    )
)


# -- 3.3: a non-responsive source ------------------------------------------------------------------

CBR_CASES = {"BE CBR": None, "AS CBR 4": "4Mbps", "AS CBR 8": "8Mbps"}
#: CBR output rates, Mbit/s, up to the host's 10 Mbit/s access link; the claims use 2 and 10.
CBR_RATES = {QUICK: (2.0, 4.0, 8.0, 10.0), FULL: tuple(float(r) for r in range(1, 11))}
CBR = topo.CBR_CONNECTION


def cbr_setups(mode: str) -> list[Setup]:
    def edit(target: str | None, rate: float) -> Callable[[Scenario], Scenario]:
        return lambda sc: topo.cbr_source(sc, rate=f"{rate:g}Mbps", target=target)

    return [Setup(f"{case}/{r:g}", "as/cbr.toml", edit(target, r)) for case, target in CBR_CASES.items() for r in CBR_RATES[mode]]


def cbr_measure(runs: RunSet) -> dict[str, Quantity]:
    out: dict[str, Values] = {}
    rates = CBR_RATES[FULL if runs.full else QUICK]
    for case in CBR_CASES:
        for r in rates:
            res = runs[f"{case}/{r:g}"]
            f = per_connection(res)
            rate = f.pivot(index="replication", columns="conn", values="rate_bps") / 1e6
            tcp = [c for c in map(int, rate.columns) if c != CBR]
            key = f"{case}/{r:g}"
            out |= {f"AS/{key}": rate[[c for c in tcp if c < 10]].mean(axis=1).to_numpy(), f"BE/{key}": rate[[c for c in tcp if c >= 10]].mean(axis=1).to_numpy(),
                    f"CBR/{key}": rate[CBR].to_numpy(), f"best TCP/{key}": rate[tcp].max(axis=1).to_numpy(),
                    f"CBR loss/{key}": 100 * f[f["conn"] == CBR].sort_values("replication")["loss"].to_numpy()}  # fmt: skip
            q = res.queues[(res.queues["port"] == BOTTLENECK) & (res.queues["precedence"] == 0)]
            out[f"IN early/{key}"] = (q["drop_early_pkts"] + q["drop_forced_pkts"]).to_numpy()
            out[f"IN arrivals/{key}"] = q["arrivals_pkts"].to_numpy()
    summary = acks_lost(runs)
    for case in ("AS CBR 4", "AS CBR 8"):
        diffs = [abs(out[f"{c}/{case}/{r:g}"].mean() - out[f"{c}/BE CBR/{r:g}"].mean()) / out[f"{c}/BE CBR/{r:g}"].mean() for c in ("CBR", "AS") for r in rates]
        summary[f"impact difference/{case}"] = 100 * float(np.mean(diffs))
    summary["IN early 4"] = float(sum(out[f"IN early/AS CBR 4/{r:g}"].mean() for r in rates))
    summary["IN early 8"] = float(sum(out[f"IN early/AS CBR 8/{r:g}"].mean() for r in rates))
    return {**out, **summary}


def cbr_extra(runs: RunSet, m: Measures) -> list[tuple[str, pd.DataFrame]]:
    rates = CBR_RATES[FULL if runs.full else QUICK]
    rows = [{"case": case, "CBR Mbit/s": r, **{c: m[f"{c}/{case}/{r:g}"].show() for c in ("AS", "BE", "CBR", "CBR loss", "IN early")}} for case in CBR_CASES for r in rates]
    return [("Mean rates (Mbit/s) per CBR output rate: AS TCP, BE TCP, CBR; CBR loss %; IN early/forced drops per run", pd.DataFrame(rows))]


registry.add(
    Experiment(
        "as-cbr", "Assured Service: a non-responsive CBR source, best effort and AS capable (figures 10-12)", f"{SOURCE}, section 3.3", FAMILY,
        setups=cbr_setups, measure=cbr_measure, quick=Runs(3, "40s", "5s"), full=Runs(5),
        claims=[
            Claim("tcp-degrades", "'As the CBR source increases its sending rate, all the TCP connections get degraded' (AS and BE means, CBR at 2 and 10 Mbit/s)", "section 3.3",
                  All([below("AS/BE CBR/10", "AS/BE CBR/2"), below("BE/BE CBR/10", "BE/BE CBR/2")])),
            Claim("be-toward-starvation", "'with the best effort connections being pushed toward starvation' (at 10 Mbit/s below half their rate at 2, and below AS)", "section 3.3",
                  All([below("BE/BE CBR/10", "BE/BE CBR/2", factor=0.5), below("BE/BE CBR/10", "AS/BE CBR/10")])),
            Claim("cbr-grabs", "'the CBR source experiences increasing loss, but it still captures a lot of bandwidth' (more than any TCP connection at 10 Mbit/s)", "section 3.3",
                  All([above("CBR loss/BE CBR/10", "CBR loss/BE CBR/2"), above("CBR/BE CBR/10", "best TCP/BE CBR/10")])),
            Claim("as-capable-same-impact", "'non-responsive source produces the same impact on other connections, whether it is AS capable or not' (CBR and AS TCP rates within 20 % on average over the CBR rates)",
                  "section 3.3", All([below(f"impact difference/{c}", 20.0) for c in ("AS CBR 4", "AS CBR 8")])),
            *[Claim(f"no-loss-at-target-{t}", f"target {t} Mbit/s: 'Virtually no packets get dropped when the CBR source transmits at its target rate' (below 1 %)", "section 3.3",
                    below(f"CBR loss/AS CBR {t}/{t}", 1.0)) for t in (4, 8)],
            Claim("no-in-early-drops-4", "target 4 Mbit/s (70 % subscribed): no IN packet is early dropped (every CBR rate)", "section 3.3", below("IN early 4", 0.5)),
            Claim("in-early-drops-8", "target 8 Mbit/s (90 % subscribed): 'early dropping a non-negligible number of IN packets'", "section 3.3", above("IN early 8", 0.5)),
            ACKS,
        ],
        expected={
            "no-in-early-drops-4": Miss(
                DOCUMENT,
                "dsim drops {IN early 4:.1f} IN packets early per run in all, at the highest CBR rates only ({IN early/AS CBR 4/10:.1f} "
                "of {IN arrivals/AS CBR 4/10:.0f} IN arrivals at the access link's rate): the OUT part of a CBR source far above its "
                "target keeps the total average near max_th, and the IN average follows. The document does not say which CBR rates "
                "its statement covers.",
            ),
        },
        full_only={"no-in-early-drops-4": "IN early drops at a 4 Mbit/s target are rare events at the highest CBR rates: "
                                          "the quick runs' shorter windows see too few of them to tell"},
        extra=cbr_extra,
        doc="20 connections (10 AS TCP, 9 BE TCP, one CBR source) at 100 ms through a 20 Mbit/s RIO bottleneck "
        "(173/347/0.05 195/347/0.02); the CBR rate rises to the 10 Mbit/s of its access link; then the CBR source is AS "
        "capable with a 4 and an 8 Mbit/s target.",
    )
)


# -- 3.4: effect of AS on best-effort traffic -------------------------------------------------------


def fairness_measure(runs: RunSet) -> dict[str, Quantity]:
    f = per_connection(runs["fairness"])
    f["cls"] = np.where(f["conn"] < 25, "AS", "BE")
    per_rep = f.groupby(["replication", "cls"])["rate_bps"].mean().unstack() / 8e3
    return acks_lost(runs) | {"mean/AS": per_rep["AS"].to_numpy(), "mean/BE": per_rep["BE"].to_numpy()}


registry.add(
    Experiment(
        "as-fairness", "Assured Service: 25 AS + 25 BE share the excess unequally (figure 13)", f"{SOURCE}, section 3.4", FAMILY,
        setups=[Setup("fairness", "as/rtt.toml", lambda sc: topo.assured_hosts(sc, 25))], measure=fairness_measure, quick=QUICK_RUNS, full=Runs(5),
        tables=[Table("mean", "figure 13, mean rate of a class", "figure 13, section 3.4", "KB/s", ("AS", "BE"), ("rate",), {("AS", "rate"): 155.0, ("BE", "rate"): 75.0},
                      lambda r, c: f"mean/{r}", Band("ns-2, five runs, no spread given: REPRODUCTIONS.md's ±20 %", rel=0.2), plot=None)],
        claims=[
            Claim("be-more-than-equal-share", "best effort gets 'more than an equal share of the excess' (> 50 KB/s) and AS less than target + share (< 175 KB/s)", "section 3.4",
                  All([above("mean/BE", 50.0), below("mean/AS", 175.0)])),
            ACKS,
        ],
        doc="The 50-connection setup with 25 AS (1 Mbit/s = 125 KB/s targets) and 25 BE: an equal share of the 2.5 Mbytes/s "
        "excess would give 175 and 50 KB/s.",
    )
)


# -- 3.5: merging topology ---------------------------------------------------------------------------

#: Table 2: measured kbit/s per connection (overflow IN drops: 3, 1, 2, 0, 2, 0, 0, 1).
TABLE2_KBPS = (190, 168, 168, 170, 197, 151, 221, 160)


#: The interval of the T1 queue's samples, ms.
MERGE_SAMPLE_MS = 10


def merge_setup() -> Setup:
    def edit(sc: Scenario) -> Scenario:
        i = next(i for i, link in enumerate(sc.data["link"]) if (link["from"], link["to"]) == ("r6", "r7"))
        return sc.set(f"link[{i}].forward.queue.series", f"{MERGE_SAMPLE_MS}ms")

    return Setup("merge", "as/merge.toml", edit)


def merge_measure(runs: RunSet) -> dict[str, Quantity]:
    res = runs["merge"]
    f = per_connection(res)
    rate = f.pivot(index="replication", columns="conn", values="rate_bps") / 1e3
    t1 = res.queues[res.queues["port"] == T1]
    inq, outq = t1[t1["precedence"] == 0], t1[t1["precedence"] == 1]
    qs = res.queue_series[res.queue_series["port"] == T1]
    out = qs[qs["precedence"] == 1]
    return acks_lost(runs) | {
        "mean rate": rate.mean(axis=1).to_numpy(), "lowest rate": rate.min(axis=1).to_numpy(), "demoted": demoted_share(res),
        "IN early": (inq["drop_early_pkts"] + inq["drop_forced_pkts"]).to_numpy(), "IN overflow": inq["drop_overflow_pkts"].to_numpy(),
        "IN overflow pct": (100 * inq["drop_overflow_pkts"] / inq["arrivals_pkts"]).to_numpy(), "OUT overflow": outq["drop_overflow_pkts"].to_numpy(),
        "OUT early": outq["drop_early_pkts"].to_numpy(), "OUT forced": outq["drop_forced_pkts"].to_numpy(),
        "OUT average": float(out[out["time_s"] >= 5]["avg"].mean()), "full pct": 100 * float((out["len"] >= 24).mean()), "sample ms": MERGE_SAMPLE_MS,
    }  # fmt: skip


MERGE_BURSTS = Miss(
    TESTBED,
    "in dsim the T1's OUT average sits at {OUT average:.1f} packets, just under its max_th, so RIO drops OUT packets early "
    "({OUT early:.0f} per run) and by force ({OUT forced:.0f} per run) before the physical limit is reached; the queue is full "
    "in {full pct:.2f} % of the samples taken every {sample ms:.0f} ms, and no IN packet found it full. How bursty the merged traffic is "
    "depends on figure 14's link rates and delays, which the text does not give (dsim's reconstruction: scenarios/as/merge.toml).",
)
registry.add(
    Experiment(
        "as-merge", "Assured Service: the merging topology of figure 14 (Table 2)", f"{SOURCE}, section 3.5", FAMILY,
        setups=[merge_setup()], measure=merge_measure, quick=Runs(4), full=Runs(5),
        tables=[
            Table("rate", "Table 2, mean measured rate of the 8 connections", "Table 2", "kbit/s", ("mean",), ("rate",), {("mean", "rate"): float(np.mean(TABLE2_KBPS))},
                  lambda r, c: "mean rate", NS2_15, plot=None),
            Table("demoted", "IN packets demoted by the policers", "section 3.5, Table 2's title", "%", ("IN",), ("demoted",), {("IN", "demoted"): 7.5},
                  lambda r, c: "demoted", Band("'about 7.5%': half a unit of its first digit", abs=0.5), plot=None),
        ],
        claims=[
            Claim("above-target", "every connection gets more than its 100 kbit/s target (Table 2: 151-221 kbit/s)", "Table 2", above("lowest rate", 100.0)),
            Claim("no-in-early-drops", "'There are no early drops of IN packets'", "section 3.5", below("IN early", 0.5)),
            Claim("some-in-overflow-drops", "'some INs are dropped due to queue overflow' (more than none, under 1 % of IN arrivals)", "section 3.5",
                  All([above("IN overflow", 0.0), below("IN overflow pct", 1.0)])),
            Claim("overflow-from-out-bursts", "'the queue overflows due to bursts of OUT packets' (more OUT than IN overflow drops)", "section 3.5", above("OUT overflow", "IN overflow")),
            ACKS,
        ],
        expected={
            "demoted-IN-demoted": Miss(
                TESTBED,
                "dsim's policers demote {demoted:.1f} % of the IN packets: a policer demotes the IN packets that reach it in bursts "
                "beyond its bucket of six packets, so the share depends on how the merged IN traffic is spaced, which depends on "
                "figure 14's link rates and delays; the text does not give them (dsim's reconstruction: scenarios/as/merge.toml).",
            ),
            "some-in-overflow-drops": MERGE_BURSTS,
            "overflow-from-out-bursts": MERGE_BURSTS,
        },
        doc="Eight AS hosts (100 kbit/s targets, 4-packet profilers) merge through policed routers (200, 400, 800 kbit/s; "
        "6 packets) into a T1 with a 24-packet RIO queue (4/9/0.05 5/9/0.02), 1500 B packets. Figure 14 is not in the text: "
        "the tree, link rates and delays are dsim's reconstruction.",
    )
)


# -- 2.1.3: average rate estimator vs token bucket ----------------------------------------------------

TSW_TARGET = 4.0
TSW_RATES = {QUICK: (6.0,), FULL: (5.0, 6.0, 7.0)}


def tsw_setups(mode: str) -> list[Setup]:
    out = [Setup("token_bucket", "as/rtt.toml", lambda sc: topo.assured_hosts(sc, 25)),
           Setup("tsw", "as/rtt.toml", lambda sc: topo.assured_hosts(sc, 25, meter="tsw")),
           Setup("tsw 100 ms", "as/rtt.toml", lambda sc: topo.use_tsw(topo.assured_hosts(sc, 25), window="100ms"), "sensitivity", modes=(FULL,))]  # fmt: skip

    def cbr(meter: str, r: float) -> Callable[[Scenario], Scenario]:
        def edit(sc: Scenario) -> Scenario:
            sc = topo.cbr_source(sc, rate=f"{r:g}Mbps", target=f"{TSW_TARGET:g}Mbps")
            return topo.use_tsw(sc) if meter == "tsw" else sc

        return edit

    return out + [Setup(f"cbr/{meter}/{r:g}", "as/cbr.toml", cbr(meter, r)) for meter in ("token_bucket", "tsw") for r in TSW_RATES[mode]]


def tsw_measure(runs: RunSet) -> dict[str, Quantity]:
    out = acks_lost(runs) | {"tsw target": TSW_TARGET}
    for meter in ("token_bucket", "tsw", "tsw 100 ms"):
        if meter not in runs:
            continue
        f = per_connection(runs[meter])
        rate = f.pivot(index="replication", columns="conn", values="rate_bps") / 8e3
        as_r, be_r = rate[list(range(25))], rate[list(range(25, 50))]
        out[f"AS/{meter}"] = as_r.mean(axis=1).to_numpy()
        out[f"BE/{meter}"] = be_r.mean(axis=1).to_numpy()
        out[f"gap/{meter}"] = out[f"AS/{meter}"] - out[f"BE/{meter}"]
        # Pairs (AS, BE) whose BE connection gets at least as much, per run (%).
        out[f"overlap/{meter}"] = np.array([100 * float((b.to_numpy()[None, :] >= a.to_numpy()[:, None]).mean()) for (_, a), (_, b) in zip(as_r.iterrows(), be_r.iterrows(), strict=True)])
        out[f"AS min/{meter}"] = as_r.min(axis=1).to_numpy()
        out[f"BE max/{meter}"] = be_r.max(axis=1).to_numpy()
    for meter in ("token_bucket", "tsw"):
        for r in TSW_RATES[FULL if runs.full else QUICK]:
            res = runs[f"cbr/{meter}/{r:g}"]
            c = res.conditioners
            prof = c[(c["conditioner"] == f"profiler-h{CBR}") & (c["color"] == "green")].sort_values("replication")
            out[f"IN rate/{meter}/{r:g}"] = prof["bytes"].to_numpy() * 8 / res.run.sort_values("replication")["window_s"].to_numpy() / 1e6
            out[f"IN expected/{r:g}"] = r * (2 - r / TSW_TARGET) if r <= 2 * TSW_TARGET else 0.0
    return out


registry.add(
    Experiment(
        "as-tsw-vs-tb", "Assured Service: time sliding window estimator vs token bucket as the profile meter", f"{SOURCE}, section 2.1.3 and appendix", FAMILY,
        setups=tsw_setups, measure=tsw_measure, quick=QUICK_RUNS, full=Runs(5),
        tables=[Table("tsw-in", "TSW: IN-marked rate of a CBR source above its 4 Mbit/s target, R (2 - R/T) by the appendix's tagger", "appendix", "Mbit/s",
                      (6.0,), ("IN rate",), {(6.0, "IN rate"): 6.0 * (2 - 6.0 / TSW_TARGET)}, lambda r, c: f"IN rate/tsw/{r:g}",
                      Band("the appendix's estimator in equilibrium, exact; 3 % for the estimate's wander", rel=0.03), row_label="CBR Mbit/s", kind=INVARIANT, plot=None)],
        claims=[
            Claim("tb-better-for-as", "'AS connections achieve better performance with token buckets' (AS mean rate, TB vs TSW)", "section 2.1.3", above("AS/token_bucket", "AS/tsw")),
            Claim("tb-wider-gap", "the token bucket separates AS from BE better: a wider distance between the class means", "section 2.1.3", above("gap/token_bucket", "gap/tsw")),
            Claim("tsw-some-be-above-as", "'With average rate estimators, we had some best-effort connections getting more bandwidth than some AS ones'", "section 3.1",
                  above("overlap/tsw", 0.0)),
            Claim("tsw-cbr-exceeds-target", "'A profile meter using an average rate estimator would allow the source to transmit at a sustained rate higher than the contracted rate' (IN rate above the 4 Mbit/s target, CBR at 6)",
                  "section 2.1.3", above("IN rate/tsw/6", TSW_TARGET)),
            ACKS,
        ],
        expected={
            "tsw-some-be-above-as": Miss(
                TESTBED,
                "with TSW profilers (win_length one second) the slowest AS connection of dsim still gets {AS min/tsw:.0f} KB/s and the "
                "fastest BE one {BE max/tsw:.0f} KB/s (token bucket: {AS min/token_bucket:.0f} and {BE max/token_bucket:.0f}): TSW "
                "narrows the classes' distance (the previous check) but does not make them overlap in dsim; the document does not give "
                "its win_length.",
            ),
            "tsw-cbr-exceeds-target": Miss(
                DOCUMENT,
                "the appendix's tagger marks OUT with probability (avg - target) / target; for a CBR above its target its estimator "
                "converges to the CBR's rate, so the IN rate is R - R (R - T) / T, below T: dsim measures {IN rate/tsw/6:.2f} Mbit/s IN for a "
                "CBR at 6 and a target of {tsw target:.0f} (the formula: {IN expected/6:.2f}). The document's claim does not follow "
                "from its own algorithm for a steady CBR.",
            ),
        },
        doc="(a) 25 AS + 25 BE of the 50-connection setup, profilers metering with a token bucket (20 KB) or with the "
        "appendix's TSW estimator and tagger (win_length 1 s, dsim's choice); (b) the AS-capable CBR source of section 3.3 "
        "(target 4 Mbit/s) sending above its target, metered by either.",
    )
)

