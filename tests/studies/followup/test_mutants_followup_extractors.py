"""wobble.studies.followup.extractors: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each case is a reply or a prepared record the study could meet, with the answer the module docstring's rules
give, worked out by hand.
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from wobble.errors import ConfigError, DataError
from wobble.studies.followup.extractors import extract_answer, extract_file, gold_answer
from wobble.studies.followup.prompts import BENCHMARKS

B = BENCHMARKS


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
