"""wobble.report.claims: behaviour the mutation run (tests/tools/mutate.py) found untested.

The ledger is read by people: each verdict's reason, the tidy columns and the displayed row are pinned
on hand-made measurements.
"""

from __future__ import annotations

import pytest

from wobble.report.cells import DASH

from wobble.report.claims import (VERDICT_RULE, Claim, Measurement, display_frame, ledger_rows, merge_ledgers,
                                  paper_effect, sample_vs_paper, verdict, write_ledger)

UP = Claim(study="s", id="up", quote="X lowers scores", section="§4", paper_value="-5.1", effect="drop")
DOWN = Claim(study="s", id="down", quote="Y lowers entropy", section="§5", paper_value="0.3", effect="change",
             direction=-1, min_items=5)


@pytest.mark.parametrize("claim, m, reason", [
    (UP, None, "not measured in this run"),
    (UP, Measurement(2.0, 0.5, 3.5, 50, degenerate=True), "degenerate cells"),
    (UP, Measurement(2.0, 0.5, 3.5, 50, degenerate=True, note="one answer wins"), "degenerate cells: one answer wins"),
    (UP, Measurement(2.0, 0.5, 3.5, 9), "9 items < 10 required"),
    (UP, Measurement(2.0, 0.5, None, 50), "no interval"),
    (UP, Measurement(2.0, None, 3.5, 50), "no interval"),
    (UP, Measurement(1.0, -0.5, 2.5, 50), "95% CI [-0.5, 2.5] contains 0"),
    (UP, Measurement(2.0, 0.5, 3.5, 50), "95% CI excludes the null on the predicted side"),
    (UP, Measurement(-2.0, -3.5, -0.5, 50), "95% CI excludes the null on the opposite side"),
])
def test_verdict_reasons(claim, m, reason):
    assert verdict(claim, m)[1] == reason


def test_defaults_ten_items_and_points():
    assert UP.min_items == 10 and UP.unit == "points" and UP.null == 0.0 and UP.direction == 1
    # exactly the minimum number of items is enough
    assert verdict(UP, Measurement(2.0, 0.5, 3.5, 10))[0] == "reproduced"
    assert Measurement(1.0, 0.0, 2.0, 10).note == ""


def test_an_interval_ending_at_the_null_is_inconclusive():
    # upper end touches the null: inconclusive, not "reproduced" for a claim predicting a decrease
    assert verdict(DOWN, Measurement(-0.2, -0.4, 0.0, 5)) == ("inconclusive", "95% CI [-0.4, 0] contains 0")


def test_ledger_row_columns():
    measured, missing = ledger_rows([UP, DOWN], {"up": Measurement(2.0, 0.5, 3.5, 50, note="n")})
    assert measured == {
        "study": "s", "claim": "up", "quote": "X lowers scores", "section": "§4", "paper": "-5.1",
        "paper_effect": -5.1, "detects_paper_effect": True, "items_needed": None,  # 2.14 detectable <= 5.1
        "effect_definition": "drop", "unit": "points", "predicted_direction": 1, "null": 0.0, "effect": 2.0,
        "ci_low": 0.5, "ci_high": 3.5, "n_items": 50, "detectable_effect": pytest.approx(2.8 * 3.0 / 3.92),
        "degenerate": False, "verdict": "reproduced", "reason": "95% CI excludes the null on the predicted side",
        "note": "n",
    }
    assert missing["note"] == "" and missing["degenerate"] is None and missing["detectable_effect"] is None
    assert missing["predicted_direction"] == -1


def test_display_frame_rows():
    df = display_frame(ledger_rows([UP, DOWN], {"up": Measurement(2.0, 0.5, 3.5, 50)}))
    assert list(df.columns) == ["study", "claim", "paper", "our effect", "items", "detectable",
                                "paper's effect detectable", "verdict"]
    assert df.to_dict(orient="records") == [
        {"study": "s", "claim": "“X lowers scores” (§4)", "paper": "-5.1",
         "our effect": "drop: 2.00 [0.50, 3.50] points", "items": "50", "detectable": "2.14",
         "paper's effect detectable": "yes",
         "verdict": "**reproduced** (95% CI excludes the null on the predicted side)"},
        {"study": "s", "claim": "“Y lowers entropy” (§5)", "paper": "0.3", "our effect": "change: – points",
         "items": "–", "detectable": "–", "paper's effect detectable": "–",
         "verdict": "**inconclusive** (not measured in this run)"},
    ]


