"""The reproduction framework: an experiment is data.

An :class:`Experiment` is

- its set-ups (:class:`Setup`): a shipped scenario file and the edits that make one run
  of it, with one run length per mode (:class:`Runs`); each set-up runs exactly as
  ``dsim run`` runs the edited file (replication r with ``derive_seed(seed, [r])``);
- a measure function: the set-ups' results -> named quantities, one value per replication;
- its published tables (:class:`Table`: source, rows and columns, unit, a band per cell
  with its stated origin), one number check per cell;
- its claims (:class:`Claim`: the document's words, where they are, a predicate and its
  margin), one check each;
- the kind of every check: a **reproduction** (a published number or a claim of the
  document), an **invariant** (what a mechanism guarantees by design, kept as a regression
  check) or a **set-up** check (an assertion about the scenario);
- its expected misses (:class:`Miss`: a class and a reason whose numbers are taken from
  the run), and the checks only the full mode can decide (``full_only``, with why).

:func:`evaluate` turns the measured quantities into verdicts. A number passes when dsim's
mean lies within its band; an ordering or a trend holds only beyond both 90 % confidence
intervals (by the claim's stated margin, if any). A verdict is *unexpected* when it differs
from the expected one (a miss that is not listed, or a listed miss that passes).
"""

from __future__ import annotations

import math
import string
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import DsimError
from ..stats import LEVEL, t_half_width

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

    from ..results import Results
    from ..scenario import Scenario

QUICK, FULL = "quick", "full"
PASS, MISS, FULL_ONLY = "pass", "miss", "full only"
REPRODUCTION, INVARIANT, SETUP = "reproduction", "invariant", "set-up"
KINDS = (REPRODUCTION, INVARIANT, SETUP)
#: The classes of an expected miss.
MODEL = "dsim model choice"
DOCUMENT = "document defect or ambiguity"
TESTBED = "testbed or simulator difference"
MISS_CLASSES = (MODEL, DOCUMENT, TESTBED)


# -- quantities ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """A quantity: its mean over replications and the half width of its 90 % Student-t
    confidence interval (0 for one replication or a published value without one)."""

    mean: float
    half: float = 0.0
    n: int = 1

    @classmethod
    def of(cls, values: npt.ArrayLike) -> Sample:
        v = np.atleast_1d(np.asarray(values, dtype=float))
        if v.size == 0:
            return cls(math.nan, math.nan, 0)
        # Equal values have no spread (not a rounding residue of one).
        half = float(t_half_width(v)) if v.size > 1 and np.ptp(v) > 0 else 0.0
        return cls(float(np.mean(v)), half, int(v.size))

    @property
    def lo(self) -> float:
        return self.mean - self.half

    @property
    def hi(self) -> float:
        return self.mean + self.half

    def __format__(self, spec: str) -> str:
        return format(self.mean, spec)

    def show(self) -> str:
        # A half width at the float's resolution is no interval (equal values, summed apart).
        if self.half > 1e-9 * max(abs(self.mean), 1.0):
            return f"{fmt(self.mean)} ±{fmt(self.half)}"
        return fmt(self.mean)


#: A quantity's values, one per replication.
Values: TypeAlias = npt.NDArray[np.floating[Any]]
#: What a measure function gives for one quantity: its values, or one value (a fact of the
#: set-up, a count over every run).
Quantity: TypeAlias = Values | float


class Measures(Mapping[str, Sample]):
    """Named quantities of one experiment (keys such as ``"loss/4/10ms"``)."""

    def __init__(self, values: Mapping[str, Sample | npt.ArrayLike]) -> None:
        self._s = {k: v if isinstance(v, Sample) else Sample.of(v) for k, v in values.items()}

    def __getitem__(self, key: str) -> Sample:
        try:
            return self._s[key]
        except KeyError:
            family = key.split("/", maxsplit=1)[0]
            near = sorted(k for k in self._s if k.split("/", maxsplit=1)[0] == family)[:6]
            raise KeyError(f"no quantity {key!r} (measured: {', '.join(near) or 'none like it'})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._s)

    def __len__(self) -> int:
        return len(self._s)


def fmt(v: object) -> str:
    """A number as the report prints it: three significant digits, thousands separated."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            return "-"
        if v == 0:
            return "0"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) >= 100:
            return f"{v:.0f}"
        return f"{v:.3g}"
    return str(v)


