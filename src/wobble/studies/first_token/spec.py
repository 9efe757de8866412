"""Study ``first_token`` declared once: Wang et al. 2024, *"My Answer is C": First-Token Probabilities Do Not
Match Text Answers in Instruction-Tuned Language Models*.

Its config section ``first_token:`` (schema fragment ``schemas/studies/first_token.schema.yaml``, every default
there), the model keys it references, its rules file (``rules/first_token.smk``), Tables 1-5 and Figures 2, 3,
4, 7 (each an :class:`~wobble.report.spec.OutputSpec` whose ``build`` is a pure function in
:mod:`.tables` / :mod:`.figures`), the footnote context, the cross-field checks and the claims ledger.
Kept light: imported when the workflow is parsed.
"""

from __future__ import annotations

from typing import Any, Mapping

from wobble.models.describe import model_label
from wobble.paths import prepared, study_root
from wobble.report.spec import FindingsSpec, OutputSpec, ScorecardSpec, StudySpec
from wobble.studies.first_token.layout import all_temperatures, check_section, evaluator_names, labeled_path, runs

NAME = "first_token"
_B = "wobble.studies.first_token"


def _scores(config: Mapping[str, Any]) -> str:
    return f"{study_root(config, NAME)}/scores"

_READ = (" Rates are in percent with their 95% bootstrap interval over questions, [low, high] (all shuffles of a "
         "question resampled together); entropies in nats. Each row of ours is followed by the paper's where a "
         "model is matched to one of the paper's (first_token.paper_models); '–' marks a cell without a number and "
         "the footnotes say why.")


def _inputs(*names: str):
    """Input function from the names of what the output reads (scores files, prepared datasets)."""
    files = {"classifiers": "classifiers.jsonl", "selection": "classifier_selection.jsonl", "metrics": "metrics.jsonl",
             "choices": "choices.jsonl", "mapping": "mapping_summary.jsonl"}
    prepared_ = {"annotated": prepared("opinionqa_annotated"), "paper_mapping": prepared("opinionqa_paper_mapping")}

    def inputs(config: Mapping[str, Any]) -> dict[str, str]:
        return {n: prepared_[n] if n in prepared_ else f"{_scores(config)}/{files[n]}" for n in names}

    return inputs


def _out(name: str, kind: str, reads: tuple[str, ...], caption: str, paper: tuple[str, ...]) -> OutputSpec:
    return OutputSpec(NAME, name, kind, _inputs(*reads), f"{_B}.{'tables' if kind == 'table' else 'figures'}:"
                      f"build_{name}", caption, paper=paper)


OUTPUTS = (
    _out("table1", "table", (), "The instruction of each constraint level (Table 1): the paper's text beside the "
         "prompt our runs send (they must be identical; Example (A/B/C) is the Figure 3 control).", ("table1",)),
    _out("table2", "table", ("classifiers", "selection"), "Text -> option classifiers compared on the paper's annotated "
         "responses (Table 2): accuracy, macro- and weighted F1 averaged over the annotated models, ours beside the "
         "paper's. The study labels its own text answers with the one that scores best on held-out training responses "
         "(first_token.classifier: auto)." + _READ,
         ("table2",)),
    _out("table3", "table", ("metrics",), "Answer consistency over the option shuffles (Table 3): entropy of the "
         "chosen option per question, first token vs text, per model and constraint level; lower = more "
         "consistent." + _READ, ("table3",)),
    _out("table4", "table", ("classifiers",), "Classifier accuracy per annotated model (Table 4), ours beside the "
         "paper's." + _READ, ("table4",)),
    _out("table5", "table", ("annotated",), "Label distribution of the paper's annotated responses (Table 5): our "
         "count from the released annotations beside the paper's printed one (they should be equal).", ("table5",)),
    _out("figure2", "figure", ("metrics", "mapping", "paper_mapping"), "Mismatch and refusal per constraint level "
         "(Figure 2): (a) share of prompts whose first-token answer differs from the text answer (light: the part "
         "due to refusal), (b) refusal rates; with the paper's released per-shuffle statistics beside ours." + _READ,
         ("figure2",)),
    _out("figure3", "figure", ("choices",), "Choice distribution under the Example template (Figure 3): share of "
         "each letter, first token vs text; the template's example answers 'C', the A/B/C control does not." + _READ,
         ("figure3",)),
    _out("figure4", "figure", ("metrics",), "Decoding temperature (Figure 4): consistency entropy, mismatch and "
         "refusal as the temperature rises, on the sweep's constraint levels." + _READ, ()),
    _out("figure7", "figure", ("choices",), "Choice distribution (Figure 7): share of each letter, first token vs "
         "text, under (a) the Example template with the single answer 'C', (b) with 'A/B/C', (c) the High "
         "constraint." + _READ, ("figure7",)),
)


