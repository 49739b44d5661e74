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
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from . import _dsim
from .errors import ScenarioError

__all__ = [
    "Scenario",
    "droptail",
    "cbr",
    "poisson",
    "ftp",
    "web",
    "tcp",
    "constant",
    "exponential",
    "pareto",
    "lognormal",
    "uniform",
    "drop",
]


def droptail(limit: str = "100p") -> dict[str, Any]:
    """A drop-tail FIFO holding at most `limit` ("100p" packets or "64KB" bytes)."""
    return {"type": "droptail", "limit": limit}


def cbr(rate: str, size: str, spacing_variation: str | float | None = None) -> dict[str, Any]:
    """Constant bit rate over UDP: `size` IP datagrams at `rate`; each gap may vary
    uniformly by +-`spacing_variation` ("10%") of the nominal spacing (RFC 2598 A.3)."""
    app: dict[str, Any] = {"type": "cbr", "rate": rate, "size": size}
    if spacing_variation is not None:
        app["spacing_variation"] = spacing_variation
    return app


def poisson(rate: str, size: str) -> dict[str, Any]:
    """Poisson arrivals of fixed-size UDP datagrams at mean `rate`."""
    return {"type": "poisson", "rate": rate, "size": size}


def ftp(bytes: str | None = None) -> dict[str, Any]:  # noqa: A002 - the schema's key
    """A bulk transfer over TCP: infinite, or `bytes` ("1MB") after which the flow records
    its completion time."""
    return _drop_none({"type": "ftp", "bytes": bytes})


def web(response: dict[str, Any], think: dict[str, Any], request: str | None = None) -> dict[str, Any]:
    """Request-response over one persistent TCP connection: a request of `request` payload
    bytes (default "300B"), a response of a size drawn from `response`, a think time drawn
    from `think` (see :func:`pareto`, :func:`lognormal`, :func:`exponential`,
    :func:`constant`), again."""
    return _drop_none({"type": "web", "request": request, "response": response, "think": think})


def tcp(
    variant: str | None = None,
    *,
    mss: str | None = None,
    window: str | None = None,
    initial_window: str | None = None,
    counting: str | None = None,
    initial_rto: str | None = None,
    min_rto: str | None = None,
    max_rto: str | None = None,
    granularity: str | None = None,
    delayed_ack: str | bool | None = None,
    sack_blocks: int | None = None,
    ecn: bool | None = None,
    handshake: bool | None = None,
    series: str | None = None,
) -> dict[str, Any]:
    """The `tcp` table of a flow; unset keys keep their defaults: variant "sack" (or
    "reno", "newreno"), mss "1460B", window "65535B", initial_window per RFC 5681 ("2p" or
    "4380B"), counting "bytes" (or "packets"), initial_rto "1s", min_rto "200ms", max_rto
    "60s", granularity "1ms", delayed_ack "40ms" (or False), sack_blocks 3, ecn False,
    handshake False, series None ("10ms" to sample cwnd/ssthresh/RTT, or "change")."""
    return _drop_none(
        {
            "variant": variant,
            "mss": mss,
            "window": window,
            "initial_window": initial_window,
            "counting": counting,
            "initial_rto": initial_rto,
            "min_rto": min_rto,
            "max_rto": max_rto,
            "granularity": granularity,
            "delayed_ack": delayed_ack,
            "sack_blocks": sack_blocks,
            "ecn": ecn,
            "handshake": handshake,
            "series": series,
        }
    )


def constant(value: str) -> dict[str, Any]:
    """Always `value` (a size "12KB" or a time "1s")."""
    return {"type": "constant", "value": value}


def exponential(mean: str, max: str | None = None) -> dict[str, Any]:  # noqa: A002 - the schema's key
    """Exponentially distributed with `mean`, optionally capped at `max`."""
    return _drop_none({"type": "exponential", "mean": mean, "max": max})


def pareto(mean: str, shape: float, max: str | None = None) -> dict[str, Any]:  # noqa: A002
    """Pareto with `mean` and `shape` (> 1), optionally capped at `max`."""
    return _drop_none({"type": "pareto", "mean": mean, "shape": shape, "max": max})


def lognormal(mean: str, sigma: float, max: str | None = None) -> dict[str, Any]:  # noqa: A002
    """Lognormal with `mean` and `sigma` (of the underlying normal), optionally capped."""
    return _drop_none({"type": "lognormal", "mean": mean, "sigma": sigma, "max": max})


def uniform(a: str, b: str) -> dict[str, Any]:
    """A flow start drawn uniformly in [a, b] from the flow's own random stream."""
    return {"uniform": [a, b]}


