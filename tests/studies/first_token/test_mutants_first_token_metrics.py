"""wobble.studies.first_token.metrics: behaviour the mutation run (tests/tools/mutate.py) found untested,
on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from wobble.studies.first_token.metrics import (
    answer_entropy,
    choice_distribution,
    classifier_scores,
    consistency_entropy,
    first_token_choice,
    first_token_is_letter,
    mapping_summary,
    mismatch_rate,
    refusal_mismatch_rate,
    refusal_rate,
    text_starts_with_letter,
)


def test_refusal_part_counts_text_refusals_the_first_token_does_not_share():
    pairs = [("Refused", "Refused"), ("Refused", "Refused"), ("x", "Refused"), ("x", "y")]
    # only row 3: the text refuses and the first token does not -> 1/4
    assert refusal_mismatch_rate(pairs) == 0.25
    # the first token refusing while the text answers is not a refusal mismatch
    assert refusal_mismatch_rate([("Refused", "x")]) == 0.0


def test_rates_of_nothing_are_nan():
    for value in (refusal_mismatch_rate([]), refusal_rate([]), consistency_entropy([]), consistency_entropy([[None]])):
        assert isinstance(value, float) and math.isnan(value)


def test_pairs_must_be_pairs():
    with pytest.raises(ValueError, match=r"expected \(first_token_option, text_option\) pairs"):
        mismatch_rate([("x", "y", "z")])


def test_choice_distribution_of_nothing_and_of_mixed_answers():
    out = choice_distribution([], all_letters="AB")
    assert list(out) == ["A", "B"] and all(math.isnan(v) for v in out.values())
    # a text answer that names no option (None) is a value of its own, sorted by its string form
    assert choice_distribution(["B", None, "B", "A"]) == {"A": 0.25, "B": 0.5, None: 0.25}


def test_entropy_is_never_negative_zero():
    h = answer_entropy(["a", "a", "a"])
    assert h == 0.0 and math.copysign(1.0, h) == 1.0


def test_consistency_entropy_passes_drop_none_on():
    # [a, None]: dropping None leaves one answer (0 nats); keeping it gives two outcomes (ln 2)
    assert consistency_entropy([["a", None]]) == 0.0
    assert consistency_entropy([["a", None]], drop_none=False) == pytest.approx(math.log(2))


def test_classifier_scores_of_nothing_and_of_mixed_labels():
    out = classifier_scores([], [])
    assert out["n"] == 0 and set(out) == {"accuracy", "macro_f1", "weighted_f1", "n"}
    assert all(math.isnan(out[k]) for k in ("accuracy", "macro_f1", "weighted_f1"))
    # None as a prediction is one more label: gold A, A; pred A, None
    # A: tp 1, fn 1 -> F1 2/3; None: tp 0, fp 1 -> F1 0; macro 1/3; weighted (2/3 * 2 + 0 * 0) / 2 = 2/3
    out = classifier_scores(["A", "A"], ["A", None])
    assert out == {"accuracy": 0.5, "macro_f1": pytest.approx(1 / 3), "weighted_f1": pytest.approx(2 / 3), "n": 2}


def test_text_starts_with_letter_edges():
    assert text_starts_with_letter(None, "X") is False
    assert text_starts_with_letter("Sure", "C") is False
    assert text_starts_with_letter("XC is not option C", "C") is False


def test_first_token_is_letter_prefers_the_recorded_top_token():
    # the recorded argmax token wins over the response text
    rec = {"first_token_letter": "B", "top_first_token": " B", "response": "Sure! B."}
    assert first_token_is_letter(rec) is True
    assert first_token_is_letter({"first_token_letter": "B", "top_first_token": "Sure", "response": "B."}) is False
    assert first_token_is_letter({"first_token_letter": "B", "response": "[INST] q [/INST] B. y"}) is True


def test_mapping_summary_of_nothing():
    s = mapping_summary([])
    assert s["total"] == 0 and s["total_mis"] == 0 and s["total_first_token_mismatch"] == 0
    for key in ("refuse_rate", "total_mis_rate", "same/total_first_token_mismatch_rate"):
        assert isinstance(s[key], float) and math.isnan(s[key])


def test_no_response_starts_with_no_letter():
    """A missing response (None) is the empty text: it starts with no letter, not even an "X"."""
    from wobble.studies.first_token.metrics import text_starts_with_letter

    assert text_starts_with_letter(None, "X") is False and text_starts_with_letter("", "A") is False


def test_a_letter_with_probability_zero_still_wins_when_every_letter_has_it():
    assert first_token_choice({"A": -math.inf, "B": -math.inf}) == "A"
    assert first_token_choice({"A": -math.inf, "B": -1.0}) == "B"


def test_no_text_answer_is_a_mismatch_even_without_a_first_token_option():
    assert mismatch_rate([(None, None)]) == 1.0
    summary = mapping_summary([{"text_option": None, "first_token_option": None, "first_token_letter": "A",
                                "response": "Sure, A"}])
    assert (summary["total_mis"], summary["same_but_not_first"]) == (1, 0)


def test_a_single_answer_has_entropy_plus_zero():
    h = answer_entropy(["x", "x", "x"])
    assert h == 0.0 and math.copysign(1.0, h) == 1.0  # not -0.0, which a table prints as "-0.00"


def test_classifier_scores_need_one_prediction_per_gold_label():
    with pytest.raises(ValueError, match="gold and pred differ in length: 1 vs 2"):
        classifier_scores(["A"], ["A", "B"])
