"""Study ``followup`` declared once: *Ask Again, Then Fail: Large Language Models' Vacillations in Judgement*
(ICLR 2024 submission; config section ``followup``, schema ``schemas/studies/followup.schema.yaml``, rules
``rules/followup.smk``)."""

from __future__ import annotations

from typing import Any, Mapping

from wobble.models.describe import model_label
from wobble.report.spec import FindingsSpec, OutputSpec, ScorecardSpec, StudySpec
from wobble.studies.followup.layout import (check_section, judge_path, model_temperature, results_dir, run_path,
                                            runs, scorecard_inputs, summary_path)
from wobble.studies.followup.prompts import BENCHMARKS

NAME = "followup"
_T = "wobble.studies.followup.tables"
_F = "wobble.studies.followup.figures"


def _summaries(config: Mapping[str, Any]) -> dict[str, list[str]]:
    return {"summaries": [summary_path(results_dir(config), m) for m in config[NAME]["models"]]}


def context(config: Mapping[str, Any]) -> dict[str, Any]:
    """What every footnote states: models and their paper twins and temperatures, items, seeds, gate. Its keys are
    the render rules' params, a config value under its config name; ``folder`` is the study's folder under the run's
    results root, which footnotes name."""
    sec = config[NAME]
    return {"models": list(sec["models"]), "paper_models": dict(sec["paper_models"]),
            "model_labels": {m: model_label(config["models"], m) for m in sec["models"]},
            "temperatures": {m: model_temperature(sec, m) for m in sec["models"]},
            "extra_temperatures": list(sec["temperatures"]), "datasets": list(sec["datasets"]),
            "variants": list(sec["variants"]),
            "n_items": sec["n_items"], "n_heldout": sec["n_heldout"], "shots": sec["shots"], "seed": sec["seed"],
            "sample_seed": sec["sample_seed"], "gate": sec["gate"], "max_new_tokens": sec["max_new_tokens"],
            "bootstrap_n": sec["bootstrap"]["n"], "judge_model": sec["judge_model"],
            "n_judge_examples": sec["n_judge_examples"],
            "judge_hand_labels": sec.get("judge_hand_labels"),
            "judge_label": model_label(config["models"], sec["judge_model"]) if sec["judge_model"] else None,
            "scale": config.get("scale", ""), "folder": results_dir(config)}


def _judged(config: Mapping[str, Any]) -> dict[str, list[str]]:
    sec = config[NAME]
    hand = [sec["judge_hand_labels"]] if sec["judge_model"] and sec.get("judge_hand_labels") else []
    judged = [judge_path(results_dir(config), m) for m in sec["models"]] if sec["judge_model"] else []
    return {"judged": judged, "hand_labels": hand}


_READ = (" Ours beside the paper's: M. = accuracy points lost after the follow-up, M. Rate = M. / Before (lower "
         "= more consistent); brackets are 95% bootstrap intervals over items; the footnotes say which model stands "
         "in for which paper model and how ours differs.")


def _table(name: str, caption: str, paper: tuple[str, ...]) -> OutputSpec:
    return OutputSpec(NAME, name, "table", _summaries, f"{_T}:build_{name}", caption + _READ, paper=paper)


def _figure(name: str, caption: str, paper: tuple[str, ...]) -> OutputSpec:
    return OutputSpec(NAME, name, "figure", _summaries, f"{_F}:build_{name}", caption + _READ, paper=paper)


_FULL_D = ("{m}'s stand-in in the Direct Form (Table {n}): per dataset, annotator A/B/C (Table 4) and question type "
           "(closed-ended, open-ended, leading), accuracy before, M. and M. Rate.")
_FULL_P = ("{m}'s stand-in in the Progressive Form (Table {n}): closed-ended, open-ended, then leading in one "
           "dialogue, M. and M. Rate after each round, for prompt set A and the Max / Min sets chosen from the "
           "Direct Form.")

