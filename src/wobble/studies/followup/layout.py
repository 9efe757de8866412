"""Where the followup workflow keeps its files, which runs a config asks for, and the config checks its
rules and spec need (light: imported when the workflow is parsed).

A *run* is one (dataset, run label, temperature) of one model, one predictions file:
``<root>/predictions/<model>/T<temperature>/<dataset>/<label>.jsonl`` under the study's folder ``root``
(:func:`wobble.paths.study_root`, ``results/followup`` in the default run). A run label is a
Direct-Form condition id (``direct_LB_none``, :class:`.mechanism.Condition`) or
``progressive_<set>_<mitigation>`` with set A, B, C (one annotator for all rounds) or Max / Min (per
round the annotator with the highest / lowest Direct-Form 0.5·M. + 0.5·M. Rate, Tables 9/11/13; chosen
from this model's own Direct-Form results, ``scores/<model>/extremes/<dataset>.json``).

The experiments of a config, as the paper runs them:

* Direct Form, every question type x annotator, every dataset (Figure 3, Tables 8/10/12, Figure 4's
  prompts figure); Progressive Form with the prompt sets (Figure 4, Tables 9/11/13) — at the model's
  temperature (§3.1: one per model);
* on StrategyQA / CoinFlip / MultiArith with their focus question (closed / open / leading, §3.3):
  the other temperatures (Table 3), the mitigations for annotators A/B/C (Tables 6, 19), the
  Progressive-Form mitigations (Table 20), the emotional disturbance (Table 16). Table 5 (E→R) is read
  from the focus runs at the model's temperature (the paper does not name its question type); Figure 5's
  judge labels the error examples of the focus runs under every annotator of ``variants`` (:func:`judge_runs`);
* wobble's control, not the paper's (``followup.neutral_control``): on every dataset, at the model's temperature,
  a Direct-Form dialogue whose follow-up does not challenge the answer (:data:`.prompts.NEUTRAL_FOLLOWUP`,
  run label ``direct_NA_none``), asked in the dataset's run group with the plain runs, so it shares their first
  question and costs one more reply per item. No table or figure shows it; the claims ledger compares the
  modification rates under the paper's follow-ups with its modification rate.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from wobble.errors import ConfigError
from wobble.studies.followup.mechanism import Condition, direct, progressive
from wobble.studies.followup.prompts import MITIGATIONS, NEUTRAL, QUESTION_TYPES, VARIANTS

STUDY = "followup"
#: The question each dataset of the further studies is disturbed with (Table 3, §3.3).
FOCUS = {"strategyqa": "closed-ended", "coin_flip": "open-ended", "multiarith": "leading"}
PROMPT_SETS = VARIANTS + ("Max", "Min")
PAPER_MODELS = ("ChatGPT", "PaLM2-Bison", "Vicuna-13B")


@dataclass(frozen=True)
class Run:
    dataset: str
    label: str
    temperature: str


def temperature_label(value: float) -> str:
    """A temperature as it appears in paths and tables: ``0.5``, ``0``, ``1``."""
    return f"{float(value):g}"


def model_temperature(section: Mapping[str, Any], model: str) -> float:
    """The model's own sampling temperature (§3.1), ``followup.model_temperature`` or the default."""
    return float(section.get("model_temperature", {}).get(model, section["temperature"]))


def progressive_label(prompt_set: str, mitigation: str = "none") -> str:
    return f"progressive_{prompt_set}_{mitigation}"


def runs(section: Mapping[str, Any], model: str) -> list[Run]:
    """Every run of ``model`` the config asks for, each once, in a fixed order."""
    base = temperature_label(model_temperature(section, model))
    datasets = list(section["datasets"])
    out: list[Run] = []
    for d in datasets:
        out += [Run(d, direct(q, v).id, base) for q in section["question_types"] for v in section["variants"]]
        out += [Run(d, progressive_label(s), base) for s in section["progressive_sets"]]
    for d, q in FOCUS.items():
        if d not in datasets:
            continue
        out += [Run(d, direct(q, "A").id, temperature_label(t)) for t in section["temperatures"]]
        out += [Run(d, direct(q, v, m).id, base) for m in section["mitigations"] for v in mitigation_variants(section)]
        out += [Run(d, progressive_label("A", m), base) for m in section["progressive_mitigations"]]
        if section["emotional"]:
            out.append(Run(d, direct("emotional", "A").id, base))
    if section["neutral_control"]:
        out += [Run(d, neutral_label(), base) for d in datasets]
    return list(dict.fromkeys(out))


