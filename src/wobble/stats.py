"""Statistics shared by every study: mean ± std over seeds (with the ddof the papers use) and percentile
bootstrap intervals over ITEMS, where all variants of an item (its shuffles, prompts, turns) are resampled
together — an item is the unit that was sampled, so it is the unit resampled."""

from __future__ import annotations

import math
import warnings
from typing import Callable, Sequence

import numpy as np


def mean_std(values: Sequence[float], ddof: int = 0) -> tuple[float, float | None]:
    """Mean and standard deviation; ``ddof=0`` (population std) as the instructions paper's fork.

    The std is None when undefined (fewer than ``ddof + 1`` values).
    """
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("mean_std needs at least one value")
    n = len(vals)
    mean = math.fsum(vals) / n
    if n - ddof <= 0:
        return mean, None
    var = math.fsum((v - mean) ** 2 for v in vals) / (n - ddof)
    return mean, math.sqrt(var)


def bootstrap_indices(m: int, n: int, seed: int) -> np.ndarray:
    """``n`` x ``m`` indices of ``n`` resamples (with replacement) of ``m`` items, ``default_rng(seed)``.

    Row ``b`` is drawn exactly as the ``b``-th resample of :func:`bootstrap_ci` with the same seed.
    """
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, m, size=m) for _ in range(n)]) if m and n else np.zeros((0, m), dtype=int)


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """``(1-level)/2`` and ``(1+level)/2`` percentiles (linear interpolation) of the non-NaN replicates."""
    arr = np.asarray(replicates, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return (float("nan"), float("nan"))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.percentile(arr, [100 * alpha, 100 * (1 - alpha)])
    return (float(lo), float(hi))


def bootstrap_ci(values: Sequence, statistic: Callable[[list], float] | None = None, *, n: int = 1000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` (default: the mean) over resampled ``values``.

    ``values`` are the items (an item may be a list of its variants, resampled as one); ``n`` resamples
    from ``numpy.random.default_rng(seed)``; NaN replicates are ignored.
    """
    xs = list(values)
    if not xs:
        return (float("nan"), float("nan"))
    stat = statistic or (lambda v: float(np.mean(v)))
    idx = bootstrap_indices(len(xs), n, seed)
    reps = np.asarray([float(stat([xs[i] for i in row])) for row in idx], dtype=float)
    return percentile_interval(reps, level)


def ratio_ci(num: Sequence[float], den: Sequence[float], idx: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``sum(num) / sum(den)`` over resampled items (rows of ``idx``).

    ``num[i]``, ``den[i]`` are item ``i``'s numerator and denominator (e.g. its mismatched shuffles and
    its shuffles), so a resampled item brings all its variants. Replicates with ``sum(den) == 0`` are
    dropped. Equal to ``bootstrap_ci`` with a pooled-ratio statistic and the same seed, computed at once.
    """
    if idx.size == 0:
        return (float("nan"), float("nan"))
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    d = den[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = num[idx].sum(axis=1) / d
    return percentile_interval(reps[d > 0], level)


def paired_difference_ci(a: Sequence[float], b: Sequence[float], *, n: int = 1000, seed: int = 0,
                         level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` over paired items and its percentile bootstrap interval over items.

    ``a[i]`` and ``b[i]`` are item ``i``'s scores under two conditions (e.g. original vs perturbed);
    returns ``(mean difference, low, high)``; NaN triple for no items.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired_difference_ci needs paired scores, got {x.shape} and {y.shape}")
    if x.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    d = x - y
    idx = bootstrap_indices(d.size, n, seed)
    lo, hi = percentile_interval(d[idx].mean(axis=1), level)
    return (float(d.mean()), lo, hi)


def item_bootstrap(matrix: np.ndarray, statistic: Callable[[np.ndarray], float], *, n: int = 1000, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float, float]:
    """A statistic of per-condition means and its percentile interval over resampled items.

    ``matrix`` is items x conditions (an item's scores under every condition, NaN where it has none); each
    replicate resamples whole rows, so an item brings all its conditions, and passes the column means
    (NaN ignored) to ``statistic``. Returns ``(point, low, high)``; NaN triple for no items.
    """
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0:
        return (float("nan"), float("nan"), float("nan"))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        point = float(statistic(np.nanmean(x, axis=0)))
        idx = bootstrap_indices(x.shape[0], n, seed)
        reps = np.asarray([float(statistic(np.nanmean(x[row], axis=0))) for row in idx], dtype=float)
    lo, hi = percentile_interval(reps, level)
    return (point, lo, hi)


def two_sample_difference_ci(a: Sequence[float], b: Sequence[float], *, n: int = 1000, seed: int = 0,
                             level: float = 0.95) -> tuple[float, float, float]:
    """``mean(a) - mean(b)`` for two independent samples of items, each resampled within itself.

    Returns ``(difference, low, high)``; NaN triple when either sample is empty.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    ix = bootstrap_indices(x.size, n, seed)
    iy = bootstrap_indices(y.size, n, seed + 1)
    reps = x[ix].mean(axis=1) - y[iy].mean(axis=1)
    lo, hi = percentile_interval(reps, level)
    return (float(x.mean() - y.mean()), lo, hi)


def exact_binomial_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson interval of a proportion ``k / n`` (scipy's exact binomial), for a share whose bootstrap
    has no spread (0 of n or n of n: the percentile bootstrap gives [0, 0], which claims certainty)."""
    from scipy.stats import binomtest

    if n <= 0:
        return (float("nan"), float("nan"))
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return (float(ci.low), float(ci.high))


def binomial_p_above(k: int, n: int, p: float) -> float:
    """One-sided exact binomial p-value that ``k`` successes of ``n`` come from a rate above ``p`` (e.g. an
    accuracy above chance); 1.0 for no trials."""
    from scipy.stats import binomtest

    if n <= 0:
        return 1.0
    return float(binomtest(int(k), int(n), p, alternative="greater").pvalue)


def cluster_bootstrap_indices(clusters: Sequence, n: int, seed: int) -> list[np.ndarray]:
    """``n`` resamples of units by CLUSTER: each draws as many clusters as there are (with replacement,
    ``default_rng(seed)``) and brings all their units; returns per resample the unit indices (lengths vary).

    For a claim about tasks measured on several instances per task, the task is the unit sampled from the
    benchmark, so it is the unit resampled (instances of one task are not independent)."""
    labels = list(clusters)
    order = list(dict.fromkeys(labels))
    members = {c: np.array([i for i, x in enumerate(labels) if x == c], dtype=int) for c in order}
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n if order else 0):
        picks = rng.integers(0, len(order), size=len(order))
        out.append(np.concatenate([members[order[j]] for j in picks]))
    return out
