"""Benchmarks of "Ask Again, Then Fail" (sources gsm8k, svamp, multiarith, csqa, strategyqa, last_letters,
coin_flip, mmlu; datasets of the same names).

The seven Zero-shot-CoT benchmarks are built from the ORIGINAL upstream files (byte-identical with
kojima-takeshi188/zero_shot_cot), not from the mirror's ``normalized.jsonl`` (which is only used by a
test, to check that both agree). MMLU is built from the mirror's stratified sample
``test_sample500.jsonl`` (split ``"test"``) and ``dev_5shot.jsonl`` (split ``"dev"``), checked against
``subject_counts.tsv``.

Record (one per question, in file order; MMLU: test rows then dev rows):

* ``id`` (str): ``"gsm8k-test-<i>"``, ``"svamp-<ID>"``, ``"multiarith-<iIndex>"``, ``"csqa-<id>"``,
  ``"strategyqa-<i>"``, ``"last_letters-<i>"``, ``"coin_flip-<i>"``, ``"mmlu-<subject>-<split>-<row>"``
  (``i`` = 0-based position in the file).
* ``dataset`` (str): the dataset key; ``split`` (str): ``"test"`` (the benchmark's evaluation set; for
  CSQA its dev_rand_split, the standard eval split) or ``"dev"`` (MMLU 5-shot examples).
* ``question`` (str): GSM8K ``question``; SVAMP ``Body.strip() + " " + Question.strip()``
  (Zero-shot-CoT convention); MultiArith ``sQuestion.strip()``; CSQA ``question.stem``; StrategyQA
  ``input``; last_letters / coin_flip ``question``; MMLU ``question``.
* ``choices`` (None | list[str]): ``["A. text", ...]`` for CSQA (5) and MMLU (4), else None.
* ``answer`` (str): GSM8K the number after ``####`` with commas removed; SVAMP / MultiArith the float
  answer as an integer string (a non-integral value keeps its decimal form); CSQA / MMLU the letter;
  StrategyQA ``"yes"``/``"no"`` from ``target_scores``; last_letters the letters; coin_flip ``"yes"``/``"no"``.
* ``answer_type`` (str): ``"number"``, ``"letter"``, ``"yes/no"`` or ``"string"``.
* ``extra`` (dict): GSM8K ``{rationale}`` (the solution text before ``####``); SVAMP ``{Equation, Type}``;
  MultiArith ``{lEquations}``; CSQA ``{question_concept}``; StrategyQA ``{target}`` (the rationale);
  MMLU ``{subject, row_index, choices_raw}``; others ``{}``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

from wobble.data._util import expect, get, load_json, need_file, read_tsv, str_list
from wobble.errors import DataError
from wobble.io import iter_jsonl

LETTERS = "ABCDE"
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _record(dataset: str, iid: str, question: str, answer: str, answer_type: str, choices=None, extra=None,
            split: str = "test") -> dict[str, Any]:
    return {"id": iid, "dataset": dataset, "split": split, "question": question, "choices": choices,
            "answer": answer, "answer_type": answer_type, "extra": extra or {}}


def _number(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def load_gsm8k(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "test.jsonl", "the GSM8K test file")
    for i, (lineno, obj) in enumerate(iter_jsonl(path)):
        rec = f"line {lineno}"
        question = get(path, rec, obj, "question", str)
        full = get(path, rec, obj, "answer", str, check=lambda v: "\n#### " in v,
                   expected="a solution ending in '#### <number>'")
        rationale, _, final = full.rpartition("\n#### ")
        answer = final.strip().replace(",", "")
        expect(bool(_NUMBER.match(answer)), path, rec, f"a number after '####', got {final!r}")
        yield _record("gsm8k", f"gsm8k-test-{i}", question, answer, "number", extra={"rationale": rationale})


def load_svamp(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "SVAMP.json", "the SVAMP file")
    data = load_json(path)
    expect(isinstance(data, list), path, "(top level)", "a JSON list of problems")
    for i, obj in enumerate(data):
        rec = f"item {i}"
        ans = get(path, rec, obj, "Answer", (int, float))
        q = get(path, rec, obj, "Body", str).strip() + " " + get(path, rec, obj, "Question", str).strip()
        yield _record("svamp", f"svamp-{get(path, rec, obj, 'ID', str)}", q, _number(ans), "number",
                      extra={"Equation": get(path, rec, obj, "Equation", str), "Type": get(path, rec, obj, "Type", str)})


def load_multiarith(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "MultiArith.json", "the MultiArith file")
    data = load_json(path)
    expect(isinstance(data, list), path, "(top level)", "a JSON list of problems")
    for i, obj in enumerate(data):
        rec = f"item {i}"
        sols = get(path, rec, obj, "lSolutions", list, expected="a one-number list",
                   check=lambda v: len(v) >= 1 and isinstance(v[0], (int, float)) and not isinstance(v[0], bool))
        yield _record("multiarith", f"multiarith-{get(path, rec, obj, 'iIndex', int)}",
                      get(path, rec, obj, "sQuestion", str).strip(), _number(sols[0]), "number",
                      extra={"lEquations": str_list(path, rec, obj, "lEquations")})


def load_csqa(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "dev_rand_split.jsonl", "the CommonsenseQA dev file")
    for lineno, obj in iter_jsonl(path):
        rec = f"line {lineno}"
        q = get(path, rec, obj, "question", dict)
        raw = get(path, rec, q, "choices", list, expected="a list of 5 {label, text} choices", check=lambda v: len(v) == 5)
        choices = []
        for j, ch in enumerate(raw):
            get(path, f"{rec} choice {j}", ch, "label", str, check=lambda v: v == LETTERS[j], expected=repr(LETTERS[j]))
            choices.append(f"{LETTERS[j]}. {get(path, f'{rec} choice {j}', ch, 'text', str)}")
        key = get(path, rec, obj, "answerKey", str, check=lambda v: v in LETTERS, expected="a letter A-E")
        yield _record("csqa", f"csqa-{get(path, rec, obj, 'id', str)}", get(path, rec, q, "stem", str), key, "letter",
                      choices=choices, extra={"question_concept": get(path, rec, q, "question_concept", str)})


def load_strategyqa(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "task.json", "the StrategyQA BIG-bench task")
    data = load_json(path)
    examples = get(path, "(top level)", data, "examples", list)
    for i, ex in enumerate(examples):
        rec = f"examples[{i}]"
        scores = get(path, rec, ex, "target_scores", dict, expected="{Yes: 0/1, No: 0/1} with exactly one 1",
                     check=lambda v: set(v) == {"Yes", "No"} and sorted(v.values()) == [0, 1])
        yield _record("strategyqa", f"strategyqa-{i}", get(path, rec, ex, "input", str),
                      "yes" if scores["Yes"] == 1 else "no", "yes/no", extra={"target": get(path, rec, ex, "target", str)})


def _examples_file(dataset: str, filename: str, answer_type: str, check: Callable[[str], bool], expected: str):
    def load(src: Path) -> Iterator[dict]:
        path = need_file(Path(src) / filename, f"the {dataset} file")
        data = load_json(path)
        examples = get(path, "(top level)", data, "examples", list)
        for i, ex in enumerate(examples):
            rec = f"examples[{i}]"
            yield _record(dataset, f"{dataset}-{i}", get(path, rec, ex, "question", str),
                          get(path, rec, ex, "answer", str, check=check, expected=expected), answer_type)
    load.__name__ = f"load_{dataset}"
    return load


load_last_letters = _examples_file("last_letters", "last_letters.json", "string",
                                   lambda v: v.isalpha(), "a non-empty string of letters")
load_coin_flip = _examples_file("coin_flip", "coin_flip.json", "yes/no", lambda v: v in ("yes", "no"), "'yes' or 'no'")


def _mmlu_rows(path: Path, split: str) -> Iterator[dict]:
    seen = set()
    for lineno, obj in iter_jsonl(need_file(path, f"the MMLU {split} file")):
        rec = f"line {lineno}"
        subject = get(path, rec, obj, "subject", str)
        row = get(path, rec, obj, "row_index", int, check=lambda v: v >= 0, expected="a row index >= 0")
        iid = get(path, rec, obj, "id", str, check=lambda v: v == f"mmlu-{subject}-{split}-{row}",
                  expected=f"'mmlu-{subject}-{split}-{row}'")
        expect(iid not in seen, path, rec, f"a unique id, {iid!r} repeats")
        seen.add(iid)
        raw = str_list(path, rec, obj, "choices_raw", nonempty=True)
        expect(len(raw) == 4, path, rec, f"4 choices, got {len(raw)}")
        choices = str_list(path, rec, obj, "choices")
        expect(choices == [f"{LETTERS[j]}. {t}" for j, t in enumerate(raw)], path, rec,
               "choices = ['A. <choices_raw[0]>', ...]")
        answer = get(path, rec, obj, "answer", str, check=lambda v: v in LETTERS[:4], expected="a letter A-D")
        get(path, rec, obj, "answer_type", str, check=lambda v: v == "letter", expected="'letter'")
        yield _record("mmlu", iid, get(path, rec, obj, "question", str), answer, "letter", choices=choices,
                      extra={"subject": subject, "row_index": row, "choices_raw": raw}, split=split)


def load_mmlu(src: Path) -> Iterator[dict]:
    src = Path(src)
    counts = {}
    for lineno, row in read_tsv(src / "subject_counts.tsv", columns=("subject", "n_test_full", "n_sampled")):
        expect(row["n_sampled"].isdigit(), src / "subject_counts.tsv", f"line {lineno}", "n_sampled an integer")
        counts[row["subject"]] = int(row["n_sampled"])
    test = list(_mmlu_rows(src / "test_sample500.jsonl", "test"))
    per_subject: dict[str, int] = {}
    for r in test:
        per_subject[r["extra"]["subject"]] = per_subject.get(r["extra"]["subject"], 0) + 1
    for subject in sorted(set(counts) | set(per_subject)):
        if counts.get(subject) != per_subject.get(subject, 0):
            raise DataError(src / "subject_counts.tsv", subject,
                            f"n_sampled {counts.get(subject)} to equal the rows of test_sample500.jsonl "
                            f"({per_subject.get(subject, 0)})")
    yield from test
    dev = list(_mmlu_rows(src / "dev_5shot.jsonl", "dev"))
    for subject in sorted(counts):
        n = sum(1 for r in dev if r["extra"]["subject"] == subject)
        expect(n == 5, src / "dev_5shot.jsonl", subject, f"5 dev examples per subject, got {n}")
    yield from dev


LOADERS = {"gsm8k": load_gsm8k, "svamp": load_svamp, "multiarith": load_multiarith, "csqa": load_csqa,
           "strategyqa": load_strategyqa, "last_letters": load_last_letters, "coin_flip": load_coin_flip,
           "mmlu": load_mmlu}
