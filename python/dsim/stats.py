"""Replication statistics: means with Student-t confidence intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as _st

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


def summarize(df: pd.DataFrame, by: list[str], columns: list[str] | None = None, level: float = LEVEL) -> pd.DataFrame:
    """Mean and confidence interval of every numeric column over replications, per group.

    Returns one row per group with, for each column c: ``c`` (mean), ``c_ci`` (half width),
    ``c_lo`` and ``c_hi``, and ``n`` (replications).
    """
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
