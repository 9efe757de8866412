"""The claims ledger's pre-registered verdict rule on hand-made measurements: the four outcomes, the paper's own
verdict by the same rule, detectability capped by the unit's population, one row per model.

The ledger (wobble.report.ledger) is read by people: each verdict's reason, the tidy columns and the displayed
row are pinned on hand-made measurements."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from wobble.report.cells import DASH
from wobble.report.claims import (VERDICT_RULE, Claim, Findings, Measurement, detectable_effect, paper_effect,
                                  paper_verdict, sample_vs_paper, verdict)
from wobble.report.findings import merge_ledgers
from wobble.report.ledger import display_frame, ledger_rows, read_ledger, write_ledger

UP = Claim(study="s", id="up", quote="X lowers scores", section="§4", paper_value="-5.1", effect="drop")
DOWN = Claim(study="s", id="down", quote="Y lowers entropy", section="§5", paper_value="0.3", effect="change",
             direction=-1, min_items=5)
OVER60 = Claim(study="s", id="over60", quote="mismatch over 60%", section="§3", paper_value="60%",
               effect="mismatch rate", null=0.6, unit="share")
PER_MODEL = Claim(study="s", id="pm", quote="models flip", section="§2", paper_value="52.7", effect="flip rate",
                  per_model=True, precondition="initial accuracy above chance")


@pytest.mark.parametrize("claim, m, expected", [
    (UP, Measurement(2.0, 0.5, 3.5, 50), "reproduced"),
    (UP, Measurement(-2.0, -3.5, -0.5, 50), "contradicted"),
    (UP, Measurement(1.0, -0.5, 2.5, 50), "inconclusive"),          # CI contains 0
    (UP, Measurement(1.0, 0.0, 2.5, 50), "inconclusive"),           # boundary touches the null
    (UP, Measurement(2.0, 0.5, 3.5, 9), "inconclusive"),            # too few items (min 10)
    (UP, Measurement(2.0, 0.5, 3.5, 50, degenerate=True), "inconclusive"),
    (UP, Measurement(2.0, None, None, 50), "inconclusive"),
    (UP, Measurement(float("nan"), 0.1, 0.2, 50), "inconclusive"),
    (UP, None, "inconclusive"),
    (UP, Measurement(-2.0, -3.5, -0.5, 50, applicable=False), "not applicable"),  # would be contradicted
    (UP, Measurement(None, None, None, 0, applicable=False), "not applicable"),
    (DOWN, Measurement(-0.2, -0.3, -0.1, 5), "reproduced"),
    (DOWN, Measurement(0.2, 0.1, 0.3, 5), "contradicted"),
    (OVER60, Measurement(0.7, 0.65, 0.75, 100), "reproduced"),
    (OVER60, Measurement(0.62, 0.55, 0.69, 100), "inconclusive"),
    (OVER60, Measurement(0.3, 0.2, 0.4, 100), "contradicted"),
])
def test_verdict_rule(claim, m, expected):
    assert verdict(claim, m)[0] == expected


def test_not_applicable_says_what_failed_and_comes_before_the_sample_checks():
    m = Measurement(-2.0, -3.5, -0.5, 3, degenerate=True, applicable=False,
                    precondition_note="initial accuracy 3/15, p = 0.99 against chance 50%")
    assert verdict(UP, m) == ("not applicable",
                              "precondition not met: initial accuracy 3/15, p = 0.99 against chance 50%")


def test_claim_declarations_are_checked():
    with pytest.raises(ValueError, match="direction"):
        Claim(study="s", id="x", quote="q", section="§1", paper_value="1", effect="e", direction=0)
    with pytest.raises(ValueError, match="evidence"):
        Claim(study="s", id="x", quote="q", section="§1", paper_value="1", effect="e", evidence="blog")
    with pytest.raises(ValueError, match="computed from paper/"):
        Claim(study="s", id="x", quote="q", section="§1", paper_value="1", effect="e", paper_effect=1.0)


def test_the_paper_gets_the_same_rule_as_a_point():
    assert paper_verdict(UP, 5.1) == "reproduced" and paper_verdict(UP, -5.1) == "contradicted"
    assert paper_verdict(UP, 0.0) == "inconclusive"  # a point on the null is inside its own "interval"
    assert paper_verdict(OVER60, 0.662) == "reproduced" and paper_verdict(OVER60, 0.576) == "contradicted"
    assert paper_verdict(DOWN, -0.3) == "reproduced"
    assert paper_verdict(UP, None) is None and paper_verdict(UP, float("nan")) is None
    text = Claim(study="s", id="t", quote="q", section="§1", paper_value="about 85%", effect="e",
                 evidence="text", paper_effect=0.53)
    assert paper_verdict(text, 0.53) is None  # the paper's prose carries no table to recompute


def test_paper_effect_comes_from_the_table_or_the_text():
    assert paper_effect(UP, 4.2) == 4.2 and paper_effect(UP) is None and paper_effect(UP, float("nan")) is None
    text = Claim(study="s", id="t", quote="q", section="§1", paper_value="about 85%", effect="e",
                 evidence="figure", paper_effect=0.53)
    assert paper_effect(text, 9.9) == 0.53


def test_findings_list_the_table_claims_the_paper_itself_fails():
    f = Findings("T", (UP, OVER60, DOWN), {}, paper_effects={"up": 5.1, "over60": 0.576})
    assert f.paper_failures() == ["over60: paper effect 0.576 -> contradicted", "down: paper effect None -> None"]


def test_detectable_effect_is_2_8_standard_errors():
    # CI width 3.92 -> SE 1 -> detectable 2.8
    assert detectable_effect(Measurement(0.0, -1.96, 1.96, 10)) == pytest.approx(2.8)
    assert detectable_effect(Measurement(0.0, None, None, 10)) is None
    assert detectable_effect(None) is None


def test_items_needed_is_capped_by_the_units_that_exist():
    # detectable 2.8 * 4 / 3.92 = 2.857 against the paper's 1.0: ceil(24 * 2.857^2) = ceil(195.9) = 196 tasks
    m = Measurement(1.0, -1.0, 3.0, 24, population=119)
    row = ledger_rows([UP], {"up": m}, paper_effects={"up": 1.0})[0]
    assert (row["items_needed"], row["items_attainable"], row["population"]) == (196, False, 119)
    assert ledger_rows([UP], {"up": Measurement(1.0, -1.0, 3.0, 24, population=500)},
                       paper_effects={"up": 1.0})[0]["items_attainable"] is True
    assert ledger_rows([UP], {"up": Measurement(1.0, -1.0, 3.0, 24)},
                       paper_effects={"up": 1.0})[0]["items_attainable"] is True


def test_a_per_model_claim_gets_a_row_per_model_and_a_pooled_claim_one():
    measured = {"pm": {"qwen": Measurement(30.0, 20.0, 40.0, 60),
                       "smol": Measurement(None, None, None, 15, applicable=False, precondition_note="at chance")},
                "up": Measurement(2.0, 0.5, 3.5, 50)}
    rows = ledger_rows([PER_MODEL, UP], measured, paper_effects={"pm": 52.7, "up": 5.1})
    assert [(r["claim"], r["model"], r["verdict"]) for r in rows] == [
        ("pm", "qwen", "reproduced"), ("pm", "smol", "not applicable"), ("up", "all", "reproduced")]
    assert rows[0]["paper_verdict"] == rows[1]["paper_verdict"] == "reproduced"
    assert ledger_rows([PER_MODEL], {})[0]["model"] == "–"
    with pytest.raises(TypeError, match="pooled claim"):
        ledger_rows([UP], {"up": {"qwen": Measurement(1.0, 0.5, 1.5, 10)}})


def test_ledger_rows_and_files(tmp_path):
    rows = ledger_rows([UP, DOWN], {"up": Measurement(2.0, 0.5, 3.5, 50)}, paper_effects={"up": 5.1})
    assert [r["verdict"] for r in rows] == ["reproduced", "inconclusive"]
    assert rows[1]["reason"] == "not measured in this run" and rows[1]["effect"] is None
    paths = write_ledger(rows, tmp_path / "findings", "Claims")
    md = (tmp_path / "findings.md").read_text()
    assert "**reproduced**" in md and "“X lowers scores” (§4)" in md and "2.00 [0.50, 3.50]" in md
    assert "Verdict rule" in md and "-5.1: **reproduced**" in md
    assert "2 rows: 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive." in md
    # DOWN is table-backed but has no paper effect: it is counted as such, not as a row the paper fails
    assert ("The paper's own numbers pass 1 of the 1 table-backed rows with a paper effect; 1 table-backed row has "
            "no paper effect on the run's cells") in md
    csv = pd.read_csv(tmp_path / "findings.csv")
    assert list(csv["verdict"]) == ["reproduced", "inconclusive"] and math.isclose(csv["effect"][0], 2.0)
    assert {p.suffix for p in paths} == {".md", ".csv", ".tex"}


def test_merge_ledgers_counts_all_four_outcomes_per_study(tmp_path):
    write_ledger(ledger_rows([UP], {"up": Measurement(2.0, 0.5, 3.5, 50)}), tmp_path / "a", "A")
    other = Claim(study="t", id="pm", quote="models flip", section="§2", paper_value="52.7", effect="e",
                  per_model=True)
    write_ledger(ledger_rows([other, DOWN], {"pm": {"m": Measurement(1.0, 0.5, 2.0, 20, applicable=False)}}),
                 tmp_path / "b", "B")
    merge_ledgers([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "all")
    md = (tmp_path / "all.md").read_text()
    assert "3 rows: 1 reproduced, 0 contradicted, 1 not applicable, 1 inconclusive." in md
    assert ("Per study: s 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive; "
            "t 0 reproduced, 0 contradicted, 1 not applicable, 0 inconclusive.") in md
    assert md.count("| reproduced |") == 1 and md.count("| not measured |") == 1  # the short table's verdicts


def test_findings_rows_take_the_paper_value_computed_from_its_tables():
    f = Findings("T", (UP, DOWN), {"up": Measurement(2.0, 0.5, 3.5, 50)}, paper_values={"up": "4.2 (Table 4)"},
                 paper_effects={"up": 4.2})
    rows = f.rows()
    assert rows[0]["paper"] == "4.2 (Table 4)" and rows[1]["paper"] == "0.3"
    assert rows[0]["paper_effect"] == 4.2 and rows[1]["paper_effect"] is None


COLUMNS = ["study", "claim", "model", "paper (own verdict)", "our effect", "n", "detectable",
           "paper's effect detectable", "precondition", "notes", "verdict"]


@pytest.mark.parametrize("claim, m, reason", [
    (UP, None, "not measured in this run"),
    (UP, Measurement(None, None, None, 0, note="no dialogues"), "not measured in this run: no dialogues"),
    (UP, Measurement(2.0, 0.5, 3.5, 50, degenerate=True), "degenerate cells"),
    (UP, Measurement(2.0, 0.5, 3.5, 50, degenerate=True, note="one answer wins"), "degenerate cells: one answer wins"),
    (UP, Measurement(2.0, 0.5, 3.5, 9), "9 items < 10 required"),
    (UP, Measurement(2.0, 0.5, None, 50), "no interval"),
    (UP, Measurement(2.0, None, 3.5, 50), "no interval"),
    (UP, Measurement(1.0, -0.5, 2.5, 50), "95% CI [-0.5, 2.5] contains 0"),
    (UP, Measurement(2.0, 0.5, 3.5, 50), "95% CI excludes the null on the predicted side"),
    (UP, Measurement(-2.0, -3.5, -0.5, 50), "95% CI excludes the null on the opposite side"),
    (UP, Measurement(2.0, 0.5, 3.5, 50, applicable=False), "precondition not met"),
])
def test_verdict_reasons(claim, m, reason):
    assert verdict(claim, m)[1] == reason


def test_a_claim_about_tasks_names_its_unit_in_the_reason():
    tasks = Claim(study="s", id="t", quote="q", section="§1", paper_value="1", effect="e", unit_name="tasks")
    assert verdict(tasks, Measurement(2.0, 0.5, 3.5, 9)) == ("inconclusive", "9 tasks < 10 required")


def test_defaults_ten_items_and_points():
    assert UP.min_items == 10 and UP.unit == "points" and UP.null == 0.0 and UP.direction == 1
    assert UP.evidence == "table" and UP.unit_name == "items" and not UP.per_model and UP.precondition == ""
    # exactly the minimum number of items is enough
    assert verdict(UP, Measurement(2.0, 0.5, 3.5, 10))[0] == "reproduced"
    m = Measurement(1.0, 0.0, 2.0, 10)
    assert (m.note, m.applicable, m.interval, m.population, m.diagnostics) == ("", True, "bootstrap over items",
                                                                              None, "")


def test_an_interval_ending_at_the_null_is_inconclusive():
    # upper end touches the null: inconclusive, not "reproduced" for a claim predicting a decrease
    assert verdict(DOWN, Measurement(-0.2, -0.4, 0.0, 5)) == ("inconclusive", "95% CI [-0.4, 0] contains 0")


def test_ledger_row_columns():
    measured, missing = ledger_rows([UP, DOWN], {"up": Measurement(2.0, 0.5, 3.5, 50, note="n", diagnostics="d",
                                                                   interval="exact binomial")},
                                    paper_effects={"up": -5.1})
    assert measured == {
        "study": "s", "claim": "up", "model": "all", "quote": "X lowers scores", "section": "§4",
        "evidence": "table", "paper": "-5.1", "paper_effect": -5.1, "paper_verdict": "contradicted",
        "precondition": "", "applicable": True, "precondition_note": "",
        "detects_paper_effect": True, "items_needed": None,  # 2.14 detectable <= 5.1
        "items_attainable": None, "population": None, "unit_name": "items",
        "effect_definition": "drop", "unit": "points", "predicted_direction": 1, "null": 0.0, "effect": 2.0,
        "ci_low": 0.5, "ci_high": 3.5, "interval": "exact binomial", "n_items": 50,
        "detectable_effect": pytest.approx(2.8 * 3.0 / 3.92),
        "degenerate": False, "verdict": "reproduced", "reason": "95% CI excludes the null on the predicted side",
        "note": "n", "diagnostics": "d",
    }
    assert missing["note"] == "" and missing["degenerate"] is None and missing["detectable_effect"] is None
    assert missing["predicted_direction"] == -1 and missing["applicable"] is None and missing["interval"] == ""


def test_display_frame_rows():
    pre = Claim(study="s", id="pre", quote="Z flips", section="§6", paper_value="text", effect="rate",
                evidence="text", precondition="accuracy above chance")
    df = display_frame(ledger_rows([UP, DOWN, pre], {
        "up": Measurement(2.0, 0.5, 3.5, 50),
        "pre": Measurement(None, None, None, 15, applicable=False, precondition_note="3/15")},
        paper_effects={"up": 5.1}))
    assert list(df.columns) == COLUMNS
    assert df.to_dict(orient="records") == [
        {"study": "s", "claim": "“X lowers scores” (§4)", "model": "all", "paper (own verdict)": "-5.1: **reproduced**",
         "our effect": "drop: 2.00 [0.50, 3.50] points (bootstrap over items)", "n": "50 items", "detectable": "2.14",
         "paper's effect detectable": "yes", "precondition": DASH, "notes": DASH,
         "verdict": "**reproduced** (95% CI excludes the null on the predicted side)"},
        {"study": "s", "claim": "“Y lowers entropy” (§5)", "model": "all",
         "paper (own verdict)": "0.3 (from the paper's table; no verdict)", "our effect": "change: – points",
         "n": "–", "detectable": "–", "paper's effect detectable": "–", "precondition": DASH, "notes": DASH,
         "verdict": "**inconclusive** (not measured in this run)"},
        {"study": "s", "claim": "“Z flips” (§6)", "model": "all",
         "paper (own verdict)": "text (from the paper's text; no verdict)", "our effect": "rate: – points",
         "n": "15 items", "detectable": "–", "paper's effect detectable": "–",
         "precondition": "accuracy above chance — not met (3/15)", "notes": DASH,
         "verdict": "**not applicable** (precondition not met: 3/15)"},
    ]


def test_paper_effect_and_items_needed_hand_computed():
    # detectable = 2.8 * (3 - (-1)) / 3.92 = 2.857; paper 1.0 from a null of 0: too small for 40 items;
    # needed = ceil(40 * 2.857^2) = ceil(326.5) = 327
    m = Measurement(1.0, -1.0, 3.0, 40)
    assert sample_vs_paper(UP, m, 1.0) == (False, 327)
    assert sample_vs_paper(UP, m, 2.857) == (False, 41) and sample_vs_paper(UP, m, -3.0) == (True, None)
    assert sample_vs_paper(UP, m, 0.0) == (False, float("inf"))
    share = Claim(study="s", id="c", quote="q", section="§", paper_value="66.2% (Llama2)", effect="e", null=0.6)
    # the distance is taken from the claim's null: 0.662 is 0.062 above 0.6
    narrow = Measurement(0.1, 0.08, 0.12, 16)  # detectable 0.02857
    assert sample_vs_paper(share, narrow, 0.662) == (True, None)
    assert sample_vs_paper(UP, None, 1.0) == (None, None) and sample_vs_paper(UP, m, None) == (None, None)


def test_ledger_files_state_the_rule_and_title(tmp_path):
    write_ledger(ledger_rows([UP], {}), tmp_path / "a", "A")
    md = (tmp_path / "a.md").read_text()
    assert f"* {VERDICT_RULE}" in md
    assert VERDICT_RULE.startswith("Verdict rule (wobble.report.claims): inconclusive if")
    assert "before any run" not in VERDICT_RULE
    merge_ledgers([tmp_path / "a.csv"], tmp_path / "all")
    assert (tmp_path / "all.md").read_text().startswith("# Claims ledger: every study\n")


def test_findings_paper_values_default_to_none_given():
    f = Findings("t", (UP,), {"up": None})
    assert f.paper_values == {} and f.paper_effects == {} and f.rows()[0]["paper"] == "-5.1"


def test_sample_vs_paper_measures_the_distance_from_a_nonzero_null():
    claim = Claim(study="s", id="c", quote="q", section="§1", paper_value="60", effect="rate", null=50.0)
    m = Measurement(55.0, 40.0, 60.0, 20)  # detectable 2.8 * 20 / 3.92 = 14.29 > |60 - 50|
    assert sample_vs_paper(claim, m, 60.0) == (False, 41)  # ceil(20 * (14.29 / 10) ** 2)


def test_sample_vs_paper_detects_an_effect_exactly_at_the_detectable_size():
    m = Measurement(1.0, 0.0, 3.92, 30)  # detectable = 2.8 * 3.92 / 3.92 = 2.8
    assert sample_vs_paper(UP, m, 2.8) == (True, None)


def _shown(**row):
    base = {"study": "s", "quote": "q", "section": "§1", "paper": "1", "effect_definition": "d", "unit": "points",
            "effect": 1.0, "ci_low": 0.5, "ci_high": 1.5, "n_items": 10, "detectable_effect": 1.0,
            "verdict": "reproduced", "reason": "r"}
    return display_frame([{**base, **row}]).iloc[0]["paper's effect detectable"]


def test_paper_effect_detectable_cell_as_read_back_from_csv():
    assert _shown(detects_paper_effect="", items_needed=None) == DASH
    assert _shown(detects_paper_effect="False", items_needed=12.0) == "no: ≈ 12 items"
    assert _shown(detects_paper_effect=False, items_needed=None) == "no (the paper's effect equals the null)"
    assert _shown(detects_paper_effect="True", items_needed=None) == "yes"
    assert _shown(detects_paper_effect="False", items_needed=196.0, items_attainable="False", population=24.0,
                  unit_name="tasks") == "no: ≈ 196 tasks needed, not attainable (24 tasks exist)"
    assert _shown(detects_paper_effect="False", items_needed=20.0, items_attainable="True", population=24.0,
                  unit_name="tasks") == "no: ≈ 20 tasks"


def test_display_frame_of_no_rows_keeps_its_columns():
    assert list(display_frame([]).columns) == COLUMNS


def test_merged_ledger_counts_the_claims_whose_sample_could_show_the_paper_effect(tmp_path):
    big = Measurement(5.0, 4.0, 6.0, 40)  # detectable 1.43 < |-5.1|: yes
    small = Measurement(0.2, -0.5, 5.0, 12)  # detectable 3.93 > |0.3|: no
    up2 = Claim(study="s", id="up2", quote="W lowers scores", section="§7", paper_value="-4.0", effect="drop")
    none = Claim(study="s", id="none", quote="z", section="§6", paper_value="n/a", effect="e", evidence="text")
    rows = ledger_rows([UP, DOWN, up2, none], {"up": big, "down": small, "up2": big, "none": big},
                       paper_effects={"up": -5.1, "down": 0.3, "up2": -4.0})
    assert [r["detects_paper_effect"] for r in rows] == [True, False, True, None]
    write_ledger(rows, tmp_path / "a", "A")
    merge_ledgers([tmp_path / "a.csv"], tmp_path / "all")
    text = (tmp_path / "all.md").read_text()
    assert ("2 of the 3 measured rows with a comparable paper number had a sample that could detect an effect "
            "as large as the paper's") in text
    assert "The paper's own numbers pass 0 of the 3 table-backed rows with a paper effect;" in text
    # the row that could not detect the paper's effect: how many units it would take, in its own line
    assert "for the other 1 the row's line in its claim's section says about how many units it would take" in text


def test_an_effect_not_measured_without_a_note_says_only_that():
    assert verdict(UP, Measurement(None, None, None, 0)) == ("inconclusive", "not measured in this run")


def test_paper_failures_check_only_table_backed_claims():
    text_claim = Claim(study="s", id="txt", quote="q", section="§1", paper_value="about half", effect="e",
                       evidence="text")
    assert Findings("t", (text_claim,), {}).paper_failures() == []
    assert Findings("t", (UP,), {}, paper_effects={"up": 2.0}).paper_failures() == []
    assert Findings("t", (UP,), {}, paper_effects={"up": -2.0}).paper_failures() == ["up: paper effect -2.0 -> contradicted"]


def test_no_detectable_effect_without_both_ends_of_the_interval_or_units():
    assert detectable_effect(Measurement(1.0, math.nan, 2.0, 20)) is None
    assert detectable_effect(Measurement(1.0, 0.0, None, 20)) is None
    assert sample_vs_paper(UP, Measurement(1.0, 0.0, 0.98, 0), 0.35) == (None, None)


def _row_for(m, peff=0.35, population=None):
    claim = Claim(study="s", id="c", quote="q", section="§", paper_value="p", effect="e", evidence="text",
                  paper_effect=peff)
    m = None if m is None else Measurement(m[0], m[1], m[2], m[3], population=population)
    return ledger_rows([claim], {"c": m})[0]


def test_units_needed_and_whether_that_many_exist():
    # detectable 2.8 * 0.98 / 3.92 = 0.7, twice the paper's 0.35: 10 * 2**2 = 40 units needed
    assert (_row_for((0.5, 0.0, 0.98, 10), population=40)["items_needed"],
            _row_for((0.5, 0.0, 0.98, 10), population=40)["items_attainable"]) == (40, True)
    assert _row_for((0.5, 0.0, 0.98, 10), population=39)["items_attainable"] is False
    equal = _row_for((0.5, 0.0, 0.98, 10), peff=0.0)  # the paper's effect is the null: no number of units
    assert (equal["detects_paper_effect"], equal["items_needed"], equal["items_attainable"]) == (False, None, False)
    assert _row_for(None)["precondition_note"] == ""


def _display(**row):
    base = {"study": "s", "quote": "q", "section": "§", "model": "m", "paper": "p", "effect_definition": "e",
            "unit": "points", "effect": 1.0, "ci_low": 0.5, "ci_high": 1.5, "n_items": 12, "verdict": "reproduced",
            "reason": "r", "detectable_effect": 0.7, "evidence": "table", "paper_verdict": "reproduced"}
    return display_frame([{**base, **row}]).iloc[0].to_dict()


def test_display_cells_read_back_from_csv_treat_nan_as_empty():
    nan = math.nan
    assert _display(paper_verdict=nan)["paper (own verdict)"] == "p (from the paper's table; no verdict)"
    assert _display(paper_verdict="")["paper (own verdict)"] == "p (from the paper's table; no verdict)"
    assert _display(paper_verdict=None, evidence=None)["paper (own verdict)"] == "p (from the paper's text; no verdict)"
    assert _display(detects_paper_effect=nan)["paper's effect detectable"] == DASH
    assert _display(detects_paper_effect=False, items_needed=40, items_attainable=False, population=None)[
        "paper's effect detectable"] == "no: ≈ 40 items"
    assert _display(precondition="P", applicable=True, precondition_note=nan)["precondition"] == "P — met"
    assert _display(precondition="P", applicable=False, precondition_note="")["precondition"] == "P — not met"
    assert _display(precondition="P", applicable=True, precondition_note="why")["precondition"] == "P — met (why)"
    assert _display(note="a", diagnostics="b")["notes"] == "a; b"
    assert _display(note=nan, diagnostics="b")["notes"] == "b" and _display(note="a", diagnostics=nan)["notes"] == "a"
    assert _display(unit_name="tasks")["n"] == "12 tasks" and _display()["n"] == "12 items"
    assert _display(interval="")["our effect"] == "e: 1.00 [0.50, 1.50] points"
    assert _display(interval=nan)["our effect"] == "e: 1.00 [0.50, 1.50] points"
    assert _display(interval="bootstrap")["our effect"] == "e: 1.00 [0.50, 1.50] points (bootstrap)"


def test_a_ledger_read_back_keeps_its_numbers_and_one_study_has_no_per_study_line(tmp_path):
    rows = [_row_for((0.5, 0.0, 0.98, 10), population=40)]
    write_ledger(rows, tmp_path / "findings", "t")
    back = read_ledger(tmp_path / "findings.csv")
    assert back[0]["effect"] == 0.5 and back[0]["ci_high"] == 0.98 and back[0]["paper_verdict"] is None
    merge_ledgers([tmp_path / "findings.csv"], tmp_path / "all")
    assert "Per study:" not in (tmp_path / "all.md").read_text(encoding="utf-8")
