"""icl_bias claims ledger: the statistics (hand-computed on tiny made-up cells), the constant-classifier
precondition per pair and condition, the intervals, per-model rows, and the paper passing its own rows."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.report.cells import read_paper
from wobble.report.claims import Findings, verdict
from wobble.stats import exact_binomial_interval
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims import CLAIMS, INTERVENTIONS, findings, measure, paper_effects
from wobble.studies.icl_bias.pairs import PAIRS

ROOT = Path(__file__).resolve().parents[3]
PAPER = ROOT / "paper" / "icl_bias"
DEFAULT_PAIRS = ["sa_sentiment_punctuation", "nli_entailment_negation", "comments_toxicity_length",
                 "boolq_answer_qword"]
NEG, QW, SA = "nli_entailment_negation", "boolq_answer_qword", "sa_sentiment_punctuation"
MODELS = {"b": "Davinci", "t": "Text-Davinci-002"}


def answers(pair: str, condition: str, follow: str, s: int = 0) -> list[dict]:
    """One prompt set's score records: item i has h1 = 1 for even i, 0 for odd (h2 = 1 - h1) and answers by h1
    where ``follow[i] == "1"``, by h2 otherwise ("1010" on four items answers '1' every time: a constant)."""
    target = condition.split("-")[1] if "-" in condition else None
    out = []
    for i, f in enumerate(follow):
        h1 = 1 - i % 2
        out.append({"pair": pair, "condition": condition, "intervention": condition.split("-")[0],
                    "target": target, "set": s, "uid": f"{pair}:{i}", "h1": h1, "h2": 1 - h1,
                    "pred": h1 if f == "1" else 1 - h1})
    return out


def paper_tables() -> dict[str, pd.DataFrame]:
    return {t: read_paper(PAPER / f"{t}.csv") for t in ("table2", "table4", "table5")}


# ---------------------------------------------------------------------------------------------- statistics

def test_an_effect_averages_pairs_per_target_then_the_two_targets():
    cells = M.DictCells({
        # NLI negation: towards h1 60 -> 70 (+10), towards h2 40 -> 60 (+20)
        ("m", NEG, "baseline", "h1"): 60, ("m", NEG, "instruction-h1", "h1"): 70,
        ("m", NEG, "baseline", "h2"): 40, ("m", NEG, "instruction-h2", "h2"): 60,
        # SA punctuation: only towards h2 printed (as the paper's sentiment rows), 50 -> 40 (-10)
        ("m", SA, "baseline", "h2"): 50, ("m", SA, "instruction-h2", "h2"): 40,
    })
    # towards h1: +10 (NLI only); towards h2: (20 - 10) / 2 = 5; effect (10 + 5) / 2 = 7.5
    assert M.effect(cells, "m", "instruction", [NEG, SA]) == pytest.approx(7.5)
    assert M.target_change(cells, "m", "verbalizer", "h1", [NEG, SA]) != M.target_change(cells, "m", "verbalizer",
                                                                                       "h1", [NEG, SA])  # NaN


def test_claim_statistics_hand_computed_on_made_up_cells():
    c = M.DictCells({
        ("b", NEG, "baseline", "h1"): 40, ("t", NEG, "baseline", "h1"): 70,
        ("b", QW, "baseline", "h1"): 30, ("t", QW, "baseline", "h1"): 80,
        ("b", NEG, "baseline", "h2"): 60, ("b", QW, "baseline", "h2"): 70,
        ("t", SA, "instruction-h2", "h2"): 20, ("t", SA, "disambig-h2", "h2"): 10,
        ("t", SA, "verbalizer-h2", "h2"): 90,
    })
    # (70 - 40 + 80 - 30) / 2 = 40
    assert M.tuned_minus_base_h1(c, {"base": "b", "tuned": "t"}, [NEG, QW], ()) == pytest.approx(40)
    # (60 + 70) / 2 - 50 = 15
    assert M.baseline_minus_50("h2")(c, {"model": "b"}, [NEG, QW], ()) == pytest.approx(15)
    # instructions and disambiguating examples only: (20 + 10) / 2 - 50 = -35 (the verbalizer's 90 is not read)
    assert M.prior_resists(c, {"model": "t"}, [SA], INTERVENTIONS) == pytest.approx(-35)
    assert M.prior_resists(c, {"model": "t"}, [SA], ("verbalizer", "instruction")) == pytest.approx(-30)


def test_non_semantic_gap_compares_length_and_overlap_with_genre_and_domain_only():
    c = M.DictCells({
        ("m", "sa_sentiment_domain", "baseline", "h2"): 40, ("m", "sa_sentiment_domain", "verbalizer-h2", "h2"): 80,
        ("m", "nli_entailment_length", "baseline", "h2"): 50,
        ("m", "nli_entailment_length", "verbalizer-h2", "h2"): 60,
        ("m", "comments_toxicity_length", "baseline", "h2"): 50,
        ("m", "comments_toxicity_length", "verbalizer-h2", "h2"): 40,
        ("m", NEG, "baseline", "h2"): 0, ("m", NEG, "verbalizer-h2", "h2"): 100,  # in neither class: not read
    })
    pairs = ["sa_sentiment_domain", "nli_entailment_length", "comments_toxicity_length", NEG]
    # not semantic: (+10 - 10) / 2 = 0; semantic: +40; gap -40
    assert M.non_semantic_gap(c, {"m": "m"}, pairs, ("verbalizer",)) == pytest.approx(-40)
    assert math.isnan(M.non_semantic_gap(c, {"m": "m"}, pairs[1:], ("verbalizer",)))  # no semantic pair


def test_share_positive_counts_changes_above_zero():
    assert M.share_positive([1.0, -2.0, 0.0, 3.0, math.nan]) == (2, 4)


def test_the_constant_note_counts_every_constant_cell_and_shows_the_first_few():
    assert M.constant_note([], 5) == "none of the 5 cells read is constant"
    assert M.constant_note(["a", "b", "c"], 9, shown=2) == "constant classifier in 3 of 9 cells: a; b; and 1 more"


# -------------------------------------------------------------------------------------- our cells, precondition

def test_item_cells_average_prompt_sets_and_flag_a_constant_cell_per_condition():
    recs = answers(NEG, "baseline", "1100", 0) + answers(NEG, "baseline", "1111", 1) + answers(NEG, "disambig-h1", "1010")
    cells = M.ItemCells({"b": recs})
    # set 0: h1 2/4, set 1: 4/4 -> mean 75 %
    assert cells.acc("b", NEG, "baseline", "h1") == pytest.approx(75)
    assert cells.acc("b", NEG, "disambig-h1", "h1") == pytest.approx(50)
    assert cells.constant("b", NEG, "baseline") is None
    assert cells.constant("b", NEG, "disambig-h1") == (1, 4, 4)  # every answer '1'
    boot = cells.resampled({NEG: [0, 0, 1, 1]})  # items 0 and 1 follow h1 in both sets
    assert boot.acc("b", NEG, "baseline", "h1") == pytest.approx(100)


def _two_models(n_items: int = 4) -> dict[str, list[dict]]:
    base, tuned = [], []
    for pair in (NEG, QW):
        base += answers(pair, "baseline", "1100"[:n_items])  # h1 50 %
        tuned += answers(pair, "baseline", "1110"[:n_items])  # h1 75 %
        for iv in ("instruction", "disambig"):
            base += answers(pair, f"{iv}-h1", "1110") + answers(pair, f"{iv}-h2", "0001")  # h1 75, h2 75: +25 each
            tuned += answers(pair, f"{iv}-h1", "1111") + answers(pair, f"{iv}-h2", "0000")  # h1 100, h2 100
    return {"b": base, "t": tuned}


def test_measure_gives_comparison_rows_and_per_model_rows_hand_computed():
    got = measure(_two_models(), MODELS, n=200, seed=0, interventions=("instruction", "disambig"))
    assert set(got) == {c.id for c in CLAIMS}
    comp = got["tuned_prefers_default_feature"]
    assert comp.effect == pytest.approx(25.0) and comp.n_items == 8 and comp.applicable  # 75 - 50 on both pairs
    # instruction: base +25 (both targets), tuned towards h1 75 -> 100 (+25), towards h2 25 -> 100 (+75): 50
    assert got["instructions_help_tuned_more"].effect == pytest.approx(50 - 25)
    shallow = got["base_prefers_shallow_features"]
    assert set(shallow) == {"b"} and shallow["b"].effect == pytest.approx(0.0)  # h2 50 % - 50
    assert set(got["tuned_prefers_dataset_labels"]) == {"t"} and got["tuned_prefers_dataset_labels"]["t"].effect == 25
    assert got["base_disambig_beats_instruction"]["b"].effect == pytest.approx(0.0)
    assert set(got["sentiment_bias"]) == {"b", "t"} and got["sentiment_bias"]["b"].effect is None  # no SA pair
    assert "no pair" in got["sentiment_bias"]["b"].note
    assert got["non_semantic_features_hard_to_steer"].effect is None  # one row for all models; no such pair
    assert measure(_two_models(), {"b": "Davinci"}, n=10)["tuned_prefers_default_feature"] is None


def test_a_constant_cell_under_an_intervention_makes_only_the_claims_reading_it_not_applicable():
    recs = _two_models()
    recs["b"] = [r for r in recs["b"] if not (r["pair"] == QW and r["condition"] == "disambig-h1")]
    constant = answers(QW, "disambig-h1", "1010")  # '1' for every item: 2/4 = 50 % h1, a constant classifier
    for r, p1 in zip(constant, (0.55, 0.45, 0.52, 0.48)):  # before calibration: '1', '0', '1', '0'
        r["probs"] = [1 - p1, p1]
    recs["b"] += constant
    got = measure(recs, MODELS, n=100, seed=0, interventions=("instruction", "disambig"))
    dis = got["base_disambig_beats_instruction"]["b"]
    assert not dis.applicable
    assert "b disambig-h1 on boolq_answer_qword: 4/4 answers '1' (2/4 before calibration)" in dis.precondition_note
    assert dis.precondition_note.startswith("constant classifier in 1 of 10 cells")  # 2 pairs x 5 conditions
    assert verdict(CLAIMS[6], dis)[0] == "not applicable"
    assert got["base_prefers_shallow_features"]["b"].applicable  # reads the baseline only
    assert not got["interventions_increase_intended_accuracy"].applicable


def test_the_count_of_positive_changes_uses_clopper_pearson_over_the_changes():
    got = measure(_two_models(), MODELS, n=100, seed=0, interventions=("instruction", "disambig"))
    count = got["interventions_increase_intended_accuracy"]
    # 2 models x 2 interventions x 2 targets = 8 changes, every one positive (+25 / +25 / +75)
    assert (count.effect, count.n_items) == (1.0, 8)
    assert (count.ci_low, count.ci_high) == pytest.approx(exact_binomial_interval(8, 8))
    assert count.population == 16 and "exact binomial" in count.interval
    # on 4 items per pair only the tuned model's +75 towards h2 (two changes) keep their own interval above 0
    assert count.diagnostics.startswith("2 of 8 changes have their own 95% interval")


def test_a_share_whose_bootstrap_collapses_gets_the_exact_binomial_interval():
    recs = {"t": answers(SA, "baseline", "11111111")}  # h1 8/8 = 100 %: every resample 100 %
    got = measure(recs, {"t": "Text-Davinci-002"}, n=100, seed=0)["sentiment_bias"]["t"]
    lo, hi = exact_binomial_interval(8, 8)  # Clopper-Pearson [0.631, 1]
    assert got.effect == pytest.approx(50.0)
    assert (got.ci_low, got.ci_high) == pytest.approx((100 * lo - 50, 50.0)) and "Clopper-Pearson" in got.interval


def test_the_strong_prior_claim_needs_the_sentiment_prior_it_is_about():
    def run(baseline: str):
        recs = answers(SA, "baseline", baseline) + answers(SA, "instruction-h2", "11111110")
        return measure({"t": recs}, {"t": "Text-Davinci-002"}, n=100, seed=0,
                       interventions=("instruction",))["strong_prior_resists_interventions"]["t"]

    # h2 under instructions 1/8 = 12.5 % -> -37.5
    held = run("11111111")  # baseline h1 8/8, one-sided exact binomial p = 0.5**8 = 0.0039
    assert held.applicable and held.effect == pytest.approx(-37.5) and "p = 0.00391" in held.precondition_note
    weak = run("11110000")  # 4/8, p = 0.64: no prior to resist with
    assert not weak.applicable and "4/8 = 50.0%" in weak.precondition_note


# ------------------------------------------------------------------------------------------------ the paper

def test_paper_cells_map_rows_to_pairs_and_read_the_baseline_where_printed():
    df = pd.DataFrame([
        ["4", "Davinci", "h1", "NLI", "genre", "Baseline", "11.5", "88.5"],
        ["4", "Davinci", "h2", "SA", "punctuation", "Baseline", "98.3", "1.7"],
        ["4", "Davinci", "h2", "SA", "punctuation", "DisAmbig", "73.1", "26.9"],
        ["4", "Davinci", "h2", "SA", "Aggregate", "Baseline", "1", "2"],
    ], columns=["table", "model", "steer_towards", "dataset", "feature", "intervention", "h1_acc", "h2_acc"])
    cells = M.paper_cells({"table4": df})
    assert cells.acc("Davinci", "nli_entailment_genre_gov_fic", "baseline", "h2") == 88.5
    assert cells.acc("Davinci", "nli_entailment_genre_gov_tele", "baseline", "h2") == 88.5  # one row, two pairs
    assert cells.acc("Davinci", SA, "baseline", "h1") == 98.3
    assert cells.acc("Davinci", SA, "disambig-h2", "h2") == 26.9
    assert len(cells.values) == 8
    with pytest.raises(DataError, match=r"paper/icl_bias/table4.csv: record header: columns"):
        M.paper_cells({"table4": df.drop(columns=["h2_acc"])})


def test_the_papers_effects_on_the_default_pairs_hand_computed():
    eff, text = paper_effects(paper_tables(), DEFAULT_PAIRS, ("verbalizer", "instruction", "disambig"))
    # Davinci baseline h2: NLI negation 41.9, QA question word 60.2 -> (41.9 + 60.2) / 2 - 50 = +1.05, not the
    # +15.0 of the NLI / QA aggregates over all pairs
    assert eff["base_prefers_shallow_features"] == pytest.approx(1.05)
    # tuned - base baseline h1: (99.1-98.3 + 65.3-58.1 + 45.9-36.6 + 79.7-39.8) / 4 = 14.3
    assert eff["tuned_prefers_default_feature"] == pytest.approx(14.3)
    # Table 2 without the explanation rows: 11 of 12 changes above 0 (Davinci instruction towards h2: -2.4)
    assert eff["interventions_increase_intended_accuracy"] == pytest.approx(11 / 12)
    # TD002 on punctuation towards h2: instruction 15.6, disambig 2.0 -> 8.8 - 50
    assert eff["strong_prior_resists_interventions"] == pytest.approx(-41.2)
    assert "the run has none of its cells" in text["non_semantic_features_hard_to_steer"]


@pytest.mark.parametrize("pairs, interventions", [
    (DEFAULT_PAIRS, ("verbalizer", "instruction", "disambig")),
    (list(PAIRS), INTERVENTIONS),
], ids=["default run", "every pair and intervention"])
def test_the_paper_passes_its_own_rows(pairs, interventions):
    eff, text = paper_effects(paper_tables(), pairs, interventions)
    found = Findings("t", CLAIMS, {}, paper_values=text, paper_effects=eff)
    assert found.paper_failures() == []
    assert all(c.evidence == "table" for c in CLAIMS)


# ---------------------------------------------------------------------------------------------- findings()

def _config():
    return {"icl_bias": {"paper_models": MODELS, "bootstrap": {"n": 50, "seed": 0}, "pairs": [NEG, QW],
                         "interventions": ["instruction", "disambig"]}}


def _inputs(tmp_path, recs):
    paths = []
    for model, rows in recs.items():
        for pair in (NEG, QW):
            p = tmp_path / model / f"{pair}.jsonl"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(json.dumps(r) + "\n" for r in rows if r["pair"] == pair))
            paths.append(str(p))
    return {"scores": paths, **{f"paper_{t}": str(PAPER / f"{t}.csv") for t in ("table2", "table4", "table5")}}


def test_findings_reads_scores_and_the_papers_tables(tmp_path):
    found = findings(_inputs(tmp_path, _two_models()), _config())
    assert found.paper_failures() == []
    rows = found.rows()
    by = {(r["claim"], r["model"]): r for r in rows}
    assert by[("base_prefers_shallow_features", "b")]["paper_effect"] == pytest.approx(1.05)
    comp = by[("tuned_prefers_default_feature", "all")]
    assert comp["effect"] == pytest.approx(25.0) and comp["note"].startswith("t vs b: 2 pair(s)")
    assert any("raw data for 18" in n for n in found.notes)


def test_findings_names_the_file_of_a_malformed_score_record(tmp_path):
    inputs = _inputs(tmp_path, _two_models())
    Path(inputs["scores"][0]).write_text(json.dumps({"pair": NEG, "uid": "x"}) + "\n")
    with pytest.raises(DataError, match=r"b/nli_entailment_negation.jsonl: record line 1: an icl_bias score record"):
        findings(inputs, _config())


def test_a_claim_the_papers_own_numbers_do_not_show_on_the_run_pairs_is_not_tested_there(tmp_path):
    config = _config()
    config["icl_bias"]["pairs"] = [NEG]  # Davinci's baseline h2 on negation is 41.9: the paper's own -8.1
    found = findings(_inputs(tmp_path, _two_models()), config)
    row = next(r for r in found.rows() if r["claim"] == "base_prefers_shallow_features")
    assert row["paper_effect"] == pytest.approx(-8.1) and row["paper_verdict"] == "contradicted"
    assert row["verdict"] == "inconclusive" and "not testable on the run's pairs" in row["reason"]
    assert "ours +0 [" in row["reason"]
