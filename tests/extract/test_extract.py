"""wobble.extract: filters on messy real-looking replies, each answer the one a reader expects, worked out by
hand; pipelines and their specs, a bad entry reported at its place in the spec, nested alternatives included."""

from __future__ import annotations

import pytest

from wobble.errors import ConfigError
from wobble.extract import (FILTERS, Filter, LetterString, Normalize, Number, OptionLetter, Pipeline, Regex, Strip,
                            TakeFirst, YesNo, build_pipeline, extract, normalize_number)

RATIONALE = ("Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether in April and May.\n"
             "Answer: 72")


@pytest.mark.parametrize("text, first, last", [
    (RATIONALE, "48", "72"),
    ("a rationale ... Answer: 18", "18", "18"),
    ("Answer: $1,080.00", "1080", "1080"),
    ("The total is -$5.50, not 1,000,000.", "-5.5", "1000000"),
    ("It costs $-3 or \u22124.0", "-3", "-4"),
    ("0.50 of 007 apples is .25", "0.5", "0.25"),
    ("scores 3-5 on H2O, 50% of 1.5.3", "3", "1.5"),
    ("no digits here", None, None),
])
def test_number_first_and_last(text, first, last):
    assert Number()(text) == first
    assert Number(select="last")(text) == last


def test_normalize_number_by_hand():
    assert normalize_number("", "1,080.00") == "1080"
    assert normalize_number("-", "0.0") == "0"
    assert normalize_number("\u2212", "012.340") == "-12.34"
    assert normalize_number("", ".5") == "0.5"


@pytest.mark.parametrize("text, first, last", [
    ("the answer is (B)", "B", "B"),
    ("Let me think. The answer is (A). Wait, actually the answer is (C).", "A", "C"),
    ("**Answer:** D", "D", "D"),
    ("My choice: **C**", "C", "C"),
    ("Answer: B. Paris is the capital.", "B", "B"),
    ("B) Paris", "B", "B"),
    ("I would pick option E", "E", "E"),
    ("C", "C", "C"),
    ("A cat is not an option; neither is Bob.", None, None),
    ("I cannot answer this question.", None, None),
    ("the answer is b", None, None),
])
def test_option_letter(text, first, last):
    assert OptionLetter()(text) == first
    assert OptionLetter(select="last")(text) == last


def test_option_letter_respects_the_allowed_letters():
    assert OptionLetter(letters="AB")("the answer is (C), or maybe (B)") == "B"
    with pytest.raises(ValueError):
        OptionLetter(letters="ab")


@pytest.mark.parametrize("text, style, first, last", [
    ("**Answer:** true", "true/false", "true", "true"),
    ("**Answer:** true", "yes/no", "yes", "yes"),
    ("Yes. On reflection, no.", "yes/no", "yes", "no"),
    ("FALSE", "true/false", "false", "false"),
    ("Nothing to say; notably unknown.", "yes/no", None, None),
])
def test_yes_no(text, style, first, last):
    assert YesNo(style=style)(text) == first
    assert YesNo(style=style, select="last")(text) == last


def test_letter_string_prefers_quoted():
    assert LetterString()('The last letters are "n" and "k", so the answer is "nk".') == "n"
    assert LetterString(select="last")('The last letters are "n" and "k", so the answer is "nk".') == "nk"
    assert LetterString()("NK.") == "nk"
    assert LetterString(lower=False)("NK.") == "NK"
    assert LetterString()("42 !") is None


def test_regex_group_select_and_no_match():
    text = "Answer: 12\nSo the answer is: 15"
    assert Regex(r"answer(?: is)?:\s*(\d+)")(text) == "12"
    assert Regex(r"answer(?: is)?:\s*(\d+)", select="last")(text) == "15"
    assert Regex(r"\d+", select="last")(text) == "15"                     # no group: the whole match
    assert Regex(r"Answer", ignore_case=False, select="last")(text) == "Answer"
    assert Regex(r"answer:\s*(\d+)")("no answer here") is None
    with pytest.raises(ValueError):
        Regex(r"(a)", group=2)


