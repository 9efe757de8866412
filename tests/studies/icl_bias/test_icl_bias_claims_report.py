"""icl_bias claims against the paper and under calibration: the paper's effect on the run's own pairs and the paper
passing its own rows, the calibration check (content-free recalibration and its sensitivity table), and the ledger
findings() writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.report.cells import read_paper
from wobble.report.rules import interval_verdict
from wobble.studies.icl_bias import calibration as K
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims import CLAIMS, COUNT
from wobble.studies.icl_bias.claims_measure import INTERVENTIONS
from wobble.studies.icl_bias.claims_report import draws_note, findings, measured_pairs, paper_cell, paper_effects
from wobble.studies.icl_bias.pairs import PAIRS, split_source

from icl_bias_claims_records import MODELS, NEG, QW, SA, _two_models, answers, drawn, frame, rows_by_id

ROOT = Path(__file__).resolve().parents[3]
PAPER = ROOT / "paper" / "icl_bias"
DEFAULT_PAIRS = ["sa_sentiment_punctuation", "nli_entailment_negation", "comments_toxicity_length",
                 "boolq_answer_qword"]


def paper_tables() -> dict[str, pd.DataFrame]:
    return {t: read_paper(PAPER / f"{t}.csv") for t in ("table2", "table4", "table5")}


# ------------------------------------------------------------------------------------------------ the paper

def test_the_paper_frame_maps_rows_to_pairs_and_reads_the_baseline_where_printed():
    df = pd.DataFrame([
        ["4", "Davinci", "h1", "NLI", "genre", "Baseline", "11.5", "88.5"],
        ["4", "Davinci", "h2", "SA", "punctuation", "Baseline", "98.3", "1.7"],
        ["4", "Davinci", "h2", "SA", "punctuation", "DisAmbig", "73.1", "26.9"],
        ["4", "Davinci", "h2", "SA", "Aggregate", "Baseline", "1", "2"],
    ], columns=["table", "model", "steer_towards", "dataset", "feature", "intervention", "h1_acc", "h2_acc"])
    cells = M.FrameCells(M.paper_frame({"table4": df}))
    assert cells.acc("Davinci", "nli_entailment_genre_gov_fic", "baseline", "h2") == pytest.approx(88.5)
    assert cells.acc("Davinci", "nli_entailment_genre_gov_tele", "baseline", "h2") == pytest.approx(88.5)
    assert cells.acc("Davinci", SA, "disambig-h2", "h2") == pytest.approx(26.9)
    with pytest.raises(DataError, match=r"paper/icl_bias/table4.csv: record header: columns"):
        M.paper_frame({"table4": df.drop(columns=["h2_acc"])})


def test_the_papers_effects_on_the_default_pairs_hand_computed():
    eff = paper_effects(CLAIMS, paper_tables(), DEFAULT_PAIRS, ("verbalizer", "instruction", "disambig"))
    # Davinci baseline h2: NLI negation 41.9, QA question word 60.2 -> (41.9 + 60.2) / 2 - 50 = +1.05
    assert eff["base_prefers_shallow_features"] == pytest.approx(1.05)
    # tuned - base baseline h1: (99.1-98.3 + 65.3-58.1 + 45.9-36.6 + 79.7-39.8) / 4 = 14.3
    assert eff["tuned_prefers_default_feature"] == pytest.approx(14.3)
    # the changes recomputed from Tables 4-5 on the four pairs, without explanations: 11 of 12 above 0 (Davinci
    # instruction→h2: (26.6-20.5 + 17.2-15.9 + 41.0-54.1 + 35.2-39.8)... / pairs it has, below 0)
    assert eff[COUNT] == pytest.approx(11 / 12)
    assert eff["strong_prior_resists_interventions"] == pytest.approx(-41.2)  # (15.6 + 2.0) / 2 - 50
    assert "non_semantic_features_hard_to_steer" not in eff  # no such pair in the run: no effect, not all 22


def test_the_papers_effect_is_on_the_pairs_the_run_measured():
    f = frame()  # a run configured with the default pairs whose answers cover NEG and QW only
    assert measured_pairs(f) == [NEG, QW]
    eff = paper_effects(CLAIMS, paper_tables(), measured_pairs(f), ("instruction", "disambig"))
    assert eff["base_prefers_shallow_features"] == pytest.approx(1.05)
    assert eff["tuned_prefers_default_feature"] == pytest.approx((65.3 - 58.1 + 79.7 - 39.8) / 2)
    assert "sentiment_bias" not in eff


MEASURABLE = [k for k, p in PAIRS.items() if split_source(p)[0] is not None]


@pytest.mark.parametrize("pairs, interventions", [
    (DEFAULT_PAIRS, ("verbalizer", "instruction", "disambig")),
    (MEASURABLE, ("verbalizer", "instruction", "disambig")),
    (list(PAIRS), INTERVENTIONS),
], ids=["default run", "the measurable pairs", "every pair and intervention"])
def test_the_paper_passes_its_own_rows(pairs, interventions):
    eff = paper_effects(CLAIMS, paper_tables(), pairs, interventions, MODELS)
    assert all(c.evidence == "table" for c in CLAIMS)
    for c in CLAIMS:
        for value in (eff[c.id].values() if isinstance(eff.get(c.id), dict) else [eff.get(c.id)]):
            if value is not None:
                assert interval_verdict(value, value, c.null, c.direction) == "reproduced", c.id


# ---------------------------------------------------------------------------------------------- calibration

def _probs(recs, p1s, content_free: float):
    """Give records P('1') and the answer content-free calibration with p_cf('1') = ``content_free`` gives."""
    return [{**r, "probs": [1 - p, p], "calibrated": True, "pred": int(p > content_free)} for r, p in zip(recs, p1s)]


def test_recalibration_hand_computed():
    recs = _probs(answers(NEG, "baseline", "1111"), [0.30, 0.40, 0.45, 0.60], content_free=0.2)
    assert [r["pred"] for r in K.recalibrate(recs, "content-free")] == [1, 1, 1, 1]  # every item above p_cf
    assert [r["pred"] for r in K.recalibrate(recs, "none")] == [0, 0, 0, 1]  # above 0.5
    assert [r["pred"] for r in K.recalibrate(recs, "batch mean")] == [0, 0, 1, 1]  # above the mean 0.4375
    gen = {**recs[0], "probs": None, "pred": None}
    assert K.recalibrate([gen], "none")[0]["pred"] is None  # an explanation's answer has no probabilities
    with pytest.raises(ValueError, match="calibration must be one of"):
        K.recalibrate(recs, "temperature")


def test_the_sensitivity_table_brackets_the_content_free_reference_per_set_and_counts_constant_cells():
    recs = _probs(answers(NEG, "baseline", "1111"), [0.30, 0.40, 0.45, 0.60], content_free=0.2)
    recs += _probs(answers(NEG, "disambig-h1", "1111"), [0.2, 0.4, 0.6, 0.8], content_free=0.5)
    t = K.sensitivity({"b": recs}).set_index("condition")
    base = t.loc["baseline"]
    assert base["share_1 content-free"] == 1.0 and bool(base["constant content-free"]) and base["every_item_1"]
    assert not base["constant none"] and base["share_1 none"] == 0.25 and base["h1 batch mean"] == 50.0
    # p_cf('1') in [largest P('1') answered '0' (none: 0), smallest answered '1')
    assert base["p_cf1_sets"] == "set 0: [0, 0.300)" and base["p1_min"] == 0.30
    assert t.loc["disambig-h1", "p_cf1_sets"] == "set 0: [0.400, 0.600)"
    lines = K.summary(K.sensitivity({"b": recs}))
    assert lines[0] == ("Constant classifiers — content-free: 1 of 2 cells constant (1 on '1', 0 on '0'); none: 0 "
                        "of 2 cells constant (0 on '1', 0 on '0'); batch mean: 0 of 2 cells constant (0 on '1', 0 "
                        "on '0').")
    assert lines[1].startswith("Of the 1 cells constant under content-free calibration, 1 are not constant without "
                               "calibration and 1 not with the batch mean; in 1 every item of every prompt set")


def test_the_brackets_compare_each_prompt_set_with_its_own_items():
    # set 0: p_cf('1') = 0.2, every item answers '1'; set 1: p_cf('1') = 0.5, items 0.3 / 0.4 answer '0'.
    # Pooled over sets the old bounds were loose ((0, 0.45]); per set each has its own bracket.
    s0 = _probs(answers(NEG, "baseline", "1111", 0), [0.30, 0.40, 0.45, 0.60], content_free=0.2)
    s1 = _probs(answers(NEG, "baseline", "1111", 1), [0.30, 0.40, 0.55, 0.60], content_free=0.5)
    row = K.sensitivity({"b": s0 + s1}).iloc[0]
    assert row["p_cf1_sets"] == "set 0: [0, 0.300); set 1: [0.400, 0.550)"
    assert row["share_1 content-free"] == 0.75 and not row["every_item_1"] and not row["constant content-free"]
    # 39 of 40 answers '1': constant (> 95 %) but not every item
    many = _probs(drawn(NEG, "baseline", "1" * 20, 2), [0.1] + [0.6] * 39, content_free=0.3)
    t = K.sensitivity({"b": many}).iloc[0]
    assert bool(t["constant content-free"]) and not t["every_item_1"]
    assert "in 0 every item of every prompt set answered '1'" in K.summary(K.sensitivity({"b": many}))[1]
    assert "the other 1 are constant on more than 95 % of their answers, not all" in \
        K.summary(K.sensitivity({"b": many}))[1]


def _prediction(cond, s, words, cf, lp0, lp1):
    return {"pair": NEG, "condition": cond, "set": s, "candidates": words, "content_free": cf, "generate": False,
            "next_token_logprobs": {words[0]: math.log(lp0), words[1]: math.log(lp1)}}


def test_the_content_free_inputs_p_cf_per_set_and_input_from_the_predictions():
    zo, words = ["0", "1"], ["bad", "good"]
    preds = [
        # '0'/'1': [MASK] 0.5, N/A 0.2, '' 0.1 of P('1'); items 0.3 and 0.6
        _prediction("baseline", 0, zo, 0, 0.4, 0.4), _prediction("baseline", 0, zo, 1, 0.4, 0.1),
        _prediction("baseline", 0, zo, 2, 0.45, 0.05), _prediction("baseline", 0, zo, None, 0.35, 0.15),
        _prediction("baseline", 0, zo, None, 0.2, 0.3),
        # words: every input 0.5, items 0.25 and 0.75
        *(_prediction("verbalizer-h1", 0, words, i, 0.3, 0.3) for i in range(3)),
        _prediction("verbalizer-h1", 0, words, None, 0.3, 0.1), _prediction("verbalizer-h1", 0, words, None, 0.1, 0.3),
    ]
    t = K.content_free_table({"b": preds}).set_index("condition")
    b = t.loc["baseline"]
    assert (b["p_cf1 '[MASK]'"], b["p_cf1 'N/A'"], b["p_cf1 ''"]) == pytest.approx((0.5, 0.2, 0.1))
    # combined as the scorer: raw means (0.4167, 0.1833) normalized -> 0.1833 / 0.6 = 0.3056
    assert b["p_cf1 combined"] == pytest.approx(0.55 / 1.8) and b["items_p1_min"] == pytest.approx(0.3)
    assert (b["below 'N/A'"], b["below ''"], b["below '[MASK]'"], b["zero_one"]) == (True, True, False, True)
    assert not t.loc["verbalizer-h1", "below 'N/A'"] and t.loc["verbalizer-h1", "label_words"] == "bad/good"
    line = K.content_free_summary(K.content_free_table({"b": preds}))[0]
    assert "With the '0'/'1' label words: '[MASK]' below every item in 0 of 1 sets" in line
    assert "'N/A' below every item in 1 of 1 sets (median p_cf('1') − items' mean -0.250)" in line
    assert "With the verbalizers' words: '[MASK]' below every item in 0 of 1 sets" in line
    only = K.content_free_summary(K.content_free_table({"b": preds[:5]}))[0]
    assert "the hypothesis cannot be compared with other label words here" in only


def test_stored_answers_are_labelled_by_their_calibrated_flag():
    cal = _probs(answers(NEG, "baseline", "11"), [0.3, 0.6], content_free=0.2)
    raw = [{**r, "calibrated": False} for r in cal]
    assert (K.stored_method(cal), K.stored_method(raw), K.stored_method(cal[:1] + raw[1:])) == (
        "content-free", "none", "mixed")
    assert {r["calibration"] for r in K.recalibrate(raw, "content-free")} == {"none"}
    assert M.item_frame({"b": K.recalibrate(raw, "content-free")}, MODELS)["calibration"].tolist() == ["none"] * 2


# ---------------------------------------------------------------------------------------------- findings()

def _config():
    return {"icl_bias": {"paper_models": MODELS, "bootstrap": {"n": 50, "seed": 0}, "pairs": DEFAULT_PAIRS,
                         "interventions": ["instruction", "disambig"]}}


def _inputs(tmp_path, recs):
    paths = []
    for model, rows in recs.items():
        for pair in DEFAULT_PAIRS:  # the SA and toxicity pairs' files exist and are empty: not measured
            p = tmp_path / model / f"{pair}.jsonl"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(json.dumps(r) + "\n" for r in rows if r["pair"] == pair))
            paths.append(str(p))
    return {"scores": paths, **{f"paper_{t}": str(PAPER / f"{t}.csv") for t in ("table2", "table4", "table5")}}


def _with_probs(recs):
    """Stored answers as content-free calibration with p_cf('1') = 0.1 gives them: every answer '1'; the
    uncalibrated probabilities follow the made-up answers (P('1') 0.7 for '1', 0.3 for '0')."""
    return {m: [{**r, "probs": [0.3, 0.7] if r["pred"] == 1 else [0.7, 0.3], "calibrated": True, "pred": 1}
                for r in rs] for m, rs in recs.items()}


def test_findings_returns_a_ledger_whose_rows_say_whether_their_verdicts_survive_calibration(tmp_path):
    ledger = findings(_inputs(tmp_path, _with_probs(_two_models(5))), _config())
    rows = rows_by_id(ledger.rows())
    assert len(ledger.rows()) == 11 and ledger.title == "Claims ledger: icl_bias (Si et al. 2023)"
    shallow = rows["ib-03-b"]
    assert shallow["paper_effect"] == pytest.approx(1.05) and shallow["paper_verdict"] == "reproduced"
    # content-free: every cell answers '1' -> constant, 50 / 50; uncalibrated the made-up answers come back
    assert shallow["effect"] == pytest.approx(0.0) and "constant classifier" in shallow["gate_figures"]
    tuned = rows["ib-04-t"]
    # disambig→h1 constant too: "can use h1" unmeasured, the row gated (not "not applicable")
    assert tuned["verdict"] == "inconclusive" and tuned["verdict_none"] == "reproduced"
    assert tuned["reason"].endswith("can use h1 unmeasured: disambig→h1 predicts '1' on 60/60 answers in t "
                                    "nli_entailment_negation, t boolq_answer_qword")
    assert shallow["paper"] == "+1.05 (Davinci): Table 4 on the run's NLI and QA shallow-feature pairs"
    # (65.3 − 58.1 + 79.7 − 39.8) / 2 on the run's two pairs
    assert rows["ib-01-all"]["paper"].startswith("+23.6: Tables 4-5 on the run's pairs [all pairs, Table 2")
    assert "none: +25 [" in tuned["calibration"] and "(changes)" in tuned["calibration"]
    assert "wobble's calibration check — none: +25" in tuned["note"]
    assert rows["ib-02-t"]["reason"] == "not measured in this run"
    assert any("this run measured 2: nli_entailment_negation, boolq_answer_qword" in n for n in ledger.notes)
    cal = next(n for n in ledger.notes if n.startswith("Calibration: the rows use the paper's content-free"))
    assert "content-free: 20 of 20 cells constant" in cal and "defined after the constant cells" in cal
    assert "their verdicts are shown, not counted (none: " in cal and " of 11 rows keep their verdict; batch mean: " \
        in cal and "nearly never constant by construction" in cal


def test_uncalibrated_stored_answers_are_not_labelled_as_the_papers_method(tmp_path):
    recs = {m: [{**r, "calibrated": False} for r in rs] for m, rs in _with_probs(_two_models(5)).items()}
    ledger = findings(_inputs(tmp_path, recs), {"icl_bias": {**_config()["icl_bias"], "calibrate": False}})
    cal = next(n for n in ledger.notes if n.startswith("Calibration: the rows use"))
    assert cal.startswith("Calibration: the rows use uncalibrated answers") and "not the paper's method" in cal
    row = rows_by_id(ledger.rows())["ib-04-t"]
    assert "verdict_none" not in row and "verdict_batch_mean" in row


def test_findings_names_the_file_of_a_malformed_score_record(tmp_path):
    inputs = _inputs(tmp_path, _two_models())
    Path(inputs["scores"][1]).write_text(json.dumps({"pair": NEG, "uid": "x"}) + "\n")
    with pytest.raises(DataError, match=r"b/nli_entailment_negation.jsonl: record line 1: an icl_bias score record"):
        findings(inputs, _config())


def test_the_calibration_table_is_labelled_as_wobbles(tmp_path):
    table = K.build_table_calibration(_inputs(tmp_path, _with_probs(_two_models())), {})
    assert table.title.startswith("wobble's calibration sensitivity")
    assert table.notes[0].startswith("wobble's sensitivity analysis, not the paper's")
    assert len(table.tidy) == 20 and table.tidy["constant content-free"].all()  # 2 models x 2 pairs x 5 conditions
    assert table.display.iloc[0]["'1' / h1 content-free"] == "1.00 / 50.0 C"


def test_the_paper_cell_prints_the_effect_its_verdict_uses_first_and_the_all_pairs_figure_after_it():
    from wobble.report.findings import MAX_CELL

    eff = paper_effects(CLAIMS, paper_tables(), DEFAULT_PAIRS, ("verbalizer", "instruction", "disambig"), MODELS)
    declared = {c.id: c.paper_value for c in CLAIMS}

    def cell(claim: str, model: str, scope: str = "per_model", unit: str = "points") -> str:
        e = eff[claim]
        return paper_cell({"paper": declared[claim], "paper_effect": e[model] if isinstance(e, dict) else e,
                           "model": model, "scope": scope, "unit": unit}, MODELS)

    # the numbers of the referee's finding: on the run's pairs 14.3; 48.3 / 49.1; 22.5; 15.0; 12.1
    assert cell("tuned_prefers_default_feature", "all", "pooled") == (
        "+14.3: Tables 4-5 on the run's pairs [all pairs, Table 2 baseline h1: 59.1 − 39.5 = +19.6]")
    assert cell("sentiment_bias", "b") == ("+48.3 (Davinci): Tables 4-5 on the run's SA pairs [all SA pairs, h1: "
                                           "Davinci 89.3, Text-Davinci-002 97.3]")
    assert cell("sentiment_bias", "t").startswith("+49.1 (Text-Davinci-002): ")
    assert cell("tuned_prefers_dataset_labels", "t").startswith("+22.5 (Text-Davinci-002): Table 5 on the run's")
    assert cell("instructions_help_tuned_more", "all", "pooled") == (
        "+15: Tables 4-5 on the run's pairs [Table 2, all pairs: (12.2 + 24.2)/2 − (1.6 − 2.4)/2 = +18.6]")
    assert cell("base_disambig_beats_instruction", "b").startswith("+12.1 (Davinci): Table 4 on the run's pairs [")
    assert cell(COUNT, "all", "pooled", "share").startswith("0.917: ")
    # no paper effect on the run's pairs: the declared text alone
    assert paper_cell({"paper": declared["non_semantic_features_hard_to_steer"], "paper_effect": None,
                       "model": "b", "scope": "per_model"}, MODELS) == declared["non_semantic_features_hard_to_steer"]
    # every cell fits the short table's limit with the longest prefix a row of the claim can get
    for c in CLAIMS:
        widest = paper_cell({"paper": c.paper_value, "paper_effect": -41.2, "model": "t", "scope": c.scope,
                             "unit": c.scale}, MODELS)
        assert len(widest) <= MAX_CELL, c.id


def test_the_notes_say_when_the_runs_prompt_sets_let_no_row_be_decided(tmp_path):
    assert draws_note(3) == draws_note(None) == ()
    (line,) = draws_note(1)
    assert line.startswith("No row of this run can be reproduced or contradicted: it draws 1 prompt set per cell "
                           "(icl_bias.splits.n_sets), fewer than the 3 the 'demonstration draws' gate needs")
    assert draws_note(2)[0].startswith("No row of this run can be reproduced or contradicted: it draws 2 prompt sets")
    inputs = _inputs(tmp_path, _two_models())
    sec = _config()["icl_bias"]
    one = findings(inputs, {"icl_bias": {**sec, "splits": {"n_sets": 1}}})
    three = findings(inputs, {"icl_bias": {**sec, "splits": {"n_sets": 3}}})
    assert one.notes[0] == line and one.notes[1:] == three.notes
    assert not any(n.startswith("No row of this run") for n in three.notes)
