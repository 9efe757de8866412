"""wobble.studies.followup.judge: behaviour the mutation run (tests/tools/mutate.py) found untested.

The judge sees the dialogue after the demonstrations (§3.3), and its reply is read as "Error type: N" or a lone
number 1-4 (:func:`parse_label`); each case below separates the rule from a plausible slip.
"""

from __future__ import annotations

import pytest

from wobble.errors import DataError
from wobble.studies.followup.judge import UNLABELLED, judge_prompt, parse_label, read_hand_labels


def test_the_judge_sees_no_turn_of_the_demonstrations():
    demo = [{"role": "user", "content": "demo q"}, {"role": "assistant", "content": "demo a"}]
    history = demo + [{"role": "user", "content": "Question?"}, {"role": "assistant", "content": "Answer: 10"}]
    prompt = judge_prompt({"history": history, "n_demo_messages": 2, "gold": "10"})
    assert "demo" not in prompt and "User: Question?\n\nModel: Answer: 10" in prompt


@pytest.mark.parametrize("text, label", [
    (None, UNLABELLED),                                  # no reply at all
    ("Error type: 21", UNLABELLED),                      # there is no type 21, and 2 is not its first digit
    ("13", UNLABELLED), ("31", UNLABELLED),              # a number 1-4 must stand alone, not inside another
    ("0.3", UNLABELLED),                                 # nor be the decimals of one
    ("1 or 2", UNLABELLED),                              # two numbers are no answer
    ("The model changes its answer after 3 rounds of questioning.", UNLABELLED),  # a number in prose
    ("3" + " " * 25 + "\n", 3),                          # a lone number with trailing whitespace
    ("\u0130stanbul, I pick:  3", 3),                    # 20 characters as written (lower-cased: 21)
])
def test_a_reply_names_a_type_only_as_the_parser_defines(text, label):
    assert parse_label(text) == label


def _csv(tmp_path, body):
    path = tmp_path / "labels.csv"
    path.write_text("uid,dialogue_sha,label,note\n" + body, encoding="utf-8")
    return str(path)


def test_hand_labels_tolerate_spaces_around_the_label_and_need_a_hash(tmp_path):
    assert read_hand_labels(_csv(tmp_path, "u1,abc, 2 ,why\n")) == [{"uid": "u1", "dialogue_sha": "abc", "label": 2}]
    with pytest.raises(DataError, match="line 2: a non-empty uid and dialogue_sha"):
        read_hand_labels(_csv(tmp_path, "u1,,2,\n"))
