"""Replication statistics: the exact Student-t quantile (no scipy) and the vectorised
summary, against published values, closed forms and the summary's definition."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsim.stats import summarize, t_half_width, t_quantile_two_sided

# -- the Student-t quantile -----------------------------------------------------------------

# Published two-sided quantiles t_{(1+level)/2, nu} (e.g. NIST/SEMATECH e-Handbook of
# Statistical Methods, 1.3.6.7.2, to three decimals).
TABLE = [
    (0.90, 1, 6.314), (0.90, 2, 2.920), (0.90, 3, 2.353), (0.90, 4, 2.132), (0.90, 5, 2.015),
    (0.90, 9, 1.833), (0.90, 10, 1.812), (0.90, 30, 1.697), (0.90, 100, 1.660),
    (0.95, 1, 12.706), (0.95, 5, 2.571), (0.95, 9, 2.262), (0.95, 20, 2.086), (0.95, 100, 1.984),
    (0.99, 2, 9.925), (0.99, 7, 3.499), (0.99, 29, 2.756), (0.80, 12, 1.356), (0.50, 6, 0.718),
]


@pytest.mark.parametrize("level,nu,want", TABLE)
def test_t_quantile_matches_the_published_table(level: float, nu: int, want: float) -> None:
    assert round(t_quantile_two_sided(level, nu), 3) == want


levels = st.floats(min_value=1e-6, max_value=0.995)


@given(levels)
def test_t_quantile_closed_forms(level: float) -> None:
    # nu = 1 is Cauchy: tan(pi level / 2). nu = 2: A(t) = t / sqrt(2 + t^2).
    # nu = 4: with s = sin(theta), A = s (3 - s^2) / 2, a cubic with one root in (0, 1).
    assert t_quantile_two_sided(level, 1) == pytest.approx(math.tan(math.pi * level / 2), rel=1e-12)
    assert t_quantile_two_sided(level, 2) == pytest.approx(level * math.sqrt(2 / (1 - level * level)), rel=1e-12)
    s = 2 * math.cos((math.acos(-level) + 4 * math.pi) / 3)
    assert t_quantile_two_sided(level, 4) == pytest.approx(2 * s / math.sqrt(1 - s * s), rel=1e-11)


@given(levels, levels, st.integers(1, 400), st.integers(1, 400))
def test_t_quantile_grows_with_the_level_and_shrinks_with_nu(a: float, b: float, m: int, n: int) -> None:
    (a, b), (m, n) = sorted((a, b)), sorted((m, n))
    assert t_quantile_two_sided(a, m) <= t_quantile_two_sided(b, m)
    assert t_quantile_two_sided(a, n) <= t_quantile_two_sided(a, m)
    # Above the normal quantile, which it reaches as nu grows.
    from statistics import NormalDist

    assert t_quantile_two_sided(a, m) >= NormalDist().inv_cdf((1 + a) / 2) * (1 - 1e-12)


def test_t_quantile_approaches_the_normal_one() -> None:
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.95)
    assert t_quantile_two_sided(0.9, 20_000) == pytest.approx(z, rel=1e-4)
    assert t_quantile_two_sided(0.9, 20_000) > z


def test_t_quantile_refuses_what_has_none() -> None:
    for level, nu in ((0.0, 3), (1.0, 3), (0.9, 0)):
        with pytest.raises(ValueError, match=r"must lie in \(0, 1\) and nu .* be at least 1"):
            t_quantile_two_sided(level, nu)


def reference_summary(df: pd.DataFrame, by: list[str], columns: list[str], level: float) -> pd.DataFrame:
    """The summary's definition, group by group (what the vectorised one must equal)."""
    rows = []
    for key, g in df.groupby(by, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, values, strict=True), n=len(g))
        for c in columns:
            mean = float(g[c].mean())
            half = t_half_width(g[c].to_numpy(), level)
            row.update({c: mean, f"{c}_ci": half, f"{c}_lo": mean - half, f"{c}_hi": mean + half})
        rows.append(row)
    return pd.DataFrame(rows)


values = st.one_of(st.sampled_from([0.0, 1.0, 2.5, math.nan, math.inf]), st.floats(-1e6, 1e6))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from([1, 2]), values, values), min_size=1, max_size=30), st.sampled_from([0.5, 0.9, 0.99]))
def test_vectorised_summary_equals_its_definition(rows: list, level: float) -> None:
    df = pd.DataFrame(rows, columns=["g", "h", "x", "y"])
    got = summarize(df, ["g", "h"], None, level)
    want = reference_summary(df, ["g", "h"], ["x", "y"], level)
    pd.testing.assert_frame_equal(got, want, check_dtype=False, rtol=1e-9, atol=1e-9)
