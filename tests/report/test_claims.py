"""The claims ledger's pre-registered verdict rule on hand-made measurements: the four outcomes, the paper's own
verdict by the same rule, detectability capped by the unit's population, one row per model."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from wobble.report.claims import (Claim, Findings, Measurement, detectable_effect, paper_effect, paper_verdict,
                                  verdict)
from wobble.report.findings import merge_ledgers
from wobble.report.ledger import ledger_rows, write_ledger

UP = Claim(study="s", id="up", quote="X lowers scores", section="§4", paper_value="-5.1", effect="drop", direction=1)
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
    assert "The paper's own numbers pass 1 of the 2 rows whose evidence is a published table" in md
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