class _Template(string.Formatter):
    """Reasons and notes are templates whose fields are quantity names (``{loss/4/flat:.1f}``),
    ``pub.<name>`` for a published value, or a fact the measure function computed: every
    number they print comes from the run or the document's tables."""

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, str]:
        return kwargs[field_name], field_name


def render(template: str, namespace: Mapping[str, object]) -> str:
    try:
        return _Template().vformat(template, (), namespace)
    except KeyError as e:
        raise DsimError(f"template field {e.args[0]!r} is not a quantity of the run: {template[:60]!r}...") from None


# -- set-ups ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Runs:
    """The run length of one mode: replications, and the simulated duration and warm-up
    (None: the scenario file's)."""

    replications: int
    duration: str | None = None
    warmup: str | None = None


@dataclass(frozen=True)
class Setup:
    """One run of an experiment: a shipped scenario file (``python/dsim/scenarios/<file>``)
    and the edits that make it, as key paths (``"link[8].queue"``) and values, or a function
    of the scenario. A set-up is one point: the file's [sweep] table, if any, is dropped
    (its axes become edits). ``modes`` says where it runs (sensitivity set-ups: full only)."""

    name: str
    scenario: str
    edits: Mapping[str, Any] | Callable[[Scenario], Scenario] = field(default_factory=dict)
    label: str = ""
    modes: tuple[str, ...] = (QUICK, FULL)

    def build(self, runs: Runs) -> Scenario:
        sc = shipped(self.scenario)
        sc.data.pop("sweep", None)
        if callable(self.edits):
            sc = self.edits(sc)
        else:
            for key, value in self.edits.items():
                sc.set(key, value)
        if runs.duration is not None:
            sc.set("duration", runs.duration)
        if runs.warmup is not None:
            sc.set("warmup", runs.warmup)
        return sc


@cache
def _read_shipped(relpath: str) -> Scenario:
    from ..scenario import Scenario

    with resources.as_file(resources.files("dsim") / "scenarios" / relpath) as path:
        return Scenario.from_toml(Path(path))


def shipped(relpath: str) -> Scenario:
    """A copy of a scenario file shipped with dsim (python/dsim/scenarios/<relpath>)."""
    return _read_shipped(relpath).copy()


def sweep_points(relpath: str) -> list[dict[str, Any]]:
    """The points of a shipped file's [sweep] table, each as the edits that make it."""
    from ..axes import design_for

    return [p.values for p in design_for(_read_shipped(relpath)).points()]


class RunSet(Mapping[str, "Results"]):
    """The Results of an experiment's set-ups, by set-up name, in one mode."""

    def __init__(self, mode: str, results: Mapping[str, Results]) -> None:
        self.mode = mode
        self._r = dict(results)

    @property
    def full(self) -> bool:
        return self.mode == FULL

    def __getitem__(self, name: str) -> Results:
        return self._r[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._r)

    def __len__(self) -> int:
        return len(self._r)


# -- bands and tables ---------------------------------------------------------------------


@dataclass(frozen=True)
class Band:
    """How far dsim's mean may lie from a published value: the largest of `rel` x |value|,
    `abs`, and (``ci=True``) the published 90 % half width plus dsim's (the two intervals
    overlap). `origin` says where the band comes from."""

    origin: str
    rel: float = 0.0
    abs: float = 0.0
    ci: bool = False

    def tolerance(self, published: Sample, sim: Sample) -> float:
        tol = max(self.rel * abs(published.mean), self.abs)
        if self.ci:
            tol = max(tol, published.half + sim.half)
        return tol

    def describe(self, unit: str) -> str:
        parts = []
        if self.rel:
            parts.append(f"±{self.rel:.0%}")
        if self.abs:
            parts.append(f"±{fmt(self.abs)}{(' ' + unit) if unit else ''}")
        if self.ci:
            parts.append("CIs overlap")
        return " or ".join(parts) + f" ({self.origin})"


#: The row and column keys of a table: numbers (a load, a ratio) or labels ("PQ", "flat").
R = TypeVar("R")
C = TypeVar("C")
#: A published number, or a (number, 90 % half width) pair.
Published: TypeAlias = float | tuple[float, float]


