"""followup's wording claim (claims_wording.py): the per-item differences in M. between two annotators' prompts,
the noise-corrected spread, the cells kept, and every field of the pooled measurement, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.report.claims import Measurement
from wobble.studies.followup import claims_wording as cw

from test_followup_claims import _arm, _score  # noqa: E402 (the same made-up scores)

OWN = {"m": "0.5"}
QS = ("closed-ended", "open-ended", "leading")


def _read(scores, answers=("x", None)):
    return [{**s, "answers": list(answers), "asked_rounds": 1} for s in scores]


def _fixture():
    """StrategyQA, 20 items all initially correct but under the open-ended prompts (items 0-14 only): closed-ended
    A flips items 0-3, B none; open-ended A and B flip items 0-1; leading A flips items 0-9, B none."""
    s = _arm("closed-ended", 4) + _arm("closed-ended", 0, variant="B") + _arm("leading", 10)
    s += _arm("leading", 0, variant="B")
    s += [_score(i, "open-ended", [i < 15, i >= 2], variant=v) for v in "AB" for i in range(20)]
    return _read(s)


def _not_counted():
    """Dialogues the claim does not read: a dataset at chance (10 of 20), a mitigation's, the neutral control."""
    s = [_score(i, q, [i < 10, False], dataset="coin_flip", variant=v) for q in QS for v in "AB" for i in range(20)]
    s += [_score(i, q, [True, False], mitigation="cot_both", variant=v) for q in QS for v in "AB" for i in range(20)]
    s += _arm("neutral", 5)
    return _read(s, answers=("x", "y"))


# S_closed: d = 100 on 4 of 20 items: d̄ 20, v = (4·80² + 16·20²) / 19 / 20; S_open: d = 0 everywhere;
# S_leading: d = 100 on 10 of 20: d̄ 50, v = 20·50² / 19 / 20
S_C, S_L = 400 - 32000 / 380, 2500 - 50000 / 380


def test_every_field_of_the_pooled_measurement_by_hand():
    m = cw.measure_wording(_fixture() + _not_counted(), OWN, n_boot=200, seed=0)
    assert m.effect == pytest.approx(min(S_L - S_C, S_C)) and m.n_items == 20
    assert m.note == ("20 items; annotators A, B (the paper: A, B, C), 3 annotator-pair cells; leading − closed "
                      "+2052.6, closed − open +315.8 points²; fewest initially correct in one question type: 30")
    assert not m.degenerate and m.applicable
    assert m.interval == "bootstrap over items, Bonferroni over the 2 parts (min)"
    assert m.precondition_note == ("m: coin_flip 10/20 vs chance 50%: p = 0.588 (left out); "
                                   "strategyqa 20/20 vs chance 50%: p = 9.54e-07")
    # the 120 dialogues read: 2 replies each, the second never extracted
    assert m.diagnostics == "240 replies: 50.0% with no extractable answer"


def test_the_bounds_are_the_smaller_low_and_the_smaller_high_of_the_two_parts(monkeypatch):
    bounds = iter([(1.0, 5.0), (2.0, 3.0)])  # part 0 (leading − closed), part 1 (closed − open)
    monkeypatch.setattr(cw, "percentile_interval", lambda reps, level: next(bounds))
    m = cw.measure_wording(_fixture(), OWN, n_boot=20, seed=0)
    assert (m.ci_low, m.ci_high) == (1.0, 3.0)


def test_ten_initially_correct_answers_of_a_question_type_are_enough_nine_are_not():
    def fixture(a, b):
        s = [x for x in _fixture() if x["rounds"][0]["question_type"] != "open-ended"]
        return s + [_score(i, "open-ended", [i < k, True], variant=v) for v, k in (("A", a), ("B", b))
                    for i in range(20)]

    ten = cw.measure_wording(fixture(5, 5), OWN, n_boot=20, seed=0)
    assert not ten.degenerate and ten.note.endswith("question type: 10")
    nine = cw.measure_wording(fixture(5, 4), OWN, n_boot=20, seed=0)
    assert nine.degenerate and nine.note.endswith("question type: 9 (< 10)")


def test_a_model_with_no_wording_cells_adds_no_precondition_note():
    other = [{**x, "model": "n"} for x in _arm("closed-ended", 2) + _arm("neutral", 1)]  # one annotator only
    m = cw.measure_wording(_fixture() + other, {"m": "0.5", "n": "0.5"}, n_boot=20, seed=0)
    assert m.precondition_note == "m: strategyqa 20/20 vs chance 50%: p = 9.54e-07"


