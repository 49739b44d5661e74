"""Sweeps: many points x replications, on any executor, into a resumable result store.

    res = dsim.sweep("scenario.toml",
                     axes={"flow[0].app.rate": ["1Mbps", "2Mbps"],
                           "link[1].queue.limit": {"range": [10, 50, 10], "unit": "p"}},
                     replications=5, out="results/my-sweep", executor="local")
    res.flows                      # every replication of every point, axis values as columns
    res.summary("flows")           # mean and 90 % CI per point and flow
    dsim.load("results/my-sweep")  # the same, from the store

Seeds: task (point p, replication r) runs with ``derive_seed(base_seed, [p, r])``
(:func:`dsim.derive_seed`), so a task's numbers depend on the base seed and its
coordinates only: not on the executor, the number of workers, the order in which tasks
finish, or whether the sweep was interrupted and resumed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from rich.console import Console

from . import _dsim
from .axes import Axis, base_scenario, point_scenario, prepare, scenario_defaults
from .errors import DsimError
from .executors import Executor, Task, TaskResult, make_executor
from .progress import Monitor
from .results import SERIES, SPARSE, column_list, summary_keys, summary_table
from .scenario import Scenario
from .stats import LEVEL, summarize
from .store import DONE, FAILED, PENDING, SEED_FORMULA, Store, read_task

__all__ = ["SweepInterrupted", "SweepResults", "load", "run_tasks", "scenario_defaults", "sweep"]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep; the finished tasks are in the store."""

    def __init__(self, path: Path | None, done: int, total: int) -> None:
        super().__init__(f"interrupted: {done} of {total} tasks finished" + (f" and kept in {path}" if path else ""))
        self.path = path
        self.done = done
        self.total = total


def run_tasks(
    tasks: Sequence[Task],
    executor: Executor,
    on_result: Callable[[Task, TaskResult], None],
    *,
    monitor: Monitor | None = None,
) -> None:
    """Runs `tasks` on `executor`, handing each result to `on_result` (in this thread) and
    feeding `monitor`. The one place where runs, sweeps and reproductions run tasks."""

    def done(task: Task, result: TaskResult) -> None:
        on_result(task, result)
        if monitor is not None:
            monitor.finished(task.coords, result.ok, result.events)

    hook_for = (lambda t: monitor.hook_for(t.coords)) if monitor is not None else None
    executor.run(tasks, done, hook_for)


# -- sweeps ----------------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What one call of :func:`sweep` did."""

    path: Path
    points: int
    replications: int
    ran: int = 0
    reused: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    redone: list[tuple[int, int, str]] = field(default_factory=list)
    #: Why the store's manifest was rebuilt from its task files, if it was.
    recovered: str | None = None
    refused: dict[int, str] = field(default_factory=dict)
    wall_s: float = 0.0
    executor: str = ""

    @property
    def total(self) -> int:
        return self.points * self.replications


def sweep(
    scenario: Scenario | str | os.PathLike[str],
    axes: dict[str, Any] | Sequence[Axis] | None = None,
    *,
    mode: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    executor: Any = None,
    jobs: int | None = None,
    new: bool = False,
    progress: bool = False,
    console: Console | None = None,
) -> SweepResults:
    """Runs every point of a sweep `replications` times and returns the loaded results.

    scenario: a Scenario, a scenario file or TOML text; its ``[sweep]`` table gives axes.
    axes: more axes, ``{key path: [values] or {"range": [start, stop, step], "unit": u}}``
          (replacing a file axis of the same key); may hold ``"mode"``.
    mode: "cartesian" (every combination, default) or "zip" (i-th values together).
    replications, seed: default to the scenario's.
    out: the result store folder; re-running with the same arguments resumes it. None: a
         temporary folder, deleted once the results are loaded.
    executor: "local" (default, every core), "local:N", "sequential", "dask:tcp://host:port",
              "dask:local:N", a ``distributed.Client`` or a :class:`dsim.executors.Executor`.
    new: replace a store that holds another sweep instead of refusing it.
    progress: show a live progress bar (on a terminal).

    Raises ScenarioError for a bad axis before anything runs; a point the validator refuses
    fails alone (see ``SweepResults.failures``). Ctrl-C raises :class:`SweepInterrupted`
    with the finished tasks kept.
    """
    if out is None:
        with tempfile.TemporaryDirectory(prefix="dsim-sweep-") as tmp:
            res = sweep(scenario, axes, mode=mode, replications=replications, seed=seed, out=tmp, executor=executor, jobs=jobs, progress=progress, console=console)
            res.path = None
            return res
    report = run_sweep(scenario, axes, mode=mode, replications=replications, seed=seed, out=out, executor=executor, jobs=jobs, new=new, progress=progress, console=console)
    res = load(out)
    res.report = report
    return res


