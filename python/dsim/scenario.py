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
    # Expedited Forwarding: schedulers and their classes (docs/ef.md)
    "klass",
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
    "tfrc",
    "ABE_GREEN_DSCP",
    # TCP applications, distributions, scripted drops (docs/tcp.md)
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

#: The default ABE green codepoint, 000011 (3): RFC 2474 pool 2 (experimental/local use),
#: below 0x38 as draft-hurley-alternative-best-effort section 7 asks. Blue is DSCP 0.
ABE_GREEN_DSCP = 3


def droptail(limit: str = "100p", *, overshoot: bool | None = None) -> dict[str, Any]:
    """A drop-tail FIFO holding at most `limit` ("100p" packets or "64KB" bytes).

    overshoot: with a byte limit, admit a packet whenever the queue holds at most `limit`
        bytes, so that it may end less than one packet above it (dummynet's rule; default
        False: the packet must fit)."""
    return _drop_none({"type": "droptail", "limit": limit, "overshoot": overshoot})


def klass(
    dscp: str | int | list[str | int] | None = None,
    *,
    default: bool | None = None,
    queue: dict[str, Any] | None = None,
    weight: int | None = None,
    quantum: str | None = None,
    limit_rate: str | None = None,
    limit_burst: str | None = None,
    priority_rate: str | None = None,
    priority_burst: str | None = None,
) -> dict[str, Any]:
    """One class of a multi-queue scheduler: the codepoints it takes (`dscp`, one or a
    list; `default=True` for every codepoint no class lists) and its single `queue`
    (default: 100 packets of drop-tail). Which other settings apply depends on the
    scheduler: `weight` (packets per visit) for :func:`wrr`, `quantum` ("1500B") for
    :func:`drr`, `limit_rate` + `limit_burst` (a token-bucket limiter whose excess is
    discarded, RFC 2598 section 2.1) for :func:`priority`, and for :func:`cbq` the
    round robin's `weight` or `quantum` plus, on one class, `priority_rate` +
    `priority_burst` (priority up to that rate)."""
    if isinstance(dscp, (str, int)):
        dscp = [dscp]
    return _drop_none(
        {
            "dscp": list(dscp) if dscp is not None else None,
            "default": default,
            "weight": weight,
            "quantum": quantum,
            "limit_rate": limit_rate,
            "limit_burst": limit_burst,
            "priority_rate": priority_rate,
            "priority_burst": priority_burst,
            "queue": queue,
        }
    )


def dsd(
    buffer: str,
    d: str,
    *,
    overshoot: bool | None = None,
    g: float | None = None,
    early_drop: bool | None = None,
    drop_green_without_duplicate: bool | None = None,
    admission_residual: bool | None = None,
    green_dscp: int | str | None = None,
    ecn: bool | None = None,
    red: dict[str, Any] | None = None,
    control: dict[str, Any] | bool | None = None,
) -> dict[str, Any]:
    """ABE's Duplicate Scheduling with Deadlines (draft-hurley-alternative-best-effort, 5).

    buffer: Buff, the virtual flat best-effort queue ("75KB" or "50p").
    d: green's maximum queueing delay ("10ms").
    overshoot: a byte buffer admits a duplicate whenever it holds at most `buffer` bytes
        (dummynet's rule, as droptail(overshoot=True)); default False.
    g: green bias in [0, 1] (default 1; the initial value under a control loop).
    early_drop: the admission test for green on arrival (default True).
    drop_green_without_duplicate: drop green packets whose duplicate the virtual queue
        refuses (default True; False is the draft's text, which breaks local transparency).
    admission_residual: the admission test also counts the residual on the wire (default False).
    green_dscp: the green codepoint (default ABE_GREEN_DSCP = 3); every other one is blue.
    ecn: RED on the virtual queue marks ECN-capable packets instead of dropping (needs red).
    red: RED on the virtual queue, with the keys and defaults of a red queue:
        {"min_th", "max_th", "max_p" (0.1), "wq" (0.002), "gentle" (False),
        "mean_pkt_size" ("500B")}; thresholds in packets ("20p") or bytes ("20KB").
    control: the control loop of section 5.1: True or {} for the defaults, or a dict of
        {"period", "gain", "rtt", "weight", "target", "max_penalty"}.
    """
    if control is True:
        control = {}
    elif control is False:
        control = None
    return _drop_none(
        {
            "type": "dsd",
            "buffer": buffer,
            "overshoot": overshoot,
            "d": d,
            "g": g,
            "early_drop": early_drop,
            "drop_green_without_duplicate": drop_green_without_duplicate,
            "admission_residual": admission_residual,
            "green_dscp": green_dscp,
            "ecn": ecn,
            "red": red,
            "control": control,
        }
    )


