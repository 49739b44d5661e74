"""Hypothesis strategies for hostile input (issues 27 and 28): mutations of the shipped
scenarios, of traces (CSV and pcap) and calls of the public API with hostile values. Used by
tests/test_fuzz.py (a fixed budget in `make test`) and tests/fuzz_campaign.py (`make fuzz`).

Each strategy draws a `Case`: a category (the kind of damage, for the campaign's counts),
and what to give dsim. Running a case must end in acceptance or in one `dsim` error line.
"""

from __future__ import annotations

import contextlib
import io
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import strategies as st

from hostile_cases import BASE

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "python" / "dsim" / "scenarios").glob("*/*.toml"))

#: Numbers and texts a hostile or careless hand writes in place of a value.
HOSTILE_TOML = [
    "0", "-1", "1e308", "-1e308", "nan", "inf", "-inf", "9223372036854775807", "-9223372036854775808",
    "18446744073709551615", "9" * 5000, '""', '"0bps"', '"20000Gbps"', '"18446744073709551615bps"', '"0s"',
    '"100000h"', '"1e30s"', '"-5ms"', '"0B"', '"4294967296B"', '"1p"', '"10Mbps"', '"10"', '"10 Mbps"', '"EF"',
    '"AF11"', '"AF99"', "64", "-3", "[]", "{}", "[[[[1]]]]", "true", '"\\u0000"', "1979-05-27T07:32:00Z",
    '"' + "x" * 10_000 + '"', "[" * 200 + "]" * 200,
]

#: Hostile Python values for the API.
HOSTILE_PY: list[Any] = [
    None, True, 0, -1, 1, 2**63, 2**64, -(2**64), 10**5000, 0.0, -0.5, math.nan, math.inf, 1e308, "", " ", "x",
    "10Mbps", "0bps", "-1s", "1e30s", "20000Gbps", "EF", "nan", "\x00", "9" * 5000, b"bytes", [], [1, 2], [[[]]], {},
    {"type": "droptail"}, {"a": {"b": {}}}, (1, 2, 3), object(), Path("/dev/null"), float, print,
]


class Ran(NamedTuple):
    """How a `dsim` command ended: its exit status and standard error."""

    status: int
    stderr: str


@dataclass
class Case:
    category: str
    #: What to do: a callable that gets the case's temporary folder.
    run: Callable[[Path], Any]
    what: str = ""


# -- scenario files --------------------------------------------------------------------------


def _lines_with(text: str, needle: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines()) if needle in line and not line.lstrip().startswith("#")]


def _replace_value(text: str, key: str, value: str, nth: int) -> str:
    """`text` with the `nth` assignment to `key` (plain or inline) set to `value`."""
    import re

    pattern = re.compile(rf'(\b{re.escape(key)}\s*=\s*)("[^"\n]*"|\[[^\]\n]*\]|[^,\}}\n]+)')
    found = list(pattern.finditer(text))
    if not found:
        return text + f"\n{key} = {value}\n"
    m = found[nth % len(found)]
    return text[: m.start(2)] + value + text[m.end(2) :]


#: The keys a mutation aims at, with the kind of damage it does to them.
KEYS = [
    "rate", "delay", "duration", "warmup", "size", "limit", "min_th", "max_th", "max_p", "wq", "count", "seed",
    "replications", "dscp", "src", "dst", "from", "to", "start", "stop", "loss", "weight", "quantum", "cir", "cbs",
    "ebs", "pir", "pbs", "buffer", "d", "mss", "window", "hosts", "routers", "type", "name", "flow", "at", "interval",
]

SCENARIO_MUTATIONS = [
    "delete_line", "wrong_value", "swap_lines", "repeat_block", "truncate", "garbage_bytes", "deep_nesting",
    "huge_integer", "self_link", "unknown_node", "empty_list", "hostile_sweep", "swap_thresholds",
]


