"""Scenario builder: the same schema as a TOML scenario file, built from Python.

A :class:`Scenario` is a thin wrapper around the dictionary a scenario file parses to;
``to_toml()`` writes exactly what a user would write by hand, and every check is done by
the simulator's own validator, so a scenario built here and the same scenario written as a
file are refused with the same messages.

    sc = Scenario(duration="20s", warmup="2s")
    sc.hosts("A", "B").routers("R")
    sc.link("A", "R", rate="10Mbps", delay="1ms")
    sc.link("R", "B", rate="1.5Mbps", delay="10ms", queue=droptail("50p"))
    sc.flow("voice", src="A", dst="B", app=cbr(rate="64kbps", size="200B"), dscp="EF")
    sc.flow("bulk", src="A", dst="B", app=ftp(), tcp=tcp(variant="sack"), start=uniform("0s", "1s"))
"""

from __future__ import annotations

import copy
import datetime
import os
import re
from pathlib import Path
from typing import Any

import tomli_w

from . import _dsim, _params

# The builders of one table each are generated from the core's declarations
# (scripts/gen_params.py -> _params.py): their keys, units, defaults and ranges are declared
# once, in Rust. The wrappers below add Python conveniences on top of them.
from ._params import (
    cbq_class,
    cbq_interior,
    cbr,
    codel,
    constant,
    cubic,
    dctcp,
    drop,
    droptail,
    drr_class,
    dsd_control,
    dsd_red,
    ef_policer,
    exponential,
    fq_codel,
    ftp,
    lognormal,
    match,
    mred,
    pareto,
    pie,
    poisson,
    precedence,
    priority_class,
    red,
    srtcm,
    tb_shaper,
    tcp,
    tfrc,
    token_bucket,
    trtcm,
    tsw,
    tsw3,
    web,
    wrr_class,
)
from .errors import ScenarioError, shorten

__all__ = [  # noqa: RUF022 (grouped by document, as the docs present them)
    "Scenario",
    "droptail",
    "cbr",
    "poisson",
    # Expedited Forwarding: schedulers and their classes (docs/ef.md)
    "klass",
    "priority_class",
    "wrr_class",
    "drr_class",
    "cbq_class",
    "cbq_interior",
    "priority",
    "wrr",
    "drr",
    "cbq",
    # Assured Forwarding: queues, meters, shapers, actions (docs/af.md)
    "red",
    "mred",
    "precedence",
    "rio",
    "token_bucket",
    "tsw",
    "tsw3",
    "srtcm",
    "trtcm",
    "tb_shaper",
    "srras",
    "trras",
    "ef_policer",
    "match",
    "mark",
    "demote",
    # Alternative Best-Effort (docs/abe.md)
    "dsd",
    "dsd_red",
    "dsd_control",
    "tfrc",
    "ABE_GREEN_DSCP",
    # Delay-based AQMs (docs/aqm.md)
    "codel",
    "pie",
    "fq_codel",
    # TCP applications, distributions, scripted drops (docs/tcp.md)
    "ftp",
    "web",
    "tcp",
    "cubic",
    "dctcp",
    "constant",
    "exponential",
    "pareto",
    "lognormal",
    "uniform",
    "drop",
]

#: The default ABE green codepoint, 000011 (3): RFC 2474 pool 2 (experimental/local use),
#: below 0x38 as draft-hurley-alternative-best-effort section 7 asks. Blue is DSCP 0.
ABE_GREEN_DSCP = 3


def klass(dscp: str | int | list[str | int] | None = None, **keys: Any) -> dict[str, Any]:
    """One class of a multi-queue scheduler: `dscp` (one codepoint or a list) and the keys
    of the scheduler's class table, whose builders document them: :func:`priority_class`
    (`limit_rate`, `limit_burst`), :func:`wrr_class` (`weight`), :func:`drr_class`
    (`quantum`), :func:`cbq_class`; every class takes `default` and `queue`. The core checks
    the keys against the scheduler the class is given to."""
    if isinstance(dscp, (str, int)):
        dscp = [dscp]
    return _params._table(None, {"dscp": dscp, **keys})


