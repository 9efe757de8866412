"""icl_bias claims on the measurement engine: the statistics and the Hoeffding interval hand-computed on tiny
made-up tables, the unit (items, changes), and the constant-classifier gate read in every cell the claim reads (a
gate read on the wrong arm changes the row)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.report.engine import UnitTable, measure_claim
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims import CLAIMS, unit_tables, with_interventions
from wobble.studies.icl_bias.claims_changes import count_frame, decided_change_frame, run_changes
from wobble.studies.icl_bias.claims_checks import item_binomial
from wobble.studies.icl_bias.claims_measure import INTERVENTIONS
from wobble.studies.icl_bias.claims_report import measure
from wobble.studies.icl_bias.pairs import PAIRS

from icl_bias_claims_records import MODELS, NEG, QW, SA, answers, drawn, frame, rows_by_id


GENDER = "comments_toxicity_gender"


BY_ID = {c.id: c for c in CLAIMS}


# ---------------------------------------------------------------------------------------------- statistics

def test_an_effect_averages_pairs_per_target_then_the_two_targets():
    cells = M.DictCells({
        ("m", NEG, "baseline", "h1"): 60, ("m", NEG, "instruction-h1", "h1"): 70,  # +10
        ("m", NEG, "baseline", "h2"): 40, ("m", NEG, "instruction-h2", "h2"): 60,  # +20
        ("m", SA, "baseline", "h2"): 50, ("m", SA, "instruction-h2", "h2"): 40,  # -10, no h1 half (as the paper's)
    })
    # towards h1: +10 (NLI only); towards h2: (20 - 10) / 2 = 5; effect (10 + 5) / 2 = 7.5
    assert M.effect(cells, "m", "instruction", [NEG, SA]) == pytest.approx(7.5)
    assert math.isnan(M.target_change(cells, "m", "verbalizer", "h1", [NEG, SA]))


def test_claim_statistics_hand_computed_on_made_up_cells():
    c = M.DictCells({
        ("b", NEG, "baseline", "h1"): 40, ("t", NEG, "baseline", "h1"): 70,
        ("b", QW, "baseline", "h1"): 30, ("t", QW, "baseline", "h1"): 80,
        ("b", NEG, "baseline", "h2"): 60, ("b", QW, "baseline", "h2"): 70,
        ("t", SA, "instruction-h2", "h2"): 20, ("t", SA, "disambig-h2", "h2"): 10,
        ("t", SA, "verbalizer-h2", "h2"): 90,
    })
    assert M.tuned_minus_base_h1(c, {"base": "b", "tuned": "t"}, [NEG, QW], ()) == pytest.approx(40)  # (30 + 50) / 2
    assert M.baseline_minus_50("h2")(c, {"model": "b"}, [NEG, QW], ()) == pytest.approx(15)  # (60 + 70) / 2 - 50
    # instructions and disambiguating examples only: (20 + 10) / 2 - 50 = -35 (the verbalizer's 90 is not read)
    assert M.prior_resists(c, {"model": "t"}, [SA], INTERVENTIONS) == pytest.approx(-35)
    assert M.prior_resists(c, {"model": "t"}, [SA], ("verbalizer", "instruction")) == pytest.approx(-30)


def test_non_semantic_gap_compares_the_shallow_features_with_genre_and_domain_only():
    c = M.DictCells({
        ("m", "sa_sentiment_domain", "baseline", "h2"): 40, ("m", "sa_sentiment_domain", "verbalizer-h2", "h2"): 80,
        ("m", "nli_entailment_length", "baseline", "h2"): 50, ("m", "nli_entailment_length", "verbalizer-h2", "h2"): 60,
        ("m", "comments_toxicity_length", "baseline", "h2"): 50,
        ("m", "comments_toxicity_length", "verbalizer-h2", "h2"): 40,
        ("m", GENDER, "baseline", "h2"): 0, ("m", GENDER, "verbalizer-h2", "h2"): 100,  # in neither class: not read
        ("m", NEG, "baseline", "h2"): 40, ("m", NEG, "verbalizer-h2", "h2"): 70,  # negation words: shallow
    })
    pairs = ["sa_sentiment_domain", "nli_entailment_length", "comments_toxicity_length", NEG, GENDER]
    # shallow: (10 - 10 + 30) / 3 = 10; semantic: 40 -> -30
    assert M.non_semantic_gap(c, {"m": "m"}, pairs, ("verbalizer",)) == pytest.approx(-30)
    assert math.isnan(M.non_semantic_gap(c, {"m": "m"}, pairs[1:], ("verbalizer",)))  # no semantic pair


def test_frame_cells_average_prompt_sets_per_item_and_resample_items():
    recs = answers(NEG, "baseline", "1100", 0) + answers(NEG, "baseline", "1111", 1)
    cells = M.FrameCells(M.item_frame({"b": recs}, MODELS))
    # items 0, 1: h1 in both sets; items 2, 3: in one of two -> (1 + 1 + .5 + .5) / 4 = 75 %
    assert cells.acc("b", NEG, "baseline", "h1") == pytest.approx(75)
    counts = np.array([[2, 2, 0, 0], [0, 0, 2, 2], [1, 1, 1, 1]], dtype=float)
    boot = M.FrameCells(M.item_frame({"b": recs}, MODELS), counts=counts)
    assert boot.acc("b", NEG, "baseline", "h1") == pytest.approx([100, 50, 75])


def test_the_hoeffding_interval_over_items_by_hand():
    # 20 sentiment items answered by h1 in the baseline: 100 % every resample, no spread -> Hoeffding: the one
    # cell moves the statistic by 100 / 20 = 5 points per item; half = sqrt(ln(40) / 2 * 20 * 5**2) = 30.4
    # (3 prompt sets answering alike; the model can use h1: disambig→h1 by h1 on 20 of 20 items)
    recs = {"t": drawn(SA, "baseline", "1" * 20) + drawn(SA, "disambig-h1", "1" * 20)}
    row = measure(M.item_frame(recs, {"t": "Text-Davinci-002"}), {"t": "Text-Davinci-002"}, ())[1]
    half = math.sqrt(math.log(40) / 2 * 20 * 25)
    assert row["row_id"] == "ib-02-t" and row["effect"] == pytest.approx(50)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((50 - half, 50 + half)) and round(half, 1) == 30.4
    assert row["interval"].startswith("Hoeffding over items") and row["verdict"] == "reproduced"
    assert "conditional on 3 demonstration draws (prompt sets)" in row["note"]
    # a difference of two cells: each item reaches 5 + 5 = 10 points
    st = BY_ID["base_disambig_beats_instruction"].statistic
    two = M.item_frame({"b": answers(NEG, "disambig-h1", "1" * 20) + answers(NEG, "instruction-h1", "1" * 20)
                        + answers(NEG, "baseline", "1" * 20)}, MODELS)
    (lo, hi), how = st.exact(two, "item", 0.95)
    # disambig - instruction towards h1 only: (100 - 100) - (100 - 100) = 0; slopes 1/1 and 1/1 for the two
    # arms (the baseline's cancels): each item reaches 2 x 5 = 10
    assert (lo, hi) == pytest.approx((-math.sqrt(math.log(40) / 2 * 20 * 100), math.sqrt(math.log(40) / 2 * 2000)))


# -------------------------------------------------------------------------------------------- the engine rows

def test_rows_per_model_and_pooled_hand_computed():
    rows = rows_by_id(measure(frame(n=5), MODELS, ("instruction", "disambig"), n=200))
    assert list(rows) == ["ib-01-all", "ib-02-b", "ib-02-t", "ib-03-b", "ib-04-t", "ib-05-all", "ib-06-all",
                          "ib-07-b", "ib-08-t", "ib-09-b", "ib-09-t"]
    assert rows["ib-01-all"]["effect"] == pytest.approx(25.0) and rows["ib-01-all"]["n_items"] == 40  # 75 - 50
    # instruction: base +25 both targets; tuned +25 towards h1, +75 towards h2: 50 - 25
    assert rows["ib-05-all"]["effect"] == pytest.approx(25.0)
    assert rows["ib-03-b"]["effect"] == pytest.approx(0.0) and rows["ib-04-t"]["effect"] == pytest.approx(25.0)
    assert rows["ib-07-b"]["effect"] == pytest.approx(0.0)
    assert rows["ib-02-b"]["reason"] == "not measured in this run"  # no sentiment pair: still a row
    assert rows["ib-09-b"]["reason"] == rows["ib-09-t"]["reason"] == "not measured: no genre/domain pair in the run"
    assert rows["ib-01-all"]["unit_name"] == "items" and rows["ib-06-all"]["unit_name"] == "changes"


def test_the_count_of_positive_changes_is_clopper_pearson_over_the_changes():
    from wobble.stats import exact_binomial_interval

    row = rows_by_id(measure(frame(n=5), MODELS, ("instruction", "disambig"), n=100))["ib-06-all"]
    # 2 models x 2 interventions x 2 targets = 8 changes, every one positive
    assert (row["effect"], row["n_items"]) == (1.0, 8)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(exact_binomial_interval(8, 8))
    assert "Clopper–Pearson over units: 8 changes" in row["interval"] and row["verdict"] == "reproduced"


def _gated_base():
    """Base model on two pairs x 40 items, 3 prompt sets: disambiguation +50 towards both targets, instructions 0;
    towards h1 on QW the disambiguating prompt answers '1' on every item (a constant classifier at 50 %, still
    above 25)."""
    recs = []
    for pair in (NEG, QW):
        recs += drawn(pair, "baseline", "1000" * 10)  # h1 25 %, h2 75 %
        recs += drawn(pair, "instruction-h1", "1000" * 10) + drawn(pair, "instruction-h2", "0111" * 10)
        recs += drawn(pair, "disambig-h2", "0000" * 10)
        recs += drawn(pair, "disambig-h1", ("10" if pair == QW else "1100") * 20)
    return M.item_frame({"b": recs}, MODELS)


def test_a_constant_cell_on_any_arm_gates_a_difference_and_reading_the_wrong_arm_would_not():
    claim = with_interventions(CLAIMS, ("instruction", "disambig"))[6]
    table = unit_tables([claim], _gated_base(), MODELS)[claim.id]
    row = measure_claim(claim, 7, table, ["b"], n_boot=200)[0]
    assert row["verdict"] == "inconclusive" and row["would_be"] == "reproduced"
    assert "constant classifier in b boolq_answer_qword disambig-h1" in row["reason"]
    assert "b boolq_answer_qword disambig-h1: constant classifier 1.00 ✗" in row["gate_figures"]
    # the gate read on the baseline arm only (the intervention arm's answers hidden from it): decided
    f = table.frame.copy()
    f.loc[f["condition"] == "disambig-h1", "answer"] = np.where(f.loc[f["condition"] == "disambig-h1"].index % 2,
                                                                "0", "1")
    blind = measure_claim(claim, 7, type(table)(f, "item"), ["b"], n_boot=200)[0]
    assert blind["verdict"] == "reproduced"


def test_a_constant_cell_cannot_explain_a_decided_accuracy_minus_50():
    # two sentiment pairs: one constant (50 %, adds exactly the null), one answered by sentiment on 40 of 40
    recs = drawn(SA, "baseline", "10" * 20) + drawn("sa_sentiment_length", "baseline", "1" * 40)
    recs += drawn(SA, "disambig-h1", "1" * 40) + drawn("sa_sentiment_length", "disambig-h1", "1" * 40)
    rows = measure(M.item_frame({"t": recs}, MODELS), {"t": "Text-Davinci-002"}, (), n=200)
    row = rows[1]
    assert row["effect"] == pytest.approx(25.0)  # (0 + 50) / 2
    assert row["verdict"] == "reproduced" and row["reason"].startswith("reproduced despite constant classifier")


def test_the_strong_prior_claim_needs_the_prior_and_its_failure_can_explain_contradicted():
    def run(baseline: str, steered: str):
        recs = drawn(SA, "baseline", baseline) + drawn(SA, "instruction-h2", steered)
        rows = measure(M.item_frame({"t": recs}, MODELS), {"t": "Text-Davinci-002"}, ("instruction",), n=200)
        return rows[7]

    held = run("1110" * 10, "1" * 35 + "0" * 5)  # h1 30/40 items: p = 0.00111; h2 under instructions 5/40 -> -37.5
    assert held["effect"] == pytest.approx(-37.5) and held["verdict"] == "reproduced"
    assert "sa_sentiment_punctuation 30/40 items, p = 0.00111" in held["precondition_note"]
    # the baseline is read by the precondition only: not a gate arm
    assert "baseline" not in held["gate_figures"] and "instruction-h2" in held["gate_figures"]
    weak = run("1100" * 10, "0" * 35 + "1" * 5)  # no prior (20/40), steered to h2 on 35/40: +37.5
    assert (weak["verdict"], weak["would_be"]) == ("not applicable", "contradicted")
    lone = run("1100" * 10, "1" * 35 + "0" * 5)  # no prior, yet it resists: decided despite the precondition
    assert lone["verdict"] == "reproduced" and lone["reason"].startswith("reproduced despite sentiment prior")
    flat = run("10" * 20, "1" * 35 + "0" * 5)  # a baseline answering '1' throughout: the prior is unmeasured
    assert flat["precondition_note"].startswith("sentiment prior: unmeasured (") and "sa_sentiment_punctuation " \
        "unmeasured (baseline predicts '1' on 120/120 answers after content-free calibration: a constant " \
        "classifier)" in flat["precondition_note"]
    assert (flat["verdict"], flat["would_be"]) == ("inconclusive", "reproduced")
    assert "sentiment prior arm constant in t sa_sentiment_punctuation instruction-h2 (unknown)" in flat["reason"]


def test_the_prior_counts_items_not_answers():
    # 40 items, 3 sets: items 0-23 by h1 in 2 of 3 sets, items 24-39 in 1 of 3. Answers: 24 x 2 + 16 = 64 of 120
    # by h1 (p = 0.27 over answers); items: 24 of 40 by the majority of their sets, p = P(X >= 24 | 40, .5) = 0.134
    recs = []
    for s_ in range(3):
        follow = "".join("1" if (i < 24 and s_ < 2) or (i >= 24 and s_ == 0) else "0" for i in range(40))
        recs += answers(SA, "baseline", follow, s_)
    k, n, p = item_binomial(M.item_frame({"t": recs}, MODELS), "t", SA, "baseline", "h1")
    assert (k, n) == (24, 40) and p == pytest.approx(0.1340, abs=5e-4)


def test_the_model_can_use_h1_per_pair_with_its_declared_bias():
    # base prefers h2 on NEG (baseline h2 75 %); disambig→h1 by h1 on 20/40 items (p = 0.56): it cannot use h1
    def base(dis: str):
        recs = drawn(NEG, "baseline", "1000" * 10) + drawn(NEG, "disambig-h1", dis)
        return rows_by_id(measure(M.item_frame({"b": recs}, MODELS), MODELS, ("disambig",), n=200))["ib-03-b"]

    cannot, can = base("1100" * 10), base("1110" * 10)  # 30/40: p = 0.00111
    assert cannot["effect"] == can["effect"] == pytest.approx(25.0)
    assert "nli_entailment_negation 20/40 items, p = 0.563 ✗" in cannot["precondition_note"]
    # its failure biases toward the claim ("prefers h2"): it can explain a reproduced row
    assert (cannot["verdict"], cannot["would_be"]) == ("not applicable", "reproduced")
    assert can["verdict"] == "reproduced" and "30/40 items, p = 0.00111" in can["precondition_note"]
    # the same failure under a claim it biases against (the tuned model prefers the label): not applicable only
    # when contradicted; the tuned model here prefers h1 (75 %) and is reproduced despite it
    recs = drawn(NEG, "baseline", "1110" * 10) + drawn(NEG, "disambig-h1", "1100" * 10)
    row = rows_by_id(measure(M.item_frame({"t": recs}, MODELS), MODELS, ("disambig",), n=200))["ib-04-t"]
    assert row["verdict"] == "reproduced" and row["reason"].startswith("reproduced despite can use h1")
    assert [p.bias for c in CLAIMS for p in c.preconditions if p.name == "can use h1"] == [
        "unknown", "against the claim", "toward the claim", "against the claim"]


def test_one_demonstration_draw_gates_every_claim_and_two_are_resampled():
    assert all(any(g.name == "demonstration draws" and g.bias == "unknown" for g in c.gates) for c in CLAIMS)
    one = rows_by_id(measure(frame(n=10, k=1), MODELS, ("instruction", "disambig"), n=200))
    row = one["ib-01-all"]  # tuned - base baseline h1: +25, decided by its interval alone
    assert (row["verdict"], row["would_be"]) == ("inconclusive", "reproduced")
    assert "demonstration draws: 1" in row["gate_figures"].replace("draws 1", "draws: 1")
    assert "conditional on 1 demonstration draw (prompt sets)" in row["note"]
    two = rows_by_id(measure(frame(n=10, k=2), MODELS, ("instruction", "disambig"), n=200))["ib-01-all"]
    assert two["interval"].startswith("cluster bootstrap") and "2 demonstration draws (prompt sets), resampled " \
        "with the items (crossed)" in two["note"]


def test_the_draws_are_resampled_crossed_with_the_items_by_hand():
    # 2 items x 2 sets of one cell: item a answers by h1 in set 0 only, item b in both
    recs = []
    for s_, out in ((0, {"a": 1, "b": 1}), (1, {"a": 0, "b": 1})):
        for u, ok in out.items():
            recs.append({"pair": NEG, "condition": "baseline", "set": s_, "uid": u, "h1": 1, "h2": 0,
                         "pred": 1 if ok else 0})
    f = M.item_frame({"b": recs}, MODELS)
    assert M.FrameCells(f).acc("b", NEG, "baseline", "h1") == pytest.approx(75)  # (0.5 + 1) / 2
    items = np.array([[1, 1], [2, 0], [0, 2]], dtype=float)
    sets = np.array([[1, 1], [2, 0], [0, 2]], dtype=float)
    # replicate 0: both, both -> 75; replicate 1: a twice, set 0 twice -> 100; replicate 2: b twice, set 1 -> 100
    got = M.FrameCells(f, counts=items, set_counts=sets).acc("b", NEG, "baseline", "h1")
    assert got == pytest.approx([75, 100, 100])
    keys = M.draw_keys(f)
    assert keys == [("plain", 0), ("plain", 1)] and M.draw_counts(keys[:1], 5, 0) is None
    counts = M.draw_counts(keys, 4, 0)
    assert counts.shape == (4, 2) and (counts.sum(axis=1) == 2).all()
    assert M.set_kind("disambig-h1") == "disambig" and M.set_kind("instruction-h2") == "plain"


def test_one_definition_of_shallow_excludes_genre_and_domain_in_both_claims():
    from wobble.studies.icl_bias.claims import READS

    assert set(M.SEMANTIC) == {"nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele", "sa_sentiment_domain"}
    assert not set(M.SEMANTIC) & set(M.SHALLOW) and {NEG, QW, SA, "boolq_answer_structure"} <= set(M.SHALLOW)
    assert GENDER not in M.SHALLOW + M.SEMANTIC  # identity mentions: neither
    shallow = READS["base_prefers_shallow_features"].pairs
    assert [k for k in PAIRS if shallow(k)] == [k for k in M.SHALLOW if PAIRS[k].code in ("NLI", "QA")]
    assert not shallow("nli_entailment_genre_gov_fic")
    steer = READS["non_semantic_features_hard_to_steer"].pairs
    assert [k for k in PAIRS if steer(k)] == [k for k in PAIRS if k in M.SHALLOW + M.SEMANTIC]


def _steer(model: str, sem_base: str, sem_steer: str, shallow_base: str, shallow_steer: str) -> list[dict]:
    """One model on the genre pair (semantic) and the length pair (shallow), 40 items, 3 sets: baseline and
    verbalizer towards h2 ('1' in ``follow``: by h1)."""
    g, ln = "nli_entailment_genre_gov_fic", "nli_entailment_length"
    return (drawn(g, "baseline", sem_base) + drawn(g, "verbalizer-h2", sem_steer)
            + drawn(ln, "baseline", shallow_base) + drawn(ln, "verbalizer-h2", shallow_steer))


def test_non_semantic_rows_are_per_model_with_a_ceiling_on_each_baseline_arm():
    # b: genre h2 50 -> 100 (+50), length 50 -> 60 (+10): gap -40, reproduced for b;
    # t: the genre baseline answers by h2 on 39 of 40 items (97.5 %: at the ceiling) and stays there (+0);
    #    length 50 -> 75 (+25): gap +25, contradicted by its interval, which the genre ceiling (against the
    #    claim) can explain
    recs = {"b": _steer("b", "1100" * 10, "0" * 40, "1100" * 10, "1000" * 4 + "1100" * 6),
            "t": _steer("t", "1" + "0" * 39, "1" + "0" * 39, "1100" * 10, "1000" * 10)}
    rows = rows_by_id(measure(M.item_frame(recs, MODELS), MODELS, ("verbalizer",), n=200))
    b, t = rows["ib-09-b"], rows["ib-09-t"]
    assert b["effect"] == pytest.approx(-40) and b["verdict"] == "reproduced"
    assert t["effect"] == pytest.approx(25) and t["would_be"] == "contradicted"
    assert t["verdict"] == "inconclusive" and t["reason"].startswith(
        "gated — the interval alone would say contradicted; failed: ceiling (genre/domain) in t "
        "nli_entailment_genre_gov_fic baseline (against the claim)")
    assert "t nli_entailment_genre_gov_fic baseline: " in t["gate_figures"] and "ceiling (genre/domain) 0.97 ✗" \
        in t["gate_figures"]
    # not read on the steered arm (at 97.5 % too: a change that worked is no ceiling) nor on the other kind's
    steered = next(x for x in t["gate_figures"].split("; ") if x.startswith("t nli_entailment_genre_gov_fic verb"))
    assert steered.endswith("demonstration draws 3.00, ceiling (genre/domain) –, ceiling (shallow) –")
    assert "t nli_entailment_length baseline: " in t["gate_figures"] and "ceiling (shallow) 0.50" in t["gate_figures"]
    biases = {g.name: g.bias for g in BY_ID["non_semantic_features_hard_to_steer"].gates}
    assert (biases["ceiling (genre/domain)"], biases["ceiling (shallow)"]) == ("against the claim", "toward the claim")


def test_a_ceiling_on_a_baseline_arm_gates_a_change_statistic_and_not_its_intervention_arm():
    # base: baseline h1 97.5 % on NEG (at the ceiling towards h1); disambig +/- as in _gated_base
    def run(baseline: str):
        recs = drawn(NEG, "baseline", baseline) + drawn(NEG, "instruction-h1", "1" * 40)
        recs += drawn(NEG, "instruction-h2", "1" * 40) + drawn(NEG, "disambig-h1", "1" * 40)
        recs += drawn(NEG, "disambig-h2", "0" * 40)
        return rows_by_id(measure(M.item_frame({"b": recs}, MODELS), MODELS, ("instruction", "disambig"),
                                  n=200))["ib-07-b"]

    high, mid = run("1" * 39 + "0"), run("1100" * 10)
    # disambig - instruction: towards h1 (100-97.5) - (100-97.5) = 0; towards h2 (100-2.5) - (0-2.5) = 100: +50
    assert high["effect"] == pytest.approx(50) and high["would_be"] == "reproduced"
    assert high["verdict"] == "inconclusive" and "ceiling in b nli_entailment_negation baseline" in high["reason"]
    # the intervention arms at 100 % are not read by the ceiling
    assert "b nli_entailment_negation disambig-h1: " in high["gate_figures"] and "ceiling –" in high["gate_figures"]
    assert mid["verdict"] == "reproduced" and "ceiling 0.50" in mid["gate_figures"]


def test_the_count_classifies_each_change_by_its_own_interval_and_counts_decided_ones():
    # base on NEG, 40 items, 3 sets, baseline h1 50 %: instruction towards h1 +50 (up), towards h2 -50 (down),
    # disambig towards h1 +2.5 (1 item of 40: its interval contains 0, undecided), towards h2 +50 (up)
    recs = drawn(NEG, "baseline", "10" * 20)
    recs += drawn(NEG, "instruction-h1", "1" * 40) + drawn(NEG, "instruction-h2", "1" * 40)
    recs += drawn(NEG, "disambig-h1", "1" + "10" * 19 + "1") + drawn(NEG, "disambig-h2", "0" * 40)
    f = M.item_frame({"b": recs}, MODELS)
    changes = {(c["intervention"], c["target"]): c for c in run_changes(f, ("instruction", "disambig"), n_boot=200)}
    assert {k: c["sign"] for k, c in changes.items()} == {
        ("instruction", "h1"): "up", ("instruction", "h2"): "down", ("disambig", "h1"): "undecided",
        ("disambig", "h2"): "up"}
    assert changes[("disambig", "h1")]["points"] == pytest.approx(2.5)
    decided = decided_change_frame(list(changes.values()))
    assert sorted(decided["up"]) == [0.0, 1.0, 1.0] and len(decided) == 3
    row = rows_by_id(measure(f, MODELS, ("instruction", "disambig"), n=200))["ib-06-all"]
    assert row["effect"] == pytest.approx(2 / 3) and row["n_items"] == 3  # 2 ups of 3 decided; < 8: inconclusive
    assert "2 up, 1 down, 1 undecided of 4 changes" in row["note"]
    assert "'nearly all' and 'by a substantial amount' are not tested" in row["note"]
    assert row["name"] == "most interventions help"


def test_rows_say_what_words_of_the_claim_they_do_not_test():
    rows = rows_by_id(measure(frame(n=5), MODELS, ("instruction", "disambig"), n=100))
    assert "'much' more effective is not tested" in rows["ib-05-all"]["note"]
    recs = {"t": drawn(SA, "baseline", "1" * 20) + drawn(SA, "disambig-h1", "1" * 20)}
    one = measure(M.item_frame(recs, {"t": "Text-Davinci-002"}), {"t": "Text-Davinci-002"}, ())[1]
    assert "'strong' is not tested" in one["note"]
    assert "one sentiment pair: the row cannot speak for 'rather than other features' generally" in one["note"]
    assert BY_ID["tuned_prefers_default_feature"].paper_value == (
        "Tables 4-5 on the run's pairs [all pairs, Table 2 baseline h1: 59.1 − 39.5 = +19.6]")


# ------------------------------------------------------------------------- the arm a precondition reads

def _shallow_base(dis_neg: str, dis_qw: str | None = None) -> dict:
    """ib-03 (base prefers shallow features): baseline h2 75 % on NEG (and QW) under 3 prompt sets, so the
    interval alone says reproduced (+25); the disambig→h1 arm, which only the precondition reads, in one set."""
    recs = drawn(NEG, "baseline", "1000" * 16) + answers(NEG, "disambig-h1", dis_neg)
    if dis_qw is not None:
        recs += drawn(QW, "baseline", "1000" * 16) + answers(QW, "disambig-h1", dis_qw)
    return rows_by_id(measure(M.item_frame({"b": recs}, MODELS), MODELS, ("disambig",), n=200))["ib-03-b"]


def test_a_constant_precondition_arm_leaves_the_precondition_unmeasured_and_the_row_gated_not_not_applicable():
    # disambig→h1 follows h1 on even items and h2 on odd ones: every one of the 64 items answers '1', which scores
    # exactly 32/64 by h1 (p = 0.55) whatever the model can do. Before: "can use h1: not met" and, its failure
    # biasing toward the claim, "not applicable — the interval alone would say reproduced".
    row = _shallow_base("10" * 32)
    assert row["effect"] == pytest.approx(25.0)  # 75 - 50
    assert (row["verdict"], row["would_be"]) == ("inconclusive", "reproduced")
    assert row["reason"].startswith("gated — the interval alone would say reproduced; failed: can use h1 arm "
                                    "constant in b nli_entailment_negation baseline (unknown)")
    assert row["reason"].endswith("; can use h1 unmeasured: disambig→h1 predicts '1' on 64/64 items in b "
                                  "nli_entailment_negation")
    assert row["precondition_note"] == (
        "can use h1: unmeasured (disambig→h1 h1-accuracy: nli_entailment_negation unmeasured (disambig→h1 predicts "
        "'1' on 64/64 items after content-free calibration: a constant classifier))")
    assert row["applicable"] and "can use h1 arm constant 1.00 ✗" in row["gate_figures"]
    # the arm by h1 on 48 of 64 items (p = P(X >= 48 | 64, 0.5) = 3.87e-05), answering '1', '0', '1', '1' (mode
    # share 0.75): measured and met
    met = _shallow_base("1110" * 16)
    assert met["verdict"] == "reproduced" and "can use h1 arm constant 0.75" in met["gate_figures"]
    assert "nli_entailment_negation 48/64 items, p = 3.87e-05" in met["precondition_note"]


def test_a_precondition_is_judged_on_its_measured_arms_and_gated_on_its_constant_ones():
    # NEG's arm constant (unmeasured), QW's measured: by h1 on 32/64 items (answers 1, 0, 0, 1: not constant) ->
    # not met where measured: not applicable (the measured failure explains reproduced), and gated on NEG too
    failing = _shallow_base("10" * 32, "1100" * 16)
    assert (failing["verdict"], failing["would_be"]) == ("not applicable", "reproduced")
    assert failing["precondition_note"].startswith("can use h1: not met where measured (")
    assert "boolq_answer_qword 32/64 items, p = 0.55 ✗" in failing["precondition_note"]
    assert "can use h1 arm constant in b nli_entailment_negation baseline (unknown)" in failing["reason"]
    # QW's arm by h1 on 48/64 items: met where measured, gated on NEG's constant arm
    held = _shallow_base("10" * 32, "1110" * 16)
    assert (held["verdict"], held["would_be"]) == ("inconclusive", "reproduced")
    assert held["precondition_note"].startswith("can use h1: met where measured (")
    assert "boolq_answer_qword baseline" not in held["reason"].split("; ")[0]


# ----------------------------------------------------------------------- the count's gates on every change

def test_the_counts_gates_are_read_on_the_undecided_changes_too():
    # baseline h1 50 % (answers 1, 0, 0, 1: not constant); instruction→h1 +50 (up), →h2 -50 (down), disambig→h2
    # +50 (up); disambig→h1 answers '1' on every item: h1 50 %, a change of 0 whose interval contains 0
    # (undecided), one of its two cells (disambig-h1, baseline) a constant classifier: constant share 0.5
    recs = drawn(NEG, "baseline", "1100" * 10)
    recs += drawn(NEG, "instruction-h1", "1" * 40) + drawn(NEG, "instruction-h2", "1" * 40)
    recs += drawn(NEG, "disambig-h1", "10" * 20) + drawn(NEG, "disambig-h2", "0" * 40)
    f = M.item_frame({"b": recs}, MODELS)
    changes = run_changes(f, ("instruction", "disambig"), n_boot=200)
    assert [c["sign"] for c in changes] == ["up", "down", "undecided", "up"]
    assert [c["constant"] for c in changes] == [0.0, 0.0, 0.5, 0.0]
    table = count_frame(changes)
    # the undecided change is a row of its own cell, no value, filed under the first decided change's unit id
    assert table["cell"].tolist() == ["b instruction→h1", "b instruction→h2", "b disambig→h2", "b disambig→h1"]
    assert table["change"].nunique() == 3 and math.isnan(table["up"].iloc[3])
    row = rows_by_id(measure(f, MODELS, ("instruction", "disambig"), n=200))["ib-06-all"]
    assert row["effect"] == pytest.approx(2 / 3) and row["n_items"] == 3  # still 2 ups of the 3 decided
    assert "b disambig→h1: constant classifier 0.50 ✗, ceiling 0.00, demonstration draws 3.00" in row["gate_figures"]
    assert row["reason"] == ("gated — the interval alone would say inconclusive; failed: constant classifier in b "
                             "disambig→h1 (unknown); 3 changes < 8 required")
    assert row["gates"].startswith("constant classifier: no constant classifier (one answer on more than 95% of a "
                                   "cell's answers) behind any change the count classifies, decided or not")
    # the gates read on the decided changes alone (the old table) would not see it
    count = BY_ID["interventions_increase_intended_accuracy"]
    old = measure_claim(count, 6, UnitTable(decided_change_frame(changes), "change"), ["all"], n_boot=200)[0]
    assert old["reason"] == "3 changes < 8 required" and "disambig→h1" not in old["gate_figures"]
