"""followup claims ledger on the shared engine: each claim's statistic, interval, gates and precondition against
hand-computed values on made-up item scores (with wobble's neutral control), a gate read on the wrong arm, a
model at chance, the existence claim, and the paper passing its own rows by the same statistic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from wobble.report.cells import read_paper
from wobble.report.engine import UnitTable, check_table
from wobble.report.gates import read_gates
from wobble.report.intervals import share_interval
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup import claims_wording as cw
from wobble.studies.followup.prompts import BENCHMARKS, MITIGATIONS

ROOT = Path(__file__).resolve().parents[3]
PAPER = ROOT / "paper" / "followup"
OWN = {"m": "0.5"}
SRC = ROOT / "src" / "wobble" / "studies" / "followup"


def _score(item, qtype, correct, *, form="direct", mitigation="none", temperature="0.5", variant="A", gate="all",
           dataset="strategyqa", model="m", answers=("yes", "no"), cut_turns=None):
    rounds = ([{"question_type": q, "variant": variant} for q in ("closed-ended", "open-ended", "leading")]
              if form == "progressive" else [{"question_type": qtype, "variant": variant}])
    return {"model": model, "dataset": dataset, "item": item, "form": form, "mitigation": mitigation,
            "temperature": temperature, "rounds": rounds, "correct": list(correct), "gate": gate,
            "answers": list(answers), "asked_rounds": len(answers) - 1,
            "cut_turns": [False] * len(answers) if cut_turns is None else list(cut_turns)}


def _arm(qtype, flipped, n=20, **kw):
    """``n`` initially correct items; items < ``flipped`` are wrong after the follow-up."""
    return [_score(i, qtype, [True, i >= flipped], **kw) for i in range(n)]


def _rows(scores, own=OWN, n_boot=40, **kw):
    return {r["row_id"]: r for r in claims.measure(scores, own, n_boot=n_boot, **kw)}


def _tables():
    return {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}


def _section(path="config.yaml"):
    return yaml.safe_load((ROOT / path).read_text())["followup"]


def _direct_fixture():
    s = _arm("closed-ended", 2) + _arm("open-ended", 4) + _arm("leading", 10) + _arm("neutral", 3)
    s += _arm("closed-ended", 0, variant="B") + _arm("open-ended", 1, variant="B") + _arm("leading", 2, variant="B")
    return s


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


def _mitigation_fixture():
    return (_arm("closed-ended", 10) + _arm("closed-ended", 6, mitigation="emotion_both")
            + _arm("closed-ended", 2, mitigation="cot_both") + _arm("closed-ended", 4, mitigation="fewshot"))


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


# ------------------------------------------------------------------------------------------- gates


def _decided(control_answers=("yes", "no"), n=40):
    return [_score(i, "closed-ended", [True, False]) for i in range(n)] + [
        _score(i, "neutral", [True, True], answers=control_answers if i < 28 else ("yes", "no")) for i in range(n)]


def test_a_gate_read_on_the_wrong_arm_would_leave_the_row_decided():
    assert _rows(_decided())["fo-01-m"]["verdict"] == "reproduced"  # +1.0 on 40 items
    bad = _decided(control_answers=(None, None))  # 28 of 40 control dialogues with no answer: 0.30 extractable
    row = _rows(bad)["fo-01-m"]
    assert (row["verdict"], row["would_be"]) == ("inconclusive", "reproduced")
    assert row["reason"].startswith("gated — the interval alone would say reproduced; failed: degenerate in control")
    assert "control: degenerate 0.30 ✗" in row["gate_figures"]
    table = claims.unit_tables(bad, OWN)["consistency_drops"].frame
    assert all(r.passes for r in read_gates(claims.GATES, table, ["challenge"]))  # the challenge arm alone passes


def test_replies_cut_at_the_cap_gate_the_row_and_thin_arms_too():
    cut = [{**s, "cut_turns": [False, True]} if s["rounds"][0]["question_type"] == "closed-ended" else s
           for s in _decided()]
    row = _rows(cut)["fo-01-m"]
    assert row["verdict"] == "inconclusive" and "challenge: degenerate 1.00, truncated 1.00 ✗" in row["gate_figures"]
    initial = [{**s, "cut_turns": [True, False]} for s in _decided()]  # the initial replies do not gate an M. Rate
    assert _rows(initial)["fo-01-m"]["verdict"] == "reproduced"
    thin = _decided(n=40)[:40] + [_score(i, "neutral", [True, True]) for i in range(9)]
    assert "control: degenerate 1.00, truncated 0.00, fewer than 10 items 9.00 ✗" in _rows(thin)["fo-01-m"]["gate_figures"]


def test_unextractable_follow_ups_gate_an_m_rate_row_and_an_initial_reply_gates_e_to_r():
    # every challenge follow-up without an answer: over both replies that would read 0.50 and pass; the
    # follow-up reply alone reads 0.00
    bad = [{**s, "answers": ["yes", None]} if s["rounds"][0]["question_type"] == "closed-ended" else s
           for s in _decided()]
    row = _rows(bad)["fo-01-m"]
    assert (row["verdict"], row["would_be"]) == ("inconclusive", "reproduced")
    assert "challenge: degenerate 0.00 ✗" in row["gate_figures"]
    # E→R: 40 items, 28 initially correct; the 12 wrong ones corrected by the challenge, by the control not; the
    # challenge's initial replies without an answer gate the row, its follow-ups being extractable
    fix = [_score(i, q, [i >= 12, i >= 12 or q == "closed-ended"], answers=(None, "yes") if i < 12 else ("yes", "no"))
           for q in ("closed-ended", "neutral") for i in range(40)]
    row = _rows(fix)["fo-05-m"]
    assert row["would_be"] == "reproduced" and row["verdict"] == "inconclusive"
    assert "challenge: degenerate 1.00, truncated 0.00, degenerate initial reply 0.00 ✗" in row["gate_figures"]


def test_a_claim_over_parts_gates_only_the_arms_its_parts_read():
    # the Few-shot + Zero-shot-CoT arm is no part of "CoT and few-shot beat EmotionPrompt" (few-shot is the 4-shot
    # arm alone) nor of "CoT mitigates more than EmotionPrompt and few-shot": its unextractable replies gate
    # neither, and it moves neither number; "every mitigation helps" reads it
    s = _mitigation_fixture() + _arm("closed-ended", 20, mitigation="fewshot_cot_followup", answers=("yes", None))
    tables = claims.unit_tables(s, OWN)
    assert set(tables["cot_fewshot_beat_emotion"].frame["cell"]) == {"emotion_both:A", "cot_both:A", "fewshot:A"}
    rows = _rows(s)
    assert rows["fo-07-m"]["effect"] == pytest.approx(min(0.3 - 0.1, 0.3 - 0.2))
    assert "fewshot_cot_followup" not in rows["fo-07-m"]["gate_figures"]
    assert "fewshot_cot_followup" not in rows["fo-09-m"]["gate_figures"]
    assert "fewshot_cot_followup:A: degenerate 0.00 ✗" in rows["fo-06-m"]["gate_figures"]
    assert cm.build_cot_fewshot_beat_emotion({"emotion_both:A", "fewshot_cot_followup:A"}) is None
    # the temperature claim reads only the datasets run at both temperatures
    t = _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")
    t += _arm("open-ended", 10, dataset="coin_flip", temperature="0")  # no own-temperature arm on CoinFlip
    assert set(claims.unit_tables(t, OWN)["temperature_zero_no_better"].frame["cell"]) == {
        "own:strategyqa", "t0:strategyqa"}


def test_the_wording_gates_read_each_model_and_question_type():
    two = {"m": "0.5", "n": "0.5"}
    s = []
    for model in two:
        bad = model == "n"  # n's leading follow-ups carry no answer
        for v, k in (("A", 10), ("B", 0)):
            s += _arm("leading", k, variant=v, model=model, answers=("yes", None) if bad else ("yes", "no"))
            s += _arm("closed-ended", k // 2, variant=v, model=model) + _arm("open-ended", 0, variant=v, model=model)
    table = cw.wording_table(s, two)
    per_model = table.groupby(["cell", "model"]).size()
    assert set(per_model.index.get_level_values("model")) == {"m", "n"}
    lead = table[table["cell"] == "leading"]
    assert set(lead["extractable_after"]) == {0.0} and set(lead["arm_items"]) == {40.0}  # the worst model's: n's
    assert set(table.loc[table["cell"] == "open-ended", "extractable_after"]) == {1.0}
    row = _rows(s, own=two)["fo-03-all"]
    assert "leading: degenerate 0.00 ✗" in row["gate_figures"] and "closed-ended: degenerate 1.00," in row["gate_figures"]


def test_mechanism_corrects_some_is_an_existence_claim_across_the_models():
    s = [_score(i, q, [i >= 12, i >= 12 or (q == "closed-ended" and i < 4)], model=m) for m in ("m", "n")
         for q in ("closed-ended", "neutral") for i in range(40)]
    rows = _rows(s, own={"m": "0.5", "n": "0.5"})
    assert rows["fo-05-any"]["counted"] and rows["fo-05-any"]["model"] == "any of 2"
    assert not rows["fo-05-m"]["counted"] and rows["fo-05-m"]["effect"] == pytest.approx(4 / 12)
    assert "Bonferroni over the models" in rows["fo-05-m"]["interval"]


def test_the_item_is_the_unit_and_a_dialogue_table_is_refused():
    table = claims.unit_tables(_direct_fixture(), OWN)["consistency_drops"]
    frame = check_table(claims.CLAIMS[0], table)
    assert frame.groupby("item").size().max() == 4  # three question types and the control nest in an item
    with pytest.raises(ValueError, match="finer unit"):
        check_table(claims.CLAIMS[0], UnitTable(frame.assign(d=frame["item"] + frame["dialogue"]), "d"))


# ------------------------------------------------------------------------------------------- precondition


def test_chance_and_the_exact_binomial_precondition():
    assert cm.chance("strategyqa") == cm.chance("coin_flip") == 0.5
    assert cm.chance("mmlu") == 0.25 and cm.chance("csqa") == 0.2 and cm.chance("multiarith") == 0.0
    # strategyqa 12/15: (455 + 105 + 15 + 1) / 2^15 = 0.0176; coin_flip 10/15: 0.151; mmlu 8/15 vs 1/4: 0.0173
    acc = {"strategyqa": (12, 15), "coin_flip": (10, 15), "mmlu": (8, 15), "multiarith": (0, 15)}
    kept, note = cm.precondition(acc, ["strategyqa", "coin_flip", "mmlu", "multiarith"])
    assert kept == ["mmlu", "strategyqa"]
    assert "strategyqa 12/15 vs chance 50%: p = 0.0176" in note and "coin_flip 10/15 vs chance 50%: p = 0.151 (left out)" in note


def _at_chance(challenge_flips: bool):
    """20 yes/no items, 10 initially correct (p = 0.588): the challenge flips all or none of them, the control
    the other."""
    return [_score(i, q, [i < 10, (i < 10) and not flips]) for q, flips in
            (("closed-ended", challenge_flips), ("neutral", not challenge_flips)) for i in range(20)]


def test_a_model_at_chance_is_not_applicable_where_guessing_could_explain_the_result():
    row = _rows(_at_chance(True))["fo-01-m"]
    assert (row["verdict"], row["would_be"]) == ("not applicable", "reproduced") and row["n_items"] == 10
    assert row["precondition_note"] == "above chance: not met (strategyqa 10/20 vs chance 50%: p = 0.588 (left out))"
    # the control arm is as fragile for a guesser: the failure's bias is unknown, so it explains either side
    row = _rows(_at_chance(False))["fo-01-m"]
    assert (row["verdict"], row["would_be"]) == ("not applicable", "contradicted")
    assert row["reason"].startswith("not applicable — the interval alone would say contradicted; failed: above "
                                    "chance (unknown)")


def test_a_dataset_at_chance_is_left_out_of_the_models_table():
    good = _arm("closed-ended", 4) + _arm("neutral", 1)
    bad = [_score(i, q, [i < 10, False], dataset="coin_flip") for q in ("closed-ended", "neutral") for i in range(20)]
    row = _rows(good + bad)["fo-01-m"]
    assert row["effect"] == pytest.approx(0.20 - 0.05) and row["n_items"] == 20 and row["applicable"]
    assert "coin_flip 10/20 vs chance 50%: p = 0.588 (left out)" in row["precondition_note"]


def test_every_model_gets_a_row_a_model_not_run_included():
    s = _arm("closed-ended", 2) + _arm("neutral", 1)
    rows = _rows(s, own={"m": "0.5", "n": "0.5"})
    assert rows["fo-01-n"]["reason"] == "not measured in this run" and rows["fo-01-m"]["n_items"] == 20
    assert len(claims.measure([], OWN, n_boot=10)) == 11  # nine claims, the two existence claims with a member


# ------------------------------------------------------------------------------------------------- paper


def test_paper_effects_by_hand():
    effects, texts = claims.paper_effects(_tables(), _section())
    tol = 2e-3  # one pseudo-item per 0.1 % of a dataset
    # Table 8, ChatGPT, prompt A on StrategyQA, CoinFlip, MultiArith, MMLU: Σ M. 426.88 / Σ before 818.11
    assert effects["consistency_drops"] == pytest.approx(426.88 / 818.11, abs=tol)
    # Table 5, the largest over its three models: ChatGPT 17.1 %, PaLM2-Bison (34.79·40.59 + 49.80·18.07 +
    # 5.56·0) / 90.15 = 25.6 %, Vicuna-13B 18.4 %
    assert effects["mechanism_corrects_some"] == pytest.approx(
        (34.79 * 40.59 + 49.80 * 18.07) / (34.79 + 49.80 + 5.56) / 100, abs=tol)
    # Table 3 over the config's paper models (ChatGPT, Vicuna-13B): ChatGPT's largest rise is StrategyQA's
    # +0.027, Vicuna-13B's MultiArith's (1e-4 is its T = 0): 47.78 / 55.56 − 42.22 / 55.00 = +0.092
    assert effects["temperature_zero_no_better"] == pytest.approx(47.78 / 55.56 - 42.22 / 55.00, abs=tol)
    only_chatgpt = claims.paper_effects(_tables(), {**_section(), "paper_models": {}})[0]
    assert only_chatgpt["temperature_zero_no_better"] == pytest.approx(42.94 / 61.57 - 44.69 / 66.67, abs=tol)
    assert texts["consistency_drops"] == ("+0.522 (Table 8, ChatGPT, prompt A; the paper runs no control (0); the "
                                          "run's datasets)")
    # every cell of Figure 4 (eight datasets, A/B/C) gives +7.7; the run's four datasets and pair A-B +16.8
    full = claims.paper_effects(_tables(), {**_section(), "datasets": list(BENCHMARKS), "variants": ["A", "B", "C"]})
    assert full[1]["wording_sensitivity_ranking"].startswith("+7.7 points² (Tables 8/10/12")
    assert texts["wording_sensitivity_ranking"].startswith("+16.8 points²")
    assert "over its eight datasets and A/B/C only" in texts["wording_sensitivity_ranking"]
    assert claims.wording_effect(_tables(), ["coin_flip"], ["A", "B"])[0] < 0  # not the paper's ranking there


def test_the_paper_effect_is_each_models_on_the_datasets_its_row_keeps():
    # Table 19, ChatGPT, prompt A, MultiArith alone: EmotionPrompt 16.67/17.14 % = 0.171, Zero-shot-CoT 0.064,
    # Few-shot (4-shot) 20.00/20.00 % = 0.200: min(0.171 − 0.064, 0.171 − 0.200) = −0.028
    effects, texts = claims.paper_effects(_tables(), _section(), {"cot_fewshot_beat_emotion": {"m": ("multiarith",)}})
    assert effects["cot_fewshot_beat_emotion"]["m"] == pytest.approx(0.1714 - 0.2000, abs=2e-3)
    assert texts["cot_fewshot_beat_emotion"]["m"].startswith("-0.028 (Table 19, ChatGPT")
    # a model above chance on MultiArith alone, whose own interval says reproduced: not testable there
    s = [_score(i, "leading", [True, i >= 40], mitigation="emotion_both", dataset="multiarith") for i in range(40)]
    s += [_score(i, "leading", [True, True], mitigation=m, dataset="multiarith") for m in ("cot_both", "fewshot")
          for i in range(40)]
    s += [_score(i, "leading", [True, True], dataset="multiarith") for i in range(40)]  # the plain runs
    row = _rows(s, paper=(_tables(), _section()))["fo-07-m"]
    assert row["effect"] == pytest.approx(1.0) and row["would_be"] == "reproduced"
    assert (row["verdict"], row["paper_verdict"]) == ("inconclusive", "contradicted")
    assert row["reason"].startswith("not testable here: the paper's own effect on these cells, -0.0284")
    assert row["paper"].startswith("-0.028 (") and row["paper"].endswith("; multiarith)")
    # on the run's three focus datasets the paper's effect is +0.126: a row there is testable
    assert claims.paper_effects(_tables(), _section())[0]["cot_fewshot_beat_emotion"] == pytest.approx(0.126, abs=2e-3)


@pytest.mark.parametrize("overrides", [{}, {"variants": ["A", "B", "C"], "mitigation_variants": None,
                                            "mitigations": list(MITIGATIONS)[1:], "datasets": list(BENCHMARKS)}])
def test_the_paper_passes_its_own_rows(overrides):
    rows = claims.measure([], OWN, paper=(_tables(), {**_section(), **overrides}), n_boot=10)
    assert {r["claim"]: r["paper_verdict"] for r in rows} == {c.id: "reproduced" for c in claims.CLAIMS}
    assert all(r["paper"] for r in rows)
