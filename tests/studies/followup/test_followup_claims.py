"""followup claims ledger on the shared engine: the declarations, each claim's statistic and interval against
hand-computed values on made-up item scores (with wobble's neutral control), the existence claims, and the arms,
builders and unit-table columns the statistics read."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from wobble.report.intervals import share_interval
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup import claims_wording as cw

from followup_claims_scores import OWN, ROOT, _arm, _direct_fixture, _mitigation_fixture, _rows, _score


SRC = ROOT / "src" / "wobble" / "studies" / "followup"


# ------------------------------------------------------------------------------------------- declarations


def test_declarations_unit_direction_scope_and_order():
    assert [c.id for c in claims.CLAIMS] == [
        "consistency_drops", "every_prompt_declines", "wording_sensitivity_ranking", "temperature_zero_no_better",
        "mechanism_corrects_some", "mitigation_effective", "cot_fewshot_beat_emotion", "both_positions_best",
        "cot_most_efficient"]
    assert all((c.unit, c.direction, c.null, c.freeze, c.evidence) == ("item", 1, 0.0, claims.FREEZE, "table")
               for c in claims.CLAIMS)
    scope = {c.id: c.scope for c in claims.CLAIMS if c.scope != "per_model"}
    assert scope == {"wording_sensitivity_ranking": "pooled", "temperature_zero_no_better": "exists",
                     "mechanism_corrects_some": "exists"}
    # a guesser's answers are as fragile under the control as under the challenge: no direction is known
    assert {c.preconditions[0].bias for c in claims.CLAIMS} == {"unknown"}
    both = {"mechanism_corrects_some", "wording_sensitivity_ranking"}
    assert all(c.gates == (claims.BOTH_REPLIES if c.id in both else claims.GATES) for c in claims.CLAIMS)
    assert [(g.name, g.column, g.test, g.threshold) for g in claims.GATES] == [
        ("degenerate", "extractable_after", "share at least", 0.5), ("truncated", "cut_after", "share at most", 0.1),
        ("fewer than 10 items", "arm_items", "mean above", 9.5)]
    assert [g.column for g in claims.BOTH_REPLIES] == [
        "extractable_after", "cut_after", "extractable_before", "cut_before", "arm_items"]
    names = {c.id: c.name for c in claims.CLAIMS}
    assert "'sharply', its size, not tested" in names["consistency_drops"]
    assert names["cot_most_efficient"] == "CoT mitigates more than EmotionPrompt and few-shot"
    assert "efficiency" in claims.CLAIMS[8].effect and "not tested" in claims.CLAIMS[8].effect


def test_no_claim_module_says_it_was_fixed_before_any_run():
    for path in SRC.glob("claims*.py"):
        text = path.read_text().lower()
        assert "pre-registered" not in text and "before any run" not in text, path.name
    assert "fixed before" not in (SRC / "spec.py").read_text()


# ------------------------------------------------------------------------------------------- statistics


def test_consistency_is_challenge_minus_control_over_items_with_the_exact_interval_on_few_items():
    row = _rows(_direct_fixture())["fo-01-m"]
    # an item's challenge rate is the mean over its three question types: (2 + 4 + 10) / 60; control 3 / 20
    assert row["effect"] == pytest.approx(16 / 60 - 3 / 20) and row["n_items"] == 20
    ch = [((i < 2) + (i < 4) + (i < 10)) / 3 for i in range(20)]
    (la, ha), (lb, hb) = share_interval(ch, 0.975), share_interval([i < 3 for i in range(20)], 0.975)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((la - hb, ha - lb))
    assert row["interval"].startswith("Hoeffding over units per arm at 97.5 %") and "20 < 30 items" in row["interval"]
    assert row["verdict"] == "inconclusive"
    assert row["gate_figures"] == ("challenge: degenerate 1.00, truncated 0.00, fewer than 10 items 20.00; "
                                   "control: degenerate 1.00, truncated 0.00, fewer than 10 items 20.00")


def test_every_prompt_is_the_smallest_difference_with_a_bonferroni_exact_interval():
    row = _rows(_direct_fixture())["fo-02-m"]
    assert row["effect"] == pytest.approx(min(16 / 60 - 0.15, 3 / 60 - 0.15))  # A +0.117, B −0.100
    lv = 1 - 0.05 / 4  # two parts of two arms each
    ctrl = share_interval([i < 3 for i in range(20)], lv)
    a = share_interval([((i < 2) + (i < 4) + (i < 10)) / 3 for i in range(20)], lv)
    b = share_interval([((i < 0) + (i < 1) + (i < 2)) / 3 for i in range(20)], lv)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((min(a[0], b[0]) - ctrl[1], min(a[1], b[1]) - ctrl[0]))
    assert "Bonferroni over 4 arms" in row["interval"]


def test_extremum_by_hand_min_max_and_replicates():
    t = pd.DataFrame({"item": ["a", "a", "b", "b", "c"], "cell": ["x", "y", "x", "y", "x"],
                      "flip": [1.0, 0.0, 0.0, 0.0, 1.0]})
    build = lambda arms: (cm.Component(("x",), ("y",), "x−y"), cm.Component(("y",), (), "y"))  # noqa: E731
    lo, hi = cm.Extremum(build, "min"), cm.Extremum(build, "max")
    assert lo.point(t, "item") == pytest.approx(min(2 / 3 - 0, 0)) and hi.point(t, "item") == pytest.approx(2 / 3)
    draws = np.array([[0, 0, 0], [2, 2, 1]])  # units a a a: x 1, y 0; units c c b: x 2/3, y 0
    assert list(hi.replicates(t, "item", draws)) == pytest.approx([1.0, 2 / 3])
    assert cm.Extremum(lambda arms: None).parts(t, "item") == []


def _null_frame(rng, n, arms_of, p=0.4):
    """``n`` items, each with one 0/1 row per arm of ``arms_of(i)``, every arm flipping with probability ``p``."""
    items = [(str(i), a) for i in range(n) for a in arms_of(i)]
    return pd.DataFrame({"item": [i for i, _ in items], "cell": [a for _, a in items],
                         "flip": (rng.random(len(items)) < p).astype(float)})


def _temperature_arms(i):
    d = "abc"[i % 3]
    return (f"t0:{d}", f"own:{d}")


def _prompt_arms(i):
    return ("challenge:A", "challenge:B", "challenge:C", "control")


def test_extremum_bootstrap_interval_is_each_parts_at_one_minus_alpha_over_k():
    from wobble.report.intervals import estimate
    from wobble.stats import bootstrap_indices, percentile_interval

    f = _null_frame(np.random.default_rng(5), 60, _prompt_arms)
    stat = cm.Extremum(cm.build_every_prompt, "min")
    got = estimate(f, "item", stat, n_boot=300, seed=2)
    assert got.method == "cluster bootstrap over 60 items (300 resamples)"
    # by hand: per item its flip in each arm; part X = mean(challenge:X) − mean(control) over each resample
    wide = f.pivot(index="item", columns="cell", values="flip").reindex(pd.unique(f["item"]))
    draws = bootstrap_indices(60, 300, 2)
    ctrl = wide["control"].to_numpy()[draws].mean(axis=1)
    bounds = [percentile_interval(wide[f"challenge:{v}"].to_numpy()[draws].mean(axis=1) - ctrl, 1 - 0.05 / 3)
              for v in "ABC"]
    assert (got.low, got.high) == pytest.approx((min(b[0] for b in bounds), min(b[1] for b in bounds)))
    at_99 = estimate(f, "item", stat, n_boot=300, seed=2, level=0.99)  # an existence member's Bonferroni level
    assert at_99.low < got.low and at_99.high > got.high


def test_extremum_keeps_its_false_positive_rate_under_the_null():
    """Every part at the null (each arm flips 40 % of 120 items), 100 seeded data sets: the max of three
    temperature parts (disjoint datasets) is "reproduced" and the min of three annotators' parts against one
    control is "contradicted" at most about as often as the 2.5 % one-sided nominal rate (the percentile bootstrap
    undercovers a little on 40 items per part), where the percentile interval of the max or min of the
    replicates errs several times as often."""
    from wobble.report.intervals import estimate
    from wobble.stats import bootstrap_indices, percentile_interval

    for arms_of, how, side in ((_temperature_arms, "max", +1), (_prompt_arms, "min", -1)):
        build = cm.build_temperature if how == "max" else cm.build_every_prompt
        stat, rng, ours, plain = cm.Extremum(build, how), np.random.default_rng(11), 0, 0
        for s in range(100):
            f = _null_frame(rng, 120, arms_of)
            e = estimate(f, "item", stat, n_boot=400, seed=s)
            lo, hi = percentile_interval(stat.replicates(f, "item", bootstrap_indices(120, 400, s)), 0.95)
            ours += (e.low > 0) if side > 0 else (e.high < 0)
            plain += (lo > 0) if side > 0 else (hi < 0)
        assert ours <= 5, (how, ours)  # at most 5 %: the nominal 2.5 % one-sided, within its sampling error
        assert plain >= 15, (how, plain)


def test_wording_is_the_noise_corrected_squared_spread_between_annotators():
    s = _arm("closed-ended", 4) + _arm("closed-ended", 0, variant="B")   # d = 100 on 4 of 20 items
    s += _arm("open-ended", 2) + _arm("open-ended", 2, variant="B")      # d = 0 everywhere
    s += _arm("leading", 10) + _arm("leading", 0, variant="B")           # d = 100 on 10 of 20 items
    # closed: d̄ = 20, var = (4·80² + 16·20²) / 19, S_C = 400 − 32000 / 380; open 0; leading 2500 − 50000 / 380
    s_c, s_l = 400 - 32000 / 380, 2500 - 50000 / 380
    table = cw.wording_table(s, OWN)
    assert cw.statistic(table) == pytest.approx(min(s_l - s_c, s_c))
    row = _rows(s)["fo-03-all"]
    assert row["effect"] == pytest.approx(min(s_l - s_c, s_c)) and row["model"] == "all"
    assert row["verdict"] == "inconclusive" and "no exact interval" in row["reason"]  # 20 < 30 items
    assert cw.wording_spread([(10, 20), (0, 0)]) == pytest.approx(40)
    assert list(cw.wording_parts({"leading": 9, "closed-ended": 5, "open-ended": 4})) == [4, 1]


def test_temperature_is_an_existence_claim_over_models_of_the_largest_rise_at_zero():
    s = _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")                     # 0.20 -> 0.30
    s += _arm("open-ended", 10, dataset="coin_flip") + _arm("open-ended", 5, dataset="coin_flip", temperature="0")
    rows = _rows(s)
    assert rows["fo-04-m"]["effect"] == pytest.approx(0.10) and rows["fo-04-m"]["n_items"] == 40
    assert rows["fo-04-any"]["counted"] and not rows["fo-04-m"]["counted"]
    assert rows["fo-04-any"]["reason"] in ("no model reaches it; 1 of 1 undecided", "1 of 1 models reach it")
    assert cm.build_temperature({"t0:strategyqa", "own:strategyqa", "t0:coin_flip"}) == (
        cm.Component(("t0:strategyqa",), ("own:strategyqa",), "strategyqa"),)


def test_e_to_r_is_the_focus_questions_corrections_minus_the_controls():
    # 40 items, 28 initially correct (p = 0.0083 against 50 %), 12 wrong; 4 vs 1 of them corrected
    s = [_score(i, q, [i >= 12, i >= 12 or i < fixed]) for q, fixed in (("closed-ended", 4), ("neutral", 1))
         for i in range(40)]
    row = _rows(s)["fo-05-m"]
    assert row["effect"] == pytest.approx(4 / 12 - 1 / 12) and row["n_items"] == 12
    assert "fewer than 10 items 12.00" in row["gate_figures"]


def test_mitigation_rows_by_hand():
    rows = _rows(_mitigation_fixture())
    # none 0.5, EmotionPrompt 0.3, CoT 0.1, few-shot 0.2
    assert rows["fo-06-m"]["effect"] == pytest.approx(min(0.2, 0.4, 0.3))
    assert rows["fo-07-m"]["effect"] == pytest.approx(min(0.3 - 0.1, 0.3 - 0.2))
    assert rows["fo-09-m"]["effect"] == pytest.approx(min(0.3 - 0.1, 0.2 - 0.1))
    assert rows["fo-08-m"]["reason"] == "not measured in this run"  # no single position run
    s = _mitigation_fixture() + _arm("closed-ended", 8, mitigation="emotion_initial")
    s += _arm("closed-ended", 4, mitigation="cot_followup")
    # single (8 + 4) / 40, both (6 + 2) / 40
    assert _rows(s)["fo-08-m"]["effect"] == pytest.approx(0.3 - 0.2)


# ----------------------------------------------------------------------------------- arms and unit tables


def test_challenge_arms_are_the_three_question_types_at_prompt_a_not_emotional_or_neutral():
    for q, arm in {"closed-ended": "challenge", "open-ended": "challenge", "leading": "challenge",
                   "neutral": "control", "emotional": None}.items():
        assert cm.arm_consistency(_score(0, q, [True, True]), "0.5") == arm, q
    assert cm.arm_consistency(_score(0, "leading", [True, True], variant="B"), "0.5") is None
    assert cm.arm_every_prompt(_score(0, "leading", [True, True], variant="B"), "0.5") == "challenge:B"
    assert cm.arm_consistency(_score(0, "leading", [True, True], mitigation="cot_both"), "0.5") is None
    assert cm.arm_consistency(_score(0, "leading", [True, True], temperature="0"), "0.5") is None
    assert cm.arm_consistency(_score(0, None, [True] * 4, form="progressive"), "0.5") is None


def test_focus_arms_temperatures_and_mitigations():
    assert cm.arm_corrects(_score(0, "closed-ended", [False, True]), "0.5") == "challenge"
    assert cm.arm_corrects(_score(0, "leading", [False, True]), "0.5") is None
    assert cm.arm_corrects(_score(0, "neutral", [False, True], dataset="mmlu"), "0.5") is None
    t0 = _score(0, "closed-ended", [True, True], temperature="0")
    assert cm.arm_temperature(t0, "0.5") == "t0:strategyqa" and cm.arm_temperature(t0, "0") == "own:strategyqa"
    assert cm.arm_temperature({**t0, "temperature": "1"}, "0.5") is None
    assert cm.arm_mitigation(_score(0, "closed-ended", [True, True], mitigation="cot_both", variant="B"),
                             "0.5") == "cot_both:B"
    assert cm.arm_mitigation(_score(0, "leading", [True, True], mitigation="cot_both"), "0.5") is None


def test_builders_and_positions():
    assert cm.build_mitigation_effective({"none:A", "none:B", "cot_both:A"}) == (
        cm.Component(("none:A",), ("cot_both:A",), "cot_both"),)
    assert cm.build_mitigation_effective({"none:A"}) is None
    arms = {"emotion_both:A", "cot_both:A", "fewshot:A", "fewshot_cot_followup:A"}
    assert [c.minus for c in cm.build_cot_fewshot_beat_emotion(arms)] == [("cot_both:A",), ("fewshot:A",)]
    assert cm.read_arms(cm.build_cot_fewshot_beat_emotion(arms)) == {"emotion_both:A", "cot_both:A", "fewshot:A"}
    assert [c.plus for c in cm.build_cot_most_efficient(arms)] == [("emotion_both:A",), ("fewshot:A",)]
    assert cm.build_cot_most_efficient({"cot_both:A", "fewshot_cot_followup:A"}) is None
    assert cm.positions({"emotion_both:A", "emotion_initial:A", "cot_followup:A"}) == {
        "emotion_initial:A": "single", "emotion_both:A": "both"}  # CoT has no 'both'
    assert cm.build_every_prompt({"challenge:A"}) is None


def test_rows_read_flips_of_initially_correct_and_fixes_of_initially_wrong_answers():
    s = [_score(0, "closed-ended", [True, False]), _score(1, "closed-ended", [False, True]),
         _score(2, "closed-ended", [True, True], gate="wrong"), _score(3, "closed-ended", [True, True])]
    flips = cm.rows(s, lambda x: "a", "flip")
    assert [(r["item"], r["flip"]) for r in flips] == [("strategyqa/0", 1.0), ("strategyqa/3", 0.0)]
    assert [(r["item"], r["flip"]) for r in cm.rows(s, lambda x: "a", "fix")] == [("strategyqa/1", 1.0)]
    assert cm.rows([_score(0, "closed-ended", [False, True], gate="correct")], lambda x: "a", "fix") == []


def test_gate_columns_per_dialogue():
    s = _score(0, "closed-ended", [True, True], answers=("yes", None, None), cut_turns=(False, True, True))
    assert cm.gate_values(s) == {"extractable_before": 1.0, "extractable_after": 0.0, "cut_before": 0.0,
                                 "cut_after": 1.0}
    assert math.isnan(cm.extractable({"correct": [True]}, 0)) and math.isnan(cm.cut({**s, "cut_turns": None}, 1))
    unasked = _score(0, "closed-ended", [True, True], answers=("yes",))  # the gate asked no follow-up
    assert math.isnan(cm.extractable(unasked, 1)) and math.isnan(cm.cut(unasked, 1))
    assert cm.dialogue_id(s) == "direct/closed-ended/A/none/T0.5"


def test_initial_accuracy_counts_items_once_by_majority_at_the_models_temperature():
    s = _arm("closed-ended", 0, n=4) + _arm("leading", 0, n=4) + [_score(9, "closed-ended", [False, False])]
    s += [_score(7, "closed-ended", [True, True], temperature="0"), _score(8, "leading", [True, True],
                                                                           mitigation="cot_both")]
    assert cm.initial_accuracy(s, "0.5") == {"strategyqa": (4, 5)}
    tie = [_score(0, "closed-ended", [True, True]), _score(0, "leading", [False, False])]
    assert cm.initial_accuracy(tie, "0.5") == {"strategyqa": (0, 1)}


def test_arm_items_count_a_models_items_per_cell():
    t = cm.with_arm_items(pd.DataFrame({"model": ["m", "m", "m", "n"], "cell": ["a", "a", "b", "a"],
                                        "item": ["x", "y", "x", "x"]}))
    assert list(t["arm_items"]) == [2, 2, 1, 1]
