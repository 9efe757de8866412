"""Para-Instructions (Gu et al. 2023) loader (source ``para_instructions``; dataset para_instructions).

Reads ``para_instructions.json`` (a list of 23 objects, CSV order) and checks it against the long-form
``para_instructions.tsv`` (one row per task x definition_id original / new_1 / new_2 / new_3). Quirk:
the new definitions are verbatim, so some end with a trailing space; they are kept as they are.

``para_instructions`` record (one per task, file order, 23 records):

* ``task`` (str): the SuperNI test task name.
* ``category`` (str), ``category_abbrev`` (str, e.g. ``"TG"``).
* ``metric`` (str): ``"exact_match"`` or ``"rougeL"`` (the paper's metric for the category).
* ``original_definition`` (str): SuperNI ``Definition[0]``.
* ``new_definitions`` (list of 3 str): new_instruction_1, _2, _3 in that order.
* ``superni_data_in_mirror`` (str): ``"tasks"`` or ``"tasks_partial"`` (where the SuperNI mirror keeps
  the task's instances).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from wobble.data._util import expect, get, load_json, normalize_metric, read_tsv, str_list

TSV_COLUMNS = ("task", "category", "definition_id", "definition")
DEFINITION_IDS = ("original", "new_1", "new_2", "new_3")


def load_para(src: Path) -> Iterator[dict]:
    src = Path(src)
    path = src / "para_instructions.json"
    data = load_json(path, "the Para-Instructions list")
    expect(isinstance(data, list), path, "(top level)", "a JSON list of task objects")
    tsv_path = src / "para_instructions.tsv"
    long: dict[tuple[str, str], tuple[int, dict]] = {}
    for lineno, row in read_tsv(tsv_path, columns=TSV_COLUMNS):
        key = (row["task"], row["definition_id"])
        expect(row["definition_id"] in DEFINITION_IDS, tsv_path, f"line {lineno}",
               f"definition_id in {DEFINITION_IDS}, got {row['definition_id']!r}")
        expect(key not in long, tsv_path, f"line {lineno}", f"one row per (task, definition_id), {key} repeats")
        long[key] = (lineno, row)
    seen = set()
    for i, obj in enumerate(data):
        task = get(path, f"item {i}", obj, "task", str)
        rec = f"item {i} ({task})"
        expect(task not in seen, path, rec, "each task listed once")
        seen.add(task)
        new = str_list(path, rec, obj, "new_definitions")
        expect(len(new) == 3, path, rec, f"3 new definitions, got {len(new)}")
        original = get(path, rec, obj, "original_definition", str, check=lambda v: bool(v.strip()),
                       expected="a non-blank definition")
        category = get(path, rec, obj, "category", str)
        for def_id, text in zip(DEFINITION_IDS, [original, *new]):
            expect(bool(text.strip()), path, rec, f"a non-blank {def_id} definition")
            expect((task, def_id) in long, tsv_path, f"({task}, {def_id})", "a row for every task and definition_id")
            lineno, row = long.pop((task, def_id))
            expect(row["definition"] == text and row["category"] == category, tsv_path, f"line {lineno}",
                   f"the same category and {def_id} text as para_instructions.json {rec}")
        yield {"task": task, "category": category, "category_abbrev": get(path, rec, obj, "category_abbrev", str),
               "metric": normalize_metric(path, rec, get(path, rec, obj, "metric", str)),
               "original_definition": original, "new_definitions": new,
               "superni_data_in_mirror": get(path, rec, obj, "superni_data_in_mirror", str,
                                             check=lambda v: v in ("tasks", "tasks_partial"),
                                             expected="'tasks' or 'tasks_partial'")}
    if long:
        (task, def_id), (lineno, _) = sorted(long.items())[0]
        expect(False, tsv_path, f"line {lineno}", f"only tasks of para_instructions.json ({task} is not there)")
