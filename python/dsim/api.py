"""The top-level Python API: run a scenario, get DataFrames."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from . import _dsim
from .errors import MAX_REPLICATIONS, DsimError, ScenarioError, SimulationError, check_integer, shorten
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
    validate = validate and isinstance(scenario, Scenario)  # read from a file or text: validated
    sc = load_scenario(scenario)
    if record is not None and record is not False:
        sc = sc.copy()
        sc.data["record"] = record_table(record)
        validate = True
    [res] = run_batch([sc], seed=seed, replications=replications, jobs=jobs, executor=executor, progress=progress, console=console, capture_dir=capture_dir, validate=validate, title=sc.name)
    if isinstance(res, Exception):
        raise res
    return res


def run_batch(
    scenarios: Sequence[Scenario],
    *,
    seed: int | None = None,
    replications: int | Sequence[int] | None = None,
    jobs: int | None = None,
    executor: Any = None,
    progress: bool = False,
    console: Console | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
    validate: bool = True,
    title: str = "",
) -> list[Results | DsimError]:
    """Runs several scenarios at once, every replication of every one a task on the same
    executor: each scenario exactly as :func:`run` runs it alone (replication r with
    ``derive_seed(seed, [r])``, the scenario's own seed and replications unless given;
    `replications` may give one count per scenario). Returns, per scenario, its Results,
    or the error that stopped one of its replications (the others still run). The
    scenarios' [record] tables are their own; a scenario with a [sweep] table is refused."""
    from .axes import scenario_defaults
    from .sweep import run_tasks

    counts = list(replications) if isinstance(replications, Sequence) else [replications] * len(scenarios)
    if len(counts) != len(scenarios):
        raise ValueError(f"{len(counts)} replication counts for {len(scenarios)} scenarios")
    for sc in scenarios:
        if "sweep" in sc.data:
            raise ScenarioError(
                "sweep: this scenario has sweep axes; run it with `dsim sweep` (dsim.sweep), or remove its [sweep] table",
                "sweep", None, "a scenario with sweep axes runs as a sweep",
            )
    if seed is not None:
        check_integer("seed", seed, 0)
    plans = []
    for sc, asked in zip(scenarios, counts, strict=True):
        if asked is not None:
            check_integer("replications", asked, 1, MAX_REPLICATIONS)
        if validate:
            sc.validate()
        own_seed, own_reps = scenario_defaults(sc)
        count = own_reps if asked is None else asked
        check_integer("replications", count, 1, MAX_REPLICATIONS)  # the scenario's own
        plans.append((sc, own_seed if seed is None else seed, count))
    capture = None if capture_dir is None else os.fspath(capture_dir)
    # Coordinates (scenario, replication) key the results; each task's seed is the one
    # `dsim run` of its scenario alone would use.
    tasks = {(i, r): Task(sc.to_toml(), s, (r,), capture) for i, (sc, s, n) in enumerate(plans) for r in range(n)}
    index = {id(t): key for key, t in tasks.items()}
    results: dict[tuple[int, int], TaskResult] = {}
    ex = make_executor(executor, jobs)
    total_kind = "run" if len(plans) == 1 else "sweep"
    monitor = Monitor(len(tasks), kind=total_kind, show=progress, console=console, title=title or (plans[0][0].name if plans else ""))
    try:
        with monitor:
            run_tasks(list(tasks.values()), ex, lambda t, r: results.__setitem__(index[id(t)], r), monitor=monitor)
    finally:
        if ex is not executor:
            ex.close()
    out: list[Results | DsimError] = []
    for i, (sc, _, n) in enumerate(plans):
        failed = next((r for r in range(n) if not results[(i, r)].ok), None)
        if failed is not None:
            res = results[(i, failed)]
            cls = ScenarioError if res.error_kind == "ScenarioError" else SimulationError
            out.append(cls(f"replication {failed}: {res.error}"))
            continue
        names = list(results[(i, 0)].tables or {})
        tables = {name: pa.concat_tables([results[(i, r)].tables[name] for r in range(n)]) for name in names}
        out.append(Results.from_arrow(tables, scenario=sc))
    return out


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
