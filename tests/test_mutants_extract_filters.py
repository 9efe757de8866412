"""wobble.extract.filters: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each case is a reply a model could write, with the answer a reader expects, worked out by hand.
"""

from __future__ import annotations

import pytest

from wobble.extract import FILTERS, Filter, LetterString, Normalize, Number, OptionLetter, Regex, Strip, YesNo


def test_filter_names_are_the_spec_names():
    assert sorted(FILTERS) == ["letter_string", "normalize", "number", "option_letter", "regex", "strip", "yes_no"]
    assert {name: cls.name for name, cls in FILTERS.items()} == {name: name for name in FILTERS}


def test_the_base_filter_has_no_rule():
    with pytest.raises(NotImplementedError):
        Filter()("text")


@pytest.mark.parametrize("cls", [Regex, Number, OptionLetter, YesNo, LetterString])
def test_select_must_be_first_or_last(cls):
    kwargs = {"pattern": "x"} if cls is Regex else {}
    with pytest.raises(ValueError, match="select must be one of"):
        cls(select="middle", **kwargs)


def test_yes_no_style_must_be_known():
    with pytest.raises(ValueError, match="style must be one of"):
        YesNo(style="maybe")


def test_regex_group_zero_and_the_last_group_are_allowed():
    assert Regex(r"(\d+) apples", group=0)("I have 12 apples") == "12 apples"
    assert Regex(r"(\d+) (apples)", group=2)("I have 12 apples") == "apples"
    with pytest.raises(ValueError, match="has 2 groups"):
        Regex(r"(\d+) (apples)", group=3)


def test_regex_skips_matches_whose_group_did_not_take_part():
    # the optional group is None on "answer: none" and "" on the second: no answer in either
    assert Regex(r"answer: (\d+)?")("answer: none") is None
    assert Regex(r"answer: (\d+)?", select="last")("answer: 4, then answer: none") == "4"


def test_option_letter_reads_only_its_letters_and_orders_by_position():
    assert OptionLetter()("the answer is (X)") is None
    assert OptionLetter()("(F) is not shown") is None
    # "**B**" (4th pattern) stands before "(C)" (1st pattern): the first place in the text wins
    assert OptionLetter()("**B** first, then (C)") == "B"
    assert OptionLetter(select="last")("(C) first, then **B**") == "B"


def test_strip_keeps_letters_that_are_not_its_chars():
    assert Strip()("XL box") == "XL box"
    assert Strip(chars=".")("Xmas. ") == "Xmas"
    assert Strip(chars="*")("\t**Paris**\n") == "Paris"


def test_number_and_normalize_on_zeros_and_edges():
    assert Number()("0.500") == "0.5" and Number()("000") == "0" and Number()("100.0") == "100"
    assert Normalize()("(Xylophone!)") == "xylophone"