def test_paper_effect_and_items_needed_hand_computed():
    assert paper_effect(UP) == -5.1 and paper_effect(UP, "+19.6 (59.1 − 39.5)") == 19.6
    assert paper_effect(UP, "−2.5 (x)") == -2.5 and paper_effect(UP, "mismatch at High > 0") is None
    share = Claim(study="s", id="c", quote="q", section="§", paper_value="66.2% (Llama2)", effect="e",
                  null=0.6, paper_effect=0.662)
    assert paper_effect(share) == 0.662
    assert paper_effect(Claim(study="s", id="d", quote="q", section="§", paper_value="12 models",
                              effect="e", paper_in_value=False)) is None
    # detectable = 2.8 * (3 - (-1)) / 3.92 = 2.857; paper 1.0 from a null of 0: too small for 40 items;
    # needed = ceil(40 * 2.857^2) = ceil(326.5) = 327
    m = Measurement(1.0, -1.0, 3.0, 40)
    assert sample_vs_paper(UP, m, 1.0) == (False, 327)
    assert sample_vs_paper(UP, m, 2.857) == (False, 41) and sample_vs_paper(UP, m, -3.0) == (True, None)
    # the distance is taken from the claim's null: 0.662 is 0.062 above 0.6
    narrow = Measurement(0.1, 0.08, 0.12, 16)  # detectable 0.02857
    assert sample_vs_paper(share, narrow, 0.662) == (True, None)
    assert sample_vs_paper(UP, None, 1.0) == (None, None) and sample_vs_paper(UP, m, None) == (None, None)


def test_ledger_files_state_the_rule_and_title(tmp_path):
    write_ledger(ledger_rows([UP], {}), tmp_path / "a", "A")
    md = (tmp_path / "a.md").read_text()
    assert f"* {VERDICT_RULE}" in md
    assert VERDICT_RULE.startswith("Verdict rule (fixed in wobble.report.claims before any run): inconclusive if")
    merge_ledgers([tmp_path / "a.csv"], tmp_path / "all")
    assert (tmp_path / "all.md").read_text().startswith("# Claims ledger: every study\n")


# ------------------------------------------- could the sample show the paper's effect (mutation run 2026-11-26)

def test_findings_paper_values_default_to_none_given():
    from wobble.report.claims import Findings

    f = Findings("t", (UP,), {"up": None})
    assert f.paper_values == {} and f.rows()[0]["paper"] == "-5.1"


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
    assert _shown(detects_paper_effect=False, items_needed=None) == "no"
    assert _shown(detects_paper_effect="True", items_needed=None) == "yes"


def test_display_frame_of_no_rows_keeps_its_columns():
    assert list(display_frame([]).columns) == ["study", "claim", "paper", "our effect", "items", "detectable",
                                               "paper's effect detectable", "verdict"]


def test_merged_ledger_counts_the_claims_whose_sample_could_show_the_paper_effect(tmp_path):
    big = Measurement(5.0, 4.0, 6.0, 40)  # detectable 1.43 < |-5.1|: yes
    small = Measurement(0.2, -0.5, 5.0, 12)  # detectable 3.93 > |0.3|: no
    up2 = Claim(study="s", id="up2", quote="W lowers scores", section="§7", paper_value="-4.0", effect="drop")
    rows = ledger_rows([UP, DOWN, up2, Claim(study="s", id="none", quote="z", section="§6", paper_value="n/a",
                                             effect="e", paper_in_value=False)],
                       {"up": big, "down": small, "up2": big, "none": big})
    assert [r["detects_paper_effect"] for r in rows] == [True, False, True, None]
    write_ledger(rows, tmp_path / "a", "A")
    merge_ledgers([tmp_path / "a.csv"], tmp_path / "all")
    text = (tmp_path / "all.md").read_text()
    assert ("2 of the 3 measured claims with a comparable paper number had a sample that could detect an effect "
            "as large as the paper's ('paper's effect detectable')") in text
