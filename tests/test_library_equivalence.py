"""What is computed by a well-kept library and what by hand, shown against the library on the same input.

Each hand-written statistic that stays is either proven equal to the library here (so it is kept for speed or
for sharing one draw between statistics) or shown to differ in the one respect the ledger needs; each library
call that replaced hand-written code is checked where wobble's use differs from the library's default.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from wobble.stats import (bootstrap_ci, bootstrap_indices, cluster_bootstrap_indices, item_bootstrap, mean_std,
                          paired_difference_ci, percentile_interval, ratio_ci, two_sample_difference_ci)

REL = 1e-12  # scipy's quantile and numpy's percentile interpolate in another order: equal up to rounding


def _scipy_ci(data, statistic, seed, n=400, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's DegenerateDataWarning / division warnings where it gives NaN
        res = stats.bootstrap(data, statistic, n_resamples=n, method="percentile", rng=np.random.default_rng(seed),
                              **kw)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# ------------------------------------------------------------------------------- the percentile bootstrap

@pytest.mark.parametrize("m", [2, 3, 7, 40, 101])
def test_bootstrap_indices_are_scipys_resamples(m):
    drawn = []

    def record(i, axis=-1):
        drawn.append(np.array(i))
        return np.mean(i, axis=axis)

    stats.bootstrap((np.arange(m),), record, n_resamples=300, method="percentile", rng=np.random.default_rng(11))
    assert np.array_equal(np.concatenate([d for d in drawn if d.ndim == 2]), bootstrap_indices(m, 300, 11))


def test_one_shared_draw_gives_each_statistic_scipys_interval():
    # followup's metrics take every quantity of a group (accuracy before, after, the flips) from one index matrix;
    # each equals scipy's own bootstrap of that quantity from the same seed
    rng = np.random.default_rng(2)
    before, after = rng.random(25) < 0.7, rng.random(25) < 0.5
    idx = bootstrap_indices(25, 400, 5)
    for x in (before, before & after, before & ~after):
        ours = percentile_interval(x.astype(float)[idx].mean(axis=1))
        assert ours == pytest.approx(_scipy_ci((x.astype(float),), np.mean, 5), rel=REL)


def test_bootstrap_ci_and_paired_difference_ci_are_scipys():
    x = np.random.default_rng(3).random(9)
    y = np.random.default_rng(4).random(9)
    assert bootstrap_ci(x, n=400, seed=5) == _scipy_ci((x,), np.mean, 5)
    d, lo, hi = paired_difference_ci(x, y, n=400, seed=5)
    assert d == pytest.approx(float(np.mean(x - y)))
    assert (lo, hi) == _scipy_ci((x, y), lambda a, b, axis=-1: np.mean(a - b, axis=axis), 5, paired=True)
    # and the vectorised form the studies use draws the same resamples
    assert (lo, hi) == pytest.approx(percentile_interval((x - y)[bootstrap_indices(9, 400, 5)].mean(axis=1)), rel=REL)
    # scipy asks for two items; one item's every resample is itself
    with pytest.raises(ValueError):
        stats.bootstrap(([1.0],), np.mean, n_resamples=10, method="percentile")
    assert bootstrap_ci([4.0], n=10) == (4.0, 4.0) and paired_difference_ci([7.0], [2.0], n=10) == (5.0, 5.0, 5.0)


def test_ratio_ci_is_scipys_paired_bootstrap():
    num, den = np.array([1.0, 0.0, 2.0, 1.0, 3.0]), np.array([2.0, 1.0, 3.0, 1.0, 4.0])
    pooled = lambda a, b, axis=-1: a.sum(axis=axis) / b.sum(axis=axis)  # noqa: E731
    ours = ratio_ci(num, den, bootstrap_indices(5, 400, 8))
    assert ours == pytest.approx(_scipy_ci((num, den), pooled, 8, paired=True), rel=REL)
    # an item with no denominator (a question with no mapped answer): a resample of only such items has no ratio;
    # scipy counts it as infinite and its interval runs to inf, ours leaves it out
    num, den = np.array([1.0, 1.0]), np.array([0.0, 2.0])
    lo, hi = _scipy_ci((num, den), pooled, 8, paired=True)
    assert math.isinf(hi)
    idx = bootstrap_indices(2, 400, 8)
    kept = den[idx].sum(axis=1) > 0
    assert ratio_ci(num, den, idx) == percentile_interval(num[idx].sum(axis=1)[kept] / den[idx].sum(axis=1)[kept])
    assert all(map(math.isfinite, ratio_ci(num, den, idx)))


def test_percentile_interval_drops_what_scipy_propagates():
    reps = np.array([0.1, 0.4, np.nan, 0.3, 0.2])
    assert percentile_interval(reps) == pytest.approx(tuple(np.percentile([0.1, 0.4, 0.3, 0.2], [2.5, 97.5])))
    assert all(math.isnan(float(q)) for q in stats.quantile(reps, np.array([0.025, 0.975])))


def test_item_bootstrap_is_scipys_bootstrap_over_rows():
    m = np.random.default_rng(6).random((12, 3))
    diff = lambda cols: float(cols[0] - cols[2])  # noqa: E731
    point, lo, hi = item_bootstrap(m, diff, n=400, seed=9)
    assert point == pytest.approx(diff(m.mean(axis=0)))
    rows = lambda r: diff(np.nanmean(m[r], axis=0))  # noqa: E731
    assert (lo, hi) == pytest.approx(_scipy_ci((np.arange(12),), rows, 9, vectorized=False), rel=REL)
    # an item scored under one condition only (NaN elsewhere): a resample without any item of that condition
    # has no mean there; scipy's interval is then NaN, ours leaves that resample out
    m = np.array([[1.0, 0.0], [0.0, np.nan], [1.0, np.nan], [0.0, np.nan]])
    diff = lambda cols: float(cols[0] - cols[1])  # noqa: E731
    rows = lambda r: diff(np.nanmean(m[r], axis=0))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert math.isnan(_scipy_ci((np.arange(4),), rows, 9, vectorized=False)[0])
    assert all(map(math.isfinite, item_bootstrap(m, diff, n=400, seed=9)))


def test_two_sample_difference_ci_draws_each_sample_from_its_own_seed():
    a, b = np.random.default_rng(1).random(9), np.random.default_rng(2).random(6)
    _, lo, hi = two_sample_difference_ci(a, b, n=400, seed=3)

    def distribution(x, seed):
        res = stats.bootstrap((x,), np.mean, n_resamples=400, method="percentile", rng=np.random.default_rng(seed))
        return res.bootstrap_distribution

    # ours: each sample's scipy bootstrap distribution from its own seed (seed, seed + 1), differenced
    assert (lo, hi) == pytest.approx(percentile_interval(distribution(a, 3) - distribution(b, 4)), rel=REL)
    # scipy's two-sample bootstrap draws both samples from one generator: another interval from the same seed,
    # so replacing ours would move every committed two-sample interval of the instructions ledger
    joint = _scipy_ci((a, b), lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis), 3)
    assert joint != pytest.approx((lo, hi), rel=1e-6)


def test_cluster_bootstrap_draws_scipys_resamples_of_clusters():
    clusters = ["t1", "t1", "t2", "t3", "t3", "t3", "t4"]
    members = {"t1": [0, 1], "t2": [2], "t3": [3, 4, 5], "t4": [6]}
    order = ["t1", "t2", "t3", "t4"]
    drawn = []

    def record(i, axis=-1):
        drawn.append(np.array(i))
        return np.mean(i, axis=axis)

    stats.bootstrap((np.arange(4),), record, n_resamples=50, method="percentile", rng=np.random.default_rng(3))
    picks = np.concatenate([d for d in drawn if d.ndim == 2])
    expanded = [np.array([u for j in row for u in members[order[j]]]) for row in picks]
    ours = cluster_bootstrap_indices(clusters, 50, seed=3)
    assert len(ours) == 50 and all(np.array_equal(a, b) for a, b in zip(ours, expanded))


# ------------------------------------------------------------------------------------- mean ± std over seeds

def test_mean_std_is_numpys_up_to_rounding_and_exactly_zero_for_agreeing_seeds():
    for vals in ([51.875, 51.25, 52.125], [0.1, 0.2, 0.3, 0.35], [12.5, 40.0]):
        assert mean_std(vals) == pytest.approx((np.mean(vals), np.std(vals)), rel=REL)
        assert mean_std(vals, ddof=1)[1] == pytest.approx(np.std(vals, ddof=1), rel=REL)
    # three seeds that agree: the standard library's std is exactly 0, numpy's a rounding residue
    assert mean_std([0.1, 0.1, 0.1])[1] == 0.0 and np.std([0.1, 0.1, 0.1]) > 0.0


# -------------------------------------------------------------------------------------- F1, kappa, entropy

def test_classifier_scores_are_sklearns_with_none_as_a_label():
    from sklearn.metrics import accuracy_score, f1_score

    from wobble.studies.first_token.metrics import classifier_scores

    gold = ["Yes", "No", "Refused", "Yes", "No", "No", "Maybe"]
    pred = ["Yes", "No", "Yes", "Yes", "Refused", "No", "Maybe"]
    s = classifier_scores(gold, pred)
    assert s["accuracy"] == accuracy_score(gold, pred)
    assert s["macro_f1"] == f1_score(gold, pred, average="macro", zero_division=0)
    assert s["weighted_f1"] == f1_score(gold, pred, average="weighted", zero_division=0)
    # a text answer naming no option is None beside option texts: scikit-learn refuses the mix of label types
    with_none = ["Yes", None, "Yes", "Yes", "Refused", "No", None]
    with pytest.raises((TypeError, ValueError)):  # it cannot order None and str (versions differ in the error)
        f1_score(gold, with_none, average="macro", zero_division=0)
    s = classifier_scores(gold, with_none)
    # the same as scikit-learn with None spelled as a label of its own ("<none>", absent from gold)
    spelled = ["<none>" if p is None else p for p in with_none]
    assert s["macro_f1"] == pytest.approx(f1_score(gold, spelled, average="macro", zero_division=0), rel=REL)
    assert s["weighted_f1"] == pytest.approx(f1_score(gold, spelled, average="weighted", zero_division=0), rel=REL)


def test_cohen_kappa_is_sklearns_and_none_where_undefined():
    from sklearn.metrics import cohen_kappa_score

    from wobble.studies.followup.judge import cohen_kappa

    a, b = ["1", "2", "3", "3", "4", "2", "1"], ["1", "2", "3", "4", "4", "1", "1"]
    assert cohen_kappa(a, b) == cohen_kappa_score(a, b)
    # both raters use one label throughout: chance agreement is 1, kappa 0/0; scikit-learn warns and gives NaN
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert math.isnan(cohen_kappa_score(["3", "3"], ["3", "3"]))
    assert caught
    assert cohen_kappa(["3", "3"], ["3", "3"]) is None


def test_entropies_are_scipys_in_nats():
    from wobble.studies.first_token.claims_counts import letter_entropy
    from wobble.studies.first_token.metrics import answer_entropy

    answers = ["a", "b", "a", "c", "a", None]
    assert answer_entropy(answers) == pytest.approx(float(stats.entropy([3, 1, 1])), rel=REL)
    assert answer_entropy(answers, drop_none=False) == pytest.approx(float(stats.entropy([3, 1, 1, 1])), rel=REL)
    assert letter_entropy({"A": 2.0, "B": 2.0, "C": 0.0}) == pytest.approx(math.log(2), rel=REL)
    assert math.isnan(letter_entropy({"A": 0.0})) and answer_entropy(["x", "x"]) == 0.0
