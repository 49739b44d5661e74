"""Trace-driven mode: run one mechanism over a packet trace, without building a network.

    out = dsim.replay({"type": "droptail", "limit": "10p"}, trace, rate="10Mbps")

`trace` is a DataFrame (or any iterable of records) with the arrival time, the size in bytes,
and optionally the DSCP (name or number; default BE) and a flow id. The result has one row per
packet: its input columns, the DSCP on the way out, whether and why it was dropped and, for
queue disciplines, the start and end of its transmission on the link (NaN when dropped).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import tomli_w

from . import _dsim
from .errors import ScenarioError

_TIME_SCALE = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _config_text(config: Mapping[str, Any] | str | os.PathLike[str]) -> str:
    if isinstance(config, Mapping):
        return tomli_w.dumps(dict(config))
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config and config.endswith(".toml")):
        return Path(config).read_text()
    return str(config)


def _frame(arrivals: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    df = arrivals if isinstance(arrivals, pd.DataFrame) else pd.DataFrame.from_records(list(arrivals))
    return df.reset_index(drop=True)


def _times_ns(df: pd.DataFrame, time_unit: str) -> np.ndarray:
    if "time_ns" in df.columns:
        col, scale = "time_ns", 1
    elif "time" in df.columns:
        if time_unit not in _TIME_SCALE:
            raise ScenarioError(f"time_unit = {time_unit!r}: one of {', '.join(_TIME_SCALE)}", "time_unit", repr(time_unit), "unknown time unit")
        col, scale = "time", _TIME_SCALE[time_unit]
    else:
        raise ScenarioError("the trace needs a `time` (with time_unit) or `time_ns` column", "trace", None, "missing time column")
    t = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float) * scale
    bad = np.flatnonzero(~np.isfinite(t) | (t < 0))
    if bad.size:
        i = int(bad[0])
        raise ScenarioError(f"trace[{i}].{col} = {df[col].iloc[i]!r}: a time is a number >= 0", f"trace[{i}].{col}", repr(df[col].iloc[i]), "a time is a number >= 0")
    return np.rint(t).astype(np.uint64)


def _sizes(df: pd.DataFrame) -> np.ndarray:
    if "size" not in df.columns:
        raise ScenarioError("the trace needs a `size` column (bytes)", "trace", None, "missing size column")
    s = pd.to_numeric(df["size"], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(s) | (s <= 0) | (s != np.floor(s)))
    if bad.size:
        i = int(bad[0])
        raise ScenarioError(f"trace[{i}].size = {df['size'].iloc[i]!r}: a size is a whole number of bytes > 0", f"trace[{i}].size", repr(df["size"].iloc[i]), "a size is a whole number of bytes > 0")
    return s.astype(np.uint64)


def _dscps(df: pd.DataFrame) -> np.ndarray:
    if "dscp" not in df.columns:
        return np.zeros(len(df), dtype=np.uint8)
    codes: dict[Any, int] = {}
    out = np.empty(len(df), dtype=np.uint8)
    for i, v in enumerate(df["dscp"]):
        if v not in codes:
            codes[v] = _dsim.parse_dscp(str(int(v)) if isinstance(v, (int, np.integer)) else str(v), f"trace[{i}].dscp")
        out[i] = codes[v]
    return out


def _flows(df: pd.DataFrame) -> tuple[np.ndarray, list[Any] | None]:
    if "flow" not in df.columns:
        return np.zeros(len(df), dtype=np.uint32), None
    codes, labels = pd.factorize(df["flow"], sort=False)
    return codes.astype(np.uint32), list(labels)


def replay(
    config: Mapping[str, Any] | str | os.PathLike[str],
    arrivals: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    rate: str | None = None,
    seed: int = 1,
    time_unit: str = "ns",
) -> pd.DataFrame:
    """Feeds `arrivals` through the mechanism `config` (a scenario table as a dict, TOML
    text or a file). `rate` is the link rate a queue discipline feeds ("10Mbps"). Times are
    in `time_unit` (ns, us, ms, s) in a `time` column, or in ns in `time_ns`. Mechanisms
    that draw random numbers do so from a stream seeded by `seed`."""
    df = _frame(arrivals)
    times = _times_ns(df, time_unit)
    sizes = _sizes(df)
    dscps = _dscps(df)
    flows, _ = _flows(df)
    text = _config_text(config)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"the mechanism configuration is not valid TOML: {e}", "", None, str(e)) from None
    table = _dsim.replay(text, times.tolist(), sizes.tolist(), dscps.tolist(), flows.tolist(), rate=rate, seed=seed)
    out = pa.record_batch(table).to_pandas()
    result = df.copy()
    result["time_ns"] = times
    result["dscp_in"] = [_dsim.dscp_name(int(d)) for d in dscps]
    result["dscp_out"] = [_dsim.dscp_name(int(d)) for d in out["dscp_out"]]
    result["dropped"] = out["dropped"].astype(bool)
    result["drop_cause"] = out["drop_cause"]
    result["tx_start_ns"] = out["tx_start_ns"]
    result["tx_end_ns"] = out["tx_end_ns"]
    return result


def read_trace(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Reads a trace file: CSV with columns time or time_ns, size, and optionally dscp, flow."""
    path = Path(path)
    if path.suffix.lower() in (".pcap", ".pcapng", ".cap"):
        raise ScenarioError(f"{path}: pcap traces are not supported yet; use CSV", str(path), None, "pcap not supported yet")
    return pd.read_csv(path)


kinds = _dsim.replay_kinds
