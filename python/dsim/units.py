"""Quantities written with their units ("1.5Mbps", "1500B", "20ms") as numbers.

Python never parses a unit itself: these read a unit string with the core's parser
(``dsim._dsim.parse_quantity``, the one every scenario key goes through), so a value a
scenario accepts ("1.5Mbit/s", "1500Kbps", "187.5KB/s") means the same number here, and a
value it refuses raises the same :class:`~dsim.ScenarioError`, naming `key` (the key path
or option the text came from), the value and the rule.
"""

from __future__ import annotations

from . import _dsim


def rate_bps(text: str, key: str) -> int:
    """A rate in bit/s: "1.5Mbps" -> 1_500_000."""
    return _dsim.parse_quantity("rate", text, key)


def size_bytes(text: str, key: str) -> int:
    """A size in bytes: "1.5KB" -> 1500 (a whole number of bytes)."""
    return _dsim.parse_quantity("size", text, key)


def duration_ns(text: str, key: str) -> int:
    """A duration in nanoseconds: "20ms" -> 20_000_000."""
    return _dsim.parse_quantity("duration", text, key)
