"""wobble.studies.icl_bias.claims: what the mutation run (tests/tools/mutate.py) found untested — the claims as the
committed ledger shows them, which models and pairs each claim reads, the paper's effects and texts on the run's
pairs or all the paper's, the rows the paper's own numbers leave untestable, and findings()' wiring."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from wobble.report.claims import Measurement
from wobble.studies.icl_bias import claims as C
from wobble.studies.icl_bias.claims_measure import Spec
from wobble.studies.icl_bias.pairs import PAIRS

from test_icl_bias_claims import MODELS, NEG, QW, _config, _inputs, _two_models, paper_tables  # noqa: E402

RESULTS = Path(__file__).resolve().parents[3] / "results" / "icl_bias"
BY_ID = {c.id: c for c in C.CLAIMS}
#: The committed ledger's run: its pairs and interventions (results/icl_bias/findings.md's notes).
RUN_PAIRS = ["nli_entailment_negation", "sa_sentiment_punctuation", "comments_toxicity_length", "boolq_answer_qword"]
RUN_IVS = ("verbalizer", "instruction", "disambig")


def _ledger() -> list[dict]:
    return list(csv.DictReader((RESULTS / "findings.csv").open(encoding="utf-8")))


# ------------------------------------------------------------------------------------------ the declarations


def test_the_committed_ledger_shows_the_claims_as_declared():
    """results/icl_bias/findings.csv was rendered from these declarations: a claim's words, places, statistic,
    unit, precondition, direction and null there are the code's."""
    rows = _ledger()
    assert list(dict.fromkeys(r["claim"] for r in rows)) == list(BY_ID)
    declared = {c.id: {"study": c.study, "quote": c.quote, "section": c.section, "evidence": c.evidence,
                       "precondition": c.precondition, "unit_name": c.unit_name, "effect_definition": c.effect,
                       "unit": c.unit, "predicted_direction": str(c.direction), "null": f"{c.null:.4f}"}
                for c in C.CLAIMS}
    for r in rows:
        assert {k: r[k] for k in declared[r["claim"]]} == declared[r["claim"]]


def test_claims_directions_nulls_and_rows_per_model():
    assert all(c.study == "icl_bias" and c.evidence == "table" and c.min_items == 10 for c in C.CLAIMS)
    # "resists" and "hard to steer" predict a fall; every other claim a rise
    assert [c.id for c in C.CLAIMS if c.direction == -1] == ["strong_prior_resists_interventions",
                                                             "non_semantic_features_hard_to_steer"]
    assert {c.id: (c.null, c.unit, c.unit_name) for c in C.CLAIMS if c.null} == {
        "interventions_increase_intended_accuracy": (0.5, "share", "changes")}
    assert [c.id for c in C.CLAIMS if c.per_model] == ["sentiment_bias", "base_prefers_shallow_features",
                                                       "tuned_prefers_dataset_labels",
                                                       "base_disambig_beats_instruction",
                                                       "strong_prior_resists_interventions"]
    assert all(c.precondition.startswith("every cell the claim reads (model x pair x condition)") for c in C.CLAIMS)
    assert BY_ID["strong_prior_resists_interventions"].precondition == C.NOT_CONSTANT + C.PRIOR
    assert C.PRIOR.startswith("; and the model has the prior the claim is about: baseline h1-accuracy")
    assert [c.id for c in C.CLAIMS if c.paper_value == ""] == ["tuned_prefers_default_feature",
                                                               "interventions_increase_intended_accuracy",
                                                               "strong_prior_resists_interventions",
                                                               "non_semantic_features_hard_to_steer"]


def test_each_claim_reads_the_models_and_pairs_its_docstring_names():
    s = C.SPECS
    assert {k: (v.who, v.share, v.prior) for k, v in s.items()} == {
        "tuned_prefers_default_feature": ("compare", False, False),
        "sentiment_bias": ("both", True, False),
        "base_prefers_shallow_features": ("Davinci", True, False),
        "tuned_prefers_dataset_labels": ("Text-Davinci-002", True, False),
        "instructions_help_tuned_more": ("compare", False, False),
        "base_disambig_beats_instruction": ("Davinci", False, False),
        "strong_prior_resists_interventions": ("Text-Davinci-002", True, True),
        "non_semantic_features_hard_to_steer": ("all", False, False),
    }

    def chosen(cid):
        return [p for p in PAIRS if s[cid].pairs(p)]

    assert chosen("tuned_prefers_default_feature") == list(PAIRS)
    assert chosen("sentiment_bias") == ["sa_sentiment_domain", "sa_sentiment_length", "sa_sentiment_lexicon_food",
                                        "sa_sentiment_lexicon_nice", "sa_sentiment_punctuation",
                                        "sa_sentiment_uppercase"]
    nli_qa = [p for p in PAIRS if p.startswith(("nli_", "boolq_"))]
    assert chosen("base_prefers_shallow_features") == chosen("tuned_prefers_dataset_labels") == nli_qa
    # punctuation, contains word (the two lexicon pairs), capitalization: not the sentiment domain or length
    assert chosen("strong_prior_resists_interventions") == ["sa_sentiment_lexicon_food", "sa_sentiment_lexicon_nice",
                                                            "sa_sentiment_punctuation", "sa_sentiment_uppercase"]
    assert chosen("non_semantic_features_hard_to_steer") == [
        "nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele", "nli_entailment_length",
        "nli_entailment_overlap", "sa_sentiment_domain", "sa_sentiment_length", "comments_toxicity_length",
        "boolq_answer_length", "boolq_answer_overlap"]