def priority(*classes: dict[str, Any]) -> dict[str, Any]:
    """Strict priority over `classes` (built with :func:`klass`); the first is served first."""
    return {"type": "priority", "classes": list(classes)}


def wrr(*classes: dict[str, Any]) -> dict[str, Any]:
    """Weighted round robin over `classes`, each with a `weight` in packets per visit."""
    return {"type": "wrr", "classes": list(classes)}


def drr(*classes: dict[str, Any]) -> dict[str, Any]:
    """Deficit round robin over `classes`, each with a `quantum` in bytes per round."""
    return {"type": "drr", "classes": list(classes)}


def cbq(*classes: dict[str, Any], scheduler: str = "wrr") -> dict[str, Any]:
    """One class (with `priority_rate`, `priority_burst`) served first up to that rate;
    all classes, that one included, share the rest by `scheduler` ("wrr" or "drr")."""
    return {"type": "cbq", "scheduler": scheduler, "classes": list(classes)}


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


# -- Assured Forwarding: queue specs ------------------------------------------------------


def red(
    limit: str,
    min_th: str,
    max_th: str,
    *,
    max_p: float | None = None,
    wq: float | None = None,
    gentle: bool | None = None,
    ecn: bool | None = None,
    mean_pkt_size: str | None = None,
    series: str | None = None,
) -> dict[str, Any]:
    """RED (Floyd and Jacobson 1993) on a FIFO of `limit` ("100p" or "64KB").

    Thresholds in packets ("5p") or bytes ("5KB", byte mode); defaults max_p 0.1, wq 0.002,
    mean_pkt_size "500B" (sets the idle-time correction's typical transmission time);
    `series` ("10ms") records the average in the `queue_series` table."""
    return _drop_none(
        {
            "type": "red",
            "limit": limit,
            "min_th": min_th,
            "max_th": max_th,
            "max_p": max_p,
            "wq": wq,
            "gentle": gentle,
            "ecn": ecn,
            "mean_pkt_size": mean_pkt_size,
            "series": series,
        }
    )


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
    rto_restart: str | None = None,
    delayed_ack: str | bool | None = None,
    sack_blocks: int | None = None,
    ecn: bool | None = None,
    handshake: bool | None = None,
    series: str | None = None,
) -> dict[str, Any]:
    """The `tcp` table of a flow; unset keys keep their defaults: variant "sack" (or
    "reno", "newreno"), mss "1460B", window "65535B", initial_window per RFC 5681 ("2p" or
    "4380B"), counting "bytes" (or "packets"), initial_rto "1s", min_rto "200ms", max_rto
    "60s", granularity "1ms", rto_restart "on_retransmit" (loss recovery's retransmission
    of SND.UNA restarts the timer, as ns-2, Linux and FreeBSD; or "on_new_ack", RFC 6298
    (5.3) alone), delayed_ack "40ms" (or False), sack_blocks 3, ecn False, handshake
    False, series None ("10ms" to sample cwnd/ssthresh/RTT, or "change")."""
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
            "rto_restart": rto_restart,
            "delayed_ack": delayed_ack,
            "sack_blocks": sack_blocks,
            "ecn": ecn,
            "handshake": handshake,
            "series": series,
        }
    )


