"""Recipe ``diverse_prompt``: ``index.tsv`` and ``tasks/<task>.json`` of the ``diverse_prompt`` source.

Built from orhonovich/instruction-induction, three files per task
(24 tasks): ``data/annotations/<task>.json`` (the human-written gold instructions), ``data/raw/execute/<task>.json``
(the held-out execution set) and ``data/induction_input/<task>.json`` (the 5-shot induction prompts that the
Robustness fork, jiashenggu/Tk-Instruct, evaluated on). The steps follow the mirror's ``diverse_prompt/README.md``:

* ``prompts``: the ``annotations`` list, in file order (the fork's ``<task>_<i>`` keeps that order).
* ``eval_examples``: one per execute record, in file order: ``{"id", "input", "outputs", "raw"}`` with ``raw``
  the record untouched. ``outputs`` follows the upstream ``prepare_for_execution.py``: ``other_rhymes`` for
  rhymes, ``possible_translations`` for the translation tasks, ``possible_outputs`` for word_in_context, and
  ``[output]`` elsewhere — sentence_similarity's execute file has no ``possible_outputs``, so ``[output]``.
  cause_and_effect: each pair gives two inputs, ``"Sentence 1: A Sentence 2: B"`` cause-first (id
  ``<k>.1``) then effect-first (``<k>.2``), the gold answer being ``[cause]``. common_concept: the input is
  the items joined with ``", "`` and the answers are ``all_common_concepts``.
* ``fork_eval_examples``: for each of the first 100 ``induction_input`` entries, the LAST ``Input: ...\\n
  Output: ...`` demonstration of ``metadata.examples_seen``, parsed cleanly into ``{"id", "input",
  "output"}``. The fork's loader used ``str.strip('Input: ')`` / ``str.strip('Output: ')``, which strip those
  *characters* from both ends; where that changes either field, the item also gets ``as_loaded_by_fork`` with
  exactly what the fork fed the model.
* ``official_ii_metric``: upstream ``evaluate.py``'s ``TASK_TO_METRIC`` (default ``em``), names spelled out
  (``em`` -> exact_match, ``es`` -> exact_set). ``paper_name``: the task name with spaces, except
  orthography_starts_with, which the paper (Table 8) calls "orthography".
* Task files: ``json.dumps(indent=2, ensure_ascii=False)`` plus a newline; ``index.tsv``: one row per task.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


TASKS = (
    "active_to_passive", "antonyms", "cause_and_effect", "common_concept", "diff", "first_word_letter",
    "informal_to_formal", "larger_animal", "letters_list", "negation", "num_to_verbal", "orthography_starts_with",
    "rhymes", "second_word_letter", "sentence_similarity", "sentiment", "singular_to_plural", "sum", "synonyms",
    "taxonomy_animal", "translation_en-de", "translation_en-es", "translation_en-fr", "word_in_context",
)
#: upstream evaluate.py TASK_TO_METRIC, with its abbreviations spelled out; every other task uses exact match
METRICS = {"common_concept": "f1", "informal_to_formal": "f1", "orthography_starts_with": "exact_set",
           "taxonomy_animal": "exact_set", "synonyms": "contains"}
#: upstream prepare_for_execution.py TASK_TO_ANSWERS, less sentence_similarity (its execute file lacks the field)
ANSWER_KEYS = {"rhymes": "other_rhymes", "translation_en-de": "possible_translations",
               "translation_en-es": "possible_translations", "translation_en-fr": "possible_translations",
               "word_in_context": "possible_outputs"}
PAPER_NAMES = {"orthography_starts_with": "orthography"}
FORK_LIMIT = 100
EVAL_SOURCE = "instruction-induction data/raw/execute (held-out execution set)"
FORK_SOURCE = ("last Input/Output demonstration of each of the first 100 entries of data/induction_input "
               "(what the Robustness fork evaluated on)")
INPUT, OUTPUT = "Input: ", "Output: "


def input_names(task: str) -> tuple[str, str, str]:
    return (f"data/annotations/{task}.json", f"data/raw/execute/{task}.json", f"data/induction_input/{task}.json")


def eval_examples(task: str, execute: Mapping) -> list[dict]:
    out = []
    for key, rec in execute["examples"].items():
        if task == "cause_and_effect":
            cause, effect = rec["cause"], rec["effect"]
            for n, (a, b) in enumerate(((cause, effect), (effect, cause)), 1):
                out.append({"id": f"{key}.{n}", "input": f"Sentence 1: {a} Sentence 2: {b}", "outputs": [cause],
                            "raw": rec})
            continue
        if task == "common_concept":
            inp, outputs = ", ".join(rec["items"]), rec["all_common_concepts"]
        else:
            inp = rec["input"]
            outputs = rec[ANSWER_KEYS[task]] if task in ANSWER_KEYS else [rec["output"]]
        out.append({"id": key, "input": inp, "outputs": outputs, "raw": rec})
    return out


def last_demo(examples_seen: str) -> tuple[str, str]:
    """The last ``Input: X\\nOutput: Y`` block of an induction prompt's demonstrations, as (X, Y)."""
    start = examples_seen.rfind("\n\n" + INPUT)
    block = examples_seen if start < 0 else examples_seen[start + 2 :]
    if not block.startswith(INPUT) or "\n" + OUTPUT not in block:
        raise ValueError(f"not an Input/Output demonstration: {block!r}")
    inp, out = block[len(INPUT) :].split("\n" + OUTPUT, 1)
    return inp, out


def fork_eval_examples(induction: Mapping) -> list[dict]:
    out = []
    for key, rec in list(induction["examples"].items())[:FORK_LIMIT]:
        inp, outp = last_demo(rec["metadata"]["examples_seen"])
        item = {"id": key, "input": inp, "output": outp}
        # the fork: line.strip('Input: ') on "Input: X" — strips those characters, not the prefix
        fork_in, fork_out = (INPUT + inp).strip(INPUT), (OUTPUT + outp).strip(OUTPUT)
        if (fork_in, fork_out) != (inp, outp):
            item["as_loaded_by_fork"] = {"input": fork_in, "output": fork_out}
        out.append(item)
    return out


def task_record(task: str, annotations: Mapping, execute: Mapping, induction: Mapping) -> dict:
    return {
        "task": task,
        "paper_name": PAPER_NAMES.get(task, task.replace("_", " ")),
        "prompts": annotations["annotations"],
        "official_ii_metric": METRICS.get(task, "exact_match"),
        "eval_examples_source": EVAL_SOURCE,
        "eval_examples": eval_examples(task, execute),
        "fork_eval_examples_source": FORK_SOURCE,
        "fork_eval_examples": fork_eval_examples(induction),
    }


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    def load(name: str):
        with open(inputs[name], encoding="utf-8") as f:
            return json.load(f)

    out: dict[str, bytes] = {}
    index = ["task\tpaper_name\tn_prompts\tn_eval_examples\tn_fork_eval_examples\tofficial_ii_metric\n"]
    for task in TASKS:
        rec = task_record(task, *(load(name) for name in input_names(task)))
        out[f"tasks/{task}.json"] = (json.dumps(rec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        index.append(f"{task}\t{rec['paper_name']}\t{len(rec['prompts'])}\t{len(rec['eval_examples'])}\t"
                     f"{len(rec['fork_eval_examples'])}\t{rec['official_ii_metric']}\n")
    out["index.tsv"] = "".join(index).encode("utf-8")
    return out
