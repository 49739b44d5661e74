"""Results of a run: pandas DataFrames built from the Arrow tables the simulator returns."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .errors import ScenarioError
from .stats import LEVEL, summarize

TABLES = ("flows", "queues", "drops", "run", "conditioners", "queue_series", "series", "dsd_control")


#: The columns that identify a row of each table across replications (what summaries group by).
SUMMARY_KEYS = {
    "flows": ["flow"],
    "queues": ["port", "queue", "precedence"],
    "drops": ["flow", "site", "cause"],
    "run": [],
    "conditioners": ["conditioner", "color"],
    "series": ["flow", "time_s"],
    "dsd_control": ["port", "time_s"],
}


#: Tables with a row only where something happened (a flow's drops at a site, by cause).
SPARSE = {"drops"}
#: Time series sampled at times of their own in each replication (a queue's first arrival
#: in each interval): nothing lines up to average. (`series` at a fixed interval and
#: `dsd_control` do line up, by time_s.)
SERIES = {"queue_series"}


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


def _frame(arrow_table: Any) -> pd.DataFrame:
    if isinstance(arrow_table, pa.Table):
        return arrow_table.to_pandas()
    return pa.record_batch(arrow_table).to_pandas()


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
    """

    flows: pd.DataFrame
    queues: pd.DataFrame
    drops: pd.DataFrame
    run: pd.DataFrame
    conditioners: pd.DataFrame
    queue_series: pd.DataFrame
    series: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    dsd_control: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    scenario: Any = field(default=None, repr=False)

    @classmethod
    def from_arrow(cls, tables: dict[str, Any], scenario: Any = None) -> "Results":
        return cls(**{name: _frame(tables[name]) for name in TABLES}, scenario=scenario)

    @property
    def replications(self) -> int:
        return len(self.run)

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

    def save(self, out: str | os.PathLike[str], fmt: str = "parquet") -> Path:
        """Writes every table (Parquet or CSV) and summary.json into the folder `out`."""
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"format {fmt!r}: choose 'parquet' or 'csv'")
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            df = getattr(self, name)
            if fmt == "parquet":
                df.to_parquet(out / f"{name}.parquet", index=False)
            else:
                df.to_csv(out / f"{name}.csv", index=False)
        (out / "summary.json").write_text(json.dumps(self.summary_json(), indent=2, allow_nan=False, default=_jsonable))
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
        return {
            "scenario": getattr(self.scenario, "name", None),
            "scenario_hash": str(run["scenario_hash"].iloc[0]) if len(run) else None,
            "version": str(run["version"].iloc[0]) if len(run) else None,
            "base_seed": int(run["base_seed"].iloc[0]) if len(run) else None,
            "replications": len(run),
            "confidence_level": LEVEL,
            "events": int(run["events"].sum()),
            "wall_s": float(run["wall_s"].sum()),
            "flows": [{k: _clean(v) for k, v in row.items()} for row in flows[keep].to_dict("records")],
        }


def _clean(v: Any) -> Any:
    if isinstance(v, float) and v != v:
        return None
    return _jsonable(v)


def _jsonable(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v
