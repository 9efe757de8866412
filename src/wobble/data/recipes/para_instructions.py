"""Rebuild ``para_instructions/para_instructions.json`` and ``para_instructions.tsv`` from the fork's three CSVs.

Upstream: jiashenggu/Tk-Instruct (the Robustness authors' fork of Tk-Instruct) at the commit
its .tsv pins, files ``tmp/new_instruction_{1,2,3}.csv`` -- the Para-Instructions
release. Each CSV has one row per task (23 English SuperNI test tasks, same order in all three) with the columns
``Write your instruction`` (the human paraphrase), ``Original Instruction``, ``Categories``, ``name`` and 10 example
slots. What the mirror README (``para_instructions/README.md``) describes, step by step:

* rows are kept "in CSV order" (the order of new_instruction_1.csv; the three files list the same tasks in the same
  order, with the same name, category and original instruction -- checked here, a mismatch raises);
* ``task`` = ``name``, ``category`` = ``Categories``, ``original_definition`` = ``Original Instruction`` (equal to
  SuperNI ``Definition[0]``);
* ``new_definitions`` = ``Write your instruction`` of new_instruction_1, _2 and _3 in that order, verbatim
  (trailing spaces kept);
* ``category_abbrev`` and ``metric`` come from the paper's per-category tables (:data:`CATEGORIES`): EM for the
  classification-like categories, ROUGE-L for the generation ones;
* ``superni_data_in_mirror`` says which superni folder holds the task's data: ``tasks`` for the 4 Para-Instructions
  tasks that the superni mirror has in full (:data:`FULL_IN_MIRROR`), ``tasks_partial`` for the other 19. This is a
  fact about the mirror, not about the CSVs, so it is a constant here;
* the example columns are dropped ("they duplicate the SuperNI examples and first instances").

``para_instructions.json``: ``json.dumps(indent=2, ensure_ascii=False)`` plus a newline. ``para_instructions.tsv``:
header ``task category definition_id definition``, one row per (task, definition_id) with definition_id
``original``, ``new_1``, ``new_2``, ``new_3``; plain tab-joined lines, nothing quoted (the README promises no field
holds a tab or newline -- checked here, a violation raises).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path

CSV_NAMES = ("tmp/new_instruction_1.csv", "tmp/new_instruction_2.csv", "tmp/new_instruction_3.csv")

#: paper category -> (abbreviation, metric), as in the Robustness paper's per-category tables.
CATEGORIES: dict[str, tuple[str, str]] = {
    "Textual Entailment": ("TE", "EM"),
    "Cause Effect Classification": ("CEC", "EM"),
    "Coreference Resolution": ("CR", "EM"),
    "Dialogue Act Recognition": ("DAR", "EM"),
    "Answerability Classification": ("AC", "EM"),
    "Word Analogy": ("WA", "EM"),
    "Overlap Extraction": ("OE", "ROUGE-L"),
    "Keyword Tagging": ("KT", "ROUGE-L"),
    "Question Rewriting": ("QR", "ROUGE-L"),
    "Title Generation": ("TG", "ROUGE-L"),
    "Data to Text": ("DT", "ROUGE-L"),
    "Grammar Error Correction": ("GEC", "ROUGE-L"),
}

#: Para-Instructions tasks whose upstream task file the superni mirror holds in full (``superni/tasks/``).
FULL_IN_MIRROR = frozenset({
    "task670_ambigqa_question_generation",
    "task1393_superglue_copa_text_completion",
    "task645_summarization",
    "task620_ohsumed_medical_subject_headings_answer_generation",
})


def _read_csv(data: bytes) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def reshape(tables: list[list[dict[str, str]]]) -> list[dict]:
    """The JSON records from the three parsed CSVs (new_instruction_1, _2, _3), in the first table's order."""
    first = tables[0]
    for table in tables[1:]:
        if len(table) != len(first):
            raise ValueError("the new_instruction CSVs have different row counts")
    records = []
    for i, row in enumerate(first):
        for table in tables[1:]:
            other = table[i]
            for key in ("name", "Categories", "Original Instruction"):
                if other[key] != row[key]:
                    raise ValueError(f"row {i}: {key!r} differs between the CSVs: {row[key]!r} vs {other[key]!r}")
        abbrev, metric = CATEGORIES[row["Categories"]]
        records.append({
            "task": row["name"],
            "category": row["Categories"],
            "category_abbrev": abbrev,
            "metric": metric,
            "original_definition": row["Original Instruction"],
            "new_definitions": [table[i]["Write your instruction"] for table in tables],
            "superni_data_in_mirror": "tasks" if row["name"] in FULL_IN_MIRROR else "tasks_partial",
        })
    return records


def to_json(records: list[dict]) -> bytes:
    return (json.dumps(records, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def to_tsv(records: list[dict]) -> bytes:
    lines = ["task\tcategory\tdefinition_id\tdefinition"]
    for rec in records:
        defs = [("original", rec["original_definition"])]
        defs += [(f"new_{k}", text) for k, text in enumerate(rec["new_definitions"], 1)]
        for def_id, text in defs:
            fields = [rec["task"], rec["category"], def_id, text]
            for field in fields:
                if "\t" in field or "\n" in field or "\r" in field:
                    raise ValueError(f"{rec['task']} {def_id}: a field holds a tab or newline")
            lines.append("\t".join(fields))
    return ("\n".join(lines) + "\n").encode("utf-8")


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    tables = [_read_csv(Path(inputs[name]).read_bytes()) for name in CSV_NAMES]
    records = reshape(tables)
    return {"para_instructions.json": to_json(records), "para_instructions.tsv": to_tsv(records)}
