"""Study ``instructions`` declared once: Gu et al. 2023, *Robustness of Learning from Task Instructions*.

Its config section ``instructions:`` (schema fragment ``schemas/studies/instructions.schema.yaml``), the model
keys it references, its rules file (``rules/instructions.smk``), Tables 1-11 and the drop figure (each an
:class:`~wobble.report.spec.OutputSpec` whose ``build`` is a pure function of :mod:`.tables` or :mod:`.figures`), the footnote
context and the config's cross-field checks. Kept light: imported when the workflow is parsed.
"""

from __future__ import annotations

from typing import Any, Mapping

from wobble.errors import ConfigError
from wobble.report.spec import FindingsSpec, OutputSpec, ScorecardSpec, StudySpec
from wobble.studies.instructions.layout import PROPOSER_CONDITIONS, inputs_of, scorecard_inputs, scorecard_models

NAME = "instructions"
#: The masked LM of the paper's insert/replace words: "pretrained BERT" (§3.1); the authors' fork loads this one.
PAPER_MASKED_LM = "bert-base-multilingual-cased"
_PKG = "wobble.studies.instructions"

_DASH_TEXT = ("\"–\" marks a cell without a number of ours (or of the paper); a footnote under the table says "
              "why (category without usable data in the mirror, condition not run, no second model, ...).")
_CONDITIONS_TEXT = (
    "Rows: the 9 instruction conditions of the paper (original, then the word-, sentence- and instruction-level "
    "perturbations) per setting (INSTRU-WO-EXAM: definition only; INSTRU-W-EXAM: definition + 2 positive "
    "examples). Columns: the SuperNI test categories with their metric (EM or ROUGE-L, Table 2). Each cell reads "
    "``ours (paper)``: our mean ± population std over seeds, then the paper's number as printed. Compare a "
    "perturbed row with the original row of the same setting: the gap is the cost of the perturbation. ")


def _table(name: str, caption: str, paper: tuple[str, ...] | None = None,
           join_keys: tuple[str, ...] = ()) -> OutputSpec:
    return OutputSpec(study=NAME, name=name, kind="table", inputs=inputs_of(name),
                      build=f"{_PKG}.tables:build_{name}", caption=caption, paper=paper or (name,),
                      join_keys=join_keys)


def _conditions_table(name: str, what: str) -> OutputSpec:
    """Tables 4, 5, 10, 11: conditions x categories of one model on one language subset."""
    return _table(name, f"Table {name[5:]}: {what}. " + _CONDITIONS_TEXT + _DASH_TEXT,
                  join_keys=("setting", "condition", "category"))


