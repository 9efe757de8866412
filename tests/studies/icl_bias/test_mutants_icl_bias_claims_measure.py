"""wobble.studies.icl_bias.claims_measure: what the mutation run (tests/tools/mutate.py) found untested — the
paper's interventions and feature classes, means that skip missing values, our cells (prompt sets averaged, a
missing cell read as NaN quietly, labels before calibration), the constant-classifier check at its 95 % edge,
and the errors and line numbers of the paper's tables."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.pairs import PAIRS

from test_icl_bias_claims import NEG, SA, answers  # noqa: E402 (the same made-up score records)

T45 = ["table", "model", "steer_towards", "dataset", "feature", "intervention", "h1_acc", "h2_acc"]


# ------------------------------------------------------------------------------------------ the declarations


def test_the_papers_interventions_and_their_names_in_tables_2_4_and_5():
    assert M.INTERVENTIONS == ("verbalizer", "instruction", "explanation", "disambig")  # §5, in its order
    assert M.TABLE45_CONDITION == {"Baseline": "baseline", "DisAmbig": "disambig", "Verbalizers": "verbalizer",
                                   "Instruction": "instruction", "Explanation": "explanation"}
    assert M.TABLE2_INTERVENTION == {"Verbalizer": "verbalizer", "Instruction": "instruction",
                                     "Explanation": "explanation", "Disambig": "disambig"}
    assert (M.BASE, M.TUNED, M.CONSTANT_SHARE) == ("Davinci", "Text-Davinci-002", 0.95)


def test_the_feature_classes_are_length_and_overlap_against_genre_and_domain():
    features = {k: p.row for k, p in PAIRS.items()}
    assert list(M.NOT_SEMANTIC) == [k for k, f in features.items() if f in ("length", "overlap")]
    assert list(M.SEMANTIC) == [k for k, f in features.items() if f in ("genre", "domain")]


def test_a_spec_reads_every_pair_and_needs_no_exact_interval_or_prior_unless_asked():
    spec = M.Spec(M.tuned_minus_base_h1, "compare")
    assert (spec.share, spec.prior) == (False, False)
    assert all(spec.pairs(p) for p in PAIRS)


def test_nanmean_skips_none_and_nan():
    assert M.nanmean([None, 1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(M.nanmean([None, math.nan]))


def test_the_cells_interface_has_no_accuracy_of_its_own():
    with pytest.raises(NotImplementedError):
        M.Cells().acc("m", NEG, "baseline", "h1")


def test_a_recorder_records_only_the_cells_that_have_a_value():
    rec = M.Recorder(M.DictCells({("m", NEG, "baseline", "h1"): 60.0}))
    assert rec.acc("m", NEG, "baseline", "h1") == 60.0
    assert math.isnan(rec.acc("m", NEG, "baseline", "h2"))
    assert rec.read == [("m", NEG, "baseline", "h1")]


# ------------------------------------------------------------------------------------------------ our cells


def test_accuracy_is_the_mean_over_prompt_sets_of_each_sets_share():
    # set 0 answers all four items, two by h1 (50 %); set 1 only items 0 and 1, both by h1 (100 %):
    # (50 + 100) / 2 = 75, not the pooled 4/6 = 66.7 or the mean over items of their sets' mean (50)
    recs = answers(NEG, "baseline", "1100", 0) + answers(NEG, "baseline", "11", 1)
    assert M.ItemCells({"m": recs}).acc("m", NEG, "baseline", "h1") == pytest.approx(75.0)


def test_a_cells_matrix_has_the_prompt_sets_in_sorted_order():
    recs = answers(NEG, "baseline", "0000", 2) + answers(NEG, "baseline", "1111", 0)
    m = M.ItemCells({"m": recs}).matrix("m", NEG, "baseline", "h1")
    assert m[:, 0].tolist() == [1.0] * 4  # set 0 answers by h1
    assert m[:, 1].tolist() == [0.0] * 4  # set 2 by h2


def test_a_resample_without_any_item_of_a_cell_reads_nan_quietly():
    recs = {"a": answers(NEG, "baseline", "1110"), "b": answers(NEG, "baseline", "11")}  # b: items 0 and 1 only
    boot = M.ItemCells(recs).resampled({NEG: [2, 3, 3, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(boot.acc("b", NEG, "baseline", "h1"))
    assert boot.acc("a", NEG, "baseline", "h1") == 50.0  # items 2 (h1) and 3 (h2), each twice


def test_pooled_share_counts_each_cell_once_and_skips_cells_without_answers():
    cells = M.ItemCells({"m": answers(NEG, "baseline", "1101")})
    key = ("m", NEG, "baseline", "h1")
    assert cells.pooled_share([key, ("m", NEG, "disambig-h1", "h1"), key, ("x", NEG, "baseline", "h1")]) == (3, 4)


def test_labels_before_calibration_need_every_answer_of_the_cell_to_carry_its_probabilities():
    some = answers(SA, "baseline", "1010")
    some[0]["probs"] = [0.2, 0.8]
    cells = M.ItemCells({"m": some + answers(NEG, "baseline", "1010")})
    assert cells.uncalibrated == {}
    assert M.constant_cells(cells, [("m", NEG, "baseline", "h1")]) == ["m baseline on nli_entailment_negation: "
                                                                         "4/4 answers '1'"]


# ---------------------------------------------------------------------------------------- constant classifiers


def _cell(preds: list) -> M.ItemCells:
    recs = [{"pair": NEG, "condition": "baseline", "set": 0, "uid": f"u{i}", "h1": 1, "h2": 0, "pred": p}
            for i, p in enumerate(preds)]
    return M.ItemCells({"m": recs})


def test_a_constant_classifier_covers_more_than_95_percent_of_its_answers():
    assert _cell([0] * 19 + [1]).constant("m", NEG, "baseline") is None  # exactly 95 %
    assert _cell([0] * 39 + [1]).constant("m", NEG, "baseline") == (0, 39, 40)  # 97.5 %, the lower label
    assert _cell([None] * 39 + [1]).constant("m", NEG, "baseline") == (None, 39, 40)  # no label, beside labels
    assert _cell([1] * 39 + [None]).constant("m", NEG, "baseline") == (1, 39, 40)
    assert _cell([0, 1]).constant("m", NEG, "disambig-h1") is None  # a cell without answers


def test_a_constant_cell_without_a_label_or_probabilities_says_so_without_calibration_counts():
    cells = _cell([None] * 20)
    assert M.constant_cells(cells, [("m", NEG, "baseline", "h2")]) == [
        "m baseline on nli_entailment_negation: 20/20 answers no label"]
    with_probs = [{"pair": NEG, "condition": "baseline", "set": 0, "uid": f"u{i}", "h1": 1, "h2": 0, "pred": None,
                   "probs": [0.5, 0.5]} for i in range(20)]
    assert M.constant_cells(M.ItemCells({"m": with_probs}), [("m", NEG, "baseline", "h1")]) == [
        "m baseline on nli_entailment_negation: 20/20 answers no label"]


def test_the_constant_note_shows_six_cells_by_default():
    six = [f"c{i}" for i in range(6)]
    assert M.constant_note(six, 9) == "constant classifier in 6 of 9 cells: c0; c1; c2; c3; c4; c5"
    assert M.constant_note(six + ["c6"], 9).endswith("; c4; c5; and 1 more")


# ------------------------------------------------------------------------------------------ the paper's tables


def _t45(*rows) -> pd.DataFrame:
    return pd.DataFrame([["4", "Davinci", *r] for r in rows], columns=T45)


def test_paper_cells_read_every_intervention_of_tables_4_and_5():
    df = _t45(["h2", "SA", "punctuation", "Verbalizers", "97.0", "3.0"],
              ["h2", "SA", "punctuation", "Explanation", "68.6", "31.4"],
              ["h1", "SA", "punctuation", "Instruction", " 80.5 ", ""])
    cells = M.paper_cells({"table4": df})
    assert cells.acc("Davinci", SA, "verbalizer-h2", "h2") == 3.0
    assert cells.acc("Davinci", SA, "explanation-h2", "h2") == 31.4
    assert cells.acc("Davinci", SA, "instruction-h1", "h1") == 80.5  # spaces around a number are read
    assert ("Davinci", SA, "instruction-h1", "h2") not in cells.values  # a blank cell is no value


def test_rows_of_no_pair_are_skipped_before_they_are_checked():
    df = _t45(["h2", "SA", "Aggregate", "Average", "x", "y"], ["h2", "SA", "punctuation", "Baseline", "98.3", " "])
    assert M.paper_cells({"table5": df}).values == {("Davinci", SA, "baseline", "h1"): 98.3}


@pytest.mark.parametrize("row, message", [
    (["h2", "SA", "punctuation", "Prompting", "1", "2"], "line 3: an intervention of "),
    (["h3", "SA", "punctuation", "Baseline", "1", "2"], "line 3: an intervention of "),
    (["h2", "SA", "punctuation", "Baseline", "N/A", "2"], "line 3: a number in h1_acc, got 'N/A'"),
], ids=["intervention", "target", "number"])
def test_a_bad_row_of_table_4_or_5_names_its_line(row, message):
    df = _t45(["h2", "SA", "punctuation", "DisAmbig", "73.1", "26.9"], row)
    with pytest.raises(DataError, match=r"^paper/icl_bias/table5.csv: record " + message):
        M.paper_cells({"table5": df})


def test_table2_changes_of_the_given_interventions_and_its_errors():
    t2 = pd.DataFrame([["2", "h1", "Davinci", "Baseline", "x", "39.5"], ["2", "h1", "Davinci", "Explanation", "x", "3.1"],
                       ["2", "h2", "Davinci", "Verbalizer", "x", "-1.5"]],
                      columns=["table", "steer_towards", "model", "intervention", "value_type", "value"])
    assert M.table2_changes(t2, M.INTERVENTIONS) == {("Davinci", "explanation", "h1"): 3.1,
                                                     ("Davinci", "verbalizer", "h2"): -1.5}
    assert M.table2_changes(t2, ("verbalizer",)) == {("Davinci", "verbalizer", "h2"): -1.5}
    with pytest.raises(DataError, match=r"^paper/icl_bias/table2.csv: record header: columns "):
        M.table2_changes(t2.drop(columns=["value"]), M.INTERVENTIONS)
    bad = t2.copy()
    bad.loc[2, "value"] = "n/a"
    with pytest.raises(DataError, match=r"^paper/icl_bias/table2.csv: record line 4: a number in value, got 'n/a'"):
        M.table2_changes(bad, M.INTERVENTIONS)
