"""followup extractors: the answer of messy real-style replies per answer type, gold answers in the same
normal form, and the ``wobble extract`` line filter. Each case is a reply or a prepared record the study could
meet, with the answer the module docstring's rules give, worked out by hand."""

from __future__ import annotations

import dataclasses
import json
import os

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


@pytest.mark.parametrize("text, expected", [
    # "is", "should be", "would be", "will be" are markers only as whole words: none of these replies has a
    # marker, so the last number of the reply is its answer, not the first number after the word
    ("The answer isn't 4; it is 9.", "9"),
    ("The answer should become clear once we add 4 and 5: 9.", "9"),
    ("The answer would become 4 if we forgot the 5; it is 9.", "9"),
    ("The answer will become 4 without the 5, so 9.", "9"),
    # "answer" is a marker only as a whole word
    ("The total is 8.\nNo preanswer: none", "8"),
    ("The answeris 5, not 7.", "7"),
])
def test_an_answer_marker_is_made_of_whole_words(text, expected):
    assert extract_answer(B["gsm8k"], text) == expected


def test_a_marker_without_an_answer_never_falls_back_to_prose_after_it():
    # the marker's segment holds no number; a number on a later line is not the answer (Error#1)
    assert extract_answer(B["gsm8k"], "Answer: unknown\nNot 12, I cannot tell.") is None


@pytest.mark.parametrize("record, match", [
    ({"id": "g", "answer": 7, "answer_type": "number"}, r"\(prepared data\): record g: answer_type 'number'"),
    ({"id": "g", "answer": "", "answer_type": "number"}, r"record g: answer_type 'number' and a non-empty string"),
    ({"answer": "", "answer_type": "number"}, r"\(prepared data\): record \?: answer_type"),
])
def test_a_gold_must_be_a_non_empty_string_and_the_error_names_file_and_record(record, match):
    with pytest.raises(DataError, match=match):
        gold_answer(B["gsm8k"], record)


def test_gold_numbers_are_in_the_extractors_normal_form():
    # surrounding whitespace and leading zeros go, as Number() reads the same reply
    assert gold_answer(B["gsm8k"], {"id": "g", "answer": " 18 ", "answer_type": "number"}) == "18"
    assert gold_answer(B["gsm8k"], {"id": "g", "answer": "-05", "answer_type": "number"}) == "-5" \
        == extract_answer(B["gsm8k"], "Answer: -05")


def test_gold_letters_are_limited_to_the_records_own_choices():
    three = {"id": "q", "answer_type": "letter", "choices": ["A. a", "B. b", "C. c"]}
    assert gold_answer(B["csqa"], {**three, "answer": "c"}) == "C"
    with pytest.raises(DataError, match="an option letter in 'ABC', got 'D'"):
        gold_answer(B["csqa"], {**three, "answer": "D"})
    # without choices, the benchmark's letters
    assert gold_answer(B["csqa"], {"id": "q", "answer": "e", "answer_type": "letter"}) == "E"


def test_gold_booleans_are_read_in_any_case():
    assert gold_answer(B["strategyqa"], {"id": "s", "answer": "Yes", "answer_type": "yes/no"}) == "true"
    assert gold_answer(B["coin_flip"], {"id": "c", "answer": "NO", "answer_type": "yes/no"}) == "no"


def test_a_reply_without_a_marker_gives_its_last_boolean_and_its_last_letter_string():
    assert extract_answer(B["coin_flip"], "Yes, it was flipped once; so now no.") == "no"
    assert extract_answer(B["last_letters"], 'Joining "y" and "a" gives "ya"') == "ya"


def test_an_unknown_answer_type_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown answer type 'date'"):
        extract_answer(dataclasses.replace(B["gsm8k"], answer_type="date"), "Answer: 3")


def test_a_boolean_gold_must_be_yes_or_no():
    with pytest.raises(DataError, match="record s: 'yes' or 'no', got 'maybe'"):
        gold_answer(B["strategyqa"], {"id": "s", "answer": "maybe", "answer_type": "yes/no"})


def test_extract_reads_standard_input_by_default(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"text": "Answer: 7"}) + "\n")
    saved = os.dup(0)
    try:
        with open(src, "rb") as f:
            os.dup2(f.fileno(), 0)
        assert list(extract_file("gsm8k")) == [{"text": "Answer: 7", "answer": "7"}]
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_an_unknown_dataset_names_the_command_and_what_it_takes(tmp_path):
    with pytest.raises(ConfigError, match=r"at 'extract DATASET': a followup dataset, one of \['gsm8k'"):
        list(extract_file("gsm9k", tmp_path / "none.jsonl"))