@dataclass(frozen=True)
class Table(Generic[R, C]):
    """A published table: ``values[(row, column)]`` is the published number (or a
    (number, 90 % half width) pair); each cell is compared with the quantity
    ``quantity(row, column)`` within ``band`` (one Band, or a function of the cell).
    Check ids: ``<id>-<row>-<column>``."""

    id: str
    title: str
    source: str
    unit: str
    rows: tuple[R, ...]
    columns: tuple[C, ...]
    values: Mapping[tuple[R, C], Published]
    quantity: Callable[[R, C], str]
    band: Band | Callable[[R, C], Band]
    row_label: str = ""
    kind: str = REPRODUCTION
    #: A figure of the table: x = "rows" (one line per column) or "columns"; log x axis.
    plot: str | None = "rows"
    logx: bool = False
    ylabel: str = ""

    def published(self, row: R, col: C) -> Sample | None:
        v = self.values.get((row, col))
        if v is None:
            return None
        if isinstance(v, tuple):
            return Sample(float(v[0]), float(v[1]), 0)
        return Sample(float(v), 0.0, 0)

    def cells(self) -> Iterator[tuple[R, C, Sample]]:
        for r in self.rows:
            for c in self.columns:
                p = self.published(r, c)
                if p is not None:
                    yield r, c, p

    def band_of(self, row: R, col: C) -> Band:
        return self.band(row, col) if callable(self.band) else self.band

    def check_id(self, row: R, col: C) -> str:
        return f"{self.id}-{row}-{col}"


def grid(rows: Sequence[R], columns: Sequence[C], data: Mapping[R, Sequence[Published]]) -> dict[tuple[R, C], Published]:
    """A table's values from rows written as lists: ``{row: [v per column]}``."""
    return {(r, c): v for r in rows for c, v in zip(columns, data[r], strict=True)}


# -- claims and their predicates -------------------------------------------------------------


class Predicate(ABC):
    """A relation between quantities, judged with their confidence intervals. ``rule`` says
    how; calling it on Measures gives (holds, what dsim shows)."""

    @property
    @abstractmethod
    def rule(self) -> str: ...

    @abstractmethod
    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]: ...


@dataclass
class Compare(Predicate):
    """``a`` above (``sense`` = 1) or below (-1) ``factor`` x ``b`` plus `by`, beyond both
    confidence intervals: lo(a) > factor hi(b) + by (or hi(a) < factor lo(b) - by). `b`
    may be a number."""

    a: str
    b: str | float
    sense: int
    factor: float = 1.0
    by: float = 0.0

    @property
    def rule(self) -> str:
        word = "above" if self.sense > 0 else "below"
        other = f"{fmt(self.factor)} x " if self.factor != 1 else ""
        margin = f" {'+' if self.sense > 0 else '-'} {fmt(self.by)}" if self.by else ""
        b = self.b if isinstance(self.b, str) else fmt(self.b)
        return f"{self.a} {word} {other}{b}{margin}, beyond the 90 % CIs"

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        a = m[self.a]
        b = m[self.b] if isinstance(self.b, str) else Sample(float(self.b))
        holds = a.lo > self.factor * b.hi + self.by if self.sense > 0 else a.hi < self.factor * b.lo - self.by
        return bool(holds), f"{a.show()} vs {b.show()}"


def above(a: str, b: str | float, *, factor: float = 1.0, by: float = 0.0) -> Compare:
    return Compare(a, b, 1, factor, by)


def below(a: str, b: str | float, *, factor: float = 1.0, by: float = 0.0) -> Compare:
    return Compare(a, b, -1, factor, by)


@dataclass
class NotBeyond(Predicate):
    """A guarantee checked with its noise: ``a`` not below (``sense`` = -1) or not above
    (1) ``b`` by more than the two 90 % half widths together."""

    a: str
    b: str | float
    sense: int

    @property
    def rule(self) -> str:
        b = self.b if isinstance(self.b, str) else fmt(self.b)
        return f"{self.a} not {'below' if self.sense < 0 else 'above'} {b} beyond the 90 % CIs"

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        a = m[self.a]
        b = m[self.b] if isinstance(self.b, str) else Sample(float(self.b))
        holds = a.hi >= b.lo if self.sense < 0 else a.lo <= b.hi
        return bool(holds), f"{a.show()} vs {b.show()}"


def not_below(a: str, b: str | float) -> NotBeyond:
    return NotBeyond(a, b, -1)


