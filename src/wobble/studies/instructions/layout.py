"""Which runs the ``instructions`` study makes and where their files live: pure functions of the validated
config, read by ``rules/instructions.smk`` (input functions, small params dicts) and by the study's
table/figure declarations (:mod:`wobble.studies.instructions.spec`).

A *run* is ``(model, taskset, condition, setting, seed)``; each has one split, one predictions file and one
score file. One inference job makes the predictions of every condition of a ``(model, taskset, setting, seed)``
(:func:`infer_outputs`), so the model is loaded once for them. The main model runs every configured
condition x setting on the English and non-English test
tasks (Tables 4, 10, figure), the 4 Para-Instructions conditions in INSTRU-W-EXAM (Table 7) and the
DiversePrompt prompts in INSTRU-WO-EXAM (Tables 8-9); the second model runs INSTRU-W-EXAM only on the
English and non-English tasks (Tables 5, 11), as the paper's T5-11B (§3.1).

Rules receive only the keys they read (config hygiene): :func:`selection_params`,
:func:`split_params`, ... return exactly those, so changing e.g. ``instructions.max_new_tokens`` re-runs
inference but not the task selection or the splits. The params keep the config's key names
(``n_instances_per_task``, ...); a param renamed re-runs its jobs.
"""

from __future__ import annotations

from typing import Any, Mapping

from wobble.paths import model_dir, prepared, study_root

STUDY = "instructions"
#: The study's files under its folder (:func:`results_dir`); the last three are patterns of one run's files.
SELECTION = "splits/selection.json"
TRAIN_PAIRS = "splits/train_pairs.jsonl"
PERTURBATIONS = "splits/table3_perturbations.json"
SPLIT = "splits/{taskset}/{condition}/{setting}/seed{seed}.jsonl"
PREDICTIONS = "predictions/{model}/{taskset}/{condition}/{setting}/seed{seed}.jsonl"
SCORES = "scores/{model}/{taskset}/{condition}/{setting}/seed{seed}.json"

TASKSETS = ("english", "xlingual", "para", "diverse")
PARA_CONDITIONS = ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
PROPOSER_CONDITIONS = ("insert_words", "replace_words")
ALL_SETTINGS = ("wo_exam", "w_exam")


def section(config: Mapping[str, Any]) -> Mapping[str, Any]:
    return config["instructions"]


def results_dir(config: Mapping[str, Any]) -> str:
    """The study's folder under the run's results folder."""
    return study_root(config, STUDY)


def study_file(config: Mapping[str, Any], name: str) -> str:
    """One of the study's files (:data:`SELECTION`, ..., :data:`SCORES`) under its folder."""
    return f"{results_dir(config)}/{name}"


def main_model(cfg: Mapping[str, Any]) -> str:
    """The main model key (the first of ``instructions.models``; the paper's T5-3B)."""
    return cfg["models"][0]


def second_model(cfg: Mapping[str, Any]) -> str | None:
    """The second model key (the second of ``instructions.models``; the paper's T5-11B), or None."""
    return cfg["models"][1] if len(cfg["models"]) > 1 else None


def task_sample(cfg: Mapping[str, Any], taskset: str) -> dict[str, int]:
    """The English / non-English task sample as the selection reads it: tasks per category, instances per task."""
    part = cfg[taskset]
    return {"n_tasks_per_category": part["n_tasks_per_category"], "n_instances_per_task": part["n_instances_per_task"]}


def runs(config: Mapping[str, Any], role: str) -> list[tuple[str, str, str, str, int]]:
    """``(model, taskset, condition, setting, seed)`` of one model role: ``main`` or ``second``."""
    cfg = section(config)
    seeds, conds, settings = cfg["seeds"], cfg["conditions"], cfg["settings"]
    if role == "second":
        model = second_model(cfg)
        if not model:
            return []
        return [(model, ts, c, "w_exam", s) for ts in ("english", "xlingual") for c in conds for s in seeds]
    if role != "main":
        raise KeyError(f"unknown model role {role!r}; expected 'main' or 'second'")
    model = main_model(cfg)
    out = [(model, ts, c, st, s) for ts in ("english", "xlingual") for c in conds for st in settings for s in seeds]
    out += [(model, "para", c, "w_exam", s) for c in taskset_conditions(config, "para") for s in seeds]
    out += [(model, "diverse", c, "wo_exam", s) for c in taskset_conditions(config, "diverse") for s in seeds]
    return out


