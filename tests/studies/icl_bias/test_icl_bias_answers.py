"""icl_bias score records (wobble.studies.icl_bias.answers).

A score record carries every field the summary groups by (pair, condition, intervention, target, set, item) and
the item's two labels; the values below are worked out by hand.
"""

from __future__ import annotations

import math

import pytest

from wobble.studies.icl_bias.answers import score_records

L = math.log
COMMON = {"pair": "sa_sentiment_punctuation", "condition": "verbalizer-h2", "intervention": "verbalizer",
          "target": "h2", "set": 1, "candidates": ["0", "1"], "generate": False}
REQUESTS = [
    {**COMMON, "uid": "cf-0", "content_free": "[MASK]", "item": None},
    {**COMMON, "uid": "req-7", "content_free": None, "item": "item-3"},
]
OUTPUTS = {"cf-0": {"logprobs": {"0": L(0.8), "1": L(0.2)}}, "req-7": {"logprobs": {"0": L(0.3), "1": L(0.2)}}}
ITEMS = {"item-3": {"h1": 0, "h2": 1}}


def test_a_score_record_names_its_item_and_carries_both_labels():
    # p = [0.6, 0.4]; the set's content-free p_cf = [0.8, 0.2]; calibrated p / p_cf = [0.75, 2.0] -> label 1
    (record,) = score_records(iter(REQUESTS), OUTPUTS, ITEMS)  # requests may be any iterable, read twice
    assert record == {"pair": "sa_sentiment_punctuation", "condition": "verbalizer-h2", "intervention": "verbalizer",
                      "target": "h2", "set": 1, "uid": "item-3", "h1": 0, "h2": 1, "pred": 1,
                      "probs": pytest.approx([0.6, 0.4]), "calibrated": True}


def test_a_generated_answer_has_no_probabilities_and_is_not_calibrated():
    requests = [{**COMMON, "uid": "req-7", "content_free": None, "item": "item-3", "generate": True}]
    (record,) = score_records(requests, {"req-7": {"text": "Loud. Therefore, the answer is 1."}}, ITEMS)
    assert (record["pred"], record["probs"], record["calibrated"]) == (1, None, False)