def priority(*classes: dict[str, Any]) -> dict[str, Any]:
    """Strict priority over `classes` (built with :func:`klass`), the first served first;
    a class may carry a token-bucket limiter (`limit_rate`, `limit_burst`) whose excess is
    discarded (RFC 2598 section 2.1)."""
    return _params._priority(list(classes))


def wrr(*classes: dict[str, Any]) -> dict[str, Any]:
    """Weighted round robin over `classes`, each with a `weight` in packets per visit."""
    return _params._wrr(list(classes))


def drr(*classes: dict[str, Any]) -> dict[str, Any]:
    """Deficit round robin over `classes`, each with a `quantum` in bytes per round."""
    return _params._drr(list(classes))


def cbq(*classes: dict[str, Any], scheduler: str, interior: list[dict[str, Any]] | None = None, **keys: Any) -> dict[str, Any]:
    """Class-based queueing (Floyd and Jacobson 1995, as ns-2) over the leaf `classes`
    (:func:`klass` with the keys of :func:`cbq_class`: `share`, `priority`, `parent`,
    `borrow`, ...), in round-robin order; `scheduler` "prr" or "wrr"; `interior` the
    classes of the tree above the leaves (:func:`cbq_interior`); the other keys of
    :func:`dsim._params._cbq` (`guideline`, `maxpkt`, `restart`, ...)."""
    return _params._cbq(scheduler, list(classes), interior=interior, **keys)


def dsd(buffer: str, d: str, *, control: dict[str, Any] | bool | None = None, **keys: Any) -> dict[str, Any]:
    """ABE's Duplicate Scheduling with Deadlines (draft-hurley-alternative-best-effort 5):
    the keys of :func:`dsim._params._dsd`; `control=True` adds the control loop with its
    defaults (``control = {}``)."""
    if control is True:
        control = {}
    elif control is False:
        control = None
    return _keys_of("dsd", _params._dsd, buffer, d, control=control, **keys)


def rio(
    limit: str,
    *,
    out: tuple[str, str, float],
    in_: tuple[str, str, float],
    in_dscp: list[str | int],
    wq: float | None = None,
    series: str | None = None,
) -> dict[str, Any]:
    """RIO in draft-ibanez's notation: `out` = (minth_out, maxth_out, maxp_out) on the
    average of all packets, `in_` = (minth_in, maxth_in, maxp_in) on the average of IN
    packets; `in_dscp` are the IN codepoints, every other codepoint is OUT."""
    for name, triple in (("out", out), ("in_", in_)):
        if not isinstance(triple, tuple | list) or len(triple) != 3:
            rule = "a triple (min_th, max_th, max_p), such as (\"5p\", \"15p\", 0.1)"
            raise ScenarioError(f"{name} = {shorten(triple)}: {rule}", name, shorten(triple), rule)
    if isinstance(in_dscp, str | int) or not isinstance(in_dscp, list | tuple):
        rule = "a list of codepoints, such as [\"AF11\"]"
        raise ScenarioError(f"in_dscp = {shorten(in_dscp)}: {rule}", "in_dscp", shorten(in_dscp), rule)
    return mred(
        limit,
        [precedence(in_[0], in_[1], in_[2], dscp=in_dscp), precedence(out[0], out[1], out[2])],
        mode="coupled",
        wq=wq,
        series=series,
    )


def srras(cir: str, *, green: bool = False, **keys: Any) -> dict[str, Any]:
    """RFC 2963 single rate rate adaptive shaper (srRAS), or G-srRAS with `green` (which
    needs an :func:`srtcm` meter in the same conditioner); the keys of
    :func:`dsim._params._srras`. See docs/ras.md."""
    table = _keys_of("srras", _params._srras, cir, **keys)
    table["type"] = "g_srras" if green else "srras"
    return table


