"""wobble.studies.icl_bias.interventions: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each intervention's prompt style is built from its table (§5.1: Table 6 verbalizers, Tables 7-8 instructions,
Tables 9-10 explanations); hand-made tables below make each reading rule decide a visible result.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wobble.errors import DataError
from wobble.studies.icl_bias import interventions as I
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.prompts import PromptStyle

PAPER = Path(__file__).resolve().parents[3] / "paper" / "icl_bias"
FOOD, NEG = PAIRS["sa_sentiment_lexicon_food"], PAIRS["nli_entailment_negation"]


@pytest.fixture(scope="module")
def texts():
    return I.load_paper_texts(PAPER)


@pytest.mark.parametrize("pair, target", [(FOOD, "h1"), (FOOD, "h2"), (NEG, "h1"), (NEG, "h2"),
                                          (PAIRS["boolq_answer_length"], "h2"),         # an explanation with a note
                                          (PAIRS["comments_toxicity_uppercase"], "h2")])
def test_each_interventions_style_is_its_tables_reading(texts, pair, target):
    assert I.style(texts, pair, "baseline") == PromptStyle("baseline")
    prefix, words = I.verbalizer(texts, pair, target)
    assert I.style(texts, pair, "verbalizer", target) == PromptStyle("verbalizer", target, label_prefix=prefix,
                                                                       label_words=words)
    text, notes = I.instruction(texts, pair, target)
    assert I.style(texts, pair, "instruction", target) == PromptStyle("instruction", target, instruction=text,
                                                                        notes=notes)
    exps, notes = I.explanations(texts, pair, target)
    assert I.style(texts, pair, "explanation", target) == PromptStyle("explanation", target, explanations=exps,
                                                                        notes=notes)
    assert I.style(texts, pair, "disambig", target) == PromptStyle("disambig", target, disambig=True)


def test_the_negation_instruction_is_swapped_and_says_so(texts):
    text, notes = I.instruction(texts, NEG, "h2")
    assert I.NEGATION_OURS in text and I.NEGATION_PRINTED not in text
    assert notes == ("negation instruction: answer clauses swapped to match h2 = 1 for a negation word (Table 8 "
                     "says the opposite)",)
    broken = {**texts, "instruction": {**texts["instruction"],
                                       ("natural language inference", "Hypothesis negation"): "Say 1 or 0."}}
    with pytest.raises(DataError, match="the printed clause"):
        I.instruction(broken, NEG, "h2")


def _with(texts, kind, feature, value, task="sentiment analysis"):
    return {**texts, kind: {**texts[kind], (task, feature): value}}


def test_a_verbalizer_needs_one_word_per_value(texts):
    bad = _with(texts, "verbalizer", "Sentiment", "“Mood?” 1 - “good” / “great”, 0 - “bad”")
    pair = PAIRS["sa_sentiment_punctuation"]  # no "a / b" choice to resolve the two words
    with pytest.raises(DataError, match="one label word per value"):
        I.verbalizer(bad, pair, "h1")
    padded = _with(texts, "verbalizer", "Sentiment", "  “Mood?” 1 - “good”, 0 - “bad”  ")
    assert I.verbalizer(padded, pair, "h1") == ("Mood?", ("bad", "good"))


def test_explanations_need_a_reason_for_1_and_derive_an_unreadable_0(texts):
    blank = _with(texts, "explanation", "Length (1)", "   ")
    pair = PAIRS["sa_sentiment_length"]
    with pytest.raises(DataError, match="a non-empty explanation"):
        I.explanations(blank, pair, "h2")
    unreadable = _with(texts, "explanation", "Length (0)", "  ")
    assert I.explanations(unreadable, pair, "h2") == (
        ("The review is longer than 40 words. Therefore, the answer is 0.",
         "The review is shorter than 40 words. Therefore, the answer is 1."),
        ("explanation 'Length (0)' is unreadable in the paper; ours, written from its (1) twin",))
    same = _with(texts, "explanation", "Length (0)", "The review is shorter than 40 words. Therefore, the answer is 0.")
    assert I.explanations(same, pair, "h2")[1] == (
        "explanations 'Length (0)' and '(1)' give the same reason as printed (kept)",)


def test_the_complement_swaps_whole_words_both_ways():
    assert I.complement_explanation("It is shorter than the headlonger one. Therefore, the answer is 1.") == \
        "It is longer than the headlonger one. Therefore, the answer is 0."
    assert I.complement_explanation("It is longer, not shorterish. Therefore, the answer is 1.") == \
        "It is shorter, not shorterish. Therefore, the answer is 0."
    with pytest.raises(ValueError, match="cannot derive"):
        I.complement_explanation("It is longer. So 1.")


@pytest.mark.parametrize("text, choose, expected", [
    ("“nice”/“food”", ("food", "nice"), "“food”"),
    ("Food / nice", ("food", "nice"), "Food"),
    ("“Christian” / “Jewish”", ("Christian", "Jewish"), "“Christian”"),
    ("“christian” / “jewish”", ("Christian", "Jewish"), "“christian”"),   # the text's own spelling is kept
    ("nonfiction about fiction", ("government", "fiction"), "nonfiction about government"),
    ("fictional fiction", ("government", "fiction"), "fictional government"),
])
def test_an_alternative_resolves_to_this_pairs_word(text, choose, expected):
    assert I.resolve_alternatives(text, choose) == expected


def test_table_cells_are_read_stripped_and_a_bad_table_names_its_line(tmp_path):
    for f in PAPER.glob("table*.csv"):
        shutil.copy(f, tmp_path / f.name)
    t6 = tmp_path / "table6.csv"
    t6.write_text(t6.read_text(encoding="utf-8").replace("Sentiment analysis,Sentiment,", " Sentiment analysis , Sentiment ,",
                                                          1), encoding="utf-8")
    assert ("sentiment analysis", "Sentiment") in I.load_paper_texts(tmp_path)["verbalizer"]
    t6.write_text("task,feature\nSentiment Analysis,Sentiment\n", encoding="utf-8")
    with pytest.raises(DataError, match="table6.csv: record line 2: columns task, feature, verbalizer"):
        I.load_paper_texts(tmp_path)
