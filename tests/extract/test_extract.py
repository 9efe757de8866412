"""wobble.extract: filters on messy real-looking replies, hand-checked; pipelines and their specs."""

from __future__ import annotations

import pytest

from wobble.errors import ConfigError
from wobble.extract import (LetterString, Normalize, Number, OptionLetter, Pipeline, Regex, Strip, TakeFirst, YesNo,
                            build_pipeline, extract, normalize_number)

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
