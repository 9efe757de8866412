"""One scorecard per model (``<root>/scorecard/<model>.{md,csv,tex}``): the model's headline robustness numbers
from every enabled study that ran it, each with its 95 % interval and the paper's nearest comparable number —
the page a researcher would put in a model card.

A study declares :class:`wobble.report.spec.ScorecardSpec` in its ``StudySpec``: which of its models it scores, the files a
model's rows are computed from, and the function computing them (``module:function``, called as
``measure(inputs, config, model)`` and returning :class:`Row` s). The rows are the study's own numbers (the same
metrics and intervals as its tables); this module only collects and writes them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from wobble.report.cells import DASH, fmt
from wobble.report.formats import write_table


@dataclass(frozen=True)
class Row:
    """One headline number of one model in one study."""

    study: str
    quantity: str  # what is measured, e.g. "first-token/text mismatch"
    condition: str  # where, e.g. "Medium constraint"
    value: float | None
    ci_low: float | None
    ci_high: float | None
    unit: str  # "%", "points", "nats"
    n: int | None  # items the interval resamples
    paper: str = ""  # the paper's nearest comparable number, with its model


def number(x) -> float | None:
    """A CSV cell as a float for a Row; None for an empty, non-numeric or NaN cell."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _clean(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _cell(r: Row) -> str:
    if _clean(r.value) is None:
        return DASH
    digits = 2 if r.unit == "nats" else 1
    ci = (f" [{fmt(r.ci_low, digits)}, {fmt(r.ci_high, digits)}]"
          if _clean(r.ci_low) is not None and _clean(r.ci_high) is not None else "")
    return f"{fmt(r.value, digits)}{ci}"


def display_frame(rows: Sequence[Row]) -> pd.DataFrame:
    return pd.DataFrame([{"study": r.study, "quantity": r.quantity, "condition": r.condition,
                          "ours [95% CI]": _cell(r), "unit": r.unit, "n": DASH if r.n is None else str(r.n),
                          "paper (nearest)": r.paper or DASH} for r in rows],
                        columns=["study", "quantity", "condition", "ours [95% CI]", "unit", "n", "paper (nearest)"])


def write_scorecard(model: str, label: str, rows: Sequence[Row], stem: str | Path,
                    studies_without: Sequence[str] = ()) -> list[Path]:
    """``stem.md`` / ``.tex`` (display) and ``stem.csv`` (tidy rows), written atomically."""
    tidy = pd.DataFrame([{"model": model, **{k: _clean(v) for k, v in asdict(r).items()}} for r in rows],
                        columns=["model", *Row.__dataclass_fields__])
    notes = [f"Model: {label}.",
             "Ours: each study's own metric and 95% bootstrap interval over its items (the same numbers as its "
             "tables); paper (nearest): the paper's number for the paper model this one stands in for, else the "
             "paper's range over its models."]
    if studies_without:
        notes.append(f"Not in this scorecard: {', '.join(studies_without)} (the model is not run there).")
    return write_table(display_frame(rows), tidy, stem, f"Scorecard: {model}", notes)
