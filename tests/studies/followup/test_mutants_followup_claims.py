"""followup claims ledger: the finer behaviour of the arms, builders, unit-table columns, paper cells and the
findings() wiring (what a mutation of claims*.py would change)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from wobble.report.findings import Ledger
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup import claims_paper as cp
from wobble.studies.followup.prompts import MITIGATIONS

from test_followup_claims import PAPER, _arm, _score, _section, _tables  # noqa: E402 (the same made-up scores)


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


def test_pseudo_items_of_the_papers_cells():
    t = cp.pseudo_items({"a": (np.array([1.25, np.nan]), np.array([5.0, 3.0]))})
    assert len(t) == 50 and t["flip"].sum() == 12  # 10·5 items, round(10·1.25) flips; the "?" cell left out
    assert t["item"].is_unique and set(t["cell"]) == {"a"}


def test_paper_restricts_to_the_runs_cells_and_falls_back_to_all():
    t8 = _tables()[8]
    one = cp.direct_arms(t8, ["strategyqa"], ["A"], False)
    assert len(one["challenge"][0]) == 3  # StrategyQA's three question types at prompt A
    none = cp.direct_arms(t8, [], ["A"], False)
    assert len(none["challenge"][0]) == 24  # eight datasets
    keys = {k.split(":")[0] for k in cp.mitigation_arms(_tables()[19], ["strategyqa"], ["A"], [], False)}
    assert keys == set(MITIGATIONS)
    assert set(cp.temperature_arms(_tables()[3], ["coin_flip"], "Vicuna-13B")) == {"t0:coin_flip", "own:coin_flip"}
    assert cp.paper_models({"models": ["x", "y"], "paper_models": {"y": "Vicuna-13B"}}) == ["ChatGPT", "Vicuna-13B"]


def test_a_paper_table_without_a_column_it_is_read_by_is_one_clear_error(tmp_path):
    from wobble.errors import DataError

    bad = tmp_path / "t3.csv"
    bad.write_text("model,dataset\nChatGPT,StrategyQA\n")
    inputs = {f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES} | {"paper_table3": str(bad)}
    with pytest.raises(DataError, match="missing"):
        claims.read_tables(inputs)


def _config(n_items=5):
    return {"models": {"m": {"source": "tiny"}},
            "followup": {**_section(), "models": ["m"], "temperature": 0.5, "bootstrap": {"n": 40, "seed": 7},
                         "n_items": n_items, "model_temperature": {}}}


def _findings(tmp_path, monkeypatch, made_up, n_records):
    from wobble.io import write_jsonl
    from wobble.studies.followup import pipeline

    recs = [{"turns": [{"finish_reason": "stop"}, {"finish_reason": "length"}]} for _ in range(n_records)]
    write_jsonl(tmp_path / "d0.jsonl", recs)
    monkeypatch.setattr(pipeline, "scores", lambda records: [dict(s) for s in made_up])
    inputs = {"dialogues": [str(tmp_path / "d0.jsonl")],
              **{f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}}
    return claims.findings(inputs, _config())


def test_findings_returns_a_ledger_with_the_cut_replies_counted(tmp_path, monkeypatch):
    made_up = [{**x, "cut_turns": None} for x in _arm("closed-ended", 2) + _arm("neutral", 1)]
    f = _findings(tmp_path, monkeypatch, made_up, len(made_up))
    assert isinstance(f, Ledger) and f.title.startswith("Claims ledger: followup")
    row = f.rows()[0]
    assert row["row_id"] == "fo-01-m" and "truncated 1.00 ✗" in row["gate_figures"]  # the follow-up cut
    # the paper's effect on the one dataset the row keeps: Table 8, ChatGPT, StrategyQA, prompt A,
    # (44.69 + 42.65 + 51.38) / (66.67 + 67.54 + 66.52) = 0.691
    assert row["paper_verdict"] == "reproduced" and row["paper_effect"] == pytest.approx(138.72 / 200.73, abs=2e-3)
    assert row["paper"] == "+0.691 (Table 8, ChatGPT, prompt A; the paper runs no control (0); strategyqa)"
    assert f.notes[1].startswith("Control (wobble's, not the paper's)")
    unpaired = _findings(tmp_path, monkeypatch, made_up, 3)  # scores and records do not pair: cut unknown
    assert "truncated nan ✗" in unpaired.rows()[0]["gate_figures"]
