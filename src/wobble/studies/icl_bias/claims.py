"""The icl_bias study's headline claims (Si et al. 2023) and how each is measured.

Our models stand in for the paper's through ``icl_bias.paper_models`` (e.g. gemma-270m for Davinci, its
instruction-tuned finetune for Text-Davinci-002). A claim about one model's behaviour gets a row per model that
stands in for that paper model ("both models": every model); a comparison of the two, and a claim about all
conditions, one row. Cells, statistics, bootstrap and how each claim is measured (:class:`~.claims_measure.Spec`):
:mod:`.claims_measure`; one row's measurement, one claim's paper effect and the ledger's notes: :mod:`.claims_report`.

Pre-registered before any run (with the verdict rule of :mod:`wobble.report.claims`). Per claim, the statistic
(points; "effect" = change of the intended feature's accuracy vs the baseline, mean over the run's pairs, then
over towards h1 and h2, as Table 2), direction, null:

* ``tuned_prefers_default_feature`` (§7): baseline h1-accuracy, tuned − base, mean over pairs; > 0.
* ``sentiment_bias`` (§4.2, per model): baseline h1-accuracy − 50 on the sentiment pairs; > 0 (the paper's
  effect: the weaker of its two models).
* ``base_prefers_shallow_features`` (§4.2, Davinci's stand-ins): baseline h2-accuracy − 50 on the NLI and QA
  pairs; > 0.
* ``tuned_prefers_dataset_labels`` (§4.2, Text-Davinci-002's stand-ins): baseline h1-accuracy − 50 there; > 0.
* ``instructions_help_tuned_more`` (§5.2): instruction effect, tuned − base; > 0.
* ``interventions_increase_intended_accuracy`` (§5.2): share of the changes (model x intervention x target, each a
  Table 2 cell) above 0; > 0.5, i.e. "most", weaker than "nearly all" (the paper's 11 of 12 on the run's
  interventions is shown beside ours); unit: changes, Clopper-Pearson interval.
* ``base_disambig_beats_instruction`` (§5.2, Davinci's stand-ins): disambiguation effect − instruction effect; > 0.
* ``strong_prior_resists_interventions`` (§1, Text-Davinci-002's stand-ins): on the sentiment pairs with a lexical
  feature, steering towards it with instructions and disambiguating examples, h2-accuracy − 50; < 0.
* ``non_semantic_features_hard_to_steer`` (§5.2): steering towards h2, change of h2-accuracy on length / overlap
  features − on genre / domain features, mean over interventions and models; < 0.

Common to all:

* **the paper's effect**: the same statistic on the paper's Tables 4-5 cells of the run's pairs and interventions
  (the count: Table 2's changes of the run's interventions); where the run has none of a claim's cells, on all
  the paper's pairs, and the row says so. Where the paper's own effect on the run's pairs does not pass the
  rule, the claim is not testable there: the row reports ours in its note, not as a verdict.
* **interval**: a percentile bootstrap over test items, each pair's items resampled on their own (pairs fixed:
  a row speaks of the run's pairs, which the notes list); where a share's bootstrap has no spread, the exact
  binomial (Clopper-Pearson) interval of the pooled answers.
* **precondition**: each cell the statistic reads (model x pair x condition, prompt sets pooled) comes from a
  non-constant classifier: no answer covers more than 95 % of the cell's answers (a constant classifier scores
  50 / 50 on the balanced test set whatever it "prefers"). A constant cell makes the claim not applicable to the
  row's model(s); the row names the cells and their labels before calibration. The strong-prior claim also
  needs the prior it is about: baseline h1-accuracy on its pairs above 50 % (one-sided exact binomial over the
  answers, p < 0.05).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from wobble.report.claims import Claim, Measurement, paper_verdict
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims_measure import BASE, INTERVENTIONS, TUNED, Spec
from wobble.studies.icl_bias.claims_report import measure_count, measure_one, notes, ordered_pairs, paper_one
from wobble.studies.icl_bias.pairs import PAIRS

STUDY = "icl_bias"
NOT_CONSTANT = ("every cell the claim reads (model x pair x condition) comes from a non-constant classifier: no "
                "answer on more than 95% of the cell's answers (a constant classifier scores 50/50 on the balanced "
                "test set whatever it prefers)")
PRIOR = ("; and the model has the prior the claim is about: baseline h1-accuracy on the claim's pairs above 50% "
         "(one-sided exact binomial over the answers, p < 0.05)")
SA_LEXICAL = ("sa_sentiment_punctuation", "sa_sentiment_lexicon_food", "sa_sentiment_lexicon_nice",
              "sa_sentiment_uppercase")

CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "tuned_prefers_default_feature",
          "the instruction-tuned InstructGPT model prefers the “default” task features over distractor features more "
          "often than the base GPT-3 model", "§7 (Conclusion); §4.2; Tables 4-5", "",
          "baseline h1-accuracy, tuned − base, mean over the run's pairs", precondition=NOT_CONSTANT),
    Claim(STUDY, "sentiment_bias",
          "both models generally show a strong preference to predict labels according to the sentiment of the "
          "sentence rather than other features", "§4.2; Figure 2(a); Tables 4-5",
          "on all its sentiment pairs: aggregates Davinci 89.3, Text-Davinci-002 97.3",
          "baseline h1-accuracy − 50, mean over the run's sentiment pairs (the paper's: the weaker of its two "
          "models)", precondition=NOT_CONSTANT, per_model=True),
    Claim(STUDY, "base_prefers_shallow_features",
          "the Davinci model tends to prefer the shallow distractor features, such as lexical overlap",
          "§4.2; Figure 2(b, d); Table 4",
          "on all its NLI and QA pairs +15.0 (aggregates NLI 68.1, QA 61.8)",
          "baseline h2-accuracy − 50, mean over the run's NLI and QA pairs (every distractor there is shallow: "
          "the paper names overlap; the run's pairs may have others, and on them the paper's own effect can be "
          "far smaller than on its aggregates)", precondition=NOT_CONSTANT, per_model=True),
    Claim(STUDY, "tuned_prefers_dataset_labels",
          "while Text-Davinci-002 tends to prefer the semantic feature associated with the dataset—either the "
          "entailment relationship or the answer to the question", "§4.2; Figure 2(b, d); Table 5",
          "on all its NLI and QA pairs: aggregates NLI 66.1, QA 73.4",
          "baseline h1-accuracy − 50, mean over the run's NLI and QA pairs",
          precondition=NOT_CONSTANT, per_model=True),
    Claim(STUDY, "instructions_help_tuned_more",
          "For the Text-Davinci-002 model, instructions are much more effective", "§5.2; Tables 2, 4-5",
          "Table 2 over all pairs: (12.2 + 24.2)/2 − (1.6 − 2.4)/2 = +18.6",
          "instruction effect (change of the intended accuracy, mean over the run's pairs, then over towards h1 and "
          "h2), tuned − base", precondition=NOT_CONSTANT),
    Claim(STUDY, "interventions_increase_intended_accuracy",
          "Nearly all interventions increase the average h-accuracy, in many cases by a substantial amount",
          "§5.2; Table 2", "",
          "share of the changes (model x the run's interventions x target; each the change of the intended "
          "accuracy, mean over the run's pairs) above 0; null 0.5 tests 'most', weaker than 'nearly all'; 'by a "
          "substantial amount' is not tested", null=0.5, unit="share", unit_name="changes",
          precondition=NOT_CONSTANT),
    Claim(STUDY, "base_disambig_beats_instruction",
          "When using non-instruction-tuned LLMs (e.g., Davinci), specifying feature preferences as instructions is "
          "not effective, instead adding explanations or disambiguating examples can be more effective",
          "§5.2 (takeaways); Table 4",
          "Table 2 over all pairs: (12.9 + 18.6)/2 − (1.6 − 2.4)/2 = +16.2",
          "disambiguation effect − instruction effect (each: change of the intended accuracy, mean over the run's "
          "pairs, then over towards h1 and h2); explanations are the other half of the sentence",
          precondition=NOT_CONSTANT, per_model=True),
    Claim(STUDY, "strong_prior_resists_interventions",
          "the instruction-tuned model generalizes on the basis of sentiment despite adding instructions and even "
          "disambiguating evidence in favor of lexical features like punctuation", "§1; Table 5", "",
          "steering towards the lexical feature (h2) with instructions and disambiguating examples: h2-accuracy − 50, "
          "mean over those interventions (of the run) and the run's sentiment pairs with a lexical feature "
          "(punctuation, contains word, capitalization)", direction=-1, precondition=NOT_CONSTANT + PRIOR,
          per_model=True),
    Claim(STUDY, "non_semantic_features_hard_to_steer",
          "Features not related to semantics, such as sentence lengths or overlap, are difficult to intervene across "
          "all conditions", "§5.2 (takeaways); Table 3; Tables 4-5", "",
          "steering towards h2: change of h2-accuracy (mean over the run's interventions of the mean over pairs) on "
          "length and overlap features − on the semantic genre/domain features, mean over the models; needs pairs "
          "of both kinds. 'Across all conditions' is read as on average over models and interventions: in the "
          "paper's own Table 3, Davinci's instruction and disambiguation changes are larger on length/overlap "
          "than on genre", direction=-1, precondition=NOT_CONSTANT),
)


def _code(*codes: str) -> Callable[[str], bool]:
    return lambda key: PAIRS[key].code in codes


SPECS: dict[str, Spec] = {
    "tuned_prefers_default_feature": Spec(M.tuned_minus_base_h1, "compare"),
    "sentiment_bias": Spec(M.baseline_minus_50("h1"), "both", _code("SA"), share=True),
    "base_prefers_shallow_features": Spec(M.baseline_minus_50("h2"), BASE, _code("NLI", "QA"), share=True),
    "tuned_prefers_dataset_labels": Spec(M.baseline_minus_50("h1"), TUNED, _code("NLI", "QA"), share=True),
    "instructions_help_tuned_more": Spec(M.instruction_gap, "compare"),
    "base_disambig_beats_instruction": Spec(M.disambig_minus_instruction, BASE),
    "strong_prior_resists_interventions": Spec(M.prior_resists, TUNED, lambda key: key in SA_LEXICAL, share=True,
                                               prior=True),
    "non_semantic_features_hard_to_steer": Spec(M.non_semantic_gap, "all",
                                                lambda key: key in M.SEMANTIC + M.NOT_SEMANTIC),
}
COUNT = "interventions_increase_intended_accuracy"
PAPER_TABLES = ("table2", "table4", "table5")


def roles(spec: Spec, paper_models: Mapping[str, str]) -> list[tuple[str, dict[str, str]]]:
    """``[(row model, the statistic's models)]``: one per stand-in for a per-model claim, one for a comparison
    (none when a model it needs is missing)."""
    if spec.who == "compare":
        base = next((m for m, p in paper_models.items() if p == BASE), None)
        tuned = next((m for m, p in paper_models.items() if p == TUNED), None)
        return [] if base is None or tuned is None else [(f"{tuned} vs {base}", {"base": base, "tuned": tuned})]
    if spec.who == "all":
        return [(" and ".join(paper_models), {m: m for m in paper_models})] if paper_models else []
    return [(m, {"model": m}) for m, p in paper_models.items() if spec.who == "both" or p == spec.who]


def measure(records_by_model: Mapping[str, Sequence[Mapping]], paper_models: Mapping[str, str], *, n: int = 1000,
            seed: int = 0, interventions: Sequence[str] = INTERVENTIONS) -> dict[str, Any]:
    """Every claim's measurement (``{model: Measurement}`` for a per-model claim) from each model's score
    records (``paper_models``: our key -> paper model; ``interventions``: those the run has)."""
    records = {m: records_by_model.get(m, []) for m in paper_models}
    cells = M.ItemCells(records)
    boots = M.bootstrap_cells(cells, cells.pairs, n, seed)
    ivs = [iv for iv in INTERVENTIONS if iv in interventions]
    out: dict[str, Any] = {}
    for c in CLAIMS:
        if c.id == COUNT:
            out[c.id] = measure_count(cells, boots, list(paper_models), ivs)
            continue
        spec = SPECS[c.id]
        pairs = [p for p in cells.pairs if spec.pairs(p)]
        got = {row: measure_one(spec, cells, boots, models, pairs, ivs) for row, models in roles(spec, paper_models)}
        if c.per_model:
            out[c.id] = got
        else:  # one pooled row: its note names the models
            out[c.id] = next((replace(m, note=f"{row}: {m.note}") for row, m in got.items()), None)
    return out


def paper_effects(tables: Mapping[str, Any], pairs: Sequence[str],
                  interventions: Sequence[str]) -> tuple[dict[str, float], dict[str, str]]:
    """``(effects, texts)``: each claim's paper effect by its own statistic on the paper's cells of the run's
    ``pairs`` and ``interventions`` (Tables 4-5; the count from Table 2), on all the paper's pairs where the run
    has none of the claim's; ``texts`` say which."""
    cells = M.paper_cells({t: tables[t] for t in ("table4", "table5")})
    ivs = [iv for iv in INTERVENTIONS if iv in interventions]
    effects: dict[str, float] = {}
    texts: dict[str, str] = {}
    for c in CLAIMS:
        if c.id == COUNT:
            k, n = M.share_positive(M.table2_changes(tables["table2"], ivs).values())
            k4, n4 = M.share_positive(M.table2_changes(tables["table2"], INTERVENTIONS).values())
            if n:
                effects[c.id] = k / n
                texts[c.id] = (f"{k} of {n} changes above 0 = {k / n:.2f} (Table 2, the run's interventions; "
                               f"{k4} of {n4} with all four)")
            continue
        spec = SPECS[c.id]
        run = [p for p in ordered_pairs(pairs) if spec.pairs(p)]
        value, shown = paper_one(c, spec, cells, run, ivs)
        where = f"on the run's pairs ({', '.join(run)})"
        if math.isnan(value):
            value, shown = paper_one(c, spec, cells, [p for p in PAIRS if spec.pairs(p)], ivs)
            where = "on all the paper's pairs of the claim (the run has none of its cells)"
        if not math.isnan(value):
            effects[c.id] = value
            texts[c.id] = (f"{value:+.2f} {where}, Tables 4-5" + (f": {shown}" if shown else "")
                           + (f"; {c.paper_value}" if c.paper_value else ""))
    return effects, texts


def untestable(measured: Mapping[str, Any], effects: Mapping[str, float]) -> dict[str, Any]:
    """``measured`` where every claim the paper's own numbers do not show on the run's pairs is reported as not
    testable there (ours kept in the note): a row cannot test on pairs where the paper itself has no effect."""
    out = dict(measured)
    for c in CLAIMS:
        own = paper_verdict(c, effects.get(c.id))
        if own in (None, "reproduced"):
            continue
        why = (f"not testable on the run's pairs: the paper's own effect there ({effects[c.id]:+.3g}) gets "
               f"'{own}' under the rule")

        def blank(m: Measurement | None) -> Measurement | None:
            if m is None or m.effect is None:
                return m
            return replace(m, effect=None, ci_low=None, ci_high=None,
                           note=f"{why}; ours {m.effect:+.3g} [{m.ci_low:.3g}, {m.ci_high:.3g}] on {m.note}")

        got = out.get(c.id)
        out[c.id] = {k: blank(v) for k, v in got.items()} if isinstance(got, dict) else blank(got)
    return out


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``): per-item scores grouped by model, the paper's
    effects from Tables 2, 4 and 5."""
    from wobble.io import read_jsonl
    from wobble.report.cells import read_paper
    from wobble.report.claims import Findings
    from wobble.studies.icl_bias.layout import run_pairs

    sec = config[STUDY]
    paper_models, boot = dict(sec["paper_models"]), dict(sec["bootstrap"])
    by_model: dict[str, list] = {m: [] for m in paper_models}
    for path in inputs["scores"]:
        records = list(read_jsonl(path))
        M.check_records(path, records)
        by_model.setdefault(Path(path).parent.name, []).extend(records)
    ivs = [iv for iv in INTERVENTIONS if iv in sec["interventions"]]
    measured = measure(by_model, paper_models, n=boot["n"], seed=boot["seed"], interventions=ivs)
    tables = {t: read_paper(inputs[f"paper_{t}"]) for t in PAPER_TABLES}
    pairs = ordered_pairs(run_pairs(sec))
    effects, texts = paper_effects(tables, pairs, ivs)
    return Findings(f"Claims ledger: {STUDY} (Si et al. 2023)", CLAIMS, untestable(measured, effects),
                    paper_values=texts,
                    notes=notes(paper_models, pairs, ivs), paper_effects=effects)
