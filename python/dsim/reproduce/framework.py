"""The reproduction framework: experiments, their checks, and the registry.

An experiment is a function that runs one or more scenarios and records checks through its
:class:`Context`:

- ``ctx.number(...)``: a published (or analytically known) value beside dsim's mean and
  90 % confidence interval over replications, with the band it must land in;
- ``ctx.claim(...)``: a relation the document states (an ordering, a trend, a bound), with
  whether dsim's numbers satisfy it.

Each check gets a verdict, ``pass`` or ``miss``. A miss is reported with its reason, never
tuned away by changing the setup the document states.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import DsimError
from ..scenario import Scenario
from ..stats import LEVEL, t_half_width

PASS, MISS = "pass", "miss"


@dataclass
class Check:
    """One verdict of one experiment."""

    id: str
    text: str
    kind: str  # "number" or "claim"
    published: Any
    simulated: Any
    verdict: str
    ci: tuple[float, float] | None = None
    unit: str = ""
    band: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        def clean(v: Any) -> Any:
            if isinstance(v, (np.floating, np.integer)):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                return None
            return v

        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "published": clean(self.published),
            "simulated": clean(self.simulated),
            "ci": [clean(self.ci[0]), clean(self.ci[1])] if self.ci else None,
            "unit": self.unit,
            "band": self.band,
            "verdict": self.verdict,
            "note": self.note,
        }


@dataclass
class Outcome:
    """Everything one experiment produced."""

    experiment: "Experiment"
    checks: list[Check] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    wall_s: float = 0.0

    def misses(self) -> list[Check]:
        return [c for c in self.checks if c.verdict != PASS]


@dataclass
class Experiment:
    name: str
    title: str
    source: str
    families: tuple[str, ...]
    body: Callable[["Context"], None]
    doc: str = ""


class Context:
    """What an experiment body uses to run scenarios and record checks."""

    def __init__(self, outcome: Outcome, full: bool, out: Path, jobs: int | None, executor: Any = None) -> None:
        self.outcome = outcome
        self.full = full
        self.out = out
        self.jobs = jobs
        #: Where the tasks run (see dsim.executors.make_executor); None: `jobs` local threads.
        self.executor = executor

    @property
    def mode(self) -> str:
        return "full" if self.full else "quick"

    def pick(self, quick: Any, full: Any) -> Any:
        """The quick-mode or the full-mode value of a setting."""
        return full if self.full else quick

    def scenario(self, relpath: str) -> Scenario:
        """A scenario file shipped with dsim (python/dsim/scenarios/<relpath>)."""
        ref = resources.files("dsim") / "scenarios" / relpath
        with resources.as_file(ref) as path:
            sc = Scenario.from_toml(Path(path))
        return sc

    def run(self, sc: Scenario, *, replications: int | None = None, seed: int | None = None, **settings: Any):
        """Runs `sc` with top-level `settings` (e.g. duration="20s") overridden, through the
        same executor and seed derivation as `dsim run` (replication r: derive_seed(seed, [r]))."""
        from ..api import run

        return run(self._with(sc, settings), seed=seed, replications=replications, jobs=self.jobs, executor=self.executor)

    def sweep(self, sc: Scenario, axes: dict[str, Any], *, mode: str | None = None, replications: int | None = None, seed: int | None = None, **settings: Any):
        """Runs `sc` over sweep `axes` (as :func:`dsim.sweep`: task (point p, replication r)
        with seed derive_seed(seed, [p, r])) with top-level `settings` overridden; all points
        and replications run in parallel on the executor. Returns dsim.SweepResults."""
        from ..executors import make_executor
        from ..sweep import sweep

        return sweep(self._with(sc, settings), axes, mode=mode, replications=replications, seed=seed, executor=make_executor(self.executor, self.jobs))

    @staticmethod
    def _with(sc: Scenario, settings: dict[str, Any]) -> Scenario:
        sc = sc.copy()
        for key, value in settings.items():
            sc.set(key, value)
        return sc

    # -- checks ------------------------------------------------------------------------

    def number(
        self,
        id: str,
        text: str,
        *,
        published: float,
        simulated: float | Sequence[float] | pd.Series,
        unit: str = "",
        rel_tol: float | None = None,
        abs_tol: float | None = None,
        note: str = "",
    ) -> Check:
        """A value beside the published one. `simulated` holds one value per replication;
        the verdict is pass when the mean lies within `rel_tol` (relative) or `abs_tol`
        (absolute) of the published value."""
        values = np.atleast_1d(np.asarray(simulated, dtype=float))
        mean = float(np.mean(values)) if values.size else math.nan
        half = t_half_width(values) if values.size > 1 else math.nan
        ci = (mean - half, mean + half) if half == half else None
        tol = 0.0
        bands = []
        if rel_tol is not None:
            tol = max(tol, rel_tol * abs(published))
            bands.append(f"±{rel_tol:.0%}" if rel_tol >= 0.01 else f"±{rel_tol:g} rel")
        if abs_tol is not None:
            tol = max(tol, abs_tol)
            bands.append(f"±{abs_tol:g}{(' ' + unit) if unit else ''}")
        ok = math.isfinite(mean) and abs(mean - published) <= tol
        check = Check(id, text, "number", published, mean, PASS if ok else MISS, ci, unit, " or ".join(bands), note)
        self.outcome.checks.append(check)
        return check

    def claim(self, id: str, text: str, holds: bool, *, published: Any = "", simulated: Any = "", note: str = "") -> Check:
        """A relation the document states, and whether dsim's numbers satisfy it."""
        check = Check(id, text, "claim", published, simulated, PASS if holds else MISS, note=note)
        self.outcome.checks.append(check)
        return check

    # -- material for the report ---------------------------------------------------------

    def table(self, title: str, df: pd.DataFrame) -> None:
        self.outcome.tables.append((title, df))

    def figure(self, name: str, fig: Any) -> Path:
        folder = self.out / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        # Experiment names may hold "/" (abe-t1/t2): not a folder.
        path = folder / f"{self.outcome.experiment.name.replace('/', '-')}-{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)
        self.outcome.figures.append((name, path))
        return path

    def note(self, text: str) -> None:
        self.outcome.notes.append(text)


