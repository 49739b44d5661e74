"""The top-level Python API: run a scenario, get DataFrames."""

from __future__ import annotations

import os

from . import _dsim
from .errors import ScenarioError
from .results import Results
from .scenario import Scenario, load_scenario


def run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    seed: int | None = None,
    replications: int | None = None,
    jobs: int | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
) -> Results:
    """Runs a scenario (a Scenario, a scenario file path, or TOML text).

    seed: base seed (default: the scenario's `seed`); replication r runs with
          `dsim.replication_seed(seed, r)`.
    replications: number of independent replications (default: the scenario's).
    jobs: worker threads for the replications (default: all cores). The results do not
          depend on it.
    capture_dir: folder for the pcap files of the scenario's `[[capture]]` points, one per
          capture and replication (`<name>-r<replication>.pcap`); without it nothing is
          captured.
    """
    sc = load_scenario(scenario)
    for name, value, low in (("seed", seed, 0), ("replications", replications, 1), ("jobs", jobs, 0)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
            raise ScenarioError(f"{name} = {value!r}: must be an integer >= {low}", name, repr(value), f"must be an integer >= {low}")
    try:
        capture = None if capture_dir is None else os.fspath(capture_dir)
        tables = _dsim.run(sc.to_toml(), seed=seed, replications=replications, jobs=jobs or 0, capture_dir=capture)
    except ScenarioError as e:
        raise (e.in_file(sc.source) if sc.source else e) from None
    return Results.from_arrow(tables, scenario=sc)


def replication_seed(seed: int, replication: int) -> int:
    """The seed replication `replication` of a run with base seed `seed` uses."""
    return _dsim.replication_seed(seed, replication)
