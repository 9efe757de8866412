"""What a ledger prints where the engine does not let a number decide, and what the merged ledger keeps: an
interval the rule does not use is marked in the short table (its section keeps it), an existence row's figures
come from the model furthest on the predicted side with ties broken on the point, a statistic may read a subset
of the rows its checks read, a row that could not detect the paper's effect says how many units it would take
and how many exist, and the merged ledger prints the studies' numbers to the same digits with each study's notes.
"""

from __future__ import annotations

import pandas as pd
import pytest

from wobble.report.engine import ClaimSpec, UnitTable, measure_all, measure_claim
from wobble.report.findings import ledger_notes, merge_ledgers, render_findings, table_frame, write_findings
from wobble.report.gates import mapped
from wobble.report.intervals import Custom, Mean
from wobble.report.rules import FAMILY_WISE


def table(per_unit: list[float], model: str = "m", cell: str = "c") -> pd.DataFrame:
    """One observation per unit (question q<i>) with value per_unit[i], mapped."""
    return pd.DataFrame({"question": [f"q{i}" for i in range(len(per_unit))], "model": model, "cell": cell,
                         "value": per_unit, "mapped": 1.0})


def claim(stat, **kw) -> ClaimSpec:
    base = dict(study="toy_study", id="c1", name="share above zero", quote="models do X", section="§3",
                paper_value="12%", statistic=stat, unit="question", min_units=5, evidence="figure")
    return ClaimSpec(**{**base, **kw})


def one_row(c: ClaimSpec, frame: pd.DataFrame, **kw) -> dict:
    return measure_claim(c, 1, UnitTable(frame, "question"), ["m"], n_boot=200, **kw)[0]


POOLED = Custom(lambda f: float(f["value"].mean()), "pooled mean", columns=("value",))


@pytest.mark.parametrize("stat, values, mark", [
    (POOLED, [0.0, 1.0] * 8, "bootstrap over 16 questions, not used"),  # no exact interval, 16 < 30
    (POOLED, [0.0] * 16, "no spread"),  # every replicate 0: [0, 0] claims certainty
    (POOLED, [0.0] * 3, "no spread; 3 < 5 questions"),
    (POOLED, [0.0, 1.0, 1.0], "bootstrap over 3 < 5 questions, not used"),
    (Mean("value"), [0.0, 1.0, 1.0, 0.0], "4 < 5 questions, not used"),  # an exact interval, too few units
    (Mean("value"), [0.0, 1.0] * 8, ""),  # Clopper-Pearson over 16 questions: it decides
])
def test_an_interval_the_rule_does_not_use_is_marked_in_the_short_table(stat, values, mark):
    r = one_row(claim(stat), table(values))
    assert r["ci_not_used"] == mark
    cell = table_frame([r])["ours [95% CI]"][0]
    point = f"{r['effect']:.3g}"
    if mark:
        assert cell == f"{point} ({mark})" and r["verdict"] == "inconclusive"
        assert len(cell) <= 60  # well inside the table's 120 characters
    else:
        assert cell == f"{point} [{r['ci_low']:.3g}, {r['ci_high']:.3g}]"
    # the claim's section keeps the interval and how it was made
    line = next(ln for ln in render_findings([r], "t").splitlines() if ln.startswith("* `ts-01-m`"))
    assert f"{point} [{r['ci_low']:.3g}, {r['ci_high']:.3g}]" in line and r["interval"] in line


def test_an_existence_row_breaks_a_tie_of_bounds_on_the_point():
    # both models' Hoeffding lower bounds over 16 questions clip at 0 (0.1 and 0.2, half-width 0.34 at 97.5 %):
    # the figures are the model with the larger point, whichever comes first
    frame = pd.concat([table([0.1] * 16, "a"), table([0.2] * 16, "b")])
    c = claim(Mean("value"), null=0.6, scope="exists")
    for order in (["a", "b"], ["b", "a"]):
        top = measure_claim(c, 1, UnitTable(frame, "question"), order)[0]
        assert top["ci_low"] == 0 and top["effect"] == pytest.approx(0.2) and "b's" in top["note"]


