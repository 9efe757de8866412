"""followup claims ledger: the gates (cut and unextractable replies, thin arms) read on exactly the arms a claim
reads (a gate read on the wrong arm would leave the row decided), and the above-chance precondition, on made-up
item scores."""

from __future__ import annotations

import pytest

from wobble.report.engine import UnitTable, check_table
from wobble.report.gates import read_gates
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup import claims_wording as cw

from followup_claims_scores import OWN, _arm, _direct_fixture, _mitigation_fixture, _rows, _score


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
    assert row["reason"].startswith("not applicable — the interval alone would say contradicted; failed: not shown "
                                    "above chance (20 items per dataset) (unknown)")


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
