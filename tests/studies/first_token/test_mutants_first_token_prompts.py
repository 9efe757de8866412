"""wobble.studies.first_token.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from wobble.studies.first_token.prompts import (CONSTRAINT_LABELS, PAPER_OUTPUT_DIRS, is_refusal_option, refusal_letter,
                                             shuffle_options, shuffled_prompt)


def test_the_refused_option_is_found_in_any_case_and_spacing():
    # option texts read back from a stored prompt keep the space before the line break ("B. Refused \n")
    assert is_refusal_option("Refused ") and is_refusal_option(" REFUSED") and is_refusal_option("refused")
    assert not is_refusal_option("Refused to say") and not is_refusal_option(None)
    assert refusal_letter(["A", "B", "C"], ["Yes", "Refused ", "No"]) == "B"


def test_the_constraint_levels_as_table_1_and_the_authors_output_folders_name_them():
    assert CONSTRAINT_LABELS == {"low": "Low", "medium": "Medium", "high": "High", "example": "Example",
                                 "example_abc": "Example"}
    assert PAPER_OUTPUT_DIRS == {"low": "Low Constraint", "medium": "Middle Constraint", "high": "High Constraint",
                                 "example": "Example Templates"}


def test_the_default_question_key_is_empty():
    opts = [f"option {i}" for i in range(8)] + ["Refused"]  # 9! orders: another key gives another one
    assert shuffle_options(opts, 0, 3) == shuffle_options(opts, 0, 3, "") != shuffle_options(opts, 0, 3, "q")
    assert shuffled_prompt("Q?", opts, "low", 0, 3) == shuffled_prompt("Q?", opts, "low", 0, 3, "")
