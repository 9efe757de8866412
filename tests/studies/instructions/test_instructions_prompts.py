"""Tk-Instruct source encoding, checked against hand-written strings (ni_collator.py layout). The collator
strips every field before composing (``definition.strip()``, ``input.strip()``, ``output.strip()``), so
whitespace around a SuperNI field never reaches the prompt."""

from __future__ import annotations

import pytest

from wobble.studies.instructions.prompts import SETTING_LABELS, SETTINGS, encode_for_setting, encode_instance

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


NUMBERED_POS = [{"input": f"in {i}", "output": f"out {i}"} for i in range(1, 4)]


def test_every_field_is_stripped_and_keeps_its_case():
    out = encode_instance("  Fix the sentence \n", [{"input": "\the go ", "output": " He goes. \n"}], "She run",
                          n_pos=1)
    assert out == ("Definition: Fix the sentence.\n\n Positive Example 1 -\nInput: he go.\n Output: He goes.\n\n"
                   "Now complete the following example -\nInput: She run.\nOutput: ")


def test_the_settings_wildcard_keys_name_the_papers_settings():
    assert SETTING_LABELS == {"wo_exam": "INSTRU-WO-EXAM", "w_exam": "INSTRU-W-EXAM"}
    with pytest.raises(KeyError, match="unknown setting 'few_shot'"):
        encode_for_setting("few_shot", "Def.", NUMBERED_POS, "x")


def test_by_default_no_examples_and_the_definition_can_be_left_out():
    assert encode_instance("Def.", NUMBERED_POS, "x") == "Definition: Def.\n\nNow complete the following example -\nInput: x.\nOutput: "
    assert encode_instance("Def.", NUMBERED_POS, "x", add_definition=False).startswith("Now complete the following example")
    with pytest.raises(ValueError, match="add_task_name=True needs task_name"):
        encode_instance("Def.", NUMBERED_POS, "x", add_task_name=True)


def test_the_length_check_sees_the_kept_examples_joined_by_one_space():
    seen = []
    encode_instance("Def.", NUMBERED_POS, "x", n_pos=3, fits=lambda s: seen.append(s) or True)
    ex1 = " Positive Example 1 -\nInput: in 1.\n Output: out 1.\n\n"
    ex2 = " Positive Example 2 -\nInput: in 2.\n Output: out 2.\n\n"
    ex3 = " Positive Example 3 -\nInput: in 3.\n Output: out 3.\n\n"
    task = "Now complete the following example -\nInput: x.\nOutput: "
    assert seen[2] == "Definition: Def.\n\n" + ex1 + " " + ex2 + ex3 + task
