"""wobble.studies.instructions.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested.

The Tk-Instruct collator strips every field before composing (``definition.strip()``, ``input.strip()``,
``output.strip()``, ni_collator.py), so whitespace around a SuperNI field never reaches the prompt.
"""

from __future__ import annotations

from wobble.studies.instructions.prompts import encode_instance


def test_every_field_is_stripped_and_keeps_its_case():
    out = encode_instance("  Fix the sentence \n", [{"input": "\the go ", "output": " He goes. \n"}], "She run",
                          n_pos=1)
    assert out == ("Definition: Fix the sentence.\n\n Positive Example 1 -\nInput: he go.\n Output: He goes.\n\n"
                   "Now complete the following example -\nInput: She run.\nOutput: ")
