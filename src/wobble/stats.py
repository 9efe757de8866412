"""Statistics shared by every study: mean ± std over seeds (with the ddof the papers use) and percentile
bootstrap intervals over ITEMS, where all variants of an item (its shuffles, prompts, turns) are resampled
together — an item is the unit that was sampled, so it is the unit resampled.

The library does what it can: the standard library's ``statistics`` the mean ± std, scipy the exact binomial
interval and test and the reference percentile bootstrap (:func:`bootstrap_ci`, :func:`paired_difference_ci`:
``scipy.stats.bootstrap(method="percentile")``). The resampling helpers the studies compute with draw exactly
scipy's resamples from the same seed and are kept for what scipy's bootstrap does not do; each says which,
and ``tests/test_library_equivalence.py`` shows it against scipy on the same input."""

from __future__ import annotations

import statistics
import warnings
from typing import Callable, Sequence

import numpy as np


def mean_std(values: Sequence[float], ddof: int = 0) -> tuple[float, float | None]:
    """Mean and standard deviation over seeds, by the standard library: ``statistics.fmean`` and
    ``statistics.pstdev`` (``ddof=0``, the population std of the instructions paper's fork) or
    ``statistics.stdev`` (``ddof=1``). Both std are exact before one rounding, so seeds that agree give 0.

    The std is None when undefined (fewer than ``ddof + 1`` values).
    """
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("mean_std needs at least one value")
    if ddof not in (0, 1):
        raise ValueError(f"mean_std takes ddof 0 (population) or 1 (sample), got {ddof}")
    if len(vals) - ddof <= 0:
        return statistics.fmean(vals), None
    return statistics.fmean(vals), (statistics.pstdev if ddof == 0 else statistics.stdev)(vals)


def bootstrap_indices(m: int, n: int, seed: int) -> np.ndarray:
    """``n`` x ``m`` indices of ``n`` resamples (with replacement) of ``m`` items, ``default_rng(seed)``.

    Row ``b`` is scipy's ``b``-th resample with the same generator; kept so one draw serves every statistic of a
    group (``test_bootstrap_indices_are_scipys_resamples``).
    """
    if not (m and n):
        return np.zeros((0, m), dtype=int)
    return np.random.default_rng(seed).integers(0, m, size=(n, m))


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """``(1-level)/2`` and ``(1+level)/2`` percentiles (linear interpolation) of the non-NaN replicates.

    scipy's percentile interval is NaN once one replicate is (a resample with a zero denominator); this one
    leaves such replicates out (``test_percentile_interval_drops_what_scipy_propagates``).
    """
    arr = np.asarray(replicates, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return (float("nan"), float("nan"))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.percentile(arr, [100 * alpha, 100 * (1 - alpha)])
    return (float(lo), float(hi))


def bootstrap_ci(values: Sequence, statistic: Callable[[list], float] | None = None, *, n: int = 1000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` (default: the mean) over resampled ``values``: scipy's
    ``bootstrap(method="percentile")`` with ``n`` resamples from ``numpy.random.default_rng(seed)``.

    ``values`` are the items (an item may be a list of its variants, resampled as one, so scipy resamples
    the items' positions); NaN for no items, the statistic itself for one item (scipy asks for two).
    The vectorised helpers below are tested against it.
    """
    xs = list(values)
    if not xs:
        return (float("nan"), float("nan"))
    stat = statistic or (lambda v: float(np.mean(v)))
    if len(xs) == 1:
        v = float(stat(xs))
        return (v, v)
    from scipy.stats import bootstrap

    res = bootstrap((np.arange(len(xs)),), lambda i: float(stat([xs[j] for j in i])), vectorized=False,
                    n_resamples=n, confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def ratio_ci(num: Sequence[float], den: Sequence[float], idx: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``sum(num) / sum(den)`` over resampled items (rows of ``idx``).

    ``num[i]``, ``den[i]`` are item ``i``'s numerator and denominator (e.g. its mismatched shuffles and
    its shuffles), so a resampled item brings all its variants. Replicates with ``sum(den) == 0`` are
    dropped. Equal to ``bootstrap_ci`` with a pooled-ratio statistic and the same seed, computed at once; kept
    because scipy's interval is NaN once a resample's denominator is 0 (``test_ratio_ci_is_scipys_paired_bootstrap``).
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
    """Mean of ``a - b`` over paired items and its percentile bootstrap interval over items: scipy's
    ``bootstrap(paired=True, method="percentile")`` from ``numpy.random.default_rng(seed)``.

    ``a[i]`` and ``b[i]`` are item ``i``'s scores under two conditions (e.g. original vs perturbed);
    returns ``(mean difference, low, high)``; NaN triple for no items, the point for one item.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired_difference_ci needs paired scores, got {x.shape} and {y.shape}")
    if x.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    d = float(np.mean(x - y))
    if x.size == 1:
        return (d, d, d)
    from scipy.stats import bootstrap

    res = bootstrap((x, y), lambda u, v, axis=-1: np.mean(u - v, axis=axis), paired=True, n_resamples=n,
                    confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
    return (d, float(res.confidence_interval.low), float(res.confidence_interval.high))


def item_bootstrap(matrix: np.ndarray, statistic: Callable[[np.ndarray], float], *, n: int = 1000, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float, float]:
    """A statistic of per-condition means and its percentile interval over resampled items.

    ``matrix`` is items x conditions (an item's scores under every condition, NaN where it has none); each
    replicate resamples whole rows, so an item brings all its conditions, and passes the column means
    (NaN ignored) to ``statistic``. Returns ``(point, low, high)``; NaN triple for no items. scipy's bootstrap
    gives the same from the same seed but NaN once a resample leaves a condition empty
    (``test_item_bootstrap_is_scipys_bootstrap_over_rows``).
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

    Returns ``(difference, low, high)``; NaN triple when either sample is empty. The samples draw from seeds
    ``seed`` and ``seed + 1``; scipy's two-sample bootstrap draws both from one generator, so the same seed gives
    another interval (``test_two_sample_difference_ci_draws_each_sample_from_its_own_seed``).
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
    benchmark, so it is the unit resampled (instances of one task are not independent). scipy's bootstrap has
    no clusters; the clusters drawn are scipy's resamples of the cluster positions
    (``test_cluster_bootstrap_draws_scipys_resamples_of_clusters``)."""
    labels = list(clusters)
    order = list(dict.fromkeys(labels))
    members = {c: np.array([i for i, x in enumerate(labels) if x == c], dtype=int) for c in order}
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n if order else 0):
        picks = rng.integers(0, len(order), size=len(order))
        out.append(np.concatenate([members[order[j]] for j in picks]))
    return out
