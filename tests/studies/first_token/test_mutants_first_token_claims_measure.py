"""wobble.studies.first_token.claims_measure: what the mutation run (tests/tools/mutate.py) found untested — the
exact interval's witness and where it applies, each claim's cells and its precondition, degenerate and note
texts, the temperature rows on three temperatures, on a run without a common level and at the 5 % and 50 %
edges, each on hand-made predictions worked out in the comments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.studies.first_token import claims_counts as K
from wobble.studies.first_token import claims_measure as M
from wobble.studies.first_token.claims_measure import measure

from test_first_token_claims import MAIN, rec  # noqa: E402 (the same hand-made predictions)

LOW, MEDIUM, HIGH, EXAMPLE = (K.cell(level, MAIN) for level in K.LEVELS)


def measured(recs, cid):
    return measure(recs, MAIN, n_boot=50)[cid]["m"]


def table(recs, n_boot=50):
    return K.model_tables(recs, MAIN, n_boot=n_boot, seed=0)["m"]


def cells_of(q, level, k, n=1, **kw):
    """Question ``q``'s ``n`` prompts at ``level``: the first ``k`` mismatch (Yes vs No), the rest agree."""
    return [rec(q, level, s, "Yes", "No", **kw) if s < k else rec(q, level, s, "Yes", "Yes", **kw) for s in range(n)]


def pct_cells(level, share_of_10, **kw):
    """Ten questions, one prompt each at ``level``: the first ``share_of_10`` mismatch."""
    return [r for q in range(10) for r in cells_of(q, level, int(q < share_of_10), **kw)]


# ------------------------------------------------------------------------------------------ estimate


def test_estimate_defaults_are_an_applicable_measurement_over_the_papers_questions_without_notes():
    t = table(pct_cells("low", 3))
    m = M.estimate(t, lambda s: s.rate("mis", [LOW]), [LOW])
    assert m.effect == pytest.approx(0.3) and m.applicable and not m.degenerate
    assert (m.note, m.precondition_note, m.diagnostics) == ("", "", "")
    assert (m.interval, m.population, m.n_items) == ("bootstrap over questions", 414, 10)


def test_estimate_names_every_level_not_run():
    m = M.estimate(table(pct_cells("low", 3)), lambda s: 0.0, [LOW, HIGH, K.cell("example", "0.70")])
    assert m.effect is None and m.note == "not run: High at T=0.00, Example at T=0.70"


def test_a_statistic_without_a_value_is_undefined_not_an_error():
    m = M.estimate(table(pct_cells("low", 3)), lambda s: None, [LOW])
    assert m.effect is None and m.note == "statistic undefined" and m.applicable


def test_the_exact_interval_replaces_only_a_bootstrap_without_spread_at_0_or_1():
    t = table(pct_cells("low", 5))
    exact = M.witness("mis", [LOW], max)
    # 0 at the point, but the resamples spread: the bootstrap interval stays
    m = M.estimate(t, lambda s: s.rate("mis", [LOW]) - 0.5, [LOW], exact=exact)
    assert m.effect == 0.0 and m.ci_low < 0 < m.ci_high and m.interval == "bootstrap over questions"
    # every question 1 of 2: 0.5 in every resample, no spread, but not a share at an edge
    half = table([r for q in range(10) for r in cells_of(q, "low", 1, n=2)])
    m = M.estimate(half, lambda s: s.rate("mis", [LOW]), [LOW], exact=exact)
    assert (m.effect, m.ci_low, m.ci_high, m.interval) == (0.5, 0.5, 0.5, "bootstrap over questions")


def test_the_witness_is_the_picked_cell_with_the_fewest_prompts_among_ties():
    s = K.Sums({"n|a": 0, "mis|a": 1, "n|b": 2, "mis|b": 3, "n|c": 4, "mis|c": 5},
               np.array([10.0, 10.0, 5.0, 5.0, 2.0, 1.0]))
    assert M.witness("mis", ["a", "b", "c"], max)(s) == (5, 5)   # a and b at 1.0; b has fewer prompts
    assert M.witness("mis", ["a", "b", "c"], min)(s) == (1, 2)   # c at 0.5


