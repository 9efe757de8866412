"""wobble.adapters.mcq: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from wobble.adapters.mcq import letter_to_option, option_to_letter


def test_a_letter_is_read_in_any_case_with_spaces_around_it():
    assert letter_to_option(["A", "B"], ["Yes", "No"], " b ") == "No"
    assert letter_to_option(["A", "B"], ["Yes", "No"], None) is None
    assert letter_to_option(["A", "B"], ["Yes", "No"], "C") is None


def test_an_option_is_found_under_its_own_letter():
    assert option_to_letter(["A", "B", "C"], ["Yes", "No", "Maybe"], "Maybe") == "C"
    assert option_to_letter(["A", "B"], ["Yes", "No"], "Perhaps") is None