def precedence(min_th: str, max_th: str, max_p: float | None = None, dscp: list[str | int] | None = None) -> dict[str, Any]:
    """One drop precedence of an MRED queue: its RED curve and the codepoints it takes."""
    return _drop_none({"dscp": dscp, "min_th": min_th, "max_th": max_th, "max_p": max_p})


def mred(
    limit: str,
    precedences: list[dict[str, Any]],
    *,
    mode: str | None = None,
    wq: float | None = None,
    gentle: bool | None = None,
    ecn: bool | None = None,
    mean_pkt_size: str | None = None,
    series: str | None = None,
) -> dict[str, Any]:
    """Multi-precedence RED: `precedences` lowest drop precedence first (see
    :func:`precedence`); `mode` "coupled" (default: precedence k on the occupancy of
    0..k, RIO) or "decoupled" (each on its own). Unlisted codepoints go to the last
    precedence."""
    return _drop_none(
        {
            "type": "mred",
            "limit": limit,
            "mode": mode,
            "wq": wq,
            "gentle": gentle,
            "ecn": ecn,
            "mean_pkt_size": mean_pkt_size,
            "series": series,
            "precedence": list(precedences),
        }
    )


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
    return mred(
        limit,
        [precedence(in_[0], in_[1], in_[2], dscp=in_dscp), precedence(out[0], out[1], out[2])],
        mode="coupled",
        wq=wq,
        series=series,
    )


# -- Assured Forwarding: meters, shapers, actions ------------------------------------------


def token_bucket(rate: str, depth: str) -> dict[str, Any]:
    """Two-colour token-bucket profiler: green (IN) if the bucket holds the packet."""
    return {"type": "token_bucket", "rate": rate, "depth": depth}


def tsw(target: str, window: str, pout: str | None = None) -> dict[str, Any]:
    """Time sliding window estimator with probabilistic OUT marking; `pout` = "target"
    (seed 002, default: Pout = (avg - target) / target) or "avg_rate" (Clark and Fang,
    seed 001: Pout = (avg - target) / avg)."""
    return _drop_none({"type": "tsw", "target": target, "window": window, "pout": pout})


def tsw3(committed: str, peak: str, window: str) -> dict[str, Any]:
    """RFC 2859 time sliding window three colour marker."""
    return {"type": "tsw3", "committed": committed, "peak": peak, "window": window}


def srtcm(cir: str, cbs: str, ebs: str, mode: str | None = None) -> dict[str, Any]:
    """RFC 2697 single rate three colour marker; `mode` "blind" (default) or "aware"."""
    return _drop_none({"type": "srtcm", "cir": cir, "cbs": cbs, "ebs": ebs, "mode": mode})


def trtcm(cir: str, cbs: str, pir: str, pbs: str, mode: str | None = None) -> dict[str, Any]:
    """RFC 2698 two rate three colour marker; `mode` "blind" (default) or "aware"."""
    return _drop_none({"type": "trtcm", "cir": cir, "cbs": cbs, "pir": pir, "pbs": pbs, "mode": mode})


def tb_shaper(rate: str, depth: str, limit: str) -> dict[str, Any]:
    """Token-bucket shaper with a buffer of `limit` ("20p" or "30KB")."""
    return {"type": "token_bucket", "rate": rate, "depth": depth, "limit": limit}


def srras(cir: str, *, cir_th: str, mir_th: str, buffer: str, k: str, mir: str | None = None, green: bool = False) -> dict[str, Any]:
    """RFC 2963 single rate rate adaptive shaper (srRAS; G-srRAS with `green`, which
    needs an :func:`srtcm` meter in the same conditioner). A tail-drop FIFO of `buffer`
    bytes emptied at max(EAR, F(occupancy)): F = `cir` up to `cir_th`, linear to `mir` at
    `mir_th`, `mir` beyond (default: the line rate of the output link; required in
    :func:`dsim.replay`, which has no link); EAR the exponential average with constant
    `k` ("100ms"). Rules: cir <= mir <= line rate,
    cir_th <= mir_th <= buffer. See docs/ras.md."""
    return _drop_none(
        {"type": "g_srras" if green else "srras", "cir": cir, "mir": mir, "cir_th": cir_th, "mir_th": mir_th, "buffer": buffer, "k": k}
    )