def trras(cir: str, pir: str, *, green: bool = False, **keys: Any) -> dict[str, Any]:
    """RFC 2963 two rate rate adaptive shaper (trRAS), or G-trRAS with `green` (which
    needs a :func:`trtcm` meter in the same conditioner); the keys of
    :func:`dsim._params._trras`. See docs/ras.md."""
    table = _keys_of("trras", _params._trras, cir, pir, **keys)
    table["type"] = "g_trras" if green else "trras"
    return table


def _keys_of(name: str, builder: Any, *args: Any, **keys: Any) -> dict[str, Any]:
    """`builder(*args, **keys)` for a wrapper that passes its keys on: a key missing or
    unknown is a ScenarioError naming the builder's keys, not a TypeError from inside."""
    import inspect

    try:
        inspect.signature(builder).bind(*args, **keys)
    except TypeError as e:
        rule = f"{name} takes {', '.join(inspect.signature(builder).parameters)}"
        raise ScenarioError(f"{name}(...): {e}; {rule}", name, None, rule) from None
    table: dict[str, Any] = builder(*args, **keys)
    return table


def mark(dscp: str | int) -> dict[str, Any]:
    """Action: set the DS field (counted as a remark when it changes)."""
    return {"mark": dscp}


def demote(dscp: str | int) -> dict[str, Any]:
    """Action: demote to `dscp` (counted as a demotion when it changes)."""
    return {"demote": dscp}


