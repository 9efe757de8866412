"""wobble.stats: behaviour the mutation run (tests/tools/mutate.py) found untested.

The bootstrap functions are pinned against the algorithm their docstrings state, written out here with
numpy (``default_rng(seed)``, ``n`` resamples of ``m`` items, linear-interpolation percentiles), so a
change of a default (``n=1000``, ``seed=0``, ``level=0.95``) or of the resampling shows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from wobble.stats import (binomial_p_above, bootstrap_ci, bootstrap_indices, exact_binomial_interval, item_bootstrap, mean_std, paired_difference_ci, percentile_interval, ratio_ci, two_sample_difference_ci)


def _resamples(m: int, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, m, size=m) for _ in range(n)]


def _interval(reps) -> tuple[float, float]:
    lo, hi = np.percentile(np.asarray(reps, dtype=float), [2.5, 97.5])
    return float(lo), float(hi)


VALUES = [0.3, 1.7, 2.2, 5.0, 0.1, 3.3, 4.8, 2.9, 0.0, 1.1]


# ------------------------------------------------------------------------------ percentile_interval

def test_percentile_interval_is_the_central_95_percent():
    # 0..100: the 2.5th and 97.5th percentiles are 2.5 and 97.5 (linear interpolation)
    assert percentile_interval(np.arange(101.0)) == pytest.approx((2.5, 97.5))
    assert percentile_interval(np.arange(101.0), level=0.9) == pytest.approx((5.0, 95.0))
    assert percentile_interval([4.0]) == (4.0, 4.0)  # one replicate: a point


def test_percentile_interval_ignores_nan_replicates():
    assert percentile_interval([0.0, math.nan, 100.0, math.nan]) == pytest.approx((2.5, 97.5))
    for empty in ([], [math.nan, math.nan]):
        lo, hi = percentile_interval(empty)
        assert math.isnan(lo) and math.isnan(hi)


# ------------------------------------------------------------------------------------ bootstrap_ci

def test_bootstrap_indices_are_integers_even_when_empty():
    assert bootstrap_indices(3, 0, 0).dtype.kind == "i"
    assert bootstrap_indices(0, 5, 0).dtype.kind == "i"
    # so an empty set of resamples can index an array
    assert np.arange(3.0)[bootstrap_indices(3, 0, 0)].shape == (0, 3)


def test_bootstrap_ci_defaults_are_1000_resamples_seed_0():
    expected = _interval([np.mean([VALUES[i] for i in row]) for row in _resamples(len(VALUES), 1000, 0)])
    assert bootstrap_ci(VALUES) == pytest.approx(expected, abs=1e-12)
    assert bootstrap_ci(VALUES) != bootstrap_ci(VALUES, n=1001)


# ---------------------------------------------------------------------------------------- ratio_ci

def test_ratio_ci_one_resample_of_one_item():
    assert ratio_ci([2.0], [4.0], np.zeros((1, 1), dtype=int)) == (0.5, 0.5)
    lo, hi = ratio_ci([2.0], [4.0], bootstrap_indices(0, 3, 0))
    assert math.isnan(lo) and math.isnan(hi)


def test_ratio_ci_drops_zero_denominators_silently():
    # item 0 has numerator 1 over denominator 0; a replicate of only item 0 is 1/0 and must be dropped
    idx = np.array([[0, 0], [1, 1], [0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = ratio_ci([1.0, 1.0], [0.0, 2.0], idx)
    # replicates kept: 2/4 = 0.5 and 2/2 = 1.0
    assert (lo, hi) == pytest.approx(_interval([0.5, 1.0]))
    # a denominator of exactly 1 is a valid replicate
    assert ratio_ci([1.0], [1.0], np.zeros((2, 1), dtype=int)) == (1.0, 1.0)


# ---------------------------------------------------------------------------- paired_difference_ci

def test_paired_difference_ci_subtracts_b_and_pins_its_defaults():
    a, b = [3.0, 5.0, 4.0, 9.0], [1.0, 1.0, 2.0, 3.0]  # differences 2, 4, 2, 6: mean 3.5
    d = np.array(a) - np.array(b)
    expected = _interval([d[row].mean() for row in _resamples(4, 1000, 0)])
    mean, lo, hi = paired_difference_ci(a, b)
    assert mean == 3.5 and (lo, hi) == pytest.approx(expected, abs=1e-12)
    assert paired_difference_ci([7.0], [2.0], n=10) == (5.0, 5.0, 5.0)


def test_paired_difference_ci_accepts_correct_flags():
    # per-item correctness as booleans (right / wrong): differences 1, 0, 1, 0 -> mean 0.5
    mean, lo, hi = paired_difference_ci([True, False, True, True], [False, False, False, True], n=100)
    assert mean == 0.5 and 0.0 <= lo <= 0.5 <= hi <= 1.0


# ---------------------------------------------------------------------------------- item_bootstrap

def test_item_bootstrap_pins_its_defaults():
    m = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    stat = lambda c: float(c[0] - c[1])  # noqa: E731
    expected = _interval([stat(np.nanmean(m[row], axis=0)) for row in _resamples(5, 1000, 0)])
    point, lo, hi = item_bootstrap(m, stat)
    assert point == pytest.approx(0.2) and (lo, hi) == pytest.approx(expected, abs=1e-12)


def test_item_bootstrap_edge_shapes():
    # one item: every resample is that item
    assert item_bootstrap(np.array([[2.0, 5.0]]), lambda c: float(c[1] - c[0]), n=20) == (3.0, 3.0, 3.0)
    # no items: NaN triple even for a statistic that would not look at the data
    assert all(math.isnan(x) for x in item_bootstrap(np.zeros((0, 2)), lambda c: 1.0))
    # not a matrix: NaN triple
    assert all(math.isnan(x) for x in item_bootstrap(np.array([1.0, 2.0]), lambda c: float(c[0])))


def test_item_bootstrap_is_quiet_on_an_all_nan_condition():
    m = np.array([[1.0, math.nan], [2.0, math.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        point, lo, hi = item_bootstrap(m, lambda c: float(c[0]), n=10)
    assert (point, lo, hi) == pytest.approx((1.5, 1.0, 2.0), abs=0.5)


# ------------------------------------------------------------------------ two_sample_difference_ci

def test_two_sample_difference_ci_resamples_each_sample_on_its_own_seed():
    a, b = [3.0, 1.0, 4.0, 1.0, 5.0], [2.0, 7.0, 1.0]
    x, y = np.array(a), np.array(b)
    ix, iy = _resamples(5, 1000, 0), _resamples(3, 1000, 1)
    expected = _interval([x[i].mean() - y[j].mean() for i, j in zip(ix, iy)])
    d, lo, hi = two_sample_difference_ci(a, b)
    assert d == pytest.approx(2.8 - 10 / 3) and (lo, hi) == pytest.approx(expected, abs=1e-12)
    assert two_sample_difference_ci([4.0], [1.0], n=10) == (3.0, 3.0, 3.0)


# ------------------------------------------------------------------------- what the mutation run found untested

def test_paired_item_and_two_sample_defaults_are_1000_resamples_seed_0():
    a, b = [float(v) for v in np.random.default_rng(7).random(12)], [float(v) for v in np.random.default_rng(8).random(12)]
    assert paired_difference_ci(a, b) == paired_difference_ci(a, b, n=1000, seed=0)
    assert paired_difference_ci(a, b) != paired_difference_ci(a, b, n=1001, seed=0)
    assert paired_difference_ci(a, b) != paired_difference_ci(a, b, n=1000, seed=1)
    m = np.column_stack([a, b])
    diff = lambda means: float(means[0] - means[1])  # noqa: E731
    assert item_bootstrap(m, diff) == item_bootstrap(m, diff, n=1000, seed=0)
    assert item_bootstrap(m, diff) != item_bootstrap(m, diff, n=1001, seed=0)
    assert item_bootstrap(m, diff) != item_bootstrap(m, diff, n=1000, seed=1)
    assert two_sample_difference_ci(a, b) == two_sample_difference_ci(a, b, n=1000, seed=0)
    assert two_sample_difference_ci(a, b) != two_sample_difference_ci(a, b, n=1001, seed=0)


def test_ratio_ci_drops_empty_replicates_silently():
    """A replicate whose denominator sums to 0 (0/0) is dropped without a numpy warning."""
    idx = np.array([[0, 0], [1, 1], [0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = ratio_ci([0.0, 1.0], [0.0, 2.0], idx)
    assert (lo, hi) == pytest.approx((0.5, 0.5))


def test_mean_std_needs_values_and_a_known_ddof():
    with pytest.raises(ValueError, match="mean_std needs at least one value"):
        mean_std([])
    with pytest.raises(ValueError, match="takes ddof 0 .population. or 1 .sample., got 2"):
        mean_std([1.0, 2.0, 4.0], ddof=2)


def test_one_item_gives_its_own_statistic_as_the_interval():
    assert bootstrap_ci([3.0]) == (3.0, 3.0)
    assert paired_difference_ci([3.0], [1.0]) == (2.0, 2.0, 2.0)


def test_the_confidence_level_is_passed_on():
    xs = [0.1, 0.5, 0.2, 0.9, 0.4, 0.7, 0.3, 0.8]
    assert bootstrap_ci(xs, level=0.5, n=200) != bootstrap_ci(xs, n=200)
    lo90, hi90 = bootstrap_ci(xs, level=0.5, n=200)
    lo95, hi95 = bootstrap_ci(xs, n=200)
    assert lo95 < lo90 < hi90 < hi95
    _, plo, phi = paired_difference_ci(xs, xs[::-1], level=0.5, n=200)
    _, qlo, qhi = paired_difference_ci(xs, xs[::-1], n=200)
    assert qlo < plo < phi < qhi
    (blo, bhi), (clo, chi) = exact_binomial_interval(3, 10, level=0.5), exact_binomial_interval(3, 10)
    assert clo < blo < bhi < chi


def test_paired_scores_must_have_one_shape():
    with pytest.raises(ValueError, match=r"needs paired scores, got \(2,\) and \(3,\)"):
        paired_difference_ci([1.0, 2.0], [1.0, 2.0, 3.0])


def test_a_second_empty_sample_gives_nan():
    assert all(math.isnan(v) for v in two_sample_difference_ci([1.0, 2.0], []))


def test_a_single_trial_is_a_sample():
    lo, hi = exact_binomial_interval(1, 1)
    assert lo == pytest.approx(0.025) and hi == 1.0
    assert binomial_p_above(1, 1, 0.5) == pytest.approx(0.5)
