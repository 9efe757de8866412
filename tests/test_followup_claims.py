"""followup claims ledger: each claim's effect against hand-computed values on made-up item scores, the paper's
values from its printed tables, and the verdicts the shared rule gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from wobble.report.cells import read_paper
from wobble.report.claims import ledger_rows
from wobble.studies.followup import claims

PAPER = Path(__file__).resolve().parents[1] / "paper" / "followup"
OWN = {"m": "0.5"}


def _score(item, qtype, correct, *, form="direct", mitigation="none", temperature="0.5", variant="A", gate="all",
           dataset="strategyqa"):
    rounds = ([{"question_type": q, "variant": variant} for q in ("closed-ended", "open-ended", "leading")]
              if form == "progressive" else [{"question_type": qtype, "variant": variant}])
    return {"model": "m", "dataset": dataset, "item": item, "form": form, "mitigation": mitigation,
            "temperature": temperature, "rounds": rounds, "correct": list(correct), "gate": gate}


def _direct(qtype, flipped, **kw):
    """20 initially correct items; items < ``flipped`` are wrong after the follow-up."""
    return [_score(i, qtype, [True, i >= flipped], **kw) for i in range(20)]


def _fixture():
    s = _direct("closed-ended", 2) + _direct("open-ended", 4) + _direct("leading", 10)  # 10 %, 20 %, 50 %
    # progressive A: wrong after round 1 for items 0-1 (10 %), after round 3 for items 0-7 (40 %)
    s += [_score(i, None, [True, i >= 2, i >= 5, i >= 8], form="progressive") for i in range(20)]
    s += _direct("closed-ended", 5, temperature="0")  # temperature 0: 25 %
    # ten initially wrong items, three of them right after the follow-up (E->R 30 %)
    s += [_score(20 + i, "closed-ended", [False, i < 3]) for i in range(10)]
    s += _direct("closed-ended", 6, mitigation="emotion_both")  # 30 %
    s += _direct("closed-ended", 2, mitigation="cot_both") + _direct("closed-ended", 4, mitigation="fewshot")  # 15 %
    return s


def test_effects_hand_computed():
    m = claims.measure(_fixture(), OWN, n_boot=200, seed=0)
    assert m["consistency_drops"].effect == pytest.approx(100 * (2 + 4 + 10) / 60)
    assert m["leading_most_sensitive"].effect == pytest.approx(50 - 20)
    assert m["progressive_accumulates"].effect == pytest.approx(40 - 10)
    assert m["temperature_zero_keeps_effect"].effect == pytest.approx(25)
    assert m["mechanism_corrects_few"].effect == pytest.approx(30)
    assert m["cot_fewshot_beat_emotion"].effect == pytest.approx(30 - 15)
    for x in m.values():
        assert x.ci_low <= x.effect <= x.ci_high
    assert m["consistency_drops"].n_items == 30 and not m["consistency_drops"].degenerate
    assert "60 initially correct" in m["consistency_drops"].note
    assert m["mechanism_corrects_few"].note.startswith("30 items; 10 initially wrong")


def test_missing_arms_are_not_measured_and_few_answers_are_degenerate():
    only_closed = _direct("closed-ended", 2)
    m = claims.measure(only_closed, OWN, n_boot=100, seed=0)
    assert m["leading_most_sensitive"] is None and m["progressive_accumulates"] is None
    assert m["cot_fewshot_beat_emotion"] is None and m["temperature_zero_keeps_effect"] is None
    few = [_score(i, "closed-ended", [True, i > 0]) for i in range(5)]
    d = claims.measure(few, OWN, n_boot=100, seed=0)["consistency_drops"]
    assert d.effect == pytest.approx(20) and d.degenerate
    # another model's temperature is not this model's own
    other = claims.measure(_direct("closed-ended", 2, temperature="0.7"), OWN, n_boot=100, seed=0)
    assert other["consistency_drops"] is None


def test_verdicts_follow_the_shared_rule():
    rows = {r["claim"]: r for r in ledger_rows(claims.CLAIMS, claims.measure(_fixture(), OWN, n_boot=500, seed=0))}
    # 26.7 % flipped, CI well above the 10 % "sharp" threshold
    assert rows["consistency_drops"]["verdict"] == "reproduced"
    assert rows["leading_most_sensitive"]["verdict"] == "reproduced"
    # E->R 30 % of 10 wrong answers: the interval reaches 50 %, so "corrects only some" is not decided
    assert rows["mechanism_corrects_few"]["verdict"] in ("inconclusive", "reproduced")
    assert {r["verdict"] for r in rows.values()} <= {"reproduced", "contradicted", "inconclusive"}


def test_measure_is_deterministic():
    a = claims.measure(_fixture(), OWN, n_boot=100, seed=3)
    assert a == claims.measure(_fixture(), OWN, n_boot=100, seed=3)


def test_paper_values_from_the_printed_tables():
    # paper/followup/ is committed: a missing folder is a broken path, not a reason to skip
    v = claims.paper_values({n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES})
    assert v["mechanism_corrects_few"] == "17.5 (Table 5, mean of 12.5–26.9)"  # ChatGPT: 12.50, 13.23, 26.87
    # Table 3, ChatGPT at temperature 0: M. Rate 69.74, 88.21, 67.24 -> 75.06
    assert v["temperature_zero_keeps_effect"] == "75.1 (Table 3, temperature 0, mean of 3 cells)"
    assert v["progressive_accumulates"].startswith("+") and "round 3" in v["progressive_accumulates"]
    assert "leading" in v["leading_most_sensitive"] and set(v) == {c.id for c in claims.CLAIMS}