def score_files(config: Mapping[str, Any], role: str, tasksets, settings=ALL_SETTINGS) -> list[str]:
    """Score files of ``role``'s runs on ``tasksets`` in ``settings``."""
    pattern = study_file(config, SCORES)
    return [pattern.format(model=m, taskset=ts, condition=c, setting=st, seed=s)
            for m, ts, c, st, s in runs(config, role) if ts in tasksets and st in settings]


def proposer_inputs(config: Mapping[str, Any]) -> dict[str, str]:
    """The causal proposer model's directory, unless a masked LM proposes the words."""
    cfg = section(config)
    return {} if cfg.get("masked_lm") else {"proposer": model_dir(config, cfg["proposer_model"])}


def proposer_params(config: Mapping[str, Any]) -> dict[str, Any]:
    cfg = section(config)
    return {"masked_lm": cfg.get("masked_lm"), "proposer_model": cfg.get("proposer_model")}


# ---------------------------------------------------------------------------------- rule inputs/params

def selection_inputs(config: Mapping[str, Any]) -> dict[str, str]:
    return {"tasks": prepared("superni_tasks"), "para": prepared("para_instructions"),
            "diverse": prepared("diverse_prompt")}


def selection_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The keys :func:`wobble.studies.instructions.selection.make_selection` reads."""
    cfg = section(config)
    return {"selection_seed": cfg["selection_seed"],
            "english": task_sample(cfg, "english"), "xlingual": task_sample(cfg, "xlingual"),
            "para": {"tasks": cfg["para"].get("tasks")}, "diverse": {"tasks": cfg["diverse"].get("tasks")}}


def split_inputs(config: Mapping[str, Any], taskset: str, condition: str) -> dict[str, str]:
    if taskset == "diverse":
        return {"selection": study_file(config, SELECTION), "diverse": prepared("diverse_prompt")}
    inputs = {"selection": study_file(config, SELECTION), "tasks": prepared("superni_tasks"),
              "instances": prepared("superni_test")}
    if condition.startswith("paraphrase"):
        inputs["para"] = prepared("para_instructions")
    if condition in PROPOSER_CONDITIONS:
        inputs.update(proposer_inputs(config))
    return inputs


def split_params(config: Mapping[str, Any], taskset: str, condition: str) -> dict[str, Any]:
    """The keys one split reads: its task set's sizes, the source length cap, the proposer if it needs one."""
    cfg = section(config)
    if taskset == "diverse":
        d = cfg["diverse"]
        return {"n_examples_per_task": d["n_examples_per_task"], "max_prompts": d.get("max_prompts")}
    out = {"n_instances_per_task": cfg[taskset]["n_instances_per_task"], "max_source_chars": cfg.get("max_source_chars")}
    if condition in PROPOSER_CONDITIONS:
        out.update(proposer_params(config))
    return out


def table3_inputs(config: Mapping[str, Any]) -> dict[str, str]:
    return {"tasks": prepared("superni_tasks"), **proposer_inputs(config)}


def table3_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """Table 3's perturbation examples: the proposer and the first run seed."""
    return {**proposer_params(config), "seed": section(config)["seeds"][0]}


