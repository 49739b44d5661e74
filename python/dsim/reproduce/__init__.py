"""`dsim reproduce`: every published experiment, run and compared with its document.

Experiments register themselves in :data:`registry` from the modules imported below; each
module holds one family (one document, or the analytic checks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from .framework import Check, Context, Experiment, Outcome, experiment, registry, run_experiment
from .report import Report

# Families register on import, in the order of the report: the analytic checks, then the
# documents by seed number (000 ABE, 001 TCP/UDP in AF, 002 Assured Service, 003 EF, 004 RAS).
from . import queueing  # noqa: E402,F401
from . import abe  # noqa: E402,F401
from . import af_tcp_udp  # noqa: E402,F401
from . import assured  # noqa: E402,F401
from . import ef  # noqa: E402,F401
from . import ras  # noqa: E402,F401


def run_experiments(experiments: list[Experiment], *, full: bool = False, out: Path = Path("results"), jobs: int | None = None, executor: Any = None, console: Console | None = None) -> Report:
    """Runs `experiments` in order, printing each outcome as it finishes, then writes
    report.md, report.json and the figures into `out`. Their runs go through `executor`
    (see dsim.executors.make_executor; default: `jobs` local threads)."""
    con = console or Console()
    report = Report(mode="full" if full else "quick")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for e in experiments:
        con.print(f"[dim]running {e.name} ({report.mode})...[/]")
        outcome = run_experiment(e, full, out, jobs, executor)
        report.outcomes.append(outcome)
        report.print_outcome(con, outcome)
        report.write(out)  # after each experiment: an interrupted run keeps what finished
    report.print_summary(con)
    md, js = report.write(out)
    con.print(f"Report: {md} and {js}")
    return report


__all__ = ["Check", "Context", "Experiment", "Outcome", "Report", "experiment", "registry", "run_experiments"]
