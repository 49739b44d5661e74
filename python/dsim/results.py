"""Results of a run: pandas DataFrames built from the Arrow tables the simulator returns."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import pandas as pd
import pyarrow as pa

from . import _dsim
from .errors import ScenarioError
from .stats import LEVEL, summarize

#: Every result table, in the core's order (crates/dsim-core/src/results.rs, `Tables::named`).
TABLES: tuple[str, ...] = _dsim.TABLES
#: The tables a run has only when it records them (`[record]`, docs/guide.md).
RECORDED: tuple[str, ...] = _dsim.RECORDED_TABLES
#: The tables a run may lack: nothing recorded, no CoDel / PIE / FQ-CoDel queue (docs/aqm.md), no CBQ port.
OPTIONAL: tuple[str, ...] = _dsim.OPTIONAL_TABLES


#: The columns that identify a row of each table across replications (what summaries group by).
SUMMARY_KEYS = {
    "flows": ["flow"],
    "queues": ["port", "queue", "precedence"],
    "drops": ["flow", "site", "cause"],
    "run": [],
    "conditioners": ["conditioner", "color"],
    "series": ["flow", "time_s"],
    "dsd_control": ["port", "time_s"],
    "flow_series": ["flow", "start_s"],
    "port_series": ["port", "queue", "precedence", "start_s"],
    "conditioner_series": ["conditioner", "color", "start_s"],
    "distributions": ["flow", "metric", "low_ms"],
    "aqm": ["port", "queue", "aqm"],
    "cbq": ["port", "queue"],
}


#: Tables with a row only where something happened (a flow's drops at a site, by cause;
#: a histogram slot with samples).
SPARSE = {"drops", "distributions"}
#: Time series sampled at times of their own in each replication (a queue's first arrival
#: in each interval): nothing lines up to average. (`series` at a fixed interval, the
#: recorded series and `dsd_control` do line up, by time.)
SERIES = {"queue_series", "aqm_series"}

#: Columns of the flows table a class (DSCP) summary adds up over its flows.
CLASS_SUMS = ["sent_pkts", "delivered_pkts", "dropped_pkts", "offered_bps", "throughput_bps", "goodput_bps"]
#: Columns of the queues table a port summary adds up over its queues and precedences.
PORT_SUMS = ["arrivals_pkts", "departures_pkts", "dropped_pkts", "marks_pkts", "mean_len_pkts", "mean_len_bytes", "throughput_bps"]


@overload
def column_list(given: list[str] | str) -> list[str]: ...
@overload
def column_list(given: None) -> None: ...
def column_list(given: list[str] | str | None) -> list[str] | None:
    return [given] if isinstance(given, str) else given


def summary_table(table: str, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The table `summary` works on, or a precise refusal."""
    if table in SERIES:
        rule = "its samples fall at other times in each replication; summarize it by time bins yourself"
        raise ScenarioError(f"table {table!r}: {rule}", "table", repr(table), rule)
    if table not in tables:
        rule = f"tables: {', '.join(sorted(t for t in tables if t not in SERIES))}"
        raise ScenarioError(f"table {table!r}: no such table here; {rule}", "table", repr(table), rule)
    return tables[table]


def summary_keys(table: str, df: pd.DataFrame) -> list[str]:
    """The grouping columns of `table`; for a table not listed in SUMMARY_KEYS, its text columns."""
    if table in SUMMARY_KEYS:
        return list(SUMMARY_KEYS[table])
    return [c for c in df.columns if c not in ("point", "replication") and not pd.api.types.is_numeric_dtype(df[c])]


def _arrow(table: Any) -> pa.Table:
    return table if isinstance(table, pa.Table) else pa.Table.from_batches([pa.record_batch(table)])