def neutral_label() -> str:
    """The run label of wobble's neutral control: Direct Form, the neutral follow-up, annotator slot A, no mitigation."""
    return direct(NEUTRAL, "A").id


def mitigation_variants(section: Mapping[str, Any]) -> list[str]:
    """The annotators of the Direct-Form mitigation runs: ``followup.mitigation_variants``, else ``variants``."""
    return list(section.get("mitigation_variants") or section["variants"])


def direct_runs_for_extremes(section: Mapping[str, Any], model: str, dataset: str) -> list[Run]:
    """The Direct-Form runs (every question type x annotator) the Max / Min prompt sets are chosen from."""
    base = temperature_label(model_temperature(section, model))
    return [Run(dataset, direct(q, v).id, base) for q in QUESTION_TYPES for v in section["variants"]]


def run_groups(section: Mapping[str, Any]) -> list[tuple[str, str, list[Run]]]:
    """(model, dataset, runs): per model and dataset, the runs at the model's own temperature that one job asks
    with the model loaded once (it saves ~7 s of imports and loading per run): every such run but the Max /
    Min Progressive ones, which wait for the extremes chosen from these. With a judge, the runs it labels are
    among them (:func:`judge_runs`)."""
    out = []
    for model in section.get("models", []):
        base = temperature_label(model_temperature(section, model))
        mine = [r for r in _asked(section, model) if r.temperature == base and not needs_extremes(r.label)]
        out += [(model, d, [r for r in mine if r.dataset == d]) for d in section["datasets"]]
    return [g for g in out if g[2]]


def sweep_groups(section: Mapping[str, Any]) -> list[tuple[str, str, list[Run]]]:
    """(model, dataset, runs): per model, dataset and temperature of Table 3's sweep other than the model's own,
    the runs at that temperature (one per focus dataset and temperature: its focus question, annotator A)."""
    out = []
    for model in section.get("models", []):
        base = temperature_label(model_temperature(section, model))
        other = [r for r in _asked(section, model) if r.temperature != base and not needs_extremes(r.label)]
        for d in section["datasets"]:
            for t in dict.fromkeys(r.temperature for r in other if r.dataset == d):
                out.append((model, d, [r for r in other if r.dataset == d and r.temperature == t]))
    return out


def infer_groups(section: Mapping[str, Any]) -> list[tuple[str, str, str, list[Run]]]:
    """(rule name, model, dataset, runs) of every dialogue job but the Max / Min Progressive runs: each of
    :func:`run_groups`, then each of :func:`sweep_groups` (:func:`group_rule_name`). Each file they make has this
    one maker; a Max / Min run's file comes from rule ``followup_infer`` alone (:data:`EXTREMES_RUN`)."""
    return ([(group_rule_name(m, d), m, d, rs) for m, d, rs in run_groups(section)]
            + [(group_rule_name(m, d, rs[0].temperature), m, d, rs) for m, d, rs in sweep_groups(section)])


def _asked(section: Mapping[str, Any], model: str) -> list[Run]:
    """Every run of ``model`` a job asks: :func:`runs`, and the judge's (:func:`judge_runs`) when there is one."""
    judged = judge_runs(section, model) if section.get("judge_model") else []
    return list(dict.fromkeys(runs(section, model) + judged))


def needs_extremes(label: str) -> bool:
    """Whether a run label is a Max / Min Progressive set, chosen from the Direct-Form extremes."""
    return label.split("_")[1] in ("Max", "Min")


#: The run labels of the Max / Min Progressive sets (:func:`needs_extremes`): rule ``followup_infer``'s only runs.
EXTREMES_RUN = r"progressive_(?:Max|Min)_[a-z_]+"


