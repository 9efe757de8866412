"""Glue between the workflow's rules and the instructions study's pure functions.

Kept out of ``scripts/`` so it can be tested: the task selection written to ``selection.json``, the
word proposer for insert/replace (masked LM when configured, else the default causal model), and the
score record of one predictions file.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from wobble.studies.instructions.conditions import PAPER_CONDITIONS, apply_condition_batch
from wobble.studies.instructions.splits import select_tasks
from wobble.metrics.superni import score_records

TABLE3_TASK = "task1557_jfleg_answer_generation"  # the paper labels it "grammar error correction"


def make_selection(tasks: Sequence[Mapping[str, Any]], para: Sequence[Mapping[str, Any]],
                   diverse: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any]) -> dict:
    """Which tasks each task set evaluates, and which categories have no usable data (with the reason)."""
    seed = cfg.get("selection_seed", 0)
    english, miss_en = select_tasks(tasks, "default", cfg["english"]["n_tasks_per_category"],
                                    cfg["english"]["n_instances_per_task"], seed, include=(TABLE3_TASK,))
    xlingual, miss_x = select_tasks(tasks, "xlingual", cfg["xlingual"]["n_tasks_per_category"],
                                    cfg["xlingual"]["n_instances_per_task"], seed)
    by_task = {t["task"]: t for t in tasks}
    para_wanted = cfg["para"].get("tasks") or [p["task"] for p in para]
    para_tasks, para_missing = [], {}
    for name in para_wanted:
        t = by_task.get(name)
        if t is None or not t.get("definition") or t["n_instances"] < 1:
            para_missing[name] = "no instances in the data"
        else:
            para_tasks.append(name)
    diverse_tasks = cfg["diverse"].get("tasks") or sorted(d["task"] for d in diverse)
    return {"english": english, "xlingual": xlingual, "para": sorted(para_tasks), "diverse": list(diverse_tasks),
            "missing": {"english": miss_en, "xlingual": miss_x, "para": para_missing}}


def make_proposer(masked_lm: str | None, proposer_model_dir: str | None, proposer_key: str | None):
    """Word proposer for insert/replace_words: a masked LM if configured (paper), else a causal LM."""
    from wobble.studies.instructions.proposers import CausalLMProposer, MaskedLMProposer

    if masked_lm:
        return MaskedLMProposer(masked_lm)
    if not proposer_model_dir:
        raise ValueError("insert/replace_words need instructions.masked_lm or instructions.proposer_model")
    from wobble.backends import load_backend

    return CausalLMProposer(load_backend(proposer_model_dir, proposer_key))


def perturbation_examples(task_record: Mapping[str, Any], pool: Mapping[str, str], seed: int, proposer) -> dict:
    """Every paper condition applied by our code to one task's definition (Table 3)."""
    task, definition = task_record["task"], task_record["definition"]
    return {c.key: apply_condition_batch(c, {task: definition}, seed, definitions_by_task=pool,
                                         proposer=proposer if c.needs_proposer else None)[task]
            for c in PAPER_CONDITIONS}


def score_predictions(preds: Iterable[Mapping[str, Any]], meta: Mapping[str, Any]) -> dict:
    """Score one predictions file (official SuperNI metrics) and attach its identifying metadata.

    DiversePrompt files are also scored per (task, prompt): ``by_prompt`` keyed ``"<task>::<i>"``.
    """
    preds = list(preds)
    recs = [{"task": p["task"], "prediction": p["output"], "references": p["references"],
             "category": p.get("category"), "language": p.get("language")} for p in preds]
    out = dict(meta)
    out.update(score_records(recs))
    out["tasks"] = {p["task"]: {"category_abbrev": p.get("category_abbrev"), "metric": p.get("metric"),
                                "language": p.get("language")} for p in preds}
    if preds and "prompt_index" in preds[0]:
        by_prompt = [dict(r, task=f"{p['task']}::{p['prompt_index']}") for r, p in zip(recs, preds)]
        out["by_prompt"] = score_records(by_prompt)["by_task"]
        out["prompts"] = {f"{p['task']}::{p['prompt_index']}": p["definition"] for p in preds}
    return out