@dataclass
class Results:
    """The tables of one or more replications of a scenario.

    flows:  one row per flow per replication (packets and bytes sent, delivered and dropped
            by cause, offered load and throughput in bit/s, one-way delay and RFC 2598 jitter
            statistics in ms; for TCP flows goodput, retransmissions, timeouts, fast
            retransmits, mean RTT, dropped ACKs, transfers and completion time).
    queues: one row per (port, queue, precedence) per replication (arrivals, departures,
            drops by cause, time-weighted mean length in packets and bytes).
    drops:  packets and bytes each flow lost at each site, by cause, per replication.
    run:    one row per replication (seeds, scenario hash, version, events, wall time).
    conditioners: one row per conditioner (per flow for per-flow ones) and colour: packets
            and bytes metered, passed, remarked, demoted, dropped; a "shaper" row for a
            shaper's arrivals, releases, overflow drops and mean wait (docs/af.md).
    queue_series: sampled RED / MRED averages and occupancies of the queues that set
            `series`, one row per sample and precedence.
    series: TCP time series of the flows that asked for one (`tcp = { series = ... }`): time,
            cwnd, ssthresh and flight size in bytes, smoothed RTT and RTO in ms.
    dsd_control: one row per control period of each DSD port with a control loop (ABE,
            docs/abe.md): g and the green penalty after the update, the green/blue formula
            throughput ratio, and the smoothed loss ratios and queueing delays behind it.
            (The queues table carries dsd_g_mean, dsd_penalty_mean, dsd_g, dsd_penalty.)
    flow_series, port_series, conditioner_series, distributions: what a run records when
            asked (`[record]` in the scenario, ``dsim.run(..., record=...)``, ``dsim run
            --record``; docs/guide.md): per flow, per port class and per conditioner colour,
            one row per interval [start_s, end_s) of the window; the delay and jitter
            histogram of every flow. Empty otherwise.
    aqm, aqm_series: per CoDel / PIE / FQ-CoDel queue, its counters and final state, and
            its sampled state (`series = ...`): sojourn or delay estimate, dropping state,
            count, drop probability, active flows (docs/aqm.md). Empty without such queues.
    cbq:    per leaf class of each CBQ port (`queue` as in the queues table), packets sent
            while not overlimit, sent by borrowing, sent unregulated, and the delay actions
            taken, over the whole run (docs/ef.md). Empty without CBQ.

    ``res.plot.<kind>()`` draws them (see :mod:`dsim.plot`).
    """

    flows: pd.DataFrame
    queues: pd.DataFrame
    drops: pd.DataFrame
    run: pd.DataFrame
    conditioners: pd.DataFrame
    queue_series: pd.DataFrame
    series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    dsd_control: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    flow_series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    port_series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    conditioner_series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    distributions: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    aqm: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    aqm_series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    cbq: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    scenario: Any = field(default=None, repr=False)
    #: The Arrow tables the DataFrames came from: saved as they are, without pandas.
    arrow: dict[str, pa.Table] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_arrow(cls, tables: dict[str, Any], scenario: Any = None) -> Results:
        arrow = {name: _arrow(tables[name]) for name in TABLES if name in tables}
        frames = {name: t.to_pandas() for name, t in arrow.items()}
        return cls(**frames, scenario=scenario, arrow=arrow)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """The results `save` wrote into the folder `path` (Parquet or CSV), with the
        scenario that ran when the folder has it (scenario.toml)."""
        from .scenario import Scenario

        path = Path(path)
        if not path.is_dir():
            raise ScenarioError(f"{path}: not a folder of results (dsim run --out)", "results", str(path), "a folder that `dsim run` wrote")
        frames: dict[str, Any] = {}  # the DataFrame fields, by name
        for name in TABLES:
            if (path / f"{name}.parquet").exists():
                frames[name] = pd.read_parquet(path / f"{name}.parquet")
            elif (path / f"{name}.csv").exists():
                frames[name] = pd.read_csv(path / f"{name}.csv")
        missing = [n for n in ("flows", "queues", "drops", "run", "conditioners", "queue_series") if n not in frames]
        if missing:
            rule = "a folder that `dsim run` or Results.save wrote"
            raise ScenarioError(f"{path}: no {', '.join(missing)} table (.parquet or .csv); {rule}", "results", str(path), rule)
        scenario = Scenario.from_toml(path / "scenario.toml") if (path / "scenario.toml").exists() else None
        return cls(**frames, scenario=scenario)

    @property
    def replications(self) -> int:
        return len(self.run)

    @property
    def recorded(self) -> list[str]:
        """The recorded tables this run has rows in."""
        return [name for name in RECORDED if len(getattr(self, name))]

    @property
    def plot(self) -> Any:
        """Figures of this run: ``res.plot.throughput()``, ``res.plot.queue()``, ... (see
        :class:`dsim.plot.Plotter`); each returns a matplotlib Figure."""
        from .plot import Plotter

        return Plotter(self)

    def class_label(self, dscp: Any) -> str:
        """A class's DSCP as the scenario writes it: "GREEN (3)" for a codepoint its `[dscp]`
        table names, else as the tables do ("EF", "AF11", "3")."""
        names = (self.scenario.data.get("dscp") or {}) if self.scenario is not None else {}
        named = [n for n, v in names.items() if str(v) == str(dscp)]
        return f"{named[0]} ({dscp})" if named else str(dscp)

    def queue_label(self, port: str, queue: int) -> str:
        """Queue `queue` of `port` ("A->B") as the scenario declares it: the codepoints of
        that class of the port's scheduler ("EF", "AF11, AF12", "default"), else "queue N"."""
        a, _, b = port.partition("->")
        for link in (self.scenario.data.get("link") or []) if self.scenario is not None else []:
            ends = (link.get("from"), link.get("to"))
            if ends not in ((a, b), (b, a)):
                continue
            direction = link.get("forward" if ends == (a, b) else "reverse") or {}
            classes = (direction.get("queue") or link.get("queue") or {}).get("classes") or []
            if 0 <= queue < len(classes):
                c = classes[queue]
                names = [self.class_label(d) for d in c.get("dscp", [])] + (["default"] if c.get("default") else [])
                return ", ".join(names) or f"queue {queue}"
        return f"queue {queue}"

    @property
    def name(self) -> str:
        """The scenario's name (what figures and reports call this run)."""
        return getattr(self.scenario, "name", None) or "scenario"

    def summary(self, table: str = "flows", by: list[str] | str | None = None, columns: list[str] | str | None = None, level: float = LEVEL) -> pd.DataFrame:
        """Mean and Student-t confidence interval (default 90 %) over replications.

        For each numeric column c the result has c (mean), c_ci (half width), c_lo, c_hi;
        ``n`` counts the replications. A value a replication does not have (NaN, e.g.
        ``completion_s`` of a transfer that did not finish) is left out of that column's mean
        and interval. A replication without a row of a sparse table (``drops``) counts 0.
        """
        df = summary_table(table, {name: getattr(self, name) for name in TABLES})
        by = summary_keys(table, df) if by is None else column_list(by)
        if not by:
            df = df.assign(all="all")
            by = ["all"]
        runs = self.run[["replication"]] if table in SPARSE else None
        return summarize(df, by, column_list(columns), level, runs)

    def classes(self, level: float = LEVEL) -> pd.DataFrame:
        """One row per class (the DSCP its flows' sources set): flows, packets sent,
        delivered and dropped, offered load, throughput and goodput in bit/s summed over
        the class's flows, loss in %, delay_mean_ms (over every packet delivered) and the
        worst flow's delay_p99_ms and jitter_p90_ms; each as mean and interval over the
        replications (as `summary`)."""
        f = self.flows
        weighted = f["delay_mean_ms"].fillna(0) * f["delivered_pkts"]
        per_rep = (
            f.assign(flows=1, delay_ms_pkts=weighted)
            .groupby(["replication", "dscp"], sort=False)
            .agg(
                flows=("flows", "sum"),
                **{c: (c, "sum") for c in CLASS_SUMS if c != "goodput_bps"},
                goodput_bps=("goodput_bps", lambda s: s.sum(min_count=1)),
                delay_ms_pkts=("delay_ms_pkts", "sum"),
                delay_p99_ms=("delay_p99_ms", "max"),
                jitter_p90_ms=("jitter_p90_ms", "max"),
            )
            .reset_index()
        )
        sent = per_rep["sent_pkts"].where(per_rep["sent_pkts"] > 0)
        delivered = per_rep["delivered_pkts"].where(per_rep["delivered_pkts"] > 0)
        per_rep["loss_pct"] = 100 * per_rep["dropped_pkts"] / sent
        per_rep["delay_mean_ms"] = per_rep.pop("delay_ms_pkts") / delivered
        return summarize(per_rep, ["dscp"], None, level)

    def ports(self, level: float = LEVEL) -> pd.DataFrame:
        """One row per port with traffic: arrivals, departures, drops and CE marks in
        packets, time-weighted mean length (packets, bytes) and throughput summed over its
        queues and precedences, and loss in %; mean and interval over the replications,
        sorted with the bottlenecks first (most drops, then the longest mean queue)."""
        q = self.queues
        per_rep = q.groupby(["replication", "port"], sort=False)[PORT_SUMS].sum().reset_index()
        arrivals = per_rep["arrivals_pkts"].where(per_rep["arrivals_pkts"] > 0)
        per_rep["loss_pct"] = 100 * per_rep["dropped_pkts"] / arrivals
        s = summarize(per_rep, ["port"], None, level)
        s = s[s["arrivals_pkts"] > 0]
        return s.sort_values(["dropped_pkts", "mean_len_pkts", "arrivals_pkts"], ascending=False, kind="stable").reset_index(drop=True)

    def conditioner_colors(self, level: float = LEVEL) -> pd.DataFrame:
        """One row per conditioner (a per-flow one summed over its flows) and colour:
        packets metered, remarked, demoted and dropped, and the colour's share of the
        conditioner's packets in %; mean and interval over the replications."""
        c = self.conditioners
        c = c[c["color"] != "shaper"]
        if c.empty:
            return pd.DataFrame()
        block = c["conditioner"].str.split("/", n=1).str[0]
        cols = ["pkts", "remarked_pkts", "demoted_pkts", "dropped_pkts"]
        per_rep = c.assign(conditioner=block).groupby(["replication", "conditioner", "color"], sort=False)[cols].sum().reset_index()
        total = per_rep.groupby(["replication", "conditioner"])["pkts"].transform("sum")
        per_rep["share_pct"] = 100 * per_rep["pkts"] / total.where(total > 0)
        return summarize(per_rep, ["conditioner", "color"], None, level)

    def save(self, out: str | os.PathLike[str], fmt: str = "parquet") -> Path:
        """Writes every table (Parquet or CSV), summary.json and the scenario that ran
        (scenario.toml) into the folder `out`. Tables this run returned as Arrow are written
        from Arrow, column by column."""
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format {fmt!r}: choose 'parquet' or 'csv'")
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            df = getattr(self, name)
            if name in OPTIONAL and df.empty:
                continue
            table = self.arrow.get(name)
            if table is None:
                table = pa.Table.from_pandas(df, preserve_index=False)
            if fmt == "parquet":
                pq.write_table(table, out / f"{name}.parquet")
            elif table.num_columns:
                pcsv.write_csv(table, out / f"{name}.csv")
            else:
                (out / f"{name}.csv").write_text("\n")
        (out / "summary.json").write_text(json.dumps(self.summary_json(), indent=2, allow_nan=False, default=_jsonable))
        if self.scenario is not None and hasattr(self.scenario, "to_toml"):
            (out / "scenario.toml").write_text(self.scenario.to_toml())
        return out

    def summary_json(self) -> dict[str, Any]:
        """A compact, tool-readable summary: the run record and per-flow means with CIs."""
        flows = self.summary("flows")
        keep = ["flow", "n"] + [
            c
            for base in ("throughput_bps", "offered_bps", "delivered_pkts", "dropped_pkts", "delay_mean_ms", "delay_p99_ms", "jitter_p50_ms", "jitter_p90_ms", "goodput_bps", "retransmitted_pkts", "timeouts", "rtt_mean_ms")
            for c in (base, f"{base}_ci")
        ]
        run = self.run
        rows = flows[keep].astype(object).where(flows[keep].notna(), None)
        return {
            "scenario": getattr(self.scenario, "name", None),
            "scenario_hash": str(run["scenario_hash"].iloc[0]) if len(run) else None,
            "version": str(run["version"].iloc[0]) if len(run) else None,
            "base_seed": int(run["base_seed"].iloc[0]) if len(run) else None,
            "replications": len(run),
            "confidence_level": LEVEL,
            "events": int(run["events"].sum()),
            "wall_s": float(run["wall_s"].sum()),
            "flows": rows.to_dict("records"),
        }


def _jsonable(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v
