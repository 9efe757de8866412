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


def test_regex_strips_the_captured_answer_and_skips_a_blank_one():
    # "Answer:" followed by spaces: the group is " Paris " -> "Paris"; a blank group is no answer
    assert Regex(r"Answer:(.*)")("Answer:  Paris \nThanks") == "Paris"
    assert Regex(r"Answer:(.*)")("Answer:   \nAnswer: Rome") == "Rome"


def test_a_malformed_thousands_grouping_is_not_read_as_thousands():
    # "12,3456": the number ends at the comma; reading "12,345" as twelve thousand would drop the last digit
    assert Number()("12,3456 words") == "12"


@pytest.mark.parametrize("text", [
    "Answer: Denver",                          # "answer: D" followed by a letter: a word, not option D
    "That is vitamin C. It helps.",            # "C." inside a line is not an option line
    "A.M. is early",                           # "A." followed by a letter is an abbreviation
    "Take vitamin C",                          # a letter at the end of a line is not alone on it
])
def test_option_letter_does_not_read_a_letter_that_is_part_of_prose(text):
    assert OptionLetter()(text) is None


def test_option_letter_after_option_or_choice_must_stand_alone():
    # "choice Depends": D is the start of a word; the answer is the (B) that follows
    assert OptionLetter()("My choice Depends on the context; the answer is (B)") == "B"


def test_option_letters_must_all_be_letters():
    with pytest.raises(ValueError, match="upper-case letters"):
        OptionLetter(letters="AB1")


def test_yes_no_reads_whole_words_only():
    # "eyes" ends in "yes" and "untrue" in "true": neither is an answer
    assert YesNo()("Keep your eyes open.") is None
    assert YesNo(style="true/false")("That is untrue") is None


def test_strip_removes_any_whitespace_around_the_answer():
    # a non-breaking space (HTML output) and a form feed are whitespace too
    assert Strip()("\u00a0Paris\u00a0") == "Paris"
    assert Strip(chars="*")("\f**Paris**\f") == "Paris"
