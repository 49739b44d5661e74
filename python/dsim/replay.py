"""Trace-driven mode: run one mechanism over a packet trace, without building a network.

    out = dsim.replay({"type": "droptail", "limit": "10p"}, trace, rate="10Mbps")

    out = dsim.replay({"type": "srtcm", "cir": "1Mbps", "cbs": "3KB", "ebs": "6KB"}, trace)
    out = dsim.replay({"meter": {...}, "red": "drop"}, trace)     # a [[conditioner]] table

`trace` is a DataFrame (or any iterable of records) with the arrival time, the size in bytes,
and optionally the DSCP (name or number; default BE), a flow label, the colour an upstream
meter gave the packet (green / yellow / red, for colour-aware meters) and its ECN field
(`ecn`: not-ect, ect0, ect1, ce, or the IP header's two bits 0-3, RFC 3168 section 5:
0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; default not-ect). The result has one row per packet:
its input columns, the colour, DSCP and ECN field on the way out (`ecn_out`; `marked` when
a RED, MRED or DSD with `ecn = true` marked it CE instead of dropping it), whether and why
it was dropped, when it left the mechanism (`depart_ns`: start of transmission for a
queue, release for a shaper, arrival for a meter) and, for a queue, the end of its
transmission (`tx_end_ns`); NaN when dropped. With `series=True`, a queue's state just
after each arrival is added: `avg` (the RED / MRED average that judged the packet, in
`avg_unit`, pkts or bytes), for DSD `g`, `penalty`, `loss_blue`, `loss_green`,
`wait_blue_ms`, `wait_green_ms` (its control loop's last estimates), and for CoDel, PIE and
FQ-CoDel `delay_ms`, `dropping`, `count`, `p`, `flows` (docs/aqm.md). A packet arriving at the nanosecond a
transmission ends is offered to the queue before the next packet starts, as in a simulated
network (docs/ties.md).
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
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
    t: npt.NDArray[np.float64] = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float) * scale
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


def _flows(df: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    if "flow" not in df.columns:
        return np.zeros(len(df), dtype=np.uint32), ["flow"]
    codes, labels = pd.factorize(df["flow"], sort=False)
    return codes.astype(np.uint32), [str(x) for x in labels]


_COLOURS = {"green": 0, "yellow": 1, "red": 2}

# The ECN field's two bits (RFC 3168 section 5) and their names in and out.
ECN_NAMES = {0: "not-ect", 1: "ect1", 2: "ect0", 3: "ce"}
_ECN_CODES = {**{name: code for code, name in ECN_NAMES.items()}, "not_ect": 0, "notect": 0, "ect(1)": 1, "ect(0)": 2}


def _ecn_code(v: Any) -> int | None:
    """The two bits of an ECN value as a trace may give it; None if it is not one."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer()):
        return int(v) if 0 <= int(v) <= 3 else None
    text = str(v).strip().lower()
    return int(text) if text in ("0", "1", "2", "3") else _ECN_CODES.get(text)


def _ecns(df: pd.DataFrame) -> np.ndarray:
    out = np.zeros(len(df), dtype=np.uint8)
    if "ecn" not in df.columns:
        return out
    for i, v in enumerate(df["ecn"]):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
            continue
        code = _ecn_code(v)
        if code is None:
            rule = "an ECN field is not-ect, ect0, ect1, ce, or 0-3 (RFC 3168: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE)"
            raise ScenarioError(f"trace[{i}].ecn = {v!r}: {rule}", f"trace[{i}].ecn", repr(v), rule)
        out[i] = code
    return out


def _colours(df: pd.DataFrame) -> np.ndarray:
    out = np.full(len(df), 255, dtype=np.uint8)
    if "color" not in df.columns:
        return out
    for i, v in enumerate(df["color"]):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
            continue
        code = _COLOURS.get(str(v).lower())
        if code is None:
            raise ScenarioError(f"trace[{i}].color = {v!r}: one of green, yellow, red", f"trace[{i}].color", repr(v), "a colour is green, yellow or red")
        out[i] = code
    return out


