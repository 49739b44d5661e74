"""Limits on what dsim reads (docs/limits.md): file size, nesting depth, nodes, links,
flows, sweep points, trace size. The values and their reasons are declared once, in
dsim-core (``crates/dsim-core/src/params/limits.rs``); this module reads them and lets a user
raise them:

- ``dsim.set_limits(flows=100_000)`` in Python;
- ``DSIM_MAX_FLOWS=100000`` (and ``DSIM_MAX_<NAME>`` for every limit) in the environment;
- ``--max-flows N``, ``--max-nodes N``, ``--max-links N``, ``--max-points N`` on the
  command line (``dsim run``, ``sweep``, ``validate``).

A flag or ``set_limits`` wins over the environment, which wins over the default.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

from .errors import ScenarioError, check_integer

__all__ = ["current", "limits_json", "set_limits"]

#: What `set_limits` (or a command-line flag) set, over the environment and the defaults.
_set: dict[str, int] = {}


@functools.cache
def _core_defaults() -> dict[str, int]:
    from . import _dsim

    out: dict[str, int] = json.loads(_dsim.default_limits())
    return out


def defaults() -> dict[str, int]:
    """The core's default limits."""
    return dict(_core_defaults())


def _names() -> tuple[str, ...]:
    return tuple(defaults())


def _from_environment(name: str) -> int | None:
    var = f"DSIM_MAX_{name.upper()}"
    text = os.environ.get(var)
    if text is None or text.strip() == "":
        return None
    try:
        value = int(text.strip().replace("_", ""), 10) if len(text) <= 30 else -1
    except ValueError:
        value = -1
    if not 1 <= value < 2**64:
        rule = "a limit is a whole number from 1 to 2^64 - 1"
        raise ScenarioError(f"{var} = {text[:40]!r}: {rule}", var, text[:40], rule)
    return value


def current() -> dict[str, int]:
    """The limits in force: the defaults, raised or lowered by the environment, then by
    :func:`set_limits`."""
    out = defaults()
    for name in out:
        env = _from_environment(name)
        if env is not None:
            out[name] = env
    out.update(_set)
    return out


def set_limits(**limits: Any) -> dict[str, int]:
    """Sets limits for this process (``dsim.set_limits(flows=100_000, points=50_000)``);
    a value of None goes back to the environment's or the default. Returns the limits in
    force. The names: file_bytes, depth, nodes, links, flows, points, trace_bytes."""
    names = _names()
    for name, value in limits.items():
        if name not in names:
            rule = f"the limits are {', '.join(names)}"
            raise ScenarioError(f"set_limits({name}=...): no such limit; {rule}", name, None, rule)
        if value is not None:
            check_integer(name, value, 1)
    for name, value in limits.items():
        if value is None:
            _set.pop(name, None)
        else:
            _set[name] = value
    return current()


def limits_json() -> str:
    """The limits in force, as the core reads them."""
    return json.dumps(current())


def how_to_raise(name: str) -> str:
    """How a user raises the limit `name` (the core's wording)."""
    flag = f"--max-{name} N, " if name in ("nodes", "links", "flows", "points") else ""
    return f"raise it with {flag}DSIM_MAX_{name.upper()}=N or dsim.set_limits({name}=N)"


def exceeded(path: str, value: str, what: str, name: str) -> ScenarioError:
    """The error for `value` at `path` beyond the limit `name`, in the core's words."""
    rule = f"{what} at most {current()[name]:,} ({how_to_raise(name)})"
    return ScenarioError(f"{path} = {value}: {rule}" if path else f"{value}: {rule}", path, value, rule)


def read_bounded(path: str | os.PathLike[str], name: str, what: str) -> bytes:
    """The bytes of the file at `path`, at most the limit `name` (`file_bytes` or
    `trace_bytes`): a device or a pipe (``/dev/zero``) is refused, not read forever."""
    limit = current()[name]
    with Path(path).open("rb") as f:
        data = f.read(min(limit, sys.maxsize - 1) + 1)
    if len(data) > limit:
        e = exceeded("", f"more than {limit:,} bytes", what, name)
        raise e.in_file(os.fspath(path))
    return data