def not_above(a: str, b: str | float) -> NotBeyond:
    return NotBeyond(a, b, 1)


@dataclass
class Trend(Predicate):
    """A falling (``sense`` = -1) or rising (1) sequence: the last value beyond the first
    (both CIs apart, and by the factor if given) and no step the other way beyond the CIs."""

    keys: Sequence[str]
    sense: int
    factor: float = 1.0

    @property
    def rule(self) -> str:
        word = "falls" if self.sense < 0 else "rises"
        extra = f" by a factor {fmt(self.factor)}" if self.factor != 1 else ""
        return f"{word}{extra} from first to last beyond the 90 % CIs, no step the other way beyond them"

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        s = [m[k] for k in self.keys]
        if self.sense < 0:
            ends = s[-1].hi * self.factor < s[0].lo
            steps = all(b.lo <= a.hi for a, b in pairwise(s))
        else:
            ends = s[-1].lo > s[0].hi * self.factor
            steps = all(b.hi >= a.lo for a, b in pairwise(s))
        return bool(ends and steps), " -> ".join(x.show() for x in s)


def falls(*keys: str, factor: float = 1.0) -> Trend:
    return Trend(keys, -1, factor)


def rises(*keys: str, factor: float = 1.0) -> Trend:
    return Trend(keys, 1, factor)


@dataclass
class Close(Predicate):
    """``a`` and ``b`` within `rel` x |b| of each other, beyond the two 90 % CIs (a stated
    margin for "the same")."""

    a: str
    b: str
    rel: float

    @property
    def rule(self) -> str:
        return f"{self.a} within {self.rel:.0%} of {self.b}, beyond the 90 % CIs"

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        a, b = m[self.a], m[self.b]
        return bool(abs(a.mean - b.mean) - a.half - b.half <= self.rel * abs(b.mean)), f"{a.show()} vs {b.show()}"


def close(a: str, b: str, rel: float) -> Close:
    return Close(a, b, rel)


@dataclass
class Near(Predicate):
    """``a`` within a band of a stated value (a number the text gives in words)."""

    a: str
    value: float
    band: Band

    @property
    def rule(self) -> str:
        return f"{self.a} within {self.band.describe('')} of {fmt(self.value)}"

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        a = m[self.a]
        return bool(abs(a.mean - self.value) <= self.band.tolerance(Sample(self.value), a)), a.show()


@dataclass
class All(Predicate):
    """Every one of `parts` (e.g. one per row of a table)."""

    parts: Sequence[Predicate]
    joined: str = ""

    @property
    def rule(self) -> str:
        return self.joined or ("all of: " + "; ".join(p.rule for p in self.parts))

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        out = [p(m) for p in self.parts]
        return all(h for h, _ in out), "; ".join(s for _, s in out)


@dataclass
class Fn(Predicate):
    """A predicate written as a function of the quantities (holds, shown), and its rule in
    words."""

    fn: Callable[[Mapping[str, Sample]], tuple[bool, str]]
    described: str = ""

    @property
    def rule(self) -> str:
        return self.described

    def __call__(self, m: Mapping[str, Sample]) -> tuple[bool, str]:
        holds, shown = self.fn(m)
        return bool(holds), shown


@dataclass(frozen=True)
class Claim:
    """A statement of the document (`text`, its words or a faithful paraphrase; `source`,
    where) and the predicate that tests it on dsim's quantities (and, where the quantities
    are cells of a published table, on the published numbers too)."""

    id: str
    text: str
    source: str
    test: Predicate
    kind: str = REPRODUCTION
    published: str = ""


@dataclass(frozen=True)
class Miss:
    """An expected miss: its class (:data:`MISS_CLASSES`) and its reason, a template whose
    numbers are quantities of the run or published values (see :func:`render`)."""

    cls: str
    reason: str

    def __post_init__(self) -> None:
        if self.cls not in MISS_CLASSES:
            raise ValueError(f"miss class {self.cls!r}: one of {', '.join(MISS_CLASSES)}")


# -- experiments --------------------------------------------------------------------------


#: A measure function: the set-ups' results -> named quantities.
Measure: TypeAlias = Callable[[RunSet], Mapping[str, Quantity]]
#: Figures of dsim's own: (name, figure) pairs.
Figures: TypeAlias = Callable[[RunSet, Measures], Sequence[tuple[str, "MplFigure"]]]
#: Tables of dsim's own (sensitivity runs ...): (title, table) pairs.
Extra: TypeAlias = Callable[[RunSet, Measures], Sequence[tuple[str, "pd.DataFrame"]]]


