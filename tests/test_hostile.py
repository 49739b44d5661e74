"""The hostile inputs of issues 27 and 28, one regression test each: the 45 inputs that
ended in a traceback, an out-of-memory kill or a hang (tests/hostile_cases.py, each run as
`dsim validate` or `dsim sweep` in a child process under a memory limit and a time bound),
zero-time loops, replay's timestamps, the Python API's exceptions, manifest recovery and
empty match lists."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dsim
from dsim.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_strategies import cli, cli_output
from hostile_cases import BASE, CBR, Case, cases, run_dsim

#: Each case must end within this (the acceptance bound, 2 s, holds on an idle machine:
#: `python tests/hostile_cases.py` prints the table; the test allows for a busy one).
CASE_TIMEOUT_S = 20
#: The address space a case may use: the interpreter, numpy and the extension take about
#: 1 GB of it before anything is read; 300 MB of resident memory is the acceptance bound.
CASE_MEMORY_MB = 2048


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_the_45_hostile_inputs_end_in_one_line(case: Case, tmp_path: Path) -> None:
    path = tmp_path / f"{case.id}.toml"
    path.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode())
    o = run_dsim(case.argv(path), timeout_s=CASE_TIMEOUT_S, memory_mb=CASE_MEMORY_MB, cwd=tmp_path)
    lines = o.stderr.strip().splitlines()
    assert not o.timed_out and o.signal is None, f"{case.id}: killed ({o.signal}) after {o.wall_s:.1f} s"
    assert o.status == 2 and len(lines) == 1 and "Traceback" not in o.stderr, o.stderr[-2000:]
    assert len(lines[0]) < 400, lines[0]
    assert o.peak_mb < 300, f"{case.id}: {o.peak_mb:.0f} MB"


# -- issue 28, 1: zero-time loops --------------------------------------------------------------


def _scenario(app: str, link: str = 'rate = "10Mbps"\ndelay = "1ms"') -> str:
    return BASE.replace(CBR, app).replace('rate = "10Mbps"\ndelay = "1ms"', link, 1)


@pytest.mark.parametrize(
    "app, link, path",
    [
        ('app = { type = "cbr", rate = "20000Gbps", size = "1000B" }', None, "flow[0].app.rate"),
        ('app = { type = "poisson", rate = "20000Gbps", size = "1000B" }', None, "flow[0].app.rate"),
        ('app = { type = "ftp" }', 'rate = "18446744073709551615bps"\ndelay = "0ms"', "link[0].rate"),
        (
            'app = { type = "web", response = { type = "constant", value = "10KB" }, think = { type = "constant", value = "0s" } }',
            'rate = "18446744073709551615bps"\ndelay = "0ms"',
            "link[0].rate",
        ),
    ],
)
def test_rates_whose_packet_time_rounds_to_zero_are_refused(app: str, link: str | None, path: str) -> None:
    text = _scenario(app) if link is None else _scenario(app, link)
    with pytest.raises(dsim.ScenarioError) as e:
        dsim.Scenario.from_toml(text)
    assert e.value.path == path and "0 ns" in e.value.rule and "\n" not in str(e.value)


def _long_run(tmp_path: Path, flows: int = 100) -> Path:
    """A scenario that runs for minutes: `flows` CBR sources at 1 Mbit/s for 10,000 s (100
    flows: about 2 * 10^8 events, the links passing 10 and 5 of the 100 Mbit/s offered)."""
    text = BASE.replace('duration = "10s"', 'duration = "10000s"').replace('name = "f"', f'name = "f"\ncount = {flows}')
    f = tmp_path / "long.toml"
    f.write_text(text)
    return f


def _interrupt(f: Path, tmp_path: Path) -> tuple[int, float, str]:
    """Starts `dsim run f`, sends SIGINT once the run has started, and returns its exit
    status, how long it took to stop and its standard error."""
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsim", "run", str(f), "--jobs", "1", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the estimate, printed before the run starts
    assert "estimated" in first, first
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, time.monotonic() - t0, stderr


def test_ctrl_c_stops_a_long_run(tmp_path: Path) -> None:
    status, _, stderr = _interrupt(_long_run(tmp_path), tmp_path)
    assert status == 130 and stderr.strip().endswith("interrupted") and "Traceback" not in stderr


def test_ctrl_c_stops_a_run_of_thousands_of_simultaneous_sources(tmp_path: Path) -> None:
    # 8,000 identical CBR sources: every packet time holds 8,000 events of one instant.
    status, _, stderr = _interrupt(_long_run(tmp_path, 8000), tmp_path)
    assert status == 130 and "Traceback" not in stderr


def test_the_estimate_is_printed_before_a_run_and_by_validate(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    status, out, _ = cli_output(["validate", str(f)])
    # f: 1 Mbit/s of 1500 B for 10 s, 833.3 packets; p: 400 kbit/s of 500 B, 1,000. Every
    # link carries them all (14 Mbit in 10 s; the slowest link takes 15): each packet is
    # emitted, then sent and received on 3 hops, 7 events: 12,833. (The memory estimate is
    # checked by hand in crates/dsim-core/src/sim/estimate.rs.)
    assert status == 0 and re.search(r"; one run: about 12\.8 k events and [0-9.]+ [kMG]?B$", out.strip()), out
    sc = dsim.Scenario.from_toml(f)
    assert sc.estimate["packets"] == 1833 and sc.estimate["events"] == 12833


# -- limits ------------------------------------------------------------------------------------


def test_limits_are_raised_by_flag_environment_and_set_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = BASE.replace('name = "f"', 'name = "f"\ncount = 29999')  # and p: 30,000 flows
    f = tmp_path / "many.toml"
    f.write_text(text)
    status, err = cli(["validate", str(f)])
    assert status == 2 and "flow[0].count = 29999: a scenario holds (its counts together) at most 20,000 (raise it with --max-flows N" in err
    try:
        assert cli(["validate", "--max-flows", "30000", str(f)]) == (0, "")
    finally:
        dsim.set_limits(flows=None)  # the flag sets the limit for the process it runs in
    monkeypatch.setenv("DSIM_MAX_FLOWS", "30000")
    assert cli(["validate", str(f)]) == (0, "")
    monkeypatch.setenv("DSIM_MAX_FLOWS", "lots")
    status, err = cli(["validate", str(f)])
    assert status == 2 and "DSIM_MAX_FLOWS = 'lots': a limit is a whole number" in err
    monkeypatch.delenv("DSIM_MAX_FLOWS")
    try:
        assert dsim.set_limits(flows=30_000)["flows"] == 30_000
        assert dsim.Scenario.from_toml(text).estimate["events"] > 0
        with pytest.raises(dsim.ScenarioError, match="no such limit"):
            dsim.set_limits(flowz=1)
        with pytest.raises(dsim.ScenarioError, match="flows = -1: must be an integer"):
            dsim.set_limits(flows=-1)
    finally:
        dsim.set_limits(flows=None)
    with pytest.raises(dsim.ScenarioError, match="at most 20,000"):
        dsim.Scenario.from_toml(text)


def test_a_device_is_not_read_forever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSIM_MAX_TRACE_BYTES", "1000000")
    (tmp_path / "t.csv").write_text("time_ns,size\n0,100\n")
    (tmp_path / "c.toml").write_text('type = "droptail"\n')
    for args, words in [
        (["validate", "/dev/zero"], "/dev/zero: more than 10,000,000 bytes: a scenario file holds at most 10,000,000"),
        (["replay", "/dev/zero", str(tmp_path / "t.csv")], "/dev/zero: more than 10,000,000 bytes: a mechanism's configuration file holds"),
        (["replay", str(tmp_path / "c.toml"), "/dev/zero"], "/dev/zero: more than 1,000,000 bytes: a trace holds at most 1,000,000"),
    ]:
        status, err = cli(args)
        assert status == 2 and len(err.strip().splitlines()) == 1 and words in err, err


# -- issue 28, 2 and 4: replay's timestamps and errors -----------------------------------------


DROPTAIL = {"type": "droptail", "limit": "100p"}


def _replay_csv(tmp_path: Path, csv: str, *args: str) -> tuple[int, str, str]:
    """`dsim replay` of the trace `csv` through a drop-tail queue at 1 Gbit/s: exit status,
    standard output and standard error."""
    t = tmp_path / "trace.csv"
    t.write_text(csv)
    c = tmp_path / "q.toml"
    c.write_text('type = "droptail"\nlimit = "100p"\n')
    return cli_output(["replay", str(c), str(t), "--rate", "1Gbps", *args])


@pytest.mark.parametrize(
    "csv, args, words",
    [
        ("time_ns,size\n0,100\n1e20,100\n", (), "trace[1].time_ns = '1e20': a time is a number >= 0 (in ns) up to 18446744073709551615 ns"),
        ("time_ns,size\n0,100\n18446744073709551616,100\n", (), "trace[1].time_ns = '18446744073709551616'"),
        ("time,size\n0,100\n2e10,100\n", ("--time-unit", "s"), "trace[1].time = '2e10': a time is a number >= 0 (in s)"),
        ("time_ns,size\n0,100\n-1,100\n", (), "trace[1].time_ns = '-1'"),
        ("time_ns,size\n0,100\nnan,100\n", (), "trace[1].time_ns = nan"),
        ("time_ns,size\n0,1e30\n", (), "trace[0].size = '1e30': a size is a whole number of bytes from 1 to 4294967295"),
        ("time_ns,size\n0,-5\n", (), "trace[0].size = '-5'"),
        ("time_ns,size\n0,100.5\n", (), "trace[0].size = '100.5'"),
        ("time_ns,size\n5,100\n3,100\n", (), "arrival times must not decrease"),
        ("time_ns,size\n0,100,7\n5,100\n", (), "not a CSV trace"),
        ("time_ns,size\n0,100\n5,100,7\n", (), "not a CSV trace (Expected 2 fields in line 3, saw 3)"),
        ('time_ns,size\n0,"100\n5,100\n', (), "not a CSV trace (EOF inside string starting at row 1)"),
        ("time_ns\n0\n", (), "the trace needs a `size` column"),
        ("size\n100\n", (), "the trace needs a `time` (with time_unit) or `time_ns` column"),
    ],
)
def test_replay_refuses_bad_traces_naming_row_and_value(tmp_path: Path, csv: str, args: tuple[str, ...], words: str) -> None:
    status, _, err = _replay_csv(tmp_path, csv, *args)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert words in err, err
    assert err.startswith(f"dsim: error: {tmp_path / 'trace.csv'}: "), err


def test_replay_keeps_epoch_nanoseconds_exact(tmp_path: Path) -> None:
    # Issue 28: epoch times in ns came out in 256 ns steps through a float64.
    t0 = 1_732_531_200_123_456_789
    rows = "".join(f"{t0 + k * 100},100\n" for k in range(5))
    status, stdout, err = _replay_csv(tmp_path, "time_ns,size\n" + rows)
    assert status == 0, err
    out = pd.read_csv(io.StringIO(stdout), dtype={"time_ns": str, "depart_ns": str})
    assert list(out["time_ns"]) == [str(t0 + k * 100) for k in range(5)]
    # 100 B at 1 Gbit/s take 800 ns: each packet waits for the one before it.
    assert list(out["depart_ns"]) == [str(t0 + k * 800) for k in range(5)]
    # The same through the API, from integers and from a time in seconds given as text.
    api = dsim.replay(DROPTAIL, pd.DataFrame({"time_ns": [t0, t0 + 1], "size": [100, 100]}), rate="1Gbps")
    assert list(api["depart_ns"]) == [t0, t0 + 800] and str(api["depart_ns"].dtype) == "UInt64"
    secs = dsim.replay(DROPTAIL, pd.DataFrame({"time": ["1732531200.123456789"], "size": [100]}), rate="1Gbps", time_unit="s")
    assert list(secs["time_ns"]) == [t0]


def test_a_pcap_whose_stamps_go_back_is_refused(tmp_path: Path) -> None:
    from dsim.replay import read_trace

    good = tmp_path / "a.pcap"
    _write_pcap(good, [1_000_000_000, 1_000_000_000 + 1_000_000])
    assert list(read_trace(good)["time_ns"]) == [0, 1_000_000]
    # Issue 28: a second record 1 ms before the first came out at arrival 0.
    bad = tmp_path / "b.pcap"
    _write_pcap(bad, [1_000_000_000, 1_000_000_000 - 1_000_000])
    c = tmp_path / "q.toml"
    c.write_text('type = "droptail"\n')
    assert cli(["replay", str(c), str(bad)]) == (
        2, f"dsim: error: {bad}: trace: record 1 is stamped 0.999000000 s, 1ms before record 0: arrival times must not decrease\n"
    )


def _write_pcap(path: Path, stamps_ns: list[int]) -> None:
    """A nanosecond pcap of raw IPv4 datagrams of 100 bytes, stamped `stamps_ns`."""
    import struct

    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101))
    ip = bytearray(20) + bytearray(80)
    ip[0], ip[2:4], ip[8], ip[9] = 0x45, (100).to_bytes(2, "big"), 64, 17
    for t in stamps_ns:
        out += struct.pack("<IIII", t // 10**9, t % 10**9, len(ip), len(ip)) + ip
    path.write_bytes(bytes(out))


# -- issue 28, 3: the Python API raises dsim errors --------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 0, "size": 100}], seed=-1),
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 0, "size": 100}], rate=10),
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 0, "size": 100}], time_unit="h"),
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 0, "size": 100}], series="yes"),
        lambda: dsim.replay(DROPTAIL, 5),
        lambda: dsim.replay(DROPTAIL, [5]),
        lambda: dsim.replay(5, [{"time_ns": 0, "size": 100}]),
        lambda: dsim.replay({"type": "droptail", "limit": object()}, [{"time_ns": 0, "size": 100}]),
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 10**30, "size": 100}]),
        lambda: dsim.replay(DROPTAIL, [{"time_ns": 0, "size": 100, "dscp": 10**5000}]),
        lambda: dsim.rio("10p", out=("1p", "2p", 0.1), in_=None, in_dscp=["AF11"]),
        lambda: dsim.rio("10p", out=("1p", "2p", 0.1), in_=("1p", "2p", 0.1), in_dscp="AF11"),
        lambda: dsim.Scenario.from_toml(123),
        lambda: dsim.Scenario().set(5, 1),
        lambda: dsim.Scenario().get(None),
        lambda: dsim.Scenario("1s").set("seed", 10**5000).validate(),
        lambda: dsim.run(BASE, seed=-1),
        lambda: dsim.run(BASE, replications=0),
        lambda: dsim.derive_seed(1, [-1]),
        lambda: dsim.sweep(BASE, {"seed": [10**30]}),
        lambda: dsim.sweep(BASE, {"seed": {"range": [0, 10**5000, 1]}}),
        lambda: dsim.sweep(BASE, _nested_axis(100)),
        lambda: dsim.set_limits(points="many"),
    ],
)
def test_public_functions_raise_dsim_errors(call) -> None:
    with pytest.raises(dsim.DsimError) as e:
        call()
    assert "\n" not in str(e.value) and len(str(e.value)) < 400, str(e.value)


def _nested_axis(depth: int) -> dict:
    """An axes table nested `depth` deep (an unquoted dotted key arrives nested)."""
    table: dict = {"x": [1]}
    for _ in range(depth):
        table = {"a": table}
    return table


# -- issue 28, 5: a damaged manifest is rebuilt, its task files kept ------------------------------


@pytest.mark.parametrize("damage", ["truncate", "garbage", "keys", "empty"])
def test_a_damaged_manifest_is_rebuilt_from_the_task_files(tmp_path: Path, damage: str) -> None:
    f, out = tmp_path / "s.toml", tmp_path / "s"
    f.write_text(BASE.replace('duration = "10s"', 'duration = "2s"'))
    axes = {"flow[0].app.rate": ["1Mbps", "2Mbps"]}
    first = dsim.sweep(f, axes, replications=2, out=out, executor="sequential")
    files = sorted((out / "tasks").glob("*.parquet"))
    kept = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files}
    manifest = out / "manifest.json"
    text = manifest.read_text()
    broken = {
        "truncate": text[: len(text) // 2],
        "garbage": "\x00\xff" * 10,
        "keys": json.dumps({**json.loads(text), "tasks": json.loads(text)["tasks"][:-1]}),
        "empty": "",
    }[damage]
    manifest.write_text(broken)
    with pytest.raises(dsim.DsimError, match=r"manifest\.json is damaged .*rebuild it from the task files, which are kept"):
        dsim.load(out)
    status, stdout, err = cli_output(["sweep", str(f), "--set", "flow[0].app.rate=1Mbps,2Mbps", "-r", "2", "--out", str(out), "--jobs", "1"])
    said = " ".join(stdout.split())
    assert status == 0, said + err
    assert "manifest.json was damaged" in said and "rebuilt from the task files, 4 verified and kept" in said, said
    assert "4 tasks: 4 done (0 now, 4 from the store)" in said
    for name, (ino, mtime) in kept.items():
        st = (out / "tasks" / name).stat()
        assert (st.st_ino, st.st_mtime_ns) == (ino, mtime), name
    back = dsim.load(out)
    pd.testing.assert_frame_equal(back.flows.drop(columns=["wall_s"], errors="ignore"), first.flows.drop(columns=["wall_s"], errors="ignore"))
    assert Store.read(out).manifest["tasks"][0]["state"] == "done"


# -- issue 28, 6: empty match lists -------------------------------------------------------------


def test_an_empty_match_list_is_refused() -> None:
    sc = dsim.Scenario.from_toml(BASE)
    sc.conditioner("c", at="A", match={"flow": []}, meter=dsim.token_bucket(rate="1Mbps", depth="10KB"), red="drop")
    with pytest.raises(dsim.ScenarioError) as e:
        sc.validate()
    assert e.value.path == "conditioner[0].match.flow" and e.value.rule == "flow must not be empty"


def test_integers_stay_exact_in_the_numpy_fast_path() -> None:
    times = np.array([0, 2**63 + 5], dtype=np.uint64)
    out = dsim.replay(DROPTAIL, pd.DataFrame({"time_ns": times, "size": [100, 100]}), rate="1Gbps")
    assert list(out["time_ns"]) == [0, 2**63 + 5]
