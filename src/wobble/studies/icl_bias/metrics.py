"""Metrics of Si et al. (2023): the label a prompt yields, h-accuracy, intervention effects.

* **Label from scores** (§2.2): the label word with the higher next-token probability, the two
  probabilities normalized to sum to 1. **Contextual calibration** (Zhao et al. 2021, §2.2 "we
  control for these by ... performing label calibration"): as the authors' script applies it, the
  prompt set's prefix is queried with the content-free inputs "[MASK]", "N/A" and "" (a content-free
  prompt whose label words have no finite score is skipped), their label probabilities averaged and
  normalized to ``p_cf``, and the calibrated label is ``argmax p / p_cf`` (W = diag(p_cf)^-1, b = 0).
  Ties go to label 0 (numpy argmax order of the authors' label set ["0", "1"]).
* **Label from a generated explanation** (§5.1): the text after the last "answer is ", lower-cased,
  punctuation and articles removed, must be "1" or "0"; anything else is *neither*.
* **h-accuracy** (§2.1) on the disambiguating set: the share of items whose predicted label equals
  h1 (resp. h2). The two sum to 100 % when every answer is one of the two labels; the rest is
  reported as *neither*.
* Mean over prompt sets with a percentile bootstrap 95 % interval over test items (an item brings
  its answers under every prompt set), and the **intervention effect** = intended-feature accuracy
  with the intervention minus the baseline's, paired by item (:func:`wobble.stats.item_bootstrap`).
  Averages over pairs (Table 2, Figure 3) resample each pair's items independently.
"""

from __future__ import annotations

import math
import re
import string
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from wobble.seeding import derive_seed
from wobble.stats import bootstrap_indices, item_bootstrap, percentile_interval

MEASURES = ("h1", "h2", "neither")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _word_probs(logprobs: Mapping[str, float | None], words: Sequence[str]) -> np.ndarray | None:
    """Raw probabilities of ``words``; None when one has no finite score (missing, None = -inf in JSON)."""
    vals = [math.nan if logprobs.get(w) is None else float(logprobs[w]) for w in words]
    if not all(math.isfinite(v) for v in vals):
        return None
    return np.exp(np.asarray(vals))


def label_probs(logprobs: Mapping[str, float], words: Sequence[str]) -> np.ndarray:
    """Probabilities of the label words ``words[v]`` (v = 0, 1), normalized to sum to 1."""
    p = _word_probs(logprobs, words)
    if p is None or p.sum() <= 0:
        raise ValueError(f"no finite score for every label word {list(words)} in {dict(logprobs)!r}")
    return p / p.sum()


def content_free_probs(cf_logprobs: Iterable[Mapping[str, float]], words: Sequence[str]) -> np.ndarray | None:
    """``p_cf``: mean label-word probability over the usable content-free prompts, normalized; None if none."""
    rows = [p for p in (_word_probs(lp, words) for lp in cf_logprobs) if p is not None]
    if not rows:
        return None
    mean = np.mean(rows, axis=0)
    return mean / mean.sum() if mean.sum() > 0 else None


def predict_label(logprobs: Mapping[str, float], words: Sequence[str], p_cf: np.ndarray | None = None) -> int:
    """The predicted label (0 / 1) from label-word scores, calibrated by ``p_cf`` when given."""
    p = label_probs(logprobs, words)
    if p_cf is not None:
        p = p / np.asarray(p_cf, dtype=float)
    return int(np.argmax(p))


def parse_generated_label(text: str) -> int | None:
    """The label a generated explanation ends with ("... Therefore, the answer is 1."), else None."""
    out = text.split("\n\n")[0]
    marker = "answer is "
    if marker in out:
        out = out[out.rfind(marker) + len(marker):]
    norm = " ".join(_ARTICLES.sub(" ", "".join(ch for ch in out.lower() if ch not in string.punctuation)).split())
    return {"1": 1, "0": 0}.get(norm)