@st.composite
def scenario_case(draw: st.DrawFn) -> Case:
    path = draw(st.sampled_from(SHIPPED))
    text = path.read_text()
    kind = draw(st.sampled_from(SCENARIO_MUTATIONS))
    lines = text.splitlines()
    n = len(lines)
    i = draw(st.integers(0, n - 1))
    data: str | bytes
    if kind == "delete_line":
        data = "\n".join(lines[:i] + lines[i + 1 :])
    elif kind == "wrong_value":
        data = _replace_value(text, draw(st.sampled_from(KEYS)), draw(st.sampled_from(HOSTILE_TOML)), draw(st.integers(0, 50)))
    elif kind == "swap_lines":
        j = draw(st.integers(0, n - 1))
        lines[i], lines[j] = lines[j], lines[i]
        data = "\n".join(lines)
    elif kind == "repeat_block":  # duplicate names, links, flows
        starts = _lines_with(text, "[[") or [0]
        s = draw(st.sampled_from(starts))
        e = next((k for k in starts if k > s), n)
        data = "\n".join(lines[:e] + lines[s:e] + lines[e:])
    elif kind == "truncate":
        data = text[: draw(st.integers(0, len(text)))]
    elif kind == "garbage_bytes":
        raw = text.encode()
        at = draw(st.integers(0, len(raw)))
        data = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif kind == "deep_nesting":
        depth = draw(st.sampled_from([33, 100, 2000, 20000]))
        opener = draw(st.sampled_from(["[", "{a = "]))
        closer = "]" if opener == "[" else "}"
        data = f"x = {opener * depth}1{closer * depth}\n{text}"
    elif kind == "huge_integer":
        data = _replace_value(text, draw(st.sampled_from(KEYS)), draw(st.sampled_from(["9" * 5000, "-" + "9" * 30, "1_" * 40 + "1"])), 0)
    elif kind == "self_link":
        data = _replace_value(text, "to", '"R1"', 0).replace('from = "', 'from = "R1', 0)
        data = _replace_value(data, "from", '"R1"', 0)
    elif kind == "unknown_node":
        data = _replace_value(text, draw(st.sampled_from(["src", "dst", "from", "to", "at"])), '"NOWHERE"', draw(st.integers(0, 20)))
    elif kind == "empty_list":
        data = _replace_value(text, draw(st.sampled_from(["hosts", "routers", "dscp", "flow", "precedence", "classes"])), "[]", 0)
    elif kind == "hostile_sweep":
        body = draw(
            st.sampled_from(
                [
                    '"seed" = { range = [1, 100000, 1] }',
                    '"seed" = { range = [0, "1e9999", "1e-9999"] }',
                    '"seed" = { range = [1, 10, 0] }',
                    '"seed" = []',
                    f'"seed" = [1, {"9" * 5000}]',
                    '"flow[0].app.rate" = { range = [1, 2, "1e-999990"], unit = "Mbps" }',
                    '"flow[99].app.rate" = ["1Mbps"]',
                    '"nope" = [1, 2]',
                    'mode = "zip"\n"seed" = [1, 2]\n"duration" = ["1s"]',
                    '"seed" = { range = [1, 400, 1] }\n"duration" = { range = [1, 250, 1], unit = "s" }',
                    '"seed" = { range = [-1.7e308, 1.7e308, 5e-324] }',
                    ".".join(["a"] * 500) + " = [1]",
                ]
            )
        )
        data = f"{text}\n[sweep]\n{body}\n"
    else:  # swap_thresholds
        data = text.replace("min_th", "__t__").replace("max_th", "min_th").replace("__t__", "max_th")
    return Case(f"scenario:{kind}", _validate_file(data), f"{path.parent.name}/{path.name}")


def _validate_file(data: str | bytes) -> Callable[[Path], Any]:
    def go(tmp: Path) -> Ran:
        f = tmp / "mutant.toml"
        f.write_bytes(data if isinstance(data, bytes) else data.encode())
        return Ran(*cli(["validate", str(f)]))

    return go


# -- traces ----------------------------------------------------------------------------------

HOSTILE_CELLS = [
    "0", "1", "100", "-1", "-5", "1e20", "2e10", "1e30", "18446744073709551615", "18446744073709551616", "nan", "inf",
    "", "abc", "1.5", "100.5", "1732531200123456789", "0x10", '"1', "9" * 5000, "1,2", " 7 ",
]
TRACE_MUTATIONS = ["csv_cells", "csv_columns", "csv_extra_fields", "csv_unsorted", "csv_truncate", "csv_garbage", "pcap_damage"]