def replay(
    config: Mapping[str, Any] | str | os.PathLike[str],
    arrivals: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    rate: str | None = None,
    seed: int = 1,
    time_unit: str = "ns",
    series: bool = False,
) -> pd.DataFrame:
    """Feeds `arrivals` through the mechanism `config` (a scenario table as a dict, TOML
    text or a file). `rate` is the link rate a queue discipline feeds ("10Mbps"). Times are
    in `time_unit` (ns, us, ms, s) in a `time` column, or in ns in `time_ns`. Mechanisms
    that draw random numbers do so from a stream seeded by `seed`. `series` adds a queue's
    state after each arrival (module documentation)."""
    df = _frame(arrivals)
    times = _times_ns(df, time_unit)
    sizes = _sizes(df)
    dscps = _dscps(df)
    flows, flow_names = _flows(df)
    colours = _colours(df)
    ecns = _ecns(df)
    text = _config_text(config)
    try:
        kind = tomllib.loads(text).get("type", "conditioner")
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"the mechanism configuration is not valid TOML: {e}", "", None, str(e)) from None
    try:
        table = _dsim.replay(text, times.tolist(), sizes.tolist(), dscps.tolist(), flows.tolist(), colours.tolist(), flow_names, rate=rate, seed=seed, ecns=ecns.tolist(), series=series)
    except ScenarioError as e:
        if isinstance(config, Mapping):
            e = e.without_line()
        if e.path:
            raise e from None
        # A missing key has no key path of its own: name the mechanism that misses it.
        raise ScenarioError(f"{kind}: {e}", "", e.value, e.rule, e.line, e.file) from None
    out = pa.record_batch(table).to_pandas()
    result = df.copy()
    result["time_ns"] = times
    result["dscp_in"] = [_dsim.dscp_name(int(d)) for d in dscps]
    result["dscp_out"] = [_dsim.dscp_name(int(d)) for d in out["dscp_out"]]
    result["color_out"] = out["color"]
    result["dropped"] = out["dropped"].astype(bool)
    result["drop_cause"] = out["drop_cause"]
    result["depart_ns"] = out["depart_ns"]
    result["tx_end_ns"] = out["tx_end_ns"]
    ecn_out = out["ecn_out"].to_numpy()
    result["ecn_out"] = [ECN_NAMES[int(c)] for c in ecn_out]
    result["marked"] = (ecn_out == 3) & (ecns != 3)
    for column in out.columns[list(out.columns).index("ecn_out") + 1 :]:
        result[column] = out[column]
    return result


def is_pcap(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in (".pcap", ".pcapng", ".cap")


def read_trace(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Reads a trace file: a pcap capture (Ethernet, raw IP or Linux cooked; IPv4: size =
    total length, DSCP and ECN field from the TOS byte, flow = 5-tuple, time since the first
    packet in `time_ns`) or a CSV with columns time or time_ns, size, and optionally dscp,
    flow, color, ecn."""
    if is_pcap(path):
        df = pa.record_batch(_dsim.read_pcap(os.fspath(path))).to_pandas()
        df["dscp"] = [_dsim.dscp_name(int(d)) for d in df["dscp"]]
        df["ecn"] = [ECN_NAMES[int(e)] for e in df["ecn"]]
        return df
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        rule = "a CSV trace has a header line and one line per packet"
        raise ScenarioError(f"the trace is empty; {rule}", "trace", None, rule) from None
    except UnicodeDecodeError:
        rule = "a trace is CSV text, or a capture named .pcap, .pcapng or .cap"
        raise ScenarioError(f"not CSV text; {rule}", "trace", None, rule) from None


def write_pcap(source: str | os.PathLike[str], out: str | os.PathLike[str], result: pd.DataFrame) -> int:
    """Writes the capture `source` as `result` (a :func:`replay` of it) left it: dropped
    packets removed, DSCP and ECN field rewritten (CE where marked), each packet stamped
    with its departure. Returns the number of packets written."""
    kept = result[~result["dropped"]]
    rows = kept.index.to_list()
    dscps = [_dsim.parse_dscp(str(d), "dscp_out") for d in kept["dscp_out"]]
    ecns = [_ECN_CODES[e] for e in kept["ecn_out"]]
    departs = [int(t) for t in kept["depart_ns"]]
    _dsim.write_pcap(os.fspath(source), os.fspath(out), rows, dscps, ecns, departs)
    return len(rows)


kinds = _dsim.replay_kinds
