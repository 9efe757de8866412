"""The instructions study's conditions (wobble.studies.instructions.conditions) as the paper's tables name them
(Tables 4-9): the keys results join on, which conditions are random, the batch of proposals shared by the tasks,
the command-line perturbation, and the one clear error for a condition that lacks what it needs."""

from __future__ import annotations

import csv
import io

import pytest

from wobble.studies.instructions import conditions as C
from wobble.studies.instructions import perturb as P

from instructions_texts import LONG, PAPER, TASK1557, TASK1557_NO_STOPWORDS, flaky


# --------------------------------------------------------------------------------------- registry

def test_condition_keys_match_the_paper_tables():
    expected = [("original", "original instruction"), ("delete_stopwords", "delete stopwords"),
                ("delete_words", "delete [5,10] words"), ("insert_words", "insert [5,10] words"),
                ("replace_words", "replace [5,10] words"), ("shuffle_words", "shuffle words"),
                ("repeat_sentences", "repeat sentences"), ("shuffle_sentences", "shuffle sentences"),
                ("shuffle_instructions", "shuffle instructions")]
    assert [(c.key, c.label) for c in C.PAPER_CONDITIONS] == expected
    if (PAPER / "table4.csv").exists():
        seen = []
        for r in csv.DictReader(io.StringIO((PAPER / "table4.csv").read_text())):
            pair = (r["condition"], r["condition_label"])
            if pair not in seen:
                seen.append(pair)
            cond = C.get_condition(r["condition"])
            assert cond.paper_level == r["perturbation_level"]
        assert seen == expected
    assert [c.key for c in C.PARAPHRASE_CONDITIONS] == ["paraphrase_1", "paraphrase_2", "paraphrase_3"]
    assert C.get_condition("diverse_prompt_12").variant == 12
    assert {c.level for c in C.CONDITIONS} == {"original", "word", "sentence", "instruction", "paraphrase",
                                              "diverse_prompt"}
    with pytest.raises(KeyError):
        C.get_condition("delete_everything")


def test_apply_condition_simple_cases():
    assert C.apply_condition("original", "t", TASK1557, 0) == TASK1557
    assert C.apply_condition("delete_stopwords", "t", TASK1557, 5) == TASK1557_NO_STOPWORDS
    paras = {"t": ["New one.", "New two.", "New three."]}
    assert C.apply_condition("paraphrase_2", "t", TASK1557, 0, paraphrases=paras) == "New two."
    assert C.apply_condition("diverse_prompt_1", "t", TASK1557, 0, paraphrases=paras) == "New one."
    pool = {"t": TASK1557, "u": "Other task."}
    assert C.apply_condition("shuffle_instructions", "t", TASK1557, 0, definitions_by_task=pool) == "Other task."
    with pytest.raises(ValueError):
        C.apply_condition("insert_words", "t", TASK1557, 0)
    with pytest.raises(ValueError):
        C.apply_condition("shuffle_instructions", "t", TASK1557, 0)
    with pytest.raises(KeyError):
        C.apply_condition("diverse_prompt_4", "t", TASK1557, 0, paraphrases=paras)


class CountingProposer:
    def __init__(self):
        self.calls = 0

    def propose_many(self, slots):
        self.calls += 1
        return [f"w{len(s.left_words)}x" for s in slots]


class FlakyProposer(CountingProposer):
    def propose_many(self, slots):
        self.calls += 1
        return [flaky(s.left_words, s.right_words) for s in slots]


def test_batch_is_one_proposer_call_per_round_and_equals_single_calls():
    defs = {"a": TASK1557, "b": LONG, "c": "Short text with a few words only here."}
    for key in ("insert_words", "replace_words"):
        prop = CountingProposer()
        batch = C.apply_condition_batch(key, defs, 7, proposer=prop)
        assert prop.calls == 1  # every proposal acceptable: one round
        for task, d in defs.items():
            assert batch[task] == C.apply_condition(key, task, d, 7, proposer=CountingProposer())
        prop = FlakyProposer()
        batch = C.apply_condition_batch(key, defs, 7, proposer=prop)
        singles = [FlakyProposer() for _ in defs]
        for (task, d), single in zip(defs.items(), singles):
            assert batch[task] == C.apply_condition(key, task, d, 7, proposer=single)
        assert prop.calls == max(p.calls for p in singles) > 1  # redraw rounds are shared by all tasks


def test_cli_perturb():
    from wobble.errors import WobbleError

    assert C.cli_perturb("delete_stopwords", TASK1557) == TASK1557_NO_STOPWORDS
    assert C.cli_perturb("shuffle_words", TASK1557, seed=3) == C.apply_condition("shuffle_words", "cli", TASK1557, 3)
    with pytest.raises(WobbleError):
        C.cli_perturb("insert_words", TASK1557)  # no proposer
    with pytest.raises(WobbleError):
        C.cli_perturb("no_such_condition", TASK1557)


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