def test_a_statistic_can_read_a_subset_of_the_rows_its_checks_read():
    # the refusal share's shape: the statistic reads the flagged rows (present in cell x only), the gate reads
    # both cells, so a cell without a flagged row is still checked; units: those with a flagged row
    frame = pd.concat([table([1.0, 0.0] * 10, cell="x"), table([0.0] * 20, cell="y")])
    frame["flag"] = ((frame["cell"] == "x") & (frame["question"].isin([f"q{i}" for i in range(12)]))).astype(float)
    frame.loc[frame["cell"] == "y", "mapped"] = 0.0
    c = claim(POOLED, subset="flag", gates=(mapped(0.5),))
    r = one_row(c, frame)
    assert r["n_items"] == 12 and r["effect"] == pytest.approx(0.5)
    assert r["gate_figures"] == "x: degenerate 1.00; y: degenerate 0.00 ✗"
    with pytest.raises(ValueError, match="lacks"):
        one_row(c, frame.drop(columns="flag"))


def test_a_row_that_cannot_detect_the_papers_effect_says_how_many_units_and_how_many_exist():
    c = claim(Mean("value"), evidence="text", paper_effect=0.1, population=50)
    r = one_row(c, table([0.0, 1.0] * 8))
    assert r["detects_paper_effect"] is False and r["population"] == 50 and r["items_attainable"] is False
    md = render_findings([r], "t")
    assert f"to detect the paper's effect: needed about {r['items_needed']:,} questions (the population has 50)" in md
    assert ("for the other 1 the row's line in its claim's section says about how many units it would take "
            "(n · (detectable / |paper effect − null|)²) and, for the 1 whose claim says how many units exist, "
            "that number (enough exist for 0)") in md
    # an interval with no spread says nothing of what the sample could detect
    flat = one_row(claim(POOLED, evidence="text", paper_effect=0.1), table([0.0] * 16))
    assert flat["detectable_effect"] is None and flat["detects_paper_effect"] is None


def test_the_merged_ledger_prints_the_studies_digits_and_keeps_each_studys_notes(tmp_path):
    rows = {}
    for study in ("alpha", "beta"):
        c = claim(Mean("value"), study=study)
        rows[study] = measure_all([c], {"c1": UnitTable(table([0.0, 1.0] * 8), "question")}, ["m"], n_boot=50)
    rows["alpha"][0]["effect"] = 0.40349  # 0.403 at full precision; 0.4035 at four decimals would print 0.404
    write_findings(rows["alpha"], tmp_path / "alpha" / "findings", "A", ["Ours: model m, 16 questions."])
    write_findings(rows["beta"], tmp_path / "beta" / "findings", "B", ["Control: a neutral follow-up."])
    assert ledger_notes(tmp_path / "alpha" / "findings.csv") == ["Ours: model m, 16 questions."]
    merge_ledgers([tmp_path / s / "findings.csv" for s in ("alpha", "beta")], tmp_path / "findings")
    md = (tmp_path / "findings.md").read_text()
    own = (tmp_path / "alpha" / "findings.md").read_text()
    assert "| al-01-m | share above zero | m | 0.403 [" in md and "0.404" not in md and "0.403 [" in own
    notes = md.split("## Rule and notes")[1]
    assert notes.count(f"* {FAMILY_WISE}") == 1 and notes.count("Verdict rule") == 1
    assert "### Notes of alpha\n\n* Ours: model m, 16 questions." in notes
    assert "### Notes of beta\n\n* Control: a neutral follow-up." in notes
    assert f"* {FAMILY_WISE}" in own  # every ledger carries the family-wise note
    tex = (tmp_path / "findings.tex").read_text()
    assert "% alpha: Ours: model m, 16 questions." in tex
