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
transmission (`tx_end_ns`); null (<NA>) when dropped. Times are whole nanoseconds from
end to end, never a float64 (an epoch time in ns keeps its last digit): a `time` in us, ms
or s is rounded to the nearest ns, and a time beyond 2^64 - 1 ns, a negative or fractional
size, or a time that decreases is refused naming its row. With `series=True`, a queue's state just
after each arrival is added: `avg` (the RED / MRED average that judged the packet, in
`avg_unit`, pkts or bytes), for DSD `g`, `penalty`, `loss_blue`, `loss_green`,
`wait_blue_ms`, `wait_green_ms` (its control loop's last estimates), and for CoDel, PIE and
FQ-CoDel `delay_ms`, `dropping`, `count`, `p`, `flows` (docs/aqm.md). A packet arriving at the nanosecond a
transmission ends is offered to the queue before the next packet starts, as in a simulated
network (docs/ties.md).
"""

from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_EVEN, Context, Decimal, InvalidOperation, localcontext
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import tomli_w

from . import _dsim
from .errors import ScenarioError, check_integer, shorten
from .scenario import load_toml

_TIME_SCALE = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
#: The largest time dsim holds: 2^64 - 1 ns (584 years).
U64_MAX = 2**64 - 1
#: The largest packet: sizes are 32-bit.
MAX_SIZE = 2**32 - 1
#: Exact decimal arithmetic for times and sizes (no float64 on the way: an epoch time in
#: ns has 19 digits, a float64 keeps 15 to 17).
_EXACT = Context(prec=80, Emax=999_999, Emin=-999_999)


def _config_text(config: Mapping[str, Any] | str | os.PathLike[str]) -> str:
    from .scenario import _read_text, _unwritable

    if isinstance(config, Mapping):
        found = _unwritable(dict(config))
        if found is None:
            try:
                return tomli_w.dumps(dict(config))
            except (TypeError, ValueError):
                found = ("", config)
        path, value = found
        rule = "a value is a string (with its unit), a 64-bit integer, a number, a boolean, a list or a table"
        raise ScenarioError(f"config.{path} = {shorten(value)}: {rule}", f"config.{path}", shorten(value), rule)
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config and config.endswith(".toml")):
        return _read_text(Path(config), "a mechanism's configuration file")
    if not isinstance(config, str):
        rule = "a mechanism's table as a dict, its TOML text or a .toml file"
        raise ScenarioError(f"config = {shorten(config)}: expected {rule}", "config", shorten(config), rule)
    return config


def _frame(arrivals: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    if isinstance(arrivals, pd.DataFrame):
        return arrivals.reset_index(drop=True)
    rule = "a DataFrame, or an iterable of records (dicts) with the columns of a trace"
    if isinstance(arrivals, str | bytes | Mapping) or not isinstance(arrivals, Iterable):
        raise ScenarioError(f"arrivals = {shorten(arrivals)}: expected {rule}", "arrivals", shorten(arrivals), rule)
    records = list(arrivals)
    for i, r in enumerate(records):
        if not isinstance(r, Mapping):
            raise ScenarioError(f"trace[{i}] = {shorten(r)}: expected {rule}", f"trace[{i}]", shorten(r), rule)
    return pd.DataFrame.from_records(records).reset_index(drop=True)


def _exact(v: Any) -> Decimal | None:
    """`v` as an exact decimal: an integer as it is, a float as the shortest decimal that
    reads back as it, a text as written; None if it is not a finite number."""
    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | np.integer):
        return Decimal(int(v))
    if isinstance(v, float | np.floating):
        return Decimal(repr(float(v))) if np.isfinite(v) else None
    if isinstance(v, str):
        text = v.strip().replace("_", "")
        if not text or len(text) > 40:
            return None
        try:
            d = Decimal(text)
        except InvalidOperation:
            return None
        return d if d.is_finite() else None
    return None


def _whole(col: str, i: int, raw: Any, scale: int, rule: str, low: int, high: int, *, rounded: bool) -> int:
    """Row `i`'s value `raw` times `scale`, as a whole number from `low` to `high`: rounded
    to the nearest when `rounded` (a time in us to ns), else it must be whole already."""
    d = _exact(raw)
    with localcontext(_EXACT):
        n = None if d is None else d * scale
        if n is not None and rounded:
            n = n.to_integral_value(rounding=ROUND_HALF_EVEN)
        ok = n is not None and n == n.to_integral_value() and low <= n <= high
    if not ok or n is None:
        raise ScenarioError(f"trace[{i}].{col} = {shorten(raw)}: {rule}", f"trace[{i}].{col}", shorten(raw), rule)
    return int(n)


def _column_ints(df: pd.DataFrame, col: str, scale: int, rule: str, low: int, high: int, *, rounded: bool) -> np.ndarray:
    """Column `col` times `scale` as exact unsigned integers; the first row out of
    [low, high] (or not a number) is an error naming the row and the value."""
    series = df[col]
    if series.dtype.kind in "iu" and len(series):  # integers already: exact, checked at once
        values = series.to_numpy()
        bad = np.flatnonzero((values < low) | (values > high // scale))
        if bad.size == 0:
            return values.astype(np.uint64) * np.uint64(scale)
    out = np.empty(len(series), dtype=np.uint64)
    for i, raw in enumerate(series.tolist()):
        out[i] = _whole(col, i, raw, scale, rule, low, high, rounded=rounded)
    return out


def _times_ns(df: pd.DataFrame, time_unit: str) -> np.ndarray:
    """Arrival times in ns, exact: integers from end to end (a time of 1e20 ns, or 2e10 s,
    is refused, not wrapped; an epoch time keeps its last digit)."""
    if "time_ns" in df.columns:
        col, scale, unit = "time_ns", 1, "ns"
    elif "time" in df.columns:
        col, scale, unit = "time", _TIME_SCALE[time_unit], time_unit
    else:
        raise ScenarioError("the trace needs a `time` (with time_unit) or `time_ns` column", "trace", None, "missing time column")
    rule = f"a time is a number >= 0 (in {unit}) up to {U64_MAX} ns, 584 years"
    return _column_ints(df, col, scale, rule, 0, U64_MAX, rounded=True)


def _sizes(df: pd.DataFrame) -> np.ndarray:
    if "size" not in df.columns:
        raise ScenarioError("the trace needs a `size` column (bytes)", "trace", None, "missing size column")
    rule = f"a size is a whole number of bytes from 1 to {MAX_SIZE}"
    return _column_ints(df, "size", 1, rule, 1, MAX_SIZE, rounded=False)


def _dscps(df: pd.DataFrame) -> np.ndarray:
    if "dscp" not in df.columns:
        return np.zeros(len(df), dtype=np.uint8)
    codes: dict[str, int] = {}
    out = np.empty(len(df), dtype=np.uint8)
    for i, cell in enumerate(df["dscp"]):
        # A CSV column with a gap reads as floats.
        v = int(cell) if isinstance(cell, float | np.floating) and float(cell).is_integer() else cell
        key = _text(v)
        if key not in codes:
            codes[key] = _dsim.parse_dscp(key, f"trace[{i}].dscp")
        out[i] = codes[key]
    return out


def _text(v: Any) -> str:
    """`v` as text, whatever it is (an integer too long for `str` as its description)."""
    try:
        return str(v)
    except (ValueError, RecursionError):
        return shorten(v)


def _flows(df: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    if "flow" not in df.columns:
        return np.zeros(len(df), dtype=np.uint32), ["flow"]
    codes, labels = pd.factorize(df["flow"].map(_text), sort=False)
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
    text = _text(v).strip().lower()
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
            raise ScenarioError(f"trace[{i}].ecn = {shorten(v)}: {rule}", f"trace[{i}].ecn", shorten(v), rule)
        out[i] = code
    return out


def _colours(df: pd.DataFrame) -> np.ndarray:
    out = np.full(len(df), 255, dtype=np.uint8)
    if "color" not in df.columns:
        return out
    for i, v in enumerate(df["color"]):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
            continue
        code = _COLOURS.get(_text(v).lower())
        if code is None:
            raise ScenarioError(f"trace[{i}].color = {shorten(v)}: one of green, yellow, red", f"trace[{i}].color", shorten(v), "a colour is green, yellow or red")
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
    _check_arguments(rate, seed, time_unit, series)
    df = _frame(arrivals)
    times = _times_ns(df, time_unit)
    sizes = _sizes(df)
    dscps = _dscps(df)
    flows, flow_names = _flows(df)
    colours = _colours(df)
    ecns = _ecns(df)
    text = _config_text(config)
    kind = _text(load_toml(text).get("type", "conditioner"))
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
    result["depart_ns"] = _never_is_null(out["depart_ns"])
    result["tx_end_ns"] = _never_is_null(out["tx_end_ns"])
    ecn_out = out["ecn_out"].to_numpy()
    result["ecn_out"] = [ECN_NAMES[int(c)] for c in ecn_out]
    result["marked"] = (ecn_out == 3) & (ecns != 3)
    for column in out.columns[list(out.columns).index("ecn_out") + 1 :]:
        result[column] = out[column]
    return result


def _never_is_null(column: pd.Series) -> pd.Series:
    """A time column of the core's (u64 ns, 2^64 - 1 for a packet that never left) as exact
    integers with a null where the packet never left."""
    values = column.to_numpy(dtype=np.uint64)
    out = pd.array(values, dtype="UInt64")
    out[values == np.uint64(U64_MAX)] = pd.NA
    return pd.Series(out, index=column.index)


def _check_arguments(rate: Any, seed: Any, time_unit: Any, series: Any) -> None:
    """The keyword arguments of :func:`replay`, each checked with the rule it breaks."""
    check_integer("seed", seed, 0)
    if rate is not None and not isinstance(rate, str):
        rule = 'a rate with its unit, such as "10Mbps"'
        raise ScenarioError(f"rate = {shorten(rate)}: {rule}", "rate", shorten(rate), rule)
    if not isinstance(time_unit, str) or time_unit not in _TIME_SCALE:
        rule = f"one of {', '.join(_TIME_SCALE)}"
        raise ScenarioError(f"time_unit = {shorten(time_unit)}: {rule}", "time_unit", shorten(time_unit), "unknown time unit")
    if not isinstance(series, bool | np.bool_):
        raise ScenarioError(f"series = {shorten(series)}: True or False", "series", shorten(series), "True or False")


def is_pcap(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in (".pcap", ".pcapng", ".cap")


def read_trace(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Reads a trace file: a pcap capture (Ethernet, raw IP or Linux cooked; IPv4: size =
    total length, DSCP and ECN field from the TOS byte, flow = 5-tuple, time since the first
    packet in `time_ns`) or a CSV with columns time or time_ns, size, and optionally dscp,
    flow, color, ecn."""
    from .limits import current, read_bounded
    if not isinstance(path, str | os.PathLike):
        rule = "a trace file's path"
        raise ScenarioError(f"path = {shorten(path)}: expected {rule}", "path", shorten(path), rule)
    if is_pcap(path):
        df = pa.record_batch(_dsim.read_pcap(os.fspath(path), current()["trace_bytes"])).to_pandas()
        df["dscp"] = [_dsim.dscp_name(int(d)) for d in df["dscp"]]
        df["ecn"] = [ECN_NAMES[int(e)] for e in df["ecn"]]
        return df
    data = read_bounded(path, "trace_bytes", "a trace holds")
    rule = "a CSV trace has a header line and one line per packet, each with the header's fields"
    try:
        with warnings.catch_warnings():
            # A row with more fields than the header would otherwise be read with its first
            # field as the row's label, or cut short: an error, not a silent shift.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # Times and sizes as text, read exactly later (a float64 would round them).
            return pd.read_csv(io.BytesIO(data), index_col=False, dtype=dict.fromkeys(("time", "time_ns", "size"), str))
    except pd.errors.EmptyDataError:
        raise ScenarioError(f"the trace is empty; {rule}", "trace", None, rule) from None
    except UnicodeDecodeError:
        rule = "a trace is CSV text, or a capture named .pcap, .pcapng or .cap"
        raise ScenarioError(f"not CSV text; {rule}", "trace", None, rule) from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError) as e:
        why = " ".join(str(e).split()).removeprefix("Error tokenizing data. C error: ")
        raise ScenarioError(f"not a CSV trace ({why}); {rule}", "trace", None, rule) from None


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
