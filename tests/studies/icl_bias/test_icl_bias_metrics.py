"""icl_bias metrics against hand-computed values: calibration, generated labels, h-accuracy, effects."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.stats import paired_difference_ci
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