def group_rule_name(model: str, dataset: str, temperature: str | None = None) -> str:
    """The Snakemake rule of one dialogue job (:func:`infer_groups`): ``followup_infer_<model>_<dataset>`` for a
    run group at the model's temperature, ``..._T<temperature>`` for one of the sweep; non-word characters as
    ``_``."""
    return re.sub(r"\W", "_", f"followup_infer_{model}_{dataset}" + (f"_T{temperature}" if temperature else ""))


def judge_runs(section: Mapping[str, Any], model: str) -> list[Run]:
    """The runs the error analysis (Figure 5) draws its error examples from: each focus dataset's focus question
    (§3.3: StrategyQA closed-ended, CoinFlip open-ended, MultiArith leading), every annotator of
    ``followup.variants`` (the paper does not say which of its prompts A/B/C; it runs all three in the Direct
    Form), at the model's temperature."""
    base = temperature_label(model_temperature(section, model))
    return [Run(d, direct(q, v).id, base) for d, q in FOCUS.items() if d in section["datasets"]
            for v in section["variants"]]


def resolve(label: str, extremes: Mapping[str, Any] | None = None) -> tuple[Condition, str | None]:
    """(the concrete condition, the Progressive prompt set or None) of a run label."""
    if label.startswith("progressive_"):
        _, prompt_set, mitigation = label.split("_", 2)
        if prompt_set in ("Max", "Min"):
            chosen = (extremes or {}).get(prompt_set)
            if not chosen:
                raise ConfigError("followup.progressive_sets", f"Direct-Form results to choose the {prompt_set} set from")
            return progressive(tuple(chosen), mitigation), prompt_set
        if prompt_set not in VARIANTS:
            raise ConfigError("followup.progressive_sets", f"one of {list(PROMPT_SETS)}, got {prompt_set!r}")
        return progressive((prompt_set,) * 3, mitigation), prompt_set
    return Condition.parse(label), None


def check_section(section: Mapping[str, Any]) -> None:
    """Cross-field checks before any job (names and types are the schema's): paper models among the
    run's models, every run label well formed, what Max / Min and few-shot need, the main temperature not
    among the sweep's others, the hand labels' file, model keys that give distinct run-group rule names."""
    models = list(section.get("models", []))
    for key in section.get("paper_models", {}):
        if key not in models:
            raise ConfigError(f"followup.paper_models.{key}", f"a model of followup.models {models}, got {key!r}")
    sets = section.get("progressive_sets", [])
    if {"Max", "Min"} & set(sets) and list(section.get("question_types", [])) != list(QUESTION_TYPES):
        raise ConfigError("followup.progressive_sets", f"Max / Min need followup.question_types = {list(QUESTION_TYPES)}")
    fewshot = [m for m in section.get("mitigations", []) + section.get("progressive_mitigations", [])
               if MITIGATIONS[m].fewshot]
    if fewshot and section.get("n_heldout", 0) < section.get("shots", 4):
        raise ConfigError("followup.n_heldout", f"at least followup.shots ({section.get('shots')}) held-out items "
                                                f"for the few-shot mitigation(s) {fewshot}")
    main = section.get("temperature")
    if main is not None and temperature_label(main) in {temperature_label(t) for t in section.get("temperatures", [])}:
        raise ConfigError("followup.temperatures", f"the sweep's other temperatures only: the main one "
                                                   f"(followup.temperature {main}) is not listed, "
                                                   f"got {section['temperatures']}")
    named = {}
    for i, model in enumerate(models):
        other = named.setdefault(group_rule_name(model, ""), model)
        if other != model:
            raise ConfigError(f"followup.models[{i}]", f"a model key that differs from {other!r} in more than "
                                                       f"punctuation (both give one group rule name), got {model!r}")
    labels = section.get("judge_hand_labels")
    if section.get("judge_model") and labels and not os.path.isfile(labels):
        raise ConfigError("followup.judge_hand_labels", f"an existing CSV of hand-labelled error examples, got {labels!r} "
                                                        "(null for no agreement check)")
    for model in models:
        for run in runs(section, model):
            if not run.label.startswith("progressive_"):
                Condition.parse(run.label)


# ---- paths ------------------------------------------------------------------------------------------------

