"""Perturbations of the instructions (Gu et al. 2023, §2.2 and Table 3) against the paper's examples and
hand-checked properties: seeds, the word-level edits (stop words, the [5, 10] words deleted, the whitespace rule),
the sentence-level shuffle and repeat, and the instruction-level swap to another task."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

import pytest

from wobble.errors import WobbleError
from wobble.seeding import derive_seed, make_rng
from wobble.studies.instructions import conditions as C
from wobble.studies.instructions import perturb as P
from wobble.studies.instructions.conditions import cli_perturb

from instructions_texts import LONG, PAPER, TASK1557, TASK1557_NO_STOPWORDS, TEXT, zebra


def in_order_subsequence(sub, seq) -> bool:
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


# ------------------------------------------------------------------------------------------ seeds

def test_derive_seed_is_stable_and_sensitive():
    a = derive_seed(0, "task1557", "delete_words")
    assert a == derive_seed(0, "task1557", "delete_words")
    assert 0 <= a < 2 ** 64
    # sha256 based, so the value is fixed across processes and platforms
    assert a == int.from_bytes(__import__("hashlib").sha256(b"0\x1ftask1557\x1fdelete_words").digest()[:8], "big")
    assert len({derive_seed(s, t, c) for s in (0, 1) for t in ("a", "b") for c in ("x", "y")}) == 8


def test_words_definition():
    assert P.words("you're given a key-value pair (e.g. <B-PER>), don't!") == [
        "you're", "given", "a", "key-value", "pair", "e", "g", "B-PER", "don't"]
    assert P.words("blank (_) 1,2, or 3") == ["blank", "1", "2", "or", "3"]


# ------------------------------------------------------------------------------------ word level

def test_delete_stopwords_matches_paper_table3():
    assert P.delete_stopwords(TASK1557) == TASK1557_NO_STOPWORDS
    if (PAPER / "table3.csv").exists():
        rows = {r["perturbation"]: r["example_instruction"] for r in csv.DictReader(io.StringIO((PAPER / "table3.csv").read_text()))}
        assert rows["original instruction"] == TASK1557
        kept = re.sub(r"<del>.*?</del>", "", rows["delete stopwords"])
        assert P.words(kept) == P.words(TASK1557_NO_STOPWORDS)


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_delete_stopwords_leaves_no_stop_word(text):
    out = P.delete_stopwords(text)
    assert not [w for w in P.words(out) if P.is_stop_word(w)]
    assert P.words(out) == [w for w in P.words(text) if not P.is_stop_word(w)]
    assert "you're" not in out and "Don't" not in out  # contractions of stop words go too


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_delete_words_removes_5_to_10_words_and_nothing_else(text):
    before = P.words(text)
    for seed in range(20):
        out = P.delete_words(text, make_rng(seed, "t", "delete_words"))
        after = P.words(out)
        assert 5 <= len(before) - len(after) <= 10
        assert in_order_subsequence(after, before)
        # punctuation is never deleted
        def punct(s):
            return Counter(ch for ch in s if not ch.isalnum() and not ch.isspace() and ch not in "'-")
        assert punct(out) == punct(text)


def test_delete_words_short_text_keeps_one_word():
    out = P.delete_words("Fix this now please.", make_rng(0, "t", "delete_words"))
    assert len(P.words(out)) == 1 and out.endswith(".")


def test_delete_whitespace_is_tidy():
    # attached comma stays attached to the previous word; newline survives
    assert P._delete_span("In this task, you", 8, 12) == "In this, you"
    assert P._delete_span("first word\nsecond", 6, 10) == "first\nsecond"
    assert P._delete_span("a (word) b", 3, 7) == "a () b"
    assert P._delete_span("first last", 6, 10) == "first"


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_shuffle_words_keeps_the_multiset(text):
    out = P.shuffle_words(text, make_rng(0, "t", "shuffle_words"))
    assert sorted(P.words(out)) == sorted(P.words(text))
    assert P.words(out) != P.words(text)


# -------------------------------------------------------------------------------- sentence level

def test_repeat_sentence_puts_the_copy_right_after_its_original():
    sents = P.sentences(LONG)
    assert len(sents) == 5
    chosen = set()
    for seed in range(20):
        out = P.repeat_sentence(LONG, make_rng(seed, "t", "repeat_sentences"))
        i = make_rng(seed, "t", "repeat_sentences").randrange(5)  # the sentence the rng picks
        assert P.sentences(out) == sents[:i + 1] + [sents[i]] + sents[i + 1:]
        assert out == " ".join(sents[:i + 1] + [sents[i]] + sents[i + 1:])  # joined by one space, as the fork
        chosen.add(i)
    assert len(chosen) > 1
    # paper Table 3: the last sentence of task1557 repeated (the copy right after it = at the end)
    two = P.sentences(TASK1557)
    assert any(P.repeat_sentence(TASK1557, make_rng(s, "t", "r")) == TASK1557 + " " + two[1] for s in range(10))
    # the first sentence repeated goes between the two, not at the end
    assert any(P.repeat_sentence(TASK1557, make_rng(s, "t", "r")) == " ".join([two[0], two[0], two[1]])
               for s in range(10))


def test_shuffle_sentences_keeps_the_sentences():
    out = P.shuffle_sentences(TASK1557, make_rng(0, "t", "shuffle_sentences"))
    a, b = P.sentences(TASK1557)
    assert out == f"{b} {a}"  # Table 3: two sentences can only be swapped
    for seed in range(10):
        out = P.shuffle_sentences(LONG, make_rng(seed, "t", "shuffle_sentences"))
        assert sorted(P.sentences(out)) == sorted(P.sentences(LONG)) and P.sentences(out) != P.sentences(LONG)
    assert P.shuffle_sentences("Only one sentence here.", make_rng(0)) == "Only one sentence here."


# ----------------------------------------------------------------------------- instruction level

def test_shuffle_instructions_picks_another_task():
    pool = {"t1": "Def one.", "t2": "Def two.", "t3": "Def three.", "t4": "Def one."}
    got = set()
    for seed in range(30):
        out = P.shuffle_instructions("t1", pool, make_rng(seed, "t1", "shuffle_instructions"))
        assert out in ("Def two.", "Def three.")  # never its own task, nor a copy of its own text
        got.add(out)
    assert got == {"Def two.", "Def three."}
    with pytest.raises(ValueError):
        P.shuffle_instructions("t1", {"t1": "x"}, make_rng(0))


# ---------------------------------------------------------------------------------- determinism

@pytest.mark.parametrize("key", ["delete_words", "insert_words", "replace_words", "shuffle_words"])
def test_same_seed_same_text_different_seed_different_text(key):
    kw = {"proposer": zebra}
    a = C.apply_condition(key, "task1557", TASK1557, 0, **kw)
    assert a == C.apply_condition(key, "task1557", TASK1557, 0, **kw)
    assert a != TASK1557
    assert a != C.apply_condition(key, "task1557", TASK1557, 1, **kw)
    assert a != C.apply_condition(key, "task1558", TASK1557, 0, **kw)  # the task name enters the seed


@pytest.mark.parametrize("key", ["repeat_sentences", "shuffle_sentences"])
def test_sentence_conditions_vary_with_seed(key):
    outs = {C.apply_condition(key, "t", LONG, s) for s in range(5)}
    assert len(outs) > 1
    assert C.apply_condition(key, "t", LONG, 3) == C.apply_condition(key, "t", LONG, 3)


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
