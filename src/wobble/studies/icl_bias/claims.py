"""The icl_bias study's headline claims (Si et al. 2023), declared for the measurement engine
(:mod:`wobble.report.engine`), and the unit tables they read.

Our models stand in for the paper's through ``icl_bias.paper_models`` (gemma-270m for Davinci, its
instruction-tuned finetune for Text-Davinci-002). A claim about one paper model's behaviour, or one that must hold
for each model ("across all conditions"), has a row per model standing in for it; a comparison of the two one
pooled row.

* **Unit**: the test item (a pair's items are what the paper samples, 1,200 per pair, §4.1), resampled by the
  engine; a row speaks of the run's pairs, which are fixed. An item is in one pair and carries its answers under
  every model, condition and prompt set (paired comparisons stay paired). **Demonstration draws** (prompt sets)
  are crossed with the items (every item is answered under every draw of a condition): where a kind of prompt
  set (plain, disambiguating) has two draws or more, the bootstrap resamples the draws too (the pigeonhole
  bootstrap of :class:`~.claims_measure.FrameCells`); with one draw, or where the interval is Hoeffding's over
  the items, the interval is conditional on the draws, and the row says so. "Most interventions help" counts
  the changes of Table 2 (model x intervention x target) whose own item-level interval decides their sign, so
  its unit is the change (:mod:`.claims_changes`).
* **Statistic** (points, :mod:`.claims_measure`): as the paper's tables — h-accuracy per cell, mean over the
  run's pairs, an intervention's effect the change of the intended accuracy averaged over towards h1 and h2.
  "Shallow" and "semantic" features have one definition (:data:`~.claims_measure.SHALLOW`,
  :data:`~.claims_measure.SEMANTIC`: genre / domain are semantic) for every claim that names them.
* **Gates** (:mod:`.claims_checks`), read in every cell (model x pair x condition) the statistic reads, every arm
  included: a constant
  classifier (one answer on more than 95 % of a cell's answers scores exactly 50 / 50 on the balanced test set
  whatever the model prefers); fewer than half the answers a label (a generated explanation that names none);
  fewer than 3 demonstration draws (the paper averages 3 prompt sets, §4.1: with fewer, the variance between
  draws is not measured; bias unknown); and, on the baseline arms of a change statistic only, a ceiling (the
  intended accuracy at 95 % or more leaves an intervention nothing to gain). A constant cell adds exactly the
  null to an "accuracy − 50" statistic (its failure biases toward the null); in a difference it can move either
  way (unknown). The count reads them on every change it classifies, the undecided ones included.
* **Preconditions**, read on the model's cells of the claim's pairs in the whole run (cells a precondition alone
  reads are not gate arms): "the model can use h1" (with disambiguating examples towards h1 the model answers
  by h1 on more than half the items of every pair, one-sided exact binomial over items) for the claims that
  read a preference for h1 or against it; "the sentiment prior" for the claim about it. The arm a precondition
  reads gets the constant check too (:class:`~.claims_checks.ArmConstant`): where it is a constant classifier
  the precondition is unmeasured there, and the row gated (bias unknown), not "not applicable".
* **The paper's effect**: the same statistic's point on the paper's Tables 4-5 cells of the pairs the run
  measured (each model's row its paper model's, where a row per model stands in for either), the count's on the
  changes recomputed from those cells. A claim's ``paper_value`` says where that number comes from and, in
  brackets, the paper's all-pairs figure as context; the ledger prints the number first
  (:func:`~.claims_report.paper_cell`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec, UnitTable
from wobble.report.intervals import Mean
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims_changes import count_frame, run_changes
from wobble.studies.icl_bias.claims_checks import (CHANGE, COUNT_GATES, EITHER_WAY, H1_ARM, NON_SEMANTIC, NULL_WARD,
                                                   PRIOR, PRIOR_ARM, can_use_h1)
from wobble.studies.icl_bias.claims_measure import BASE, INTERVENTIONS, TUNED, UNIT, CellStatistic
from wobble.studies.icl_bias.pairs import PAIRS

STUDY = "icl_bias"
#: The commit whose definitions these are (each claim's ledger section prints it; a re-render applies them).
FREEZE = "5e06572"
SA_LEXICAL = ("sa_sentiment_punctuation", "sa_sentiment_lexicon_food", "sa_sentiment_lexicon_nice",
              "sa_sentiment_uppercase")
COUNT = "interventions_increase_intended_accuracy"


@dataclass(frozen=True)
class Reads:
    """Which models and pairs a claim reads: ``who`` (a paper model's stand-ins, "both", "compare", "all")."""

    who: str
    pairs: Callable[[str], bool] = lambda key: True


def _code(*codes: str) -> Callable[[str], bool]:
    return lambda key: PAIRS[key].code in codes


def _cs(id, name, quote, section, paper, stat, who, **kw) -> ClaimSpec:
    roles = {"compare": "compare", "all": "all"}.get(who, "model")
    return ClaimSpec(STUDY, id, name, quote, section, paper, CellStatistic(stat, roles, description=kw.pop("d")),
                     unit=UNIT, scale="points", unit_attrs=("pair",), observation=("set",),
                     scope="pooled" if who in ("compare", "all") else "per_model", freeze=FREEZE, **kw)


CLAIMS: tuple[ClaimSpec, ...] = (
    _cs("tuned_prefers_default_feature", "tuned prefers the default feature",
        "the instruction-tuned InstructGPT model prefers the “default” task features over distractor features more "
        "often than the base GPT-3 model", "§7 (Conclusion); §4.2; Tables 4-5",
        "Tables 4-5 on the run's pairs [all pairs, Table 2 baseline h1: 59.1 − 39.5 = +19.6]",
        M.tuned_minus_base_h1, "compare", gates=(*EITHER_WAY, H1_ARM), preconditions=(can_use_h1("unknown"),),
        d="baseline h1-accuracy, tuned − base, mean over the run's pairs"),
    _cs("sentiment_bias", "sentiment bias", "both models generally show a strong preference to predict labels "
        "according to the sentiment of the sentence rather than other features", "§4.2; Figure 2(a); Tables 4-5",
        "Tables 4-5 on the run's SA pairs [all SA pairs, h1: Davinci 89.3, Text-Davinci-002 97.3]",
        M.baseline_minus_50("h1"), "both", gates=(*NULL_WARD, H1_ARM),
        preconditions=(can_use_h1("against the claim"),),
        d="baseline h1-accuracy − 50, mean over the run's sentiment pairs (each model's paper effect its paper "
          "model's); a preference above 50, not a 'strong' one"),
    _cs("base_prefers_shallow_features", "base prefers shallow features",
        "the Davinci model tends to prefer the shallow distractor features, such as lexical overlap",
        "§4.2; Figure 2(b, d); Table 4", "Table 4 on the run's NLI and QA shallow-feature pairs",
        M.baseline_minus_50("h2"), BASE, gates=(*NULL_WARD, H1_ARM), preconditions=(can_use_h1("toward the claim"),),
        d="baseline h2-accuracy − 50, mean over the run's NLI and QA pairs with a shallow feature (length, overlap, "
          "negation, question word, question structure; not genre)"),
    _cs("tuned_prefers_dataset_labels", "tuned prefers dataset labels",
        "while Text-Davinci-002 tends to prefer the semantic feature associated with the dataset—either the "
        "entailment relationship or the answer to the question", "§4.2; Figure 2(b, d); Table 5",
        "Table 5 on the run's NLI and QA pairs [all pairs: aggregate h1 NLI 66.1, QA 73.4]", M.baseline_minus_50("h1"),
        TUNED, gates=(*NULL_WARD, H1_ARM), preconditions=(can_use_h1("against the claim"),),
        d="baseline h1-accuracy − 50, mean over the run's NLI and QA pairs"),
    _cs("instructions_help_tuned_more", "instructions help the tuned model more",
        "For the Text-Davinci-002 model, instructions are much more effective", "§5.2; Tables 2, 4-5",
        "Tables 4-5 on the run's pairs [Table 2, all pairs: (12.2 + 24.2)/2 − (1.6 − 2.4)/2 = +18.6]",
        M.instruction_gap, "compare",
        gates=CHANGE, d="instruction effect (change of the intended accuracy, mean over the run's pairs, then "
                        "over towards h1 and h2), tuned − base; 'much' more is not tested"),
    ClaimSpec(STUDY, COUNT, "most interventions help",
              "Nearly all interventions increase the average h-accuracy, in many cases by a substantial amount",
              "§5.2; Table 2", "Tables 4-5 on the run's pairs, the share of the changes above 0 [Table 2, all pairs: "
              "15 of 16 above 0]",
              Mean("up", description="share of ups among the changes (model x the run's interventions x target; each "
                   "the change of the intended accuracy, mean over the run's pairs) whose own 95% interval over the "
                   "items excludes 0 (the others are counted neither way); null 0.5 tests 'most': 'nearly all' is "
                   "not testable on at most 16 changes, 'by a substantial amount' is not tested"),
              unit="change", null=0.5, min_units=8, scope="pooled",
              gates=COUNT_GATES, freeze=FREEZE),
    _cs("base_disambig_beats_instruction", "base: examples beat instructions",
        "When using non-instruction-tuned LLMs (e.g., Davinci), specifying feature preferences as instructions is "
        "not effective, instead adding explanations or disambiguating examples can be more effective",
        "§5.2 (takeaways); Table 4",
        "Table 4 on the run's pairs [Table 2, all pairs: (12.9 + 18.6)/2 − (1.6 − 2.4)/2 = +16.2]",
        M.disambig_minus_instruction, BASE, gates=CHANGE,
        d="disambiguation effect − instruction effect (each: change of the intended accuracy, mean over the run's "
          "pairs, then over towards h1 and h2); explanations are the other half of the sentence"),
    _cs("strong_prior_resists_interventions", "a strong prior resists steering",
        "the instruction-tuned model generalizes on the basis of sentiment despite adding instructions and even "
        "disambiguating evidence in favor of lexical features like punctuation", "§1; Table 5",
        "Table 5 on the run's lexical SA pairs [punctuation towards h2: instruction 15.6, disambig 2.0]",
        M.prior_resists, TUNED, direction=-1, gates=(*NULL_WARD, PRIOR_ARM), preconditions=(PRIOR,),
        d="steering towards the lexical feature (h2) with instructions and disambiguating examples: h2-accuracy − "
          "50, mean over those interventions (of the run) and the run's sentiment pairs with a lexical feature"),
    _cs("non_semantic_features_hard_to_steer", "non-semantic features are hard to steer",
        "Features not related to semantics, such as sentence lengths or overlap, are difficult to intervene across "
        "all conditions", "§5.2 (takeaways); Table 3; Tables 4-5",
        "Tables 4-5 on the run's pairs [Table 3, MNLI→h2: genre +1 to +67, length/overlap −20 to +27]",
        M.non_semantic_gap, "both", direction=-1, gates=NON_SEMANTIC,
        d="steering towards h2: change of h2-accuracy (mean over the run's interventions of the mean over pairs) "
          "on the shallow features − on the genre / domain features, per model ('across all conditions': each "
          "model); needs pairs of both kinds"),
)

READS: dict[str, Reads] = {
    "tuned_prefers_default_feature": Reads("compare"),
    "sentiment_bias": Reads("both", _code("SA")),
    "base_prefers_shallow_features": Reads(BASE, lambda key: PAIRS[key].code in ("NLI", "QA") and key in M.SHALLOW),
    "tuned_prefers_dataset_labels": Reads(TUNED, _code("NLI", "QA")),
    "instructions_help_tuned_more": Reads("compare"),
    COUNT: Reads("all"),
    "base_disambig_beats_instruction": Reads(BASE),
    "strong_prior_resists_interventions": Reads(TUNED, lambda key: key in SA_LEXICAL),
    "non_semantic_features_hard_to_steer": Reads("both", lambda key: key in M.SEMANTIC + M.SHALLOW),
}
#: What a row cannot say, printed in each of the claim's rows.
CAVEATS: dict[str, str] = {
    "sentiment_bias": "'strong' is not tested: the row tests a preference for sentiment above 50",
    "instructions_help_tuned_more": "'much' more effective is not tested: the row tests more effective",
    COUNT: "'nearly all' and 'by a substantial amount' are not tested: the row tests most",
}
#: The reason a row gives where the run has none of the pairs its statistic needs.
NOT_MEASURED = {"non_semantic_features_hard_to_steer": "not measured: no genre/domain pair in the run"}


def with_interventions(claims: Sequence[ClaimSpec], interventions: Sequence[str]) -> tuple[ClaimSpec, ...]:
    """The claims with the run's interventions in their statistics (a run without one measures without it)."""
    ivs = tuple(iv for iv in INTERVENTIONS if iv in interventions)
    return tuple(replace(c, statistic=replace(c.statistic, interventions=ivs))
                 if isinstance(c.statistic, CellStatistic) else c for c in claims)


def row_models(claim: ClaimSpec, paper_models: Mapping[str, str]) -> list[str]:
    """The models with a row of ``claim``: the stand-ins of its paper model ("both": every stand-in)."""
    who = READS[claim.id].who
    return [m for m, p in paper_models.items() if who in ("both", "compare", "all") or p == who]


def unit_tables(claims: Sequence[ClaimSpec], frame: pd.DataFrame, paper_models: Mapping[str, str], *,
                n_boot: int = 1000, seed: int = 0, changes: Sequence[Mapping] | None = None
                ) -> dict[str, UnitTable | None]:
    """Each claim's table: the answers of its models on its pairs, only in the cells its statistic reads, so the
    gates are read on every one of them and on no other (a precondition reads the whole run:
    :func:`~.claims_checks.bind`). The count's table: every change the run's count classifies (``changes``, :func:`~.claims_changes.run_changes`,
    else computed with ``n_boot`` resamples from ``seed``; :func:`~.claims_changes.count_frame`)."""
    out: dict[str, UnitTable | None] = {}
    for c in claims:
        if c.id == COUNT:
            if changes is None:
                changes = run_changes(frame, run_interventions(claims), n_boot=n_boot, seed=seed)
            out[c.id] = UnitTable(count_frame(changes), "change") if changes else None
            continue
        models = row_models(c, paper_models)
        sub = frame[frame["model"].isin(models) & frame["pair"].map(READS[c.id].pairs)]
        if c.id in NOT_MEASURED and not sub["pair"].isin(M.SEMANTIC).any():
            out[c.id] = None
            continue
        groups = [sub] if c.scope == "pooled" else [sub[sub["model"] == m] for m in models]
        keep = {k for g in groups if len(g) for k in c.statistic.read(g)}
        rows = sub[[k in keep for k in zip(sub["model"], sub["pair"], sub["condition"])]]
        out[c.id] = UnitTable(rows.reset_index(drop=True), UNIT) if len(rows) else None
    return out


def run_interventions(claims: Sequence[ClaimSpec]) -> tuple[str, ...]:
    """The run's interventions, as the claims' statistics carry them."""
    return next(c.statistic.interventions for c in claims if isinstance(c.statistic, CellStatistic))
