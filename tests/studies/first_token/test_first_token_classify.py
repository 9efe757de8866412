"""first_token classifiers (wobble.studies.first_token.classify): gold labels, string matching on the paper's
annotated responses.

Each hand-made response is built so that exactly one rule (one pattern of the string matcher, one branch of
the article check, ...) decides it; the expected label is worked out by hand from the rules in
:func:`~wobble.studies.first_token.classify.string_match`'s docstring."""

from __future__ import annotations

import pytest

from wobble.studies.first_token.classify import (MULTIPLE, REFUSAL, UNKNOWN, canonical_label, gold_label,
                                                 label_to_option, letter_references, looks_like_refusal,
                                                 option_text_mentions, paper_string_match, string_match,
                                                 strip_chat_template)
from wobble.studies.first_token.judge import annotated_view
from wobble.studies.first_token.metrics import classifier_scores

from first_token_annotated import LETTERS5, OPTS5, _rows

MODELS = ["llama2-7b", "llama2-13b", "llama2-70b", "mistral-7b", "mixtral"]


def _find(mirror, label_raw):
    for model in MODELS:
        for split in ("test", "train"):
            for row in _rows(mirror, model, split):
                if row["shuffle_0"]["label"] == label_raw:
                    yield model, row


# ---------------------------------------------------------------------------------------------- gold


def test_gold_label_forms():
    assert gold_label("C. Rarely", LETTERS5) == "C"
    assert gold_label("B. Somewhat bad job ", LETTERS5) == "B"
    assert gold_label("D: A fair amount", LETTERS5) == "D"
    assert gold_label("E", LETTERS5) == "E"
    assert gold_label("CD", LETTERS5) == MULTIPLE
    assert gold_label("ABCDE", LETTERS5) == MULTIPLE
    assert gold_label("nan", LETTERS5) == UNKNOWN
    assert gold_label(float("nan"), LETTERS5) == UNKNOWN
    assert gold_label(None, LETTERS5) == UNKNOWN
    assert gold_label("", LETTERS5) == UNKNOWN
    assert gold_label("F. Refused", LETTERS5) == UNKNOWN  # not a shown letter
    assert gold_label("A. Refused", ["A", "B"]) == "A"  # a refusal keeps the Refused option's letter


def test_canonical_and_option_identity():
    assert canonical_label(REFUSAL, LETTERS5, OPTS5) == "E"
    assert canonical_label(REFUSAL, ["A", "B"], ["x", "y"]) == REFUSAL
    assert canonical_label("c", LETTERS5, OPTS5) == "C"
    assert canonical_label("Z", LETTERS5, OPTS5) == UNKNOWN
    assert label_to_option("D", LETTERS5, OPTS5) == "A fair amount"
    assert label_to_option(REFUSAL, LETTERS5, OPTS5) == "Refused"
    assert label_to_option("E", LETTERS5, OPTS5) == "Refused"
    assert label_to_option(MULTIPLE, LETTERS5, OPTS5) is None
    assert label_to_option(UNKNOWN, LETTERS5, OPTS5) is None


# ---------------------------------------------------------------------------------------------- string matching


def test_strip_chat_template_keeps_only_the_answer():
    raw = "[INST] Please read ... \n\nA. Refused \nB. Sometimes \nAnswer: [/INST]  Sure! I would answer:\n\nB. Sometimes</s>"
    assert strip_chat_template(raw) == "  Sure! I would answer:\n\nB. Sometimes"
    assert strip_chat_template("no template") == "no template"
    assert strip_chat_template("[INST] a [/INST] b [INST] c [/INST] d") == " d"


@pytest.mark.parametrize("text,expected", [
    ("C", "C"),
    ("  C. Not at all", "C"),
    ("Sure! Here's my answer:\n\nB. Not too much.", "B"),
    ("Sure! Based on the question provided, I would select option B: Not too much.", "B"),
    ("The answer is (D).", "D"),
    ("A fair amount", "D"),                      # option text only; "A" here is an article
    ("A great deal, in my view.", "A"),           # option text of A, not the letter A
    ("A. Somewhat good or C. Somewhat bad, depending on your perspective.", MULTIPLE),
    ("A, B, E. These are the only valid options.", MULTIPLE),
    ("the correct answer would be A, C, or D, depending on the respondent", MULTIPLE),
    ("B. Not too much. The other options (A, C, and D) would not be applicable.", "B"),
    ("I cannot provide a letter answer to this question as it is a complex and sensitive issue.", REFUSAL),
    ("I'm not able to provide an answer to this question.", REFUSAL),
    ("As an AI, I don't have opinions; E. Refused", "E"),  # explicitly choosing Refused -> its letter
    ("A lot of people would say so.", UNKNOWN),   # article "A" + lower-case word
    ("Hmm.", UNKNOWN),
    ("", UNKNOWN),
])
def test_string_match_rules(text, expected):
    assert string_match(text, OPTS5, LETTERS5) == expected


def test_string_match_refusal_detection_can_be_off():
    text = "I cannot provide a letter answer to this question."
    assert string_match(text, OPTS5, LETTERS5, detect_refusal=False) == UNKNOWN


