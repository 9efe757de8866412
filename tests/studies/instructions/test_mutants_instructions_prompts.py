"""wobble.studies.instructions.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested.

The Tk-Instruct collator strips every field before composing (``definition.strip()``, ``input.strip()``,
``output.strip()``, ni_collator.py), so whitespace around a SuperNI field never reaches the prompt.
"""

from __future__ import annotations

import pytest

from wobble.studies.instructions.prompts import SETTING_LABELS, encode_for_setting, encode_instance

POS = [{"input": f"in {i}", "output": f"out {i}"} for i in range(1, 4)]


def test_every_field_is_stripped_and_keeps_its_case():
    out = encode_instance("  Fix the sentence \n", [{"input": "\the go ", "output": " He goes. \n"}], "She run",
                          n_pos=1)
    assert out == ("Definition: Fix the sentence.\n\n Positive Example 1 -\nInput: he go.\n Output: He goes.\n\n"
                   "Now complete the following example -\nInput: She run.\nOutput: ")


def test_the_settings_wildcard_keys_name_the_papers_settings():
    assert SETTING_LABELS == {"wo_exam": "INSTRU-WO-EXAM", "w_exam": "INSTRU-W-EXAM"}
    with pytest.raises(KeyError, match="unknown setting 'few_shot'"):
        encode_for_setting("few_shot", "Def.", POS, "x")


def test_by_default_no_examples_and_the_definition_can_be_left_out():
    assert encode_instance("Def.", POS, "x") == "Definition: Def.\n\nNow complete the following example -\nInput: x.\nOutput: "
    assert encode_instance("Def.", POS, "x", add_definition=False).startswith("Now complete the following example")
    with pytest.raises(ValueError, match="add_task_name=True needs task_name"):
        encode_instance("Def.", POS, "x", add_task_name=True)


def test_the_length_check_sees_the_kept_examples_joined_by_one_space():
    seen = []
    encode_instance("Def.", POS, "x", n_pos=3, fits=lambda s: seen.append(s) or True)
    ex1 = " Positive Example 1 -\nInput: in 1.\n Output: out 1.\n\n"
    ex2 = " Positive Example 2 -\nInput: in 2.\n Output: out 2.\n\n"
    ex3 = " Positive Example 3 -\nInput: in 3.\n Output: out 3.\n\n"
    task = "Now complete the following example -\nInput: x.\nOutput: "
    assert seen[2] == "Definition: Def.\n\n" + ex1 + " " + ex2 + ex3 + task
