"""Feature functions and the 22-pair registry of the icl_bias study, on hand-made examples."""

from __future__ import annotations

import pytest

from wobble.errors import ConfigError
from wobble.studies.icl_bias import features as F
from wobble.studies.icl_bias.pairs import PAIRS, get_pair, split_source


def _words(n: int, last: str = "word") -> str:
    return " ".join(["w"] * (n - 1) + [last])


@pytest.mark.parametrize("n, expected", [(39, 1), (40, None), (41, 0), (1, 1)])
def test_is_short_40_words(n, expected):
    assert F.is_short(_words(n)) == expected


@pytest.mark.parametrize("n, expected", [(49, 0), (50, None), (51, 1)])
def test_passage_is_long_50_words(n, expected):
    assert F.passage_is_long(_words(n)) == expected


def test_clean_review_removes_br_markup():
    assert F.clean_review("Great film.<br /><br />Loved it!<br/>  ") == "Great film. Loved it!"
    assert F.n_words(F.clean_review("a<br />b")) == 2


@pytest.mark.parametrize("text, expected", [
    ("Best tacos in town!", 1), ("Best tacos in town!!!  ", 1), ("Meh.", 0), ("So so...", 0),
    ("Would I go back?", None), ("ok :)", None), ("", None),
])
def test_terminal_punctuation(text, expected):
    assert F.ends_with_exclamation(text) == expected


@pytest.mark.parametrize("text, word, expected", [
    ("The food was cold.", "food", 1), ("FOOD!", "food", 1), ("Great seafood place", "food", 0),
    ("nice", "nice", 1), ("It was nicely done", "nice", 0), ("Not nice, not food-related", "food", 1),
])
def test_contains_word(text, word, expected):
    assert F.contains_word(text, word) == expected


@pytest.mark.parametrize("text, expected", [
    ("I loved THIS movie", 1), ("I am A fan", 0), ("aka JJP58 is", 1), ("since 624D?", 1),
    ("Trumpers...#MAGA", 1), ("all lower case", 0), ("Title Case Only", 0), ("MiXeD", 0), ("US.", 1),
])
def test_has_uppercase_word(text, expected):
    assert F.has_uppercase_word(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("The man is not here.", 1), ("No one came.", 1), ("He didn't go.", 1), ("He didn\u2019t go.", 1),
    ("Nobody knows.", 0), ("Notice the sign.", 0), ("He is home.", 0), ("Absolutely NOT!", 1),
])
def test_has_negation(text, expected):
    assert F.has_negation(text) == expected


def test_hans_overlap_all_hypothesis_words_in_premise():
    assert F.hans_overlap("In the other bracket, the Broncos beat the New York Jets.",
                          "The Broncos beat the New York Jets. ") == 1
    assert F.hans_overlap("back a few years", "A few years back") == 1
    assert F.hans_overlap("The cat sat.", "The dog sat.") == 0


def test_question_overlap_ignores_function_words():
    passage = "Eeyore is a gloomy old grey stuffed donkey, a friend of Winnie-the-Pooh."
    assert F.question_overlap(passage, "is eeyore from winnie the pooh a donkey") == 1  # "from" is a function word
    assert F.question_overlap(passage, "is eeyore a horse") == 0
    assert F.question_overlap(passage, "is eeyore from winnie the pooh a donkey", ignore=frozenset()) == 0


def test_hypothesis_is_shorter():
    assert F.hypothesis_is_shorter("one two three", "one two") == 1
    assert F.hypothesis_is_shorter("one two", "one two three") == 0
    assert F.hypothesis_is_shorter("one two", "three four") is None


@pytest.mark.parametrize("q, expected", [
    ("is the sky blue", 1), ("Was it rainy", 1), ("does it rain", 0), ("did he go", 0), ("do cats purr", 0),
    ("can birds fly", None), ("", None), ("isthmus of panama", None),
])
def test_question_word(q, expected):
    assert F.question_word(q) == expected


def test_has_same_as():
    assert F.has_same_as("is the lord's supper the same as the last supper") == 1
    assert F.has_same_as("is a sameas b") == 0
    assert F.has_same_as("is it the same") == 0


def test_metadata_features():
    assert F.review_domain("imdb") == 1 and F.review_domain("yelp") == 0 and F.review_domain("amazon") is None
    assert F.genre_value("government", "government", "fiction") == 1
    assert F.genre_value("fiction", "government", "fiction") == 0
    assert F.genre_value("telephone", "government", "fiction") is None


