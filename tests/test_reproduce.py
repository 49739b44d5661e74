"""The analytic experiments, run in quick mode: each check is a real comparison with a value
known from queueing theory, so every one must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsim.reproduce import registry, run_experiments
from dsim.reproduce.framework import Context, Outcome
from dsim.reproduce.queueing import first_arrival_share


@pytest.mark.parametrize("name", ["dd1", "fifo-overload", "md1"])
def test_queueing_experiments_pass(name: str, tmp_path: Path) -> None:
    report = run_experiments(registry.select([name]), out=tmp_path)
    [outcome] = report.outcomes
    assert outcome.error is None
    assert outcome.checks
    assert [c.id for c in outcome.misses()] == []


def test_first_arrival_share() -> None:
    # Uniform residuals on [0, Tx] and [0, Ty], Tx < Ty: P(x first) = 1 - Tx / (2 Ty).
    assert first_arrival_share(1.0, 2.0, 0.0) == pytest.approx(0.75, abs=1e-3)
    assert first_arrival_share(4 / 3, 2.0, 0.0) == pytest.approx(2 / 3, abs=1e-3)
    assert first_arrival_share(1.0, 1.0, 0.1) == pytest.approx(0.5, abs=1e-3)


def test_a_number_outside_its_band_is_a_miss(tmp_path: Path) -> None:
    exp = registry.select(["dd1"])[0]
    ctx = Context(Outcome(exp), full=False, out=tmp_path, jobs=1)
    ok = ctx.number("a", "within", published=10.0, simulated=[10.4, 10.6], rel_tol=0.1)
    miss = ctx.number("b", "outside", published=10.0, simulated=[11.4, 11.6], rel_tol=0.1)
    assert (ok.verdict, miss.verdict) == ("pass", "miss")
    assert miss.ci is not None and miss.ci[0] < 11.5 < miss.ci[1]
    assert ctx.claim("c", "false claim", False).verdict == "miss"