def uniform(a: str, b: str) -> dict[str, Any]:
    """A flow start drawn uniformly in [a, b] from the flow's own random stream."""
    return {"uniform": [a, b]}


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class Scenario:
    """A scenario under construction. Methods return `self`, so calls chain."""

    def __init__(
        self,
        duration: str | None = None,
        *,
        warmup: str | None = None,
        seed: int | None = None,
        replications: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self.data: dict[str, Any] = _drop_none(
            {
                "name": name,
                "description": description,
                "duration": duration,
                "warmup": warmup,
                "seed": seed,
                "replications": replications,
            }
        )
        self.data.setdefault("nodes", {})
        #: The file this scenario was read from, if any (used in error messages).
        self.source: str | None = None
        # The text it was read from and the data it gave: the text stands for the scenario
        # (error lines match the file) as long as the data is what it gave.
        self._text: str | None = None
        self._read: dict[str, Any] = {}

    # -- reading and writing -------------------------------------------------------------

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str]) -> Scenario:
        """Reads a scenario file (a path) or TOML text. Syntax, limits (docs/limits.md) and
        schema are checked."""
        if not isinstance(source, str | os.PathLike):
            rule = "a scenario file's path or TOML text"
            raise ScenarioError(f"source = {shorten(source)}: expected {rule}", "source", shorten(source), rule)
        path = _as_path(source)
        text = _read_text(path) if path else os.fspath(source)
        try:
            # Two dicts of one parse: the data, and what the text gave (a file of 10,000
            # flows is 6 MB of TOML; a deep copy of its data alone took 0.4 s).
            data, read = load_toml_copies(text, 2)
        except ScenarioError as e:
            raise (e.in_file(str(path)) if path else e) from None
        sc = cls()
        sc.data = data
        sc.source = str(path) if path else None
        sc._text, sc._read = text, read
        sc.validate()
        return sc

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        sc = cls()
        sc.data = copy.deepcopy(data)
        return sc

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.data)

    def to_toml(self) -> str:
        """The scenario as TOML text, in the schema of scenario files."""
        if self._text is not None and self._text_is_current():
            return self._text
        found = _unwritable(self.data)
        if found is None:
            try:
                return tomli_w.dumps(self.data)
            except (TypeError, ValueError):  # what _unwritable missed: the first key it finds
                found = ("", self.data)
        path, value = found
        rule = "a value is a string (with its unit), a 64-bit integer, a number, a boolean, a list or a table"
        raise ScenarioError(f"{path} = {shorten(value)}: {rule}", path, shorten(value), rule)

    def _text_is_current(self) -> bool:
        """Whether the text read still says what the data says (`.data` may be edited
        directly, or through a table `get` returned)."""
        return self._text is not None and self.data == self._read

    def copy(self) -> Scenario:
        sc = Scenario.from_dict(self.data)
        sc.source = self.source
        return sc

    def validate(self) -> Scenario:
        """Checks every rule of the schema; raises ScenarioError naming key, value and rule
        (and the file and line, for a scenario read from a file and not edited since)."""
        from .limits import limits_json

        try:
            #: The work of one run, as the core estimates it (events, memory_bytes, packets).
            self.estimate: dict[str, int] = _dsim.validate(self.to_toml(), limits_json())
        except ScenarioError as e:
            raise self._located(e) from None
        return self

    def _located(self, e: ScenarioError) -> ScenarioError:
        """`e` with the file and line it has for the user."""
        if self._text_is_current():
            return e.in_file(self.source) if self.source else e
        # Built, copied or edited: the text was written from the data. (A copy is written
        # from its data too: callers edit `.data` directly.)
        e = e.without_line()
        if self.source:
            e = ScenarioError(f"{self.source} (edited in Python): {e}", e.path, e.value, e.rule, None, self.source)
        return e

    def canonical_toml(self) -> str:
        try:
            return _dsim.canonical_toml(self.to_toml())
        except ScenarioError as e:
            raise self._located(e) from None

    def hash(self) -> str:
        """First 16 hex digits of the SHA-256 of the canonical TOML."""
        try:
            return _dsim.scenario_hash(self.to_toml())
        except ScenarioError as e:
            raise self._located(e) from None

    @property
    def name(self) -> str:
        return self.data.get("name") or (Path(self.source).stem if self.source else "scenario")

    # -- editing ---------------------------------------------------------------------------

    def set(self, path: str, value: Any) -> Scenario:
        """Sets the value at a key path as it reads in a file: ``set("flow[0].app.rate", "2Mbps")``."""
        parts = _key_path(path)
        node: Any = self.data
        for i, part in enumerate(parts[:-1]):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                if isinstance(part, str) and isinstance(node, dict) and not isinstance(parts[i + 1], int):
                    node = node.setdefault(part, {})
                else:
                    where = _path_text(parts[: i + 1])
                    raise ScenarioError(f"{where}: no such entry in the scenario", where, None, "no such entry") from None
        try:
            node[parts[-1]] = value
        except (TypeError, IndexError):  # a path through a value, or past the end of a list
            raise ScenarioError(f"{path}: no such entry in the scenario", path, None, "no such entry") from None
        return self

    def get(self, path: str) -> Any:
        """The value at a key path as it reads in a file: ``get("flow[0].app.rate")``."""
        parts = _key_path(path)
        node: Any = self.data
        for i, part in enumerate(parts):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                where = _path_text(parts[: i + 1])
                raise ScenarioError(f"{where}: no such entry in the scenario", where, None, "no such entry") from None
        return node

    def hosts(self, *names: str) -> Scenario:
        self.data["nodes"].setdefault("hosts", []).extend(names)
        return self

    def routers(self, *names: str) -> Scenario:
        self.data["nodes"].setdefault("routers", []).extend(names)
        return self

    def link(
        self,
        a: str,
        b: str,
        *,
        rate: str,
        delay: str,
        queue: dict[str, Any] | None = None,
        loss: float | str | None = None,
        forward: dict[str, Any] | None = None,
        reverse: dict[str, Any] | None = None,
    ) -> Scenario:
        """A duplex link a <-> b. `queue` and `loss` apply to both directions unless
        `forward` (a -> b) or `reverse` (b -> a) override them (keys: rate, queue, loss)."""
        entry = _drop_none(
            {"from": a, "to": b, "rate": rate, "delay": delay, "queue": queue, "loss": loss, "forward": forward, "reverse": reverse}
        )
        self.data.setdefault("link", []).append(entry)
        return self

    def route(self, *path: str) -> Scenario:
        """Traffic for the last node of `path` follows `path` from each of its nodes."""
        self.data.setdefault("route", []).append({"path": list(path)})
        return self

    def flow(
        self,
        name: str | None = None,
        *,
        src: str,
        dst: str,
        app: dict[str, Any],
        dscp: str | int | None = None,
        start: str | dict[str, Any] | None = None,
        stop: str | None = None,
        count: int | None = None,
        tcp: dict[str, Any] | None = None,
        **extra: Any,
    ) -> Scenario:
        """A flow from `src` to `dst` (or `count` identical ones named name.0, name.1 ...).
        `start` is a time or :func:`uniform`; `tcp` (see :func:`tcp`) configures an
        :func:`ftp` or :func:`web` flow's TCP."""
        entry = _drop_none(
            {"name": name, "src": src, "dst": dst, "count": count, "dscp": dscp, "start": start, "stop": stop, "app": app, "tcp": tcp}
        )
        entry.update(extra)
        self.data.setdefault("flow", []).append(entry)
        return self

    def conditioner(
        self,
        name: str | None = None,
        *,
        at: str,
        side: str | None = None,
        interface: str | None = None,
        per_flow: bool | None = None,
        match: dict[str, Any] | None = None,
        meter: dict[str, Any] | None = None,
        shaper: dict[str, Any] | None = None,
        ef_policer: dict[str, Any] | None = None,
        green: str | dict[str, Any] | None = None,
        yellow: str | dict[str, Any] | None = None,
        red: str | dict[str, Any] | None = None,
    ) -> Scenario:
        """A traffic conditioner at node `at`: `side` "egress" (default; at a host, what it
        sends) or "ingress" (a router's arriving packets), optionally on the link to/from
        `interface` only; one state for the aggregate, or one per matching flow with
        `per_flow`. A `shaper`, a `meter` with actions per colour ("pass", "drop",
        :func:`mark`, :func:`demote`), or an `ef_policer`. See docs/af.md."""
        entry = _drop_none(
            {
                "name": name,
                "at": at,
                "side": side,
                "interface": interface,
                "per_flow": per_flow,
                "match": match,
                "shaper": shaper,
                "meter": meter,
                "ef_policer": ef_policer,
                "green": green,
                "yellow": yellow,
                "red": red,
            }
        )
        self.data.setdefault("conditioner", []).append(entry)
        return self

    def dscp(self, name: str, value: int) -> Scenario:
        """Names a codepoint: afterwards `name` stands for `value` wherever a DSCP is written."""
        self.data.setdefault("dscp", {})[name] = value
        return self

    def capture(
        self, *, port: str | None = None, node: str | None = None, name: str | None = None, snaplen: str | None = None
    ) -> Scenario:
        """A pcap capture of a link direction (`port` = "A->B", packets as they start
        transmission) or of a `node` (what it transmits and receives), written as
        `<name>-r<replication>.pcap` into the `capture_dir` given to :func:`dsim.run`;
        `snaplen` ("80B") keeps only the headers of each packet."""
        self.data.setdefault("capture", []).append(_drop_none({"port": port, "node": node, "name": name, "snaplen": snaplen}))
        return self

    def __repr__(self) -> str:
        n = self.data.get("nodes", {})
        return (
            f"Scenario({self.name!r}, {len(n.get('hosts', [])) + len(n.get('routers', []))} nodes, "
            f"{len(self.data.get('link', []))} links, {len(self.data.get('flow', []))} flows)"
        )


