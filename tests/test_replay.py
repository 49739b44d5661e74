"""Trace-driven mode: one mechanism over a hand-built trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dsim

FIFO = {"type": "droptail", "limit": "2p"}


def test_dd1_exact_departures() -> None:
    # 1000 B every 1.25 ms into 8 Mbit/s (1 ms per packet): D/D/1 at rho = 0.8, no waiting;
    # packet k leaves the link at 1.25 k + 1 ms.
    trace = pd.DataFrame({"time": np.arange(20) * 1.25, "size": 1000})
    out = dsim.replay(FIFO, trace, rate="8Mbps", time_unit="ms")
    assert not out["dropped"].any()
    assert np.array_equal(out["tx_start_ns"], np.arange(20) * 1_250_000)
    assert np.array_equal(out["tx_end_ns"], np.arange(20) * 1_250_000 + 1_000_000)


def test_bursty_trace_by_hand() -> None:
    # At 8 Mbit/s a 1000 B packet takes 1 ms, a 500 B one 0.5 ms. Queue of 2 packets.
    # t=0: a (1000) on the wire until 1; b (500), c (1000) queued; d (500) dropped (full).
    # t=1: b starts, ends 1.5; c starts 1.5, ends 2.5. t=1.6: e (500) queued, starts 2.5,
    # ends 3. t=10: f alone, 10 to 11.
    trace = [
        {"time": 0, "size": 1000, "flow": "a"},
        {"time": 0, "size": 500, "flow": "b"},
        {"time": 0, "size": 1000, "flow": "c"},
        {"time": 0, "size": 500, "flow": "d"},
        {"time": 1.6, "size": 500, "flow": "e"},
        {"time": 10, "size": 1000, "flow": "f"},
    ]
    out = dsim.replay(FIFO, trace, rate="8Mbps", time_unit="ms").set_index("flow")
    ms = lambda col: [None if v != v else v / 1e6 for v in out[col]]  # noqa: E731
    assert ms("tx_start_ns") == [0, 1, 1.5, None, 2.5, 10]
    assert ms("tx_end_ns") == [1, 1.5, 2.5, None, 3, 11]
    assert list(out["drop_cause"]) == ["", "", "", "overflow", "", ""]


def test_dscp_names_and_numbers_pass_through() -> None:
    trace = pd.DataFrame({"time_ns": [0, 10], "size": [100, 100], "dscp": ["EF", 10]})
    out = dsim.replay(FIFO, trace, rate="1Mbps")
    assert list(out["dscp_in"]) == ["EF", "AF11"] and list(out["dscp_out"]) == ["EF", "AF11"]


@pytest.mark.parametrize(
    "trace, path, words",
    [
        ({"time": [0, 5, 3], "size": [100, 100, 100]}, "trace[2].time", "must not decrease"),
        ({"time": [0, 5], "size": [100, -1]}, "trace[1].size", "whole number of bytes"),
        ({"time": [0, 5], "size": [100, 100], "dscp": ["EF", "AF99"]}, "trace[1].dscp", "AF classes are 1-4"),
        ({"time": [0, -5], "size": [100, 100]}, "trace[1].time", "number >= 0"),
    ],
)
def test_bad_traces_name_the_row(trace, path, words) -> None:
    with pytest.raises(dsim.ScenarioError) as ei:
        dsim.replay(FIFO, pd.DataFrame(trace), rate="1Mbps")
    assert ei.value.path == path and words in ei.value.rule


@pytest.mark.parametrize(
    "config, rate, path, words",
    [
        ({"type": "droptail", "limit": "2"}, "1Mbps", "limit", "packets (p) or bytes"),
        ({"type": "droptail", "limit": "2p", "colour": 1}, "1Mbps", "colour", "unknown field"),
        ({"type": "droptail", "limit": "2p"}, None, "rate", "needs the rate"),
        ({"type": "droptail", "limit": "2p"}, "fast", "rate", "does not start with a number"),
        ({"type": "nope"}, "1Mbps", "type", "replay knows no mechanism"),
    ],
)
def test_bad_configs_name_the_key(config, rate, path, words) -> None:
    with pytest.raises(dsim.ScenarioError) as ei:
        dsim.replay(config, [{"time": 0, "size": 100}], rate=rate)
    assert ei.value.path == path and words in ei.value.rule


def test_every_queue_discipline_is_reachable() -> None:
    # Each queue kind the scenario schema knows replays; extended as mechanisms land.
    assert set(dsim.replay_kinds()) >= {"droptail"}


def test_cli(tmp_path: Path) -> None:
    (tmp_path / "fifo.toml").write_text('type = "droptail"\nlimit = "2p"\n')
    pd.DataFrame({"time": [0, 0, 0, 0], "size": [1000] * 4}).to_csv(tmp_path / "t.csv", index=False)
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "replay", str(tmp_path / "fifo.toml"), str(tmp_path / "t.csv"), "--rate", "8Mbps", "--time-unit", "ms", "--out", str(tmp_path / "o.csv")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = pd.read_csv(tmp_path / "o.csv")
    assert list(out["dropped"]) == [False, False, False, True]
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "replay", str(tmp_path / "fifo.toml"), str(tmp_path / "t.csv")], capture_output=True, text=True)
    assert p.returncode == 2 and "rate: a queue discipline needs the rate" in p.stderr and "Traceback" not in p.stderr
