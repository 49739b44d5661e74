"""The top-level Python API: run a scenario, get DataFrames."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from . import _dsim
from .errors import MAX_REPLICATIONS, ScenarioError, SimulationError, check_integer, shorten
from .executors import Task, TaskResult, make_executor
from .progress import Monitor
from .results import Results
from .scenario import Scenario, load_scenario

if TYPE_CHECKING:
    from rich.console import Console


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
    record: bool | str | dict[str, Any] | None = None,
    validate: bool = True,
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
    record: record time series and delay distributions for plots (``res.plot``), as a
          `[record]` table in the scenario would: True (every series, 100 intervals over
          the window), an interval ("100ms"), or the table itself
          (``{"interval": "50ms", "series": ["flows", "ports"], "ports": ["R1->R2"]}``);
          replaces the scenario's own `[record]`.
    validate: False runs a Scenario the caller has just validated (`Scenario.from_toml`
          does) without building it once more to check it (with thousands of flows that
          takes a while). A scenario read here from a file or text is validated once.

    A scenario with a [sweep] table is refused: run it with :func:`dsim.sweep`.
    """
    from .axes import scenario_defaults
    from .sweep import run_tasks

    validate = validate and isinstance(scenario, Scenario)  # read from a file or text: validated
    sc = load_scenario(scenario)
    if record is not None and record is not False:
        sc = sc.copy()
        sc.data["record"] = record_table(record)
        validate = True
    if "sweep" in sc.data:
        raise ScenarioError(
            "sweep: this scenario has sweep axes; run it with `dsim sweep` (dsim.sweep), or remove its [sweep] table",
            "sweep", None, "a scenario with sweep axes runs as a sweep",
        )
    if seed is not None:
        check_integer("seed", seed, 0)
    if replications is not None:
        check_integer("replications", replications, 1, MAX_REPLICATIONS)
    if validate:
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


def record_table(record: bool | str | dict[str, Any]) -> dict[str, Any]:
    """The `[record]` table that `record` (see :func:`run`) stands for."""
    if record is True:
        return {}
    if isinstance(record, str):
        return {"interval": record}
    if isinstance(record, dict):
        return dict(record)
    rule = 'True, an interval such as "100ms", or a [record] table (dict)'
    raise ScenarioError(f"record = {record!r}: {rule}", "record", repr(record), rule)


def replication_seed(seed: int, replication: int) -> int:
    """The seed replication `replication` of a run with base seed `seed` uses."""
    check_integer("seed", seed, 0)
    check_integer("replication", replication, 0)
    return _dsim.replication_seed(seed, replication)


def derive_seed(seed: int, coords: list[int]) -> int:
    """The seed of the task with coordinates `coords` under the base seed `seed`:
    ``[replication]`` in a run, ``[point, replication]`` in a sweep."""
    check_integer("seed", seed, 0)
    if not isinstance(coords, list | tuple):
        rule = "a list of task coordinates, such as [point, replication]"
        raise ScenarioError(f"coords = {shorten(coords)}: {rule}", "coords", shorten(coords), rule)
    for i, c in enumerate(coords):
        check_integer(f"coords[{i}]", c, 0)
    return _dsim.derive_seed(seed, list(coords))
