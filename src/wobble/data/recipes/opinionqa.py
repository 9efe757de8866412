"""Recipe ``opinionqa``: rebuild the question tables of source ``opinionqa``.

Outputs: ``questions_all.jsonl``, ``subset_414.jsonl``, ``subset_414_ids.txt`` and ``disagreement_500_ids.txt``.

From:

* tatsu-lab/opinions_qa, ``data/human_resp/American_Trends_Panel_W{26,27,
  29,32,34,36,41,42,43,45,49,50,54,82,92}/info.csv`` and ``data/human_resp/Pew_American_Trends_Panel_disagreement_500/
  info.csv``. The ``data/`` folder exists only at this commit: the next commit deleted it.
* Two files pinned in the same source, ``annotated_responses/llama2-7b/{train,test}.jsonl``. They are MCQ-Mismatch's
  ``labeled_model_output/llama2-7b/{train,test}.json_labeled.json`` (mainlp/MCQ-Mismatch), copied
  verbatim. They list the paper's 414 questions, 331 train + 83 test, with the options in shuffled order. The
  llama2-13b and llama2-70b files list the same questions in the same order. The mixtral and mistral-7b files
  do not (their options are shuffled differently), so they are not inputs.

Steps, following the mirror README (opinionqa/README.md):

1. ``questions_all.jsonl``: every data row of the 15 wave ``info.csv`` files, waves in the order above, rows in
   file order: 1,506 rows in all. ``info_csv_row`` is the row's 0-based position, which equals the unnamed first
   column. ``uid = "<wave>/<key>/<info_csv_row>"`` is unique, while ``key`` alone is not (IDIMPORT_W43 occurs 5
   times). The CSV cells ``option_mapping``, ``references`` and ``option_ordinal`` are Python literals
   (pandas wrote them), so they are read with :func:`ast.literal_eval`. ``options`` is ``references`` verbatim,
   "Refused" included. ``option_mapping`` gets string keys (``str(1.0) == "1.0"``). ``option_ordinal``
   keeps its floats. ``has_refused_option`` is ``"Refused" in options``.
2. ``disagreement_500_ids.txt``: one uid per row of the disagreement_500 ``info.csv``, in file order (498 rows).
   A row's ``survey`` (``Pew_American_Trends_Panel_W26``, minus ``Pew_``) names the wave. Its ``index`` is the
   row in that wave's info.csv. The key and the question text are checked against that row.
3. ``subset_414.jsonl``: the llama2-7b train rows, then its test rows (``idx`` 0..413,
   ``mcq_mismatch_classifier_split`` train/test). Each is matched to the questions_all rows whose ``question``
   equals ``original_question`` exactly and whose options are the same multiset as ``references``. The README
   reports one tie, SATLIFEC_W32 vs SATLIFEc_W50, and it is settled by membership in the disagreement-500 set.
   Any other ambiguity or miss is an error. ``mcq_mismatch_options_as_listed`` is ``references`` as listed.
   ``subset_414_ids.txt`` holds the matched uids in the same order.
4. ``questions_all.jsonl`` also gets ``in_disagreement_500`` and ``in_mcq_mismatch_414``.

JSON lines are ``json.dumps(obj, ensure_ascii=False) + "\\n"`` (UTF-8). The id files have one uid per line, and
each line ends with ``\\n``.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path
from typing import Mapping

WAVES = (26, 27, 29, 32, 34, 36, 41, 42, 43, 45, 49, 50, 54, 82, 92)
HUMAN_RESP = "data/human_resp"
DISAGREEMENT = f"{HUMAN_RESP}/Pew_American_Trends_Panel_disagreement_500/info.csv"
MCQ_TRAIN = "annotated_responses/llama2-7b/train.jsonl"
MCQ_TEST = "annotated_responses/llama2-7b/test.jsonl"


def wave_name(w: int) -> str:
    return f"American_Trends_Panel_W{w}"


def wave_input(w: int) -> str:
    return f"{HUMAN_RESP}/{wave_name(w)}/info.csv"


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def wave_questions(wave: str, text: str) -> list[dict]:
    """The question records of one wave's info.csv text, in file order (README step 1)."""
    out = []
    for i, r in enumerate(_csv_rows(text)):
        if r[""] != str(i):
            raise ValueError(f"{wave} info.csv row {i}: first column is {r['']!r}")
        options = ast.literal_eval(r["references"])
        mapping = ast.literal_eval(r["option_mapping"])
        out.append({"uid": f"{wave}/{r['key']}/{i}", "qkey": r["key"], "wave": wave, "info_csv_row": i,
                    "question": r["question"], "options": options,
                    "option_mapping": {str(k): v for k, v in mapping.items()},
                    "option_ordinal": ast.literal_eval(r["option_ordinal"]),
                    "has_refused_option": "Refused" in options})
    return out


