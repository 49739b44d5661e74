"""The rate adaptive shapers of RFC 2963 (seed 004), appendix A: Tables A.2-A.7.

Setup (A.1, figure A.1, scenarios/ras/lan-trras.toml): ten customer routers C1-C10 with
ten SACK TCP workstations each, sending to companion workstations behind C1'-C10'; a
trTCM per customer (CIR 2/4/6/8/10 Mbit/s for C1-C5 and again for C6-C10, PIR = 2 CIR,
PBS = 2 CBS); C6-C10 add a rate adaptive shaper in front of their trTCM; 3-colour RIO
on the 70 Mbit/s bottleneck ER1 -> ER2; 102 s with 2 s of warm-up.

What the document measures, and how dsim reads it:

- Tables A.2, A.3, A.5, A.6 give per customer "the total throughput achieved by the
  workstations attached to each LAN as well as the total throughput for the green and the
  yellow packets". Their totals add up to 71.7 Mbit/s (A.2 + A.3) on a 70 Mbit/s
  bottleneck, so they are measured before it: dsim reports the bit rate of the packets
  leaving each customer's marker, per colour (the ``conditioners`` table, IP bytes).
- Tables A.4 and A.7 give "goodput": dsim sums the TCP goodput of the customer's ten
  flows (payload delivered in order).
- What the document leaves open (RAS thresholds, buffer, EAR constant K, the physical
  size of the RIO queue, TCP details) is chosen and justified in the scenario file;
  ``ras-sensitivity`` sweeps the RAS choices.

Published numbers come from ns-2 with those unknowns and no spread, so each number gets a
band of 15 % or 0.25 Mbit/s (whichever is wider); the document's claims are checked beyond
the replications' confidence intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..scenario import mark, srras, srtcm, trras, trtcm
from .framework import (
    DOCUMENT,
    FULL,
    QUICK,
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
    Setup,
    Table,
    Values,
    above,
    below,
    close,
    grid,
    registry,
)  # fmt: skip

SCENARIO = "ras/lan-trras.toml"
SOURCE = "RFC 2963 (draft-bonaventure-diffserv-rashaper-04) appendix A"
FAMILY = "ras"

#: Customer routers and their CIR in Mbit/s (Table A.1); C6-C10 carry the shaper.
CIR = {f"C{i}": (2, 4, 6, 8, 10)[(i - 1) % 5] for i in range(1, 11)}
UNSHAPED = [f"C{i}" for i in range(1, 6)]
SHAPED = [f"C{i}" for i in range(6, 11)]
#: The pairs of Table A.4 / A.7: (unshaped, shaped) at 2 and 6 Mbit/s.
PAIRS_A4 = (("C1", "C6"), ("C3", "C8"))

# Scenario choices (see the scenario file): thresholds as a time at the committed rate.
CIR_TH_MS, PIR_TH_MS, MIR_TH_MS = 20, 40, 80
K = "100ms"
BUFFER = "640KB"

NS2 = Band("ns-2, one run per table, no spread given, with the RAS thresholds, K and buffer unstated: 15 % or 0.25 Mbit/s", rel=0.15, abs=0.25)

# -- scenario variants ---------------------------------------------------------------------


def _kb(byte_count: float) -> str:
    return f"{byte_count / 1000:g}KB"


def thresholds(cir_mbps: float, scale: float = 1.0) -> tuple[str, str, str]:
    """CIR_th, PIR_th, MIR_th of a customer: the bytes sent at the CIR in 20, 40 and 80 ms
    (times `scale`): 5 / 10 / 20 KB at 2 Mbit/s."""
    per_ms = cir_mbps * 1e6 / 8 / 1000
    cir_th, pir_th, mir_th = (_kb(per_ms * ms * scale) for ms in (CIR_TH_MS, PIR_TH_MS, MIR_TH_MS))
    return cir_th, pir_th, mir_th


def shaper_spec(kind: str, cir_mbps: float, *, scale: float = 1.0, k: str = K, buffer: str | None = BUFFER) -> dict[str, Any]:
    """The shaper of a customer with `cir_mbps`: `kind` "trras", "g_trras", "srras" or
    "g_srras"; `buffer` None = MIR_th (the smallest the rules allow)."""
    cir_th, pir_th, mir_th = thresholds(cir_mbps, scale)
    buf = mir_th if buffer is None else buffer
    green = kind.startswith("g_")
    if kind.endswith("trras"):
        return trras(f"{cir_mbps:g}Mbps", f"{2 * cir_mbps:g}Mbps", cir_th=cir_th, pir_th=pir_th, mir_th=mir_th, buffer=buf, k=k, green=green)
    if kind.endswith("srras"):
        return srras(f"{cir_mbps:g}Mbps", cir_th=cir_th, mir_th=mir_th, buffer=buf, k=k, green=green)
    raise ValueError(f"unknown shaper kind {kind!r}")


def conditioners(
    shaper: str | None = "trras",
    *,
    meter: str = "trtcm",
    cbs_kb: float = 3,
    scale: float = 1.0,
    k: str = K,
    buffer: str | None = BUFFER,
) -> list[dict[str, Any]]:
    """The ten customer conditioners: a `meter` ("trtcm": PIR = 2 CIR, PBS = 2 CBS;
    "srtcm": EBS = 2 CBS) with CBS `cbs_kb` on every customer router, and on C6-C10 a
    `shaper` in front of it (None: no shaper)."""
    out = []
    for name, cir in CIR.items():
        cbs, ebs = _kb(cbs_kb * 1000), _kb(2 * cbs_kb * 1000)
        if meter == "trtcm":
            m = trtcm(f"{cir}Mbps", cbs, f"{2 * cir}Mbps", ebs)
        elif meter == "srtcm":
            m = srtcm(f"{cir}Mbps", cbs, ebs)
        else:
            raise ValueError(f"unknown meter {meter!r}")
        c: dict[str, Any] = {"name": name, "at": name, "interface": "ER1"}
        if shaper is not None and name in SHAPED:
            c["shaper"] = shaper_spec(shaper, cir, scale=scale, k=k, buffer=buffer)
        c.update(meter=m, green=mark("AF11"), yellow=mark("AF12"), red=mark("AF13"))
        out.append(c)
    return out


def customer_rates(flows: pd.DataFrame, conds: pd.DataFrame, window_s: float, by: tuple[str, ...] = ("replication",)) -> pd.DataFrame:
    """Per customer (and `by`): the bit rate leaving its marker by colour (green, yellow,
    red, total, Mbit/s; the throughput of Tables A.2/A.3/A.5/A.6), the green share of it,
    and the goodput of its ten flows (Tables A.4/A.7)."""
    keys = list(by)
    c = conds[conds["color"].isin(["green", "yellow", "red"])]
    rates = c.pivot_table(index=[*keys, "conditioner"], columns="color", values="bytes", aggfunc="sum").fillna(0.0) * 8 / window_s / 1e6
    for col in ("green", "yellow", "red"):
        if col not in rates:
            rates[col] = 0.0
    rates["total"] = rates["green"] + rates["yellow"] + rates["red"]
    rates["green_share"] = rates["green"] / rates["total"]
    f = flows.assign(customer="C" + flows["flow"].str.extract(r"^c(\d+)_", expand=False))
    goodput = f.groupby([*keys, "customer"])["goodput_bps"].sum() / 1e6
    rates.index = rates.index.set_names([*keys, "customer"])
    rates["goodput"] = goodput
    return rates.reset_index()



def _colour_table(rows: list[tuple[str, float, float, float]]) -> dict[str, tuple[float, float, float]]:
    return {c: (g, y, t) for c, g, y, t in rows}


#: Table A.2: throughput (Mbit/s) of the unshaped customers, trRAS run, CBS 3 KB: green, yellow, total.
TABLE_A2 = _colour_table([("C1", 1.10, 0.93, 2.25), ("C2", 2.57, 1.80, 4.55), ("C3", 4.10, 2.12, 6.39), ("C4", 5.88, 2.32, 8.33), ("C5", 7.57, 2.37, 10.0)])
#: Table A.3: the shaped customers (trRAS).
TABLE_A3 = _colour_table([("C6", 2.00, 1.69, 3.71), ("C7", 3.97, 2.34, 6.33), ("C8", 5.93, 2.23, 8.17), ("C9", 7.84, 2.28, 10.1), ("C10", 9.77, 2.14, 11.9)])
#: Table A.5: the unshaped customers of the G-trRAS run.
TABLE_A5 = _colour_table([("C1", 1.10, 0.95, 2.26), ("C2", 2.41, 1.66, 4.24), ("C3", 3.94, 1.97, 6.07), ("C4", 5.72, 2.13, 7.96), ("C5", 7.25, 2.29, 9.64)])
#: Table A.6: the shaped customers (G-trRAS).
TABLE_A6 = _colour_table([("C6", 1.92, 1.75, 3.77), ("C7", 3.79, 3.24, 7.05), ("C8", 5.35, 3.62, 8.97), ("C9", 6.96, 3.48, 10.4), ("C10", 8.69, 3.06, 11.7)])
CBS_KB = (3, 10, 25, 50, 75, 100, 150, 200, 300, 400)
PAIRS = (("C1", "C6"), ("C3", "C8"))
#: Table A.4: goodput (Mbit/s) of C1 (2 Mbit/s unshaped), C6 (shaped), C3, C8 per CBS (KB), trRAS.
TABLE_A4 = {3: (1.88, 3.49, 5.91, 7.77), 10: (2.97, 2.91, 6.76, 7.08), 25: (3.14, 2.78, 7.07, 6.73), 50: (3.12, 2.67, 7.20, 6.64), 75: (3.18, 2.56, 7.08, 6.58),
            100: (3.20, 2.64, 7.00, 6.62), 150: (3.21, 2.54, 7.11, 6.52), 200: (3.26, 2.57, 7.07, 6.53), 300: (3.19, 2.53, 7.13, 6.49), 400: (3.13, 2.48, 7.18, 6.43)}  # fmt: skip
#: Table A.7: the same with the G-trRAS.
TABLE_A7 = {3: (1.90, 3.44, 5.62, 8.44), 10: (2.95, 3.30, 6.70, 7.20), 25: (2.98, 3.01, 7.03, 6.93), 50: (3.06, 2.85, 6.81, 6.84), 75: (3.08, 2.80, 6.87, 6.96),
            100: (2.99, 2.78, 6.85, 6.88), 150: (2.98, 2.70, 6.80, 6.81), 200: (2.96, 2.70, 6.82, 6.97), 300: (2.94, 2.70, 6.83, 6.86), 400: (2.86, 2.62, 6.83, 6.84)}  # fmt: skip
LARGE = 400
QUICK_RUNS, FULL_RUNS = Runs(3, "22s"), Runs(10)


def lan(name: str, shaper: str | None = "trras", label: str = "", modes: tuple[str, ...] = (QUICK, FULL), **kw: Any) -> Setup:
    """The scenario file with the conditioners of :func:`conditioners`."""
    return Setup(name, SCENARIO, {"conditioner": conditioners(shaper, **kw)}, label, modes)


def customer_measures(runs: RunSet) -> dict[str, Values]:
    """Per set-up and customer, per replication: ``<colour>/<set-up>/<customer>`` (Mbit/s
    leaving the marker, and total), ``green share``, ``goodput``; per shaped/unshaped pair
    of the same CIR, ``ratio/<set-up>/<shaped>`` (total) and ``goodput ratio/...``; the
    shaped customers' sums ``shaped <colour>/<set-up>``; the five pairs' goodput ratios
    averaged, ``mean ratio/<set-up>``, and its distance from 1, ``mean deviation/...``."""
    out: dict[str, Values] = {}
    for name in runs:
        res = runs[name]
        rates = customer_rates(res.flows, res.conditioners, float(res.run["window_s"].iloc[0])).set_index(["replication", "customer"])
        for col in ("green", "yellow", "total", "green_share", "goodput"):
            per_customer = rates[col].unstack("customer").sort_index()
            for cust in CIR:
                out[f"{col.replace('_', ' ')}/{name}/{cust}"] = per_customer[cust].to_numpy()
            shaped = [out[f"{col.replace('_', ' ')}/{name}/{s}"] for s in SHAPED]
            out[f"shaped {col}/{name}"] = sum(shaped[1:], shaped[0])
        for u, s in zip(UNSHAPED, SHAPED, strict=True):
            out[f"ratio/{name}/{s}"] = out[f"total/{name}/{s}"] / out[f"total/{name}/{u}"]
            out[f"goodput ratio/{name}/{s}"] = out[f"goodput/{name}/{s}"] / out[f"goodput/{name}/{u}"]
            out[f"deviation/{name}/{s}"] = np.abs(out[f"goodput ratio/{name}/{s}"] - 1)
        # The shaped traffic against the unshaped as a whole: the five CIR pairs' ratios averaged.
        out[f"mean ratio/{name}"] = np.mean([out[f"goodput ratio/{name}/{s}"] for s in SHAPED], axis=0)
        out[f"mean deviation/{name}"] = np.abs(out[f"mean ratio/{name}"] - 1)
    return out


def colour_tables(numbers: tuple[int, int], setup: str, unshaped: Mapping[str, Sequence[float]], shaped: Mapping[str, Sequence[float]], what: str) -> list[Table[str, str]]:
    return [Table(f"A.{n}", f"Table A.{n}, throughput of the {kind} customers ({what}, CBS 3 KB)", f"Table A.{n}", "Mbit/s", tuple(data), ("green", "yellow", "total"),
                  grid(tuple(data), ("green", "yellow", "total"), data), lambda r, c: f"{c}/{setup}/{r}", NS2, row_label="customer")
            for n, kind, data in ((numbers[0], "unshaped", unshaped), (numbers[1], "shaped", shaped))]  # fmt: skip


def shaping_claims(name: str, setup: str, what: str, green_share: bool) -> list[Claim]:
    """A.2: the shaped customers 'have a clear advantage' (at least 5 % more throughput,
    every CIR) 'the result of the higher proportion of packets marked as green'."""
    out = [Claim(f"{name}-more-throughput", f"CBS 3 KB, {what}: the shaped customers 'have a clear advantage' (throughput at least 5 % above the unshaped one of the same CIR, every CIR)",
                 "A.2, A.3", All([above(f"ratio/{setup}/{s}", 1.05) for s in SHAPED]))]  # fmt: skip
    if green_share:
        out.append(Claim(f"{name}-larger-green-share", f"CBS 3 KB, {what}: 'the higher proportion of packets marked as green' (green share, shaped above unshaped, every CIR)",
                         "A.2", All([above(f"green share/{setup}/{s}", f"green share/{setup}/{u}") for u, s in zip(UNSHAPED, SHAPED, strict=True)])))  # fmt: skip
    return out


def unshaped_small(setup: str, cust: str) -> Miss:
    """An unshaped customer with a small CIR that gets more than in ns-2."""
    return Miss(
        TESTBED,
        f"dsim's unshaped customers with a small CIR get more than ns-2's ({cust}: {{total/{setup}/{cust}:.2f}} against "
        f"{{pub.total/{setup}/{cust}:.2f}} Mbit/s, green {{green/{setup}/{cust}:.2f}} against {{pub.green/{setup}/{cust}:.2f}}). With a "
        "CBS of two packets their green rate depends on how TCP spaces its packets within milliseconds (the committed bucket "
        "earns a packet in a few), i.e. on ns-2's TCP and link details the document does not give; the customers whose green "
        "the shaper controls agree.",
    )


def shaped_yellow(setup: str, cust: str) -> Miss:
    """A customer with a large CIR that sends less yellow than in ns-2."""
    return Miss(
        TESTBED,
        f"dsim's customers with a large CIR send less yellow than ns-2's ({cust}: {{yellow/{setup}/{cust}:.2f}} against "
        f"{{pub.yellow/{setup}/{cust}:.2f}} Mbit/s) while the unshaped small ones send more: the bottleneck capacity above the sum "
        "of the CIRs is shared differently (yellow and red are what the customers get of it). Green, which the shaper controls, "
        "agrees.",
    )


def colour_misses(setup: str, table_unshaped: int, table_shaped: int, small: dict[str, tuple[str, ...]], yellow: dict[str, int]) -> dict[str, Miss]:
    """Expected misses of a colour table pair: `small` unshaped customers (and their columns),
    `yellow` customers (and their table) whose yellow misses."""
    out = {f"A.{table_unshaped}-{c}-{col}": unshaped_small(setup, c) for c, cols in small.items() for col in cols}
    return out | {f"A.{n}-{c}-yellow": shaped_yellow(setup, c) for c, n in yellow.items()}


registry.add(
    Experiment(
        "ras-tr", "trRAS with CBS 3 KB: throughput by colour (Tables A.2, A.3)", SOURCE + ", A.2", FAMILY,
        setups=[lan("tr")], measure=customer_measures, quick=QUICK_RUNS, full=FULL_RUNS,
        tables=colour_tables((2, 3), "tr", TABLE_A2, TABLE_A3, "trRAS"), claims=shaping_claims("trRAS", "tr", "trRAS", green_share=True),
        expected=colour_misses("tr", 2, 3, {"C1": ("green", "yellow", "total")}, {"C9": 3, "C10": 3}),
        full_only={"A.2-C5-yellow": "dsim's yellow for C5 sits within a few hundredths of a Mbit/s of the band's lower edge: "
                                    "the quick runs' noise puts it on either side, the full runs inside"},
        doc="C1-C5 with a trTCM only, C6-C10 with a trRAS in front of it, every CBS 3 KB (two packets): the rate of green, "
        "yellow and total traffic leaving each customer router.",
    )
)

registry.add(
    Experiment(
        "ras-gtr", "G-trRAS with CBS 3 KB: throughput by colour (Tables A.5, A.6)", SOURCE + ", A.3", FAMILY,
        setups=[lan("gtr", "g_trras"), lan("tr")], measure=customer_measures, quick=QUICK_RUNS, full=FULL_RUNS,
        tables=colour_tables((5, 6), "gtr", TABLE_A5, TABLE_A6, "G-trRAS"),
        claims=[
            *shaping_claims("G-trRAS", "gtr", "G-trRAS", green_share=False),
            Claim("gtr-beats-tr", "'the shaped traffic performs again much better, also compared to the previous case (i.e. where the trRAS was used)' (C6-C10 throughput)", "A.3",
                  above("shaped total/gtr", "shaped total/tr")),
            Claim("gtr-more-yellow", "'the amount of yellow traffic increases' (C6-C10, G-trRAS against trRAS)", "A.3", above("shaped yellow/gtr", "shaped yellow/tr")),
            Claim("gtr-slightly-less-green", "'with the expense of a slight decrease in the amount of green traffic' (C6-C10: below the trRAS's, by at most 15 %)", "A.3",
                  All([below("shaped green/gtr", "shaped green/tr"), above("shaped green/gtr", "shaped green/tr", factor=0.85)])),
        ],
        expected=colour_misses("gtr", 5, 6, {"C1": ("green", "yellow", "total"), "C2": ("green", "yellow", "total"), "C3": ("green",)}, {f"C{i}": 6 for i in (7, 8, 9, 10)})
        | {"gtr-beats-tr": Miss(TESTBED, "in dsim the G-trRAS moves traffic from green to yellow as the document says (the next two checks: yellow "
                                "{shaped yellow/gtr:.2f} against {shaped yellow/tr:.2f} Mbit/s, green {shaped green/gtr:.2f} against "
                                "{shaped green/tr:.2f}), but the shaped customers' total stays that of the trRAS ({shaped total/gtr:.2f} against "
                                "{shaped total/tr:.2f}); the share of the bottleneck above the CIRs goes less to the shaped customers in dsim "
                                "than in ns-2 (Table A.6's yellow).")},
        doc="The scenario of ras-tr with the green trRAS (section 3.5) on C6-C10, and the document's comparison with the trRAS.",
    )
)


#: The CBS values quick mode runs (the others: full mode only).
QUICK_CBS = (3, 25, 100, LARGE)


def cbs_setups(shaper: str, name: str) -> list[Setup]:
    return [lan(f"{name} {c}", shaper, modes=(QUICK, FULL) if c in QUICK_CBS else (FULL,), cbs_kb=c) for c in CBS_KB]


def cbs_table(n: int, name: str, data: Mapping[int, Sequence[float]], what: str) -> Table[int, str]:
    cols = ("C1", "C6", "C3", "C8")
    return Table(f"A.{n}", f"Table A.{n}, goodput versus CBS ({what})", f"Table A.{n}", "Mbit/s", CBS_KB, cols, grid(CBS_KB, cols, data),
                 lambda r, c: f"goodput/{name} {r}/{c}", NS2, row_label="CBS KB", logx=True)


def small_cbs(tid: str, name: str, what: str) -> Claim:
    return Claim(f"{tid}-small-cbs", f"CBS 3 KB, {what}: 'the rate adaptive shapers provide a performance benefit when the CBS is small' (C6/C1 and C8/C3 goodput at least 5 % above 1)",
                 tid, All([above(f"goodput ratio/{name} 3/{s}", 1.05) for _, s in PAIRS]))  # fmt: skip


GOODPUT = Miss(
    TESTBED,
    "the goodput follows the throughput by colour (ras-tr, ras-gtr): dsim's unshaped customer with the smallest CIR gets "
    "{goodput/{name} 3/C1:.2f} Mbit/s at a CBS of three KB against {pub.goodput/{name} 3/C1:.2f}, for the reasons given there.",
)
def shaped_large_cbs(cbs: int) -> Miss:
    """The trRAS-shaped customer of the smallest CIR (C6) at a large CBS, above ns-2's goodput."""
    return Miss(
        TESTBED,
        f"dsim's trRAS-shaped C6 keeps {{goodput/tr cbs {cbs}/C6:.2f}} Mbit/s at a CBS of {cbs} KB against ns-2's "
        f"{{pub.goodput/tr cbs {cbs}/C6:.2f}}: it loses less to its shaper than in ns-2, though still less than the unshaped customer "
        f"of the same CIR (C6/C1 {{goodput ratio/tr cbs {cbs}/C6:.2f}}; A.4-large-cbs). What a shaper's queue costs a TCP depends "
        "on the RAS thresholds, K and buffer the document leaves open (ras-sensitivity runs other choices).",
    )


