"""`dsim reproduce`: the framework's rules on hand-made quantities, then every family in
quick mode held to its expected verdicts.

The family tests are strict: a reproduction check that misses and is not listed among its
experiment's expected misses fails them, and so does a listed miss that passes (the
verdicts of invariants and set-up checks too). A miss's reason may print only numbers the
run computed or published values: a literal number in a reason must be a coordinate of
the experiment (a row of a table, a set-up's parameter that names a quantity) or a
reference into the document.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from dsim.errors import DsimError
from dsim.reproduce import registry, run_experiments
from dsim.reproduce.framework import (
    FULL,
    FULL_ONLY,
    INVARIANT,
    MISS,
    MODEL,
    PASS,
    QUICK,
    REPRODUCTION,
    Band,
    Claim,
    Experiment,
    Measures,
    Miss,
    Outcome,
    Runs,
    Sample,
    Table,
    above,
    below,
    close,
    evaluate,
    falls,
    not_below,
    render,
    rises,
)
from dsim.reproduce.queueing import first_arrival_share
from dsim.reproduce.report import Report
from dsim.stats import t_half_width

# -- quantities, bands and predicates -----------------------------------------------------------


def s(mean: float, half: float = 0.0) -> Sample:
    return Sample(mean, half, 5)


def test_sample_is_the_mean_and_the_student_t_half_width() -> None:
    v = [1.0, 2.0, 3.0, 4.0]
    x = Sample.of(v)
    assert (x.mean, x.n) == (2.5, 4)
    assert x.half == pytest.approx(float(t_half_width(np.array(v))))
    assert (x.lo, x.hi) == (2.5 - x.half, 2.5 + x.half)
    # One replication (or a published number): no interval.
    assert Sample.of(7.0) == Sample(7.0, 0.0, 1)
    assert math.isnan(Sample.of([]).mean)
    assert Sample.of([0.1 + 0.2] * 5).half == 0.0
    assert Sample(94.6, 8.68e-15).show() == "94.6" and Sample(94.6, 0.105).show() == "94.6 ±0.105"


def test_band_is_the_widest_of_its_parts() -> None:
    pub = Sample(100.0, 3.0, 0)
    assert Band("r", rel=0.1).tolerance(pub, s(0, 50)) == pytest.approx(10.0)
    assert Band("a", abs=12.0, rel=0.1).tolerance(pub, s(0)) == 12.0
    # CIs overlap: the published half width plus dsim's.
    assert Band("ci", ci=True).tolerance(pub, s(0, 4.0)) == 7.0
    assert Band("ci", rel=0.1, ci=True).tolerance(pub, s(0, 4.0)) == pytest.approx(10.0)


def test_an_ordering_holds_only_beyond_both_intervals() -> None:
    m = {"a": s(10, 1), "b": s(8, 1), "c": s(8, 0.99)}
    # lo(a) = 9 is not above hi(b) = 9: a tie is no ordering.
    assert above("a", "b")(m)[0] is False
    assert above("a", "c")(m)[0] is True
    assert below("c", "a")(m)[0] is True and below("b", "a")(m)[0] is False
    # A factor and a margin apply to the other side's interval.
    assert above("a", "c", factor=1.1)(m)[0] is False  # 9 > 1.1 x 8.99 fails
    assert below("c", 9.5)(m)[0] is True and below("c", 9.5, by=0.6)(m)[0] is False  # 8.99 < 8.9 fails
    assert above("a", 8.9)(m)[0] is True and above("a", 9.0)(m)[0] is False


def test_a_guarantee_fails_only_beyond_the_noise() -> None:
    m = {"a": s(10, 1), "b": s(12, 1), "c": s(12.5, 1)}
    assert not_below("a", "b")(m)[0] is True  # hi(a) = 11 = lo(b): within the noise
    assert not_below("a", "c")(m)[0] is False


def test_a_trend_needs_its_ends_apart_and_no_step_back() -> None:
    m = {"x": s(10, 1), "y": s(7, 1), "z": s(4, 1), "back": s(12.5, 1), "flat": s(9.5, 1)}
    assert falls("x", "y", "z")(m)[0] is True
    assert rises("z", "y", "x")(m)[0] is True
    assert falls("x", "flat")(m)[0] is False  # the ends overlap
    assert falls("y", "back", "z")(m)[0] is False  # a step up beyond the intervals
    # By a factor: hi(last) x factor below lo(first) = 9.
    assert falls("x", "z", factor=1.5)(m)[0] is True and falls("x", "z", factor=2.0)(m)[0] is False


def test_close_allows_its_margin_beyond_the_intervals() -> None:
    m = {"a": s(10.0, 0.5), "b": s(11.5, 0.5), "c": s(12.0, 0.1)}
    assert close("a", "b", 0.05)(m)[0] is True  # 1.5 - 1.0 <= 0.575
    assert close("a", "c", 0.05)(m)[0] is False  # 2.0 - 0.6 > 0.6


def test_reasons_print_only_what_the_run_gave() -> None:
    assert render("{loss/4/flat:.1f} % against {pub.loss/4/flat:.2f}", {"loss/4/flat": s(2.345), "pub.loss/4/flat": 0.9}) == "2.3 % against 0.90"
    with pytest.raises(DsimError, match="'nope' is not a quantity of the run"):
        render("{nope:.1f}", {})
    with pytest.raises(ValueError, match="miss class"):
        Miss("a guess", "why")


def test_measures_name_what_was_measured_when_a_key_is_wrong() -> None:
    m = Measures({"loss/4/flat": [1.0, 2.0]})
    with pytest.raises(KeyError, match="loss/4/flat"):
        m["loss/8/flat"]


# -- evaluating an experiment --------------------------------------------------------------------


def toy(expected: dict[str, Miss] | None = None, full_only: dict[str, str] | None = None) -> Experiment:
    band = Band("test", rel=0.1)
    table = Table("t", "a table", "Table 9", "ms", ("r1", "r2"), ("c",), {("r1", "c"): 10.0, ("r2", "c"): (20.0, 1.0)}, lambda r, c: f"q/{r}", band)
    claims = [Claim("grows", "r2 above r1", "section 9", above("q/r2", "q/r1")), Claim("cap", "r1 below 100", "section 9", below("q/r1", 100.0), kind=INVARIANT)]
    return Experiment("toy", "a toy", "nowhere", "toys", [], lambda runs: {}, Runs(2), Runs(3), [table], claims, expected or {}, full_only or {})


def judge(e: Experiment, values: dict[str, list[float]], mode: str = QUICK) -> dict[str, object]:
    out = Outcome(e, mode)
    evaluate(e, mode, Measures(values), out)
    return {c.id: c for c in out.checks}


def test_numbers_pass_within_their_band_and_claims_by_their_predicate() -> None:
    checks = judge(toy(), {"q/r1": [10.5, 10.7], "q/r2": [25.0, 25.0]})
    assert {k: (c.verdict, c.kind) for k, c in checks.items()} == {
        "t-r1-c": (PASS, REPRODUCTION), "t-r2-c": (MISS, REPRODUCTION), "grows": (PASS, REPRODUCTION), "cap": (PASS, INVARIANT),
    }  # fmt: skip
    assert checks["t-r2-c"].unexpected and not checks["t-r1-c"].unexpected
    # The claim is judged on the published cells too.
    assert checks["grows"].published.endswith("(holds)")


def test_a_listed_miss_that_passes_is_unexpected_and_a_missing_one_gets_its_reason() -> None:
    e = toy({"t-r1-c": Miss(MODEL, "dsim's r1 is {q/r1:.1f} ms against {pub.q/r1:.0f}"), "t-r2-c": Miss(MODEL, "r2 {q/r2:.0f}")})
    checks = judge(e, {"q/r1": [10.0, 10.0], "q/r2": [30.0, 30.0]})
    assert checks["t-r1-c"].verdict == PASS and checks["t-r1-c"].unexpected
    assert checks["t-r2-c"].verdict == MISS and not checks["t-r2-c"].unexpected
    assert (checks["t-r2-c"].miss_class, checks["t-r2-c"].reason) == (MODEL, "r2 30")


def test_full_only_checks_are_not_counted_in_quick_mode() -> None:
    e = toy(full_only={"grows": "ten replications decide it"})
    quick = judge(e, {"q/r1": [10.0, 10.0], "q/r2": [5.0, 5.0]})
    assert quick["grows"].verdict == FULL_ONLY and not quick["grows"].unexpected and quick["grows"].reason
    full = judge(e, {"q/r1": [10.0, 10.0], "q/r2": [5.0, 5.0]}, FULL)
    assert full["grows"].verdict == MISS and full["grows"].unexpected


def test_an_expected_verdict_for_an_unknown_check_is_an_error() -> None:
    with pytest.raises(DsimError, match="checks it does not have: nope"):
        judge(toy({"nope": Miss(MODEL, "x")}), {"q/r1": [10.0, 10.0], "q/r2": [20.0, 20.0]})


def test_the_headline_counts_reproductions_only() -> None:
    e = toy()
    out = Outcome(e, QUICK)
    evaluate(e, QUICK, Measures({"q/r1": [10.0, 10.0], "q/r2": [25.0, 25.0]}), out)
    report = Report([out])
    assert report.headline() == "2 of 3 published numbers and claims reproduced"
    assert "invariants 1 / 1" in report.split() and "1 UNEXPECTED" in report.split()


def test_first_arrival_share() -> None:
    # Uniform residuals on [0, Tx] and [0, Ty], Tx < Ty: P(x first) = 1 - Tx / (2 Ty).
    assert first_arrival_share(1.0, 2.0, 0.0) == pytest.approx(0.75, abs=1e-3)
    assert first_arrival_share(4 / 3, 2.0, 0.0) == pytest.approx(2 / 3, abs=1e-3)
    assert first_arrival_share(1.0, 1.0, 0.1) == pytest.approx(0.5, abs=1e-3)


# -- every family, quick mode ------------------------------------------------------------------------

FAMILIES = registry.families()


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory: pytest.TempPathFactory):
    """Each family run once in quick mode, on demand: (Report, output folder)."""
    from rich.console import Console

    done: dict[str, tuple[Report, Path]] = {}

    def get(family: str) -> tuple[Report, Path]:
        if family not in done:
            out = tmp_path_factory.mktemp(family)
            done[family] = (run_experiments(registry.select([family]), out=out, console=Console(file=io.StringIO())), out)
        return done[family]

    return get


@pytest.fixture(params=[pytest.param(f, marks=pytest.mark.slow) for f in FAMILIES])
def outcomes(request: pytest.FixtureRequest, quick_report) -> list[Outcome]:
    """The outcomes of one family's experiments in quick mode."""
    report, _ = quick_report(request.param)
    assert [o.experiment.name for o in report.outcomes] == [e.name for e in registry.select([request.param])]
    return report.outcomes


