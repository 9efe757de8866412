"""wobble.studies.first_token.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from wobble.studies.first_token.prompts import is_refusal_option, refusal_letter


def test_the_refused_option_is_found_in_any_case_and_spacing():
    # option texts read back from a stored prompt keep the space before the line break ("B. Refused \n")
    assert is_refusal_option("Refused ") and is_refusal_option(" REFUSED") and is_refusal_option("refused")
    assert not is_refusal_option("Refused to say") and not is_refusal_option(None)
    assert refusal_letter(["A", "B", "C"], ["Yes", "Refused ", "No"]) == "B"