def run_sweep(
    scenario: Scenario | str | os.PathLike[str],
    axes: Any = None,
    *,
    mode: str | None = None,
    replications: int | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str],
    executor: Any = None,
    jobs: int | None = None,
    new: bool = False,
    progress: bool = False,
    console: Console | None = None,
    on_start: Callable[[SweepReport, Executor], None] | None = None,
) -> SweepReport:
    """Runs a sweep into the store `out` and says what it did (see :func:`sweep`)."""
    from . import __version__

    sc, design, points, refused, seed, replications = prepare(scenario, axes, mode, replications, seed)
    base = base_scenario(sc)
    tomls = {p.index: point_scenario(base, p).to_toml() for p in points if p.index not in refused}
    manifest: dict[str, Any] = {
        "dsim_version": __version__,
        "scenario": {"name": sc.name, "source": sc.source, "hash": base.hash()},
        "base_seed": seed,
        "seed_formula": SEED_FORMULA,
        "replications": replications,
        "mode": design.mode,
        "axes": [a.to_json() for a in design.axes],
        "points": [
            {"point": p.index, "values": p.values, "hash": _dsim.scenario_hash(tomls[p.index]) if p.index in tomls else None, "refused": refused.get(p.index)}
            for p in points
        ],
    }
    tasks = [
        {"point": p.index, "replication": r, "seed": _dsim.derive_seed(seed, [p.index, r]), "hash": manifest["points"][p.index]["hash"], "refused": refused.get(p.index)}
        for p in points
        for r in range(replications)
    ]
    store = Store.open(out, manifest, tasks, scenario_text=sc.to_toml(), new=new)
    pending = [Task(tomls[t["point"]], seed, (t["point"], t["replication"])) for t in store.tasks(PENDING)]
    report = SweepReport(Path(out), len(points), replications, reused=len(store.tasks(DONE)), redone=list(store.redone), recovered=store.recovered, refused=refused)
    ex = make_executor(executor, jobs)
    owned = ex is not executor
    report.executor = ex.describe()
    if on_start is not None:
        on_start(report, ex)
    monitor = Monitor(len(pending), kind="sweep", show=progress, console=console, title="sweep", reused=report.reused)

    def on_result(task: Task, result: TaskResult) -> None:
        point, rep = task.coords
        if result.ok and result.version != __version__:
            result = TaskResult({}, f"the worker runs dsim {result.version}, this sweep {__version__}: install the same version everywhere", "VersionMismatch")
        if result.ok:
            store.write(point, rep, result.tables)
            report.ran += 1
        else:
            store.fail(point, rep, f"{result.error_kind}: {result.error}")

    try:
        with monitor:
            if pending:
                run_tasks(pending, ex, on_result, monitor=monitor)
    except KeyboardInterrupt:
        store.save(force=True)
        raise SweepInterrupted(Path(out), len(store.tasks(DONE)), report.total) from None
    finally:
        store.save(force=True)
        if owned:
            ex.close()
    report.wall_s = monitor.elapsed
    report.failed = [dict(t) for t in store.tasks(FAILED)]
    return report


# -- loading ---------------------------------------------------------------------------------


def _cell(v: Any) -> Any:
    """An axis value as a DataFrame cell: tables and arrays as compact JSON text."""
    return json.dumps(v, separators=(",", ":"), sort_keys=True) if isinstance(v, dict | list) else v


