"""The followup above-chance precondition as the ledger words it (claims_chance.py): "not shown above chance (N items
per dataset)" where it fails, and the notes' count of how many right each chance level needs; the logic is
claims_measure's, unchanged. Binomial tails worked out by hand in the comments."""

from __future__ import annotations

from wobble.studies.followup import claims_chance as cc

from followup_claims_scores import _rows, _score


def test_how_many_right_the_test_needs_by_hand():
    # 12 yes/no items: P(X ≥ 10) = (1 + 12 + 66) / 4096 = 0.0193 < 0.05, P(X ≥ 9) = 299 / 4096 = 0.073
    assert cc.needed(12, 0.5) == 10
    # 12 items at chance 1/4: P(X ≥ 7) = 0.0143, P(X ≥ 6) = 0.0544
    assert cc.needed(12, 0.25) == 7
    assert cc.needed(12, 0.0) == 1  # open answers: one right answer is above chance 0
    assert cc.needed(3, 0.5) is None  # 3 of 3: 1/8 = 0.125, never below 0.05


def test_the_note_gives_each_chance_level_its_count():
    assert cc.note(12, ["strategyqa", "coin_flip", "multiarith", "mmlu"]) == (
        "Above chance (the precondition): a one-sided exact binomial test at p < 0.05 on 12 items per dataset, which "
        "needs at least 10 of 12 right at chance 50% (strategyqa, coin_flip); 7 of 12 right at chance 25% (mmlu); "
        "1 of 12 right at chance 0% (multiarith). A model 'not shown above chance' is not shown at chance either: on "
        "so few items the sample's size drives the test.")


def test_the_failed_precondition_is_reworded_with_the_items_it_rests_on():
    why = ("not applicable — the interval alone would say inconclusive; failed: above chance (unknown), truncated "
           "in own:coin_flip (unknown); 95% CI [-0.793, 0.906] contains 0")
    assert cc.reworded(why, "12") == (
        "not applicable — the interval alone would say inconclusive; failed: not shown above chance (12 items per "
        "dataset) (unknown), truncated in own:coin_flip (unknown); 95% CI [-0.793, 0.906] contains 0")
    assert cc.reworded("reproduced despite above chance (x)", "12") == \
        "reproduced despite not shown above chance (12 items per dataset) (x)"
    assert cc.reworded(why, "") == why
    assert cc.reworded("95% CI excludes the null on the predicted side", "12") == \
        "95% CI excludes the null on the predicted side"


def test_items_per_dataset_per_model_and_over_all():
    s = [_score(i, "closed-ended", [True, True]) for i in range(12)]
    s += [_score(i, "closed-ended", [True, True], dataset="coin_flip") for i in range(20)]
    s += [_score(i, "closed-ended", [True, True], model="n") for i in range(12)]
    got = cc.items_per_dataset(s, {"m": "0.5", "n": "0.5", "o": "0.5"})
    assert got == {"m": "12–20", "n": "12", "o": "", cc.ALL: "12–20"}


def test_a_row_at_chance_says_not_shown_above_chance_on_its_items_and_one_above_does_not():
    # 12 yes/no items, 9 initially correct: p = 0.073, not shown above chance on 12 items (10 are needed)
    at = [_score(i, q, [i < 9, i < 9 and not (q == "closed-ended" and i < 3)]) for q in ("closed-ended", "neutral")
          for i in range(12)]
    row = _rows(at)["fo-01-m"]
    assert row["verdict"] == "not applicable" and row["applicable"] is False
    assert "failed: not shown above chance (12 items per dataset) (unknown)" in row["reason"]
    assert row["precondition_note"] == "above chance: not met (strategyqa 9/12 vs chance 50%: p = 0.073 (left out))"
    # 10 of 12: p = 0.0193, above chance: the reason names no precondition
    above = [_score(i, q, [i < 10, i < 10]) for q in ("closed-ended", "neutral") for i in range(12)]
    assert "chance" not in _rows(above)["fo-01-m"]["reason"]