def results_dir(config: Mapping[str, Any]) -> str:
    """The study's folder under the run's results folder."""
    from wobble.paths import study_root

    return study_root(config, STUDY)


def items_path(root: str, dataset: str) -> str:
    return f"{root}/items/{dataset}.json"


def predictions_path(root: str, model: str, temperature: str, dataset: str, label: str) -> str:
    return f"{root}/predictions/{model}/T{temperature}/{dataset}/{label}.jsonl"


def run_path(root: str, model: str, run: Run) -> str:
    return predictions_path(root, model, run.temperature, run.dataset, run.label)


def extremes_path(root: str, model: str, dataset: str) -> str:
    return f"{root}/scores/{model}/extremes/{dataset}.json"


def summary_path(root: str, model: str) -> str:
    return f"{root}/scores/{model}/summary.csv"


def judge_path(root: str, model: str) -> str:
    return f"{root}/scores/{model}/judge.jsonl"


# ------------------------------------------------------------------------------------------ rule inputs


def _model_input(config: Mapping[str, Any], key: str) -> dict[str, str]:
    """``{"model": dir}`` for a materialized model or a server the job starts (``server:``, whose GPUs the job
    books from it); {} for an OpenAI-compatible server at a ``base_url`` (no weights here)."""
    from wobble.paths import model_dir

    spec = config["models"][key]
    return {} if spec.get("source") == "openai" and not spec.get("server") else {"model": model_dir(config, key)}


def infer_inputs(config: Mapping[str, Any], model: str, dataset: str, run_label: str) -> dict[str, Any]:
    """Inputs of one dialogue run: the item selection, the prepared data, the paper's prompt tables
    (1, 4, 7), the model and, for a Max/Min prompt set, the Direct-Form extremes it is chosen from."""
    from wobble.paths import paper_csv, prepared

    d: dict[str, Any] = {"selection": items_path(results_dir(config), dataset), "data": prepared(dataset),
                         "paper": [paper_csv("followup", f"table{n}") for n in (1, 4, 7)],
                         **_model_input(config, model)}
    if needs_extremes(run_label):
        d["extremes"] = extremes_path(results_dir(config), model, dataset)
    return d


#: The ``followup`` keys a dialogue job's script reads besides its model, dataset and runs.
INFER_KEYS = ("seed", "gate", "shots", "sample_seed", "max_new_tokens", "chunk_size")


def infer_params(config: Mapping[str, Any], model: str, dataset: str, group: list[Run]) -> dict[str, Any]:
    """What a dialogue job's script reads (a run group's or one run's): the model (key and spec), dataset, the
    (temperature, label) of each output in order, and :data:`INFER_KEYS`."""
    section = config["followup"]
    return {"model": model, "dataset": dataset, "runs": [[r.temperature, r.label] for r in group],
            "spec": config["models"][model], **{k: section.get(k) for k in INFER_KEYS}}


def judge_inputs(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Inputs of the error-analysis judge: the model's dialogues it labels, and the judge model."""
    section = config["followup"]
    judge = _model_input(config, section["judge_model"])
    return {"dialogues": [run_path(results_dir(config), model, r) for r in judge_runs(section, model)],
            **({"judge": judge["model"]} if judge else {})}


# ------------------------------------------------------------------------------------------ scorecard

#: paper model -> (its Direct-Form, Progressive-Form full-results tables)
PAPER_FULL_TABLES = {"ChatGPT": (8, 9), "PaLM2-Bison": (10, 11), "Vicuna-13B": (12, 13)}


def scorecard_paper_model(section: Mapping[str, Any], model: str) -> str:
    """The paper model ``model`` stands in for (``followup.paper_models``; ChatGPT when unnamed)."""
    return section["paper_models"].get(model, "ChatGPT")


def scorecard_inputs(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    """One model's summary and the paper's full-results tables of the model it stands in for."""
    from wobble.paths import paper_csv

    direct, progressive = PAPER_FULL_TABLES[scorecard_paper_model(config["followup"], model)]
    return {"summary": summary_path(results_dir(config), model),
            "paper_direct": paper_csv("followup", f"table{direct}"),
            "paper_progressive": paper_csv("followup", f"table{progressive}")}