@dataclass
class SweepResults:
    """The tables of a sweep, one DataFrame per table (``flows``, ``queues``, ``drops``,
    ``run``, and any other the simulator returns), each with the columns ``point`` and one
    per axis (named by its key path) in front."""

    tables: dict[str, pd.DataFrame]
    axes: list[str]
    points: pd.DataFrame
    failures: pd.DataFrame
    manifest: dict[str, Any]
    path: Path | None = None
    report: SweepReport | None = field(default=None, repr=False)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables: dict[str, pd.DataFrame] = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(name)

    @property
    def complete(self) -> bool:
        """Every task finished."""
        return all(t["state"] == DONE for t in self.manifest["tasks"])

    def summary(self, table: str = "flows", by: list[str] | str | None = None, columns: list[str] | str | None = None, level: float = LEVEL) -> pd.DataFrame:
        """Mean and Student-t confidence interval (default 90 %) over the replications of
        each point: for each numeric column c, c (mean), c_ci (half width), c_lo, c_hi, and n."""
        if table not in self.tables and table not in SERIES:
            failed = len(self.failures)
            raise DsimError(
                f"table {table!r}: no finished task of this sweep has it "
                f"({failed} task(s) failed: see .failures; tables present: {sorted(self.tables) or 'none'})"
            )
        df = summary_table(table, self.tables)
        keys = list(dict.fromkeys(["point", *self.axes] + (summary_keys(table, df) if by is None else column_list(by))))
        runs = self.tables["run"][["point", "replication"]] if table in SPARSE and "run" in self.tables else None
        return summarize(df, keys, column_list(columns), level, runs)


def load(path: str | os.PathLike[str]) -> SweepResults:
    """Merges a sweep's result store into DataFrames (see :class:`SweepResults`); files
    that do not read back whole are left out, and their tasks count as pending (the next
    `dsim sweep` of the store redoes them)."""
    store = Store.read(path)
    m = dict(store.manifest, tasks=[dict(t) for t in store.manifest["tasks"]])
    axes = [a["key"] for a in m["axes"]]
    values = {p["point"]: p["values"] for p in m["points"]}
    parts: dict[str, list[pa.Table]] = {}
    for t in m["tasks"]:
        f = store.path / t["file"]
        try:
            tables, _ = read_task(f, store.expect(t)) if f.exists() else ({}, None)
        except ValueError:
            tables = {}
        if not tables and t["state"] == DONE:
            t["state"] = PENDING
        for name, table in tables.items():
            parts.setdefault(name, []).append(table.append_column("point", pa.array([t["point"]] * table.num_rows, pa.int64())) if table.num_columns else table)
    frames = {}
    for name, tabs in parts.items():
        filled = [t for t in tabs if t.num_columns]
        df = pa.concat_tables(filled, promote_options="default").to_pandas() if filled else pd.DataFrame()
        if not df.empty or len(df.columns):
            front = pd.DataFrame({"point": df.pop("point")})
            for key in axes:
                front[key] = [_cell(values[p][key]) for p in front["point"]]
            df = pd.concat([front, df], axis=1)
        frames[name] = df
    states = pd.DataFrame(m["tasks"])
    rows = []
    for p in m["points"]:
        mine = states[states["point"] == p["point"]]
        rows.append(
            {
                "point": p["point"],
                **{k: _cell(p["values"][k]) for k in axes},
                "hash": p["hash"],
                "done": int((mine["state"] == DONE).sum()),
                "failed": int((mine["state"] == FAILED).sum()),
                "pending": int((mine["state"] == PENDING).sum()),
            }
        )
    points = pd.DataFrame(rows)
    failed = states[states["state"] == FAILED]
    failures = pd.DataFrame(
        {
            "point": failed["point"].astype("int64"),
            **{k: [_cell(values[p][k]) for p in failed["point"]] for k in axes},
            "replication": failed["replication"].astype("int64"),
            "seed": failed["seed"].astype("uint64"),
            "error": failed["error"],
        }
    ).reset_index(drop=True)
    return SweepResults(frames, axes, points, failures, m, store.path)