def trras(
    cir: str, pir: str, *, cir_th: str, pir_th: str, mir_th: str, buffer: str, k: str, mir: str | None = None, green: bool = False
) -> dict[str, Any]:
    """RFC 2963 two rate rate adaptive shaper (trRAS; G-trRAS with `green`, which needs a
    :func:`trtcm` meter in the same conditioner): F = `cir` up to `cir_th`, linear to
    `pir` at `pir_th`, linear to `mir` at `mir_th`, `mir` beyond. Rules: cir <= pir <=
    mir <= line rate, cir_th <= pir_th <= mir_th <= buffer. See docs/ras.md."""
    return _drop_none(
        {
            "type": "g_trras" if green else "trras",
            "cir": cir,
            "pir": pir,
            "mir": mir,
            "cir_th": cir_th,
            "pir_th": pir_th,
            "mir_th": mir_th,
            "buffer": buffer,
            "k": k,
        }
    )


def ef_policer(rate: str | None = None, burst: str | None = None) -> dict[str, Any]:
    """RFC 2598 section 3 EF edge policer: EF beyond `rate` (default 0: no negotiated
    rate, every EF packet dropped) and `burst` is dropped and counted as `security`."""
    return _drop_none({"rate": rate, "burst": burst})


def match(
    flow: list[str] | None = None,
    src: list[str] | None = None,
    dst: list[str] | None = None,
    dscp: list[str | int] | None = None,
    direction: str | None = None,
) -> dict[str, Any]:
    """Which packets a conditioner conditions (every criterion given must hold);
    `direction` "forward" (default), "reverse" or "any"."""
    return _drop_none({"flow": flow, "src": src, "dst": dst, "dscp": dscp, "direction": direction})


def mark(dscp: str | int) -> dict[str, Any]:
    """Action: set the DS field (counted as a remark when it changes)."""
    return {"mark": dscp}


def demote(dscp: str | int) -> dict[str, Any]:
    """Action: demote to `dscp` (counted as a demotion when it changes)."""
    return {"demote": dscp}


