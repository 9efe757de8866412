"""icl_bias prompt format and interventions (texts read from the paper's Tables 6-10)."""

from __future__ import annotations

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