def context(config: Mapping[str, Any]) -> dict[str, Any]:
    """What every footnote states: models, scale, sample, decoding, classifier. Its keys are the render rules'
    params, a config value under its config name (``temperatures``: every temperature run, the main one first)."""
    cfg = config[NAME]
    keys = list(dict.fromkeys([*cfg["models"], *(k for k in (cfg.get("judge_model"), cfg.get("classifier_base")) if k)]))
    return {
        "scale": config["scale"],
        "models": list(cfg["models"]),
        "model_labels": {k: model_label(config["models"], k) for k in keys},
        "n_questions": cfg["n_questions"],
        "n_shuffles": int(cfg["n_shuffles"]),
        "seed": int(cfg["seed"]),
        "constraints": list(cfg["constraints"]),
        "temperatures": all_temperatures(cfg),
        "sweep_constraints": list(cfg["sweep_constraints"]),
        "max_new_tokens": int(cfg["max_new_tokens"]),
        "classifier": cfg["classifier"],
        "evaluators": evaluator_names(cfg),
        "judge_model": cfg.get("judge_model"),
        "classifier_base": cfg.get("classifier_base"),
        "n_eval_per_model": cfg.get("n_eval_per_model"),
        "bootstrap": dict(cfg["bootstrap"]),
        "paper_models": dict(cfg.get("paper_models") or {}),
    }


def _findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The labelled predictions of every model at every temperature (the temperature rows read the sweep), and
    the paper's numbers the table-backed claims' effects are computed from (its released per-model means too)."""
    cfg = config[NAME]
    return {"labeled": [labeled_path(study_root(config, NAME), m, t) for m, t in runs(cfg)],
            "paper_mapping": prepared("opinionqa_paper_mapping"),
            **{f"paper_{f}": f"paper/{NAME}/{f}.csv" for f in ("figure3", "figure7", "table3")}}


def _scorecard_inputs(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    return {"metrics": f"{_scores(config)}/metrics.jsonl", "paper_mapping": prepared("opinionqa_paper_mapping")}


SPEC = StudySpec(
    name=NAME,
    paper='Wang et al. 2024, "My Answer is C": First-Token Probabilities Do Not Match Text Answers',
    sources=("opinionqa",),
    model_refs=(("models", "*"), ("judge_model",), ("classifier_base",)),
    outputs=OUTPUTS,
    context=context,
    check=check_section,
    scorecard=ScorecardSpec(models=lambda config: list(config[NAME]["models"]), inputs=_scorecard_inputs,
                            measure=f"{_B}.scorecard:rows"),
    findings=FindingsSpec(
        inputs=_findings_inputs,
        measure=f"{_B}.claims:findings",
        caption=("The paper's headline claims (Abstract, §3, §4.1-4.3, Appendix A.1), each measured per model on its "
                 "labelled answers (the existence claim, mismatch over 60%, across the models run; the four "
                 "constraint levels at the main temperature, Figure 3b's Example A/B/C control, the temperature rows "
                 "on the sweep) with a 95% interval over questions (a question brings all its shuffles, levels and "
                 "temperatures). Verdicts follow the ledger's rule (docs/ledger.md); each claim's section names the "
                 "commit its definition was frozen at, or that none is recorded yet."),
    ),
)