registry.add(
    Experiment(
        "ras-tr-cbs", "trRAS: goodput versus CBS (Table A.4)", SOURCE + ", A.2, Table A.4", FAMILY,
        setups=cbs_setups("trras", "tr cbs"), measure=customer_measures, quick=QUICK_RUNS, full=Runs(5),
        tables=[cbs_table(4, "tr cbs", TABLE_A4, "trRAS")],
        claims=[
            small_cbs("A.4", "tr cbs", "trRAS"),
            Claim("A.4-large-cbs", f"CBS {LARGE} KB, trRAS: 'With a very large CBS, the performance decreases when the shaper is in use' ('slightly': C6/C1 and C8/C3 goodput below 1, above 0.7)",
                  "A.2, A.4", All([p for _, s in PAIRS for p in (below(f"goodput ratio/tr cbs {LARGE}/{s}", 1.0), above(f"goodput ratio/tr cbs {LARGE}/{s}", 0.7))])),
        ],
        expected={"A.4-3-C1": Miss(GOODPUT.cls, GOODPUT.reason.replace("{name}", "tr cbs")), **{f"A.4-{c}-C6": shaped_large_cbs(c) for c in (75, 150, 200, 300, LARGE)}},
        doc="The CBS of every customer router from 3 to 400 KB (PBS = 2 CBS).",
    )
)