@dataclass
class Experiment:
    """One experiment of a document: see the module documentation."""

    name: str
    title: str
    source: str
    family: str
    setups: Callable[[str], Sequence[Setup]] | Sequence[Setup]
    measure: Measure
    quick: Runs
    full: Runs
    tables: Sequence[Table[Any, Any]] = ()
    claims: Sequence[Claim] = ()
    expected: Mapping[str, Miss] = field(default_factory=dict)
    full_only: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    figures: Sequence[Figures] = ()
    extra: Extra | None = None
    doc: str = ""

    def setups_for(self, mode: str) -> list[Setup]:
        setups = self.setups(mode) if callable(self.setups) else self.setups
        return [s for s in setups if mode in s.modes]

    def runs(self, mode: str) -> Runs:
        return self.full if mode == FULL else self.quick

    def check_ids(self) -> list[str]:
        return [t.check_id(r, c) for t in self.tables for r, c, _ in t.cells()] + [c.id for c in self.claims]


@dataclass
class Check:
    """One verdict: what was compared, how, and with what result."""

    id: str
    text: str
    kind: str
    form: str  # "number" or "claim"
    source: str
    published: str
    simulated: str
    rule: str
    verdict: str
    expected: str
    unit: str = ""
    value: Sample | None = None
    reference: Sample | None = None
    miss_class: str = ""
    reason: str = ""

    @property
    def counted(self) -> bool:
        return self.verdict != FULL_ONLY

    @property
    def unexpected(self) -> bool:
        return self.counted and self.verdict != self.expected

    def to_json(self) -> dict[str, Any]:
        def num(s: Sample | None) -> dict[str, float | int | None] | None:
            return None if s is None else {"mean": _clean(s.mean), "ci": _clean(s.half), "n": s.n}

        return {
            "id": self.id, "text": self.text, "kind": self.kind, "form": self.form, "source": self.source,
            "published": self.published, "simulated": self.simulated, "rule": self.rule, "unit": self.unit,
            "verdict": self.verdict, "expected": self.expected, "unexpected": self.unexpected,
            "value": num(self.value), "reference": num(self.reference), "miss_class": self.miss_class, "reason": self.reason,
        }  # fmt: skip


def _clean(v: float) -> float | None:
    return v if math.isfinite(v) else None


@dataclass
class Outcome:
    """Everything one experiment produced in one mode."""

    experiment: Experiment
    mode: str
    checks: list[Check] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    wall_s: float = 0.0
    #: The quantities the checks were judged on (None if the experiment failed first).
    measures: Measures | None = None

    def of_kind(self, kind: str) -> list[Check]:
        return [c for c in self.checks if c.kind == kind and c.counted]

    def misses(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == MISS]

    def unexpected(self) -> list[Check]:
        return [c for c in self.checks if c.unexpected]


def published_measures(tables: Sequence[Table[Any, Any]]) -> dict[str, Sample]:
    """The document's cells (reproduction tables) as quantities, under the names dsim's
    are measured by."""
    return {t.quantity(r, c): p for t in tables if t.kind == REPRODUCTION for r, c, p in t.cells()}


