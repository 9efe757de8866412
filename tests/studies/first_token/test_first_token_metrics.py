"""first_token metrics on hand-computed cases (edge cases included: nothing to count, ties, negative zero),
and the paper's mapping_result.json summary."""

from __future__ import annotations

import json
import math

import pytest

from wobble.studies.first_token.classify import label_to_option
from wobble.studies.first_token.judge import annotated_view
from wobble.studies.first_token.metrics import (answer_entropy, choice_distribution, classifier_scores,
                                                consistency_entropy, first_token_choice, first_token_is_letter,
                                                mapping_summary, mismatch_rate, refusal_mismatch_rate, refusal_rate,
                                                text_starts_with_letter)
from wobble.studies.first_token.prompts import letter_to_option, shuffled_prompt

LN2 = math.log(2)


def test_first_token_choice_argmax_and_ties():
    assert first_token_choice({"A": -3.0, "B": -0.2, "C": -1.0, "D": -9.0}) == "B"
    # tie between B and C -> the alphabetically first letter, whatever the dict order
    assert first_token_choice({"C": -0.5, "A": -1.0, "B": -0.5}) == "B"
    # the refusal letter competes like any other letter
    assert first_token_choice({"A": -2.0, "B": -0.1}) == "B"
    assert first_token_choice({"A": float("nan"), "B": -5.0}) == "B"
    with pytest.raises(ValueError):
        first_token_choice({})
    with pytest.raises(ValueError):
        first_token_choice({"A": float("nan")})


def test_mismatch_and_refusal_hand_computed():
    pairs = [
        ("x", "x"),              # match
        ("x", "y"),              # mismatch
        ("Refused", "Refused"),  # match (both refuse)
        ("x", "Refused"),        # mismatch, due to the text refusing
        ("y", None),             # mismatch: the text names no single option
    ]
    # mismatches: rows 2, 4, 5 -> 3/5 = 0.6
    assert mismatch_rate(pairs) == pytest.approx(0.6)
    # refusal part: text refuses, first token does not -> row 4 only -> 1/5 = 0.2
    assert refusal_mismatch_rate(pairs) == pytest.approx(0.2)
    # text refusal rate: rows 3 and 4 -> 2/5; first-token refusal rate: row 3 -> 1/5
    assert refusal_rate([tx for _, tx in pairs]) == pytest.approx(0.4)
    assert refusal_rate([ft for ft, _ in pairs]) == pytest.approx(0.2)
    assert math.isnan(mismatch_rate([]))
    with pytest.raises(ValueError):
        mismatch_rate([("x",)])


def test_mismatch_is_on_original_options_not_letters():
    """Letter 'C' in two shuffles names two different options; the same option under two letters matches."""
    opts = ["Worry a lot", "Worry a little", "Do not worry at all", "Refused"]
    pairs = []
    for i in range(10):
        sp = shuffled_prompt("Q", opts, "medium", seed=3, shuffle_index=i, key="q")
        ft = letter_to_option(sp["letters"], sp["shown_options"], "C")       # first token always says C
        tx_letter = sp["letters"][sp["shown_options"].index("Worry a lot")]  # text always picks "Worry a lot"
        tx = letter_to_option(sp["letters"], sp["shown_options"], tx_letter)
        pairs.append((ft, tx))
    n_c_is_lot = sum(1 for ft, _ in pairs if ft == "Worry a lot")
    assert mismatch_rate(pairs) == pytest.approx((10 - n_c_is_lot) / 10)
    # consistency: the text answer never changes (entropy 0), the first-token answer wanders
    assert answer_entropy([tx for _, tx in pairs]) == 0.0
    assert answer_entropy([ft for ft, _ in pairs]) > 0.5


def test_choice_distribution():
    # C, C, A, C -> A 1/4, C 3/4; B never chosen
    assert choice_distribution(["C", "C", "A", "C"]) == {"A": 0.25, "C": 0.75}
    assert choice_distribution(["C", "C", "A", "C"], all_letters="ABC") == {"A": 0.25, "B": 0.0, "C": 0.75}


def test_entropy_hand_computed():
    assert answer_entropy(["a", "a", "b", "b"]) == pytest.approx(LN2)            # ln 2 = 0.693147
    assert answer_entropy(["a"] * 10) == 0.0
    assert answer_entropy(list("abcd")) == pytest.approx(math.log(4))            # ln 4 = 1.386294
    # 10 shuffles: 5 x a, 3 x b, 2 x c
    #   H = -(0.5 ln 0.5 + 0.3 ln 0.3 + 0.2 ln 0.2)
    #     = 0.5*0.693147 + 0.3*1.203973 + 0.2*1.609438 = 0.346574 + 0.361192 + 0.321888 = 1.029653
    assert answer_entropy(["a"] * 5 + ["b"] * 3 + ["c"] * 2) == pytest.approx(1.029653, abs=1e-6)
    # None (no single option) is dropped by default: [a, a, None, b, b] -> as [a, a, b, b] = ln 2
    assert answer_entropy(["a", "a", None, "b", "b"]) == pytest.approx(LN2)
    # ... or counted as one more outcome: 2/5, 2/5, 1/5 -> 2*0.4*0.916291 + 0.2*1.609438 = 1.054920
    assert answer_entropy(["a", "a", None, "b", "b"], drop_none=False) == pytest.approx(1.054920, abs=1e-6)
    assert math.isnan(answer_entropy([None, None]))
    # mean over questions: (ln 2 + 0) / 2 = 0.346574; the all-None question is skipped
    assert consistency_entropy([["a", "a", "b", "b"], ["z"] * 4, [None]]) == pytest.approx(LN2 / 2)