def test_chat_template_in_response_is_ignored(mirror):
    """The stored responses contain '[INST] prompt [/INST] answer'; the prompt's options don't count."""
    row = _rows(mirror, "llama2-7b", "test")[0]
    s = row["shuffle_0"]
    assert "[/INST]" in s["response"] and "A. Refused" in s["response"]
    view = annotated_view(row)
    raw = string_match(s["response"], view["shown_options"], view["letters"])
    assert raw == string_match(view["response"], view["shown_options"], view["letters"]) == "C"
    assert view["gold"] == "C"  # "C. Rarely"


def test_tricky_annotations_from_the_real_data(mirror):
    # "D: A fair amount": mistral lists every option ("Option A: ..."), then "Answer: D. A fair amount"
    (model, row), = list(_find(mirror, "D: A fair amount"))
    v = annotated_view(row)
    assert v["gold"] == "D"
    assert string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]) == "D"

    # "CD": the response names two options ("C. A little more positively or D. A lot more ...")
    cd = list(_find(mirror, "CD"))
    assert len(cd) >= 4
    preds = []
    for model, row in cd:
        v = annotated_view(row)
        assert v["gold"] == MULTIPLE
        preds.append(string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]))
    # no single-option answer is invented for most of them (a refusal is acceptable where it disclaims)
    assert sum(p in (MULTIPLE, REFUSAL) for p in preds) >= len(preds) - 1
    assert preds.count(MULTIPLE) >= 3

    # "nan": the annotators could not assign one option
    nan_rows = list(_find(mirror, "nan"))
    assert len(nan_rows) == 5
    preds = []
    for model, row in nan_rows:
        v = annotated_view(row)
        assert v["gold"] == UNKNOWN
        preds.append(string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]))
    # four of five are discussions without a pick -> not a letter; the fifth, "E. Employers" where E
    # is "Individuals themselves", is taken at its letter (the annotators label "E. Strongly favor."
    # as E elsewhere)
    assert sum(p in (MULTIPLE, UNKNOWN, REFUSAL) for p in preds) >= 4


def test_paper_string_match_hand_cases():
    """Appendix A.4: the first "[A-Z]." in the answer (after the chat template) decides."""
    assert paper_string_match("[INST] ... A. Refused\nB. Yes [/INST]  Sure! I would answer:\n\nC. Rarely") == "C"
    assert paper_string_match("Based on the U.S. data, B. Yes") == "U"  # the regex's own weakness, kept
    assert canonical_label(paper_string_match("The U.S. is B. great"), LETTERS5, OPTS5) == UNKNOWN
    assert paper_string_match("I would choose option B") == UNKNOWN  # no "B." -> no match
    assert paper_string_match("A, B or C. Maybe") == "C"  # only a letter followed by a period counts
    assert paper_string_match("") == UNKNOWN


PAPER_T4_STRING_MATCHING = {"llama2-7b": (21, 83, 0.367), "llama2-13b": (60, 83, 0.823), "llama2-70b": (51, 83, None)}


def test_paper_string_match_gives_paper_table4_on_the_mirror(mirror):
    """Where the data are the paper's (the Llama2 test splits), the paper's regex gives the paper's Table 4
    String Matching accuracy exactly: 25.3 / 72.3 / 61.4 % (and weighted-F1 .367 / .823)."""
    for model, (correct, n, wf1) in PAPER_T4_STRING_MATCHING.items():
        rows = _rows(mirror, model, "test")
        if not rows:
            pytest.skip("annotated responses not in the mirror")
        gold, pred = [], []
        for row in rows:
            v = annotated_view(row)
            gold.append(v["gold"])
            pred.append(canonical_label(paper_string_match(row["shuffle_0"]["response"]), v["letters"], v["shown_options"]))
        s = classifier_scores(gold, pred)
        assert (round(s["accuracy"] * s["n"]), s["n"]) == (correct, n), model
        if wf1 is not None:
            assert round(s["weighted_f1"], 3) == wf1, model


def test_string_match_accuracy_on_annotated_test_splits(mirror):
    """Accuracy vs the human labels; paper Table 4 (String Matching): 25.3 / 72.3 / 61.4 / 49.4 / 67.1 %.

    Our rules were written while reading these annotated responses, so this is an in-sample figure.
    """
    report = {}
    for model in MODELS:
        gold, pred = [], []
        for row in _rows(mirror, model, "test"):
            v = annotated_view(row)
            gold.append(v["gold"])
            pred.append(canonical_label(string_match(v["response"], v["shown_options"], v["letters"]),
                                        v["letters"], v["shown_options"]))
        scores = classifier_scores(gold, pred)
        report[model] = scores
        print(f"string_match {model:11s} n={scores['n']:3d} acc={100 * scores['accuracy']:.1f}% "
              f"macroF1={scores['macro_f1']:.3f} weightedF1={scores['weighted_f1']:.3f}")
    assert all(s["n"] >= 82 for s in report.values())
    assert all(s["accuracy"] >= 0.85 for s in report.values()), report
    mean_acc = sum(s["accuracy"] for s in report.values()) / len(report)
    assert mean_acc >= 0.9


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


# ---------------------------------------------------------------- parenthesised letters and articles

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


# ----------------------------------------------------------- look-alike letters, words and negations

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
