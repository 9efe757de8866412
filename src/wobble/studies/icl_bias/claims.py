"""The icl_bias study's headline claims (Si et al. 2023, §4.2, §5.2, §7) and how each is measured.

"base" is our model standing in for Davinci, "tuned" the one standing in for Text-Davinci-002
(``icl_bias.paper_models``). Every claim is a linear combination of per-pair accuracies (mean over
prompt sets, in %) of the baseline or an intervention, averaged over the pairs it names; each pair's test
items are resampled on their own, and an item brings its answers under every condition and model
(:func:`wobble.studies.icl_bias.metrics.mean_over_pairs`). The paper's value is the same combination of
its Table 2 / Table 4-5 cells.

Pre-registered before any run (with the verdict rule of :mod:`wobble.report.claims`):

* a pair counts when every term of the claim has answers for it;
* claims over "the interventions" use those the run has (``icl_bias.interventions``; the note lists them), the
  paper's value stays the paper's over its four;
* a measurement is **degenerate** when a model it uses gives the same label on more than 95 % of its
  baseline answers on the claim's pairs (a constant classifier scores 50 / 50 on the balanced test
  sets), or has no pair.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from wobble.report.claims import Claim, Measurement
from wobble.studies.icl_bias.metrics import mean_over_pairs
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.summary import PairScores

STUDY = "icl_bias"
CONSTANT_SHARE = 0.95
INTERVENTIONS = ("verbalizer", "instruction", "explanation", "disambig")


@dataclass(frozen=True)
class Term:
    """``weight`` x accuracy (%) of ``measure`` under ``condition`` for the model in ``role``."""

    weight: float
    role: str
    condition: str
    measure: str


@dataclass(frozen=True)
class Recipe:
    terms: tuple[Term, ...]
    codes: tuple[str, ...] = ("SA", "TC", "NLI", "QA")
    offset: float = 0.0
    pairs: tuple[str, ...] | None = None  # only these pairs (None: every pair of ``codes``)


def _effects(role: str, weight: float, interventions: Sequence[str]) -> tuple[Term, ...]:
    """Mean over interventions and both targets of (intervention - baseline) intended accuracy."""
    w = weight / (2 * len(interventions))
    return tuple(t for iv in interventions for tg in ("h1", "h2")
                 for t in (Term(w, role, f"{iv}-{tg}", tg), Term(-w, role, "baseline", tg)))


CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "tuned_prefers_default_feature",
          "the instruction-tuned InstructGPT model prefers the ‘default’ task features over distractor features more "
          "often than the base GPT-3 model", "§7, Table 2", "+19.6 (59.1 − 39.5)",
          "baseline h1-accuracy, tuned − base, mean over pairs"),
    Claim(STUDY, "sentiment_bias_base",
          "both models generally show a strong preference to predict labels according to the sentiment of the "
          "sentence rather than other features", "§4.2, Figure 2(a), Table 4", "+39.3 (89.3 − 50)",
          "base model: baseline h1-accuracy on the sentiment pairs − 50"),
    Claim(STUDY, "sentiment_bias_tuned",
          "both models generally show a strong preference to predict labels according to the sentiment of the "
          "sentence rather than other features", "§4.2, Figure 2(a), Table 5", "+47.3 (97.3 − 50)",
          "tuned model: baseline h1-accuracy on the sentiment pairs − 50"),
    Claim(STUDY, "base_prefers_shallow_features",
          "the Davinci model tends to prefer the shallow distractor features, such as lexical overlap",
          "§4.2, Figure 2(b, d), Table 4", "+15.0 (NLI 68.1, QA 61.8)",
          "base model: baseline h2-accuracy on the NLI and QA pairs − 50"),
    Claim(STUDY, "instructions_help_tuned_more",
          "For the Text-Davinci-002 model, instructions are much more effective", "§5.2, Table 2",
          "+18.6 ((12.2 + 24.2)/2 − (1.6 − 2.4)/2)",
          "instruction effect (mean of towards h1 and h2), tuned − base, mean over pairs"),
    Claim(STUDY, "interventions_increase_intended_accuracy",
          "Nearly all interventions increase the average h-accuracy, in many cases by a substantial amount",
          "§5.2, Table 2", "+14.1 (mean of the 16 changes)",
          "mean over both models, the run's interventions and both targets of the change in intended accuracy"),
    Claim(STUDY, "base_disambig_beats_instruction",
          "When using non-instruction-tuned LLMs (e.g., Davinci), specifying feature preferences as instructions is "
          "not effective, instead adding explanations or disambiguating examples can be more effective",
          "§5.2, Table 2", "+16.2 ((12.9 + 18.6)/2 − (1.6 − 2.4)/2)",
          "base model: disambiguation effect − instruction effect (mean of towards h1 and h2), mean over pairs"),
    Claim(STUDY, "strong_prior_resists_interventions",
          "the instruction-tuned model generalizes on the basis of sentiment despite adding instructions and even "
          "disambiguating evidence in favor of lexical features like punctuation", "§1, Table 5 (SA punctuation)",
          "−32.4 (mean of 2.0, 3.4, 15.6, 49.5 − 50)",
          "tuned model, sentiment/punctuation pair, steered towards punctuation: h2-accuracy − 50, mean over the "
          "run's interventions", direction=-1),
)

def recipes(interventions: Sequence[str] = INTERVENTIONS) -> dict[str, Recipe]:
    """Each claim's recipe; claims over "the interventions" use ``interventions`` (those the run has)."""
    ivs = tuple(iv for iv in INTERVENTIONS if iv in interventions)
    return {**RECIPES,
            "interventions_increase_intended_accuracy": Recipe(_effects("tuned", 0.5, ivs) + _effects("base", 0.5, ivs)),
            "strong_prior_resists_interventions": Recipe(
                tuple(Term(1 / max(1, len(ivs)), "tuned", f"{iv}-h2", "h2") for iv in ivs), codes=("SA",),
                offset=-50.0, pairs=("sa_sentiment_punctuation",))}