def drop(flow: str, *, packet: int | None = None, segment: int | None = None, occurrence: int | None = None) -> dict[str, Any]:
    """A scripted drop for a link direction's `drop` list: the flow's packet of index
    `packet`, or its TCP segment number `segment` at its `occurrence`-th crossing (1 = the
    first transmission)."""
    return _drop_none({"flow": flow, "packet": packet, "segment": segment, "occurrence": occurrence})


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
        # The text it was read from, kept until the first edit so error lines match the file.
        self._text: str | None = None

    # -- reading and writing -------------------------------------------------------------

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str]) -> "Scenario":
        """Reads a scenario file (a path) or TOML text. Syntax and schema are checked."""
        path = _as_path(source)
        text = path.read_text() if path else str(source)
        sc = cls.from_dict(tomllib.loads(text)) if _is_valid_toml(text) else cls()
        sc.source = str(path) if path else None
        sc._text = text
        sc.validate()
        return sc

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        sc = cls()
        sc.data = copy.deepcopy(data)
        return sc

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.data)

    def to_toml(self) -> str:
        """The scenario as TOML text, in the schema of scenario files."""
        if self._text is not None:
            return self._text
        return tomli_w.dumps(self.data)

    def copy(self) -> "Scenario":
        sc = Scenario.from_dict(self.data)
        sc.source = self.source
        return sc

    def validate(self) -> "Scenario":
        """Checks every rule of the schema; raises ScenarioError naming key, value and rule."""
        try:
            _dsim.validate(self.to_toml())
        except ScenarioError as e:
            raise (e.in_file(self.source) if self.source else e) from None
        return self

    def canonical_toml(self) -> str:
        return _dsim.canonical_toml(self.to_toml())

    def hash(self) -> str:
        """First 16 hex digits of the SHA-256 of the canonical TOML."""
        return _dsim.scenario_hash(self.to_toml())

    @property
    def name(self) -> str:
        return self.data.get("name") or (Path(self.source).stem if self.source else "scenario")

    # -- editing ---------------------------------------------------------------------------

    def _edited(self) -> None:
        # Once edited, the scenario is written from its data, not the original text.
        self._text = None

    def set(self, path: str, value: Any) -> "Scenario":
        """Sets the value at a key path as it reads in a file: ``set("flow[0].app.rate", "2Mbps")``."""
        self._edited()
        parts = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_PART.finditer(path)]
        if not parts:
            raise ScenarioError(f"{path!r} is not a key path", path, None, "a key path reads like flow[0].app.rate")
        node: Any = self.data
        for i, part in enumerate(parts[:-1]):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                if isinstance(part, str) and isinstance(node, dict) and not isinstance(parts[i + 1], int):
                    node = node.setdefault(part, {})
                else:
                    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts[: i + 1]).lstrip(".")
                    raise ScenarioError(f"{where}: no such entry in the scenario", where, None, "no such entry") from None
        node[parts[-1]] = value
        return self

    def get(self, path: str) -> Any:
        parts = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_PART.finditer(path)]
        node: Any = self.data
        for part in parts:
            node = node[part]
        return node

    def hosts(self, *names: str) -> "Scenario":
        self._edited()
        self.data["nodes"].setdefault("hosts", []).extend(names)
        return self

    def routers(self, *names: str) -> "Scenario":
        self._edited()
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
    ) -> "Scenario":
        """A duplex link a <-> b. `queue` and `loss` apply to both directions unless
        `forward` (a -> b) or `reverse` (b -> a) override them (keys: rate, queue, loss)."""
        self._edited()
        entry = _drop_none(
            {"from": a, "to": b, "rate": rate, "delay": delay, "queue": queue, "loss": loss, "forward": forward, "reverse": reverse}
        )
        self.data.setdefault("link", []).append(entry)
        return self

    def route(self, *path: str) -> "Scenario":
        """Traffic for the last node of `path` follows `path` from each of its nodes."""
        self._edited()
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
    ) -> "Scenario":
        """A flow from `src` to `dst` (or `count` identical ones named name.0, name.1 ...).
        `start` is a time or :func:`uniform`; `tcp` (see :func:`tcp`) configures an
        :func:`ftp` or :func:`web` flow's TCP."""
        self._edited()
        entry = _drop_none(
            {"name": name, "src": src, "dst": dst, "count": count, "dscp": dscp, "start": start, "stop": stop, "app": app, "tcp": tcp}
        )
        entry.update(extra)
        self.data.setdefault("flow", []).append(entry)
        return self

    def capture(
        self, *, port: str | None = None, node: str | None = None, name: str | None = None, snaplen: str | None = None
    ) -> "Scenario":
        """A pcap capture of a link direction (`port` = "A->B", packets as they start
        transmission) or of a `node` (what it transmits and receives), written as
        `<name>-r<replication>.pcap` into the `capture_dir` given to :func:`dsim.run`;
        `snaplen` ("80B") keeps only the headers of each packet."""
        self._edited()
        self.data.setdefault("capture", []).append(_drop_none({"port": port, "node": node, "name": name, "snaplen": snaplen}))
        return self

    def __repr__(self) -> str:
        n = self.data.get("nodes", {})
        return (
            f"Scenario({self.name!r}, {len(n.get('hosts', [])) + len(n.get('routers', []))} nodes, "
            f"{len(self.data.get('link', []))} links, {len(self.data.get('flow', []))} flows)"
        )


def _as_path(source: str | os.PathLike[str]) -> Path | None:
    if isinstance(source, os.PathLike):
        return Path(source)
    if isinstance(source, str) and "\n" not in source and source.strip().endswith(".toml"):
        return Path(source)
    return None


def _is_valid_toml(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


def load_scenario(source: "Scenario | str | os.PathLike[str]") -> Scenario:
    """A Scenario from a Scenario, a scenario file path, or TOML text."""
    if isinstance(source, Scenario):
        return source
    return Scenario.from_toml(source)
