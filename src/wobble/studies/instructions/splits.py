"""Evaluation splits of the instructions study: which tasks and instances, and the exact prompts.

A split is a deterministic function of (prepared data, config, condition, setting, seed):

* **task sets** — ``english`` / ``xlingual``: ``n_tasks_per_category`` SuperNI test tasks per category,
  drawn with a seeded generator among tasks that have a definition and at least ``n_instances_per_task``
  instances (fully mirrored / truncated files preferred over partial ones); ``para``: the
  Para-Instructions tasks; ``diverse``: the DiversePrompt tasks.
* **instances** — the first ``n_instances_per_task`` instances of each task in file order (SuperNI puts the
  label-balanced eval instances first), the same for every condition and seed, so conditions differ only
  in the definition the model sees.
* **prompt** — Tk-Instruct's encoding (:mod:`wobble.studies.instructions.prompts`) of the condition's definition,
  with 0 (``wo_exam``) or 2 (``w_exam``) positive examples. Examples are dropped, last first, while the
  source is longer than ``max_source_chars`` — the collator's own rule, with characters standing in for
  tokens (documented deviation: the split does not depend on a tokenizer).

Split record: ``uid, taskset, task, category, category_abbrev, metric, language, condition, setting,
seed, instance_id, definition, prompt, references``; DiversePrompt records add ``prompt_index``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from wobble.errors import DataError
from wobble.seeding import make_rng
from wobble.studies.instructions.conditions import apply_condition_batch, get_condition
from wobble.studies.instructions.prompts import SETTING_LABELS, SETTINGS, encode_instance

USABLE_STATUS = ("full", "truncated", "partial")


def select_tasks(tasks: Iterable[Mapping[str, Any]], split: str, n_tasks_per_category: int, n_instances_per_task: int,
                 seed: int = 0, include: Sequence[str] = ()) -> tuple[list[str], dict[str, str]]:
    """Pick ``n_tasks_per_category`` tasks of ``split`` per category among those with at least
    ``n_instances_per_task`` instances; returns (tasks, {category: why none}).

    Tasks in ``include`` are taken first (e.g. task1557, the paper's running example) when eligible.
    """
    by_cat: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    all_cats: set[str] = set()
    for t in tasks:
        if t["split"] != split:
            continue
        all_cats.add(t["category_abbrev"])
        if t.get("definition") and t["n_instances"] >= n_instances_per_task and t["data_status"] in USABLE_STATUS:
            by_cat[t["category_abbrev"]].append(t)
    chosen: list[str] = []
    missing: dict[str, str] = {}
    for cat in sorted(all_cats):
        pool = sorted(by_cat.get(cat, []), key=lambda t: (t["data_status"] == "partial", t["task"]))
        if not pool:
            missing[cat] = f"no task with a definition and >= {n_instances_per_task} instances in the data"
            continue
        first = [t["task"] for t in pool if t["task"] in include]
        preferred = [t["task"] for t in pool if t["data_status"] != "partial" and t["task"] not in first]
        rest = [t["task"] for t in pool if t["data_status"] == "partial" and t["task"] not in first]
        rng = make_rng("select", split, cat, seed)
        rng.shuffle(preferred)
        rng.shuffle(rest)
        chosen.extend((first + preferred + rest)[:n_tasks_per_category])
    return sorted(chosen), missing


def first_instances(instances: Iterable[Mapping[str, Any]], tasks: Sequence[str],
                    n_instances_per_task: int) -> dict[str, list[dict]]:
    """The first ``n_instances_per_task`` instances (file order) of each task in ``tasks``."""
    wanted = set(tasks)
    out: dict[str, list[dict]] = {t: [] for t in tasks}
    for inst in instances:
        if inst["task"] in wanted and len(out[inst["task"]]) < n_instances_per_task:
            out[inst["task"]].append(dict(inst))
    return out


#: The SuperNI split (language subset) of each task set's tasks: shuffle_instructions draws from it.
TASKSET_SPLIT = {"english": "default", "xlingual": "xlingual", "para": "default"}


def shuffle_pool(task_records: Mapping[str, Mapping[str, Any]], taskset: str) -> dict[str, str]:
    """task -> definition of every test task of ``taskset``'s language subset that has one: the pool
    shuffle_instructions draws another task's definition from.

    The paper (§3.1) replaces "the original task definition with the definition of a randomly chosen task";
    the authors' fork draws it from the same split file as the task (English test tasks for an English task,
    the non-English ones for a non-English task), so a non-English task never gets an English definition.
    """
    if taskset not in TASKSET_SPLIT:
        raise KeyError(f"no SuperNI subset for task set {taskset!r}; expected one of {sorted(TASKSET_SPLIT)}")
    split = TASKSET_SPLIT[taskset]
    return {t: r["definition"] for t, r in task_records.items() if r.get("definition") and r.get("split") == split}


def fit_examples(definition: str, pos_examples: Sequence[Mapping[str, str]], instance_input: str, n_pos: int,
                 max_source_chars: int | None) -> str:
    fits = None if max_source_chars is None else (lambda s: len(s) <= max_source_chars)
    return encode_instance(definition, pos_examples, instance_input, n_pos=n_pos, fits=fits)


def build_split(taskset: str, condition: str, setting: str, seed: int, task_records: Mapping[str, Mapping[str, Any]],
                instances: Mapping[str, Sequence[Mapping[str, Any]]], *, pool: Mapping[str, str],
                proposer: Any = None, paraphrases: Mapping[str, Sequence[str]] | None = None,
                max_source_chars: int | None = None) -> list[dict]:
    """Prompt records for one (task set, condition, setting, seed).

    ``task_records``: task -> a superni_tasks record (definition, pos_examples, category...).
    ``pool``: task -> original definition of every test task (for shuffle_instructions).
    """
    if setting not in SETTING_LABELS:
        raise KeyError(f"unknown setting {setting!r}; expected one of {sorted(SETTING_LABELS)}")
    cond = get_condition(condition)
    tasks = sorted(instances)
    defs = apply_condition_batch(cond, {t: task_records[t]["definition"] for t in tasks}, seed,
                                 definitions_by_task=pool, proposer=proposer, paraphrases=paraphrases)
    n_pos = SETTINGS[SETTING_LABELS[setting]]
    out = []
    for task in tasks:
        tr = task_records[task]
        for inst in instances[task]:
            if not inst.get("outputs"):
                raise DataError("superni_test", inst.get("id"), "a non-empty 'outputs' list")
            out.append({
                "uid": f"{task}/{inst['id']}",
                "taskset": taskset, "task": task, "category": tr["category"],
                "category_abbrev": tr["category_abbrev"], "metric": tr["metric"], "language": tr["language"],
                "condition": cond.key, "setting": setting, "seed": seed, "instance_id": inst["id"],
                "definition": defs[task],
                "prompt": fit_examples(defs[task], tr["pos_examples"], inst["input"], n_pos, max_source_chars),
                "references": list(inst["outputs"]),
            })
    return out


def build_diverse_split(tasks: Iterable[Mapping[str, Any]], task_names: Sequence[str] | None,
                        n_examples_per_task: int, seed: int, max_prompts: int | None = None) -> list[dict]:
    """DiversePrompt: every prompt of each task as the definition, no demonstrations (INSTRU-WO-EXAM)."""
    recs = {t["task"]: t for t in tasks}
    names = sorted(recs) if not task_names else list(task_names)
    out = []
    for name in names:
        if name not in recs:
            raise DataError("diverse_prompt", name, f"a DiversePrompt task (known: {', '.join(sorted(recs))})")
        t = recs[name]
        prompts = t["prompts"][:max_prompts] if max_prompts else t["prompts"]
        for i, prompt_text in enumerate(prompts, 1):
            for ex in t["eval_examples"][:n_examples_per_task]:
                out.append({
                    "uid": f"{name}/{i}/{ex['id']}", "taskset": "diverse", "task": name, "category": None,
                    "category_abbrev": None, "metric": t["metric"], "language": "English",
                    "condition": f"diverse_prompt_{i}", "prompt_index": i, "setting": "wo_exam", "seed": seed,
                    "instance_id": ex["id"], "definition": prompt_text,
                    "prompt": encode_instance(prompt_text, [], ex["input"], n_pos=0),
                    "references": list(ex["outputs"]),
                })
    return out


def training_pairs(instances: Iterable[Mapping[str, Any]], seed: int, n_instances_per_task: int | None = None,
                   max_source_chars: int | None = None) -> list[dict]:
    """Tk-Instruct finetuning pairs (definition + 2 positive examples -> one reference, seeded choice)."""
    counts: dict[str, int] = defaultdict(int)
    out = []
    for inst in instances:
        if n_instances_per_task is not None and counts[inst["task"]] >= n_instances_per_task:
            continue
        counts[inst["task"]] += 1
        rng = make_rng("train-target", seed, inst["task"], inst["id"])
        out.append({"task": inst["task"], "id": inst["id"],
                    "source": fit_examples(inst["definition"], inst["pos_examples"], inst["input"], 2, max_source_chars),
                    "target": rng.choice(inst["outputs"])})
    return out