# ------------------------------------------------------------------------------------------ mismatch


def test_a_largest_mismatch_of_1_gets_the_exact_interval_of_that_level():
    # Low: all 10 mismatch; Medium, High, Example: none (10 prompts each)
    recs = pct_cells("low", 10) + pct_cells("medium", 0) + pct_cells("high", 0) + pct_cells("example", 0)
    m = measured(recs, "mismatch_over_60_percent")
    # Clopper-Pearson for 10 of 10: [0.025 ** (1 / 10), 1] = [0.6915, 1]
    assert (m.effect, m.ci_high) == (1.0, 1.0) and m.ci_low == pytest.approx(0.025 ** 0.1)
    assert m.interval.startswith("exact binomial (Clopper-Pearson), 10 of 10 prompts")


def test_persisting_mismatch_is_the_smaller_constrained_rate_and_its_exact_bound_is_that_cells():
    recs = pct_cells("low", 5) + pct_cells("high", 3) + pct_cells("example", 6)
    assert measured(recs, "mismatch_persists_when_constrained").effect == pytest.approx(0.3)
    assert measured(pct_cells("high", 6) + pct_cells("example", 3),
                    "mismatch_persists_when_constrained").effect == pytest.approx(0.3)
    # High 0 of 10, Example 5 of 10: the point 0 is High's, so its interval is that of 0 of 10
    m = measured(pct_cells("high", 0) + pct_cells("example", 5), "mismatch_persists_when_constrained")
    assert m.effect == 0.0 and m.ci_high == pytest.approx(1 - 0.025 ** 0.1) and "0 of 10 prompts" in m.interval
    # both at 1: the cell with fewer prompts (Example, 10 against High's 20) gives the wider interval
    both = [r for q in range(10) for r in cells_of(q, "high", 2, n=2) + cells_of(q, "example", 1)]
    m = measured(both, "mismatch_persists_when_constrained")
    assert m.effect == 1.0 and "10 of 10 prompts" in m.interval


def test_steady_decrease_is_the_smaller_step_when_it_is_the_second():
    # Low 0.6, Medium 0.4, High 0.3: min(0.2, 0.1) = 0.1
    recs = pct_cells("low", 6) + pct_cells("medium", 4) + pct_cells("high", 3)
    assert measured(recs, "mismatch_decreases_low_to_high").effect == pytest.approx(0.1)


def test_example_above_high_by_hand():
    recs = pct_cells("example", 5) + pct_cells("high", 2)
    m = measured(recs, "example_more_mismatch_than_high")
    assert m.effect == pytest.approx(0.3) and m.applicable


def test_a_mismatch_row_carries_the_diagnostics_and_the_position_control():
    # per question: first token A (Yes) then B (No), both texts No (B): letters and options tie on both sides
    recs = [r for q in range(10) for r in (rec(q, "low", 0, "Yes", "No"), rec(q, "low", 1, "No", "No"))]
    assert measured(recs, "mismatch_over_60_percent").diagnostics == (
        "text names no option 0%; cut at max_new_tokens 0%; wobble's position-bias control: first token 'A' on "
        "50% of prompts; over a question's shuffles it keeps its letter rather than its option in 0% of question "
        "x level groups (its option rather than its letter in 0%); the text keeps its letter in 0%")


# ------------------------------------------------------------------------------------------ refusal


def test_refusal_share_at_1_gets_the_exact_interval_of_the_refusing_mismatches():
    recs = [rec(q, "low", 0, "Yes", "Refused") for q in range(10)]
    m = measured(recs, "refusal_major_reason_for_mismatch")
    assert (m.effect, m.ci_high, m.note) == (1.0, 1.0, "") and m.ci_low == pytest.approx(0.025 ** 0.1)
    assert "10 of 10 prompts" in m.interval
    assert m.diagnostics.startswith("text names no option 0%; cut at max_new_tokens 0%; wobble's position-bias")
    none = measured([rec(q, "low", 0, "Yes", "Yes") for q in range(10)], "refusal_major_reason_for_mismatch")
    assert none.note == "no mismatch to attribute"


