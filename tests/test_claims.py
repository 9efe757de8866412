"""The claims ledger's pre-registered verdict rule on hand-made measurements."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from wobble.report.claims import Claim, Measurement, detectable_effect, ledger_rows, verdict, write_ledger

UP = Claim(study="s", id="up", quote="X lowers scores", section="§4", paper_value="-5.1", effect="drop", direction=1)
DOWN = Claim(study="s", id="down", quote="Y lowers entropy", section="§5", paper_value="0.3", effect="change",
             direction=-1, min_items=5)
OVER60 = Claim(study="s", id="over60", quote="mismatch over 60%", section="§3", paper_value="60%",
               effect="mismatch rate", null=0.6, unit="share")


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
    (DOWN, Measurement(-0.2, -0.3, -0.1, 5), "reproduced"),
    (DOWN, Measurement(0.2, 0.1, 0.3, 5), "contradicted"),
    (OVER60, Measurement(0.7, 0.65, 0.75, 100), "reproduced"),
    (OVER60, Measurement(0.62, 0.55, 0.69, 100), "inconclusive"),
    (OVER60, Measurement(0.3, 0.2, 0.4, 100), "contradicted"),
])
def test_verdict_rule(claim, m, expected):
    assert verdict(claim, m)[0] == expected


def test_direction_must_be_a_sign():
    with pytest.raises(ValueError):
        Claim(study="s", id="x", quote="q", section="§1", paper_value="1", effect="e", direction=0)


def test_detectable_effect_is_2_8_standard_errors():
    # CI width 3.92 -> SE 1 -> detectable 2.8
    assert detectable_effect(Measurement(0.0, -1.96, 1.96, 10)) == pytest.approx(2.8)
    assert detectable_effect(Measurement(0.0, None, None, 10)) is None
    assert detectable_effect(None) is None


def test_ledger_rows_and_files(tmp_path):
    rows = ledger_rows([UP, DOWN], {"up": Measurement(2.0, 0.5, 3.5, 50)})
    assert [r["verdict"] for r in rows] == ["reproduced", "inconclusive"]
    assert rows[1]["reason"] == "not measured in this run" and rows[1]["effect"] is None
    paths = write_ledger(rows, tmp_path / "findings", "Claims")
    md = (tmp_path / "findings.md").read_text()
    assert "**reproduced**" in md and "“X lowers scores” (§4)" in md and "2.00 [0.50, 3.50]" in md
    assert "Verdict rule" in md
    csv = pd.read_csv(tmp_path / "findings.csv")
    assert list(csv["verdict"]) == ["reproduced", "inconclusive"] and math.isclose(csv["effect"][0], 2.0)
    assert {p.suffix for p in paths} == {".md", ".csv", ".tex"}


def test_merge_ledgers_across_studies(tmp_path):
    from wobble.report.claims import merge_ledgers

    write_ledger(ledger_rows([UP], {"up": Measurement(2.0, 0.5, 3.5, 50)}), tmp_path / "a", "A")
    write_ledger(ledger_rows([DOWN], {}), tmp_path / "b", "B")
    merge_ledgers([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "all")
    md = (tmp_path / "all.md").read_text()
    assert "2 claims: 1 reproduced, 0 contradicted, 1 inconclusive." in md
    assert md.count("**reproduced**") == 1 and md.count("**inconclusive**") == 1


def test_findings_rows_take_the_paper_value_computed_from_its_tables():
    from wobble.report.claims import Findings

    f = Findings("T", (UP, DOWN), {"up": Measurement(2.0, 0.5, 3.5, 50)}, paper_values={"up": "4.2 (Table 4)"})
    rows = f.rows()
    assert rows[0]["paper"] == "4.2 (Table 4)" and rows[1]["paper"] == "0.3"