registry.add(
    Experiment(
        "ras-gtr-cbs", "G-trRAS: goodput versus CBS (Table A.7)", SOURCE + ", A.3, Table A.7", FAMILY,
        setups=lambda mode: [*cbs_setups("g_trras", "gtr cbs"), lan(f"tr cbs {LARGE}", "trras", cbs_kb=LARGE)], measure=customer_measures, quick=QUICK_RUNS, full=Runs(5),
        tables=[cbs_table(7, "gtr cbs", TABLE_A7, "G-trRAS")],
        claims=[
            small_cbs("A.7", "gtr cbs", "G-trRAS"),
            Claim("A.7-large-cbs-equal", f"CBS {LARGE} KB, G-trRAS: 'the shaped and unshaped traffic performs more or less the same' (C6 and C1, C8 and C3 goodput within 10 %)",
                  "A.3", All([close(f"goodput/gtr cbs {LARGE}/{s}", f"goodput/gtr cbs {LARGE}/{u}", 0.10) for u, s in PAIRS])),
            Claim("A.7-closer-than-trras", f"CBS {LARGE} KB: 'This is in contrast with the trRAS': the G-trRAS's shaped / unshaped goodput nearer 1 than the trRAS's (the five CIR pairs' ratios averaged)",
                  "A.3", below(f"mean deviation/gtr cbs {LARGE}", f"mean deviation/tr cbs {LARGE}")),
        ],
        expected={"A.7-3-C1": Miss(GOODPUT.cls, GOODPUT.reason.replace("{name}", "gtr cbs"))},
        doc="Table A.4's sweep with the G-trRAS; the trRAS is run again at the largest CBS for the contrast.",
    )
)