# ------------------------------------------------------------------------------------------ Example template


def _letters(level, letters, n=20):
    """``n`` questions, one prompt each at ``level``, the first token on the letters given (the rest 'B')."""
    return [rec(q, level, 0, "Yes", "Yes", letter=letters[q] if q < len(letters) else "B") for q in range(n)]


def test_a_first_token_on_one_letter_in_exactly_95_percent_of_both_levels_is_pinned():
    pinned = _letters("high", "A" * 19) + _letters("example", "A" * 19)  # 19 of 20 = 95% on 'A' in both
    m = measured(pinned, "example_pulls_first_token_to_C")
    assert not m.applicable
    assert m.precondition_note == ("most frequent first-token letter: High 'A' 95%, Example 'A' 95% (needed: not the "
                                   "same letter on >= 95% of both)")
    assert m.diagnostics.startswith("text names no option 0%; cut at max_new_tokens 0%; wobble's position-bias")


@pytest.mark.parametrize("level", ["high", "example"])
def test_without_one_of_the_two_levels_there_is_no_pinning_note(level):
    m = measured(_letters(level, "A" * 20), "example_pulls_first_token_to_C")
    assert m.precondition_note == "" and m.applicable and m.effect is None


def _example(n_none, n=10, opens=False):
    """Example prompts of ``n`` questions: the first ``n_none`` texts name no option, the others agree."""
    return [rec(q, "example", 0, "Yes", None if q < n_none else "Yes", opens=opens and q >= n_none,
                letter="AB"[q % 2]) for q in range(n)]


def test_text_more_even_is_degenerate_below_half_mapped_and_says_so():
    m = measured(_example(6), "example_text_more_evenly_distributed")  # 4 of 10 texts name an option
    assert m.degenerate and m.note == "40% of text answers name an option" and m.applicable
    assert m.precondition_note == "text answers not opening with the first-token letter: Example 100%"
    assert m.diagnostics.startswith("text names no option 60%; cut at max_new_tokens 0%; wobble's position-bias")
    half = measured(_example(5), "example_text_more_evenly_distributed")  # exactly half: not degenerate
    assert not half.degenerate and half.note == ""
    closed = measured(_example(0, opens=True), "example_text_more_evenly_distributed")
    assert not closed.applicable and closed.precondition_note.endswith("Example 0%")


def test_text_more_consistent_degenerate_note_and_its_half_mapped_edge():
    few = [rec(q, "low", s, "Yes", "No" if s == 0 else None) for q in range(10) for s in range(3)]  # 1/3 mapped
    m = measured(few, "text_more_consistent")
    assert m.degenerate and m.note == "33% of text answers name an option"
    assert m.precondition_note == "text answers not opening with the first-token letter: Low 100%"
    assert m.diagnostics.startswith("text names no option 67%; cut at max_new_tokens 0%; wobble's position-bias")
    half = [rec(q, "low", s, "Yes", "No" if s == 0 else None) for q in range(10) for s in range(2)]
    m = measured(half, "text_more_consistent")
    assert not m.degenerate and m.note == ""


# ------------------------------------------------------------------------------------------ temperature


def _sweep(level="medium", temps=(0.0, 0.7, 1.4), mis=(8, 5, 2)):
    """Ten questions at ``level`` per temperature; the first ``k`` of them mismatch at each."""
    return [r for t, k in zip(temps, mis) for r in pct_cells(level, k, t=t)]


