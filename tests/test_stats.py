"""Shared statistics and seeding (wobble.stats, wobble.seeding) against hand-computed values.

The bootstrap functions are pinned against the algorithm their docstrings state, written out here with
numpy (``default_rng(seed)``, ``n`` resamples of ``m`` items, linear-interpolation percentiles), so a
change of a default (``n=1000``, ``seed=0``, ``level=0.95``) or of the resampling shows. Seeds are part of
the results: a changed separator or digest width would silently re-draw every split and sample, so their
exact values are pinned too."""

from __future__ import annotations

import hashlib
import math
import random
import warnings

import numpy as np
import pytest

from wobble.seeding import derive_seed, make_rng, rank_key, seeded_order, seeded_sample
from wobble.stats import (binomial_p_above, bootstrap_ci, bootstrap_indices, exact_binomial_interval, item_bootstrap,
                          mean_std, paired_difference_ci, percentile_interval, ratio_ci, two_sample_difference_ci)


def test_mean_std_is_population_std_like_the_fork():
    # Word Analogy, original instruction, per-seed EM of the fork: std 0.36799 (ddof=0), printed 0.4 in Table 4
    mean, std = mean_std([51.875, 51.25, 52.125])
    assert mean == pytest.approx(51.75) and std == pytest.approx(0.3679900360969936)
    assert mean_std([51.875, 51.25, 52.125], ddof=1)[1] == pytest.approx(0.4506939094)
    assert mean_std([3.0]) == (3.0, 0.0)
    assert mean_std([3.0], ddof=1) == (3.0, None)
    with pytest.raises(ValueError):
        mean_std([])


def test_bootstrap_ci():
    values = [0, 1] * 50
    lo, hi = bootstrap_ci(values, n=500, seed=1)
    assert (lo, hi) == bootstrap_ci(values, n=500, seed=1)  # seeded
    assert lo < 0.5 < hi and 0.35 < lo and hi < 0.65
    assert bootstrap_ci([0.3] * 10, n=50, seed=0) == pytest.approx((0.3, 0.3))
    assert bootstrap_ci(values, n=300, seed=1) != bootstrap_ci(values, n=300, seed=2)
    assert all(math.isnan(x) for x in bootstrap_ci([], n=10))


def test_bootstrap_resamples_items_with_all_their_variants():
    # Two items: one with 3 variants all "1", one with 1 variant "0". Resampling items (not variants)
    # gives pooled rates of exactly 0, 3/4 or 1 — never e.g. 1/2 as a variant-level resample could.
    items = [[1, 1, 1], [0]]
    pooled = lambda xs: sum(sum(v) for v in xs) / sum(len(v) for v in xs)  # noqa: E731
    idx = bootstrap_indices(2, 200, seed=3)
    reps = {round(pooled([items[i] for i in row]), 6) for row in idx}
    assert reps <= {0.0, 0.75, 1.0} and len(reps) == 3
    lo, hi = ratio_ci([3, 0], [3, 1], idx)
    assert (lo, hi) == pytest.approx(bootstrap_ci(items, pooled, n=200, seed=3))
    assert lo == 0.0 and hi == 1.0


def test_bootstrap_indices_match_bootstrap_ci_draws():
    rng = np.random.default_rng(7)
    first = rng.integers(0, 5, size=5)
    assert list(bootstrap_indices(5, 3, 7)[0]) == list(first)
    assert bootstrap_indices(0, 10, 0).shape == (0, 0)


def test_paired_difference_ci_by_hand():
    mean, lo, hi = paired_difference_ci([1, 1, 1, 1], [0, 0, 0, 0], n=50, seed=0)
    assert (mean, lo, hi) == (1.0, 1.0, 1.0)
    mean, lo, hi = paired_difference_ci([1, 0, 1, 0], [0, 0, 0, 0], n=400, seed=0)
    assert mean == 0.5 and 0.0 <= lo < 0.5 < hi <= 1.0
    assert all(math.isnan(x) for x in paired_difference_ci([], []))
    with pytest.raises(ValueError):
        paired_difference_ci([1, 2], [1])


def test_derive_seed_is_pinned_and_process_independent():
    # sha256("1\x1ftask\x1fcond")[:8] big-endian, computed once and pinned
    assert derive_seed(1, "task", "cond") == derive_seed("1", "task", "cond")
    assert derive_seed(1, "task", "cond") != derive_seed(1, "task", "other")
    assert make_rng(1, "x").random() == random.Random(derive_seed(1, "x")).random()


def test_seeded_sample_keeps_input_order_and_is_stable():
    items = [f"q{i}" for i in range(20)]
    a = seeded_sample(items, 5, 0, str, salt="s")
    assert len(a) == 5 and a == [x for x in items if x in a]
    assert a == seeded_sample(items, 5, 0, str, salt="s")
    assert a != seeded_sample(items, 5, 0, str, salt="other salt") or a != seeded_sample(items, 5, 1, str, salt="s")
    assert seeded_sample(items, None, 0, str, salt="s") == items
    assert sorted(seeded_order(items, 0, str, salt="s")) == sorted(items)


