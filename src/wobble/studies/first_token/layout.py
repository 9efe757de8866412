"""Where the ``first_token`` study keeps things and what a config asks it to run: result paths (under the study's
folder ``root``, :func:`wobble.paths.study_root`), the (model, temperature) runs, the evaluators a config builds, each rule's named inputs, and the cross-field
checks of the validated ``first_token:`` section (every default lives in its schema fragment)."""

from __future__ import annotations

from typing import Any, Callable, Mapping


from wobble.errors import ConfigError
from wobble.studies.first_token.prompts import (
    CONSTRAINTS,
)


#: Salt of the question sample and classifier splits (kept from the first release: same samples).
SAMPLE_SALT = "wobble.first_token.sample"
#: Prepared datasets the study reads.
DATASETS = ("opinionqa_414", "opinionqa_annotated", "opinionqa_paper_mapping")

#: The paper's six chat models: canonical id -> name in each of the paper's files.
PAPER_MODELS: dict[str, dict[str, str]] = {
    "llama2-7b-chat": {"mapping": "Llama2-7b-Chat", "table3": "Llama2 7b", "label": "Llama2-7b-Chat"},
    "llama2-13b-chat": {"mapping": "Llama2-13b-Chat", "table3": "Llama2 13b", "label": "Llama2-13b-Chat"},
    "llama2-70b-chat": {"mapping": "Llama2-70b-Chat", "table3": "Llama2 70b", "label": "Llama2-70b-Chat"},
    "mistral-7b-instruct-v0.1": {"mapping": "Mistral-7b-Instruct-V0.1", "table3": "Mistral v0.1",
                                 "label": "Mistral-7b-Instruct-v0.1"},
    "mistral-7b-instruct-v0.2": {"mapping": "Mistral-7b-Instruct-V0.2", "table3": "Mistral v0.2",
                                 "label": "Mistral-7b-Instruct-v0.2"},
    "mixtral-8x7b-instruct-v0.1": {"mapping": "Mixtral-8x7b-Instruct-V0.1", "table3": "Mixtral",
                                   "label": "Mixtral-8x7b-Instruct-v0.1"},
}

# ------------------------------------------------------------------------------------------ config


def evaluator_order(name: str) -> tuple:
    """Sort key of an evaluator: String Matching, wobble's rules, the judges by shots, the PEFT ones by samples."""
    if name == "paper_regex":
        return (0, 0)
    if name == "string_match":
        return (0, 1)
    if name.startswith("judge_"):
        return (1, int(name[len("judge_"):-len("shot")]))
    return (2, int(name[len("peft_"):]))


def evaluator_names(cfg: Mapping[str, Any]) -> list[str]:
    """The evaluators a config builds: the paper's regex and wobble's rules, judge k-shot per ``judge_shots``,
    PEFT per size."""
    names = ["paper_regex", "string_match"]
    if cfg.get("judge_model"):
        names += [f"judge_{int(k)}shot" for k in sorted(set(cfg.get("judge_shots") or []))]
    if cfg.get("classifier_base"):
        names += [f"peft_{int(n)}" for n in sorted(set(cfg.get("peft_train_sizes") or []))]
    return names


def check_section(cfg: Mapping[str, Any]) -> None:
    """Cross-field checks of the validated ``first_token`` section (the schema fragment holds every default
    and the per-key types); ConfigError naming the key and what was expected."""
    if not cfg["models"]:
        raise ConfigError("first_token.models", "at least one model key")
    bad = [c for c in cfg["constraints"] if c not in CONSTRAINTS]
    if bad or not cfg["constraints"]:
        raise ConfigError("first_token.constraints", f"a non-empty subset of {CONSTRAINTS}, got {cfg['constraints']}")
    if any(float(t) < 0 for t in all_temperatures(cfg)):
        raise ConfigError("first_token.temperatures", f"temperatures >= 0, got {all_temperatures(cfg)}")
    if temp_tag(cfg["temperature"]) in {temp_tag(t) for t in cfg["temperatures"]}:
        raise ConfigError("first_token.temperatures", f"the sweep's other temperatures only: the main one "
                                                       f"(first_token.temperature {cfg['temperature']}) is not listed, "
                                                       f"got {cfg['temperatures']}")
    tags = [temp_tag(t) for t in cfg["temperatures"]]
    if len(set(tags)) != len(tags):
        raise ConfigError("first_token.temperatures", f"distinct values (2 decimals), got {cfg['temperatures']}")
    bad = [c for c in cfg["sweep_constraints"] if c not in cfg["constraints"]]
    if bad:
        raise ConfigError("first_token.sweep_constraints", f"a subset of first_token.constraints, got {bad}")
    if cfg["n_questions"] is not None and int(cfg["n_questions"]) < 1:
        raise ConfigError("first_token.n_questions", f"a positive integer or null, got {cfg['n_questions']}")
    if int(cfg["n_shuffles"]) < 1:
        raise ConfigError("first_token.n_shuffles", f"a positive integer, got {cfg['n_shuffles']}")
    names = evaluator_names(cfg)
    if cfg["classifier"] != "auto" and cfg["classifier"] not in names:
        raise ConfigError("first_token.classifier",
                          f"'auto' or one of the configured evaluators {names}, got {cfg['classifier']!r}")
    unknown = sorted(set(cfg["paper_models"].values()) - set(PAPER_MODELS))
    if unknown:
        raise ConfigError("first_token.paper_models", f"values among {sorted(PAPER_MODELS)}, got {unknown}")