def h_outcome(pred: int | None, h1: int, h2: int) -> dict[str, float]:
    """One disambiguating item's scores: 1.0 for the feature its prediction agrees with."""
    if h1 == h2:
        raise ValueError("h-accuracy is measured on disambiguating items (h1 != h2)")
    return {"h1": float(pred == h1), "h2": float(pred == h2), "neither": float(pred is None)}


def outcome_matrix(records: Iterable[Mapping], uids: Sequence[str], sets: Sequence[int], measure: str) -> np.ndarray:
    """Items x prompt sets of ``measure`` ("h1" / "h2" / "neither"), NaN where an item has no answer.

    A record is ``{"uid", "set", "pred": 0|1|None, "h1", "h2"}`` (one answer of one prompt set).
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    row = {u: i for i, u in enumerate(uids)}
    col = {s: j for j, s in enumerate(sets)}
    out = np.full((len(uids), len(sets)), np.nan)
    for r in records:
        if r["uid"] in row and r["set"] in col:
            out[row[r["uid"]], col[r["set"]]] = h_outcome(r["pred"], r["h1"], r["h2"])[measure]
    return out


def accuracy(matrix: np.ndarray, *, n: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Mean over prompt sets of the per-set share (in %), with its bootstrap 95 % interval over items."""
    point, lo, hi = item_bootstrap(matrix, lambda cols: float(np.nanmean(cols)), n=n, seed=seed)
    return 100 * point, 100 * lo, 100 * hi


def _effect_stat(k: int) -> Callable[[np.ndarray], float]:
    return lambda cols: float(np.nanmean(cols[:k]) - np.nanmean(cols[k:]))


def effect(intervention: np.ndarray, baseline: np.ndarray, *, n: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Intended-feature accuracy with the intervention minus the baseline's (points), paired by item."""
    if intervention.shape[0] != baseline.shape[0]:
        raise ValueError("intervention and baseline must be scored on the same items (rows)")
    point, lo, hi = item_bootstrap(np.hstack([intervention, baseline]), _effect_stat(intervention.shape[1]),
                                   n=n, seed=seed)
    return 100 * point, 100 * lo, 100 * hi


def _column_stat(matrix: np.ndarray, stat: Callable[[np.ndarray], float]) -> float:
    with np.errstate(invalid="ignore"):
        return float(stat(np.nanmean(matrix, axis=0)))


def mean_over_pairs(strata: Sequence[tuple[np.ndarray, Callable[[np.ndarray], float]]], *, n: int = 1000,
                    seed: int = 0) -> tuple[float, float, float]:
    """Mean over pairs of a per-pair statistic of column means, each pair's items resampled on its own.

    ``strata`` holds ``(items x columns matrix, statistic)`` per pair; returns ``(point, low, high)``
    in the statistic's units; NaN triple when empty.
    """
    if not strata:
        return (math.nan, math.nan, math.nan)
    point = float(np.mean([_column_stat(m, st) for m, st in strata]))
    reps = np.zeros(n)
    for i, (m, st) in enumerate(strata):
        idx = bootstrap_indices(m.shape[0], n, derive_seed(seed, i))
        reps += np.asarray([_column_stat(m[row], st) for row in idx])
    lo, hi = percentile_interval(reps / len(strata))
    return point, lo, hi


def mean_accuracy(matrices: Sequence[np.ndarray], *, n: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Average h-accuracy (%) over pairs, e.g. a dataset's baseline in Figure 3."""
    point, lo, hi = mean_over_pairs([(m, lambda cols: float(np.nanmean(cols))) for m in matrices], n=n, seed=seed)
    return 100 * point, 100 * lo, 100 * hi


def mean_effect(pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, n: int = 1000,
                seed: int = 0) -> tuple[float, float, float]:
    """Average intervention effect (points) over pairs ``(intervention matrix, baseline matrix)`` (Table 2)."""
    strata = [(np.hstack([a, b]), _effect_stat(a.shape[1])) for a, b in pairs]
    point, lo, hi = mean_over_pairs(strata, n=n, seed=seed)
    return 100 * point, 100 * lo, 100 * hi
