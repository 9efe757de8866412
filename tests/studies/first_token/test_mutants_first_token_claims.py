"""wobble.studies.first_token.claims: what the mutation run (tests/tools/mutate.py) found untested — the claims as
the committed ledger shows them, the paper's effects read from its CSVs (which rows count, what stops with an
error), the labelled predictions' reader and the ledger's notes and bootstrap settings."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.report.claims import Findings
from wobble.studies.first_token import claims as C
from wobble.studies.first_token.claims_measure import measure

from test_first_token_claims import MAIN, PAPER, agree, rec  # noqa: E402 (the same hand-made predictions)

LEDGER = Path(__file__).resolve().parents[3] / "results" / "first_token" / "findings.csv"
BY_ID = {c.id: c for c in C.CLAIMS}


# ------------------------------------------------------------------------------------------ the declarations


def test_every_claim_is_a_per_model_claim_about_questions_as_section_4_and_appendix_a1_state_them():
    assert list(BY_ID) == ["mismatch_over_60_percent", "mismatch_persists_when_constrained",
                           "mismatch_decreases_low_to_high", "example_more_mismatch_than_high",
                           "refusal_major_reason_for_mismatch", "example_pulls_first_token_to_C",
                           "example_text_more_evenly_distributed", "text_more_consistent",
                           "temperature_lowers_mismatch", "temperature_lowers_refusal",
                           "temperature_worsens_consistency"]
    assert all(c.study == "first_token" and c.per_model and c.unit_name == "questions" and c.min_items == 10
               for c in C.CLAIMS)
    # "lower mismatch and refusal rate" at a higher temperature: the only claims predicting a fall
    assert [c.id for c in C.CLAIMS if c.direction == -1] == ["temperature_lowers_mismatch", "temperature_lowers_refusal"]
    # over 60 %; a non-negligible 5 %; a major reason = at least one mismatch in four; every other one a sign
    assert {c.id: c.null for c in C.CLAIMS if c.null} == {"mismatch_over_60_percent": 0.6,
                                                          "mismatch_persists_when_constrained": 0.05,
                                                          "refusal_major_reason_for_mismatch": 0.25}
    # only the 66.2 % cell, the 85 % − 32.1 % of 'C' and Table 3 are published numbers; the rest are plots
    assert [c.id for c in C.CLAIMS if c.evidence == "table"] == ["mismatch_over_60_percent",
                                                                 "example_pulls_first_token_to_C",
                                                                 "text_more_consistent"]
    assert {c.id: c.unit for c in C.CLAIMS if c.unit != "share of prompts"} == {
        "refusal_major_reason_for_mismatch": "share of mismatches", "example_text_more_evenly_distributed": "nats",
        "text_more_consistent": "nats", "temperature_worsens_consistency": "nats"}


def test_the_committed_ledger_shows_the_claims_as_declared():
    """results/first_token/findings.csv was rendered from these declarations: a claim's words, places, effect,
    unit, precondition and null there are the code's (a change to one needs the ledger rendered again)."""
    rows = list(csv.DictReader(LEDGER.open(encoding="utf-8")))
    assert {r["claim"] for r in rows} == set(BY_ID)
    for r in rows:
        c = BY_ID[r["claim"]]
        assert (r["study"], r["quote"], r["section"], r["evidence"], r["precondition"], r["unit_name"],
                r["effect_definition"], r["unit"], int(r["predicted_direction"]), float(r["null"])) == (
            c.study, c.quote, c.section, c.evidence, c.precondition, c.unit_name, c.effect, c.unit, c.direction,
            c.null), c.id
        if c.evidence == "figure":
            assert r["paper"] == c.paper_value, c.id


def test_without_the_papers_csvs_the_table_claims_show_the_number_the_text_states():
    assert {cid: BY_ID[cid].paper_value for cid in ("mismatch_over_60_percent", "example_pulls_first_token_to_C",
                                                    "text_more_consistent")} == {
        "mismatch_over_60_percent": "66.2% (Llama2-7b-Chat)",
        "example_pulls_first_token_to_C": "85% − 32.1% (Llama2-70b-Chat)",
        "text_more_consistent": "Table 3"}


