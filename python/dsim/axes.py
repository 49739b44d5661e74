"""Sweep axes: which scenario keys vary, over which values, and the points they make.

An axis is a key path as it reads in a scenario file (``flow[0].app.rate``,
``link[1].queue.limit``, ``duration``) and a list of values. In a scenario file::

    [sweep]
    mode = "cartesian"                                     # or "zip"; default "cartesian"
    "flow[0].app.rate" = ["1Mbps", "2Mbps", "4Mbps"]       # a list of values
    "link[1].queue.limit" = { range = [10, 50, 10], unit = "p" }   # 10p 20p 30p 40p 50p

On the command line: ``--set "flow[0].app.rate=1Mbps,2Mbps,4Mbps"`` and
``--set "link[1].queue.limit=10:50:10p"`` (start:stop:step, then the unit).

A range is inclusive of its stop when the stop lies on the grid (decimal arithmetic, so
``range = [0.1, 0.3, 0.1]`` gives 0.1, 0.2, 0.3). `cartesian` makes every combination, the
first axis varying slowest; `zip` takes the i-th value of every axis (all axes of the same
length).

Two kinds of bad input:
- a bad axis (a key the schema does not have, an empty list, a malformed range, zipped
  axes of different lengths) is a ScenarioError naming the axis and the value, raised
  before anything runs;
- a point the validator refuses (``flow[0].app.rate = "fast"``, a rate of zero) fails
  alone: its tasks are recorded as failed with the validator's message and the other
  points run.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import (
    ROUND_FLOOR,
    Context,
    Decimal,
    DecimalException,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    Underflow,
    localcontext,
)
from typing import Any

from . import _dsim
from .errors import MAX_REPLICATIONS, ScenarioError, check_integer, shorten
from .scenario import _PATH_PART, Scenario, load_scenario

__all__ = ["MODES", "Axis", "Design", "Point", "design_for", "parse_axes", "parse_cli_axis"]

MODES = ("cartesian", "zip")


def max_points() -> int:
    """Most values one axis, and most points one sweep, may have: the `points` limit
    (docs/limits.md; a guard against a typo in a range step making millions of runs).
    Checked from the counts, before a value is made."""
    from .limits import current

    return current()["points"]


def _too_many(key: str, value: Any, count: Any) -> ScenarioError:
    from .limits import how_to_raise

    rule = f"a sweep has at most {max_points():,} points ({how_to_raise('points')})"
    return _axis_error(key, value, f"{_count_text(count)} values: {rule}")


def _count_text(n: Any) -> str:
    """A count that may be astronomically large (a Decimal or an int of thousands of
    digits), written so that formatting it cannot fail."""
    if isinstance(n, Decimal):
        return f"{n:,.0f}" if n.adjusted() < 30 else f"about {n:.3E}"
    return f"{n:,}" if n.bit_length() < 100 else f"about 10^{int(n.bit_length() * 0.30103)}"

_KEY_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\[\d+\])*(\.[A-Za-z_][A-Za-z0-9_-]*(\[\d+\])*)*$")
_CLI_RANGE = re.compile(r"^\s*([-+]?[0-9.eE+-]+)\s*:\s*([-+]?[0-9.eE+-]+)\s*:\s*([-+]?[0-9.eE+-]+)\s*([A-Za-z%/]*)\s*$")


def _inside(inner: str, outer: str) -> bool:
    """Whether key path `inner` lies strictly inside `outer` (link[1].queue.limit inside
    link[1].queue), compared part by part."""
    a, b = _PATH_PART.findall(inner), _PATH_PART.findall(outer)
    return len(a) > len(b) and a[: len(b)] == b


def _axis_error(key: str, value: Any, rule: str) -> ScenarioError:
    shown = _show(value)
    key = shorten(key).strip("'\"")
    return ScenarioError(f"sweep axis {key!r} = {shown}: {rule}", f"sweep.{key}" if key else "sweep", shown, rule)


def _show(value: Any) -> str:
    """A value as TOML would write it, shortened to one line of bounded length (a value of
    thousands of characters, or an integer too long for `str`, never breaks the message)."""
    try:
        if isinstance(value, str):
            text = json.dumps(value)
        else:
            text = json.dumps(value, separators=(", ", " = ")) if isinstance(value, dict) else json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return shorten(value)
    return text if len(text) <= 60 else shorten(value)


@dataclass(frozen=True)
class Axis:
    """One swept key and its values (TOML values: strings, numbers, booleans, tables)."""

    key: str
    values: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "values": list(self.values)}


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its index and the value of every axis."""

    index: int
    values: dict[str, Any] = field(hash=False)

    def label(self) -> str:
        return ", ".join(f"{k} = {_show(v)}" for k, v in self.values.items())