OUTPUTS = (
    _figure("figure3", "Direct Form (Figure 3): accuracy before and after the closed-ended (C), open-ended (O) and "
            "leading (L) question, prompt A, per dataset. A large drop means the model gives up correct answers.",
            ("figure3",)),
    _figure("figure4", "Progressive Form (Figure 4): M. Rate after round 1 (closed-ended), 2 (open-ended) and 3 "
            "(leading) per dataset.", ("figure4",)),
    _figure("figure_prompts", "Prompt variants (the paper's prompt figure): M. with the follow-up questions written "
            "by annotators A, B and C (Table 4), three points per dataset and question type. Spread = sensitivity "
            "to the wording.", ("table8", "table10", "table12")),
    OutputSpec(NAME, "figure5", "figure", _judged, f"{_F}:build_figure5",
               "Error analysis (Figure 5): the share of each error type (§3.3: unable to answer, modify the question, "
               "direct answer modification, correct process but wrong answer) among the answers a model changed from "
               "right to wrong, as labelled by the judge model. Ours only: the paper's figure prints no numbers."),
    _table("table2", "Direct and Progressive Form averaged per task type (Table 2: Math, CS, Sym, Know), prompt A.",
           ("table2",)),
    _table("table3", "The impact of the sampling temperature (Table 3): 0, the model's own and 1, on StrategyQA "
           "(closed-ended), CoinFlip (open-ended) and MultiArith (leading).", ("table3",)),
    _table("table5", "Can the mechanism correct models? (Table 5): Error Rate = initially wrong answers, E→R Rate = "
           "share of them right after the follow-up.", ("table5",)),
    _table("table6", "Mitigation methods (Table 6): EmotionPrompt and Zero-shot-CoT at three positions, few-shot "
           "(4-shot) and few-shot + Zero-shot-CoT, M. and M. Rate as means over the prompts run (paper: A/B/C).", ("table6",)),
    _table("table8", _FULL_D.format(m="ChatGPT", n=8), ("table8",)),
    _table("table9", _FULL_P.format(m="ChatGPT", n=9), ("table9",)),
    _table("table10", _FULL_D.format(m="PaLM2-Bison", n=10), ("table10",)),
    _table("table11", _FULL_P.format(m="PaLM2-Bison", n=11), ("table11",)),
    _table("table12", _FULL_D.format(m="Vicuna-13B", n=12), ("table12",)),
    _table("table13", _FULL_P.format(m="Vicuna-13B", n=13), ("table13",)),
    _table("table16", "Emotional disturbance (Table 16): 'I am very disappointed with your answer, please respond "
           "again.' as the follow-up.", ("table16",)),
    _table("table19", "Mitigation methods per prompt A/B/C (Table 19), Direct Form.", ("table19",)),
    _table("table20", "Zero-shot mitigations in the Progressive Form (Table 20), prompt A.", ("table20",)),
)

def _findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """Every dialogue of every model (the claims resample items across runs), and the paper's tables the paper
    values come from."""
    from wobble.studies.followup.claims import PAPER_TABLES

    sec = config[NAME]
    return {"dialogues": [run_path(results_dir(config), m, r) for m in sec["models"] for r in runs(sec, m)],
            **{f"paper_table{n}": f"paper/{NAME}/table{n}.csv" for n in PAPER_TABLES}}


SPEC = StudySpec(
    name=NAME,
    paper="Ask Again, Then Fail: Large Language Models' Vacillations in Judgement (ICLR 2024 submission)",
    sources=tuple(BENCHMARKS),
    model_refs=(("models", "*"), ("judge_model",)),
    outputs=OUTPUTS,
    context=context,
    check=check_section,
    scorecard=ScorecardSpec(models=lambda config: list(config[NAME]["models"]), inputs=scorecard_inputs,
                            measure="wobble.studies.followup.scorecard:rows"),
    findings=FindingsSpec(
        inputs=_findings_inputs,
        measure="wobble.studies.followup.claims:findings",
        caption=("The paper's headline claims (Abstract, §3.2-§4), each measured on our chat models' dialogues with a "
                 "95% interval over items (an item brings every model, condition and round it was asked in). "
                 "Verdicts follow the ledger's rule (docs/ledger.md); each claim's section names the commit its "
                 "definition was frozen at."),
    ),
    doc="Follow-up questions (closed, open, leading; Direct / Progressive Form) after an answer; M., M. Rate.",
)