# ------------------------------------------------------------------------------------------ the paper's effects


FIG2 = ["figure", "panel", "model", "constraint", "quantity", "qualifier", "value_pct", "source_text"]
MIS = "mismatch rate (first token vs text output)"
SHARE_C = "share of first-token answers = 'C'"


def _write(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


def _paper(tmp_path, fig2=None, fig3=None, fig7=None, t3=None, t3_header=None):
    fig2 = fig2 if fig2 is not None else [["2", "a", "Llama2-70b-Chat", "Low", MIS, "=", "13.3", ""],
                                          ["2", "a", "Llama2-7b-Chat", "Low", MIS, "=", "66.2", ""]]
    fig3 = fig3 if fig3 is not None else [["3", "a", "Llama2-70b-Chat", "Example", SHARE_C, "about", "85", ""]]
    fig7 = fig7 if fig7 is not None else [["7", "c", "Llama2-70b-Chat", "High", SHARE_C, "=", "32.1", ""]]
    t3 = t3 if t3 is not None else [["3", "m", "Low", "1.0", "0.5"], ["3", "m", "High", "0.75", "0.5"]]
    return {"paper_figure2": _write(tmp_path / "figure2.csv", FIG2, fig2),
            "paper_figure3": _write(tmp_path / "figure3.csv", FIG2, fig3),
            "paper_figure7": _write(tmp_path / "figure7.csv", FIG2, fig7),
            "paper_table3": _write(tmp_path / "table3.csv", t3_header or
                                   ["table", "model", "constraint", "entropy_first_token", "entropy_text_output"], t3)}


def test_the_papers_values_are_shown_as_the_ledger_states_them():
    _, values = C.paper_effects({f"paper_{f}": str(PAPER / f"{f}.csv") for f in ("figure2", "figure3", "figure7",
                                                                                   "table3")})
    # two panel-a rates are stated with '=' (66.2 and 13.3); 0.85 − 0.321 = 0.529; Table 3 has 21 filled cells
    assert values == {
        "mismatch_over_60_percent": "66.2% (Llama2-7b-Chat: the largest of the 2 mismatch rates the paper's text "
                                    "states)",
        "example_pulls_first_token_to_C": "85% − 32.1% = 0.529 (Llama2-70b-Chat)",
        "text_more_consistent": "0.19 nats (mean over 21 model x level cells of Table 3)"}


def test_only_panel_a_mismatch_rates_stated_with_equals_are_the_papers_cells(tmp_path):
    fig2 = [["2", "a", "Llama2-70b-Chat", "Low", MIS, "=", "13.3", ""],
            ["2", "b", "Llama2-13b-Chat", "Low", MIS, "=", "90", ""],          # panel b: the refusal panel
            ["2", "a", "Mixtral", "Low", "refusal rate", "=", "95", ""],         # not a mismatch rate
            ["2", "a", "Mistral", "Low", MIS, ">", "99", ""],                  # a bound, not a stated rate
            ["2", "a", "Llama2-7b-Chat", "High", MIS, "=", "66.2", ""]]
    effects, values = C.paper_effects(_paper(tmp_path, fig2=fig2))
    assert effects["mismatch_over_60_percent"] == pytest.approx(0.662)
    # the model of the largest cell (not its constraint, not the first cell listed)
    assert values["mismatch_over_60_percent"] == ("66.2% (Llama2-7b-Chat: the largest of the 2 mismatch rates the "
                                                  "paper's text states)")


def test_no_stated_mismatch_rate_is_one_error(tmp_path):
    fig2 = [["2", "a", "Llama2-7b-Chat", "Low", MIS, ">", "60", ""]]
    with pytest.raises(DataError, match=r"figure2.csv: record panel a: mismatch rates stated with '='"):
        C.paper_effects(_paper(tmp_path, fig2=fig2))


def test_the_share_of_c_is_the_one_row_of_its_panel_and_quantity(tmp_path):
    fig3 = [["3", "b", "Llama2-70b-Chat", "Example", SHARE_C, "about", "40", ""],   # the other panel
            ["3", "a", "Llama2-70b-Chat", "Example", "share of text answers = 'C'", "about", "30", ""],
            ["3", "a", "Llama2-70b-Chat", "Example", SHARE_C, "about", "85", ""]]
    fig7 = [["7", "a", "Llama2-70b-Chat", "High", SHARE_C, "=", "50", ""],
            ["7", "c", "Llama2-70b-Chat", "High", "share of text answers = 'C'", "=", "20", ""],
            ["7", "c", "Llama2-70b-Chat", "High", SHARE_C, "=", "32.1", ""]]
    effects, values = C.paper_effects(_paper(tmp_path, fig3=fig3, fig7=fig7))
    assert effects["example_pulls_first_token_to_C"] == pytest.approx(0.85 - 0.321)
    assert values["example_pulls_first_token_to_C"] == "85% − 32.1% = 0.529 (Llama2-70b-Chat)"


@pytest.mark.parametrize("fig3, found", [
    ([["3", "a", "x", "Example", SHARE_C, "about", "85", ""], ["3", "a", "y", "Example", SHARE_C, "=", "80", ""]], 2),
    ([["3", "b", "x", "Example", SHARE_C, "about", "85", ""]], 0),
    ([["3", "a", "x", "Example", SHARE_C, "about", "  ", ""]], 1),                  # a blank cell states no number
])
def test_the_share_of_c_is_exactly_one_row_with_a_number(tmp_path, fig3, found):
    with pytest.raises(DataError, match=rf"figure3.csv: record panel a: exactly one row with .* and a value_pct, "
                                        rf"got {found}$"):
        C.paper_effects(_paper(tmp_path, fig3=fig3))


def test_a_figure_csv_without_a_value_column_is_one_error(tmp_path):
    paths = _paper(tmp_path)
    _write(paths["paper_figure7"], FIG2[:6], [["7", "c", "Llama2-70b-Chat", "High", SHARE_C, "="]])
    with pytest.raises(DataError, match=r"figure7.csv: record panel c: exactly one row"):
        C.paper_effects(paths)


def test_table3s_blank_cells_are_left_out_of_the_mean_entropy_gap(tmp_path):
    t3 = [["3", "m", "Low", "1.0", "0.5"], ["3", "m", "Medium", "", "0.5"], ["3", "m", "High", "0.9", " "],
          ["3", "m", "Example", " ", "0.5"], ["3", "n", "Low", "0.75", "0.5"]]
    effects, values = C.paper_effects(_paper(tmp_path, t3=t3))
    assert effects["text_more_consistent"] == pytest.approx(0.375)  # (0.5 + 0.25) / 2
    assert values["text_more_consistent"] == "0.38 nats (mean over 2 model x level cells of Table 3)"


def test_table3_with_a_word_or_without_its_columns_is_one_error(tmp_path):
    with pytest.raises(DataError, match=r"table3.csv: record entropy columns: numbers in entropy_first_token and "
                                        r"entropy_text_output \(could not convert"):
        C.paper_effects(_paper(tmp_path, t3=[["3", "m", "Low", "n/a", "0.5"]]))
    with pytest.raises(DataError, match=r"table3.csv: record entropy columns: .*\('entropy_text_output'\)"):
        C.paper_effects(_paper(tmp_path, t3=[["3", "m", "Low", "1.0"]],
                               t3_header=["table", "model", "constraint", "entropy_first_token"]))


# ------------------------------------------------------------------------------------------ inputs and findings


def test_a_record_without_a_uid_is_named_by_its_line_counted_from_one(tmp_path):
    p = tmp_path / "one.jsonl"
    good = rec(0, "low", 0, "Yes", "No")
    p.write_text(json.dumps(good) + "\n" + json.dumps({"model": "m", "constraint": "low"}) + "\n")
    with pytest.raises(DataError, match=r"one.jsonl: record line 2: labelled prediction without question_uid, "
                                        r"shuffle, first_token_letter, first_token_option, text_option$"):
        C.read_labeled(str(p))  # one path, not a list of them
    p.write_text(json.dumps(good) + "\n")
    assert C.read_labeled(str(p)) == [good]


def _findings_inputs(tmp_path, classifiers):
    recs = []
    for q in range(10):
        # Low: 1 of 2 shuffles mismatch, both where q % 3 == 0 (0.7 over the ten questions, varying by question)
        for r in (rec(q, "low", 0, "Yes", "No"), rec(q, "low", 1, "No", "No" if q % 3 else "Yes"), agree(q, "high"),
                  rec(q, "medium", 0, "Yes", "No" if q % 2 else "Yes"), rec(q, "medium", 0, "Yes", "Yes", t=0.7)):
            recs.append(dict(r, classifier=classifiers[q % len(classifiers)]) if classifiers[0] else r)
    p = tmp_path / "labeled.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    paper = {f"paper_{f}": str(PAPER / f"{f}.csv") for f in ("figure2", "figure3", "figure7", "table3")}
    return recs, {"labeled": [str(p)], **paper}


def _config(n_questions, seed=3):
    return {"models": {"m": {"source": "tiny"}},
            "first_token": {"models": ["m"], "n_questions": n_questions, "n_shuffles": 2, "temperature": 0.0,
                            "temperatures": [0.7, 1.4], "sweep_constraints": ["medium", "high"],
                            "bootstrap": {"n": 40, "seed": seed}, "classifier": "auto"}}


def test_findings_notes_name_the_run_the_paper_and_wobbles_control(tmp_path):
    recs, inputs = _findings_inputs(tmp_path, ["string_match", "paper_regex"])
    f = C.findings(inputs, _config(10))
    assert f.title == 'Claims ledger: first_token (Wang et al. 2024, "My Answer is C")'
    assert f.notes == (
        "Ours: m (tiny: seed 0, causal); 10 questions x 2 shuffles; four levels at the main temperature 0.00, the "
        "temperature rows on medium, high at 0.00, 0.70, 1.40; text answers labelled by paper_regex, wobble's rule "
        "classifier string_match (not the paper's String Matching) (first_token.classifier: auto).",
        "Paper: six 7B-70B chat models (Llama2 7b/13b/70b-Chat, Mistral-7B-Instruct v0.1/v0.2, Mixtral).",
        "Position bias is wobble's control, not the paper's: the share of the most frequent first-token letter and "
        "whether, over a question's shuffles, the first token keeps its letter (position) or its option (content).")
    assert f.claims == C.CLAIMS and f.paper_failures() == []


def test_findings_without_a_question_cap_or_recorded_classifier_says_414_and_the_configured_one(tmp_path):
    _, inputs = _findings_inputs(tmp_path, [None])
    cfg = _config(None)
    cfg["models"]["m2"] = {"source": "tiny", "seed": 2}
    cfg["first_token"]["models"] = ["m", "m2"]
    notes = C.findings(inputs, cfg).notes[0]
    assert notes.startswith("Ours: m (tiny: seed 0, causal); m2 (tiny: seed 2, causal); 414 questions x 2 shuffles;")
    assert notes.endswith("text answers labelled by auto (first_token.classifier: auto).")


def test_findings_bootstrap_uses_the_configured_replicates_and_seed(tmp_path):
    recs, inputs = _findings_inputs(tmp_path, ["string_match"])
    got = C.findings(inputs, _config(10, seed=3)).measured["mismatch_over_60_percent"]["m"]
    want = measure(recs, MAIN, n_boot=40, seed=3)["mismatch_over_60_percent"]["m"]
    assert (got.ci_low, got.ci_high) == (want.ci_low, want.ci_high)
    # another seed (the default 0) draws another interval from the same run
    other = measure(recs, MAIN, n_boot=40)["mismatch_over_60_percent"]["m"]
    assert (other.ci_low, other.ci_high) != (got.ci_low, got.ci_high)
    assert not math.isnan(got.effect)


def test_the_ledger_rows_carry_the_papers_values_over_the_declared_ones(tmp_path):
    _, inputs = _findings_inputs(tmp_path, ["string_match"])
    f = C.findings(inputs, _config(10))
    rows = {r["claim"]: r for r in f.rows()}
    assert isinstance(f, Findings)
    assert rows["text_more_consistent"]["paper"] == "0.19 nats (mean over 21 model x level cells of Table 3)"
    assert rows["mismatch_decreases_low_to_high"]["paper"] == "Figure 2a (bars, no numbers)"
    assert pd.notna(rows["mismatch_over_60_percent"]["paper_effect"])
