"""Tk-Instruct source encoding, checked against hand-written strings (ni_collator.py layout)."""

from __future__ import annotations

import pytest

from wobble.studies.instructions.prompts import SETTINGS, encode_for_setting, encode_instance

DEFINITION = ("In this task, you will be shown an incorrect English sentence. "
              "You need to generate a corrected form of the input sentence.")
POS = [  # task1557's first two positive examples (explanations are never used)
    {"input": "The car's wheel are loose.", "output": "The car's wheel is loose.", "explanation": "..."},
    {"input": "The value of the car is very less.", "output": "The value of the car is much less.",
     "explanation": "..."},
    {"input": "third", "output": "never used"},
]
INPUT = "Furethermore the professor denies the reading passage which states that treasure does not exsit "


def test_def_pos_2_exact_string():
    expected = (
        "Definition: In this task, you will be shown an incorrect English sentence. "
        "You need to generate a corrected form of the input sentence.\n\n"
        " Positive Example 1 -\n"
        "Input: The car's wheel are loose.\n"
        " Output: The car's wheel is loose.\n\n"
        " Positive Example 2 -\n"
        "Input: The value of the car is very less.\n"
        " Output: The value of the car is much less.\n\n"
        "Now complete the following example -\n"
        "Input: Furethermore the professor denies the reading passage which states that treasure does not exsit.\n"
        "Output: "
    )
    assert encode_instance(DEFINITION, POS, INPUT, n_pos=2) == expected
    assert encode_for_setting("INSTRU-W-EXAM", DEFINITION, POS, INPUT) == expected


def test_def_only_exact_string_and_periods():
    # no final punctuation -> a period is added (to the definition, the input and example fields)
    expected = ("Definition: Answer the question.\n\n"
                "Now complete the following example -\nInput: Is it raining?\nOutput: ")
    assert encode_instance(["Answer the question"], POS, "  Is it raining?  ", n_pos=0) == expected
    assert encode_for_setting("INSTRU-WO-EXAM", "Answer the question", POS, "Is it raining?") == expected
    assert SETTINGS == {"INSTRU-WO-EXAM": 0, "INSTRU-W-EXAM": 2}
    ex = [{"input": "a", "output": "b"}]
    assert encode_instance("D:", ex, "", n_pos=1) == (
        "Definition: D:\n\n Positive Example 1 -\nInput: a.\n Output: b.\n\n"
        "Now complete the following example -\nInput: .\nOutput: ")


def test_task_name_and_fits():
    out = encode_instance("Def.", POS, "x", n_pos=0, add_task_name=True, task_name="task1557_jfleg")
    assert out.startswith("task1557_jfleg. Definition: Def.\n\n")
    # the collator stops adding examples at the first one that does not fit
    seen = []

    def fits(s):
        seen.append(s)
        return "Positive Example 2" not in s

    out = encode_instance("Def.", POS, "x", n_pos=3, fits=fits)
    assert "Positive Example 1" in out and "Positive Example 2" not in out and "Positive Example 3" not in out
    assert len(seen) == 2
    with pytest.raises(ValueError):
        encode_instance("Def.", POS, "x", n_pos=-1)


def test_chat_models_get_the_prompt_unchanged_as_one_user_turn():
    from wobble.studies.instructions.prompts import as_chat_turn, plain_prompt

    rec = {"prompt": "Definition: Add.\n\nNow complete the following example -\nInput: 1 2.\nOutput:", "uid": "x"}
    assert plain_prompt(rec) == rec["prompt"]
    assert as_chat_turn(rec) == [{"role": "user", "content": rec["prompt"]}]
