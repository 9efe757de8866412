"""Rebuild ``superni/tasks_partial/<task>.json`` (96 files) from the Robustness fork's ``tmp/tasks.csv``.

Upstream: jiashenggu/Tk-Instruct (the authors' fork of Tk-Instruct) at the commit its .tsv pins,
``tmp/tasks.csv`` -- their Sep-2022 extraction of the 119 English SuperNI test tasks (one row each, columns
``Instruction``, ``Categories``, ``name`` and 10 example slots ``Example_<k>_input/_output/_explanation``). The
mirror README (``superni/README.md``, "tasks_partial") describes what was kept; each rule below is one of its lines:

* one file for each CSV task that the mirror does NOT hold in full in ``tasks/`` -- i.e. all 119 but the 23 test
  tasks of :data:`FULL_TEST_TASKS` (96 files, "the 96 English test tasks that are not mirrored in full");
* the task name is the CSV ``name``, except that the CSV cut 3 names at their first ``.`` (``task1529_scitail1``,
  ``task1640_aqa1``, ``task349_squad2``): these are mapped to the one name in ``splits/default/test_tasks.txt``
  (a pinned file of this source) that starts with the cut name plus ``.`` (MANIFEST: "3 truncated names mapped to
  full names");
* the object holds only ``Categories`` (``[Categories]``), ``Definition`` (``[Instruction]``), ``Positive
  Examples``, ``Negative Examples`` and ``Instances``, in that order ("no ids/Source/Domains/languages");
* the 10 slots are read in order: an explanation starting ``"Positive. "`` makes a positive example, one starting
  ``"Negative. "`` a negative example (the prefix is removed; ``input``, ``output``, ``explanation`` kept verbatim);
  a slot with an empty explanation is an instance ``{"input", "output": [output]}`` ("each instance has only the
  FIRST gold output", "instances have no id"); a wholly empty slot holds nothing (none occurs in tasks.csv). So
  the instances are the first 0-7 upstream instances and, when a task had 10 or more examples, its example list
  is cut at the 10 slots. Any other explanation raises;
* serialised with ``json.dumps(indent=4, ensure_ascii=False)`` plus a newline.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path

TASKS_CSV = "tmp/tasks.csv"
TEST_SPLIT = "splits/default/test_tasks.txt"
N_SLOTS = 10
POSITIVE, NEGATIVE = "Positive. ", "Negative. "

#: The 23 English test tasks whose upstream file the mirror holds in full (``tasks/``, first 100 instances).
FULL_TEST_TASKS = frozenset({
    "task033_winogrande_answer_generation", "task121_zest_text_modification",
    "task219_rocstories_title_answer_generation", "task393_plausible_result_generation",
    "task613_politifact_text_generation", "task619_ohsumed_abstract_title_generation",
    "task620_ohsumed_medical_subject_headings_answer_generation", "task645_summarization", "task648_answer_generation",
    "task670_ambigqa_question_generation", "task743_eurlex_summarization", "task769_qed_summarization",
    "task891_gap_coreference_resolution", "task957_e2e_nlg_text_generation_generate",
    "task1195_disflqa_disfluent_to_fluent_conversion", "task1342_amazon_us_reviews_title",
    "task1344_glue_entailment_classification", "task1345_glue_qqp_question_paraprashing",
    "task1358_xlsum_title_generation", "task1393_superglue_copa_text_completion", "task1540_parsed_pdfs_summarization",
    "task1562_zest_text_modification", "task1622_disfl_qa_text_modication",
})


def read_tasks_csv(data: bytes) -> list[dict[str, str]]:
    """The rows of tasks.csv (a standard quoted CSV, UTF-8), in file order."""
    csv.field_size_limit(1 << 30)
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def full_name(name: str, test_tasks: list[str]) -> str:
    """The split's task name for a CSV ``name`` (which may be cut at its first ``.``)."""
    if name in test_tasks:
        return name
    matches = [t for t in test_tasks if t.startswith(name + ".")]
    if len(matches) != 1:
        raise ValueError(f"tasks.csv name {name!r} matches {len(matches)} test tasks")
    return matches[0]


def task_object(row: Mapping[str, str]) -> dict:
    """A tasks_partial object from one tasks.csv row (see the module docstring)."""
    pos, neg, instances = [], [], []
    for k in range(1, N_SLOTS + 1):
        inp, out, expl = (row[f"Example_{k}_{part}"] for part in ("input", "output", "explanation"))
        if expl.startswith(POSITIVE):
            pos.append({"input": inp, "output": out, "explanation": expl[len(POSITIVE):]})
        elif expl.startswith(NEGATIVE):
            neg.append({"input": inp, "output": out, "explanation": expl[len(NEGATIVE):]})
        elif expl == "" and (inp or out):
            instances.append({"input": inp, "output": [out]})
        elif expl:
            raise ValueError(f"{row['name']}: slot {k} has an explanation that is neither Positive. nor Negative.")
    return {"Categories": [row["Categories"]], "Definition": [row["Instruction"]], "Positive Examples": pos,
            "Negative Examples": neg, "Instances": instances}


def dumps(obj: dict) -> bytes:
    return (json.dumps(obj, indent=4, ensure_ascii=False) + "\n").encode("utf-8")


def named_rows(tasks_csv: bytes, test_split: bytes) -> list[tuple[str, dict[str, str]]]:
    """(full task name, row) for every tasks.csv row, in CSV order."""
    test_tasks = test_split.decode("utf-8").split()
    return [(full_name(row["name"], test_tasks), row) for row in read_tasks_csv(tasks_csv)]


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    rows = named_rows(Path(inputs[TASKS_CSV]).read_bytes(), Path(inputs[TEST_SPLIT]).read_bytes())
    return {f"tasks_partial/{task}.json": dumps(task_object(row)) for task, row in rows
            if task not in FULL_TEST_TASKS}
