"""wobble.studies.first_token.claims_counts: what the mutation run (tests/tools/mutate.py) found untested — the
per-question counts (entropy gaps where a side has no option, finish reasons, letters), their sums, the
position-bias control on ties and the precondition's wording, each on hand-made predictions worked out in the
comments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.studies.first_token import claims_counts as K

from test_first_token_claims import MAIN, rec  # noqa: E402 (the same hand-made predictions)

LOW, HIGH = K.cell("low", MAIN), K.cell("high", MAIN)


def table(recs):
    return K.model_tables(recs, MAIN, n_boot=10, seed=0)["m"]


def test_the_largest_cell_skips_cells_without_a_rate_wherever_they_are():
    assert K.largest_cell({"low": math.nan, "medium": None, "high": 0.3, "example": 0.1}) == 0.3
    assert math.isnan(K.largest_cell({"low": math.nan})) and math.isnan(K.largest_cell({}))


def test_the_most_frequent_letter_breaks_a_tie_alphabetically():
    s = K.Sums({"ft:B|c": 0, "ft:C|c": 1, "ft:A|c": 2, "ft:D|d": 3}, np.array([3.0, 3.0, 1.0, 9.0]))
    assert K.top_letter(s, ["c"]) == ("B", 3 / 7)  # B and C both 3 of 7; D is another cell's
    letter, share = K.top_letter(s, ["e"])
    assert letter is None and math.isnan(share)


def test_position_control_counts_letter_keeping_option_keeping_and_ties_apart():
    # (first-token option, letter, text option, text letter) per shuffle of one question at Low
    q = {0: [("Yes", "A", "Yes", "A"), ("No", "A", "Yes", "B"), ("Refused", "B", "Yes", "C")],
         # first token: letter A on 2 of 3, no option twice -> position; text: option Yes on 3 -> content
         1: [("Yes", "A", "Yes", "A"), ("Yes", "B", "No", "A")],
         # first token: option kept, letters differ -> content; text: letter A kept, options differ -> position
         2: [("Yes", "A", "No", "B"), ("No", "B", "No", "A")],
         # first token: letters 1/2, options 1/2 -> a tie, neither; text: option kept -> content
         3: [("Yes", "A", "Yes", "A"), ("No", "A", None, None)]}
    # first token: letter kept -> position; text: one answer names a letter, too few to compare
    recs = [rec(i, "low", s, ft, tx, letter=fl, text_letter=tl)
            for i, rows in q.items() for s, (ft, fl, tx, tl) in enumerate(rows)]
    t = table(recs)
    # first token: position in q0 and q3 (2 of 4 groups), content in q1 (1 of 4); 'A' on 6 of 9 prompts;
    # the text: 3 groups (q0, q1, q2), letter kept in q1 only
    assert K.position_control(t, [LOW]) == (
        "wobble's position-bias control: first token 'A' on 67% of prompts; over a question's shuffles it keeps its "
        "letter rather than its option in 50% of question x level groups (its option rather than its letter in "
        "25%); the text keeps its letter in 33%")
    assert (t.total[f"poscells|{LOW}"], t.total[f"position|{LOW}"], t.total[f"content|{LOW}"]) == (4, 2, 1)
    assert (t.total[f"txposcells|{LOW}"], t.total[f"txposition|{LOW}"], t.total[f"txcontent|{LOW}"]) == (3, 1, 2)
    assert K.position_control(t, [HIGH]) == "wobble's position-bias control: no prompts"


def test_entropy_gaps_need_an_option_on_both_sides_and_the_text_entropy_one_on_the_text_side():
    recs = [
        # q0: first token Yes, No, Refused (ln 3); text No, No, Yes (2/3, 1/3)
        rec(0, "low", 0, "Yes", "No"), rec(0, "low", 1, "No", "No"), rec(0, "low", 2, "Refused", "Yes"),
        # q1: the text names no option: no gap, no text entropy
        rec(1, "low", 0, "Yes", None), rec(1, "low", 1, "Yes", None),
        # q2: the first token is no option: no gap, text entropy ln 2
        rec(2, "low", 0, None, "Yes", letter="D"), rec(2, "low", 1, None, "No", letter="D")]
    t = table(recs)
    h_third = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert t.total[f"hgap|{LOW}"] == pytest.approx(math.log(3) - h_third) and t.total[f"hgapn|{LOW}"] == 1
    assert t.total[f"htx|{LOW}"] == pytest.approx(h_third + math.log(2)) and t.total[f"htxn|{LOW}"] == 2


def test_finish_reasons_are_counted_where_a_generation_has_one():
    recs = [rec(0, "low", 0, "Yes", "No", finish="length"), rec(0, "low", 1, "Yes", "Yes", finish="stop"),
            rec(1, "low", 0, "Yes", None, finish="stop"), rec(1, "low", 1, "Yes", "Yes", finish=None)]
    t = table(recs)
    assert (t.total[f"fin|{LOW}"], t.total[f"cut|{LOW}"]) == (3, 1)
    # no option named in 1 of 4 texts; cut at the cap in 1 of the 3 with a finish reason
    assert K.diagnostics(t, [LOW]) == "text names no option 25%; cut at max_new_tokens 33%"
    assert K.diagnostics(table([rec(0, "low", 0, "Yes", "No", finish=None)]), [LOW]) == "text names no option 0%"


def test_text_letters_are_counted_once_per_text_naming_one_in_the_cells_asked():
    recs = [rec(0, "low", 0, "Yes", "Yes"), rec(0, "low", 1, "No", "Yes"), rec(0, "low", 2, "Yes", "No"),
            rec(1, "low", 0, "Yes", None), rec(1, "high", 0, "Refused", "Refused")]
    s = table(recs).total
    assert s.letters("tx", (c for c in [LOW])) == {"A": 2, "B": 1}  # an iterable, read once
    assert s.letters("ft", [LOW, HIGH]) == {"A": 3, "B": 1, "C": 1}
    assert s.rate("none", (c for c in [LOW, HIGH])) == pytest.approx(1 / 5)


def test_sums_are_a_mapping_of_every_count_name_and_absent_ones_are_zero():
    recs = [rec(0, "low", 0, "Yes", "No"), rec(1, "high", 0, "Yes", "Yes")]
    t = table(recs)
    assert len(t.total) == len(t.names) and list(t.total) == sorted(t.names)
    assert dict(t.total)[f"n|{LOW}"] == 1.0 and t.total["n|example@0.00"] == 0.0
    # question 1 has no Low prompt and question 0 no High one: each counts 1, not 2
    assert (t.total[f"n|{LOW}"], t.total[f"n|{HIGH}"], t.total[f"mis|{LOW}"]) == (1, 1, 1)


def test_questions_with_counts_those_with_at_least_one_prompt_in_the_cells():
    recs = [rec(0, "low", 0, "Yes", "No"), rec(1, "high", 0, "Yes", "Yes"), rec(2, "high", 0, "Yes", "Yes"),
            rec(2, "high", 1, "No", "No")]
    t = table(recs)
    assert (t.questions_with([LOW]), t.questions_with([HIGH]), t.questions_with([LOW, HIGH])) == (1, 2, 3)
    assert t.questions_with(["example@0.00"]) == 0  # a cell no question has


def test_the_precondition_note_names_the_levels_run_and_their_temperature_when_not_the_main_one():
    recs = [rec(0, "low", 0, "Yes", "No"), rec(0, "low", 1, "Yes", "Yes", opens=True)]
    t = table(recs)
    assert K.not_opening(t, [LOW, HIGH]) == {LOW: 0.5}  # High did not run: no share, not NaN
    assert K.opening_note({LOW: 0.5, "medium@0.70": 0.25, "example_abc@0.00": 0.0}, MAIN) == (
        "text answers not opening with the first-token letter: Low 50%, Medium T=0.70 25%, example_abc 0%")
    assert K.opening_note({}, MAIN) == "text answers not opening with the first-token letter: no prompts"


def test_the_population_is_the_papers_414_opinionqa_questions():
    # §3: "we have curated a subset of 414 questions"; the questions-needed estimate stops there
    assert K.N_QUESTIONS == 414