SR = Miss(
    DOCUMENT,
    "with an srTCM the shaper cannot win yellow: yellow comes only from the excess bucket, which fills only while the committed "
    "bucket is full. A stream smoothed above the CIR keeps the committed bucket from filling, so what is beyond the CIR is red, "
    "the colour RIO drops first: the shaped customers' yellow is {shaped yellow/{setup}:.2f} Mbit/s in all against "
    "{unshaped yellow/{setup}:.2f} for the unshaped ones, and their goodput / unshaped ranges {least ratio/{setup}:.2f} to "
    "{most ratio/{setup}:.2f}. The green share does rise (the next check). The document claims the benefit for the trRAS only "
    "(appendix A); the srRAS of section 2.3 is not simulated there.",
)


def sr_measure(runs: RunSet) -> dict[str, Quantity]:
    per_customer = customer_measures(runs)
    out: dict[str, Quantity] = dict(per_customer)
    for name in runs:
        unshaped = [per_customer[f"yellow/{name}/{u}"] for u in UNSHAPED]
        out[f"unshaped yellow/{name}"] = sum(unshaped[1:], unshaped[0])
        ratios = [float(per_customer[f"goodput ratio/{name}/{s}"].mean()) for s in SHAPED]
        out[f"least ratio/{name}"], out[f"most ratio/{name}"] = min(ratios), max(ratios)
    return out


