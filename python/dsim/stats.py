"""Replication statistics: means with Student-t confidence intervals.

The t quantile is computed here, exactly, rather than taken from scipy (which costs two
seconds to import for this one number): the degrees of freedom of a replication interval
are an integer, and for an integer nu the two-sided t probability has a finite closed
form (Abramowitz and Stegun 26.7.3), which is inverted by Newton's method to the last bit.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

#: Confidence level of every interval dsim reports.
LEVEL = 0.90


def t_two_sided_probability(theta: float, nu: int) -> float:
    """P(|T| <= t) for Student's t with `nu` degrees of freedom, where theta = atan(t / sqrt(nu)).

    Abramowitz and Stegun 26.7.3 (A(t|nu)): for odd nu
    (2/pi) (theta + sin(theta) cos(theta) (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), the sum
    having (nu - 1) / 2 terms (none for nu = 1); for even nu
    sin(theta) (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), nu / 2 terms. Every term is
    positive, so the sum loses nothing to cancellation.
    """
    c2 = math.cos(theta) ** 2
    odd = nu % 2
    term, total = 1.0, 1.0
    for k in range(1, (nu - 1) // 2 if odd else nu // 2):
        # odd: 2k / (2k + 1); even: (2k - 1) / (2k)
        term *= c2 * ((2 * k) / (2 * k + 1) if odd else (2 * k - 1) / (2 * k))
        total += term
    if not odd:
        return math.sin(theta) * total
    if nu == 1:
        return 2 * theta / math.pi
    return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


def _t_two_sided_density(theta: float, nu: int) -> float:
    """dA/dtheta: 2 Gamma((nu + 1) / 2) / (sqrt(pi) Gamma(nu / 2)) cos^(nu - 1)(theta) (the
    density 2 f(t) times dt/dtheta = sqrt(nu) / cos^2(theta), with 1 + t^2 / nu = 1 / cos^2)."""
    log_c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(math.pi)
    return 2 * math.exp(log_c + (nu - 1) * math.log(math.cos(theta)))


@lru_cache(maxsize=1024)
def t_quantile_two_sided(level: float, nu: int) -> float:
    """The t with P(|T| <= t) = level for `nu` (>= 1) degrees of freedom: the Student-t
    quantile t_{(1+level)/2, nu} of a two-sided interval at `level`.

    A(theta) rises from 0 to 1 over theta in [0, pi/2). Newton's method on theta, started
    from the first two terms of the Cornish-Fisher expansion (Abramowitz and Stegun
    26.7.5) and kept inside a bracket that every step narrows (a step that would leave it
    bisects instead), stops when a step no longer moves theta: the result is as exact as
    the probability is, in a handful of evaluations of the series (which has nu / 2 terms).
    """
    if not 0 < level < 1 or nu < 1:
        raise ValueError(f"level {level} must lie in (0, 1) and nu {nu} be at least 1")
    from statistics import NormalDist

    z = NormalDist().inv_cdf((1 + level) / 2)
    lo, hi = 0.0, math.pi / 2
    theta = min(max(math.atan((z + (z**3 + z) / (4 * nu)) / math.sqrt(nu)), math.ulp(0.0)), hi - math.ulp(hi))
    for _ in range(200):
        excess = t_two_sided_probability(theta, nu) - level
        if excess == 0:
            break
        if excess < 0:
            lo = theta
        else:
            hi = theta
        density = _t_two_sided_density(theta, nu)
        step = theta - excess / density if density > 0 else math.nan
        new = step if lo < step < hi else 0.5 * (lo + hi)
        if new == theta or not lo <= new <= hi or abs(new - theta) <= math.ulp(theta):
            theta = new if lo <= new <= hi else theta
            break
        theta = new
    return math.sqrt(nu) * math.tan(theta)


def t_half_width(values: Any, level: float = LEVEL) -> float:
    """Half width of the two-sided Student-t interval of the mean of `values`.

    t_{(1+level)/2, n-1} * s / sqrt(n), with s the sample standard deviation; NaN for fewer
    than two finite values.
    """
    import numpy as np

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = v.size
    if n < 2:
        return math.nan
    s = v.std(ddof=1)
    return float(t_quantile_two_sided(level, n - 1) * s / math.sqrt(n))


def summarize(
    df: pd.DataFrame,
    by: list[str],
    columns: list[str] | None = None,
    level: float = LEVEL,
    runs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Mean and confidence interval of every numeric column over replications, per group.

    Returns one row per group (in order of first appearance) with, for each column c:
    ``c`` (mean), ``c_ci`` (half width), ``c_lo`` and ``c_hi``, and ``n`` (replications).
    `runs` lists every replication (its identifying columns, e.g. ``replication``, or
    ``point`` and ``replication``): a group with no row in one of them (a sparse table: no
    drop of that cause there) counts 0 there. The interval of a column leaves out its NaN
    and infinite values (the mean leaves out NaN only); computed for all groups at once.
    """
    import numpy as np
    import pandas as pd

    check_summary_arguments(df, by, columns, level)
    if runs is not None:
        df = _with_absent_rows_as_zeros(df, by, runs)
    if columns is None:
        skip = set(by) | {"replication", "seed", "base_seed"}
        columns = [c for c in df.columns if c not in skip and pd.api.types.is_numeric_dtype(df[c])]
    values = df[columns].astype(float)
    finite = values.where(np.isfinite(values))
    keys = [df[c] for c in by]
    groups = values.groupby(keys, sort=False, dropna=False)
    mean = groups.mean()
    sizes = groups.size()
    finite_groups = finite.groupby(keys, sort=False, dropna=False)
    count = finite_groups.count().to_numpy()
    std = finite_groups.std(ddof=1).to_numpy()
    # One t quantile per distinct count (a few), not per cell (millions at 10,000 flows).
    distinct, where = np.unique(count, return_inverse=True)
    t = np.array([t_quantile_two_sided(level, int(n) - 1) if n >= 2 else math.nan for n in distinct], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = t[where].reshape(count.shape) * std / np.sqrt(count)
    out: dict[str, Any] = {}
    index = mean.index.to_frame(index=False) if len(by) > 1 else pd.DataFrame({by[0]: mean.index})
    for c in by:
        out[c] = index[c].to_numpy()
    out["n"] = sizes.to_numpy()
    m = mean.to_numpy()
    for i, c in enumerate(columns):
        out[c] = m[:, i]
        out[f"{c}_ci"] = half[:, i]
        out[f"{c}_lo"] = m[:, i] - half[:, i]
        out[f"{c}_hi"] = m[:, i] + half[:, i]
    return pd.DataFrame(out)


def check_summary_arguments(df: pd.DataFrame, by: list[str], columns: list[str] | None, level: float) -> None:
    """Refuses a level outside (0, 1) and columns the table does not have."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        rule = "a confidence level lies strictly between 0 and 1 (0.9 for 90 %)"
        raise ScenarioError(f"level = {level!r}: {rule}", "level", repr(level), rule)
    for name, given in (("by", by), ("columns", columns or [])):
        missing = [c for c in given if c not in df.columns]
        if missing:
            rule = f"the table's columns are {', '.join(map(str, df.columns))}"
            raise ScenarioError(f"{name} = {given!r}: no column {', '.join(map(repr, missing))}; {rule}", name, repr(given), rule)


def _with_absent_rows_as_zeros(df: pd.DataFrame, by: list[str], runs: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    units = list(runs.columns)
    shared = [c for c in units if c in by]
    groups = df[by].drop_duplicates()
    grid = groups.merge(runs.drop_duplicates(), on=shared) if shared else groups.merge(runs.drop_duplicates(), how="cross")
    keys = list(dict.fromkeys(by + units))
    full = grid.merge(df, on=keys, how="left")
    numeric = [c for c in df.columns if c not in keys and pd.api.types.is_numeric_dtype(df[c])]
    full[numeric] = full[numeric].fillna(0)
    return full
