"""wobble.studies.icl_bias.claims_report: what the mutation run (tests/tools/mutate.py) found untested — one row's
measurement whole (interval and how it was made, the prior's test, answers without a label), the count of
positive changes with each change's own interval, the paper's effect and the cells shown for it, and the
ledger's notes as the committed ledger prints them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from wobble.report.claims import Claim, Measurement
from wobble.stats import exact_binomial_interval
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias import claims_report as R
from wobble.studies.icl_bias.claims import CLAIMS
from wobble.studies.icl_bias.claims_measure import BASE, TUNED, Spec

from test_icl_bias_claims import NEG, QW, SA, answers  # noqa: E402 (the same made-up score records)

RESULTS = Path(__file__).resolve().parents[3] / "results" / "icl_bias"
BY_ID = {c.id: c for c in CLAIMS}
BOOT = "bootstrap over test items within each pair (pairs fixed)"
EXACT = "exact binomial (Clopper-Pearson) over the pooled answers (the bootstrap has no spread)"
H1 = M.baseline_minus_50("h1")


def _one(spec: Spec, records: list[dict], pairs, models=None, interventions=(), n: int = 50) -> Measurement:
    cells = M.ItemCells({"m": records})
    boots = M.bootstrap_cells(cells, cells.pairs, n, 0)
    return R.measure_one(spec, cells, boots, models or {"model": "m"}, pairs, interventions)


def test_ordered_pairs_keeps_the_registrys_order_once_each():
    assert R.ordered_pairs([QW, SA, NEG, QW]) == [NEG, SA, QW]


# ---------------------------------------------------------------------------------------------- measure_one


def test_a_row_measured_on_two_pairs_carries_every_field():
    recs = answers(QW, "baseline", "11110000") + answers(NEG, "baseline", "1110")
    got = _one(Spec(H1, "both"), recs, [QW, NEG])
    # h1-accuracy: QW 4/8 = 50 %, NEG 3/4 = 75 %: mean 62.5 - 50
    assert got.effect == pytest.approx(12.5) and got.ci_low < got.ci_high
    assert (got.n_items, got.note, got.applicable, got.interval, got.diagnostics, got.degenerate) == (
        12, "2 pair(s): nli_entailment_negation, boolq_answer_qword", True, BOOT, "", False)
    assert got.precondition_note == "none of the 2 cells read is constant"


def test_a_row_with_no_cell_says_which_pairs_had_answers():
    recs = answers(NEG, "baseline", "1100")
    assert _one(Spec(H1, "both"), recs, [SA, QW]) == Measurement(
        None, None, None, 0, note="the run has no pair with every cell the claim reads (pairs with answers: "
        "sa_sentiment_punctuation, boolq_answer_qword)", precondition_note="not checked: no cell measured")
    assert _one(Spec(H1, "both"), recs, []).note.endswith("(pairs with answers: none of the claim)")


def test_a_share_without_spread_takes_the_exact_interval_of_the_pooled_answers():
    lo, hi = exact_binomial_interval(8, 8)  # 0.631, 1
    every = _one(Spec(H1, "both", share=True), answers(SA, "baseline", "11111111"), [SA])
    assert (every.ci_low, every.ci_high, every.interval) == (pytest.approx(100 * lo - 50), pytest.approx(50.0), EXACT)
    lo, hi = exact_binomial_interval(0, 8)  # 0, 0.369
    none = _one(Spec(H1, "both", share=True), answers(SA, "baseline", "00000000"), [SA])
    assert (none.effect, none.ci_low, none.ci_high) == (-50.0, -50.0, pytest.approx(100 * hi - 50))


def test_the_exact_interval_is_only_for_shares_and_only_without_spread():
    not_share = _one(Spec(H1, "both"), answers(SA, "baseline", "11111111"), [SA])
    assert (not_share.ci_low, not_share.ci_high, not_share.interval) == (50.0, 50.0, BOOT)
    spread = _one(Spec(H1, "both", share=True), answers(SA, "baseline", "11110000"), [SA])
    assert spread.interval == BOOT and spread.ci_low < 0 < spread.ci_high


def _prior_row(baseline: str) -> Measurement:
    recs = answers(SA, "baseline", baseline) + answers(SA, "instruction-h2", "11111110")
    return _one(Spec(M.prior_resists, TUNED, share=True, prior=True), recs, [SA], interventions=("instruction",))


def test_the_prior_is_tested_one_sided_on_the_baseline_h1_answers():
    held = _prior_row("11111111")
    assert held.applicable and held.precondition_note == (
        "none of the 1 cells read is constant; baseline h1-accuracy 8/8 = 100.0%, one-sided exact binomial "
        "p = 0.00391 against 50%")
    one = _prior_row("1")  # one baseline answer, by h1: 1/1, p = 0.5
    assert not one.applicable and one.precondition_note.endswith("1/1 = 100.0%, one-sided exact binomial p = 0.5 "
                                                                 "against 50%")
    without = _one(Spec(M.prior_resists, TUNED), answers(SA, "instruction-h2", "11111110"), [SA],
                   interventions=("instruction",))
    assert without.applicable and without.precondition_note == "none of the 1 cells read is constant"


def test_the_prior_is_not_tested_where_a_constant_cell_already_decides():
    recs = answers(SA, "baseline", "11111111") + answers(SA, "instruction-h2", "10101010")  # always '1'
    got = _one(Spec(M.prior_resists, TUNED, prior=True), recs, [SA], interventions=("instruction",))
    assert not got.applicable
    assert got.precondition_note == ("constant classifier in 1 of 1 cells: m instruction-h2 on "
                                     "sa_sentiment_punctuation: 8/8 answers '1'")


def test_answers_without_a_label_are_counted_in_the_diagnostics():
    recs = answers(NEG, "baseline", "11001100")
    recs[2]["pred"] = recs[5]["pred"] = None
    got = _one(Spec(H1, "both"), recs, [NEG])
    assert got.diagnostics == "2 of 8 answers carry no label (neither h1 nor h2)"
    assert got.effect == pytest.approx(37.5 - 50)  # items 0, 1, 4 follow h1; a missing answer is wrong


# -------------------------------------------------------------------------------------------- measure_count


def _count(interventions, models=("b",)):
    recs = (answers(NEG, "baseline", "1111") + answers(NEG, "instruction-h1", "1111")
            + answers(NEG, "instruction-h2", "0000"))
    cells = M.ItemCells({"b": recs})
    return R.measure_count(cells, M.bootstrap_cells(cells, cells.pairs, 30, 0), list(models), interventions)


def test_the_count_shows_each_change_with_its_own_interval():
    # towards h1: 100 -> 100 (0 in every resample); towards h2: 0 -> 100 (+100 in every resample)
    got = _count(["instruction", "disambig"])  # the run has no disambiguation answers: no change there
    lo, hi = exact_binomial_interval(1, 2)
    assert got == Measurement(
        0.5, lo, hi, 2, note="1 of 2 changes above 0", applicable=True,
        precondition_note="none of the 3 cells read is constant",
        interval="exact binomial (Clopper-Pearson) over the changes", population=8,
        diagnostics=f"1 of 2 changes have their own 95% interval ({BOOT}) above 0; b instruction→h1 +0.0 [0.0, 0.0]; "
                    "b instruction→h2 +100.0 [100.0, 100.0]")


def test_a_change_whose_own_interval_starts_just_above_zero_counts_as_above():
    # one item under 100 prompt sets: h1 in 0 of them at baseline, in 1 with instructions: +1 point in every resample
    recs = [r for s in range(100) for r in answers(NEG, "baseline", "0", s) + answers(NEG, "instruction-h1",
                                                                                       "1" if s == 0 else "0", s)]
    cells = M.ItemCells({"b": recs})
    got = R.measure_count(cells, M.bootstrap_cells(cells, cells.pairs, 20, 0), ["b"], ["instruction"])
    assert got.diagnostics == (f"1 of 1 changes have their own 95% interval ({BOOT}) above 0; "
                               "b instruction→h1 +1.0 [1.0, 1.0]")


def test_the_count_without_models_or_changes():
    assert _count(["instruction"], models=()) is None
    assert _count(["disambig"]) == Measurement(None, None, None, 0, note="no intervention change measured in this run")


# ------------------------------------------------------------------------------------------ the paper's effect


def test_the_papers_comparison_shows_the_four_cells_it_read():
    cells = M.DictCells({(TUNED, NEG, "baseline", "h1"): 70, (BASE, NEG, "baseline", "h1"): 40,
                         (TUNED, QW, "baseline", "h1"): 80, (BASE, QW, "baseline", "h1"): 30.5,
                         (TUNED, SA, "baseline", "h1"): 50, (BASE, SA, "baseline", "h1"): 50})
    spec = Spec(M.tuned_minus_base_h1, "compare")
    claim = BY_ID["tuned_prefers_default_feature"]
    assert R.paper_one(claim, spec, cells, [NEG, QW], ()) == (pytest.approx(39.75), (
        "Text-Davinci-002 baseline h1 nli_entailment_negation 70; Davinci baseline h1 nli_entailment_negation 40; "
        "Text-Davinci-002 baseline h1 boolq_answer_qword 80; Davinci baseline h1 boolq_answer_qword 30.5"))
    assert R.paper_one(claim, spec, cells, [NEG, QW, SA], ()) == (pytest.approx(26.5), "")  # six cells: none shown


def test_up_to_four_cells_are_shown_not_five():
    pairs = [NEG, QW, "nli_entailment_length", "nli_entailment_overlap", "boolq_answer_length"]
    cells = M.DictCells({(BASE, p, "baseline", "h2"): 60.0 for p in pairs})
    spec, claim = Spec(M.baseline_minus_50("h2"), BASE), BY_ID["base_prefers_shallow_features"]
    assert R.paper_one(claim, spec, cells, pairs, ()) == (10.0, "")
    assert R.paper_one(claim, spec, cells, pairs[:4], ())[1].count("; ") == 3


def test_a_claim_about_both_models_takes_the_weaker_one():
    cells = M.DictCells({(BASE, SA, "baseline", "h1"): 90.0, (TUNED, SA, "baseline", "h1"): 95.0})
    spec = Spec(H1, "both")
    assert R.paper_one(BY_ID["sentiment_bias"], spec, cells, [SA], ()) == (
        40.0, "Davinci +40.00; Text-Davinci-002 +45.00; the weaker counts")
    falls = Claim("icl_bias", "x", "q", "s", "", "e", direction=-1)
    assert R.paper_one(falls, spec, cells, [SA], ())[0] == 45.0  # a predicted fall: the larger is the weaker
    one = M.DictCells({(BASE, SA, "baseline", "h1"): 90.0})
    assert R.paper_one(BY_ID["sentiment_bias"], spec, one, [SA], ()) == (pytest.approx(math.nan, nan_ok=True), "")


def test_the_papers_claim_about_all_conditions_reads_both_models():
    genre, length = "sa_sentiment_domain", "sa_sentiment_length"
    cells = M.DictCells({(m, p, c, "h2"): v for m, (g0, g1, l0, l1) in {BASE: (40, 80, 50, 60), TUNED: (50, 70, 50, 50)}.items()
                         for p, c, v in ((genre, "baseline", g0), (genre, "verbalizer-h2", g1),
                                         (length, "baseline", l0), (length, "verbalizer-h2", l1))})
    spec = Spec(M.non_semantic_gap, "all")
    # Davinci: +10 - +40 = -30; Text-Davinci-002: 0 - +20 = -20; mean -25
    assert R.paper_one(BY_ID["non_semantic_features_hard_to_steer"], spec, cells, [genre, length],
                       ("verbalizer",))[0] == pytest.approx(-25.0)


# ------------------------------------------------------------------------------------------------ the notes


def test_the_notes_are_those_of_the_committed_ledger():
    pairs = ["nli_entailment_negation", "sa_sentiment_punctuation", "comments_toxicity_length", "boolq_answer_qword"]
    got = R.notes({"gemma-270m": BASE, "gemma-270m-ni": TUNED}, pairs, ("verbalizer", "instruction", "disambig"))
    md = (RESULTS / "findings.md").read_text(encoding="utf-8").splitlines()
    assert len(got) == 5 and all(f"* {n}" in md for n in got)
    assert R.notes({}, [], ())[0].startswith("Models standing in for the paper's: none (icl_bias.paper_models is "
                                             "empty). A claim")