def test_identity_value():
    one, zero = ("muslim",), ("jewish",)
    assert F.identity_value({"muslim": 0.8, "jewish": 0.0}, one, zero) == 1
    assert F.identity_value({"muslim": 0.2, "jewish": 0.5}, one, zero) == 0
    assert F.identity_value({"muslim": 0.6, "jewish": 0.6}, one, zero) is None  # both
    assert F.identity_value({"muslim": 0.1}, one, zero) is None  # neither
    assert F.identity_value({"bisexual": 0.7}, ("homosexual_gay_or_lesbian", "bisexual"), ()) == 1
    assert F.identity_value({"bisexual": 0.2}, ("homosexual_gay_or_lesbian", "bisexual"), ()) == 0


def test_split_sentence_pair():
    assert F.split_sentence_pair("premise\nhypothesis") == ("premise", "hypothesis")
    assert F.split_sentence_pair("line one\nline two\nquestion", last=True) == ("line one\nline two", "question")
    with pytest.raises(ValueError):
        F.split_sentence_pair("no newline")


def test_registry_has_the_22_pairs_of_the_authors_run_script():
    assert len(PAIRS) == 22
    assert sum(p.released for p in PAIRS.values()) == 7
    assert {p.code for p in PAIRS.values()} == {"SA", "TC", "NLI", "QA"}
    assert sorted(p.table3 for p in PAIRS.values() if p.table3) == [
        "Govt/Fiction", "Govt/Telephone", "Length", "Negation", "Overlap"]


def test_pair_features_on_pool_items():
    item = {"text": "Loved it, GREAT food!", "meta": {"domain": "yelp"}}
    assert PAIRS["sa_sentiment_punctuation"].h2(item) == 1
    assert PAIRS["sa_sentiment_uppercase"].h2(item) == 1
    assert PAIRS["sa_sentiment_lexicon_food"].h2(item) == 1
    assert PAIRS["sa_sentiment_lexicon_nice"].h2(item) == 0
    assert PAIRS["sa_sentiment_domain"].h2(item) == 0
    assert PAIRS["sa_sentiment_length"].h2(item) == 1
    nli = {"text": "The man did not sleep at all.\nThe man slept."}
    assert PAIRS["nli_entailment_negation"].h2(nli) == 0  # negation in the premise only
    assert PAIRS["nli_entailment_length"].h2(nli) == 1
    assert PAIRS["nli_entailment_overlap"].h2(nli) == 0
    qa = {"text": "Passage one.\nPassage two is about cats.\ndoes a cat purr"}
    assert PAIRS["boolq_answer_qword"].h2(qa) == 0
    assert PAIRS["boolq_answer_length"].h2(qa) == 0
    assert PAIRS["comments_toxicity_gender"].h2({"text": "x", "meta": {"identity": {"female": 1.0}}}) == 1
    assert PAIRS["nli_entailment_genre_gov_tele"].h2({"text": "a\nb", "meta": {"genre": "telephone"}}) == 0


def test_split_sources_and_unknown_pair():
    assert split_source(PAIRS["boolq_answer_qword"]) == ("authors", "the authors' released split")
    assert split_source(PAIRS["boolq_answer_qword"], prefer="rebuild")[0] == "boolq"
    assert split_source(PAIRS["sa_sentiment_domain"])[0] == "reviews"
    src, reason = split_source(PAIRS["comments_toxicity_gender"])
    assert src is None and "identity annotations" in reason
    assert split_source(PAIRS["comments_toxicity_religion_muslim_jewish"], prefer="rebuild")[0] == "authors"
    with pytest.raises(ConfigError, match="unknown pair 'sa_sentiment_colour'"):
        get_pair("sa_sentiment_colour")
    with pytest.raises(ConfigError, match="'authors' or 'rebuild'"):
        split_source(PAIRS["boolq_answer_qword"], prefer="mixed")


def test_truncate_words_keeps_the_end():
    assert F.truncate_words("a b c d!", 2) == "c d!"
    assert F.truncate_words("a  b", 5) == "a  b"
    assert F.truncate_words("a b", None) == "a b"
    assert F.ends_with_exclamation(F.truncate_words(_words(80, "great!"), 41)) == 1
    assert F.is_short(F.truncate_words(_words(80), 41)) == 0  # a truncated long text stays long


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
