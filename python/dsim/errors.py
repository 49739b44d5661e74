"""Exceptions raised by dsim."""

from __future__ import annotations

from typing import Any


class DsimError(Exception):
    """Base class of dsim's own errors."""


class ScenarioError(DsimError, ValueError):
    """A scenario was refused before anything ran.

    Attributes:
        path: key path of the offending value, as it reads in the file (``flow[2].app.rate``).
        value: the offending value as written, or None.
        rule: the rule the value breaks.
        line: 1-based line in the scenario file, when the scenario came from a file.
        file: the scenario file, when there is one.
    """

    def __init__(
        self,
        message: str,
        path: str = "",
        value: str | None = None,
        rule: str = "",
        line: int | None = None,
        file: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.value = value
        self.rule = rule or message
        self.line = line
        self.file = file

    def without_line(self) -> ScenarioError:
        """The same error without its line: for a text written from data (a built or edited
        scenario, a dict), whose lines are nobody's."""
        if self.line is None:
            return self
        return ScenarioError(str(self).removeprefix(f"line {self.line}: "), self.path, self.value, self.rule, None, self.file)

    def in_file(self, file: str) -> ScenarioError:
        """The same error, its message prefixed with the file name (unless it names it
        already)."""
        if self.file == file:
            return self
        return ScenarioError(f"{file}: {self}", self.path, self.value, self.rule, self.line, file)


#: Characters of a value an error message shows (the core's `shorten`).
_SHOWN_CHARS = 60


def shorten(value: Any) -> str:
    """`value` as an error message shows it: a value of thousands of characters (a
    5,000-digit number, a long list) by its beginning and its length, so that the message
    stays one line. Never fails (an integer too long for `str` included)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    text = " ".join(text.split())
    if len(text) > _SHOWN_CHARS:
        return f"{text[: _SHOWN_CHARS // 2]}... ({len(text):,} characters)"
    return text


#: Replications of one run or sweep point: each is a task of its own, held in memory.
MAX_REPLICATIONS = 1_000_000


def check_integer(name: str, value: object, low: int, high: int = 2**64 - 1) -> None:
    """An integer argument (seed, replications, jobs): an int, not a bool, from `low` to
    `high` (by default 2^64 - 1: seeds are 64-bit)."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        rule = f"must be an integer from {low} to {'2^64 - 1' if high == 2**64 - 1 else f'{high:,}'}"
        raise ScenarioError(f"{name} = {shorten(value)}: {rule}", name, shorten(value), rule)


class SimulationError(DsimError, RuntimeError):
    """Something went wrong inside the simulator (a bug: please report it with the scenario)."""
