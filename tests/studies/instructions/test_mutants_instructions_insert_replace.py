"""wobble.studies.instructions.insert_replace: behaviour the mutation run (tests/tools/mutate.py) found
untested: slot kinds and neighbours, where an insertion can go, the neighbour rule between two
replacements, and what a proposer may return."""

from __future__ import annotations

import pytest

from wobble.seeding import make_rng
from wobble.studies.instructions import insert_replace as IR
from wobble.studies.instructions import perturb as P

TEXT = ("In this task, you will be shown an incorrect English sentence. "
        "You need to generate a corrected form of the input sentence.")


def test_mask_slot_kind_and_neighbours():
    assert IR.MaskSlot("a ", " b").kind == "insert"
    assert IR.MaskSlot("a ", " b", "x").kind == "replace"
    # only the word right before and the word right after
    assert IR.MaskSlot("one two ", " three four").neighbours == ["two", "three"]


def test_insertion_slots_before_each_word_and_after_the_last():
    assert IR.insertion_slots("one two three") == [(0, 0, "", " "), (4, 4, "", " "), (8, 8, "", " "),
                                                   (13, 13, " ", "")]
    assert IR.insertion_slots("") == []


def test_insert_plan_slots_replace_nothing():
    plan = IR.plan_insert_words("one two three", make_rng(0, "t", "insert_words"))
    assert plan.kind == "insert" and len(plan) == plan.k == 4  # k >= 5 capped at the 4 slots
    assert all(plan.slot(i).original is None and plan.slot(i).kind == "insert" for i in range(len(plan.order)))
    replace = IR.plan_replace_words("one two three", make_rng(0, "t", "replace_words"))
    assert replace.kind == "replace" and {replace.slot(i).original for i in range(3)} == {"one", "two", "three"}


def test_a_word_equal_to_an_adjacent_replacement_is_rejected_on_both_sides():
    plan = IR.plan_replace_words("alpha beta gamma delta epsilon", make_rng(0, "t", "replace_words"))
    at = {ed.index: j for j, ed in enumerate(plan.order)}  # word number -> position in the order
    middle = at[2]
    assert IR.acceptable(plan, middle, "zebra", {}) is True
    assert IR.acceptable(plan, middle, "zebra", {at[1]: "zebra"}) is False   # left neighbour became zebra
    assert IR.acceptable(plan, middle, "zebra", {at[3]: "Zebra"}) is False   # right neighbour, any case
    assert IR.acceptable(plan, middle, "zebra", {at[0]: "zebra"}) is True    # not adjacent
    assert IR.acceptable(plan, middle, "two words", {}) is False
    assert IR.acceptable(plan, middle, "gamma", {}) is False                  # the replaced word itself


def test_proposals_are_stripped_and_missing_ones_redrawn():
    for seed in range(5):
        k = IR.plan_insert_words(TEXT, make_rng(seed, "t", "insert_words")).k
        out = IR.insert_words(TEXT, make_rng(seed, "t", "insert_words"), lambda left, right: " zebra\n")
        assert P.words(out).count("zebra") == k and "\n" not in out and "  " not in out
    calls = []

    def none_first(left, right):
        calls.append(1)
        return None if len(calls) == 1 else "zebra"

    out = IR.insert_words(TEXT, make_rng(0, "t", "insert_words"), none_first)
    assert P.words(out).count("zebra") == IR.plan_insert_words(TEXT, make_rng(0, "t", "insert_words")).k


def test_bad_proposers_fail_clearly():
    with pytest.raises(TypeError, match="a proposer needs propose_many"):
        IR.as_proposer(42)

    class Short:
        def propose_many(self, slots):
            return []

    with pytest.raises(ValueError, match=r"proposer returned 0 words for \d+ slots"):
        IR.insert_words(TEXT, make_rng(0, "t", "insert_words"), Short())


def test_a_proposed_word_keeps_its_case():
    class Proposer:
        def propose_many(self, slots):
            return [" Zebra "] * len(slots)

    out = IR.insert_words("In this task you fix the sentence.", make_rng(1), Proposer(), k_min=1, k_max=1)
    assert "Zebra" in out.split() and "zebra" not in out
