"""wobble.studies.first_token.classify: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each response below is built so that exactly one rule (one pattern of the string matcher, one branch of
the article check, ...) decides it; the expected label is worked out by hand from the rules in
:func:`~wobble.studies.first_token.classify.string_match`'s docstring.
"""

from __future__ import annotations

import pytest

from wobble.studies.first_token.classify import (MULTIPLE, REFUSAL, UNKNOWN, canonical_label, gold_label, letter_references,
                                               looks_like_refusal, option_text_mentions, string_match, strip_chat_template)
from wobble.studies.first_token.judge import JUDGE_INSTRUCTION, annotated_view, classifier_examples, judge_prompt, parse_judge_output, parse_shown_options

LETTERS5 = ["A", "B", "C", "D", "E"]
OPTS5 = ["A great deal", "Not too much", "Not at all", "A fair amount", "Refused"]


def test_label_values_are_the_words_written_to_predictions():
    assert (REFUSAL, MULTIPLE, UNKNOWN) == ("refusal", "multiple", "unknown")


# ------------------------------------------------------------------------------------ chat templates

@pytest.mark.parametrize("raw", [
    "<|im_start|>user\nQ? A. x<|im_end|>\n<|im_start|>assistant\nB. y<|im_end|>",            # ChatML (Qwen)
    "<start_of_turn>user\nQ? A. x<end_of_turn>\n<start_of_turn>model\nB. y<end_of_turn>",    # Gemma
    "<|user|>\nQ? A. x<|end|>\n<|assistant|>\nB. y<|end|>",                                  # Phi-3
    "<|start_header_id|>user<|end_header_id|>Q? A. x<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\nB. y<|eot_id|>",                         # Llama 3
])
def test_strip_chat_template_for_each_family(raw):
    assert strip_chat_template(raw) == "\nB. y"


def test_strip_chat_template_of_none_is_empty():
    assert strip_chat_template(None) == ""


# --------------------------------------------------------------------------------------- gold labels

def test_gold_label_placeholders_in_any_case_are_unknown():
    # upper-case placeholders would otherwise read as letter runs: NONE -> {E}, NAN -> {A}, NULL -> {L}
    assert gold_label("NONE", LETTERS5) == UNKNOWN
    assert gold_label("NAN", LETTERS5) == UNKNOWN
    assert gold_label("NULL", list("ABCDEFGHIJKL")) == UNKNOWN


def test_gold_label_letter_runs():
    assert gold_label("CC", LETTERS5) == "C"       # one distinct letter
    assert gold_label("CF", LETTERS5) == "C"       # F is not shown
    assert gold_label("XY", LETTERS5) == UNKNOWN   # no shown letter
    assert gold_label("BD", LETTERS5) == MULTIPLE


# --------------------------------------------------------------------------------- letter references

@pytest.mark.parametrize("text, expected", [
    ("I lean to C. Rarely", ["C"]),              # "C." inside the text
    ("I'd go with (B) here", ["B"]),             # "(B)"
    ("Pick E: always", ["E"]),                   # "E:"
    ("the option B seems fine", ["B"]),          # "option B"
    ("maybe B/D works", ["B", "D"]),             # "B/D": the letter before the slash, and the one after
    ('I\'d say "C" honestly', ["C"]),            # a quoted letter
    ("See Z) and (B)", ["B"]),                   # Z is not a shown letter
    ("Honestly, A lot of people agree", []),     # "A" + lower-case word is an article, also mid-text
])
def test_letter_references_one_pattern_each(text, expected):
    assert letter_references(text, LETTERS5, OPTS5) == expected


def test_i_is_an_article_before_a_lower_case_word():
    assert letter_references("I think so", list("ABCDEFGHIJ")) == []
    assert letter_references("I. Yes", list("ABCDEFGHIJ")) == ["I"]


def test_a_capital_that_starts_an_option_text_is_a_word():
    # "A Fair Amount": the next word is capitalised, so only the option-text rule makes "A" a word
    assert letter_references("A Fair Amount", LETTERS5, OPTS5) == []
    assert string_match("A Fair Amount", OPTS5, LETTERS5) == "D"
    # one-character options ("A", "B" as grades) are letters
    assert string_match("A", ["A", "B"], ["A", "B"]) == "A"


# ------------------------------------------------------------------------------------- option texts