def test_strip_and_normalize():
    assert Strip(chars="*.")("  **Paris.** ") == "Paris"
    assert Strip()("   ") is None
    assert Normalize()("  **The   Eiffel\nTower.**  ") == "the eiffel tower"
    assert Normalize()("**...**") is None


def test_none_passes_through_every_filter():
    for f in (Regex("x"), Number(), OptionLetter(), YesNo(), LetterString(), Strip(), Normalize()):
        assert f(None) is None


def test_pipeline_reads_the_answer_line_then_the_number():
    answer_number = Pipeline(Regex(r"answer\W*(?:is)?\W*(.*)"), Number())
    assert answer_number("a rationale with 3 and 4 ... Answer: $1,080.00") == "1080"
    assert answer_number("the reasoning says 7 but gives no answer line") is None
    fallback = TakeFirst(answer_number, Number(select="last"))
    assert fallback("the reasoning says 7 but gives no answer line, 9") == "9"
    assert fallback("nothing") is None
    assert extract("the answer is (B)", Regex("answer is (.*)"), OptionLetter()) == "B"


def test_pipeline_spec_round_trip_and_config_errors():
    spec = [{"filter": "take_first", "alternatives": [
        [{"filter": "regex", "pattern": "answer is (.*)"}, "option_letter"],
        [{"filter": "option_letter", "select": "last", "letters": "ABCD"}]]}]
    p = build_pipeline(spec)
    assert p("I think (A)... the answer is (C)") == "C"
    assert p("first (A), finally (D)") == "D"
    assert build_pipeline(p.spec()) == p
    with pytest.raises(ConfigError, match=r"extract\[0\]\.filter.*got 'numbr'"):
        build_pipeline(["numbr"])
    with pytest.raises(ConfigError, match=r"extract\[1\]': unknown key\(s\) \['sel'\]"):
        build_pipeline(["strip", {"filter": "number", "sel": "last"}])
    with pytest.raises(ConfigError, match=r"extract\[0\]': valid settings for filter 'number'"):
        build_pipeline([{"filter": "number", "select": "middle"}])
    with pytest.raises(ConfigError, match="non-empty list of filters"):
        build_pipeline([])
    with pytest.raises(ConfigError, match="alternatives"):
        build_pipeline([{"filter": "take_first"}])


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


@pytest.mark.parametrize("entry", [{"select": "last"}, 3, ["number"]])
def test_an_entry_without_a_filter_name_is_a_config_error(entry):
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]': a filter name or a mapping with 'filter'"):
        build_pipeline([entry])


def test_nested_alternatives_name_their_place():
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]\.alternatives\[1\]\[0\]\.filter'"):
        build_pipeline([{"filter": "take_first", "alternatives": [["number"], ["numbr"]]}])


def test_no_answer_from_a_step_is_the_pipelines_result_whatever_follows():
    # a step is any callable; once a step finds nothing, later steps are not asked
    assert Pipeline(Regex(r"answer: (\d+)"), lambda value: "guessed")("no answer line") is None
    assert TakeFirst(lambda value: "guessed")(None) is None


def test_take_first_takes_exactly_one_key_alternatives_as_a_non_empty_list():
    for entry in ({"filter": "take_first", "alternatives": [["number"]], "select": "last"},
                  {"filter": "take_first", "alternatives": "number"},
                  {"filter": "take_first", "alternatives": []}):
        with pytest.raises(ConfigError, match="take_first with exactly one key 'alternatives'"):
            build_pipeline([entry])


@pytest.mark.parametrize("spec", ["number", 5, {"filter": "number"}])
def test_a_pipeline_spec_must_be_a_list(spec):
    with pytest.raises(ConfigError, match="a non-empty list of filters"):
        build_pipeline(spec)
