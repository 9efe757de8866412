"""icl_bias prompt format and interventions (texts read from the paper's Tables 6-10).

As the authors' run script (``run.py``) writes them: each instance and label word stripped, the instruction
once before the demonstrations (Tables 7-8), the query without its label, a prompt set's prefix built once.
Each intervention's prompt style is built from its table (Table 6 verbalizers, Tables 7-8 instructions,
Tables 9-10 explanations); hand-made tables make each reading rule decide a visible result."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wobble.errors import ConfigError, DataError
from wobble.studies.icl_bias import interventions as I
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.prompts import (
    BASE_PREFIX, PromptStyle, build_prompt, content_free_prompts, demo_block, query_block, shared_prefix,
)

PAPER = Path(__file__).resolve().parents[3] / "paper" / "icl_bias"


@pytest.fixture(scope="module")
def texts():
    return I.load_paper_texts(PAPER)


def test_demo_and_query_blocks_follow_the_authors_format():
    assert demo_block("  A fine film. ", "1") == "A fine film.\n\nCategory:1\n\n"
    assert query_block("Bad food.") == "Bad food.\n\nCategory:"
    assert demo_block("x", "yes", "Toxic?") == "x\n\nToxic?yes\n\n"


def test_shared_prefix_and_prompt():
    style = PromptStyle("instruction", "h1", instruction="Say 1 or 0.")
    prefix = shared_prefix(style, [("good", 1), ("bad", 0)])
    assert prefix == "Say 1 or 0.\n\ngood\n\nCategory:1\n\nbad\n\nCategory:0\n\n"
    assert build_prompt(prefix, "meh", style) == prefix + "meh\n\nCategory:"
    assert shared_prefix(PromptStyle("baseline"), []) == ""


def test_explanations_replace_the_label_word():
    style = PromptStyle("explanation", "h2", explanations=("It is long. Therefore, the answer is 0.",
                                                          "It is short. Therefore, the answer is 1."))
    assert style.generates and not PromptStyle("baseline").generates
    assert shared_prefix(style, [("a b", 1)]) == "a b\n\nCategory:It is short. Therefore, the answer is 1.\n\n"


def test_content_free_prompts_zhao_et_al():
    style = PromptStyle("verbalizer", "h2", label_prefix="Source?", label_words=("other", "movie"))
    assert content_free_prompts("P\n\n", style) == ["P\n\n[MASK]\n\nSource?", "P\n\nN/A\n\nSource?", "P\n\n\n\nSource?"]


def test_resolve_alternatives():
    food, nice = PAIRS["sa_sentiment_lexicon_food"].choose, PAIRS["sa_sentiment_lexicon_nice"].choose
    s = "mentions the word “nice”/“food”. Please answer"
    assert I.resolve_alternatives(s, food) == "mentions the word “food”. Please answer"
    assert I.resolve_alternatives(s, nice) == "mentions the word “nice”. Please answer"
    assert I.resolve_alternatives("Has food / nice?", nice) == "Has nice?"
    tele = PAIRS["nli_entailment_genre_gov_tele"].choose
    assert (I.resolve_alternatives("government files or fiction/telephone. Answer “0” for fiction", tele)
            == "government files or telephone. Answer “0” for telephone")
    assert I.resolve_alternatives("x / y", food) == "x / y"
    assert I.resolve_alternatives("Christian/Jewish", None) == "Christian/Jewish"


def test_verbalizers_from_table6(texts):
    assert I.verbalizer(texts, PAIRS["sa_sentiment_domain"], "h2") == ("Source?", ("other", "movie"))
    assert I.verbalizer(texts, PAIRS["sa_sentiment_domain"], "h1") == (BASE_PREFIX, ("negative", "positive"))
    assert I.verbalizer(texts, PAIRS["comments_toxicity_religion_muslim_jewish"], "h2") == (
        "Religion?", ("Jewish", "Muslim"))
    assert I.verbalizer(texts, PAIRS["sa_sentiment_lexicon_nice"], "h2") == ("Has nice?", ("no", "yes"))
    assert I.verbalizer(texts, PAIRS["boolq_answer_length"], "h2") == ("Length?", ("short", "long"))
    assert I.verbalizer(texts, PAIRS["nli_entailment_overlap"], "h1") == ("Entailed?", ("no", "yes"))


def test_instructions_from_tables_7_8(texts):
    text, notes = I.instruction(texts, PAIRS["sa_sentiment_punctuation"], "h2")
    assert text.startswith("Given a review, you need to predict whether the review ends with an exclamation")
    assert notes == ()
    text, _ = I.instruction(texts, PAIRS["comments_toxicity_religion_muslim_jewish"], "h2")
    assert "“1” for Muslim and “0” for Jewish." in text and "Christian" not in text


def test_negation_instruction_is_made_consistent_with_the_label_map(texts):
    printed = texts["instruction"][("natural language inference", "Hypothesis negation")]
    assert I.NEGATION_PRINTED in printed
    text, notes = I.instruction(texts, PAIRS["nli_entailment_negation"], "h2")
    assert "“1” for having negations and “0” for not having negations." in text and notes
    assert I.instruction(texts, PAIRS["nli_entailment_negation"], "h1")[1] == ()


def test_explanations_from_tables_9_10(texts):
    (zero, one), notes = I.explanations(texts, PAIRS["sa_sentiment_length"], "h2")
    assert one == "The review is shorter than 40 words. Therefore, the answer is 1."
    assert zero == "The review is longer than 40 words. Therefore, the answer is 0." and notes == ()
    (zero, one), notes = I.explanations(texts, PAIRS["boolq_answer_length"], "h2")
    assert texts["explanation"][("question answering", "Passage length (0)")] == ""
    assert zero == "The passage is shorter than 50 words. Therefore, the answer is 0." and "ours" in notes[0]
    _, notes = I.explanations(texts, PAIRS["comments_toxicity_uppercase"], "h2")
    assert "same reason as printed" in notes[0]


def test_complement_explanation():
    assert (I.complement_explanation("The passage is longer than 50 words. Therefore, the answer is 1.")
            == "The passage is shorter than 50 words. Therefore, the answer is 0.")
    with pytest.raises(ValueError):
        I.complement_explanation("The answer is yes. Therefore, the answer is 1.")


def test_every_available_style_builds(texts):
    for pair in PAIRS.values():
        for intervention in I.INTERVENTIONS[1:]:
            for target in I.TARGETS:
                st = I.style(texts, pair, intervention, target)
                assert st.intervention == intervention and st.target == target
                assert len(set(st.label_words)) == 2
    assert I.style(texts, PAIRS["sa_sentiment_domain"], "disambig", "h1").disambig


def test_unknown_intervention_and_missing_table(texts, tmp_path):
    with pytest.raises(ConfigError, match="unknown intervention 'flattery'"):
        I.style(texts, PAIRS["sa_sentiment_domain"], "flattery", "h1")
    with pytest.raises(ValueError, match="needs a target"):
        I.style(texts, PAIRS["sa_sentiment_domain"], "verbalizer", None)
    with pytest.raises(DataError, match="table6.csv"):
        I.load_paper_texts(tmp_path)
    (tmp_path / "table6.csv").write_text("task,feature,verbalizer\nSentiment analysis,Domain,movie or other\n")
    for stem, col in (("table7", "instruction"), ("table8", "instruction"), ("table9", "explanation"),
                      ("table10", "explanation")):
        (tmp_path / f"{stem}.csv").write_text(f"task,feature,{col}\n")
    bad = I.load_paper_texts(tmp_path)
    with pytest.raises(DataError, match="verbalizer like"):
        I.verbalizer(bad, PAIRS["sa_sentiment_domain"], "h2")
    with pytest.raises(DataError, match="instruction row"):
        I.instruction(bad, PAIRS["sa_sentiment_domain"], "h2")


def test_the_instruction_comes_once_before_every_demonstration():
    style = PromptStyle("instruction", "h1", instruction="Is the review positive?")
    prefix = shared_prefix(style, [("Great film!", 1), ("Dull.", 0), ("Fine.", 1)])
    assert prefix == ("Is the review positive?\n\nGreat film!\n\nCategory:1\n\nDull.\n\nCategory:0\n\n"
                      "Fine.\n\nCategory:1\n\n")
    assert prefix.count("Is the review positive?") == 1


def test_instances_and_answers_are_stripped_and_keep_their_case():
    style = PromptStyle("verbalizer", "h1", label_prefix="Sentiment?", label_words=(" Negative\n", " Positive "))
    prefix = shared_prefix(style, [("  Great film!\n", 1)])
    assert prefix == "Great film!\n\nSentiment?Positive\n\n"
    assert build_prompt(prefix, "\n Dull. ", style) == prefix + "Dull.\n\nSentiment?"
    assert query_block(" LOUD! ") == "LOUD!\n\nCategory:"


def test_a_style_uses_no_disambiguating_demonstrations_unless_asked():
    assert PromptStyle("baseline").disambig is False


FOOD, NEG = PAIRS["sa_sentiment_lexicon_food"], PAIRS["nli_entailment_negation"]


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
