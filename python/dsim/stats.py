"""Replication statistics: means with Student-t confidence intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as _st

from .errors import ScenarioError

#: Confidence level of every interval dsim reports.
LEVEL = 0.90


def t_half_width(values: np.ndarray | pd.Series, level: float = LEVEL) -> float:
    """Half width of the two-sided Student-t interval of the mean of `values`.

    t_{(1+level)/2, n-1} * s / sqrt(n), with s the sample standard deviation; NaN for fewer
    than two finite values.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = v.size
    if n < 2:
        return math.nan
    s = v.std(ddof=1)
    return float(_st.t.ppf((1 + level) / 2, n - 1) * s / math.sqrt(n))


def summarize(
    df: pd.DataFrame,
    by: list[str],
    columns: list[str] | None = None,
    level: float = LEVEL,
    runs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Mean and confidence interval of every numeric column over replications, per group.

    Returns one row per group with, for each column c: ``c`` (mean), ``c_ci`` (half width),
    ``c_lo`` and ``c_hi``, and ``n`` (replications). `runs` lists every replication (its
    identifying columns, e.g. ``replication``, or ``point`` and ``replication``): a group
    with no row in one of them (a sparse table: no drop of that cause there) counts 0 there.
    """
    check_summary_arguments(df, by, columns, level)
    if runs is not None:
        df = _with_absent_rows_as_zeros(df, by, runs)
    if columns is None:
        skip = set(by) | {"replication", "seed", "base_seed"}
        columns = [c for c in df.columns if c not in skip and pd.api.types.is_numeric_dtype(df[c])]
    rows = []
    for key, g in df.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n"] = len(g)
        for c in columns:
            mean = float(g[c].mean())
            half = t_half_width(g[c].to_numpy(), level)
            row[c] = mean
            row[f"{c}_ci"] = half
            row[f"{c}_lo"] = mean - half
            row[f"{c}_hi"] = mean + half
        rows.append(row)
    return pd.DataFrame(rows)


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
    units = list(runs.columns)
    shared = [c for c in units if c in by]
    groups = df[by].drop_duplicates()
    grid = groups.merge(runs.drop_duplicates(), on=shared) if shared else groups.merge(runs.drop_duplicates(), how="cross")
    keys = list(dict.fromkeys(by + units))
    full = grid.merge(df, on=keys, how="left")
    numeric = [c for c in df.columns if c not in keys and pd.api.types.is_numeric_dtype(df[c])]
    full[numeric] = full[numeric].fillna(0)
    return full