@dataclass
class Design:
    """The axes of a sweep and how they combine."""

    axes: list[Axis]
    mode: str = "cartesian"

    def points(self) -> list[Point]:
        keys = [a.key for a in self.axes]
        if not self.axes:
            return [Point(0, {})]
        if self.mode == "zip":
            combos: Iterable[tuple[Any, ...]] = zip(*(a.values for a in self.axes), strict=True)  # check() made them equal
        else:
            combos = itertools.product(*(a.values for a in self.axes))
        return [Point(i, dict(zip(keys, c, strict=True))) for i, c in enumerate(combos)]

    def size(self) -> int:
        if not self.axes:
            return 1
        if self.mode == "zip":
            return len(self.axes[0].values)
        n = 1
        for a in self.axes:
            n *= len(a.values)
        return n

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "axes": [a.to_json() for a in self.axes]}

    def check(self) -> Design:
        """Structural checks: mode, zipped lengths, number of points."""
        if self.mode not in MODES:
            raise _axis_error("mode", self.mode, f"the mode is one of {', '.join(MODES)}")
        if self.mode == "zip" and self.axes:
            lengths = {a.key: len(a.values) for a in self.axes}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                raise ScenarioError(f"sweep: zipped axes must have as many values each ({detail})", "sweep.mode", "zip", "zipped axes have the same length")
        if self.size() > max_points():
            from .limits import exceeded

            raise exceeded("sweep", f"{_count_text(self.size())} points", "a sweep has", "points")
        for inner in self.axes:
            for outer in self.axes:
                if _inside(inner.key, outer.key):
                    rule = (f"it lies inside axis {outer.key!r}, whose values replace the whole table: "
                            "one of the two would be ignored; put the inner values in the outer axis's tables")
                    raise _axis_error(inner.key, list(inner.values), rule)
        return self


# -- reading axes ----------------------------------------------------------------------------


