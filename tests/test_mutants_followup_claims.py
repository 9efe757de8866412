"""followup claims ledger: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from pathlib import Path

import pytest

from wobble.report.cells import read_paper
from wobble.studies.followup import claims

PAPER = Path(__file__).resolve().parents[1] / "paper" / "followup"
OWN = {"m": "0.5"}


def _score(item, qtype, correct, *, form="direct", mitigation="none", temperature="0.5", variant="A", gate="all",
           dataset="strategyqa"):
    rounds = ([{"question_type": q, "variant": variant} for q in ("closed-ended", "open-ended", "leading")]
              if form == "progressive" else [{"question_type": qtype, "variant": variant}])
    return {"model": "m", "dataset": dataset, "item": item, "form": form, "mitigation": mitigation,
            "temperature": temperature, "rounds": rounds, "correct": list(correct), "gate": gate}


def _direct(qtype, n, flipped, **kw):
    """``n`` initially correct items; items < ``flipped`` are wrong after the follow-up."""
    return [_score(i, qtype, [True, i >= flipped], **kw) for i in range(n)]


def test_declared_thresholds_and_directions():
    by_id = {c.id: c for c in claims.CLAIMS}
    assert (claims.SHARP, claims.MIN_CORRECT) == (10.0, 10)
    assert by_id["consistency_drops"].null == 10.0 and by_id["temperature_zero_keeps_effect"].null == 10.0
    assert (by_id["mechanism_corrects_few"].direction, by_id["mechanism_corrects_few"].null) == (-1, 50.0)
    assert {c.id: c.unit for c in claims.CLAIMS} == {
        "consistency_drops": "%", "leading_most_sensitive": "points", "progressive_accumulates": "points",
        "temperature_zero_keeps_effect": "%", "mechanism_corrects_few": "%", "cot_fewshot_beat_emotion": "points"}
    assert all(c.study == "followup" for c in claims.CLAIMS)


def test_ten_initially_correct_answers_are_enough_nine_are_not():
    ten = claims.measure(_direct("closed-ended", 10, 2), OWN, n_boot=50)["consistency_drops"]
    nine = claims.measure(_direct("closed-ended", 9, 2), OWN, n_boot=50)["consistency_drops"]
    assert not ten.degenerate and "in an arm" not in ten.note
    assert nine.degenerate and nine.note.endswith("; < 10 in an arm")


def test_a_multi_arm_claim_names_its_smallest_arm():
    s = _direct("closed-ended", 20, 2) + _direct("open-ended", 12, 4) + _direct("leading", 15, 10)
    m = claims.measure(s, OWN, n_boot=50)
    assert "(fewest in one arm: 12)" in m["leading_most_sensitive"].note
    assert "fewest" not in m["consistency_drops"].note


def test_every_mitigation_name_falls_in_its_arm():
    assert claims.EMOTION == ("emotion_initial", "emotion_followup", "emotion_both")
    assert claims.COT_FEWSHOT == ("cot_initial", "cot_followup", "cot_both", "fewshot", "fewshot_cot_followup")
    for name in claims.EMOTION + claims.COT_FEWSHOT + ("none", "other"):
        s = _score(0, "closed-ended", [True, False], mitigation=name)
        expected = "emotion" if name.startswith("emotion") else None if name in ("none", "other") else "cot_fewshot"
        assert claims._mitigation_arm(s, OWN) == expected, name
    assert claims._mitigation_arm(_score(0, "closed-ended", [True, False], mitigation="emotion_both",
                                         temperature="0"), OWN) is None


def test_emotional_follow_ups_are_not_direct_form_rounds():
    s = _direct("closed-ended", 20, 2) + _direct("emotional", 20, 20)
    assert claims.measure(s, OWN, n_boot=50)["consistency_drops"].effect == pytest.approx(10.0)


def test_progressive_claim_reads_only_prompt_set_a_without_mitigation():
    base = [_score(i, None, [True, i >= 2, i >= 5, i >= 8], form="progressive") for i in range(20)]
    other = [_score(100 + i, None, [True, True, True, True], form="progressive", variant="B") for i in range(20)]
    other += [_score(200 + i, None, [True, True, True, True], form="progressive", mitigation="cot_both")
              for i in range(20)]
    m = claims.measure(base + other, OWN, n_boot=50)["progressive_accumulates"]
    assert m.effect == pytest.approx(40 - 10) and m.n_items == 20


def test_e_to_r_reads_the_three_focus_datasets_gate_all_only():
    wrong = []
    for k, dataset in enumerate(("strategyqa", "coin_flip", "multiarith", "gsm8k")):
        wrong += [_score(f"{k}-{i}", "closed-ended", [False, i < k + 1], dataset=dataset) for i in range(10)]
    wrong += [_score(f"g{i}", "closed-ended", [False, True], gate="correct") for i in range(10)]
    m = claims.measure(wrong, OWN, n_boot=50)["mechanism_corrects_few"]
    assert m.effect == pytest.approx(100 * (1 + 2 + 3) / 30) and m.n_items == 30


def test_no_initially_correct_answer_gives_no_effect():
    s = [_score(i, "closed-ended", [False, False]) for i in range(12)]
    m = claims.measure(s, OWN, n_boot=50)["consistency_drops"]
    assert m.effect is None and m.ci_low is None and m.ci_high is None and m.degenerate


def test_measure_defaults_are_1000_resamples_seed_0():
    s = _direct("closed-ended", 20, 5) + _direct("leading", 20, 9) + _direct("open-ended", 20, 3)
    assert claims.measure(s, OWN) == claims.measure(s, OWN, n_boot=1000, seed=0)
    assert claims.measure(s, OWN) != claims.measure(s, OWN, n_boot=1000, seed=1)


def test_paper_values_hand_checked():
    v = claims.paper_values({n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES})
    assert v["consistency_drops"] == "52.7 (Table 8, prompt A, mean of 24 cells)"
    assert v["leading_most_sensitive"] == ("+27.1 (Table 8 means: closed-ended 24.7, open-ended 45.9, "
                                           "leading 72.9)")
    assert v["progressive_accumulates"] == "+58.8 (Table 9, prompt A: round 3 88.3 vs round 1 29.5)"
    # EmotionPrompt rows (3 positions x 3 datasets): 538.78 / 9 = 59.86
    assert v["cot_fewshot_beat_emotion"] == "+19.1 (Table 6 means: 59.9 vs 40.8)"