def disagreement_uids(text: str, questions: list[dict]) -> list[str]:
    """uids of the disagreement_500 info.csv rows, in file order (README step 2)."""
    by_pos = {(q["wave"], q["info_csv_row"]): q for q in questions}
    out = []
    for n, r in enumerate(_csv_rows(text)):
        wave = r["survey"].removeprefix("Pew_")
        q = by_pos.get((wave, int(r["index"])))
        if q is None or q["qkey"] != r["key"] or q["question"] != r["question"]:
            raise ValueError(f"disagreement_500 row {n} ({r['survey']} {r['key']}, index {r['index']}) "
                             "matches no wave row")
        out.append(q["uid"])
    return out


def match_subset(mcq: list[tuple[str, dict]], questions: list[dict], dis: set[str]) -> list[dict]:
    """mcq: (split, MCQ-Mismatch row) in listed order -> subset_414 records (README step 3)."""
    by_text: dict[str, list[dict]] = {}
    for q in questions:
        by_text.setdefault(q["question"], []).append(q)
    out, seen = [], set()
    for idx, (split, row) in enumerate(mcq):
        refs = row["references"]
        cands = [q for q in by_text.get(row["original_question"], []) if sorted(q["options"]) == sorted(refs)]
        if len(cands) > 1:
            cands = [q for q in cands if q["uid"] in dis]
        if len(cands) != 1:
            raise ValueError(f"MCQ-Mismatch {split} row {idx}: {len(cands)} OpinionQA matches for "
                             f"{row['original_question'][:60]!r}")
        q = cands[0]
        if q["uid"] in seen:
            raise ValueError(f"MCQ-Mismatch {split} row {idx}: {q['uid']} matched twice")
        seen.add(q["uid"])
        out.append({**q, "idx": idx, "mcq_mismatch_classifier_split": split,
                    "mcq_mismatch_options_as_listed": refs})
    return out


def _jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _lines(items: list[str]) -> bytes:
    return "".join(f"{x}\n" for x in items).encode("utf-8")


def _read(inputs: Mapping[str, Path], name: str) -> str:
    return Path(inputs[name]).read_bytes().decode("utf-8")


def _read_jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    questions: list[dict] = []
    for w in WAVES:
        questions += wave_questions(wave_name(w), _read(inputs, wave_input(w)))
    dis = disagreement_uids(_read(inputs, DISAGREEMENT), questions)
    mcq = [("train", r) for r in _read_jsonl(_read(inputs, MCQ_TRAIN))]
    mcq += [("test", r) for r in _read_jsonl(_read(inputs, MCQ_TEST))]
    subset = match_subset(mcq, questions, set(dis))
    in_dis, in_sub = set(dis), {s["uid"] for s in subset}
    full = [{**q, "in_disagreement_500": q["uid"] in in_dis, "in_mcq_mismatch_414": q["uid"] in in_sub}
            for q in questions]
    return {"questions_all.jsonl": _jsonl(full), "subset_414.jsonl": _jsonl(subset),
            "subset_414_ids.txt": _lines([s["uid"] for s in subset]), "disagreement_500_ids.txt": _lines(dis)}