def test_classifier_scores_hand_computed():
    gold = ["A", "A", "B", "B", "C"]
    pred = ["A", "B", "B", "B", "A"]
    # A: tp=1 fp=1 (5th) fn=1 (2nd) -> F1 = 2*1/(2*1+1+1) = 0.5
    # B: tp=2 fp=1 (2nd) fn=0       -> F1 = 4/5 = 0.8
    # C: tp=0 fp=0 fn=1             -> F1 = 0
    # accuracy 3/5; macro (0.5+0.8+0)/3 = 0.433333; weighted (0.5*2 + 0.8*2 + 0*1)/5 = 0.52
    s = classifier_scores(gold, pred)
    assert s["accuracy"] == pytest.approx(0.6)
    assert s["macro_f1"] == pytest.approx(1.3 / 3)
    assert s["weighted_f1"] == pytest.approx(0.52)
    assert s["n"] == 5
    # a label only predicted ("Z") counts in the macro mean with F1 0 and weighs 0 in the weighted one
    # A: tp=1 fn=1 fp=0 -> 2/3; Z: tp=0 fp=1 -> 0; macro 1/3; weighted (2/3*2 + 0*0)/2 = 2/3
    s = classifier_scores(["A", "A"], ["A", "Z"])
    assert s["accuracy"] == pytest.approx(0.5)
    assert s["macro_f1"] == pytest.approx(1 / 3)
    assert s["weighted_f1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        classifier_scores(["A"], [])


def test_text_starts_with_letter():
    assert text_starts_with_letter("  C. Rarely", "C")
    assert text_starts_with_letter("C", "C")
    assert text_starts_with_letter("(C) Rarely", "C")
    assert not text_starts_with_letter("Certainly! C.", "C")
    assert not text_starts_with_letter("  Sure! C. Rarely", "C")
    assert not text_starts_with_letter("As an AI", "A")


def test_mapping_summary_hand_computed():
    recs = [
        # opens with its first-token letter, text agrees
        {"first_token_letter": "A", "response": "A. x", "first_token_option": "x", "text_option": "x"},
        # opens with "Sure", text agrees with the first token -> same_but_not_first
        {"first_token_letter": "B", "response": " Sure! B. y", "first_token_option": "y", "text_option": "y"},
        # opens with "I", refuses -> refusal, mismatch, not first
        {"first_token_letter": "C", "response": "I cannot", "first_token_option": "z", "text_option": "Refused"},
        # unrestricted argmax recorded: "Sure" != "A"; text names no option -> mismatch
        {"first_token_letter": "A", "top_first_token": "Sure", "response": "", "first_token_option": "x",
         "text_option": None},
    ]
    s = mapping_summary(recs)
    assert s == {
        "total": 4, "total_refuse": 1, "refuse_rate": 0.25, "total_mis": 2, "total_mis_rate": 0.5,
        "total_first_token_mismatch": 3, "same_but_not_first": 1,
        "same/total_first_token_mismatch_rate": pytest.approx(1 / 3),
    }


@pytest.mark.parametrize("model,paper_dir", [("llama2-13b", "Llama2-13b-Chat"), ("llama2-7b", "Llama2-7b-Chat")])
def test_mapping_summary_reproduces_the_papers_numbers(mirror, model, paper_dir):
    """From the human labels of the paper's own Medium-constraint outputs (shuffle 0), our summary is
    within a few prompts of mapping_result.json (computed with the paper's classifier, not the labels)."""
    base = mirror / "opinionqa"
    recs = []
    for split in ("train", "test"):
        for line in (base / "annotated_responses" / model / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            v = annotated_view(json.loads(line))
            recs.append({
                "first_token_letter": v["first_token_letter"],
                "top_first_token": v["top_first_token"],
                "response": v["response"],
                "first_token_option": letter_to_option(v["letters"], v["shown_options"], v["first_token_letter"]),
                "text_option": label_to_option(v["gold"], v["letters"], v["shown_options"]),
            })
    ours = mapping_summary(recs)
    paper = json.loads((base / "paper_mapping_results" / "Middle_Constraint" / paper_dir / "mapping_result.json")
                       .read_text())["shuffle_0"]
    assert ours["total"] == paper["total"] == 414
    tol = {"total_refuse": 3, "total_mis": 15, "total_first_token_mismatch": 6, "same_but_not_first": 8}
    for key, t in tol.items():
        assert abs(ours[key] - paper[key]) <= t, (key, ours[key], paper[key])
    assert abs(ours["refuse_rate"] - paper["refuse_rate"]) < 0.01


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