def evaluate(e: Experiment, mode: str, m: Measures, outcome: Outcome) -> None:
    """Every check of `e` on the quantities `m`, with its expected verdict and, for an
    expected miss that misses, its reason rendered from the run."""
    pub = published_measures(e.tables)
    namespace: dict[str, Sample | float] = dict(m) | {f"pub.{k}": v.mean for k, v in pub.items()} | {f"pub.ci.{k}": v.half for k, v in pub.items()}
    for t in e.tables:
        for r, c, p in t.cells():
            if mode == QUICK and t.quantity(r, c) not in m:
                # A cell whose set-up runs in full mode only.
                cid = t.check_id(r, c)
                outcome.checks.append(Check(cid, f"{t.title}: {t.row_label} {r}, {c}".replace(":  ", ": "), t.kind, "number", t.source, p.show(), "-",
                                            "", FULL_ONLY, MISS if cid in e.expected else PASS, t.unit, None, p, reason="its set-up runs in full mode only"))
                continue
            s = m[t.quantity(r, c)]
            band = t.band_of(r, c)
            ok = math.isfinite(s.mean) and abs(s.mean - p.mean) <= band.tolerance(p, s)
            name = f"{t.row_label} {r}".strip() + (f", {c}" if len(t.columns) > 1 else "")
            outcome.checks.append(
                _check(e, mode, t.check_id(r, c), f"{t.title}: {name}", t.kind, "number", t.source, p.show(), s.show(),
                       band.describe(t.unit), ok, t.unit, s, p, namespace)
            )  # fmt: skip
    for cl in e.claims:
        holds, shown = cl.test(m)
        published = cl.published
        if not published:
            try:
                pub_holds, pub_shown = cl.test(pub)
                published = f"{pub_shown} ({'holds' if pub_holds else 'does not hold'})"
            except KeyError:
                published = "stated"
        outcome.checks.append(_check(e, mode, cl.id, cl.text, cl.kind, "claim", cl.source, published, shown, cl.test.rule, holds, "", None, None, namespace))
    unknown = (set(e.expected) | set(e.full_only)) - {c.id for c in outcome.checks}
    if unknown:
        raise DsimError(f"{e.name}: expected verdicts for checks it does not have: {', '.join(sorted(unknown))}")
    outcome.notes += [render(n, namespace) for n in e.notes]


def _check(e: Experiment, mode: str, cid: str, text: str, kind: str, form: str, source: str, published: str, simulated: str,
           rule: str, ok: bool, unit: str, value: Sample | None, reference: Sample | None, namespace: Mapping[str, object]) -> Check:  # fmt: skip
    miss = e.expected.get(cid)
    expected = MISS if miss is not None else PASS
    verdict = PASS if ok else MISS
    if mode == QUICK and cid in e.full_only:
        verdict = FULL_ONLY
    check = Check(cid, text, kind, form, source, published, simulated, rule, verdict, expected, unit, value, reference)
    if miss is not None:
        check.miss_class = miss.cls
        check.reason = render(miss.reason, namespace)
    elif verdict == FULL_ONLY:
        check.reason = e.full_only[cid]
    return check


# -- the registry ---------------------------------------------------------------------------


class Registry:
    """The experiments, in the report's order, by name and family."""

    def __init__(self) -> None:
        self._experiments: dict[str, Experiment] = {}

    def add(self, *experiments: Experiment) -> None:
        for e in experiments:
            if e.name in self._experiments:
                raise ValueError(f"experiment {e.name!r} registered twice")
            if e.quick.replications < 2 or e.full.replications < 2:
                raise ValueError(f"{e.name}: a confidence interval needs two replications or more")
            self._experiments[e.name] = e

    def all(self) -> list[Experiment]:
        return list(self._experiments.values())

    def families(self) -> list[str]:
        return list(dict.fromkeys(e.family for e in self._experiments.values()))

    def select(self, names: Iterable[str]) -> list[Experiment]:
        """Experiments by name or family, in registration order; all when `names` is empty."""
        names = list(names)
        if not names:
            return self.all()
        unknown = [n for n in names if n not in self._experiments and n not in self.families()]
        if unknown:
            known = ", ".join(sorted(set(self._experiments) | set(self.families())))
            raise DsimError(f"unknown experiment or family {', '.join(map(repr, unknown))}; known: {known}")
        wanted = set(names)
        return [e for e in self.all() if e.name in wanted or e.family in wanted]


registry = Registry()

__all__ = [
    "DOCUMENT",
    "FULL",
    "FULL_ONLY",
    "INVARIANT",
    "LEVEL",
    "MISS",
    "MODEL",
    "PASS",
    "QUICK",
    "REPRODUCTION",
    "SETUP",
    "TESTBED",
    "All",
    "Band",
    "Check",
    "Claim",
    "Close",
    "Compare",
    "Experiment",
    "Extra",
    "Figures",
    "Fn",
    "Measure",
    "Measures",
    "Miss",
    "Near",
    "NotBeyond",
    "Outcome",
    "Predicate",
    "Published",
    "Quantity",
    "RunSet",
    "Runs",
    "Sample",
    "Setup",
    "Table",
    "Values",
    "above",
    "below",
    "close",
    "evaluate",
    "falls",
    "fmt",
    "grid",
    "not_above",
    "not_below",
    "registry",
    "render",
    "rises",
    "shipped",
    "sweep_points",
]
