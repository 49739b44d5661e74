"""dsim.units: Python reads a unit string with the core's parser, so it means what it means
in a scenario (the same number for every spelling) and is refused with the same error."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

import dsim
from dsim.cli import _duration_s
from dsim.units import duration_ns, rate_bps, size_bytes


def test_every_spelling_of_a_quantity_is_the_same_number() -> None:
    assert {rate_bps(t, "rate") for t in ("1.5Mbps", "1.5Mbit/s", "1500Kbps", "1500kbps", "1500000bps", "187.5KB/s")} == {1_500_000}
    assert {size_bytes(t, "size") for t in ("1500B", "1.5KB", "1.5kB")} == {1500}
    assert size_bytes("64KiB", "size") == 65_536
    assert {duration_ns(t, "delay") for t in ("1.5s", "1500ms", "1500000us", "1500000µs")} == {1_500_000_000}
    assert duration_ns("2min", "duration") == 120 * 10**9


@pytest.mark.parametrize(
    "parse,text,rule",
    [
        (rate_bps, "1.5Mb", 'rate "1.5Mb" has an unknown unit "Mb"'),
        (rate_bps, "10", 'rate "10" has no unit; units are mandatory'),
        (size_bytes, "0.5B", 'size "0.5B" is not a whole number of B'),
        (duration_ns, "-5ms", "negative"),
    ],
)
def test_a_refused_quantity_names_its_key_value_and_rule(parse: Callable[[str, str], int], text: str, rule: str) -> None:
    with pytest.raises(dsim.ScenarioError, match=rule) as e:
        parse(text, "link[3].rate")
    assert e.value.path == "link[3].rate" and e.value.value == f'"{text}"' and rule in e.value.rule


def test_bench_duration_option_reads_a_duration_as_scenarios_do() -> None:
    assert _duration_s("1500ms") == 1.5
    assert _duration_s(" 2min ") == 120.0
    with pytest.raises(argparse.ArgumentTypeError, match='duration "20" has no unit'):
        _duration_s("20")
    with pytest.raises(argparse.ArgumentTypeError, match="0s must be positive"):
        _duration_s("0s")