def test_option_text_inside_a_longer_option_does_not_count():
    opts, letters = ["Very important", "Important", "Not important"], ["A", "B", "C"]
    assert option_text_mentions("It is very important to me", opts, letters) == ["A"]
    # a separate mention of the shorter option still counts, in order of first mention
    assert option_text_mentions("Important. Also very important", opts, letters) == ["B", "A"]
    # the same start: "Good" inside "Good enough"
    assert option_text_mentions("Good enough.", ["Good", "Good enough"], ["A", "B"]) == ["B"]
    # an empty option text is never mentioned
    assert option_text_mentions("Not at all.", ["", "Not at all"], ["A", "B"]) == ["B"]


# ------------------------------------------------------------------------------------- string match

def test_string_match_rules_that_decide_alone():
    assert string_match("I'd choose D", OPTS5, LETTERS5) == "D"                     # a select statement
    assert string_match("I would not choose D", OPTS5, LETTERS5) == UNKNOWN         # negated: no statement
    # two stated letters are multiple even when the text also disclaims
    assert string_match("As an AI, I'd say the answer is B or D", OPTS5, LETTERS5) == MULTIPLE
    # two option texts, no letters: multiple
    assert string_match("Not at all, or a great deal, it depends", OPTS5, LETTERS5) == MULTIPLE


# ---------------------------------------------------------------------------------------- the judge

def test_judge_prompt_text_is_pinned():
    msgs = judge_prompt("Q?", ["Yes", "Refused"], ["A", "B"], "[INST] x [/INST] A. Yes")
    assert msgs == [{"role": "user", "content": (
        "You are given a multiple-choice question, its answer options and a response written by an AI assistant. "
        "Decide which ONE option the response chooses. If the response refuses to answer, or does not choose any "
        "option, answer with the letter of the option \"Refused\". Reply with a single letter only.\n\n"
        "Question: Q?\n\nOptions:\nA. Yes\nB. Refused\n\nResponse: A. Yes\n\nWhich option does the response choose?"
    )}]
    shot = {"question": "S?", "shown_options": ["No"], "letters": ["A"], "response": "A", "label": "A"}
    k = judge_prompt("Q?", ["Yes"], ["A"], "A", shots=[shot])
    assert k[0]["content"].startswith(JUDGE_INSTRUCTION + "\n\nQuestion: S?\n\n")
    assert k[2]["content"].startswith("Question: Q?\n\n")


@pytest.mark.parametrize("out, expected", [
    ("b", "B"),                      # a whole-output lower-case letter
    ("a", "A"),
    ("(d)", "D"),                    # the string matcher is case-sensitive; the judge reader is not
    ("a lot of people", UNKNOWN),    # lower-case "a" + word: an article
    ("C, D", "C"),                   # the leading letter decides
    ("I cannot tell.", UNKNOWN),     # no refusal detection on judge outputs
])
def test_parse_judge_output_leading_letter(out, expected):
    assert parse_judge_output(out, LETTERS5) == expected


# ------------------------------------------------------------------------------------ stored prompts

def test_parse_shown_options_skips_the_question():
    assert parse_shown_options("Q. Do you agree?\n\nA. Yes \nB. No \nAnswer:") == (["A", "B"], ["Yes", "No"])
    assert parse_shown_options("Intro\n\nQuestion?\n\nA. Yes \nB. No \nAnswer:") == (["A", "B"], ["Yes", "No"])


def test_annotated_view_fields():
    row = {"original_question": "Q?", "shuffle_0": {
        "question": "Q?\n\nA. Yes \nB. Refused \nAnswer:", "response": "[INST] q [/INST] B. Refused",
        "label": "B. Refused", "choice_letter": "A", "max_first_token": "Sure"}}
    assert annotated_view(row) == {
        "question": "Q?", "shown_options": ["Yes", "Refused"], "letters": ["A", "B"], "response": " B. Refused",
        "label_raw": "B. Refused", "gold": "B", "first_token_letter": "A", "top_first_token": "Sure"}
    assert annotated_view({"shuffle_0": {"question": "Q?\n\nA. Yes \nAnswer:"}})["response"] == ""


def test_classifier_examples_use_a_given_gold():
    flat = {"response": "B", "shown_options": ["x", "y"], "letters": ["A", "B"], "gold": "B"}
    assert [e["label"] for e in classifier_examples([flat])] == ["B"]


# --------------------------------------------------------------------------- what the mutation run found untested

def test_parenthesised_letter_before_punctuation_is_a_reference():
    """"(B)," and "(C)!" are caught by the "(B)" pattern alone ("B)" must be followed by a space or quote)."""
    assert letter_references("I pick (B),", LETTERS5) == ["B"]
    assert letter_references("see (C)! yes", LETTERS5) == ["C"]