RECIPES: dict[str, Recipe] = {
    "tuned_prefers_default_feature": Recipe((Term(1, "tuned", "baseline", "h1"), Term(-1, "base", "baseline", "h1"))),
    "sentiment_bias_base": Recipe((Term(1, "base", "baseline", "h1"),), codes=("SA",), offset=-50.0),
    "sentiment_bias_tuned": Recipe((Term(1, "tuned", "baseline", "h1"),), codes=("SA",), offset=-50.0),
    "base_prefers_shallow_features": Recipe((Term(1, "base", "baseline", "h2"),), codes=("NLI", "QA"), offset=-50.0),
    "instructions_help_tuned_more": Recipe(_effects("tuned", 1.0, ("instruction",)) + _effects("base", -1.0, ("instruction",))),
    "interventions_increase_intended_accuracy": Recipe(_effects("tuned", 0.5, INTERVENTIONS)
                                                       + _effects("base", 0.5, INTERVENTIONS)),
    "base_disambig_beats_instruction": Recipe(_effects("base", 1.0, ("disambig",))
                                              + _effects("base", -1.0, ("instruction",))),
}


def _constant(records: Iterable[Mapping]) -> bool:
    preds = [r["pred"] for r in records if r["condition"] == "baseline"]
    if not preds:
        return False
    top = max(preds.count(v) for v in set(preds))
    return top / len(preds) > CONSTANT_SHARE


