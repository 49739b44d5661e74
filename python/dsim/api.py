"""The top-level Python API: run a scenario, get DataFrames."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
from rich.console import Console

from . import _dsim
from .errors import MAX_REPLICATIONS, ScenarioError, SimulationError, check_integer
from .executors import Task, TaskResult, make_executor
from .progress import Monitor
from .results import Results
from .scenario import Scenario, load_scenario


def run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    seed: int | None = None,
    replications: int | None = None,
    jobs: int | None = None,
    executor: Any = None,
    progress: bool = False,
    console: Console | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
) -> Results:
    """Runs a scenario (a Scenario, a scenario file path, or TOML text).

    seed: base seed (default: the scenario's `seed`); replication r runs with
          `dsim.replication_seed(seed, r)` = `dsim.derive_seed(seed, [r])`.
    replications: number of independent replications (default: the scenario's).
    jobs: worker threads for the replications (default: all cores; 1 runs them one after
          the other in this thread). The results do not depend on it.
    executor: where the replications run instead (see :func:`dsim.executors.make_executor`:
          "sequential", "local:N", "dask:tcp://host:port", "dask:local:N", a Client...).
    capture_dir: folder for the pcap files of the scenario's `[[capture]]` points, one per
          capture and replication (`<name>-r<replication>.pcap`); without it nothing is
          captured.
    progress: show a live progress bar (simulated time, events/s, ETA) on a terminal.

    A scenario with a [sweep] table is refused: run it with :func:`dsim.sweep`.
    """
    from .sweep import run_tasks, scenario_defaults

    sc = load_scenario(scenario)
    if "sweep" in sc.data:
        raise ScenarioError(
            "sweep: this scenario has sweep axes; run it with `dsim sweep` (dsim.sweep), or remove its [sweep] table",
            "sweep", None, "a scenario with sweep axes runs as a sweep",
        )
    if seed is not None:
        check_integer("seed", seed, 0)
    if replications is not None:
        check_integer("replications", replications, 1, MAX_REPLICATIONS)
    sc.validate()
    own_seed, own_reps = scenario_defaults(sc)
    seed = own_seed if seed is None else seed
    replications = own_reps if replications is None else replications
    check_integer("replications", replications, 1, MAX_REPLICATIONS)  # the scenario's own
    toml = sc.to_toml()
    capture = None if capture_dir is None else os.fspath(capture_dir)
    tasks = [Task(toml, seed, (r,), capture) for r in range(replications)]
    results: dict[int, TaskResult] = {}
    ex = make_executor(executor, jobs)
    monitor = Monitor(len(tasks), kind="run", show=progress, console=console, title=sc.name)
    try:
        with monitor:
            run_tasks(tasks, ex, lambda t, r: results.__setitem__(t.replication, r), monitor=monitor)
    finally:
        if ex is not executor:
            ex.close()
    for r in range(replications):
        res = results[r]
        if not res.ok:
            cls = ScenarioError if res.error_kind == "ScenarioError" else SimulationError
            raise cls(f"replication {r}: {res.error}")
    names = list(results[0].tables or {})
    tables = {name: pa.concat_tables([results[r].tables[name] for r in range(replications)]) for name in names}
    return Results.from_arrow(tables, scenario=sc)


def replication_seed(seed: int, replication: int) -> int:
    """The seed replication `replication` of a run with base seed `seed` uses."""
    check_integer("seed", seed, 0)
    check_integer("replication", replication, 0)
    return _dsim.replication_seed(seed, replication)


def derive_seed(seed: int, coords: list[int]) -> int:
    """The seed of the task with coordinates `coords` under the base seed `seed`:
    ``[replication]`` in a run, ``[point, replication]`` in a sweep."""
    check_integer("seed", seed, 0)
    for i, c in enumerate(coords):
        check_integer(f"coords[{i}]", c, 0)
    return _dsim.derive_seed(seed, list(coords))
