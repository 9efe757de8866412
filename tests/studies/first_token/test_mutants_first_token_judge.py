"""wobble.studies.first_token.judge: behaviour the mutation run (tests/tools/mutate.py) found untested.

The judge's chat (appendix A.4: "the instruction opens the first user turn", every later turn is a bare
question) and the reading of its one-letter answer, each on an input that tells the rule from its mistake.
"""

from __future__ import annotations

import pytest

from wobble.studies.first_token.judge import JUDGE_INSTRUCTION, classifier_input, judge_prompt, parse_judge_output

LETTERS5 = ["A", "B", "C", "D", "E"]


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
