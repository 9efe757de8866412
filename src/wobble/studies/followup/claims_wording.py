"""The followup claim about sensitivity to the prompt's WORDING (§3.3 (3): "from most to least sensitive: leading
questions, closed-ended questions, and open-ended questions"), pooled over the models as the paper's sentence.

Figure 4, which the sentence reads, plots M. (accuracy points lost) for the prompts of annotators A, B and C. The
sensitivity of a question type is how far M. moves between two annotators' prompts on the same items: per (model,
dataset) cell and annotator pair, d̄² − v, with d̄ the mean per-item difference in M. between the two prompts and
v its sampling variance (var / n); d̄² − v is unbiased for the squared true difference, so sampling noise (larger
where M. is near 50 %) is not read as sensitivity. The paper's printed cells carry no variance (v = 0). S_q is the
mean over the cells and pairs of question type q; the ranking holds when S_leading − S_closed and S_closed −
S_open are both above 0: the statistic is the smaller one (points²). It is a :class:`wobble.report.intervals.Custom`
statistic: the engine resamples items (an item brings every model and prompt it was asked with) and, having no
exact interval for it, leaves the row inconclusive on fewer than 30 items. The row is pooled over the models, its
gates per model and question type: each question type's cell carries its worst model's figure (:data:`WORST`).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.studies.followup.claims_measure import (GATE_COLUMNS, gate_values, initial_accuracy, plain,
                                                    precondition, question)
from wobble.studies.followup.prompts import QUESTION_TYPES

COLUMNS = ["item", "dataset", "model", "cell", "variant", "m", "initially_correct", *GATE_COLUMNS, "above_chance",
           "accuracy"]
#: The gate columns of the pooled row: per question type, the worst model's figure (the lowest share of replies
#: extracted, the highest share cut, the fewest initially correct dialogues), so a gate fails in a question type
#: when it fails for one model there.
WORST = {"extractable_before": "min", "extractable_after": "min", "cut_before": "max", "cut_after": "max",
         "arm_items": "min"}


def wording_spread(columns: Sequence[tuple[Any, Any]]) -> float:
    """Mean over columns (one per cell and annotator pair) of d̄² − v (module docstring); NaN for none."""
    vals = [float(d) ** 2 - float(v) for d, v in columns if not (math.isnan(float(d)) or math.isnan(float(v)))]
    return float(np.mean(vals)) if vals else math.nan


def wording_parts(spread: Mapping[str, float]) -> np.ndarray:
    """(S_leading − S_closed, S_closed − S_open): both > 0 is the ranking leading > closed > open."""
    return np.array([spread["leading"] - spread["closed-ended"], spread["closed-ended"] - spread["open-ended"]],
                    dtype=float)


def ranking(spread: Mapping[str, float]) -> float:
    """The statistic from the spreads: the smaller of the two parts (NaN if either is undefined)."""
    parts = wording_parts(spread)
    return math.nan if np.isnan(parts).any() else float(parts.min())


def cell_columns(frame: pd.DataFrame, unit: str = "item") -> dict[str, list[tuple[float, float]]]:
    """Question type -> (d̄, v) per (model, dataset, annotator pair): d̄ the mean over the items asked with both
    prompts of the difference in ``m``, v its variance / n; a cell of fewer than two such items is left out."""
    out: dict[str, list[tuple[float, float]]] = {q: [] for q in QUESTION_TYPES}
    wide = frame.pivot_table(index=[unit, "dataset"], columns=["model", "cell", "variant"], values="m",
                             aggfunc="mean")
    datasets = wide.index.get_level_values("dataset")
    for (model, q), group in itertools.groupby(sorted(wide.columns), key=lambda c: c[:2]):
        variants = [c[2] for c in group]
        for u, v in itertools.combinations(variants, 2):
            diff = (wide[(model, q, u)] - wide[(model, q, v)]).to_numpy(dtype=float)
            for d in pd.unique(datasets):
                x = diff[(datasets == d) & ~np.isnan(diff)]
                if x.size > 1:
                    out.setdefault(q, []).append((float(x.mean()), float(x.var(ddof=1)) / x.size))
    return out


def statistic(frame: pd.DataFrame) -> float:
    """The ranking statistic on a table (the engine's :class:`Custom` fn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cols = cell_columns(frame)
    return ranking({q: wording_spread(cols.get(q, [])) for q in QUESTION_TYPES})


def wording_table(scores: Iterable[Mapping[str, Any]], own_temps: Mapping[str, str]) -> pd.DataFrame:
    """One row per plain Direct-Form dialogue of a question type (any annotator) at a model's temperature: ``m``
    100 · [initially correct and wrong after] (M. over all items), on the (model, dataset) cells above chance —
    every cell, marked, where none of any model is. Gate columns (:data:`WORST`): each row carries its question
    type's worst model's figure, the model's figure being its mean over its rows of that question type;
    ``arm_items`` counts a model's initially correct dialogues of the question type."""
    scores = list(scores)
    kept, notes, every = [], [], []
    for model in sorted(own_temps):
        own = own_temps[model]
        mine = [s for s in scores if s["model"] == model and plain(s, own) and question(s)[0] in QUESTION_TYPES
                and s.get("gate") != "wrong"]
        if not mine:
            continue
        passing, note = precondition(initial_accuracy([s for s in scores if s["model"] == model], own),
                                     {s["dataset"] for s in mine}, model)
        notes.append(note)
        for s in mine:
            q, v = question(s)
            row = {"item": f"{s['dataset']}/{s['item']}", "dataset": s["dataset"], "model": model, "cell": q,
                   "variant": v, "m": 100.0 * (bool(s["correct"][0]) and not bool(s["correct"][1])),
                   "initially_correct": float(bool(s["correct"][0])), **gate_values(s)}
            every.append(row)
            if s["dataset"] in passing:
                kept.append(row)
    rows = kept or every
    note = " | ".join(notes)
    frame = pd.DataFrame([{**r, "above_chance": bool(kept), "accuracy": note} for r in rows], columns=COLUMNS)
    return worst_per_cell(frame)


def worst_per_cell(frame: pd.DataFrame) -> pd.DataFrame:
    """Each gate column replaced by its question type's worst model's figure (:data:`WORST`)."""
    if frame.empty:
        return frame.assign(arm_items=pd.Series(dtype=float))
    frame = frame.assign(arm_items=frame.groupby(["model", "cell"])["initially_correct"].transform("sum"))
    per_model = frame.groupby(["cell", "model"])[list(WORST)].mean()
    worst = per_model.groupby(level="cell").agg(WORST)
    return frame.assign(**{c: frame["cell"].map(worst[c]).astype(float) for c in WORST})