#: TOML integers are 64-bit (TOML 1.0, "Integer").
_I64 = range(-(2**63), 2**63)
#: How deep `_unwritable` looks: deeper than any limit a scenario may be raised to.
_DEEPEST = 200


def _key_path(path: Any) -> list[str | int]:
    """The parts of a key path (``flow[0].app.rate`` -> flow, 0, app, rate)."""
    rule = "a key path reads like flow[0].app.rate"
    if not isinstance(path, str) or len(path) > 1000:
        raise ScenarioError(f"path = {shorten(path)}: {rule}", "path", shorten(path), rule)
    parts = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_PART.finditer(path)]
    if not parts:
        raise ScenarioError(f"{path!r} is not a key path", path, None, rule)
    return parts


def _unwritable(node: Any, parts: tuple[str | int, ...] = ()) -> tuple[str, Any] | None:
    """The key path and value of the first value TOML cannot write, or None: an object,
    None, an integer beyond 64 bits, a table key that is not a string, a value nested
    deeper than any limit (or in itself)."""
    if len(parts) > _DEEPEST:
        return _path_text(list(parts)), "(nested too deep)"
    if isinstance(node, dict):
        bad_key = next((k for k in node if not isinstance(k, str)), None)
        if bad_key is not None:
            return _path_text(list(parts)), bad_key
        children: Any = node.items()
    elif isinstance(node, list | tuple):
        children = enumerate(node)
    elif isinstance(node, bool | str | float | datetime.date | datetime.time):
        return None
    elif isinstance(node, int):
        return None if node in _I64 else (_path_text(list(parts)), node)
    else:
        return _path_text(list(parts)), node
    for key, child in children:
        found = _unwritable(child, (*parts, key))
        if found:
            return found
    return None


