"""wobble.studies.instructions.conditions: behaviour the mutation run (tests/tools/mutate.py) found untested.

The conditions as the paper's tables name them (Tables 4-9), the keys our results join on, which conditions are
random, and the one clear error for a condition that lacks what it needs.
"""

from __future__ import annotations

import pytest

from wobble.studies.instructions import conditions as C
from wobble.studies.instructions import perturb as P

TEXT = "In this task, you will be shown an incorrect English sentence. You need to generate a corrected form."


def test_the_paraphrase_and_diverse_prompt_conditions_as_tables_6_and_8_name_them():
    assert [(c.key, c.label, c.variant) for c in C.PARAPHRASE_CONDITIONS] == [
        (f"paraphrase_{i}", f"New Instruction {i}", i) for i in (1, 2, 3)]
    assert [(c.key, c.level, c.label, c.variant) for c in C.DIVERSE_PROMPT_CONDITIONS] == [
        (f"diverse_prompt_{i}", "diverse_prompt", f"prompt {i}", i) for i in range(1, 11)]


def test_the_key_results_join_the_papers_tables_on():
    assert {c.key: c.paper_key for c in C.CONDITIONS if c.level in ("paraphrase", "diverse_prompt")} == {
        **{f"paraphrase_{i}": "rephrased" for i in (1, 2, 3)}, **{f"diverse_prompt_{i}": "diverse_prompt"
                                                                  for i in range(1, 11)}}
    assert [c.paper_key for c in C.PAPER_CONDITIONS] == [c.key for c in C.PAPER_CONDITIONS]


def test_which_conditions_draw_random_numbers():
    assert [c.key for c in C.CONDITIONS if c.is_random] == [
        "delete_words", "insert_words", "replace_words", "shuffle_words", "repeat_sentences", "shuffle_sentences",
        "shuffle_instructions"]


def test_any_diverse_prompt_number_from_1_is_a_condition():
    assert C.get_condition("diverse_prompt_12") == C.Condition("diverse_prompt_12", "diverse_prompt", "prompt 12", 12)
    assert C.get_condition("diverse_prompt_01").variant == 1
    for bad in ("diverse_prompt_0", "diverse_prompt_x", "paraphrase_7", "shuffle_7"):
        with pytest.raises(KeyError, match=r"known: original, .*, paraphrase_3, diverse_prompt_<i>"):
            C.get_condition(bad)


def test_an_alternative_definition_is_the_variants_and_needs_the_paraphrases():
    alts = {"t": ["one", "two", "three"]}
    assert C.apply_condition("paraphrase_3", "t", TEXT, 1, paraphrases=alts) == "three"
    with pytest.raises(ValueError, match="needs `paraphrases`"):
        C.apply_condition("paraphrase_1", "t", TEXT, 1)
    with pytest.raises(KeyError, match="task 'u' has 0 alternative definitions, needs at least 1"):
        C.apply_condition("paraphrase_1", "u", TEXT, 1, paraphrases=alts)


def test_insert_words_inserts_and_replace_words_replaces():
    def proposer(left, right):
        return "zebra"

    n = len(P.words(TEXT))
    inserted = C.apply_condition("insert_words", "t", TEXT, 1, proposer=proposer)
    replaced = C.apply_condition("replace_words", "t", TEXT, 1, proposer=proposer)
    assert len(P.words(inserted)) > n and len(P.words(replaced)) == n
    assert "zebra" in inserted.split() and "zebra" in replaced.split()


def test_shuffle_instructions_says_it_needs_the_pool_of_tasks():
    with pytest.raises(ValueError, match="needs definitions_by_task"):
        C.apply_condition("shuffle_instructions", "t", TEXT, 1)