# ------------------------------------------------------------------------------------------------ roles


def _spec(who: str) -> Spec:
    return Spec(lambda *a: 0.0, who)


def test_a_comparison_takes_the_first_stand_in_of_each_paper_model():
    models = {"t1": "Text-Davinci-002", "b1": "Davinci", "t2": "Text-Davinci-002", "b2": "Davinci"}
    assert C.roles(_spec("compare"), models) == [("t1 vs b1", {"base": "b1", "tuned": "t1"})]


@pytest.mark.parametrize("models", [{"b": "Davinci"}, {"t": "Text-Davinci-002"}, {}],
                         ids=["no tuned model", "no base model", "no model"])
def test_a_comparison_without_both_models_has_no_row(models):
    assert C.roles(_spec("compare"), models) == []


def test_a_claim_about_all_conditions_is_one_row_over_every_model():
    models = {"b": "Davinci", "t": "Text-Davinci-002", "x": "Davinci"}
    assert C.roles(_spec("all"), models) == [("b and t and x", {"b": "b", "t": "t", "x": "x"})]
    assert C.roles(_spec("all"), {}) == []


def test_a_per_model_claim_has_a_row_per_stand_in_of_its_paper_model():
    models = {"t": "Text-Davinci-002", "b1": "Davinci", "b2": "Davinci"}
    assert C.roles(_spec("Davinci"), models) == [("b1", {"model": "b1"}), ("b2", {"model": "b2"})]
    assert C.roles(_spec("Text-Davinci-002"), models) == [("t", {"model": "t"})]
    assert C.roles(_spec("both"), models) == [("t", {"model": "t"}), ("b1", {"model": "b1"}),
                                              ("b2", {"model": "b2"})]


# ------------------------------------------------------------------------------------------------ measure()


class _Stop(Exception):
    pass


def test_measure_bootstraps_1000_resamples_from_seed_0_by_default(monkeypatch):
    got = {}

    def fake(cells, pairs, n, seed):
        got.update(pairs=list(pairs), n=n, seed=seed)
        raise _Stop

    monkeypatch.setattr(C.M, "bootstrap_cells", fake)
    with pytest.raises(_Stop):
        C.measure(_two_models(), MODELS)
    assert got == {"pairs": [NEG, QW], "n": 1000, "seed": 0}


def test_measure_counts_only_the_interventions_of_the_run():
    got = C.measure(_two_models(), MODELS, n=20, seed=0, interventions=("instruction", "verbalizer"))
    count = got["interventions_increase_intended_accuracy"]
    # 2 models x instruction (the run has no verbalizer answers) x 2 targets
    assert (count.effect, count.n_items) == (1.0, 4)
    assert " instruction→" in count.diagnostics and " disambig→" not in count.diagnostics
    every = C.measure(_two_models(), MODELS, n=20, seed=0)["interventions_increase_intended_accuracy"]
    assert every.n_items == 8


# ------------------------------------------------------------------------------------------ the paper's effects


def test_the_papers_effects_and_texts_are_those_of_the_committed_ledger():
    eff, text = C.paper_effects(paper_tables(), RUN_PAIRS, RUN_IVS)
    rows = _ledger()
    assert set(eff) == set(text) == {r["claim"] for r in rows}
    for r in rows:
        assert text[r["claim"]] == r["paper"], r["claim"]
        assert eff[r["claim"]] == pytest.approx(float(r["paper_effect"]), abs=5e-5), r["claim"]
    assert text["interventions_increase_intended_accuracy"] == (
        "11 of 12 changes above 0 = 0.92 (Table 2, the run's interventions; 15 of 16 with all four)")