@st.composite
def trace_case(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(TRACE_MUTATIONS))
    rows = draw(st.integers(1, 12))
    if kind == "pcap_damage":
        stamps = sorted(draw(st.lists(st.integers(0, 2**32 * 10**9 - 1), min_size=rows, max_size=rows)))
        raw = bytearray(pcap_bytes(stamps))
        how = draw(st.sampled_from(["truncate", "flip", "unsort", "fraction", "header"]))
        if how == "truncate":
            raw = raw[: draw(st.integers(0, len(raw)))]
        elif how == "flip":
            at = draw(st.integers(0, len(raw) - 1))
            raw[at] ^= draw(st.integers(1, 255))
        elif how == "unsort" and rows > 1:
            raw = bytearray(pcap_bytes(list(reversed(stamps)) if stamps[0] != stamps[-1] else stamps))
        elif how == "fraction":
            raw[28:32] = struct.pack("<I", 2_000_000_000)
        else:
            raw[:4] = draw(st.binary(min_size=4, max_size=4))
        return Case(f"trace:pcap_{how}", _replay(bytes(raw), ".pcap"))
    time_col = draw(st.sampled_from(["time_ns", "time"]))
    columns = [time_col, "size", *draw(st.lists(st.sampled_from(["dscp", "flow", "color", "ecn"]), unique=True, max_size=4))]
    if kind == "csv_columns":
        columns = draw(st.lists(st.sampled_from(["time_ns", "time", "size", "dscp", "flow", "color", "ecn", "x"]), unique=True, max_size=5))
    good = {"time_ns": lambda k: str(k * 1000), "time": str, "size": lambda k: "100", "dscp": lambda k: "EF",
            "flow": lambda k: f"f{k % 2}", "color": lambda k: "green", "ecn": lambda k: "ect0", "x": lambda k: "1"}
    table = [[good[c](k) for c in columns] for k in range(rows)]
    if kind == "csv_cells":
        for _ in range(draw(st.integers(1, 3))):
            r, c = draw(st.integers(0, rows - 1)), draw(st.integers(0, max(len(columns) - 1, 0)))
            if columns:
                table[r][c] = draw(st.sampled_from([*HOSTILE_CELLS, "yellow", "purple", "ce", "7", "AF99", "63", "64"]))
    text = ",".join(columns) + "\n" + "".join(",".join(r) + "\n" for r in table)
    if kind == "csv_extra_fields":
        lines = text.splitlines()
        k = draw(st.integers(0, len(lines) - 1))
        lines[k] += ",extra"
        text = "\n".join(lines) + "\n"
    elif kind == "csv_unsorted" and rows > 1:
        lines = text.splitlines()
        text = "\n".join([lines[0], *reversed(lines[1:])]) + "\n"
    elif kind == "csv_truncate":
        text = text[: draw(st.integers(0, len(text)))]
    data: str | bytes = text
    if kind == "csv_garbage":
        raw = text.encode()
        at = draw(st.integers(0, len(raw)))
        data = raw[:at] + draw(st.binary(min_size=1, max_size=6)) + raw[at:]
    args = draw(st.sampled_from([[], ["--time-unit", "s"], ["--time-unit", "us"], ["--rate", "10Mbps"], ["--rate", "0bps"], ["--series"]]))
    return Case(f"trace:{kind}", _replay(data, ".csv", args))


