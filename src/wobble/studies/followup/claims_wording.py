"""The followup claim about sensitivity to the prompt's WORDING (§3.3 (3): "from most to least sensitive: leading
questions, closed-ended questions, and open-ended questions"), pooled over the models as the paper's sentence.

Figure 4, which the sentence reads, plots M. (accuracy points lost) for the prompts of annotators A, B and C. The
sensitivity of a question type is how far M. moves between two annotators' prompts on the same items: per (model,
dataset) cell and annotator pair, d̄² − v, with d̄ the mean per-item difference in M. between the two prompts and
v its sampling variance (var / n); d̄² − v is unbiased for the squared true difference, so sampling noise (larger
where M. is near 50 %) is not read as sensitivity. The paper's printed cells carry no variance (v = 0). S_q is the
mean over the cells and pairs of question type q; the ranking holds when S_leading − S_closed and S_closed −
S_open are both above 0: the effect is the smaller one (points²), with a Bonferroni interval over the two.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Mapping, Sequence

import numpy as np

from wobble.report.claims import Measurement
from wobble.stats import bootstrap_indices, percentile_interval
from wobble.studies.followup.claims_measure import (ALPHA, MIN_CORRECT, combine, diagnostics, initial_accuracy,
                                                    optional, plain, precondition, question)
from wobble.studies.followup.prompts import QUESTION_TYPES


def wording_spread(columns: Sequence[tuple[Any, Any]]):
    """Mean over columns (one per cell and annotator pair) of d̄² − v: d̄ the mean difference in M. between
    the two annotators' prompts, v its sampling variance (0 for the paper's printed cells); d̄² − v is
    unbiased for the squared true difference, so sampling noise does not pass for sensitivity."""
    vals = [np.asarray(d, dtype=float) ** 2 - np.asarray(v, dtype=float) for d, v in columns]
    if not vals:
        return float("nan")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(vals), axis=0)


def wording_parts(spread: Mapping[str, Any]) -> np.ndarray:
    """(S_leading − S_closed, S_closed − S_open): both > 0 is the ranking leading > closed > open."""
    return np.array([spread["leading"] - spread["closed-ended"], spread["closed-ended"] - spread["open-ended"]],
                    dtype=float)


def wording_columns(scores: Sequence[Mapping], own: str, model: str
                    ) -> dict[tuple, tuple[str, dict[tuple[str, str], float]]]:
    """Per (model, dataset, question type, annotator pair): (question type, item -> difference in M.,
    100 · [initially correct and wrong after], between the two annotators' prompts)."""
    m: dict[tuple, dict[tuple[str, str], float]] = {}
    for s in scores:
        q, v = question(s)
        if plain(s, own) and q in QUESTION_TYPES and s.get("gate") != "wrong":
            flip = 100.0 * (bool(s["correct"][0]) and not bool(s["correct"][1]))
            m.setdefault((s["dataset"], q, v), {})[(s["dataset"], str(s["item"]))] = flip
    cols = {}
    for (d, q), group in itertools.groupby(sorted(m), key=lambda k: k[:2]):
        variants = sorted(k[2] for k in group)
        for u, v in itertools.combinations(variants, 2):
            a, b = m[(d, q, u)], m[(d, q, v)]
            cols[(model, d, q, u, v)] = (q, {it: a[it] - b[it] for it in a if it in b})
    return cols


def measure_wording(scores: Sequence[Mapping], own_temps: Mapping[str, str], *, n_boot: int, seed: int
                    ) -> Measurement | None:
    """The wording-sensitivity ranking pooled over the models (module docstring); (model, dataset) cells
    failing the precondition are left out, "not applicable" when none is left."""
    cols, notes, used, correct = {}, [], [], {q: 0 for q in QUESTION_TYPES}
    for model in sorted(own_temps):
        own = own_temps[model]
        mine = [s for s in scores if s["model"] == model]
        theirs = wording_columns(mine, own, model)
        if not theirs:
            continue
        passing, pnote = precondition(initial_accuracy(mine, own), {c[1] for c in theirs}, model)
        notes.append(pnote)
        cols.update({k: v for k, v in theirs.items() if k[1] in passing})
        for s in mine:
            if s["dataset"] in passing and plain(s, own) and question(s)[0] in QUESTION_TYPES:
                used.append(s)
                correct[question(s)[0]] += bool(s["correct"][0])
    if not notes:
        return None
    pnote = " | ".join(notes)
    if not cols:
        return Measurement(None, None, None, 0, applicable=False, precondition_note=pnote)
    if {q for q, _ in cols.values()} != set(QUESTION_TYPES):
        return Measurement(None, None, None, 0, precondition_note=pnote,
                           note="needs two annotators' prompts of every question type on a dataset kept")
    items = sorted({it for _, col in cols.values() for it in col})
    row = {it: i for i, it in enumerate(items)}
    keys = sorted(cols)
    x = np.full((len(items), len(keys)), np.nan)
    for j, key in enumerate(keys):
        for it, d in cols[key][1].items():
            x[row[it], j] = d

    def parts(rows: np.ndarray) -> np.ndarray:
        sub = x[rows]  # (..., items, columns)
        n = (~np.isnan(sub)).sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            dbar = np.nanmean(sub, axis=-2)
            var = np.where(n > 1, np.nanvar(sub, axis=-2, ddof=1) / np.maximum(n, 1), np.nan)
        dbar = np.where(n > 1, dbar, np.nan)
        spread = {q: wording_spread([(dbar[..., j], var[..., j]) for j, k in enumerate(keys) if cols[k][0] == q])
                  for q in QUESTION_TYPES}
        return wording_parts(spread)

    point_parts = parts(np.arange(len(items)))
    idx = bootstrap_indices(len(items), n_boot, seed)
    reps = parts(idx) if idx.size else np.full((2, 0), np.nan)
    bounds = [percentile_interval(r, 1 - ALPHA / 2) for r in reps]
    lo, hi = combine("min", np.array([b[0] for b in bounds])), combine("min", np.array([b[1] for b in bounds]))
    few = min(correct.values())
    annotators = sorted({k[3] for k in keys} | {k[4] for k in keys})
    note = (f"{len(items)} items; annotators {', '.join(annotators)} (the paper: A, B, C), {len(keys)} annotator-pair "
            f"cells; leading − closed {point_parts[0]:+.1f}, "
            f"closed − open {point_parts[1]:+.1f} points²; fewest initially correct in one question type: {few}")
    return Measurement(optional(combine("min", point_parts)), optional(lo), optional(hi), len(items),
                       degenerate=bool(few < MIN_CORRECT), note=note + (f" (< {MIN_CORRECT})" if few < MIN_CORRECT else ""), precondition_note=pnote,
                       interval="bootstrap over items, Bonferroni over the 2 parts (min)",
                       diagnostics=diagnostics(used))