def test_family_verdicts_are_the_expected_ones(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        assert o.error is None, (o.experiment.name, o.error, o.notes)
        missed = {c.id for c in o.checks if c.verdict == MISS and c.kind == REPRODUCTION}
        # The experiment's expected misses, less those quick mode does not decide.
        listed = {c.id for c in o.checks if c.id in o.experiment.expected and c.counted and c.kind == REPRODUCTION}
        assert missed == listed, (o.experiment.name, "missed, not listed:", missed - listed, "listed, passed:", listed - missed)
        # Invariants and set-up checks: the same rule.
        assert [(c.id, c.verdict) for c in o.unexpected()] == [], o.experiment.name


def test_every_published_cell_and_claim_is_a_check(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        e = o.experiment
        assert [c.id for c in o.checks] == e.check_ids()
        for c in o.checks:
            if c.verdict == FULL_ONLY:
                assert c.reason, (e.name, c.id)
            if c.verdict == MISS:
                assert c.miss_class and c.reason and "{" not in c.reason, (e.name, c.id)


FIELD = re.compile(r"\{[^{}]*\}")
#: References into a document or to a tool: "section 5", "Table A.4", "Tables 1-3", "A.3.2", "ns-2", "C10", "DP2" ...
REFERENCE = re.compile(
    r"ns-[23]|RFC \d+|sections? \d+(?:\.\d+)*|tables? [A-Z]?\.?\d+(?:\.\d+)?(?:-\d+)?|figures? \d+(?: and \d+)?|appendix [A-Z](?:\.\d+)*"
    r"|\bA(?:\.\d+)+|\b[CST]\d+\b|\bp\d+|DP\d|issue \d+|af-s\d|seed \d+",
    re.IGNORECASE,
)
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def coordinates(names: list[str]) -> set[str]:
    """The numbers that name quantities (a row "500", a column "10ms", a set-up "tr cbs 400")."""
    out = set()
    for name in names:
        for token in re.split(r"[/ _]", name):
            m = re.fullmatch(r"(\d+(?:\.\d+)?)[a-zA-Z%]*", token)
            if m:
                out.add(m.group(1))
    return out


def test_reasons_state_no_number_the_run_did_not_compute(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        e = o.experiment
        allowed = coordinates(list(o.measures or {})) | {str(k) for t in e.tables for k in (*t.rows, *t.columns)}
        for key, template in [(k, m.reason) for k, m in e.expected.items()] + [(k, v) for k, v in e.full_only.items()] + [("note", n) for n in e.notes]:
            literal = NUMBER.findall(REFERENCE.sub("", FIELD.sub("", template)))
            assert set(literal) <= allowed, (e.name, key, sorted(set(literal) - allowed))


@pytest.mark.slow
def test_the_report_is_written_three_ways(quick_report) -> None:
    report, out = quick_report("queueing")
    assert report.headline() == "16 of 16 published numbers and claims reproduced"
    data = json.loads((out / "report.json").read_text())
    assert data["totals"]["reproduction"] == {"passed": 16, "checks": 16, "expected_misses": 0, "unexpected": 0, "full_only": 0}
    assert "**16 of 16 published numbers and claims reproduced" in (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    # Self-contained: every figure inline, nothing fetched.
    figures = sum(len(o.figures) for o in report.outcomes)
    assert figures and html.count("src='data:image/png;base64,") == figures
    assert "http" not in html.replace("http-equiv", "")


def test_the_docs_example_is_the_code() -> None:
    # docs/reproduce.md shows the M/D/1 experiment as the whole of an experiment: it must be queueing.py's.
    root = Path(__file__).resolve().parent.parent
    block = (root / "docs" / "reproduce.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]
    assert block in (root / "python" / "dsim" / "reproduce" / "queueing.py").read_text()
