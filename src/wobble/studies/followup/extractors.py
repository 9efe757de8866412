"""Reading the answer out of a reply, one extractor per answer type, composed from :mod:`wobble.extract`.

Every format prompt (Table 7) asks for the answer "separately on the last line ... such as: 'Answer:
...'". As Zero-shot-CoT's answer cleansing (Kojima et al. 2022, whose dataset files the paper uses),
the answer is read from the text after the LAST answer marker ("Answer:", "the answer is", "the answer
should be"; markdown emphasis allowed: "**Answer:** true"), taking the first answer there; a reply
with no marker at all gives its last answer anywhere in the text; a marker followed by no answer
("Answer: Unknown", the paper's Error#1) gives ``None`` (never a stray word from earlier prose).

Answers and golds are compared in one normal form per answer type: numbers without commas, dollar
sign or trailing decimal zeros ("$1,080.00" -> "1080"); option letters upper case; booleans in the
benchmark's words (StrategyQA true/false, CoinFlip yes/no); letter strings lower case.
"""

from __future__ import annotations

import os
from typing import Iterator, Mapping

from wobble.errors import DataError
from wobble.extract import LetterString, Number, OptionLetter, Pipeline, Regex, TakeFirst, YesNo, normalize_number
from wobble.io import iter_jsonl
from wobble.studies.followup.prompts import BENCHMARKS, DATA_ANSWER_TYPE, Benchmark, lookup

_MARKER = r"\banswer\b[\s*_]*(?:is\b|should be\b|would be\b|will be\b|:|：)"
#: The text after an answer marker (up to the end of its line; a bare "Answer:" line takes the next line).
SEGMENT = _MARKER + r"[\s*_:]*([^\n]+)"
#: The whole reply, only when it holds no answer marker.
NO_MARKER = r"^(?![\s\S]*" + _MARKER + r")([\s\S]*\S[\s\S]*)$"


def _readers(benchmark: Benchmark):
    """(reader of the marked segment, reader of a marker-free reply) for the benchmark's answer type."""
    kind = benchmark.answer_type
    if kind == "number":
        return Number(select="first"), Number(select="last")
    if kind == "letter":
        return OptionLetter(benchmark.letters, select="first"), OptionLetter(benchmark.letters, select="last")
    if kind == "boolean":
        style = "/".join(benchmark.vocabulary)
        return YesNo(style, select="first"), YesNo(style, select="last")
    if kind == "string":
        return LetterString(select="first"), LetterString(select="last")
    raise ValueError(f"unknown answer type {kind!r}")


def answer_pipeline(benchmark: Benchmark) -> Pipeline:
    """The extractor of ``benchmark``: last marked segment -> first answer in it, else (no marker at all)
    the last answer in the reply. An option letter is read with its marker ("answer is C")."""
    in_segment, anywhere = _readers(benchmark)
    group = 0 if benchmark.answer_type == "letter" else 1
    return Pipeline(TakeFirst(Pipeline(Regex(SEGMENT, group=group, select="last"), in_segment),
                              Pipeline(Regex(NO_MARKER), anywhere)))


def extract_answer(benchmark: Benchmark, text: str | None) -> str | None:
    """The answer in a reply in the benchmark's normal form, or ``None``."""
    return answer_pipeline(benchmark)(text)


def gold_answer(benchmark: Benchmark, record: Mapping, path: str = "(prepared data)") -> str:
    """The gold answer of a prepared record in the benchmark's normal form (StrategyQA yes -> true)."""
    rid = record.get("id", "?")
    want = DATA_ANSWER_TYPE[benchmark.answer_type]
    if record.get("answer_type") != want or not isinstance(record.get("answer"), str) or not record["answer"]:
        raise DataError(path, rid, f"answer_type {want!r} and a non-empty string answer for {benchmark.name}")
    gold = record["answer"].strip()
    kind = benchmark.answer_type
    if kind == "number":
        sign, digits = ("-", gold[1:]) if gold.startswith("-") else ("", gold)
        return normalize_number(sign, digits)
    if kind == "letter":
        n = len(record.get("choices") or benchmark.letters)
        if gold.upper() not in benchmark.letters[:n]:
            raise DataError(path, rid, f"an option letter in {benchmark.letters[:n]!r}, got {gold!r}")
        return gold.upper()
    if kind == "boolean":
        if gold.lower() not in ("yes", "no"):
            raise DataError(path, rid, f"'yes' or 'no', got {gold!r}")
        return benchmark.vocabulary[0] if gold.lower() == "yes" else benchmark.vocabulary[1]
    return gold.lower()


def is_correct(answer: str | None, gold: str) -> bool:
    """An extracted answer equals the gold (both in normal form); no answer is wrong."""
    return answer is not None and answer == gold


def extract_file(dataset: str, path: str | os.PathLike = "/dev/stdin") -> Iterator[dict]:
    """``wobble extract DATASET``: each JSON line of ``path`` (standard input by default) with a string
    ``text`` -> the same object + ``answer`` (string, or null when none is found). Blank lines are
    skipped; a bad line raises one DataError naming the file and line."""
    benchmark = lookup(BENCHMARKS, dataset, "followup dataset", "extract DATASET")
    pipeline = answer_pipeline(benchmark)
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj.get("text"), str):
            raise DataError(path, f"line {lineno}", "a JSON object with a string field 'text'")
        yield {**obj, "answer": pipeline(obj["text"])}
