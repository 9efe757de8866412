"""followup extractors: the answer of messy real-style replies per answer type, gold answers in the same
normal form, and the ``wobble extract`` line filter."""

from __future__ import annotations

import json

import pytest

from wobble.errors import ConfigError, DataError
from wobble.studies.followup.extractors import extract_answer, extract_file, gold_answer, is_correct
from wobble.studies.followup.prompts import BENCHMARKS

B = BENCHMARKS


@pytest.mark.parametrize("dataset, text, expected", [
    # a rationale followed by the answer line
    ("gsm8k", "She sells 16 - 3 - 4 = 9 eggs at $2 each, 9 * 2 = 18.\nAnswer: 18", "18"),
    ("csqa", "Revolving doors are in banks, so the answer is (B).", "B"),
    ("strategyqa", "Frost is common in December.\n**Answer:** true", "true"),
    ("gsm8k", "Answer: $1,080.00", "1080"),
    # two answers in one reply: the last answer line counts (a reply that changes its mind)
    ("gsm8k", "Answer: 12\nWait, 3 * 4 is 12 plus 2.\nAnswer: 14", "14"),
    ("mmlu", "Answer: (A)\nApologies, I misread. Answer: (C)", "C"),
    # no answer at all
    ("gsm8k", "I do not know how to solve this.", None),
    ("coin_flip", "", None),
    # an answer marker with no answer after it: none (not the "true or false" of the prose, Error#1)
    ("strategyqa", "I cannot provide a true or false answer.\nAnswer: Unknown", None),
    ("multiarith", "I cannot tell.\nAnswer: unknown", None),
    # marker forms and layouts
    ("csqa", "The answer is C because people go to work.", "C"),
    ("mmlu", "**Answer:** B", "B"),
    ("mmlu", "Answer:\n(D) 42 meters", "D"),
    ("multiarith", "You are correct, I apologize. The answer should be 46.", "46"),
    ("strategyqa", "Answer: False.", "false"),
    ("strategyqa", "Yes, the statement holds.", "true"),
    ("coin_flip", "The coin was flipped twice, so it is still heads up.\nAnswer: yes", "yes"),
    ("last_letters", "The last letters are y, a, j and o.\nAnswer: \"yajo\"", "yajo"),
    ("last_letters", "Answer: YAJO", "yajo"),
    # no marker: the last answer of the reply (Zero-shot-CoT's cleansing)
    ("multiarith", "3 + 5 = 8, so there are 8 apples.", "8"),
    ("csqa", "It is not (A); I think it is (E).", "E"),
    ("gsm8k", "The loss is -3.50 dollars.", "-3.5"),
])
def test_messy_replies(dataset, text, expected):
    assert extract_answer(B[dataset], text) == expected


def test_option_letters_beyond_the_benchmarks_choices_are_not_answers():
    assert extract_answer(B["mmlu"], "Answer: (E)") is None  # MMLU has A-D
    assert extract_answer(B["csqa"], "Answer: (E)") == "E"


def test_gold_answers_in_the_normal_form():
    assert gold_answer(B["strategyqa"], {"id": "s", "answer": "yes", "answer_type": "yes/no"}) == "true"
    assert gold_answer(B["coin_flip"], {"id": "c", "answer": "no", "answer_type": "yes/no"}) == "no"
    assert gold_answer(B["svamp"], {"id": "v", "answer": "2.50", "answer_type": "number"}) == "2.5"
    assert gold_answer(B["gsm8k"], {"id": "g", "answer": "-7", "answer_type": "number"}) == "-7"
    assert gold_answer(B["last_letters"], {"id": "l", "answer": "Yajo", "answer_type": "string"}) == "yajo"
    assert gold_answer(B["csqa"], {"id": "q", "answer": "e", "answer_type": "letter",
                                   "choices": ["A. a", "B. b", "C. c", "D. d", "E. e"]}) == "E"
    with pytest.raises(DataError, match="record q: an option letter in 'ABCD', got 'E'"):
        gold_answer(B["mmlu"], {"id": "q", "answer": "E", "answer_type": "letter", "choices": ["A. a"] * 4})
    with pytest.raises(DataError, match="record g: answer_type 'number'"):
        gold_answer(B["gsm8k"], {"id": "g", "answer": "yes", "answer_type": "yes/no"})
    assert is_correct("18", "18") and not is_correct(None, "18") and not is_correct("17", "18")


def lines(tmp_path, *rows) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_extract_file_adds_answer_or_null(tmp_path):
    path = lines(tmp_path, json.dumps({"text": "so 9 * 2 = 18\nAnswer: 18", "id": 1}), "", json.dumps({"text": "no idea"}))
    assert list(extract_file("gsm8k", path)) == [
        {"text": "so 9 * 2 = 18\nAnswer: 18", "id": 1, "answer": "18"}, {"text": "no idea", "answer": None}]


@pytest.mark.parametrize("line, expected", [
    ("{not json", r"in.jsonl: record line 1: a JSON object"),
    (json.dumps({"txt": "Answer: 3"}), r"in.jsonl: record line 1: a JSON object with a string field 'text'"),
    (json.dumps(["Answer: 3"]), r"in.jsonl: record line 1: a JSON object, got list"),
])
def test_extract_file_bad_input_is_one_clear_error(tmp_path, line, expected):
    with pytest.raises(DataError, match=expected):
        list(extract_file("gsm8k", lines(tmp_path, line)))


def test_extract_file_unknown_dataset_names_the_allowed_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"one of \['gsm8k', 'svamp'.*got 'gsm9k'"):
        list(extract_file("gsm9k", lines(tmp_path, "")))
