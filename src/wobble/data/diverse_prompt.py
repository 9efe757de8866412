"""DiversePrompt (Instruction Induction, Honovich et al. 2022) as used by Gu et al. (source ``diverse_prompt``).

The source folder holds ``index.tsv`` (per task: paper name, counts, official metric) and
``tasks/<task>.json`` (``task``, ``paper_name``, ``prompts``, ``official_ii_metric``, ``eval_examples``,
``fork_eval_examples`` and two ``*_source`` notes). Quirk: the Robustness fork parsed its test items
with ``str.strip('Input: ')``, which strips CHARACTERS and corrupts 860 of 2,400 items; those items
carry ``as_loaded_by_fork`` with exactly what the fork fed the model (use only to reproduce the paper
bit-for-bit).

``diverse_prompt`` record (one per task, index.tsv order, 24 records):

* ``task`` (str): e.g. ``"antonyms"``; ``paper_name`` (str): the label of the paper's Table 8.
* ``metric`` (str): the metric the paper reports for the task in Table 8, ``"exact_match"`` or
  ``"rougeL"`` (Tk-Instruct metrics, see ``PAPER_METRICS``).
* ``official_ii_metric`` (str): the instruction-induction metric (``exact_match``, ``f1``,
  ``exact_set``, ``contains``), for reference.
* ``prompts`` (list[str]): the human-written instructions, in the fork's order (``<task>_<i>``).
* ``eval_examples`` (list of {``id`` str, ``input`` str, ``outputs`` list[str]}): the held-out execution set.
* ``fork_eval_examples`` (list of {``id`` str, ``input`` str, ``outputs`` [str], ``as_loaded_by_fork``
  None | {``input``, ``output``}}): the items the fork evaluated on (single gold answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from wobble.data._util import expect, get, load_json, read_tsv, str_list

INDEX_COLUMNS = ("task", "paper_name", "n_prompts", "n_eval_examples", "n_fork_eval_examples", "official_ii_metric")

#: Metric per task as printed in the paper's Table 8 (ROUGE-L block vs EXACTMATCH block).
PAPER_METRICS = {
    "active_to_passive": "rougeL", "cause_and_effect": "rougeL", "common_concept": "rougeL",
    "informal_to_formal": "rougeL", "negation": "rougeL", "taxonomy_animal": "rougeL",
    "translation_en-de": "rougeL", "translation_en-es": "rougeL", "translation_en-fr": "rougeL",
    "antonyms": "exact_match", "diff": "exact_match", "first_word_letter": "exact_match",
    "larger_animal": "exact_match", "letters_list": "exact_match", "num_to_verbal": "exact_match",
    "orthography_starts_with": "exact_match", "rhymes": "exact_match", "second_word_letter": "exact_match",
    "sentence_similarity": "exact_match", "sentiment": "exact_match", "singular_to_plural": "exact_match",
    "sum": "exact_match", "synonyms": "exact_match", "word_in_context": "exact_match",
}


def load_tasks(src: Path) -> Iterator[dict]:
    src = Path(src)
    index_path = src / "index.tsv"
    for lineno, row in read_tsv(index_path, columns=INDEX_COLUMNS):
        rec = f"line {lineno} ({row['task']})"
        task = row["task"]
        expect(task in PAPER_METRICS, index_path, rec, f"a DiversePrompt task among {sorted(PAPER_METRICS)}")
        for col in INDEX_COLUMNS[2:5]:
            expect(row[col].isdigit(), index_path, rec, f"{col} an integer, got {row[col]!r}")
        path = src / "tasks" / f"{task}.json"
        data = load_json(path, f"the DiversePrompt task file of {task}")
        get(path, "task", data, "task", str, check=lambda v: v == task, expected=repr(task))
        prompts = str_list(path, "prompts", data, "prompts")
        expect(all(p.strip() for p in prompts), path, "prompts", "non-blank prompts")
        evals = []
        for i, ex in enumerate(get(path, "eval_examples", data, "eval_examples", list)):
            r = f"eval_examples[{i}]"
            evals.append({"id": get(path, r, ex, "id", str), "input": get(path, r, ex, "input", str),
                          "outputs": str_list(path, r, ex, "outputs")})
        forks = []
        for i, ex in enumerate(get(path, "fork_eval_examples", data, "fork_eval_examples", list)):
            r = f"fork_eval_examples[{i}]"
            loaded = get(path, r, ex, "as_loaded_by_fork", dict, optional=True)
            if loaded is not None:
                loaded = {"input": get(path, r + ".as_loaded_by_fork", loaded, "input", str),
                          "output": get(path, r + ".as_loaded_by_fork", loaded, "output", str)}
            forks.append({"id": get(path, r, ex, "id", str), "input": get(path, r, ex, "input", str),
                          "outputs": [get(path, r, ex, "output", str)], "as_loaded_by_fork": loaded})
        for name, items, col in (("prompts", prompts, "n_prompts"), ("eval_examples", evals, "n_eval_examples"),
                                 ("fork_eval_examples", forks, "n_fork_eval_examples")):
            expect(len(items) == int(row[col]), path, name, f"{row[col]} items (index.tsv {col}), got {len(items)}")
        for name, items in (("eval_examples", evals), ("fork_eval_examples", forks)):
            ids = [x["id"] for x in items]
            expect(len(set(ids)) == len(ids), path, name, "unique ids")
        paper_name = get(path, "paper_name", data, "paper_name", str, check=lambda v: v == row["paper_name"],
                         expected=f"{row['paper_name']!r} (index.tsv)")
        official = get(path, "official_ii_metric", data, "official_ii_metric", str,
                       check=lambda v: v == row["official_ii_metric"], expected=f"{row['official_ii_metric']!r} (index.tsv)")
        yield {"task": task, "paper_name": paper_name, "metric": PAPER_METRICS[task], "official_ii_metric": official,
               "prompts": prompts, "eval_examples": evals, "fork_eval_examples": forks}
