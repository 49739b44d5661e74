"""`dsim reproduce`: every published experiment, run and compared with its document.

Each family module (one document, or the analytic checks) registers its experiments, which
are data (see :mod:`.framework`). :func:`run_experiments` runs every set-up of a family in
one batch through :func:`dsim.api.run_batch` (local cores or Dask, with progress), judges
each experiment's checks, prints them and writes report.md, report.json and report.html.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DsimError
from .framework import FULL, QUICK, Experiment, Measures, Outcome, RunSet, evaluate, registry
from .report import Report, figure_of_table, published_beside_dsim

# Families register on import, in the order of the report (not isort's): the analytic checks,
# then the documents by seed number (000 ABE, 001 TCP/UDP in AF, 002 Assured Service, 003 EF,
# 004 RAS).
# isort: off
from . import queueing  # noqa: F401
from . import abe  # noqa: F401
from . import af_tcp_udp  # noqa: F401
from . import assured  # noqa: F401
from . import ef  # noqa: F401
from . import ras  # noqa: F401
# isort: on

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.console import Console

    from ..executors import Executor
    from ..results import Results
    from ..scenario import Scenario


def run_experiments(experiments: list[Experiment], *, full: bool = False, out: Path = Path("results"), jobs: int | None = None, executor: str | Executor | None = None, console: Console | None = None) -> Report:
    """Runs `experiments` family by family, printing each outcome, then writes the report
    into `out` (after each family too: an interrupted run keeps what finished)."""
    from rich.console import Console

    from ..executors import make_executor

    con = console or Console()
    mode = FULL if full else QUICK
    report = Report(mode=mode)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ex = make_executor(executor, jobs)
    try:
        for family in dict.fromkeys(e.family for e in experiments):
            members = [e for e in experiments if e.family == family]
            t0 = time.perf_counter()
            results, errors = run_setups(members, mode, ex, con)
            report.wall_s[family] = time.perf_counter() - t0
            for e in members:
                outcome = judge(e, mode, results, errors.get(e.name), out)
                report.outcomes.append(outcome)
                report.print_outcome(con, outcome)
            report.write(out)
    finally:
        if ex is not executor:
            ex.close()
    report.print_summary(con)
    paths = report.write(out)
    con.print("Report: " + ", ".join(map(str, paths)))
    return report


def run_setups(experiments: list[Experiment], mode: str, executor: Executor, console: Console) -> tuple[dict[tuple[str, str], Results | DsimError], dict[str, str]]:
    """Runs every set-up of `experiments` in `mode` in one batch (a set-up that two
    experiments share runs once). Returns the Results (or the error) per (experiment,
    set-up) and the experiments whose set-ups could not be built."""
    from ..api import run_batch

    unique: dict[tuple[str, int], int] = {}
    scenarios: list[Scenario] = []
    counts: list[int] = []
    where: dict[tuple[str, str], int] = {}
    errors: dict[str, str] = {}
    for e in experiments:
        runs = e.runs(mode)
        try:
            for s in e.setups_for(mode):
                sc = s.build(runs).validate()
                key = (sc.to_toml(), runs.replications)
                if key not in unique:
                    unique[key] = len(scenarios)
                    scenarios.append(sc)
                    counts.append(runs.replications)
                where[(e.name, s.name)] = unique[key]
        except Exception as exc:  # noqa: BLE001 (a set-up the validator or an edit refuses: that experiment errs, the others run)
            errors[e.name] = f"set-up: {type(exc).__name__}: {exc}"
    n = sum(counts)
    family = experiments[0].family
    console.print(f"[dim]running {family} ({mode}): {len(scenarios)} set-ups, {n} runs...[/]")
    results = run_batch(scenarios, replications=counts, executor=executor, progress=True, console=console, validate=False, title=f"{family} ({mode})") if scenarios else []
    return {k: results[i] for k, i in where.items()}, errors


def judge(e: Experiment, mode: str, results: dict[tuple[str, str], Results | DsimError], error: str | None, out: Path) -> Outcome:
    """The outcome of one experiment: its checks, tables and figures, or its error."""
    outcome = Outcome(e, mode)
    t0 = time.perf_counter()
    try:
        if error:
            raise RuntimeError(error)
        runs: dict[str, Results] = {}
        for s in e.setups_for(mode):
            res = results[(e.name, s.name)]
            if isinstance(res, Exception):
                raise RuntimeError(f"set-up {s.name!r}: {res}")
            runs[s.name] = res
        runset = RunSet(mode, runs)
        m = outcome.measures = Measures(e.measure(runset))
        evaluate(e, mode, m, outcome)
        outcome.tables += [(t.title + f" ({t.unit}; {t.source})", published_beside_dsim(t, m, outcome)) for t in e.tables]
        if e.extra is not None:
            outcome.tables += list(e.extra(runset, m))
        figures = [(t.id, figure_of_table(t, m)) for t in e.tables if t.plot] + [f for fig in e.figures for f in fig(runset, m)]
        for name, fig in figures:
            outcome.figures.append((name, save_figure(fig, out, f"{e.name}-{name}")))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 (an experiment that fails, for any reason, is reported; the others go on)
        outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.notes.append("".join(traceback.format_exception(exc)[-3:]))
    outcome.wall_s = time.perf_counter() - t0
    return outcome


def save_figure(fig: Figure, out: Path, name: str) -> Path:
    import matplotlib.pyplot as plt

    folder = out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name.replace('/', '-')}.png"
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


__all__ = ["Experiment", "Outcome", "Report", "registry", "run_experiments"]
