"""How cells are printed, one copy for every table: numbers, mean ± std, value [95% CI], percentages,
the "–" of a missing cell, and the paper's cells kept exactly as printed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

DASH = "–"


def is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt(value, digits: int = 1) -> str:
    """A number with ``digits`` decimals; "–" for None/NaN; other values as ``str``."""
    if is_missing(value):
        return DASH
    if isinstance(value, (int, float)):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_pm(mean, std, digits: int = 1) -> str:
    """``"mean ± std"``; just the mean when there is no std; "–" without a mean."""
    if is_missing(mean):
        return DASH
    if is_missing(std):
        return fmt(mean, digits)
    return f"{fmt(mean, digits)} ± {fmt(std, digits)}"


def pct(x, digits: int = 1) -> str:
    """A rate in [0, 1] printed in percent."""
    return DASH if is_missing(x) else fmt(100.0 * float(x), digits)


def num(x, digits: int = 2) -> str:
    return DASH if is_missing(x) else fmt(float(x), digits)


def with_ci(value, lo, hi, *, percent: bool = True, digits: int | None = None) -> str:
    """``"12.5 [8.0, 17.5]"`` (percent) or ``"0.81 [0.70, 0.92]"``; "–" without a value."""
    if percent:
        def f(v):
            return pct(v, 1 if digits is None else digits)
    else:
        def f(v):
            return num(v, 2 if digits is None else digits)
    if is_missing(value):
        return DASH
    if is_missing(lo) or is_missing(hi):
        return f(value)
    return f"{f(value)} [{f(lo)}, {f(hi)}]"


def printed(s: Any) -> str:
    """A paper cell as printed; "–" when empty."""
    s = "" if s is None else str(s).strip()
    return s if s else DASH


def read_paper(path: str | Path) -> pd.DataFrame:
    """A paper CSV with every cell kept as printed (strings, "" for empty)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)
