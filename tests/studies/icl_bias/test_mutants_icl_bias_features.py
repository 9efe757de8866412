"""icl_bias feature functions: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

from wobble.studies.icl_bias import features as F


def test_truncate_words_keeps_a_text_of_exactly_max_words_as_it_is():
    assert F.truncate_words("a  b", 2) == "a  b"  # two words: not re-joined, its spacing kept
    assert F.truncate_words("a  b  c", 2) == "b c"


def test_has_negation_reads_both_typographic_apostrophes():
    assert F.has_negation("He didn\u2018t go.") == 1
    assert F.has_negation("He didn\u2019t go.") == 1


def test_question_overlap_ignores_the_first_and_last_function_words():
    # "a" and "t" open and close FUNCTION_WORDS; "can't" splits into "can" + "t"
    assert F.question_overlap("Eeyore the donkey.", "is eeyore a donkey") == 1
    assert F.question_overlap("Eeyore is a donkey.", "can't eeyore be a donkey") == 1


def test_identity_value_reads_a_null_share_as_not_marked():
    one, zero = ("muslim",), ("jewish",)
    assert F.identity_value({"muslim": None, "jewish": 0.9}, one, zero) == 0
    assert F.identity_value({"muslim": 0.9}, one, zero) == 1  # a missing column: not marked


def test_split_sentence_pair_splits_at_the_first_newline_by_default():
    assert F.split_sentence_pair("premise\nhypothesis one\nhypothesis two") == ("premise",
                                                                              "hypothesis one\nhypothesis two")


def test_has_negation_reads_a_quoted_word():
    # the quote is stripped before the word is looked up: "'no'" and "can't'" are negations
    assert F.has_negation("He said 'no'.") == 1
    assert F.has_negation("'I can't'") == 1
    assert F.has_negation("'Nobody' came") == 0


def test_words_and_phrases_are_found_in_any_case():
    assert F.contains_word("What a nice movie", "Movie") == 1            # the feature word in any case too
    assert F.question_overlap("Paris is big.", "Is Paris big") == 1       # a capitalised question
    assert F.has_same_as("Same as last year?") == 1
    assert F.review_domain("IMDb") == 1 and F.review_domain("Yelp") == 0
    assert F.genre_value("Government", "government", "fiction") == 1


def test_same_as_is_a_phrase_of_whole_words():
    assert F.has_same_as("Is sesame as sweet as sugar?") == 0    # "same as" inside "sesame as"
    assert F.has_same_as("Is it the same asset?") == 0          # "same as" + "set"