def temp_tag(t: float | str) -> str:
    """File-name form of a temperature: ``0.0 -> "0.00"``, ``0.7 -> "0.70"``."""
    return f"{float(t):.2f}"


def all_temperatures(cfg: Mapping[str, Any]) -> list[float]:
    """Every temperature the study runs: the main one (``temperature``) first, then the sweep's others
    (``temperatures``)."""
    return [float(cfg["temperature"]), *(float(t) for t in cfg["temperatures"])]


def main_temperature(cfg: Mapping[str, Any]) -> str:
    """The temperature of the main analyses (``first_token.temperature``), as a tag."""
    return temp_tag(cfg["temperature"])


def run_constraints(cfg: Mapping[str, Any], tag: str) -> list[str]:
    """Constraint levels run at a temperature: all at the main one, ``sweep_constraints`` elsewhere."""
    return list(cfg["constraints"]) if tag == main_temperature(cfg) else list(cfg["sweep_constraints"])


def runs(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (model, temperature tag) the study infers."""
    return [(m, temp_tag(t)) for m in cfg["models"] for t in all_temperatures(cfg)]


def predictions_path(root: str, model: str, tag: str) -> str:
    return f"{root}/predictions/{model}/t{tag}.jsonl"


def labeled_path(root: str, model: str, tag: str) -> str:
    return f"{root}/scores/labeled/{model}/t{tag}.jsonl"


#: Classifier-data parts an evaluator is run on: ``test`` (reported, Tables 2/4) and ``select`` (training
#: responses the study's classifier is chosen on).
CLASSIFIER_PARTS = ("test", "select")


def evaluator_path(root: str, name: str, part: str = "test") -> str:
    return f"{root}/predictions/classifiers/{part}/{name}.jsonl"


def evaluator_data(root: str, name: str, part: str) -> str:
    """The annotated responses an evaluator is scored on: every test response for the rule-based ones (no
    model, so no reason to sample), the seeded per-model sample otherwise; ``select`` for the choice."""
    if part == "select":
        return f"{root}/splits/classifier_select.jsonl"
    rule_based = name in ("paper_regex", "string_match")
    return f"{root}/splits/classifier_test_all.jsonl" if rule_based else f"{root}/splits/classifier_test.jsonl"


def peft_dir(root: str, n: int | str) -> str:
    return f"{root}/finetune/classifier_peft_{n}"


def infer_inputs(cfg: Mapping[str, Any], root: str, model: str, tag: str,
                 model_dir: Callable[[str], str]) -> dict[str, str]:
    """Inputs of the infer rule: model, prompts, and at a sweep temperature the main run (first tokens)."""
    inputs = {"model": model_dir(model), "prompts": f"{root}/splits/prompts.jsonl"}
    if tag != main_temperature(cfg):
        inputs["reuse"] = predictions_path(root, model, main_temperature(cfg))
    return inputs


def evaluator_models(name: str, cfg: Mapping[str, Any], root: str, model_dir: Callable[[str], str]) -> dict[str, str]:
    """Model inputs of an evaluator: ``{"judge": dir}``, ``{"classifier": adapter dir, "base": dir}`` or {}."""
    if name.startswith("judge_"):
        return {"judge": model_dir(cfg["judge_model"])}
    if name.startswith("peft_"):
        return {"classifier": peft_dir(root, name[len("peft_"):]), "base": model_dir(cfg["classifier_base"])}
    return {}


def label_inputs(cfg: Mapping[str, Any], root: str, model: str, tag: str,
                 model_dir: Callable[[str], str]) -> dict[str, Any]:
    """Inputs of the label rule: the predictions, the classifier scores and the models it may run."""
    inputs: dict[str, Any] = {"predictions": predictions_path(root, model, tag),
                              "scores": f"{root}/scores/classifiers.jsonl"}
    candidates = evaluator_names(cfg) if cfg["classifier"] == "auto" else [cfg["classifier"]]
    for name in candidates:
        for key, path in evaluator_models(name, cfg, root, model_dir).items():
            inputs[f"{key}_{name}"] = path
    return inputs