OUTPUTS: tuple[OutputSpec, ...] = (
    _table("table1",
           "Table 1: the SuperNI task sample of the paper (task1557, grammar error correction) — definition, "
           "positive/negative example and an instance — from our prepared data beside the paper's text. "
           "'Matches paper' compares the stripped strings; a footnote lists fields that differ only in quote "
           "characters. " + _DASH_TEXT, join_keys=("component", "field")),
    _table("table2",
           "Table 2: the 12 SuperNI test categories, their abbreviation and metric (ours from "
           "``wobble.metrics.superni``) beside the paper's, with how many English / non-English test tasks of each "
           "category our prepared data has (with data in the mirror / all). " + _DASH_TEXT, join_keys=("abbr",)),
    _table("table3",
           "Table 3: every perturbation of our code applied to task1557's definition, beside the paper's example "
           "(its markup kept: <del>…</del> deleted, <u>…</u> repeated). 'Same text as paper' compares our text with "
           "the paper's result text; the random perturbations are seeded draws and are not expected to reproduce "
           "the paper's draw. " + _DASH_TEXT, join_keys=("condition",)),
    _conditions_table("table4", "the main model on the English SuperNI test tasks (paper: T5-3B), both settings"),
    _conditions_table("table5", "the second model on the English SuperNI test tasks (paper: T5-11B), "
                                "INSTRU-W-EXAM only"),
    _table("table6",
           "Table 6: the Para-Instructions example (the original instruction and its 3 new instructions) from our "
           "prepared data beside the paper's text; 'Equal to paper's' names the paper version with the same text "
           "when the numbering differs. " + _DASH_TEXT, join_keys=("version",)),
    _table("table7",
           "Table 7: Para-Instructions per category, INSTRU-W-EXAM: the original instruction (mean over seeds) vs the "
           "rephrased ones (mean ± population std over the 3 new instructions of their seed means), ours beside "
           "the paper's T5-3B and T5-11B. A rephrased number close to the original one means the model is robust "
           "to paraphrase; [k of 3] marks categories where only k paraphrases have a number. " + _DASH_TEXT,
           join_keys=("instruction", "category")),
    _table("table8",
           "Table 8: DiversePrompt, INSTRU-WO-EXAM: per task, the mean ± population std over the task's prompts "
           "(each prompt's mean over seeds first), ours beside the paper's T5-3B and T5-11B, in the metric the paper "
           "uses for that task. A large std means the answer quality depends on how the task is phrased. "
           + _DASH_TEXT, join_keys=("task",)),
    _table("table9",
           "Table 9: ROUGE-L per prompt for four DiversePrompt tasks, our prompts joined to the paper's on the "
           "prompt text (ignoring case, punctuation and whitespace); prompts of either side without a partner are listed with \"–\" "
           "on the other side. 'Paper rank' is the row order within the task in the paper. " + _DASH_TEXT,
           join_keys=("task", "prompt")),
    _conditions_table("table10", "the main model on the non-English SuperNI test tasks (AC, CEC, TE, TG), "
                                 "both settings"),
    _conditions_table("table11", "the second model on the non-English SuperNI test tasks, INSTRU-W-EXAM only"),
    OutputSpec(study=NAME, name="figure_drop", kind="figure", inputs=inputs_of("figure_drop"),
               build=f"{_PKG}.figures:build_figure_drop", paper=("table4",),
               join_keys=("setting", "condition", "category"),
               caption="Drop from the original instruction (original − perturbed, EM or ROUGE-L points) per "
                       "perturbation (rows) and English test category (columns), INSTRU-WO-EXAM left, INSTRU-W-EXAM "
                       "right; top: ours (main model), bottom: the paper's Table 4 (T5-3B). Red = the perturbation "
                       "costs points, blue = it helps; grey with \"–\" = no number (condition or category not run); grey "
                       "with \"floor\" = original and perturbed both 0, a floor rather than robustness. "
                       "The numbers are in ``tables/figure_drop.md`` (ours (paper) per cell) and the tidy ``.csv``."),
)


def model_labels(config: Mapping[str, Any]) -> dict[str, str]:
    """The study's models (main first, then the second) and their footnote labels."""
    from wobble.models.describe import model_label

    cfg = config[NAME]
    keys = list(cfg["models"])
    chat = set(cfg.get("chat_models") or [])
    return {k: model_label(config["models"], k) + ("; prompt = one user turn through its chat template"
                                                    if k in chat else "; prompt = plain Tk-Instruct text")
            for k in keys}