def measure_claim(recipe: Recipe, scores: Mapping[str, Mapping[str, PairScores]], *, n: int = 1000,
                  seed: int = 0) -> Measurement | None:
    """One claim from ``scores[role][pair]`` (None when a role it needs has no model)."""
    if any(t.role not in scores for t in recipe.terms):
        return None
    strata, used, n_items = [], [], 0
    for key in PAIRS:
        if PAIRS[key].code not in recipe.codes or (recipe.pairs is not None and key not in recipe.pairs):
            continue
        per_role = [scores[t.role].get(key) for t in recipe.terms]
        if any(ps is None or t.condition not in ps.conditions for t, ps in zip(recipe.terms, per_role)):
            continue
        uids = per_role[0].uids
        if any(ps.uids != uids for ps in per_role):
            continue  # the models were not scored on the same test items
        blocks = [ps.matrix(t.condition, t.measure) for t, ps in zip(recipe.terms, per_role)]
        bounds = np.cumsum([0] + [b.shape[1] for b in blocks])
        weights = [t.weight for t in recipe.terms]

        def stat(cols, bounds=bounds, weights=weights):
            return recipe.offset / 100 + sum(w * float(np.nanmean(cols[a:b]))
                                             for w, a, b in zip(weights, bounds[:-1], bounds[1:]))

        strata.append((np.hstack(blocks), stat))
        used.append(key)
        n_items += len(uids)
    if not strata:
        return Measurement(None, None, None, 0, degenerate=True, note="no pair with every term")
    point, lo, hi = mean_over_pairs(strata, n=n, seed=seed)
    roles = {t.role for t in recipe.terms}
    constant = sorted(r for r in roles if _constant(rec for k in used for rec in scores[r][k].records))
    return Measurement(100 * point, 100 * lo, 100 * hi, n_items, degenerate=bool(constant),
                       note=f"{len(strata)} pair(s)" + (f"; constant answers: {', '.join(constant)}" if constant else ""))


def measure(records_by_model: Mapping[str, Sequence[Mapping]], paper_models: Mapping[str, str], *, n: int = 1000,
            seed: int = 0, interventions: Sequence[str] = INTERVENTIONS) -> dict[str, Measurement | None]:
    """Every claim's measurement from each model's score records (``paper_models``: our key -> paper model;
    ``interventions``: those the run has)."""
    role_of = {"Davinci": "base", "Text-Davinci-002": "tuned"}
    scores: dict[str, dict[str, PairScores]] = {}
    for model, paper_model in paper_models.items():
        by_pair: dict[str, list[Mapping]] = defaultdict(list)
        for r in records_by_model.get(model, []):
            by_pair[r["pair"]].append(r)
        scores[role_of[paper_model]] = {k: PairScores(v) for k, v in by_pair.items()}
    chosen = recipes(interventions)
    out = {c.id: measure_claim(chosen[c.id], scores, n=n, seed=seed) for c in CLAIMS}
    left_out = [iv for iv in INTERVENTIONS if iv not in interventions]
    for cid in ("interventions_increase_intended_accuracy", "strong_prior_resists_interventions"):
        m = out[cid]
        if m is not None and left_out:
            out[cid] = replace(m, note=f"{m.note}; interventions run: "
                                       f"{', '.join(iv for iv in INTERVENTIONS if iv in interventions)} "
                                       f"(not run: {', '.join(left_out)})")
    return out


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``): per-item scores grouped by model."""
    from pathlib import Path

    from wobble.io import read_jsonl
    from wobble.report.claims import Findings

    sec = config[STUDY]
    paper_models, boot = dict(sec["paper_models"]), dict(sec["bootstrap"])
    by_model: dict[str, list] = {m: [] for m in paper_models}
    for path in inputs["scores"]:
        by_model[Path(path).parent.name].extend(read_jsonl(path))
    stand_ins = ", ".join(f"{m} for {p}" for m, p in paper_models.items()) or "none (icl_bias.paper_models is empty)"
    return Findings("Claims ledger: icl_bias (Si et al. 2023)", CLAIMS,
                    measure(by_model, paper_models, n=boot["n"], seed=boot["seed"],
                            interventions=tuple(sec["interventions"])),
                    notes=(f"Models standing in for the paper's: {stand_ins}.",))