def test_item_bootstrap_resamples_rows_and_applies_statistic_to_column_means():
    from wobble.stats import item_bootstrap

    m = np.array([[10.0, 4.0], [20.0, 14.0], [30.0, 24.0]])  # every item drops by exactly 6
    point, lo, hi = item_bootstrap(m, lambda c: c[0] - c[1], n=200, seed=1)
    assert (point, lo, hi) == pytest.approx((6.0, 6.0, 6.0))
    m = np.array([[1.0, np.nan], [3.0, 5.0]])  # NaN ignored in column means: (2.0, 5.0)
    assert item_bootstrap(m, lambda c: c[1] - c[0], n=10, seed=0)[0] == pytest.approx(3.0)
    assert all(math.isnan(x) for x in item_bootstrap(np.zeros((0, 2)), lambda c: c[0]))


def test_two_sample_difference_ci_by_hand():
    from wobble.stats import two_sample_difference_ci

    assert two_sample_difference_ci([5, 5, 5], [2, 2], n=100, seed=0) == pytest.approx((3.0, 3.0, 3.0))
    d, lo, hi = two_sample_difference_ci([0, 10], [0, 0, 0], n=500, seed=0)
    assert d == 5.0 and lo == 0.0 and hi == 10.0
    assert all(math.isnan(x) for x in two_sample_difference_ci([], [1]))


def test_exact_binomial_interval_of_zero_of_ten_is_not_a_point():
    from wobble.stats import exact_binomial_interval

    # Clopper-Pearson, 0 of 10: lower 0, upper 1 - 0.025^(1/10) = 0.30850
    lo, hi = exact_binomial_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.308497, abs=1e-6)
    # 10 of 10 mirrors it; 5 of 10: [0.18709, 0.81291] (the tabulated exact interval)
    assert exact_binomial_interval(10, 10) == (pytest.approx(1 - 0.308497, abs=1e-6), 1.0)
    lo, hi = exact_binomial_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.187086, abs=1e-6), pytest.approx(0.812914, abs=1e-6))
    assert all(math.isnan(x) for x in exact_binomial_interval(0, 0))


def test_binomial_p_above_chance_is_the_upper_tail():
    from wobble.stats import binomial_p_above

    # P(X >= 8 | n=10, p=0.5) = (45 + 10 + 1) / 1024 = 0.0546875
    assert binomial_p_above(8, 10, 0.5) == pytest.approx(56 / 1024)
    # P(X >= 3 | n=15, p=0.25) = 1 - P(X <= 2) = 1 - (0.75^15 + 15*0.25*0.75^14 + 105*0.0625*0.75^13)
    p_le2 = 0.75 ** 15 + 15 * 0.25 * 0.75 ** 14 + 105 * 0.0625 * 0.75 ** 13
    assert binomial_p_above(3, 15, 0.25) == pytest.approx(1 - p_le2)
    assert binomial_p_above(0, 0, 0.5) == 1.0


def test_cluster_bootstrap_brings_every_unit_of_a_drawn_cluster():
    from wobble.stats import cluster_bootstrap_indices

    clusters = ["t1", "t1", "t2", "t3", "t3", "t3"]
    reps = cluster_bootstrap_indices(clusters, 50, seed=3)
    assert len(reps) == 50
    whole = {"t1": [0, 1], "t2": [2], "t3": [3, 4, 5]}
    for rep in reps:
        rest = list(rep)
        drawn = 0
        while rest:  # the row is a concatenation of whole clusters, three of them (one draw per cluster)
            c = clusters[rest[0]]
            assert rest[:len(whole[c])] == whole[c]
            rest = rest[len(whole[c]):]
            drawn += 1
        assert drawn == 3
    assert any(len(r) != 6 for r in reps)  # sizes vary with the clusters drawn
    assert cluster_bootstrap_indices([], 5, 0) == []
    again = cluster_bootstrap_indices(clusters, 50, seed=3)
    assert all((a == b).all() for a, b in zip(reps, again))


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


# ----------------------------------------------------------------- defaults, edge cases and errors

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


# ----------------------------------------------------------------------------------------- seeding

def test_derive_seed_value_is_pinned():
    # sha256 of the parts joined by U+001F, first 8 bytes big-endian
    by_hand = int.from_bytes(hashlib.sha256("1\x1ftask\x1fcond".encode()).digest()[:8], "big")
    assert derive_seed(1, "task", "cond") == by_hand == 10203185019986281137
    assert derive_seed(1, "task", "cond") < 2 ** 64


def test_rank_key_is_sha256_of_salt_seed_key():
    assert rank_key("s", 3, "q1") == hashlib.sha256("s\x1f3\x1fq1".encode()).hexdigest()


def test_seeded_order_sorts_by_rank_key():
    items = [f"q{i}" for i in range(10)]
    assert seeded_order(items, 3, str, salt="s") == sorted(items, key=lambda x: rank_key("s", 3, x))
    assert seeded_order(items, 3, str, salt="s") != items


def test_seeded_sample_returns_a_list_and_picks_the_lowest_ranks():
    assert seeded_sample(("a", "b"), None, 0, str, salt="s") == ["a", "b"]
    assert seeded_sample(("a", "b"), 2, 0, str, salt="s") == ["a", "b"]
    items = [f"q{i}" for i in range(10)]
    lowest = set(sorted(items, key=lambda x: rank_key("s", 0, x))[:3])
    assert seeded_sample(items, 3, 0, str, salt="s") == [x for x in items if x in lowest]
