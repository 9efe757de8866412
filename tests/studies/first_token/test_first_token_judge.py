"""first_token judge (wobble.studies.first_token.judge): its chat (appendix A.4: the instruction opens
the first user turn, every later turn is a bare question), the reading of its one-letter answer, and the
annotated rows as the judge and the classifiers see them."""

from __future__ import annotations

import pytest

from wobble.studies.first_token.classify import MULTIPLE, UNKNOWN
from wobble.studies.first_token.judge import (JUDGE_INSTRUCTION, annotated_view, classifier_examples, classifier_input,
                                              judge_prompt, parse_judge_output, parse_shown_options)

from first_token_annotated import LETTERS5, OPTS5, _rows


# ---------------------------------------------------------------------------------------------- judge / classifier data


def test_judge_prompt_zero_and_k_shot():
    zero = judge_prompt("Q?", OPTS5, LETTERS5, "[INST] x [/INST] Sure! D. A fair amount", shots=[])
    assert len(zero) == 1 and zero[0]["role"] == "user"
    content = zero[0]["content"]
    assert "Question: Q?" in content and "\nD. A fair amount\n" in content and "Refused" in content
    assert "Response: Sure! D. A fair amount" in content and "[INST]" not in content
    shots = [
        {"question": "S1?", "shown_options": ["Yes", "Refused"], "letters": ["A", "B"], "response": "A. Yes", "label": "A"},
        {"question": "S2?", "shown_options": ["Refused", "No"], "letters": ["A", "B"], "response": "I cannot.", "label": "A"},
    ]
    k = judge_prompt("Q?", OPTS5, LETTERS5, "D", shots=shots)
    assert [m["role"] for m in k] == ["user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in k if m["role"] == "assistant"] == ["A", "A"]
    assert k[0]["content"].startswith(zero[0]["content"][:60])  # the instruction opens the chat once
    assert "S2?" in k[2]["content"] and "Q?" in k[4]["content"]
    with pytest.raises(ValueError):
        judge_prompt("Q?", OPTS5, LETTERS5, "D", shots=[{"question": "x"}])


@pytest.mark.parametrize("out,expected", [
    ("C", "C"), (" C", "C"), ("B. Not too much", "B"), ("Answer: (D)", "D"), ("The answer is E.", "E"),
    ("[/INST] A", "A"), ("Z", UNKNOWN), ("", UNKNOWN), ("I think B or C", MULTIPLE),
])
def test_parse_judge_output(out, expected):
    assert parse_judge_output(out, LETTERS5) == expected


def test_classifier_examples_format(mirror):
    rows = _rows(mirror, "mixtral", "train")
    ex = classifier_examples(rows)
    n_amb = sum(1 for r in rows if annotated_view(r)["gold"] in (MULTIPLE, UNKNOWN))
    assert len(ex) == len(rows) - n_amb and n_amb > 0
    assert len(classifier_examples(rows, keep_ambiguous=True)) == len(rows)
    first = ex[0]
    assert set(first) == {"text", "label"}
    assert first["text"].startswith("Classify the response. ")
    assert "\nReferences: \nA. " in first["text"] and first["text"].endswith(" \nAnswer:")
    assert "[INST]" not in first["text"]
    assert all(e["label"] in "ABCDEFGHIJ" and len(e["label"]) == 1 for e in ex)
    # a flat record works too
    flat = {"response": "B", "shown_options": ["x", "y"], "letters": ["A", "B"], "label_raw": "B. y"}
    assert classifier_examples([flat]) == [{"text": "Classify the response. B\nReferences: \nA. x \nB. y \nAnswer:",
                                           "label": "B"}]


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


def test_the_instruction_opens_the_first_turn_only_however_many_shots():
    shots = [{"question": f"S{i}?", "shown_options": ["Yes", "Refused"], "letters": ["A", "B"],
              "response": "A. Yes", "label": "A"} for i in range(3)]
    chat = judge_prompt("Q?", ["Yes", "No"], ["A", "B"], "B", shots=shots)
    users = [m["content"] for m in chat if m["role"] == "user"]
    assert [u.count(JUDGE_INSTRUCTION) for u in users] == [1, 0, 0, 0]
    assert [u.split("\n\n")[0] for u in users[1:]] == ["Question: S1?", "Question: S2?", "Question: Q?"]


@pytest.mark.parametrize("out, expected", [
    ("B is the one", "B"),      # a capital letter followed by a word is still the letter (only "a" is an article)
    ("a.", "A"),                # a lower-case letter with its full stop is the letter, not the article "a"
    ("a \n", "A"),              # the whole output is the letter, surrounding whitespace aside
    ("Clearly (B)", "B"),       # the leading capital must stand alone: "C" of "Clearly" is not option C
    ("A is my pick", "A"),      # a capital "A" before a word is the letter (string matching would call it an article)
])
def test_the_judges_leading_letter(out, expected):
    assert parse_judge_output(out, LETTERS5) == expected


def test_the_classifier_input_holds_the_response_without_surrounding_whitespace():
    assert classifier_input("  B. y\n", ["x", "y"], ["A", "B"]) == (
        "Classify the response. B. y\nReferences: \nA. x \nB. y \nAnswer:")
