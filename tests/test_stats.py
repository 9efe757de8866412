"""Shared statistics and seeding (wobble.stats, wobble.seeding) against hand-computed values."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from wobble.seeding import derive_seed, make_rng, seeded_order, seeded_sample
from wobble.stats import bootstrap_ci, bootstrap_indices, mean_std, paired_difference_ci, ratio_ci


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