def tfrc(size: str, *, green: float | None = None, green_dscp: int | str | None = None, ecn: bool | None = None) -> dict[str, Any]:
    """A TCP-friendly rate-adaptive source (RFC 5348 TFRC) of `size` datagrams for ABE.

    green: share of packets tagged green, in [0, 1] (default 0: all carry the flow's
        dscp); green_dscp: their codepoint (default ABE_GREEN_DSCP); ecn: ECN-capable
        packets, CE marks count as losses.
    """
    return _drop_none({"type": "tfrc", "size": size, "green": green, "green_dscp": green_dscp, "ecn": ecn})


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
        # The text it was read from and the data it gave: the text stands for the scenario
        # (error lines match the file) as long as the data is what it gave.
        self._text: str | None = None
        self._read: dict[str, Any] = {}

    # -- reading and writing -------------------------------------------------------------

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str]) -> "Scenario":
        """Reads a scenario file (a path) or TOML text. Syntax and schema are checked."""
        path = _as_path(source)
        text = _read_text(path) if path else str(source)
        sc = cls.from_dict(tomllib.loads(text)) if _is_valid_toml(text) else cls()
        sc.source = str(path) if path else None
        sc._text, sc._read = text, copy.deepcopy(sc.data)
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
        if self._text_is_current():
            return self._text
        try:
            return tomli_w.dumps(self.data)
        except TypeError:  # a value TOML cannot write (None, an object): name where it is
            path, value = _unwritable(self.data) or ("", None)
            rule = "a value is a string (with its unit), a number, a boolean, a list or a table"
            raise ScenarioError(f"{path} = {value!r}: {rule}", path, repr(value), rule) from None

    def _text_is_current(self) -> bool:
        """Whether the text read still says what the data says (`.data` may be edited
        directly, or through a table `get` returned)."""
        return self._text is not None and self.data == self._read

    def copy(self) -> "Scenario":
        sc = Scenario.from_dict(self.data)
        sc.source = self.source
        return sc

    def validate(self) -> "Scenario":
        """Checks every rule of the schema; raises ScenarioError naming key, value and rule
        (and the file and line, for a scenario read from a file and not edited since)."""
        try:
            _dsim.validate(self.to_toml())
            if not self.data.get("flow"):
                rule = "a scenario needs at least one [[flow]]: without traffic there is nothing to measure"
                raise ScenarioError(f"flow: {rule}", "flow", None, rule)
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

    def set(self, path: str, value: Any) -> "Scenario":
        """Sets the value at a key path as it reads in a file: ``set("flow[0].app.rate", "2Mbps")``."""
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
                    where = _path_text(parts[: i + 1])
                    raise ScenarioError(f"{where}: no such entry in the scenario", where, None, "no such entry") from None
        try:
            node[parts[-1]] = value
        except (TypeError, IndexError):  # a path through a value, or past the end of a list
            raise ScenarioError(f"{path}: no such entry in the scenario", path, None, "no such entry") from None
        return self

    def get(self, path: str) -> Any:
        """The value at a key path as it reads in a file: ``get("flow[0].app.rate")``."""
        parts = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_PART.finditer(path)]
        node: Any = self.data
        for i, part in enumerate(parts):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                where = _path_text(parts[: i + 1])
                raise ScenarioError(f"{where}: no such entry in the scenario", where, None, "no such entry") from None
        return node

    def hosts(self, *names: str) -> "Scenario":
        self.data["nodes"].setdefault("hosts", []).extend(names)
        return self

    def routers(self, *names: str) -> "Scenario":
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
        entry = _drop_none(
            {"from": a, "to": b, "rate": rate, "delay": delay, "queue": queue, "loss": loss, "forward": forward, "reverse": reverse}
        )
        self.data.setdefault("link", []).append(entry)
        return self

    def route(self, *path: str) -> "Scenario":
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
    ) -> "Scenario":
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
    ) -> "Scenario":
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

    def dscp(self, name: str, value: int) -> "Scenario":
        """Names a codepoint: afterwards `name` stands for `value` wherever a DSCP is written."""
        self.data.setdefault("dscp", {})[name] = value
        return self

    def capture(
        self, *, port: str | None = None, node: str | None = None, name: str | None = None, snaplen: str | None = None
    ) -> "Scenario":
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


def _unwritable(node: Any, parts: tuple[str | int, ...] = ()) -> tuple[str, Any] | None:
    """The key path and value of the first value TOML cannot write, or None."""
    if isinstance(node, dict):
        children: Any = node.items()
    elif isinstance(node, list | tuple):
        children = enumerate(node)
    elif isinstance(node, str | int | float | bool | datetime.date | datetime.time):
        return None
    else:
        return _path_text(list(parts)), node
    for key, child in children:
        found = _unwritable(child, (*parts, key))
        if found:
            return found
    return None


def _path_text(parts: list[str | int]) -> str:
    """Key path parts as they read in a file: ["flow", 0, "app"] -> flow[0].app."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _read_text(path: Path) -> str:
    """A scenario file's text: UTF-8, a leading byte-order mark dropped (TOML is UTF-8; some
    editors write the mark, which the Python and the Rust TOML readers treat differently)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        rule = "a scenario file is UTF-8 text"
        raise ScenarioError(f"{path}: the byte at offset {e.start} is not UTF-8; {rule}", "", None, rule, None, str(path)) from None


def _as_path(source: str | os.PathLike[str]) -> Path | None:
    if isinstance(source, os.PathLike):
        return Path(source)
    if isinstance(source, str) and source.strip() and "\n" not in source and "=" not in source:
        # One line without "=": not TOML text; a file's name, whatever its suffix.
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
    if not isinstance(source, str | os.PathLike):
        rule = "a dsim.Scenario, a scenario file's path or TOML text"
        raise ScenarioError(f"scenario = {source!r}: expected {rule}, not {type(source).__name__}", "scenario", repr(source), rule)
    return Scenario.from_toml(source)
