"""The first_token study's claims measured on hand-made labelled predictions."""

from __future__ import annotations

import math

import pytest

from wobble.report.claims import verdict
from wobble.studies.first_token import claims as C

OPTS = ["Yes", "No", "Refused"]


def rec(q, model, level, shuffle, ft, tx, letter="A"):
    return {"question_uid": f"q{q}", "model": model, "constraint": level, "shuffle": shuffle,
            "first_token_option": ft, "text_option": tx, "first_token_letter": letter}


def claim(cid):
    return next(c for c in C.CLAIMS if c.id == cid)


def test_mismatch_counts_mapped_text_only_and_takes_the_worst_model():
    recs = []
    for q in range(20):
        for s in range(2):
            # model m1: first token "Yes", text "No" -> mismatch on every prompt; m2 always agrees
            recs += [rec(q, "m1", "low", s, "Yes", "No"), rec(q, "m2", "low", s, "Yes", "Yes"),
                     rec(q, "m1", "medium", s, "Yes", None)]  # unmapped: not a mismatch, lowers mapped share
    got = C.measure(recs, n_boot=200)
    m = got["mismatch_over_60_percent"]
    assert m.effect == pytest.approx(1.0) and (m.ci_low, m.ci_high) == pytest.approx((1.0, 1.0))
    assert m.n_items == 20 and not m.degenerate  # 2/3 of text answers mapped
    assert verdict(claim("mismatch_over_60_percent"), m)[0] == "reproduced"
    assert got["mismatch_persists_when_constrained"].effect is None  # no High prompts


def test_mostly_unmapped_text_is_degenerate():
    recs = [rec(q, "m", "high", s, "Yes", None if s else "No") for q in range(20) for s in range(3)]
    m = C.measure(recs, n_boot=50)["mismatch_persists_when_constrained"]
    assert m.effect == pytest.approx(1.0) and m.degenerate
    assert verdict(claim("mismatch_persists_when_constrained"), m)[0] == "inconclusive"


def test_example_pull_to_c_and_position_bias_flag():
    recs = []
    for q in range(12):
        recs += [rec(q, "m", "example", 0, "Yes", "Yes", letter="C"), rec(q, "m", "example", 1, "No", "No", letter="A"),
                 rec(q, "m", "high", 0, "Yes", "Yes", letter="A"), rec(q, "m", "high", 1, "No", "No", letter="B")]
    m = C.measure(recs, n_boot=100)["example_template_pulls_to_C"]
    assert m.effect == pytest.approx(0.5) and not m.degenerate and m.n_items == 12
    always_a = [dict(r, first_token_letter="A") for r in recs]
    m = C.measure(always_a, n_boot=100)["example_template_pulls_to_C"]
    assert m.effect == 0.0 and m.degenerate


def test_refusal_difference_and_entropy_difference_by_hand():
    recs = []
    for q in range(10):
        # text refuses on 1 of 2 shuffles, first token never -> +0.5 per question
        recs += [rec(q, "m", "low", 0, "Yes", "Refused"), rec(q, "m", "low", 1, "No", "No")]
    got = C.measure(recs, n_boot=100)
    assert got["text_refuses_more"].effect == pytest.approx(0.5)
    # entropy: first token {Yes, No} -> ln 2; text {Refused, No} -> ln 2 -> difference 0
    assert got["text_more_consistent"].effect == pytest.approx(0.0)
    recs2 = [dict(r, text_option="No") for r in recs]
    assert C.measure(recs2, n_boot=50)["text_more_consistent"].effect == pytest.approx(math.log(2))


def test_paper_value_table3():
    import pandas as pd

    t3 = pd.DataFrame({"entropy_first_token": ["1.0", "0.5", ""], "entropy_text_output": ["0.5", "0.7", ""]})
    assert C.paper_values(t3)["text_more_consistent"].startswith("0.15")
