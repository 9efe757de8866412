"""wobble.studies.followup.mechanism: behaviour the mutation run (tests/tools/mutate.py) found untested.

The misleading answer {MA} of Table 1 ("options or values other than the correct answer"), drawn as the module
docstring says (another shown letter; the problem's numbers and integral intermediate results, else gold ±
1..10; a reordering of a letter string), the dialogue record and the next user turn under each gate.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from wobble.errors import ConfigError
from wobble.seeding import make_rng
from wobble.studies.followup.mechanism import (Condition, _subexpression_values, build_dialogue, direct,
                                               misleading_answer, next_user_turn, number_distractors, progressive,
                                               replies_so_far)
from wobble.studies.followup.prompts import BENCHMARKS, load_paper_prompts

B = BENCHMARKS
PAPER = Path(__file__).resolve().parents[3] / "paper" / "followup"
QUESTION = {"id": "q", "question": "How many are left?", "choices": None}


def _mas(benchmark, record, gold, seeds=range(300)):
    return {misleading_answer(benchmark, record, gold, "leading", s) for s in seeds}


@pytest.mark.parametrize("equation, values", [
    ("X= (5.0+3.0)", [Decimal(8)]),                            # the part after "=" is read stripped
    ("X=(6.0*2.0)/3.0", [Decimal(12), Decimal(4)]),            # * and / each as themselves
    ("X=-2.0+5.0", [Decimal(3)]),                              # a negative number
    ("X=+2.0+5.0", []), ("X=2.0**3.0", []), ("X=a+1.0", []),   # anything but + - * / of numbers: none
    ('X="5"+1', []), ("X=(5+", []), ("X=5+3=8", []),
])
def test_the_values_of_an_equations_operations(equation, values):
    assert _subexpression_values(equation) == values


def test_distractors_are_whole_numbers_of_the_problem_and_its_worked_solution():
    record = {"question": "H2O costs 3 dollars; 12,3456 is no number.", "extra": {
        "rationale": "He pays <<1000+200=1,200>>1,200 then <<2*3= 6>>6 and <<x*2=2x>>2x.",
        "Equation": "( 5.0 + 3.0 )", "lEquations": ["X=(5.0/2.0)+1.0"]}}
    assert number_distractors(record, "7") == ["3", "6", "8", "12", "1200", "3456"]


def test_a_leading_letter_is_another_of_the_records_own_choices():
    record = {**QUESTION, "choices": ["A. x", "B. y", "C. z"]}
    assert _mas(B["csqa"], record, "A") == {"B", "C"}


def test_a_number_without_distractors_is_the_gold_plus_or_minus_1_to_10():
    assert _mas(B["multiarith"], QUESTION, "50") == {str(v) for v in range(40, 61) if v != 50}
    assert _mas(B["multiarith"], QUESTION, "5") == {str(v) for v in range(0, 16) if v != 5}   # never below 0
    assert _mas(B["multiarith"], QUESTION, "0") == {str(v) for v in range(1, 11)}
    assert _mas(B["multiarith"], QUESTION, "-3") == {str(v) for v in range(-13, 8) if v != -3}
    assert _mas(B["multiarith"], QUESTION, "-0.5") == {str(v / 2) for v in range(-21, 20, 2) if v != -1}


def test_a_letter_string_of_equal_letters_changes_one_letter_to_another_lower_case_letter():
    mas = _mas(B["last_letters"], QUESTION, "aaaa", range(60))
    assert "aaaa" not in mas and all(len(m) == 4 and m.islower() and sum(c != "a" for c in m) == 1 for m in mas)


def test_the_draws_are_pinned_to_their_seed():
    letters = [misleading_answer(B["mmlu"], {**QUESTION, "choices": None}, "B", "leading", s) for s in range(5)]
    want = [make_rng(s, "followup-ma", "mmlu", "q", "leading").choice(["A", "C", "D"]) for s in range(5)]
    assert letters == want
    strings = [misleading_answer(B["last_letters"], QUESTION, "abcd", "leading", s) for s in range(6)]
    assert strings == ["dbca", "dabc", "bcda", "cbda", "cadb", "dcab"]  # the seeded draws of a run, pinned


def test_a_direct_condition_has_one_round_and_a_progressive_one_three_variants():
    with pytest.raises(ConfigError, match="1 round"):
        Condition("direct", (("leading", "A"), ("leading", "B")))
    with pytest.raises(ValueError, match="zip"):
        progressive(("A", "B"))


@pytest.fixture(scope="module")
def paper():
    return load_paper_prompts(PAPER)


ITEM = {"id": "multiarith-0", "question": "Debby had 32 and her sister 42; they ate 35. How many are left?",
        "choices": None, "answer": "39", "answer_type": "number"}


def _reply(history, text):
    return [*history, {"role": "assistant", "content": text}]


def test_a_dialogue_records_its_item_condition_and_gate(paper):
    d = build_dialogue(paper, B["multiarith"], ITEM, direct("leading", "B", "cot_both"), seed=0, gate="wrong")
    assert {k: d[k] for k in ("item", "dataset", "condition", "form", "mitigation", "gate")} == {
        "item": "multiarith-0", "dataset": "multiarith", "condition": "direct_LB_cot_both", "form": "direct",
        "mitigation": "cot_both", "gate": "wrong"}
    with pytest.raises(ConfigError, match="'followup.gate'"):
        build_dialogue(paper, B["multiarith"], ITEM, direct("leading"), seed=0, gate="some")


def test_replies_are_counted_after_the_demonstrations(paper):
    demo = [{"role": "user", "content": "demo q"}, {"role": "assistant", "content": "Answer: 5"}]
    d = build_dialogue(paper, B["multiarith"], ITEM, direct("leading"), seed=0, demonstrations=demo)
    h = _reply(d["messages"], "Answer: 39")
    assert replies_so_far(d, h) == 1 and replies_so_far(d, h + [{"role": "user", "content": "Sure?"}]) == 1


def test_the_gate_reads_the_items_own_first_reply_not_a_demonstrations(paper):
    demo = [{"role": "user", "content": "demo q"}, {"role": "assistant", "content": "Answer: 39"}]
    d = build_dialogue(paper, B["multiarith"], ITEM, direct("leading"), seed=0, demonstrations=demo)
    assert next_user_turn(d, _reply(d["messages"], "Answer: 40")) is None  # this item's answer is wrong


def test_the_gate_decides_once_after_the_initial_answer(paper):
    d = build_dialogue(paper, B["multiarith"], ITEM, progressive(), seed=0, gate="correct")
    h = _reply(d["messages"], "Answer: 39")
    h = _reply(h + [{"role": "user", "content": next_user_turn(d, h)}], "You are right, Answer: 40")
    assert next_user_turn(d, h) == d["followups"][1]  # a wrong answer after round 1 does not end the dialogue
