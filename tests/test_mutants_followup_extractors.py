"""wobble.studies.followup.extractors: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each case is a reply or a prepared record the study could meet, with the answer the module docstring's rules
give, worked out by hand.
"""

from __future__ import annotations

import pytest

from wobble.errors import DataError
from wobble.studies.followup.extractors import extract_answer, gold_answer
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
