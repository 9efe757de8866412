"""icl_bias metrics against hand-computed values: calibration, generated labels, h-accuracy, effects;
underflowing label-word scores, the bootstrap defaults the tables rely on (``n=1000``, ``seed=0``) and the
generated-label reader's edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.stats import item_bootstrap, paired_difference_ci
from wobble.studies.icl_bias import metrics as M

WORDS = ("0", "1")
L = math.log


def test_label_probs_normalize_the_two_words():
    assert M.label_probs({"0": L(0.2), "1": L(0.6), "x": L(0.1)}, WORDS) == pytest.approx([0.25, 0.75])
    with pytest.raises(ValueError):
        M.label_probs({"0": L(0.2)}, WORDS)


def test_content_free_probs_average_and_skip_unusable_prompts():
    cf = [{"0": L(0.6), "1": L(0.2)}, {"0": L(0.2), "1": L(0.2)}, {"0": -math.inf, "1": L(0.9)}]
    # mean of raw probabilities over the two usable prompts: [0.4, 0.2] -> [2/3, 1/3]
    assert M.content_free_probs(cf, WORDS) == pytest.approx([2 / 3, 1 / 3])
    assert M.content_free_probs([{"0": -math.inf, "1": 0.0}], WORDS) is None
    assert M.content_free_probs([{"0": None, "1": 0.0}], WORDS) is None  # the runner writes -inf as null


def test_calibration_can_flip_the_label():
    lp = {"0": L(0.3), "1": L(0.2)}  # normalized [0.6, 0.4]: uncalibrated label 0
    assert M.predict_label(lp, WORDS) == 0
    # p_cf = [2/3, 1/3]: [0.6 / (2/3), 0.4 / (1/3)] = [0.9, 1.2] -> label 1
    assert M.predict_label(lp, WORDS, np.array([2 / 3, 1 / 3])) == 1
    assert M.predict_label({"0": L(0.5), "1": L(0.5)}, WORDS) == 0  # a tie goes to label 0
    assert M.predict_label({"no": L(0.1), "yes": L(0.3)}, ("no", "yes")) == 1


@pytest.mark.parametrize("text, expected", [
    ("The review is short. Therefore, the answer is 1.", 1),
    ("The review is long. Therefore, the answer is 0.\n\nNext review", 0),
    ("Therefore, the answer is the 1.", 1),
    ("1", 1), (" 0 ", 0),
    ("Therefore, the answer is yes.", None), ("The review is long.", None), ("", None),
    ("answer is 1 or 0", None),
])
def test_parse_generated_label(text, expected):
    assert M.parse_generated_label(text) == expected


def test_h_outcome():
    assert M.h_outcome(1, 1, 0) == {"h1": 1.0, "h2": 0.0, "neither": 0.0}
    assert M.h_outcome(1, 0, 1) == {"h1": 0.0, "h2": 1.0, "neither": 0.0}
    assert M.h_outcome(None, 0, 1) == {"h1": 0.0, "h2": 0.0, "neither": 1.0}
    with pytest.raises(ValueError):
        M.h_outcome(1, 1, 1)


def _records():
    # item a: (h1, h2) = (1, 0); item b: (0, 1); two prompt sets; b has no answer in set 1
    return [{"uid": "a", "set": 0, "pred": 1, "h1": 1, "h2": 0}, {"uid": "a", "set": 1, "pred": 0, "h1": 1, "h2": 0},
            {"uid": "b", "set": 0, "pred": None, "h1": 0, "h2": 1}, {"uid": "z", "set": 0, "pred": 1, "h1": 0, "h2": 1}]


def test_outcome_matrix():
    h1 = M.outcome_matrix(_records(), ["a", "b"], [0, 1], "h1")
    assert h1[0].tolist() == [1.0, 0.0] and h1[1, 0] == 0.0 and math.isnan(h1[1, 1])
    assert M.outcome_matrix(_records(), ["a", "b"], [0, 1], "neither")[1, 0] == 1.0
    with pytest.raises(ValueError):
        M.outcome_matrix([], [], [], "h3")


def test_accuracy_mean_over_prompt_sets_with_item_bootstrap():
    m = np.array([[1.0, 1.0], [0.0, 1.0]])  # set 0: 50 %, set 1: 100 % -> 75 %
    point, lo, hi = M.accuracy(m, n=2000, seed=1)
    # replicates: both rows a -> 100, both b -> 50, mixed -> 75 (each extreme has mass 1/4)
    assert (point, lo, hi) == pytest.approx((75.0, 50.0, 100.0))


def test_effect_is_paired_by_item():
    intervention = np.array([[1.0], [1.0], [0.0], [1.0]])
    baseline = np.array([[0.0], [1.0], [0.0], [0.0]])
    point, lo, hi = M.effect(intervention, baseline, n=500, seed=3)
    assert point == pytest.approx(50.0)
    ref = paired_difference_ci(intervention[:, 0], baseline[:, 0], n=500, seed=3)
    assert (lo, hi) == pytest.approx((100 * ref[1], 100 * ref[2]))
    with pytest.raises(ValueError):
        M.effect(intervention, baseline[:2])


def test_mean_over_pairs():
    a = (np.array([[1.0], [1.0]]), np.array([[0.0], [1.0]]))  # +50 points
    b = (np.array([[1.0], [0.0]]), np.array([[1.0], [0.0]]))  # 0 points
    point, lo, hi = M.mean_effect([a, b], n=300, seed=0)
    assert point == pytest.approx(25.0) and lo <= point <= hi
    acc = M.mean_accuracy([np.array([[1.0], [0.0]]), np.array([[1.0], [1.0]])], n=2000, seed=0)
    # pair 1 replicates {0, 50, 100} with mass {1/4, 1/2, 1/4}; pair 2 always 100
    assert acc == pytest.approx((75.0, 50.0, 100.0))
    assert all(math.isnan(v) for v in M.mean_effect([], n=10))


def test_label_probs_refuse_scores_that_underflow_to_zero():
    # exp(-1000) is 0.0 in float64: finite log-probs, but no probability mass to normalize
    with pytest.raises(ValueError):
        M.label_probs({"0": -1000.0, "1": -1000.0}, WORDS)


def test_content_free_probs_none_when_the_mean_underflows():
    assert M.content_free_probs([{"0": -1000.0, "1": -1000.0}], WORDS) is None


def test_content_free_probs_keep_a_row_only_when_both_words_are_finite():
    cf = [{"0": math.log(0.5), "1": math.log(0.5)}, {"0": math.log(0.9), "1": -math.inf}]
    assert M.content_free_probs(cf, WORDS) == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("text, expected", [
    ("It is long, so the answer is 0. But the answer is 1.", 1),   # the LAST "answer is "
    ("The answer is 1!", 1),
    ("the answer is an 0", 0),                                      # articles dropped
    ("answer is 1\n\nanswer is 0", 1),                              # only the first paragraph counts
    ("The ANSWER IS 1", None),                                      # the marker is lower case, as the authors'
])
def test_parse_generated_label_edge_cases(text, expected):
    assert M.parse_generated_label(text) == expected


def _matrix(rows: int = 30, cols: int = 2, seed: int = 5) -> np.ndarray:
    """Continuous values, so that two different bootstrap settings cannot give the same percentiles."""
    return np.random.default_rng(seed).random(size=(rows, cols))


def test_accuracy_defaults_are_1000_resamples_seed_0():
    m = _matrix()
    point, lo, hi = item_bootstrap(m, lambda c: float(np.nanmean(c)), n=1000, seed=0)
    assert M.accuracy(m) == pytest.approx((100 * point, 100 * lo, 100 * hi))
    assert M.accuracy(m) != pytest.approx(M.accuracy(m, n=999))
    assert M.accuracy(m) != pytest.approx(M.accuracy(m, seed=1))


def test_effect_defaults_are_1000_resamples_seed_0():
    a, b = _matrix(seed=6), _matrix(seed=7)
    assert M.effect(a, b) == pytest.approx(M.effect(a, b, n=1000, seed=0))
    assert M.effect(a, b) != pytest.approx(M.effect(a, b, n=1000, seed=1))
    assert M.effect(a, b) != pytest.approx(M.effect(a, b, n=999, seed=0))


def test_effect_uses_every_intervention_column():
    # intervention: two prompt sets, 100 % and 0 % -> 50 %; baseline one set at 0 % -> +50 points
    intervention = np.array([[1.0, 0.0], [1.0, 0.0]])
    baseline = np.array([[0.0], [0.0]])
    assert M.effect(intervention, baseline, n=50)[0] == pytest.approx(50.0)


def test_mean_over_pairs_defaults_and_pair_seeds():
    pairs = [(_matrix(seed=8), _matrix(seed=9)), (_matrix(seed=10), _matrix(seed=11))]
    assert M.mean_effect(pairs) == pytest.approx(M.mean_effect(pairs, n=1000, seed=0))
    assert M.mean_effect(pairs) != pytest.approx(M.mean_effect(pairs, n=1000, seed=1))
    assert M.mean_effect(pairs) != pytest.approx(M.mean_effect(pairs, n=999, seed=0))
    mats = [_matrix(seed=12), _matrix(seed=13)]
    assert M.mean_accuracy(mats) == pytest.approx(M.mean_accuracy(mats, n=1000, seed=0))
    assert M.mean_accuracy(mats) != pytest.approx(M.mean_accuracy(mats, n=1000, seed=1))
    assert M.mean_accuracy(mats) != pytest.approx(M.mean_accuracy(mats, n=999, seed=0))
    st = [(m, lambda c: float(np.nanmean(c))) for m in mats]
    assert M.mean_over_pairs(st) == pytest.approx(M.mean_over_pairs(st, n=1000, seed=0))
    assert M.mean_over_pairs(st) != pytest.approx(M.mean_over_pairs(st, n=999, seed=0))


def test_mean_over_pairs_point_is_the_mean_of_the_pairs_statistics():
    # pair 1: column means [1.0, 0.0] -> stat max = 1.0; pair 2: [0.5, 0.5] -> 0.5; mean 0.75
    st = [(np.array([[1.0, 0.0], [1.0, 0.0]]), lambda c: float(np.max(c))),
          (np.array([[1.0, 0.0], [0.0, 1.0]]), lambda c: float(np.max(c)))]
    point, lo, hi = M.mean_over_pairs(st, n=200, seed=0)
    assert point == pytest.approx(0.75)
    assert 0.5 <= lo <= hi <= 1.0


def test_outcome_matrix_reads_every_measure():
    recs = [{"uid": "a", "set": 0, "pred": 0, "h1": 1, "h2": 0}]
    assert [M.outcome_matrix(recs, ["a"], [0], m)[0, 0] for m in M.MEASURES] == [0.0, 1.0, 0.0]


def test_effect_refuses_different_items_by_name():
    with pytest.raises(ValueError, match="same items"):
        M.effect(np.zeros((4, 1)), np.zeros((2, 1)))


def test_percent_scaling_of_every_interval_end():
    """Continuous values (no end at 0 or 1, where 100·x = 100/x or 101·0 = 100·0 would hide a wrong scale)."""
    from wobble.stats import paired_difference_ci

    a, b = _matrix(seed=20, cols=1), _matrix(seed=21, cols=1)
    ref = paired_difference_ci(a[:, 0], b[:, 0], n=300, seed=2)
    assert M.effect(a, b, n=300, seed=2) == pytest.approx(tuple(100 * x for x in ref))
    mats = [_matrix(seed=22), _matrix(seed=23)]
    st = [(m, lambda c: float(np.nanmean(c))) for m in mats]
    assert M.mean_accuracy(mats, n=300, seed=2) == pytest.approx(tuple(100 * x for x in M.mean_over_pairs(st, n=300,
                                                                                                        seed=2)))
    pairs = [(_matrix(seed=24), _matrix(seed=25)), (_matrix(seed=26), _matrix(seed=27))]
    eff = [(np.hstack([x, y]), lambda c: float(np.nanmean(c[:2]) - np.nanmean(c[2:]))) for x, y in pairs]
    assert M.mean_effect(pairs, n=300, seed=2) == pytest.approx(tuple(100 * x for x in M.mean_over_pairs(eff, n=300,
                                                                                                       seed=2)))


@pytest.mark.parametrize("text, label", [
    ("Therefore, the answer is The 1.", 1),    # lower-cased before the articles go
    ("Therefore, the answer is 1a.", None),     # "a" glued to the label is no article: "1a" is no label
])
def test_a_generated_answer_is_read_as_the_docstring_says(text, label):
    assert M.parse_generated_label(text) == label


def test_answers_of_prompt_sets_not_asked_for_are_left_out():
    rec = {"uid": "u", "set": 2, "pred": 1, "h1": 1, "h2": 0}
    assert np.isnan(M.outcome_matrix([rec], ["u"], [0, 1], "h1")).all()