class Registry:
    def __init__(self) -> None:
        self._experiments: dict[str, Experiment] = {}

    def add(self, e: Experiment) -> None:
        if e.name in self._experiments:
            raise ValueError(f"experiment {e.name!r} registered twice")
        self._experiments[e.name] = e

    def all(self) -> list[Experiment]:
        return list(self._experiments.values())

    def families(self) -> set[str]:
        return {f for e in self._experiments.values() for f in e.families}

    def select(self, names: Iterable[str]) -> list[Experiment]:
        """Experiments by name or family, in registration order; all when `names` is empty."""
        names = list(names)
        if not names:
            return self.all()
        unknown = [n for n in names if n not in self._experiments and n not in self.families()]
        if unknown:
            known = ", ".join(sorted(set(self._experiments) | self.families()))
            raise DsimError(f"unknown experiment or family {', '.join(map(repr, unknown))}; known: {known}")
        wanted = set(names)
        return [e for e in self.all() if e.name in wanted or wanted & set(e.families)]


registry = Registry()


def experiment(name: str, title: str, source: str, families: Sequence[str] = ()) -> Callable[[Callable[[Context], None]], Callable[[Context], None]]:
    """Registers an experiment body under `name`."""

    def wrap(body: Callable[[Context], None]) -> Callable[[Context], None]:
        registry.add(Experiment(name, title, source, tuple(families), body, (body.__doc__ or "").strip()))
        return body

    return wrap


def run_experiment(e: Experiment, full: bool, out: Path, jobs: int | None, executor: Any = None) -> Outcome:
    outcome = Outcome(e)
    ctx = Context(outcome, full, out, jobs, executor)
    t0 = time.perf_counter()
    try:
        e.body(ctx)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # an experiment that crashes is reported, the others go on
        outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.notes.append("".join(traceback.format_exception(exc)[-3:]))
    outcome.wall_s = time.perf_counter() - t0
    return outcome


__all__ = ["Check", "Context", "Experiment", "Outcome", "LEVEL", "PASS", "MISS", "experiment", "registry", "run_experiment"]