def model_deviations(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per model of the study, the deviations footnoted under the tables it produced: a model the workflow
    does not finetune says so (the paper's T5 models are finetuned on SuperNI train), then
    ``instructions.model_deviations[key]``."""
    from wobble.models.describe import model_label

    cfg = config[NAME]
    given = cfg.get("model_deviations") or {}
    twins = dict(zip(cfg["models"], ("T5-3B", "T5-11B")))
    out = {}
    for key, twin in twins.items():
        lines = []
        if "finetune" not in config["models"].get(key, {}):
            chat = ("; an instruction-tuned chat model, each prompt one user turn through its chat template"
                    if key in (cfg.get("chat_models") or []) else "")
            lines.append(f"{key} is used as shipped ({model_label(config['models'], key)}{chat}), not finetuned on "
                         f"SuperNI train by this workflow; the paper's {twin} is T5 finetuned on SuperNI train, "
                         "1,462 tasks (§3)")
        out[key] = lines + list(given.get(key) or [])
    return out


def context(config: Mapping[str, Any]) -> dict[str, Any]:
    """What every footnote of the study states: scale, models, seeds, data sample, deviations (of every table,
    and per model: ``model_deviations``, footnoted under that model's tables only)."""
    cfg = config[NAME]
    en, xl = cfg["english"], cfg["xlingual"]
    deviations = list(cfg.get("deviations", []))
    if not cfg.get("masked_lm"):
        deviations.append(f"insert/replace words: each word is proposed by the causal LM {cfg['proposer_model']} "
                          "from the left context (no masked LM offline); the paper used pretrained BERT (the authors' fork: "
                          f"{PAPER_MASKED_LM} fill-mask)")
    return {
        "scale": config["scale"],
        "models": model_labels(config),
        "seeds": cfg["seeds"],
        "data_note": (f"SuperNI test tasks from the data mirror: {en['n_tasks_per_category']} English task(s) per "
                      f"category x first {en['n_instances_per_task']} instances; {xl['n_tasks_per_category']} non-English "
                      f"task(s) per category x {xl['n_instances_per_task']} instances; Para-Instructions "
                      f"x {cfg['para']['n_instances_per_task']} instances; DiversePrompt x "
                      f"{cfg['diverse']['n_examples_per_task']} eval examples per prompt"),
        "deviations": deviations,
        "model_deviations": model_deviations(config),
    }


def check(section: Mapping[str, Any]) -> None:
    """Cross-field checks the schema cannot express."""
    for key in ("seeds", "conditions", "settings"):
        values = list(section.get(key) or [])
        dup = sorted({str(v) for v in values if values.count(v) > 1})
        if dup:
            raise ConfigError(f"{NAME}.{key}", f"each value once; repeated: {dup}")
    needs = [c for c in section.get("conditions") or [] if c in PROPOSER_CONDITIONS]
    if needs and not section.get("masked_lm") and not section.get("proposer_model"):
        raise ConfigError(f"{NAME}.proposer_model", f"a model key (or set {NAME}.masked_lm): conditions "
                                                     f"{needs} need a word proposer")


def _findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    from wobble.studies.instructions.claims import findings_inputs  # heavy (metrics): imported when needed

    return findings_inputs(config)


SPEC = StudySpec(
    name=NAME,
    paper="Gu et al. 2023, Robustness of Learning from Task Instructions",
    sources=("superni", "para_instructions", "diverse_prompt"),
    model_refs=(("models", "*"), ("proposer_model",)),
    outputs=OUTPUTS,
    context=context,
    check=check,
    scorecard=ScorecardSpec(models=scorecard_models, inputs=scorecard_inputs,
                            measure="wobble.studies.instructions.scorecard:rows"),
    findings=FindingsSpec(
        inputs=_findings_inputs,
        measure=f"{_PKG}.claims:findings",
        caption=("The instructions paper's headline claims (Introduction, §3.1-3.3), one row per claim and model, "
                 "each a statistic over tasks with a 95% interval over tasks (a task resampled with all its "
                 "instances and conditions; Student's or Welch's t on fewer than 30 tasks), beside the same "
                 "statistic computed from the paper's category means (T5-3B; T5-11B for the second model's "
                 "robustness with examples) and the verdict the paper's own numbers get. Floors and ceilings are "
                 "read on every arm, each with the way its failure biases the row; a failed check that could "
                 "explain the result makes the row 'not applicable' and prints the verdict the interval alone "
                 "would give. Each claim's section names the commit its definition was frozen at, where one is "
                 "recorded."),
    ),
    doc=__doc__ or "",
)