def test_without_the_claims_pairs_in_the_run_the_paper_effect_is_on_all_its_pairs():
    eff, text = C.paper_effects(paper_tables(), [NEG], RUN_IVS)
    # baseline h1 on the six sentiment pairs (the lexicon row counts for both lexicon pairs):
    # Davinci (56.1 + 98.4 + 95.5 + 95.5 + 98.3 + 92.0) / 6 = 89.3; Text-Davinci-002 584.1 / 6 = 97.35
    assert eff["sentiment_bias"] == pytest.approx(39.3)
    assert text["sentiment_bias"] == (
        "+39.30 on all the paper's pairs of the claim (the run has none of its cells), Tables 4-5: Davinci +39.30; "
        "Text-Davinci-002 +47.35; the weaker counts; " + BY_ID["sentiment_bias"].paper_value)
    assert text["base_prefers_shallow_features"].startswith("-8.10 on the run's pairs (nli_entailment_negation), ")


def test_a_claim_with_no_paper_cell_of_the_runs_interventions_has_no_paper_effect():
    eff, text = C.paper_effects(paper_tables(), RUN_PAIRS, ("verbalizer",))
    # instructions and disambiguating examples are the strong-prior claim's only interventions
    assert "strong_prior_resists_interventions" not in eff and "strong_prior_resists_interventions" not in text
    assert text["interventions_increase_intended_accuracy"].startswith("4 of 4 changes above 0 = 1.00")
    none, _ = C.paper_effects(paper_tables(), RUN_PAIRS, ())
    assert "interventions_increase_intended_accuracy" not in none  # no change to count
    assert "non_semantic_features_hard_to_steer" not in none  # no intervention to steer with


# ------------------------------------------------------------------------------------------ untestable rows


def _m(effect=4.0, note="2 pair(s): a, b"):
    return Measurement(effect, 1.25, 6.5, 40, note=note)


def test_rows_the_papers_own_numbers_pass_or_lack_are_kept_as_measured():
    measured = {"tuned_prefers_default_feature": _m(), "sentiment_bias": {"b": _m(), "t": None}}
    assert C.untestable(measured, {}) == measured
    assert C.untestable(measured, {"tuned_prefers_default_feature": 14.3, "sentiment_bias": 48.3}) == measured


def test_a_row_the_paper_itself_does_not_pass_is_blanked_with_ours_in_the_note():
    measured = {"tuned_prefers_default_feature": _m(),
                "sentiment_bias": {"b": _m(-2.5, "1 pair(s): x"), "t": None, "u": _m(None, "no pair")}}
    got = C.untestable(measured, {"tuned_prefers_default_feature": 0.0, "sentiment_bias": -3.0})
    row = got["tuned_prefers_default_feature"]
    assert (row.effect, row.ci_low, row.ci_high, row.n_items) == (None, None, None, 40)
    assert row.note == ("not testable on the run's pairs: the paper's own effect there (+0) gets 'inconclusive' "
                        "under the rule; ours +4 [1.25, 6.5] on 2 pair(s): a, b")
    b = got["sentiment_bias"]["b"]
    assert b.note == ("not testable on the run's pairs: the paper's own effect there (-3) gets 'contradicted' "
                      "under the rule; ours -2.5 [1.25, 6.5] on 1 pair(s): x")
    assert got["sentiment_bias"]["t"] is None
    assert got["sentiment_bias"]["u"] == _m(None, "no pair")  # nothing measured: nothing to blank
    assert measured["tuned_prefers_default_feature"].effect == 4.0  # the input is left as it was


# ------------------------------------------------------------------------------------------------ findings()


def test_findings_passes_the_configured_bootstrap_and_interventions_in_the_papers_order(tmp_path, monkeypatch):
    seen = {}
    real = C.measure

    def spy(by_model, paper_models, **kw):
        seen.update(kw, models=sorted(by_model), n_records=sum(len(v) for v in by_model.values()))
        return real(by_model, paper_models, **kw)

    monkeypatch.setattr(C, "measure", spy)
    config = _config()
    config["icl_bias"]["bootstrap"] = {"n": 30, "seed": 7}
    config["icl_bias"]["interventions"] = ["disambig", "verbalizer"]
    found = C.findings(_inputs(tmp_path, _two_models()), config)
    assert seen == {"n": 30, "seed": 7, "interventions": ["verbalizer", "disambig"], "models": ["b", "t"],
                    "n_records": 2 * 2 * (4 + 4 * 4)}
    assert found.title == "Claims ledger: icl_bias (Si et al. 2023)"
    assert "Interventions run: verbalizer, disambig (paper: verbalizer, instruction, explanation, disambig)." \
        in found.notes
    eff, text = C.paper_effects(paper_tables(), [NEG, QW], ["verbalizer", "disambig"])
    assert found.paper_effects == eff and found.paper_values == text
    by = {(r["claim"], r["model"]): r for r in found.rows()}
    assert by[("interventions_increase_intended_accuracy", "all")]["paper"].startswith("8 of 8 changes above 0")