def finetune_params(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``instructions.finetune`` plus the model's finetune method (lora / full)."""
    return {**section(config)["finetune"], "method": config["models"][model]["finetune"]["method"]}


def infer_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """What generation reads: ``{"max_new_tokens": instructions.max_new_tokens}``."""
    return {"max_new_tokens": section(config)["max_new_tokens"]}


def train_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """``instructions.train``, as the train-pairs script reads it."""
    return dict(section(config)["train"])


def taskset_conditions(config: Mapping[str, Any], taskset: str) -> tuple[str, ...]:
    """The conditions a task set is run under (the same for every model and setting that runs it)."""
    if taskset == "para":
        return PARA_CONDITIONS
    if taskset == "diverse":
        return ("diverse_prompt",)
    if taskset not in TASKSETS:
        raise KeyError(f"unknown task set {taskset!r}; expected one of {TASKSETS}")
    return tuple(section(config)["conditions"])


def _fill(pattern: str, **values: str) -> str:
    """``pattern`` with the named wildcards filled in and the others left for Snakemake."""
    for key, value in values.items():
        pattern = pattern.replace("{" + key + "}", str(value))
    return pattern


def infer_splits(config: Mapping[str, Any], taskset: str) -> list[str]:
    """One inference job's splits: every condition of ``taskset`` (wildcards setting and seed left open)."""
    pattern = study_file(config, SPLIT)
    return [_fill(pattern, taskset=taskset, condition=c) for c in taskset_conditions(config, taskset)]


def infer_outputs(config: Mapping[str, Any], taskset: str) -> list[str]:
    """One inference job's predictions, in the order of :func:`infer_splits` (wildcards model, setting, seed)."""
    pattern = study_file(config, PREDICTIONS)
    return [_fill(pattern, taskset=taskset, condition=c) for c in taskset_conditions(config, taskset)]


def score_meta(config: Mapping[str, Any], model: str, taskset: str, condition: str, setting: str,
               seed: int | str) -> dict[str, Any]:
    """What a score file says about itself (the tables check and footnote it)."""
    from wobble.models.describe import model_label

    return {"model": model, "model_label": model_label(config["models"], model), "taskset": taskset,
            "condition": condition, "setting": setting, "seed": int(seed), "scale": config["scale"]}


# ----------------------------------------------------------------------------- table / figure inputs

#: output -> (model role, task sets, settings) of the score files it reads.
SCORE_INPUTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "table4": ("main", ("english",), ALL_SETTINGS),
    "table5": ("second", ("english",), ALL_SETTINGS),
    "table7": ("main", ("para",), ("w_exam",)),
    "table8": ("main", ("diverse",), ("wo_exam",)),
    "table9": ("main", ("diverse",), ("wo_exam",)),
    "table10": ("main", ("xlingual",), ALL_SETTINGS),
    "table11": ("second", ("xlingual",), ALL_SETTINGS),
    "figure_drop": ("main", ("english",), ALL_SETTINGS),
}


def output_inputs(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Named inputs of one table or figure (besides its paper CSVs): only what it needs, so it re-renders
    alone."""
    if name == "table1":
        return {"tasks": prepared("superni_tasks"), "instances": prepared("superni_test")}
    if name == "table2":
        return {"tasks": prepared("superni_tasks")}
    if name == "table3":
        return {"perturbations": study_file(config, PERTURBATIONS)}
    if name == "table6":
        return {"para": prepared("para_instructions")}
    if name in SCORE_INPUTS:
        role, tasksets, settings = SCORE_INPUTS[name]
        out: dict[str, Any] = {"scores": score_files(config, role, tasksets, settings)}
        if name not in ("table8", "table9", "figure_drop"):  # the selection says why a category has no data
            out["selection"] = study_file(config, SELECTION)
        return out
    raise KeyError(f"instructions has no table or figure {name!r}")


def inputs_of(name: str):
    """``inputs(config)`` of one output's declaration."""
    def inputs(config: Mapping[str, Any]) -> dict[str, Any]:
        return output_inputs(name, config)

    inputs.__name__ = f"{name}_inputs"
    return inputs


# ------------------------------------------------------------------------------------------ scorecard


def scorecard_role(config: Mapping[str, Any], model: str) -> str:
    return "main" if model == main_model(section(config)) else "second"


def scorecard_models(config: Mapping[str, Any]) -> list[str]:
    """The models the scorecard reports on: the main model and the second model (if any)."""
    cfg = section(config)
    return [m for m in (main_model(cfg), second_model(cfg)) if m]


def scorecard_inputs(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A model's English predictions (every condition and setting it ran) and the paper table of its twin."""
    role = scorecard_role(config, model)
    pattern = study_file(config, PREDICTIONS)
    preds = [pattern.format(model=m, taskset=ts, condition=c, setting=st, seed=s)
             for m, ts, c, st, s in runs(config, role) if ts == "english"]
    return {"english": preds, "paper": f"paper/instructions/table{4 if role == 'main' else 5}.csv"}