def pcap_bytes(stamps_ns: list[int]) -> bytes:
    """A nanosecond pcap of raw IPv4 datagrams of 100 bytes, stamped `stamps_ns`."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101))
    ip = bytearray(100)
    ip[0], ip[2:4], ip[8], ip[9] = 0x45, (100).to_bytes(2, "big"), 64, 17
    for t in stamps_ns:
        out += struct.pack("<IIII", t // 10**9, t % 10**9, len(ip), len(ip)) + ip
    return bytes(out)


CONFIGS = [
    'type = "droptail"\nlimit = "10p"\n',
    'type = "red"\nlimit = "20p"\nmin_th = "5p"\nmax_th = "15p"\n',
    'meter = { type = "srtcm", cir = "1Mbps", cbs = "3KB", ebs = "6KB" }\nred = "drop"\n',
    'type = "dsd"\nbuffer = "10p"\nd = "5ms"\n',
]


def _replay(data: str | bytes, suffix: str, args: list[str] | None = None) -> Callable[[Path], Any]:
    def go(tmp: Path) -> Ran:
        trace = tmp / f"trace{suffix}"
        trace.write_bytes(data if isinstance(data, bytes) else data.encode())
        config = tmp / "config.toml"
        config.write_text(CONFIGS[len(data) % len(CONFIGS)])
        rate = [] if args and "--rate" in args else ["--rate", "10Mbps"]
        return Ran(*cli(["replay", str(config), str(trace), *rate, *(args or [])]))

    return go


# -- the public API --------------------------------------------------------------------------

#: A small valid scenario for the API's calls, short enough to run.
TINY = BASE.replace('duration = "10s"', 'duration = "200ms"')

hostile = st.sampled_from(HOSTILE_PY) | st.integers() | st.text(max_size=20) | st.floats()


def _builders() -> list[str]:
    import dsim.scenario

    return [name for name in dsim.scenario.__all__ if name not in ("Scenario", "ABE_GREEN_DSCP")]


@st.composite
def api_case(draw: st.DrawFn) -> Case:
    import dsim

    kind = draw(st.sampled_from(["builder", "scenario", "replay", "run", "sweep", "seeds", "limits", "load"]))
    v = [draw(hostile) for _ in range(4)]
    if kind == "builder":
        import inspect

        name = draw(st.sampled_from(_builders()))
        builder = getattr(dsim, name)
        # Hostile values for the arguments the builder takes (a wrong signature is Python's
        # TypeError at the call, not a value dsim has to judge).
        args, kwargs = [], {}
        for p in inspect.signature(builder).parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                args += [draw(hostile) for _ in range(draw(st.integers(0, 2)))]
            elif p.kind == p.VAR_KEYWORD:
                continue
            elif p.default is p.empty and p.kind != p.KEYWORD_ONLY:
                args.append(draw(hostile))
            elif p.default is p.empty or draw(st.booleans()):
                kwargs[p.name] = draw(hostile)

        def call(tmp: Path) -> Any:
            table = builder(*args, **kwargs)
            sc = dsim.Scenario.from_toml(TINY)
            install(sc, name, table)
            return sc.validate()

        return Case(f"api:{kind}", call, name)
    if kind == "scenario":
        method = draw(st.sampled_from(["init", "set", "get", "hosts", "link", "flow", "conditioner", "route", "dscp", "from_toml"]))

        def call(tmp: Path) -> Any:
            if method == "init":
                sc = dsim.Scenario(v[0], warmup=v[1], seed=v[2], replications=v[3])
            elif method == "from_toml":
                return dsim.Scenario.from_toml(v[0])
            else:
                sc = dsim.Scenario.from_toml(TINY)
                if method == "set":
                    sc.set(v[0] if isinstance(v[0], str) and v[0] else "flow[0].app.rate", v[1])
                elif method == "get":
                    return sc.get(v[0])
                elif method == "hosts":
                    sc.hosts(v[0], v[1])
                elif method == "link":
                    sc.link("A", v[0], rate=v[1], delay=v[2], queue=v[3])
                elif method == "flow":
                    sc.flow(v[0], src="A", dst="B", app=v[1], dscp=v[2], count=v[3])
                elif method == "conditioner":
                    sc.conditioner(v[0], at="A", match=v[1], meter=v[2], red=v[3])
                elif method == "route":
                    sc.route(v[0], v[1])
                else:
                    sc.dscp(v[0], v[1])
            return sc.validate()

        return Case(f"api:scenario.{method}", call)
    if kind == "replay":
        arrivals = draw(st.sampled_from([[{"time_ns": v[0], "size": v[1]}], [{"time": v[0], "size": 100, "dscp": v[1]}], v[0], [v[0]]]))

        def call(tmp: Path) -> Any:
            return dsim.replay({"type": "droptail", "limit": v[2]} if draw_bool(v) else "type = 'droptail'", arrivals, rate=v[3] if isinstance(v[3], str) else "10Mbps", seed=v[2] if isinstance(v[2], int) else 1, time_unit=v[1] if isinstance(v[1], str) else "ns")

        return Case(f"api:{kind}", call)
    if kind == "run":
        return Case(f"api:{kind}", lambda tmp: dsim.run(TINY, seed=v[0], replications=v[1], jobs=1) if not _ok_run(v) else None)
    if kind == "sweep":
        return Case(f"api:{kind}", lambda tmp: dsim.sweep(TINY, {v[0] if isinstance(v[0], str) else "seed": v[1]}, replications=1, out=tmp / "s", executor="sequential") if not isinstance(v[1], list) or not all(isinstance(x, int) and 0 <= x < 2**64 for x in v[1]) else None)
    if kind == "seeds":
        return Case(f"api:{kind}", lambda tmp: (dsim.derive_seed(v[0], v[1]), dsim.replication_seed(v[0], v[2])))
    if kind == "limits":
        return Case(f"api:{kind}", lambda tmp: _set_and_reset(v[0]))

    def load(tmp: Path) -> Any:
        d = tmp / "store"
        d.mkdir(exist_ok=True)
        (d / "manifest.json").write_bytes(v[0] if isinstance(v[0], bytes) else __import__("json").dumps(v[0], default=str).encode())
        return dsim.load(d)

    return Case(f"api:{kind}", load)


def draw_bool(v: list[Any]) -> bool:
    return bool(hash(repr(type(v[0]))) % 2)


def _ok_run(v: list[Any]) -> bool:
    """Whether `dsim.run(TINY, seed=v[0], replications=v[1])` would run (skipped: it is not
    hostile, only slow)."""
    seed_ok = v[0] is None or (isinstance(v[0], int) and not isinstance(v[0], bool) and 0 <= v[0] < 2**64)
    reps_ok = v[1] is None or (isinstance(v[1], int) and not isinstance(v[1], bool) and 1 <= v[1] <= 1_000_000)
    return seed_ok and reps_ok


def _set_and_reset(value: Any) -> Any:
    import dsim

    try:
        return dsim.set_limits(flows=value)
    finally:
        dsim.set_limits(flows=None)


def install(sc: Any, name: str, table: Any) -> None:
    """Puts the table a builder made where it belongs in TINY: a queue, an application, a
    meter, a shaper, a match, a distribution of a web source."""
    import dsim

    bucket = dsim.token_bucket(rate="1Mbps", depth="10KB")
    if name in ("cbr", "poisson", "ftp", "web", "tfrc"):
        sc.set("flow[0].app", table)
    elif name == "tcp":
        sc.set("flow[0].app", dsim.ftp()).set("flow[0].tcp", table)
    elif name in ("token_bucket", "tsw", "tsw3", "srtcm", "trtcm"):
        sc.conditioner("c", at="A", meter=table, red="drop")
    elif name in ("tb_shaper", "srras", "trras"):
        sc.conditioner("c", at="A", shaper=table)
    elif name == "ef_policer":
        sc.conditioner("c", at="A", ef_policer=table)
    elif name in ("match", "mark", "demote", "drop"):
        sc.conditioner("c", at="A", match=table, meter=bucket, red=table)
    elif name in ("constant", "exponential", "pareto", "lognormal", "uniform"):
        sc.set("flow[0].app", {"type": "web", "response": table, "think": table}).set("flow[0].start", table)
    else:  # queues, schedulers, their classes and parts
        sc.set("link[0].queue", table)


# -- running a case --------------------------------------------------------------------------


def cli(argv: list[str]) -> tuple[int, str]:
    """`dsim ARGV` in this process: its exit status and standard error."""
    status, _, err = cli_output(argv)
    return status, err


def cli_output(argv: list[str]) -> tuple[int, str, str]:
    """`dsim ARGV` in this process: its exit status, standard output and standard error."""
    from dsim.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as e:  # argparse
            status = e.code if isinstance(e.code, int) else 2
    return status, out.getvalue(), err.getvalue()


def outcome(case: Case, tmp: Path) -> str:
    """Runs `case`: "accepted" or "refused"; raises AssertionError for anything else (an
    exception that is not a dsim error, an error of more than one line, an exit status
    other than 0 and 2)."""
    import dsim

    try:
        result = case.run(tmp)
    except dsim.DsimError as e:
        message = str(e)
        assert "\n" not in message.strip() and len(message) < 1000, f"{case.category}: not one short line: {message[:3000]}"
        return "refused"
    if isinstance(result, Ran):  # a command
        status, stderr = result
        lines = stderr.strip().splitlines()
        assert status in (0, 2), f"{case.category}: exit {status}: {stderr[-3000:]}"
        if status == 2:
            assert len(lines) == 1 and lines[0].startswith("dsim: error:") and len(lines[0]) < 1000, f"{case.category}: {stderr[-3000:]}"
            return "refused"
    return "accepted"