def load_toml(text: str) -> dict[str, Any]:
    """TOML text as a dict, read by the core: size, syntax, integers beyond 64 bits and
    nesting depth checked within the limits (docs/limits.md), then the values in the
    types and key order of Python's tomllib (TOML 1.1, as the core reads scenarios)."""
    return load_toml_copies(text, 1)[0]


def load_toml_copies(text: str, copies: int) -> list[dict[str, Any]]:
    """`copies` independent dicts of one parse of `text` (cheaper than a deep copy)."""
    from .limits import limits_json

    return _dsim.load_toml(text, limits_json(), copies)


def _path_text(parts: list[str | int]) -> str:
    """Key path parts as they read in a file: ["flow", 0, "app"] -> flow[0].app."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _read_text(path: Path, what: str = "a scenario file") -> str:
    """A scenario (or configuration) file's text: UTF-8, a leading byte-order mark dropped
    (TOML is UTF-8; some editors write the mark, which the Python and the Rust TOML readers
    treat differently), read with a bound (``/dev/zero`` is refused, not read forever)."""
    from .limits import read_bounded

    try:
        data = read_bounded(path, "file_bytes", f"{what} holds")
    except OSError as e:
        rule = f"{what} is a readable file"
        raise ScenarioError(f"{e.strerror or e}: {path}", "", str(path), rule, None, str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        rule = f"{what} is UTF-8 text"
        raise ScenarioError(f"{path}: the byte at offset {e.start} is not UTF-8; {rule}", "", None, rule, None, str(path)) from None


def _as_path(source: str | os.PathLike[str]) -> Path | None:
    if isinstance(source, os.PathLike):
        return Path(source)
    if isinstance(source, str) and source.strip() and "\n" not in source and "=" not in source:
        # One line without "=": not TOML text; a file's name, whatever its suffix.
        return Path(source)
    return None


def load_scenario(source: Scenario | str | os.PathLike[str]) -> Scenario:
    """A Scenario from a Scenario, a scenario file path, or TOML text."""
    if isinstance(source, Scenario):
        return source
    if not isinstance(source, str | os.PathLike):
        rule = "a dsim.Scenario, a scenario file's path or TOML text"
        raise ScenarioError(f"scenario = {shorten(source)}: expected {rule}, not {type(source).__name__}", "scenario", shorten(source), rule)
    return Scenario.from_toml(source)
