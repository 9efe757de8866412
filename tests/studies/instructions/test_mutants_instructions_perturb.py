"""wobble.studies.instructions.perturb: behaviour the mutation run (tests/tools/mutate.py) found untested.

The paper's perturbations (Gu et al. 2023, §2.2 and Table 3) as a researcher relies on them: the [5, 10]
range of words edited, a shuffle that never returns the original order, possessives that are not stop
words, and the whitespace rule of the module docstring, one branch per case.
"""

from __future__ import annotations

import pytest

from wobble.errors import WobbleError
from wobble.seeding import make_rng
from wobble.studies.instructions import perturb as P
from wobble.studies.instructions.conditions import cli_perturb

TEXT = ("In this task, you will be shown an incorrect English sentence. "
        "You need to generate a corrected form of the input sentence.")


# ------------------------------------------------------------------------------------- stop words

def test_possessives_and_hyphenated_words_are_not_stop_words():
    assert P.is_stop_word("task's") is False          # possessive of a content word
    assert P.is_stop_word("well-being") is False      # a hyphenated word is one word, not "well" + "being"
    assert P.is_stop_word("y'all") is False           # "y'" is not a stop word
    assert P.is_stop_word("task") is False
    assert P.is_stop_word("everyone's") is True       # every piece ("everyone", "'s") is a stop word
    assert P.delete_stopwords("Read the task's input.") == "Read task's input."


# -------------------------------------------------------------------------------------- the k range

def test_delete_words_draws_every_k_from_5_to_10():
    n = len(P.words(TEXT))
    ks = {n - len(P.words(P.delete_words(TEXT, make_rng(seed, "t", "delete_words")))) for seed in range(60)}
    assert ks == {5, 6, 7, 8, 9, 10}


def test_a_one_word_text_keeps_its_word():
    assert P.delete_words("Hello.", make_rng(0, "t", "delete_words")) == "Hello."


# ----------------------------------------------------------------------------------- whitespace rule

@pytest.mark.parametrize("text, word, expected", [
    ("Word rest\n", "Word", "rest\n"),                  # first word: nothing before it, trailing newline kept
    (" Word rest", "Word", " rest"),                    # leading whitespace of the text is kept
    ("#tag rest", "tag", "# rest"),                     # "#" is no opener: the space on the right stays
    ("(word x", "word", "(x"),                          # attached to an opener: no space kept
    ("( word/x", "word", "( /x"),                       # not attached (space between): the space stays
    ("the input/output pair", "input", "the /output pair"),  # "/" is no closer: the space on the left stays
    ("a\tword b", "word", "a\tb"),                      # a tie in newlines keeps the left run
    ("a\n\nword\nb", "word", "a\n\nb"),                 # the run with more newlines is kept
    ("pick 1,2 or 3", "1", "pick,2 or 3"),              # attached to a closing comma
    ("the users' answers", "users", "the' answers"),    # a closing quote (not "'s") is a closer
    ("ask the users'", "users", "ask the'"),            # ... also at the very end
])
def test_delete_span_whitespace(text, word, expected):
    start = text.index(word)
    assert P._delete_span(text, start, start + len(word)) == expected


# ----------------------------------------------------------------------------------------- shuffles

def test_a_sentence_shuffle_never_returns_the_original_order():
    two = "First sentence here. Second sentence here."
    for seed in range(20):
        assert P.shuffle_sentences(two, make_rng(seed, "t", "shuffle_sentences")) == \
            "Second sentence here. First sentence here."
    assert all(P.shuffle_words("alpha beta", make_rng(seed, "t", "w")) == "beta alpha" for seed in range(20))


def test_identical_items_cannot_differ():
    assert P.shuffle_words("same same same", make_rng(0, "t", "w")) == "same same same"


def test_the_rotation_fallback():
    class NoShuffle:  # an rng whose shuffles never move anything: the fallback must still differ
        def shuffle(self, items):
            pass

    assert P._permute_differently(["a", "b", "c"], NoShuffle()) == ["b", "c", "a"]


def test_repeat_sentence_of_an_empty_text():
    assert P.repeat_sentence("", make_rng(0, "t", "r")) == ""


def test_pick_other_task_without_definitions():
    assert P.pick_other_task("a", ["a", "b"], make_rng(0, "t", "s")) == "b"


# ----------------------------------------------------------------------------------------------- cli

def test_cli_perturb_defaults_to_seed_1_and_passes_every_resource_on():
    assert cli_perturb("shuffle_words", TEXT) == cli_perturb("shuffle_words", TEXT, seed=1)
    assert cli_perturb("shuffle_words", TEXT) != cli_perturb("shuffle_words", TEXT, seed=2)
    pool = {"cli": TEXT, "other": "Answer the question."}
    assert cli_perturb("shuffle_instructions", TEXT, definitions_by_task=pool) == "Answer the question."
    out = cli_perturb("insert_words", TEXT, proposer=lambda left, right: "zebra")
    assert P.words(out).count("zebra") >= 5
    assert cli_perturb("paraphrase_1", TEXT, paraphrases={"cli": ["Fix the sentence."]}) == "Fix the sentence."
    with pytest.raises(WobbleError):
        cli_perturb("shuffle_instructions", TEXT)


def test_sentences_are_stripped_and_blank_ones_dropped():
    # spaCy puts the blank line and the double space into the next sentence: " Third.", "\n\nSecond one."
    assert P.sentences("First one.\n\nSecond one.  Third.") == ["First one.", "Second one.", "Third."]
    assert P.sentences("  \n\n  ") == []


def test_a_text_of_one_sentence_or_none_is_not_shuffled_at_all():
    assert P.shuffle_sentences("  Only one sentence here.  ", make_rng(0)) == "  Only one sentence here.  "
    assert P.shuffle_sentences("  \n ", make_rng(0)) == "  \n "


def test_a_hyphenated_run_of_stop_words_is_a_stop_word():
    # spaCy splits "so-it's" into "so", "-", "it", "'s": the hyphen is no word, the rest are stop words
    assert P.is_stop_word("so-it's")


def test_another_task_is_one_whose_definition_differs_beyond_whitespace():
    defs = {"t1": "Add the numbers.", "t2": "Add the numbers.  \n", "t3": "Sort the list."}
    assert {P.pick_other_task("t1", defs, make_rng(seed), defs) for seed in range(20)} == {"t3"}
    assert {P.pick_other_task("t2", defs, make_rng(seed), defs) for seed in range(20)} == {"t3"}
    # a task outside the definitions: any other task
    assert P.pick_other_task("t9", ["t1", "t9"], make_rng(0), defs) == "t1"
