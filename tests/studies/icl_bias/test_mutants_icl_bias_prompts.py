"""wobble.studies.icl_bias.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested.

The authors' run script (``run.py``) writes each instance and label word stripped, the instruction once before
the demonstrations (Tables 7-8) and the query without its label; a prompt set's prefix is built once.
"""

from __future__ import annotations

from wobble.studies.icl_bias.prompts import PromptStyle, build_prompt, query_block, shared_prefix


def test_the_instruction_comes_once_before_every_demonstration():
    style = PromptStyle("instruction", "h1", instruction="Is the review positive?")
    prefix = shared_prefix(style, [("Great film!", 1), ("Dull.", 0), ("Fine.", 1)])
    assert prefix == ("Is the review positive?\n\nGreat film!\n\nCategory:1\n\nDull.\n\nCategory:0\n\n"
                      "Fine.\n\nCategory:1\n\n")
    assert prefix.count("Is the review positive?") == 1


def test_instances_and_answers_are_stripped_and_keep_their_case():
    style = PromptStyle("verbalizer", "h1", label_prefix="Sentiment?", label_words=(" Negative\n", " Positive "))
    prefix = shared_prefix(style, [("  Great film!\n", 1)])
    assert prefix == "Great film!\n\nSentiment?Positive\n\n"
    assert build_prompt(prefix, "\n Dull. ", style) == prefix + "Dull.\n\nSentiment?"
    assert query_block(" LOUD! ") == "LOUD!\n\nCategory:"


def test_a_style_uses_no_disambiguating_demonstrations_unless_asked():
    assert PromptStyle("baseline").disambig is False
