"""Word insertion and replacement (wobble.studies.instructions.insert_replace): exactly k words inserted or
replaced in order, the slots and their neighbours, proposals rejected and redrawn, and what a proposer may
return."""

from __future__ import annotations

import pytest

from wobble.seeding import make_rng
from wobble.studies.instructions import insert_replace as IR
from wobble.studies.instructions import perturb as P

from instructions_texts import LONG, TASK1557, TEXT, flaky, zebra


def drawn_k(seed, key, available):
    """The k an insert/replace draws: the first draw of its rng, capped at the positions there are."""
    return min(make_rng(seed, "t", key).randint(5, 10), available)


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_insert_words_adds_exactly_k_words_in_order(text):
    for seed in range(20):
        out = IR.insert_words(text, make_rng(seed, "t", "insert_words"), zebra)
        before, after = P.words(text), P.words(out)
        k = len(after) - len(before)
        assert k == drawn_k(seed, "insert_words", len(before) + 1) and 5 <= k <= 10
        assert after.count("zebra") == k
        assert [w for w in after if w != "zebra"] == before
        # nothing else changes: removing the inserted words (with their one space) gives the original back
        assert out.replace("zebra ", "").replace(" zebra", "") == text


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_replace_words_replaces_exactly_k_words(text):
    def skeleton(s):
        return P.WORD_RE.sub("W", s)
    for seed in range(20):
        out = IR.replace_words(text, make_rng(seed, "t", "replace_words"), zebra)
        before, after = P.words(text), P.words(out)
        assert len(after) == len(before) and skeleton(out) == skeleton(text)
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert all(b == "zebra" for _, b in changed)
        assert after.count("zebra") == drawn_k(seed, "replace_words", len(before))


@pytest.mark.parametrize("key", ["insert_words", "replace_words"])
def test_rejected_proposals_are_redrawn_until_k_apply(key):
    fill = IR.insert_words if key == "insert_words" else IR.replace_words
    for seed in range(20):
        out = fill(LONG, make_rng(seed, "t", key), flaky)
        n = len(P.words(LONG)) + (key == "insert_words")
        assert P.words(out).count("zebra") == drawn_k(seed, key, n)
    # nothing acceptable anywhere: every position is tried once, the text stays as it is
    calls = []

    def echo_left(left, right):
        calls.append(1)
        return (left or right)[-1 if left else 0]

    assert fill(TASK1557, make_rng(0, "t", key), echo_left) == TASK1557
    assert len(calls) == len(P.words(TASK1557)) + (key == "insert_words")


def test_a_proposal_equal_to_a_neighbour_is_rejected():
    plan = IR.plan_replace_words("alpha beta gamma delta", make_rng(0), 1, 1)
    i = 0
    slot = plan.slot(i)
    assert slot.neighbours == [w for w in ("alpha", "beta", "gamma", "delta")
                               if w in slot.left_words[-1:] + slot.right_words[:1]]
    for n in slot.neighbours:
        assert not IR.acceptable(plan, i, n.upper(), {})  # ignoring case
    assert not IR.acceptable(plan, i, slot.original, {}) and not IR.acceptable(plan, i, "two words", {})
    assert IR.acceptable(plan, i, "zebra", {})
    # a neighbour already replaced by "zebra": "zebra" next to it is rejected too
    here = plan.order[i].index
    j = next(j for j, ed in enumerate(plan.order) if abs(ed.index - here) == 1)
    assert not IR.acceptable(plan, i, "zebra", {j: "zebra"})
    assert IR.apply_words(plan, {i: "zebra"}).split().count("zebra") == 1


def test_proposer_sees_the_original_context():
    seen = []

    def record(left, right):
        seen.append((left, right))
        return "zebra"

    text_words = P.words(TASK1557)
    IR.insert_words(TASK1557, make_rng(1, "t", "i"), record)
    assert seen and all(left + right == text_words for left, right in seen)
    plan = IR.plan_replace_words(TASK1557, make_rng(1, "t", "r"))
    for slot in plan.slots:
        assert slot.left_words + [slot.original] + slot.right_words == text_words
        assert slot.masked("[MASK]").count("[MASK]") == 1


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