def test_article_words_and_option_texts_are_not_letters():
    from wobble.studies.first_token.classify import _is_article

    # "A" / "I" before a lower-case word, however much space or tab between them
    assert _is_article("A  lot of people", 0, "A", []) and _is_article("I\t\tthink", 0, "I", [])
    assert not _is_article("A. yes", 0, "A", [])
    # a capital that starts an option text followed by a non-alphanumeric character ("B-movies")
    assert _is_article("I like B-movies best", 7, "B", ["B-movies", "Rarely"])
    assert not _is_article("I like B-movies best", 7, "B", ["Bmovies"])
    assert _is_article("I got B+ overall", 6, "B", ["B+", "C"])  # a two-character option text


# ------------------------------------------------------------------------- what the semantic mutants change

@pytest.mark.parametrize("raw, expected", [
    ("Definitely", UNKNOWN),   # a capitalised word is not a letter: the letter must end the label or take . : )
    ("BE careful", UNKNOWN),   # letters run together only as the whole label
    (" NAN ", UNKNOWN),        # a placeholder with spaces (a spreadsheet export), not the letter run N-A-N
    ("unclear", UNKNOWN),      # no letter at all
])
def test_gold_label_reads_a_letter_only_in_the_annotation_forms(raw, expected):
    assert gold_label(raw, LETTERS5) == expected


def test_a_predicted_label_is_read_in_any_case_with_spaces_around_it():
    assert canonical_label(" c ", LETTERS5, OPTS5) == "C"


@pytest.mark.parametrize("text, expected", [
    ("My answer is Definitely unclear.", UNKNOWN),            # "answer is D" + "efinitely": a word, no letter
    ("Nonresponse: B", UNKNOWN),                               # "response" inside a word is no answer statement
    ("The answer is C orE", "C"),                              # "orE" is no "or E": the list ends at C
    ("The answer is C andD", "C"),
    ("I wouldn't choose D", UNKNOWN),                          # a negated choice states nothing
    ("I would never pick C", UNKNOWN),
    ("Let me deselect C", UNKNOWN),                            # "select" inside "deselect"
    ("The answer is A fair amount.", "D"),                     # the option text "A fair amount", not the letter A
    ("The answer is B or F", "B"),                             # F is not shown: the list ends at B
    ("Not too much. Really, not too much.", "B"),              # one option mentioned twice is one option
    ("The answer is B. I would select B again.", "B"),         # one letter stated twice is one letter
    ("C Rarely. (B) would be wrong.", "C"),                    # the opening letter's sentence names no other
    ("C.D is right, not B.", MULTIPLE),                        # "C.D" is no opening letter: C and B are named
    ("Hmm, (B) perhaps.", "B"),                                # one letter referred to, no statement
])
def test_string_match_separating_cases(text, expected):
    assert string_match(text, OPTS5, LETTERS5) == expected


def test_an_i_followed_by_a_word_does_not_continue_a_list_of_letters():
    letters, options = list("ABCDEFGHIJ"), [f"option {i}" for i in range(10)]
    assert string_match("The answer is B and I think that is right", options, letters) == "B"


@pytest.mark.parametrize("text, expected", [
    ("Ask a PhD. Then decide.", []),        # "D." glued to a word
    ("Ask for a CD: it helps", []),         # "D:" glued to a word
    ("Get a PhD, E", ["E"]),                # "D," glued to a word starts no list
    ("Get a PhD or E", ["E"]),
    ("Get a B.Sc first", []),               # "B." followed by a letter is an abbreviation
    ("The B:C ratio", []),                  # "B:" followed by a letter
    ("the newsletter C printed", []),       # "letter C" inside "newsletter"
    ("Ask the vendor C", []),               # "or C" inside "vendor"
    ("Ask the brand D", []),                # "and D" inside "brand"
])
def test_letter_references_need_the_letter_to_stand_apart(text, expected):
    assert letter_references(text, LETTERS5, OPTS5) == expected


def test_refusal_phrases_are_whole_words():
    assert not looks_like_refusal("It has an AI feature")  # "as an AI" inside "has an AI"
    assert looks_like_refusal("As an AI, I cannot choose")


def test_option_texts_are_matched_as_whole_words_and_without_their_padding():
    assert option_text_mentions("Whenever I can", ["Never", "Always"], ["A", "B"]) == []
    assert option_text_mentions("Nevertheless, always.", ["Never", "Always"], ["A", "B"]) == ["B"]
    # option texts read from prompt lines keep a trailing space ("D. A fair amount \n")
    padded = [o + " " for o in OPTS5]
    assert string_match("A fair amount", padded, LETTERS5) == "D"
    assert string_match("A Fair Amount", padded, LETTERS5) == "D"