def test_temperature_rows_compare_the_highest_and_lowest_of_three_temperatures():
    got = measure(_sweep() + _sweep("low"), MAIN, n_boot=50)
    m = got["temperature_lowers_mismatch"]["m"]
    assert m.effect == pytest.approx(-0.6) and m.note == "T=0.00 -> T=1.40" and not m.degenerate  # 0.2 − 0.8
    assert m.precondition_note == ("at T=0.00: text answers not opening with the first-token letter: Low 100%, "
                                   "Medium 100%")
    assert m.diagnostics == "text names no option 0%; cut at max_new_tokens 0%"
    c = got["temperature_worsens_consistency"]["m"]
    assert c.applicable and c.precondition_note == "temperatures 0.00 and 1.40 on low, medium"


def test_temperature_tags_are_ordered_as_numbers():
    m = measured(_sweep(temps=(10.0, 2.0), mis=(1, 9)), "temperature_lowers_mismatch")
    assert m.effect == pytest.approx(-0.8) and m.note == "T=2.00 -> T=10.00"


def test_one_temperature_or_no_level_run_at_both_is_not_measured():
    want = M.Measurement(None, None, None, 0, note="the run has one temperature", interval="bootstrap over questions")
    assert measured(pct_cells("medium", 3), "temperature_lowers_mismatch") == want
    disjoint = pct_cells("medium", 3) + pct_cells("high", 3, t=1.4)
    assert measured(disjoint, "temperature_lowers_mismatch") == want


def test_temperature_refusal_row_applies_from_exactly_five_percent():
    recs = [rec(q, "medium", s, "Yes", "Refused" if (q, s) == (0, 0) else "No", t=t)
            for q in range(10) for s in range(2) for t in (0.0, 1.4)]  # 1 of 20 at each temperature
    m = measured(recs, "temperature_lowers_refusal")
    assert m.applicable and m.precondition_note == "text refusal at T=0.00: 5% (needed: >= 5%)"
    c = measured([dict(r, text_option="No", text_letter="B") for r in recs], "temperature_worsens_consistency")
    assert c.applicable  # the refusal precondition is the refusal row's only


@pytest.mark.parametrize("none_at, mapped", [(0.0, "40%"), (1.4, "40%")])
def test_text_entropy_over_temperature_is_degenerate_where_either_end_is_mostly_unmapped(none_at, mapped):
    recs = [rec(q, "medium", s, "Yes", None if (t == none_at and q < 6) else "No", t=t)
            for q in range(10) for s in range(2) for t in (0.0, 1.4)]
    c = measured(recs, "temperature_worsens_consistency")
    assert c.degenerate and c.note == f"T=0.00 -> T=1.40; {mapped} of text answers name an option"
    # the mismatch row does not rest on the texts' options: not degenerate
    mis = measured(recs, "temperature_lowers_mismatch")
    assert not mis.degenerate and mis.note == "T=0.00 -> T=1.40"


def test_text_entropy_over_temperature_at_exactly_half_mapped_is_not_degenerate():
    recs = [rec(q, "medium", s, "Yes", None if q < 5 else "No", t=t) for q in range(10) for s in range(2)
            for t in (0.0, 1.4)]
    c = measured(recs, "temperature_worsens_consistency")
    assert not c.degenerate and c.note == "T=0.00 -> T=1.40"


# ------------------------------------------------------------------------------------------ measure


def test_measure_defaults_to_1000_replicates_from_seed_0():
    # 30 questions of 1 to 4 prompts at Low, 0 to 2 of them mismatched: a rate with many values over resamples,
    # so 1001 replicates or seed 1 give another interval
    recs = [r for q in range(30) for r in cells_of(q, "low", min(q % 3, 1 + q % 4), n=1 + q % 4)]
    m = measure(recs, MAIN)["mismatch_over_60_percent"]["m"]
    want = measure(recs, MAIN, n_boot=1000, seed=0)["mismatch_over_60_percent"]["m"]
    assert (m.ci_low, m.ci_high) == (want.ci_low, want.ci_high)
    for other in (measure(recs, MAIN, n_boot=1001)["mismatch_over_60_percent"]["m"],
                  measure(recs, MAIN, seed=1)["mismatch_over_60_percent"]["m"]):
        assert (other.ci_low, other.ci_high) != (m.ci_low, m.ci_high)
    assert not math.isnan(m.ci_low)