def _check_value(key: str, value: Any) -> Any:
    """A value an axis may take: a TOML value (no datetimes, no None; integers of 64 bits)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise _axis_error(key, value, "an integer lies in -9223372036854775808..9223372036854775807 (TOML integers are 64-bit)")
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_check_value(key, v) for v in value]
    if isinstance(value, dict):
        return {str(k): _check_value(key, v) for k, v in value.items()}
    raise _axis_error(key, value, "an axis value is a TOML value: a string, a number, a boolean, an array or a table")


#: The decimal arithmetic of ranges: exact for any bound a user writes (28 digits), and
#: every exceptional condition (an overflow, a result too small, an invalid operation) an
#: error rather than an infinity or a silent zero.
_RANGE_CONTEXT = Context(prec=40, Emax=999_999, Emin=-999_999, traps=[InvalidOperation, Overflow, DivisionByZero, Underflow])
#: Bounds and steps have at most this many significant digits and exponents within this
#: magnitude: a 5,000-digit number is a typo, and its arithmetic would be slow or overflow.
_RANGE_DIGITS, _RANGE_EXPONENT = 30, 300


def _decimal(key: str, spec: Any, x: Any) -> Decimal:
    rule = "range = [start, stop, step] takes three numbers"
    if isinstance(x, bool) or not isinstance(x, int | float | str):
        raise _axis_error(key, spec, rule)
    if isinstance(x, int) and x.bit_length() > 100:
        raise _axis_error(key, spec, f"{rule} of at most {_RANGE_DIGITS} digits")
    if isinstance(x, str) and len(x) > 2 * _RANGE_DIGITS:
        raise _axis_error(key, spec, f"{rule} of at most {_RANGE_DIGITS} digits")
    try:
        d = Decimal(str(x).strip())
    except (InvalidOperation, ValueError):
        raise _axis_error(key, spec, rule) from None
    if not d.is_finite():
        raise _axis_error(key, spec, "range bounds and step are finite numbers")
    if len(d.as_tuple().digits) > _RANGE_DIGITS or (d != 0 and abs(d.adjusted()) > _RANGE_EXPONENT):
        raise _axis_error(key, spec, f"{rule} of at most {_RANGE_DIGITS} digits, between 1e-{_RANGE_EXPONENT} and 1e{_RANGE_EXPONENT}")
    return d


def expand_range(key: str, spec: dict[str, Any]) -> list[Any]:
    """The values of ``{ range = [start, stop, step], unit = "p" }``, stop included when it
    lies on the grid. The number of values is checked against the points limit before
    any value is made."""
    unknown = set(spec) - {"range", "unit"}
    if unknown:
        raise _axis_error(key, spec, f"a range axis has the keys range and unit, not {', '.join(sorted(map(str, unknown)))}")
    bounds = spec.get("range")
    if not isinstance(bounds, list) or len(bounds) != 3:
        raise _axis_error(key, spec, "range = [start, stop, step] takes three numbers")
    start, stop, step = (_decimal(key, spec, x) for x in bounds)
    unit = spec.get("unit", "")
    if not isinstance(unit, str):
        raise _axis_error(key, spec, 'unit is a string such as "p", "ms" or "Mbps"')
    try:
        with localcontext(_RANGE_CONTEXT):
            if step == 0 or (stop - start) * step < 0:
                raise _axis_error(key, spec, "the step is not zero and goes from start towards stop")
            count = ((stop - start) / step).to_integral_value(rounding=ROUND_FLOOR) + 1
            if count > max_points():
                raise _too_many(key, spec, count)
            values = [start + i * step for i in range(int(count))]
    except DecimalException:
        raise _axis_error(key, spec, "the range's arithmetic overflows: its bounds and step are too far apart") from None
    integral = all(isinstance(x, int) for x in bounds)
    out: list[Any] = []
    for v in values:
        if unit:
            text = format(v.normalize(), "f") if v != v.to_integral_value() else str(int(v))
            out.append(f"{text}{unit}")
        else:
            out.append(int(v) if integral else float(v))
    return out


def _axis(key: str, value: Any) -> Axis:
    if not isinstance(key, str) or not _KEY_PATH.match(key):
        raise _axis_error(str(key), value, "an axis is a key path as it reads in a scenario file, such as flow[0].app.rate")
    if key.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0] == "sweep":
        raise _axis_error(key, value, "the sweep table cannot sweep itself")
    if isinstance(value, dict) and "range" in value:
        values = expand_range(key, value)
    elif isinstance(value, list):
        values = [_check_value(key, v) for v in value]
    else:
        raise _axis_error(key, value, 'an axis is a list of values or { range = [start, stop, step], unit = "..." }')
    if not values:
        raise _axis_error(key, value, "an axis has at least one value")
    return Axis(key, tuple(values))


#: Parts of an axis's key path (the deepest scenario key has 8).
_DEEPEST_KEY = 32


def _flatten(table: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """Axes of a [sweep] table; an unquoted dotted key (duration.x = [...]) arrives nested."""
    if depth > _DEEPEST_KEY:
        raise _axis_error(prefix, "...", f"a key path has at most {_DEEPEST_KEY} parts")
    out = []
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and "range" not in v:
            out.extend(_flatten(v, key, depth + 1))
        else:
            out.append((key, v))
    return out


def parse_axes(table: dict[str, Any] | None) -> tuple[list[Axis], str | None]:
    """The axes and mode of a ``[sweep]`` table (or the ``axes=`` dict of ``dsim.sweep``)."""
    if not table:
        return [], None
    if not isinstance(table, dict):
        raise _axis_error("", table, "sweep is a table of key path = values")
    table = dict(table)
    mode = table.pop("mode", None)
    if mode is not None and mode not in MODES:
        raise _axis_error("mode", mode, f"the mode is one of {', '.join(MODES)}")
    return [_axis(k, v) for k, v in _flatten(table)], mode


def _split_values(text: str) -> list[str]:
    """Splits on commas outside quotes, brackets and braces."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "[{":
            depth += 1
            cur.append(ch)
        elif ch in "]}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _cli_value(text: str) -> Any:
    """A value written on the command line: a TOML value if it reads as one (10, 0.5, true,
    "x", {type = "droptail", limit = "20p"}), otherwise the text itself (1Mbps, 20p). A
    value beyond the limits (an integer beyond 64 bits, nesting too deep) is an error."""
    from .scenario import load_toml

    try:
        return load_toml(f"v = {text}")["v"]
    except ScenarioError as e:
        if "not valid TOML" in e.rule:
            return text
        raise ScenarioError(f"--set {shorten(text)}: {e.rule}", "sweep", shorten(text), e.rule) from None


def _cli_number(text: str) -> int | str:
    """A bound or step of a command-line range: an integer as an int (a range of integers
    gives integers), anything else as written, for the exact decimal reading of the range
    (through TOML, 1e-9999 would read as 0.0)."""
    text = text.strip()
    return int(text) if re.fullmatch(r"[-+]?[0-9]{1,30}", text) else text


def parse_cli_axis(text: str) -> Axis:
    """``KEY=V1,V2,...`` or ``KEY=START:STOP:STEP[UNIT]``."""
    key, sep, rest = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"--set {text!r}: write KEY=V1,V2,... or KEY=START:STOP:STEP[UNIT]", "sweep", text, "KEY=V1,V2,...")
    m = _CLI_RANGE.match(rest)
    if m:
        start, stop, step, unit = m.groups()
        nums = [_cli_number(x) for x in (start, stop, step)]
        return _axis(key, {"range": nums, **({"unit": unit} if unit else {})})
    values = _split_values(rest)
    if values == [""]:
        raise _axis_error(key, rest, "an axis has at least one value")
    return _axis(key, [_cli_value(v) for v in values])


# -- the design of a scenario, and its points --------------------------------------------------


def design_for(sc: Scenario, axes: dict[str, Any] | list[Axis] | None = None, mode: str | None = None) -> Design:
    """The sweep of `sc`: the axes of its ``[sweep]`` table, then `axes` (which replace a
    file axis of the same key and come after the others); `mode` overrides the file's."""
    try:
        file_axes, file_mode = parse_axes(sc.data.get("sweep"))
    except ScenarioError as e:
        raise _in_file(sc, e) from None
    if isinstance(axes, dict):
        extra, extra_mode = parse_axes(axes)
        mode = mode or extra_mode
    else:
        extra = list(axes or [])
    seen: set[str] = set()
    for a in extra:
        if a.key in seen:
            raise _axis_error(a.key, list(a.values), "the same key is swept twice")
        seen.add(a.key)
    merged = [a for a in file_axes if a.key not in seen] + extra
    return Design(merged, mode or file_mode or "cartesian").check()


def _in_file(sc: Scenario, e: ScenarioError) -> ScenarioError:
    """`e` with the line of its axis in the [sweep] table of the file `sc` came from."""
    text = sc._text if sc._text_is_current() else None
    if text is None:
        return e
    key = e.path.removeprefix("sweep.").split(".")[0] if e.path != "sweep.mode" else "mode"
    in_sweep, line = False, None
    for i, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("["):
            in_sweep = stripped.replace(" ", "") == "[sweep]"
            if in_sweep and line is None:
                line = i
            continue
        if in_sweep and (stripped.startswith(f'"{e.path.removeprefix("sweep.")}"') or stripped.split("=")[0].strip() == key):
            line = i
            break
    located = ScenarioError(f"line {line}: {e}" if line else str(e), e.path, e.value, e.rule, line)
    return located.in_file(sc.source) if sc.source else located


def base_scenario(sc: Scenario) -> Scenario:
    """`sc` without its [sweep] table."""
    data = sc.to_dict()
    data.pop("sweep", None)
    base = Scenario.from_dict(data)
    base.source = sc.source
    return base


def point_scenario(base: Scenario, point: Point) -> Scenario:
    """The scenario a point runs: the base with each axis value set."""
    sc = base.copy()
    for key, value in point.values.items():
        sc.set(key, value)
    return sc


def _unknown_key(e: ScenarioError, key: str) -> bool:
    """Whether the validator's error says that (part of) the axis key does not exist."""
    rule = (e.rule or str(e)).lower()
    return ("unknown field" in rule or "no such entry" in rule) and bool(e.path) and (key.startswith(e.path) or e.path.startswith(key))


def check_points(base: Scenario, design: Design) -> tuple[list[Point], dict[int, str]]:
    """Every point, and the validator's refusal of each point it refuses.

    Raises ScenarioError for an axis whose key does not exist (checked on the first point
    that uses each axis), before anything runs."""
    from .limits import limits_json

    points = design.points()
    values = {a.key: list(a.values) for a in design.axes}
    refused: dict[int, str] = {}
    limits = limits_json()
    for p in points:
        try:
            toml = point_scenario(base, p).to_toml()
        except ScenarioError as e:  # a path into an entry that is not there (flow[9] of 2)
            key = next((k for k in p.values if k.startswith(e.path) or e.path.startswith(k)), e.path)
            raise _axis_error(key, values.get(key), f"no such key in the scenario ({e.path}: {e.rule})") from None
        try:
            _dsim.validate(toml, limits)
        except ScenarioError as e:
            for key in p.values:
                if _unknown_key(e, key):
                    raise _axis_error(key, values[key], f"no such key in the scenario schema ({e.path}: {e.rule})") from None
            # The line of the generated point scenario would mean nothing to the user.
            refused[p.index] = f"{e.path} = {e.value}: {e.rule}" if e.value is not None else f"{e.path}: {e.rule}"
    return points, refused


# -- a sweep read and checked (light: `dsim validate` uses it without pandas) ----------------


def scenario_defaults(sc: Scenario) -> tuple[int, int]:
    """The scenario's own (seed, replications), defaults included, as the simulator reads them
    (without building the scenario: the caller has validated it)."""
    return _dsim.run_defaults(sc.to_toml())


def prepare(scenario: Scenario | str | os.PathLike[str], axes: Any = None, mode: str | None = None, replications: int | None = None, seed: int | None = None) -> tuple[Scenario, Design, list[Point], dict[int, str], int, int]:
    """Reads and checks a sweep: (scenario, design, points, refused points, seed, replications)."""
    sc = load_scenario(scenario)
    design = design_for(sc, axes, mode)
    base = base_scenario(sc)
    base.validate()
    own_seed, own_reps = scenario_defaults(base)
    seed = own_seed if seed is None else seed
    replications = own_reps if replications is None else replications
    check_integer("seed", seed, 0)
    check_integer("replications", replications, 1, MAX_REPLICATIONS)
    points, refused = check_points(base, design)
    return sc, design, points, refused, seed, replications