registry.add(
    Experiment(
        "ras-sr", "srRAS and G-srRAS in front of an srTCM, CBS 3 KB", SOURCE + ", sections 2.3, 3.3 (no published table)", FAMILY,
        setups=[lan(k, k, meter="srtcm") for k in ("srras", "g_srras")], measure=sr_measure, quick=QUICK_RUNS, full=Runs(5),
        claims=[c for k, what in (("srras", "srRAS"), ("g_srras", "G-srRAS")) for c in (
            Claim(f"{k}-more-throughput", f"CBS 3 KB, {what}: every shaped customer gets more goodput than the unshaped one of the same CIR (A.2's claim, with an srTCM)", "A.2 (applied to section 2.3's shaper)",
                  All([above(f"goodput ratio/{k}/{s}", 1.0) for s in SHAPED])),
            Claim(f"{k}-larger-green-share", f"CBS 3 KB, {what}: a larger share of the shaped customer's packets is green", "A.2 (applied to section 2.3's shaper)",
                  All([above(f"green share/{k}/{s}", f"green share/{k}/{u}") for u, s in zip(UNSHAPED, SHAPED, strict=True)])))],
        expected={f"{k}-more-throughput": Miss(SR.cls, SR.reason.replace("{setup}", k)) for k in ("srras", "g_srras")},
        doc="The topology of appendix A with single rate markers: an srTCM (CIR of Table A.1, CBS 3 KB, EBS 6 KB) on every "
        "customer router, an srRAS or a G-srRAS (CIR_th and MIR_th as for the trRAS) in front of it on C6-C10.",
    )
)


