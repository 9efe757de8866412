"""followup claims ledger: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from wobble.report.cells import read_paper
from wobble.studies.followup import claims

from test_followup_claims import _score  # noqa: E402 (the same made-up item scores)

PAPER = Path(__file__).resolve().parents[1] / "paper" / "followup"
OWN = {"m": "0.5"}


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


def _irregular(n=60):
    """Direct-Form items of all three question types with irregular flips, so intervals move with n and seed."""
    s = []
    for q, k in (("closed-ended", 3), ("open-ended", 5), ("leading", 7)):
        s += [_score(i, q, [True, (i * k) % 11 < 6]) for i in range(n)]
    return s


def test_measure_defaults_are_1000_resamples_seed_0():
    s = _irregular()
    assert claims.measure(s, OWN) == claims.measure(s, OWN, n_boot=1000, seed=0)
    assert claims.measure(s, OWN) != claims.measure(s, OWN, n_boot=1000, seed=1)


def test_measure_default_resamples_are_1000(monkeypatch):
    """n=1000 and n=1001 share their first 1000 resamples, so the count is read where it is used."""
    seen = []
    real = claims.bootstrap_indices
    monkeypatch.setattr(claims, "bootstrap_indices", lambda m, n, seed: seen.append(n) or real(m, n, seed))
    claims.measure(_direct("closed-ended", 20, 2), OWN)
    assert seen and set(seen) == {1000}


def test_measure_reads_its_scores_once_from_any_iterable():
    s = _irregular(20)
    assert claims.measure(iter(s), OWN, n_boot=50) == claims.measure(s, OWN, n_boot=50)


def test_leading_gap_pools_every_annotator_at_the_models_own_temperature():
    s = _direct("closed-ended", 20, 2) + _direct("open-ended", 20, 4) + _direct("leading", 20, 10)  # 10, 20, 50 %
    # annotator B's leading prompt: 20 more items, none flipped -> leading 25 %, gap +5
    s += [_score(100 + i, "leading", [True, True], variant="B") for i in range(20)]
    # another temperature's rows do not count
    s += [_score(200 + i, "leading", [True, False], temperature="0.7") for i in range(20)]
    assert claims.measure(s, OWN, n_boot=50)["leading_most_sensitive"].effect == pytest.approx(25 - 20)


def test_progressive_rows_need_prompt_a_in_every_round():
    base = [_score(i, None, [True, i >= 2, i >= 5, i >= 8], form="progressive") for i in range(20)]
    mixed = [_score(100 + i, None, [True, True, True, True], form="progressive") for i in range(20)]
    for m in mixed:
        m["rounds"][1]["variant"] = m["rounds"][2]["variant"] = "B"
    assert claims.measure(base + mixed, OWN, n_boot=50)["progressive_accumulates"].effect == pytest.approx(30)


def test_mitigation_arms_pool_every_annotator():
    s = _direct("closed-ended", 20, 6, mitigation="emotion_both", variant="B")  # 30 %
    s += _direct("closed-ended", 20, 2, mitigation="cot_both", variant="C")  # 10 %
    m = claims.measure(s, OWN, n_boot=50)["cot_fewshot_beat_emotion"]
    assert m.effect == pytest.approx(20) and m.note == "20 items; 40 initially correct (fewest in one arm: 20)"


def test_mitigation_claim_needs_both_arms_even_when_other_claims_have_theirs():
    s = _direct("closed-ended", 20, 2) + _direct("open-ended", 20, 4) + _direct("leading", 20, 10)
    assert claims.measure(s, OWN, n_boot=50)["cot_fewshot_beat_emotion"] is None


def test_notes_are_exact():
    ten = claims.measure(_direct("closed-ended", 10, 2), OWN, n_boot=50)["consistency_drops"]
    assert ten.note == "10 items; 10 initially correct"
    nine = claims.measure(_direct("closed-ended", 9, 2), OWN, n_boot=50)["consistency_drops"]
    assert nine.note == "9 items; 9 initially correct; < 10 in an arm"


def test_ledger_text_of_each_claim():
    """What the ledger prints beside each claim (the quotes are checked against the paper in test_claim_quotes)."""
    assert {c.id: (c.section, c.paper_value, c.effect) for c in claims.CLAIMS} == {
        "consistency_drops": ("Abstract, §3.2 Figure 2", "",
                              "Direct-Form M. Rate (prompt A, all question types and datasets)"),
        "leading_most_sensitive": ("§3.3 The Impact of Different Prompts", "",
                                   "M. Rate: leading − max(closed-ended, open-ended), Direct Form, annotators A/B/C"),
        "progressive_accumulates": ("§3.2 Figure 3/4, Tables 9/11/13", "",
                                    "Progressive-Form M. Rate: after round 3 − after round 1 (prompt set A)"),
        "temperature_zero_keeps_effect": ("§3.3 The Impact of Sampling Temperature, Table 3", "",
                                          "Direct-Form M. Rate at temperature 0 (StrategyQA closed, CoinFlip open, "
                                          "MultiArith leading)"),
        "mechanism_corrects_few": ("§3.3 Can The Mechanism Correct Models?, Table 5", "",
                                   "E→R Rate: initially wrong answers right after the follow-up"),
        "cot_fewshot_beat_emotion": ("§4, Table 6", "", "M. Rate: EmotionPrompt − (Zero-shot-CoT, few-shot)"),
    }


def test_paper_values_read_unreadable_cells_as_missing():
    """A cell the PDF extraction could not read ("?") is left out of a mean, not an error."""
    tables = {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}
    t8 = tables[8].copy()
    first = t8.index[(t8["model"] == "ChatGPT") & (t8["prompt"] == "A")][0]
    t8.loc[first, "modification_rate_pct"] = "?"
    v = claims.paper_values({**tables, 8: t8})
    assert v["consistency_drops"].endswith("(Table 8, prompt A, mean of 24 cells)")


def test_paper_values_hand_checked():
    v = claims.paper_values({n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES})
    assert v["consistency_drops"] == "52.7 (Table 8, prompt A, mean of 24 cells)"
    assert v["leading_most_sensitive"] == ("+27.1 (Table 8 means: closed-ended 24.7, open-ended 45.9, "
                                           "leading 72.9)")
    assert v["progressive_accumulates"] == "+58.8 (Table 9, prompt A: round 3 88.3 vs round 1 29.5)"
    # EmotionPrompt rows (3 positions x 3 datasets): 538.78 / 9 = 59.86
    assert v["cot_fewshot_beat_emotion"] == "+19.1 (Table 6 means: 59.9 vs 40.8)"


def test_paper_values_keep_a_combined_emotion_cot_row_out_of_both_arms():
    """Table 6 has no row mixing EmotionPrompt and CoT; one that did belongs to neither arm."""
    tables = {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}
    t6 = tables[6]
    row = t6[t6["model"] == "ChatGPT"].iloc[[0]].copy()
    row["mitigation"] = "w/ EmotionPrompt + Zero-shot-CoT (both the initial and follow-up inputs)"
    row["modification_rate_pct"] = "99.00"
    combined = claims.paper_values({**tables, 6: pd.concat([t6, row], ignore_index=True)})
    assert combined["cot_fewshot_beat_emotion"] == "+19.1 (Table 6 means: 59.9 vs 40.8)"


def _ledger_config(n_items):
    return {"models": {"m": {"source": "tiny"}},
            "followup": {"models": ["m"], "temperature": 0.5, "bootstrap": {"n": 40, "seed": 7},
                         "n_items": n_items, "datasets": ["strategyqa", "coin_flip"], "gate": "all",
                         "max_new_tokens": 9}}


def _ledger(tmp_path, monkeypatch, n_items=5):
    """findings() over two dialogue files; the scoring of dialogues is stood in for by made-up item scores."""
    from wobble.io import write_jsonl
    from wobble.studies.followup import pipeline

    paths = []
    for k in range(2):
        paths.append(tmp_path / f"d{k}.jsonl")
        write_jsonl(paths[-1], [{"dialogue": k}])
    seen = []
    monkeypatch.setattr(pipeline, "scores", lambda records: seen.append(list(records)) or _irregular())
    inputs = {"dialogues": [str(p) for p in paths],
              **{f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}}
    return claims.findings(inputs, _ledger_config(n_items)), seen


def test_findings_measures_every_dialogue_file_with_the_configured_bootstrap(tmp_path, monkeypatch):
    f, seen = _ledger(tmp_path, monkeypatch)
    assert seen == [[{"dialogue": 0}, {"dialogue": 1}]]
    assert f.title == 'Claims ledger: followup ("Ask Again, Then Fail", ICLR 2024 submission)'
    assert f.claims == claims.CLAIMS
    assert f.measured == claims.measure(_irregular(), {"m": "0.5"}, n_boot=40, seed=7)
    assert f.measured != claims.measure(_irregular(), {"m": "0.5"}, n_boot=40, seed=0)
    assert f.measured != claims.measure(_irregular(), {"m": "0.5"}, n_boot=1000, seed=7)
    tables = {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}
    assert f.paper_values == claims.paper_values(tables)


def test_findings_notes_name_models_sample_and_settings(tmp_path, monkeypatch):
    from wobble.models.describe import model_label

    f, _ = _ledger(tmp_path, monkeypatch, n_items=5)
    label = model_label(_ledger_config(5)["models"], "m")
    assert f.notes == (
        f"Ours: {label} at temperature 0.5; 5 items per dataset of strategyqa, coin_flip; gate 'all'; "
        "max_new_tokens 9.",
        "Paper: ChatGPT (gpt-3.5-turbo-0301), PaLM2-Bison, Vicuna-13B on all test items; the paper column is "
        "ChatGPT's, computed by code from its printed tables (the table is named in the cell).")
    every, _ = _ledger(tmp_path, monkeypatch, n_items=None)
    assert "; all items per dataset of " in every.notes[0]


def test_findings_joins_several_models_with_their_own_temperatures(tmp_path, monkeypatch):
    from wobble.models.describe import model_label

    cfg = _ledger_config(5)
    cfg["models"]["n"] = {"source": "tiny"}
    cfg["followup"].update(models=["m", "n"], model_temperature={"n": 0})
    from wobble.io import write_jsonl
    from wobble.studies.followup import pipeline

    write_jsonl(tmp_path / "d.jsonl", [{"dialogue": 0}])
    monkeypatch.setattr(pipeline, "scores", lambda records: _irregular())
    inputs = {"dialogues": [str(tmp_path / "d.jsonl")],
              **{f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}}
    f = claims.findings(inputs, cfg)
    models = cfg["models"]
    assert f.notes[0].startswith(f"Ours: {model_label(models, 'm')} at temperature 0.5; "
                                 f"{model_label(models, 'n')} at temperature 0; 5 items")
    assert f.measured == claims.measure(_irregular(), {"m": "0.5", "n": "0"}, n_boot=40, seed=7)
