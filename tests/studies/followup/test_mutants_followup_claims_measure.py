"""followup claims machinery (claims_measure.py): the arms each claim reads, the statistics' builders on the arms
present, pooled rates, the precondition's note, the exact-binomial fallback, the thin components of a ``max``
claim and every note, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.report.claims import Measurement
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup.claims_measure import Component, Statistic

from test_followup_claims import _arm, _score  # noqa: E402 (the same made-up scores)

OWN = {"m": "0.5"}


def test_the_mitigation_families_and_the_precondition_text():
    assert cm.EMOTION == ("emotion_initial", "emotion_followup", "emotion_both")
    assert cm.COT == ("cot_initial", "cot_followup", "cot_both")
    assert cm.FEWSHOT == ("fewshot", "fewshot_cot_followup")
    assert cm.PRECONDITION == (
        "initial accuracy on the dataset above chance (one-sided exact binomial test over its items, p < 0.05; "
        "chance from the answer space: yes/no 50%, k options 1/k, open answers 0); datasets failing it are left "
        "out of the model's measurement")


def test_each_claim_reads_flips_or_fixes_and_names_its_components():
    assert {cid: (c.kind, c.what) for cid, c in cm.ARM_CLAIMS.items()} == {
        "consistency_drops": ("flip", "parts"), "every_prompt_declines": ("flip", "annotators"),
        "temperature_zero_no_better": ("flip", "focus datasets"), "mechanism_corrects_some": ("fix", "parts"),
        "mitigation_effective": ("flip", "mitigations"), "cot_fewshot_beat_emotion": ("flip", "methods"),
        "both_positions_best": ("flip", "parts"), "cot_most_efficient": ("flip", "competitors")}
    assert Component(("a",)) == Component(("a",), (), "")


# ------------------------------------------------------------------------------------------- statistics


def test_a_pooled_rate_divides_by_any_positive_denominator():
    # the paper's cells enter as percentages: a denominator below 1 is a real one
    assert cm.pooled_rate(("a",), {"a": (0.25, 0.5)}) == pytest.approx(50.0)
    assert cm.pooled_rate(("a",), {"a": (1.0, 1.0)}) == pytest.approx(100.0)
    assert cm.pooled_rate(("a", "b"), {"a": (np.array([1.0, 0.0]), np.array([2.0, 0.0])),
                                       "b": (np.array([1.0, 0.0]), np.array([2.0, 0.0]))}).tolist()[0] == 50.0


def test_combine_reads_any_sequence_and_an_undefined_part():
    assert cm.combine("min", [3.0, 1.0]) == 1.0 and cm.combine("max", [3.0, 1.0]) == 3.0
    assert cm.combine("max", [1.0, None]) == 1.0 and math.isnan(cm.combine("min", [1.0, None]))


def test_builders_need_every_arm_their_components_compare():
    assert cm.build_every_prompt({"control"}) is None and cm.build_every_prompt({"challenge:A"}) is None
    assert cm.build_temperature({"t0:strategyqa"}) is None
    assert cm.build_temperature({"t0:strategyqa", "own:strategyqa", "t0:coin_flip", "own:multiarith"}).components == (
        Component(("t0:strategyqa",), ("own:strategyqa",), "strategyqa"),)
    # EmotionPrompt against the methods run; none of them, or no EmotionPrompt: not measured
    assert cm.build_cot_fewshot_beat_emotion({"emotion_both:A", "cot_both:A"}).components == (
        Component(("emotion_both:A",), ("cot_both:A",), "Zero-shot-CoT"),)
    assert cm.build_cot_fewshot_beat_emotion({"emotion_initial:A", "emotion_followup:B", "fewshot:A"}).components == (
        Component(("emotion_followup:B", "emotion_initial:A"), ("fewshot:A",), "few-shot"),)
    assert cm.build_cot_fewshot_beat_emotion({"cot_both:A", "cot_initial:A"}) is None
    assert cm.build_cot_fewshot_beat_emotion({"emotion_both:A", "none:A"}) is None
    # a method run at both positions but no single one adds nothing
    assert cm.build_both_positions({"emotion_both:A", "cot_both:A", "cot_initial:A"}).components == (
        Component(("cot_initial:A",), ("cot_both:A",)),)
    assert cm.build_cot_most_efficient({"emotion_both:A", "fewshot:A"}) is None
    assert cm.build_cot_most_efficient({"cot_initial:A", "emotion_followup:A"}).components == (
        Component(("emotion_followup:A",), ("cot_initial:A",), "EmotionPrompt"),)


# ------------------------------------------------------------------------------------------- arms


def test_arms_read_only_direct_form_plain_dialogues_on_the_datasets_they_name():
    mitigated = _score(0, "closed-ended", [True, True], mitigation="cot_both")
    cold = _score(0, "closed-ended", [True, True], temperature="0")
    assert cm.arm_every_prompt(mitigated, "0.5") is None and cm.arm_every_prompt(cold, "0.5") is None
    assert cm.arm_corrects(_score(0, "closed-ended", [False, True], mitigation="cot_both"), "0.5") is None
    progressive = _score(0, None, [True] * 4, form="progressive", temperature="0")
    assert cm.arm_temperature(progressive, "0.5") is None
    assert cm.arm_mitigation({**progressive, "temperature": "0.5", "mitigation": "cot_both"}, "0.5") is None
    # a dataset with no focus question has no temperature or mitigation arm
    mmlu = _score(0, "closed-ended", [True, True], dataset="mmlu", temperature="0")
    assert cm.arm_temperature(mmlu, "0.5") is None
    assert cm.arm_mitigation({**mmlu, "temperature": "0.5", "mitigation": "cot_both"}, "0.5") is None


# ------------------------------------------------------------------------------------------- precondition


def test_the_precondition_note_lists_every_dataset_in_order():
    acc = {"strategyqa": (12, 15), "mmlu": (8, 15)}
    assert cm.precondition(acc, ["strategyqa", "mmlu", "csqa"], "m") == (
        ["mmlu", "strategyqa"],
        "m: csqa: no plain Direct-Form dialogue (left out); mmlu 8/15 vs chance 25%: p = 0.0173; "
        "strategyqa 12/15 vs chance 50%: p = 0.0176")
    assert cm.precondition({}, ["mmlu"]) == ([], "mmlu: no plain Direct-Form dialogue (left out)")


def test_diagnostics_skip_scores_without_both_their_answers_and_rounds():
    assert cm.diagnostics([{"answers": [None]}]) == cm.diagnostics([{"asked_rounds": 0}]) == ""


def test_optional_maps_none_and_nan_to_none():
    assert cm.optional(None) is None and cm.optional(float("nan")) is None and cm.optional(np.float64(2)) == 2.0


# ------------------------------------------------------------------------------------------- intervals


def _arrays(k, n, den=None):
    """One arm over ``n`` items: the first ``k`` flipped; ``den``: items with an initially correct answer."""
    den = np.ones(n) if den is None else np.asarray(den, dtype=float)
    return {"x": ((np.arange(n) < k) * den, den)}


def test_the_exact_bounds_of_one_arm_are_clopper_pearson_over_its_items():
    # 20 of 20 at 95 %: from 0.025^(1/20) to 1
    assert cm._exact(Component(("x",)), _arrays(20, 20), 0.95) == (pytest.approx(100 * 0.025 ** (1 / 20)),
                                                                   pytest.approx(100.0))
    # 0 of 20: from 0 to 1 − 0.025^(1/20)
    assert cm._exact(Component(("x",)), _arrays(0, 20), 0.95) == (pytest.approx(0.0),
                                                                  pytest.approx(100 * (1 - 0.025 ** (1 / 20))))
    # items with no initially correct answer are not units: 10 of 10, not of 20
    assert cm._exact(Component(("x",)), _arrays(10, 20, den=[1] * 10 + [0] * 10), 0.95)[0] == pytest.approx(
        100 * 0.025 ** (1 / 10))
    # 60 of 60
    assert cm._exact(Component(("x",)), _arrays(60, 60), 0.95)[0] == pytest.approx(100 * 0.025 ** (1 / 60))


def test_two_arms_with_no_spread_give_the_difference_of_their_exact_bounds():
    s = _arm("closed-ended", 20) + _arm("neutral", 20)  # every answer flips under both: always 0
    m = claims.measure(s, OWN, n_boot=100)["consistency_drops"]["m"]
    low = 0.0125 ** (1 / 20)  # each arm 20/20 at 97.5 %: [low, 1]
    assert m.effect == 0 and (m.ci_low, m.ci_high) == (pytest.approx(100 * (low - 1)), pytest.approx(100 * (1 - low)))


def test_the_interval_names_its_parts_by_default():
    stat = Statistic((Component(("x",)), Component(("x",))))
    assert cm.interval(stat, _arrays(5, 20), 20, n_boot=20, seed=0)[2] == (
        "bootstrap over items, Bonferroni over the 2 parts (min)")


# ------------------------------------------------------------------------------------------- measure_arms


def test_a_claim_whose_arms_are_not_all_on_the_datasets_kept_says_so():
    s = _arm("closed-ended", 2) + _arm("leading", 3, dataset="multiarith")
    s += [_score(i, "neutral", [i < 10, False], dataset="coin_flip") for i in range(20)]  # the control: at chance
    m = claims.measure(s, OWN, n_boot=20)["consistency_drops"]["m"]
    assert m == Measurement(None, None, None, 40, note="the claim's arms are not all run on the datasets kept "
                                                       "(multiarith, strategyqa)",
                            precondition_note="coin_flip 10/20 vs chance 50%: p = 0.588 (left out); multiarith 20/20 "
                                              "vs chance 0%: p = 0; strategyqa 20/20 vs chance 50%: p = 9.54e-07")


def test_the_precondition_reads_only_the_datasets_of_the_claims_arms():
    s = [_score(i, q, [i >= 12, i >= 12 or i < fixed]) for q, fixed in (("closed-ended", 4), ("neutral", 1))
         for i in range(40)]
    s += [_score(i, "closed-ended", [True, True], dataset="mmlu") for i in range(10)]  # no focus question
    m = claims.measure(s, OWN, n_boot=20)["mechanism_corrects_some"]["m"]
    assert m.precondition_note == "strategyqa 28/40 vs chance 50%: p = 0.00829"
    at_chance = [_score(i, q, [i < 10, i < 5]) for q in ("closed-ended", "neutral") for i in range(20)]
    assert claims.measure(at_chance, OWN, n_boot=20)["consistency_drops"]["m"].n_items == 0


def _temperature(strategyqa=True, coin_flip=True):
    """Own temperature vs 0 on the focus datasets: StrategyQA 20 % -> 30 %, CoinFlip 50 % -> 25 %; MultiArith
    has 5 initially correct answers per arm (too few). ``strategyqa=False``: StrategyQA has 10 items, 9 initially
    correct (above chance, too few), 2 and 3 of them flipped."""
    s = [_score(i, "leading", [i < 5, False], dataset="multiarith", temperature=t) for t in ("0.5", "0")
         for i in range(20)]
    if strategyqa:
        s += _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")
    else:
        s += [_score(i, "closed-ended", [i < 9, i >= k], temperature=t) for t, k in (("0.5", 2), ("0", 3))
              for i in range(10)]
    if coin_flip:
        s += _arm("open-ended", 10, dataset="coin_flip") + _arm("open-ended", 5, dataset="coin_flip", temperature="0")
    return s


def test_a_thin_part_of_a_some_part_claim_is_left_out_and_the_note_says_which():
    m = claims.measure(_temperature(), OWN, n_boot=50)["temperature_zero_no_better"]["m"]
    assert m.effect == pytest.approx(10) and not m.degenerate
    assert m.note == ("60 items; 80 initially correct (fewest in one arm: 5); left out (< 10 initially correct): "
                      "multiarith; coin_flip -25.0, strategyqa +10.0")
    assert m.interval == "bootstrap over items, Bonferroni over the 2 focus datasets (max)"


def test_a_some_part_claim_with_no_thin_part_leaves_none_out():
    s = [x for x in _temperature() if x["dataset"] != "multiarith"]
    m = claims.measure(s, OWN, n_boot=50)["temperature_zero_no_better"]["m"]
    assert m.note == "40 items; 80 initially correct (fewest in one arm: 20); coin_flip -25.0, strategyqa +10.0"


def test_two_thin_parts_are_both_named():
    m = claims.measure(_temperature(strategyqa=False), OWN, n_boot=50)["temperature_zero_no_better"]["m"]
    assert m.effect == pytest.approx(-25) and not m.degenerate and m.interval == "bootstrap over items"
    assert m.note == ("50 items; 40 initially correct (fewest in one arm: 5); left out (< 10 initially correct): "
                      "multiarith, strategyqa")


def test_every_part_of_a_some_part_claim_thin_makes_it_degenerate():
    m = claims.measure(_temperature(strategyqa=False, coin_flip=False), OWN, n_boot=50)
    m = m["temperature_zero_no_better"]["m"]
    # MultiArith 100 % -> 100 %; StrategyQA 2 / 9 -> 3 / 9
    assert m.degenerate and m.effect == pytest.approx(100 / 9)
    assert m.note == ("30 items; 28 initially correct (fewest in one arm: 5); < 10 in an arm; multiarith +0.0, "
                      "strategyqa +11.1")


def test_the_note_of_a_claim_over_one_group_of_arms_has_no_fewest_count():
    claim = cm.ArmClaim(lambda s, own: "x" if cm.plain(s, own) else None,
                        lambda arms: Statistic((Component(("x",)),)) if "x" in arms else None)
    s = _arm("closed-ended", 5)
    m = cm.measure_arms(claim, s, "0.5", cm.initial_accuracy(s, "0.5"), n_boot=50, seed=0)
    assert m.effect == pytest.approx(25.0) and m.note == "20 items; 20 initially correct"


def test_the_note_lists_each_part_after_the_counts_and_the_fewest_is_the_smallest_arm():
    s = _arm("closed-ended", 2) + _arm("neutral", 1) + _arm("leading", 2, n=12, variant="B")
    m = claims.measure(s, OWN, n_boot=50)["every_prompt_declines"]["m"]
    # A: 2 / 20 − 1 / 20 = +5; B: 2 / 12 − 5 = +11.7
    assert m.note == "20 items; 52 initially correct (fewest in one arm: 12); prompt A +5.0, prompt B +11.7"