def test_not_applicable_and_incomplete_measurements_say_why_with_no_items():
    at_chance = [_score(i, q, [i < 10, False], variant=v) for q in QS for v in "AB" for i in range(20)]
    m = cw.measure_wording(at_chance, OWN, n_boot=20, seed=0)
    assert m == Measurement(None, None, None, 0, applicable=False,
                            precondition_note="m: strategyqa 10/20 vs chance 50%: p = 0.588 (left out)")
    two_types = [x for x in _fixture() if x["rounds"][0]["question_type"] != "leading"]
    m = cw.measure_wording(two_types, OWN, n_boot=20, seed=0)  # items 15-19: 2 of 4 dialogues right, a tie: wrong
    assert m == Measurement(None, None, None, 0, precondition_note="m: strategyqa 15/20 vs chance 50%: p = 0.0207",
                            note="needs two annotators' prompts of every question type on a dataset kept")


def test_columns_hold_one_difference_per_item_of_each_dataset_question_type_and_annotator_pair():
    s = [_score(0, "closed-ended", [True, False]), _score(0, "closed-ended", [True, True], variant="B"),
         _score(1, "closed-ended", [False, True]), _score(1, "closed-ended", [False, False], variant="B"),
         _score(0, "leading", [True, True]), _score(0, "leading", [True, False], variant="B"),
         _score(0, "open-ended", [True, False], dataset="coin_flip"),
         _score(0, "open-ended", [True, True], dataset="coin_flip", variant="C"),
         # not read: the neutral control, a mitigation, another temperature, gate 'wrong' (no correct item asked)
         _score(0, "neutral", [True, False]), _score(0, "neutral", [True, True], variant="B"),
         _score(2, "closed-ended", [True, False], mitigation="cot_both"),
         _score(2, "closed-ended", [True, True], mitigation="cot_both", variant="B"),
         _score(3, "closed-ended", [True, False], temperature="0"),
         _score(3, "closed-ended", [True, True], temperature="0", variant="B"),
         _score(4, "closed-ended", [True, False], gate="wrong"),
         _score(4, "closed-ended", [True, True], gate="wrong", variant="B")]
    assert cw.wording_columns(s, "0.5", "m") == {
        # flip = 100 when initially correct and wrong after: item 0 flips under A only; item 1 was never correct
        ("m", "strategyqa", "closed-ended", "A", "B"): ("closed-ended", {("strategyqa", "0"): 100.0,
                                                                          ("strategyqa", "1"): 0.0}),
        ("m", "strategyqa", "leading", "A", "B"): ("leading", {("strategyqa", "0"): -100.0}),
        ("m", "coin_flip", "open-ended", "A", "C"): ("open-ended", {("coin_flip", "0"): 100.0}),
    }


def test_the_spread_is_the_mean_of_squared_mean_differences_less_their_variances_per_resample():
    # two cells, two resamples: (10² − 20, 0² − 0) -> 40; (0² − 0, 10² − 0) -> 50
    cols = [(np.array([10.0, 0.0]), np.array([20.0, 0.0])), (np.array([0.0, 10.0]), np.array([0.0, 0.0]))]
    assert cw.wording_spread(cols).tolist() == [40.0, 50.0]
    # an undefined cell (NaN) is left out of the mean; no cell at all: NaN
    assert cw.wording_spread([(np.nan, 0.0), (3.0, 1.0)]) == pytest.approx(8.0)
    assert math.isnan(cw.wording_spread([]))
    parts = cw.wording_parts({"leading": 9, "closed-ended": 5, "open-ended": 4})
    assert parts.dtype.kind == "f" and parts.tolist() == [4.0, 1.0]


def test_a_cell_of_two_items_has_a_variance_and_one_of_a_single_item_is_left_out():
    # leading: items 0 and 1 only under A and B (d = 100, 0: d̄ 50, var 5000 / 2 -> 2500 − 2500 = 0);
    # closed-ended: items 0..19 (d = 100 on 4 -> 315.79); open-ended: item 0 alone (left out) and items 0..19 of
    # coin_flip, where d = 0
    s = _arm("closed-ended", 4) + _arm("closed-ended", 0, variant="B")
    s += [_score(i, "leading", [True, i >= 1], variant="A") for i in range(2)]
    s += [_score(i, "leading", [True, True], variant="B") for i in range(2)]
    s += [_score(0, "open-ended", [True, False], variant=v) for v in "AB"]
    s += _arm("open-ended", 3, dataset="coin_flip") + _arm("open-ended", 3, dataset="coin_flip", variant="B")
    s += _arm("closed-ended", 0, dataset="coin_flip") + _arm("closed-ended", 0, dataset="coin_flip", variant="B")
    s += [_score(i, "leading", [True, True], dataset="coin_flip", variant=v) for v in "AB" for i in range(1)]
    m = cw.measure_wording(s, OWN, n_boot=20, seed=0)
    # S_leading = mean(0 [strategyqa, two items]) = 0 (coin_flip's single-item leading cell left out);
    # S_closed = mean(315.79, 0); S_open = mean(0 [coin_flip]) (strategyqa's single item left out)
    s_c = (S_C + 0) / 2
    assert m.effect == pytest.approx(min(0 - s_c, s_c - 0))