#: The RAS choices swept by ras-sensitivity: label -> keyword arguments of conditioners().
SENSITIVITY: dict[str, dict[str, Any]] = {
    "chosen": {}, "thresholds x0.25": {"scale": 0.25}, "thresholds x4": {"scale": 4.0}, "K 20ms": {"k": "20ms"}, "K 500ms": {"k": "500ms"}, "buffer = MIR_th": {"buffer": None},
}  # fmt: skip


def sensitivity_extra(runs: RunSet, m: Measures) -> list[tuple[str, pd.DataFrame]]:
    rows = [{"variant": v, "CBS KB": c, **{f"{s}/{u} goodput": m[f"goodput ratio/{v} {c}/{s}"].show() for u, s in zip(UNSHAPED, SHAPED, strict=True)}} for v in SENSITIVITY for c in (3, LARGE)]
    return [("Shaped / unshaped goodput per CIR pair under each RAS choice", pd.DataFrame(rows))]


registry.add(
    Experiment(
        "ras-sensitivity", "trRAS: the conclusions under the thresholds, K and buffer the document leaves open", SOURCE + " (parameters it leaves open)", FAMILY,
        setups=[lan(f"{v} {c}", "trras", cbs_kb=c, **kw) for v, kw in SENSITIVITY.items() for c in (3, LARGE)], measure=customer_measures, quick=QUICK_RUNS, full=Runs(5),
        claims=[
            Claim("small-cbs-robust", "CBS 3 KB: 'the rate adaptive shapers provide a performance benefit when the CBS is small' for every choice swept (the five CIR pairs' shaped / unshaped goodput averaged: at least 1.05)", "A.2",
                  All([above(f"mean ratio/{v} 3", 1.05) for v in SENSITIVITY])),
            Claim("large-cbs-robust", f"CBS {LARGE} KB: 'With a very large CBS, the performance decreases when the shaper is in use' for every choice swept (the five pairs' ratios averaged: below 1)", "A.2, A.4",
                  All([below(f"mean ratio/{v} {LARGE}", 1.0) for v in SENSITIVITY])),
        ],
        extra=sensitivity_extra,
        doc="The trRAS runs of Table A.4 at CBS 3 and 400 KB with each choice the document leaves open changed in turn: "
        "thresholds (the CIR for 20, 40, 80 ms) scaled by 1/4 and 4, the EAR constant K at 20 and 500 ms, the buffer cut to MIR_th.",
    )
)
