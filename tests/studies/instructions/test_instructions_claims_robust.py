"""The two "close" claims (claims_robust.py) — the robustness with examples (in-04) and the paraphrases keeping
the performance (in-07): |mean drop| tested two-sided against 5 points with the engine's Extreme (each side at
97.5 %), their floors read per task (tasks at 0), and the tasks at 0 shown on the random-instruction claim's
subtracted arm; numbers worked out by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import t as student

from wobble.report.cells import read_paper
from wobble.report.engine import UnitTable, measure_claim
from wobble.report.intervals import Extreme
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_robust as R
from wobble.studies.instructions.claims_paper import paper_effects

from instructions_claims_tables import SPEC, SW, rows, table

REPO = Path(__file__).resolve().parents[3]
ROBUST = "examples_robust_all_perturbations"
PARA = "paraphrase_keeps_performance"
RANDOM = "random_instruction_with_examples_beats_correct_without"


def _spec():
    """The claim over one perturbation (shuffle words): drop = original/W − shuffle_words/W."""
    return {c.id: c for c in C.claims(["original", SW])}[ROBUST]


def _row(original, perturbed, spec=None):
    f = table({"original/W": original, f"{SW}/W": perturbed})
    return measure_claim(spec or _spec(), 4, UnitTable(f, "task"), ["m"], n_boot=200)[0]


def _half(drops) -> float:
    """Half the width of the mean drop's Student t interval at 97.5 % (each of the two parts: Bonferroni)."""
    d = np.asarray(drops, dtype=float)
    return float(student.ppf(1 - 0.025 / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))


def test_the_statistic_is_the_absolute_mean_drop_over_the_engines_extreme():
    stat = _spec().statistic
    assert isinstance(stat, Extreme) and stat.pick == "max" and len(stat.parts) == 2
    assert stat.parts[0].weights == (("original/W", 1.0), (f"{SW}/W", -1.0))
    assert stat.parts[1].weights == (("original/W", -1.0), (f"{SW}/W", 1.0))
    assert (SPEC[ROBUST].direction, SPEC[ROBUST].null) == (-1, 5.0)
    # the perturbation RAISES the scores by 3 (50 -> 53): |−3| = 3, where the one-sided mean drop read −3
    f = table({"original/W": [50.0, 50.0], f"{SW}/W": [53.0, 53.0]})
    assert stat.point(f, "task") == pytest.approx(3.0) and stat.parts[0].point(f, "task") == pytest.approx(-3.0)


def test_a_small_drop_either_way_is_robust_by_hand():
    # 10 tasks, drops −3, −1 alternating: mean −2, std √(10/9); the drop's 97.5 % t interval −2 ± h (h ≈ 0.89):
    # |drop| takes the larger bounds of [−2 − h, −2 + h] and [2 − h, 2 + h] -> [2 − h, 2 + h], below 5
    drops = [-3.0, -1.0] * 5
    h = _half(drops)
    r = _row([60.0] * 10, [60.0 - d for d in drops])
    assert (r["effect"], r["ci_low"], r["ci_high"]) == (pytest.approx(2.0), pytest.approx(2 - h), pytest.approx(2 + h))
    assert h == pytest.approx(student.ppf(0.9875, 9) * np.sqrt(10 / 9) / np.sqrt(10))
    assert r["verdict"] == "reproduced" and "each of 2 parts at 97.50% (Bonferroni), the max" in r["interval"]


def test_a_rise_beyond_five_points_contradicts_robustness():
    # the perturbation raises every task by 9 or 11: mean drop −10, |drop| interval [10 − h, 10 + h], above 5
    drops = [-11.0, -9.0] * 5
    h = _half(drops)
    r = _row([60.0] * 10, [60.0 - d for d in drops])
    assert (r["effect"], r["ci_low"], r["ci_high"]) == (pytest.approx(10.0), pytest.approx(10 - h),
                                                        pytest.approx(10 + h))
    assert r["verdict"] == "contradicted"
    # the one-sided reading (mean drop below 5) called the same rise robust: its interval lies below 5
    f = table({"original/W": [60.0] * 10, f"{SW}/W": [60.0 - d for d in drops]})
    assert _spec().statistic.parts[0].exact(f, "task", 0.95)[0][1] < 5


def test_a_mean_drop_whose_interval_crosses_minus_five_is_inconclusive():
    # drops −8, 0 alternating: mean −4, std √(160/9), h ≈ 3.58: the drop's interval [−7.6, −0.4] reaches below −5,
    # so |drop|'s [0.4, 7.6] contains 5
    drops = [-8.0, 0.0] * 5
    h = _half(drops)
    r = _row([60.0] * 10, [60.0 - d for d in drops])
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(4 - h), pytest.approx(4 + h))
    assert r["ci_low"] < 5 < r["ci_high"]
    assert r["verdict"] == "inconclusive"


def test_the_floor_is_read_per_task():
    floor = {p.name: p for p in _spec().preconditions}["floor in original/W"]
    assert floor.bias == "toward the claim"
    assert floor.text == ("the mean over tasks lies above 5 and at most half the tasks score 0 in each cell of "
                          "original/W (a task at 0 can only 'drop' by zero or less)")
    # mean 20 (off the mean floor) but 3 of 4 tasks at 0: fails; 2 of 4 (half, not more): met
    assert floor.check(table({"original/W": [0.0, 0.0, 0.0, 80.0]})) == (
        False, "mean over tasks above 5 and at most 50% of the tasks at 0: original/W 20.0, 3/4 tasks at 0 ✗")
    assert floor.check(table({"original/W": [0.0, 0.0, 30.0, 40.0]})) == (
        True, "mean over tasks above 5 and at most 50% of the tasks at 0: original/W 17.5, 2/4 tasks at 0")
    # the mean floor still holds: one task at 0 of four, mean 4.5
    assert not floor.check(table({"original/W": [0.0, 6.0, 6.0, 6.0]}))[0]
    # the perturbations' arm: per cell
    perts = {p.name: p for p in _spec().preconditions}["floor in the perturbations/W"]
    assert perts.check(table({f"{SW}/W": [0.0, 0.0, 10.0]})) == (
        False, "mean over tasks above 5 and at most 50% of the tasks at 0: shuffle_words/W 3.3, 2/3 tasks at 0 ✗")
    # the ceilings are the mean's, as before
    assert {p.name: p for p in _spec().preconditions}["ceiling in original/W"].check(
        table({"original/W": [0.0, 0.0, 0.0, 80.0]}))[0]


def test_a_task_is_at_0_when_every_instance_and_seed_of_it_is():
    # t0: instances 0 and 100 -> 50, not at 0; t1: 0 on both seeds -> at 0
    f = rows([("t0", "original/W", "original", "i0", 1, 0.0), ("t0", "original/W", "original", "i1", 1, 100.0),
              ("t1", "original/W", "original", "i0", 1, 0.0), ("t1", "original/W", "original", "i0", 2, 0.0)])
    assert R.tasks_at_zero(f, ["original/W"]) == {"original/W": (1, 2)}


def test_tasks_at_0_in_most_of_a_cell_leave_a_robust_row_not_applicable():
    # 12 tasks: 7 at 0 in both arms (drop 0), 5 at 60 against 59/61: the interval lies near 0, reproduced alone;
    # the cells' means (25, 25) pass the mean floor, but 7 of 12 tasks at 0 fail it per task (toward the claim)
    original = [0.0] * 7 + [60.0] * 5
    perturbed = [0.0] * 7 + [59.0, 61.0, 59.0, 61.0, 60.0]
    r = _row(original, perturbed)
    assert r["ci_high"] < 5 and (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "floor in original/W (toward the claim)" in r["reason"]
    assert "floor in the perturbations/W (toward the claim)" in r["reason"]
    assert "original/W 25.0, 7/12 tasks at 0 ✗" in r["precondition_note"]


def test_the_random_instruction_claims_subtracted_arm_reads_its_floor_per_task_toward_the_claim():
    floor = {p.name: p for p in SPEC[RANDOM].preconditions}["floor in original/WO"]
    assert floor.bias == "toward the claim"  # a task at 0 there can only add zero or more to the difference
    # 19 of 23 tasks at 0, mean 160 / 23 = 6.96: above 5 but more than half the tasks at 0: not met
    held, figure = floor.check(table({"original/WO": [0.0] * 19 + [40.0] * 4}))
    assert not held and "19/23 tasks at 0" in figure
    # 11 of 23 at 0, mean 12 * 40 / 23 = 20.9: met
    assert floor.check(table({"original/WO": [0.0] * 11 + [40.0] * 12}))[0]
    ceiling = {p.name: p for p in SPEC[RANDOM].preconditions}["ceiling in original/WO"]
    assert ceiling.bias == "toward the null"


def test_the_row_notes_the_signed_mean_drop_that_the_absolute_value_hides():
    # 10 tasks: shuffle words/W raises every task by 3 (60 -> 63): |drop| 3, the note says the scores rise
    f = table({"original/W": [60.0] * 10, f"{SW}/W": [63.0 - (i % 2) for i in range(10)]})
    paper = [read_paper(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES]
    rows = {r["row_id"]: r for r in C.measure(f, ["m"], ["original", SW], paper, n_boot=50)}
    r = rows["in-04-m"]
    assert r["effect"] == pytest.approx(2.5)
    assert r["note"] == "signed mean drop -2.5: the perturbations raise the scores on average"
    assert rows["in-06-m"]["note"] == ""  # the other claims' rows: untouched
    assert R.with_signed_drop({"claim": ROBUST, "measured": False, "note": ""}, _spec(), f)["note"] == ""


# ------------------------------------------------------------------------- the paraphrases keep the performance


def _para(original, drops, spread=1.0):
    """Para-Instructions cells of tasks scoring ``original`` whose 3 new instructions score original − drop − spread,
    original − drop, original − drop + spread (their mean: original − drop)."""
    return table({"para/original": list(original),
                  **{c: [o - d + k * spread for o, d in zip(original, drops)]
                     for c, k in zip(C.PARA[1:], (-1, 0, 1))}})


def _para_row(original, drops, spread=1.0):
    return measure_claim(SPEC[PARA], 6, UnitTable(_para(original, drops, spread), "task"), ["m"], n_boot=200)[0]


def test_the_paraphrase_statistic_is_the_absolute_mean_drop_through_the_same_definition():
    stat = SPEC[PARA].statistic
    assert isinstance(stat, Extreme) and stat.pick == "max" and len(stat.parts) == 2
    assert stat.parts[0].weights == (("para/original", 1.0), ("para/paraphrase_1", -1 / 3),
                                     ("para/paraphrase_2", -1 / 3), ("para/paraphrase_3", -1 / 3))
    assert stat.parts[1].weights == tuple((c, -w) for c, w in stat.parts[0].weights)
    assert stat.parts[0].description == ("mean drop from the original to the 3 new instructions, Para-Instructions, "
                                         "INSTRU-W-EXAM")
    # the same description as in-04's, word for word but for what is dropped and what "close" is called
    assert SPEC[ROBUST].statistic.description.replace(
        "over the 8 perturbations", "from the original to the 3 new instructions, Para-Instructions").replace(
        ": robust when", ": the performance kept when") == stat.description
    assert (SPEC[PARA].direction, SPEC[PARA].null) == (-1, 5.0)
    # one task: original 60, new instructions 63, 64, 65 (mean 64): the drop −4, |drop| 4 (the one-sided read −4)
    f = _para([60.0], [-4.0])
    assert stat.point(f, "task") == pytest.approx(4.0) and stat.parts[0].point(f, "task") == pytest.approx(-4.0)


def test_a_small_paraphrase_drop_either_way_keeps_the_performance_by_hand():
    # 10 tasks, drops −3, −1 alternating (the new instructions raise the scores by 2 on average): |drop| 2,
    # interval [2 − h, 2 + h] (h ≈ 0.89, the drop's Student t at 97.5 % over the 10 tasks), below 5
    drops = [-3.0, -1.0] * 5
    h = _half(drops)
    r = _para_row([60.0] * 10, drops)
    assert (r["effect"], r["ci_low"], r["ci_high"]) == (pytest.approx(2.0), pytest.approx(2 - h), pytest.approx(2 + h))
    assert r["verdict"] == "reproduced" and "each of 2 parts at 97.50% (Bonferroni), the max" in r["interval"]


def test_paraphrases_that_raise_the_scores_by_ten_points_do_not_keep_the_performance():
    # the new instructions raise every task by 9 or 11: drop −10, |drop|'s interval [10 − h, 10 + h] above 5:
    # contradicted, where the one-sided reading (drop below 5) read the same rise as kept
    drops = [-11.0, -9.0] * 5
    h = _half(drops)
    r = _para_row([60.0] * 10, drops)
    assert (r["effect"], r["ci_low"], r["ci_high"]) == (pytest.approx(10.0), pytest.approx(10 - h),
                                                        pytest.approx(10 + h))
    assert r["verdict"] == "contradicted"
    assert SPEC[PARA].statistic.parts[0].exact(_para([60.0] * 10, drops), "task", 0.95)[0][1] < 5
    # a drop of 10 (lowered by 9 or 11): contradicted the same way
    assert _para_row([60.0] * 10, [11.0, 9.0] * 5)["verdict"] == "contradicted"


def test_a_paraphrase_drop_whose_interval_crosses_minus_five_is_inconclusive():
    # drops −8, 0 alternating: mean −4, h ≈ 3.58: the drop's interval [−7.6, −0.4], |drop|'s [0.4, 7.6] holds 5
    drops = [-8.0, 0.0] * 5
    h = _half(drops)
    r = _para_row([60.0] * 10, drops)
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(4 - h), pytest.approx(4 + h))
    assert r["verdict"] == "inconclusive"


def test_the_paraphrase_floor_is_read_per_task_too():
    checks = {p.name: p for p in SPEC[PARA].preconditions}
    assert {n: p.bias for n, p in checks.items()} == {
        "floor in para/original": "toward the claim", "ceiling in para/original": "toward the claim",
        "floor in the new instructions": "toward the claim", "ceiling in the new instructions": "toward the claim"}
    assert checks["floor in the new instructions"].text == (
        "the mean over tasks lies above 5 and at most half the tasks score 0 in each cell of the new instructions "
        "(a task at 0 can only 'drop' by zero or less)")
    # para/original: mean 20 (4 tasks, 3 at 0): fails per task; 2 of 4 at 0 (half): met
    head = "mean over tasks above 5 and at most 50% of the tasks at 0: "
    assert checks["floor in para/original"].check(table({"para/original": [0.0, 0.0, 0.0, 80.0]})) == (
        False, head + "para/original 20.0, 3/4 tasks at 0 ✗")
    assert checks["floor in para/original"].check(table({"para/original": [0.0, 0.0, 30.0, 40.0]}))[0]
    # the new instructions: each cell on its own; paraphrase_2 has 2 of 3 tasks at 0 (mean 10, above 5): fails
    f = table({"para/paraphrase_1": [10.0, 20.0, 30.0], "para/paraphrase_2": [0.0, 0.0, 30.0],
               "para/paraphrase_3": [0.0, 20.0, 30.0]})
    assert checks["floor in the new instructions"].check(f) == (
        False, head + "para/paraphrase_1 20.0, 0/3 tasks at 0, para/paraphrase_2 10.0, 2/3 tasks at 0 ✗, "
                      "para/paraphrase_3 16.7, 1/3 tasks at 0")
    assert checks["ceiling in para/original"].check(table({"para/original": [0.0, 0.0, 0.0, 80.0]}))[0]


def test_tasks_at_0_in_most_para_cells_leave_a_kept_row_not_applicable():
    # 12 tasks: 7 at 0 in every cell (drop 0), 5 at 60 whose new instructions score 59, 61, 59, 61, 60 (drops 1,
    # −1, 1, −1, 0): |drop|'s interval within ±0.5, reproduced alone; para/original's mean 25 passes the mean
    # floor, its 7 of 12 tasks at 0 fail it per task (and the new instructions' likewise)
    r = _para_row([0.0] * 7 + [60.0] * 5, [0.0] * 7 + [1.0, -1.0, 1.0, -1.0, 0.0], spread=0.0)
    assert r["ci_high"] < 5 and (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "floor in para/original (toward the claim)" in r["reason"]
    assert "floor in the new instructions (toward the claim)" in r["reason"]
    assert "para/original 25.0, 7/12 tasks at 0 ✗" in r["precondition_note"]


def test_the_paper_passes_its_own_paraphrase_row_under_the_two_sided_statistic():
    # Table 7, T5-3B, per category original − rephrased: 2.2 −0.1 1.7 5.4 1.3 −7.9 0.5 0.7 0.9 1.2 2.0 −0.3
    # (TE: −7.9, a rise beyond 5 in one category): mean 7.6 / 12 = 0.633, |0.633| below 5: reproduced
    paper = [read_paper(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES]
    effects, texts = paper_effects(C.CLAIMS, *paper)
    assert effects[PARA] == pytest.approx(7.6 / 12) and texts[PARA] == "0.6 (T5-3B, Table 7)"
    rows = {r["row_id"]: r for r in C.measure(table({}), ["m"], C.PARA_CONDITIONS, paper, n_boot=10)}
    assert (rows["in-07-m"]["paper_effect"], rows["in-07-m"]["paper_verdict"]) == (pytest.approx(7.6 / 12),
                                                                                  "reproduced")


def test_the_paraphrase_row_notes_its_signed_mean_drop():
    # 10 tasks: original 60, new instructions 63, 64, 65 (mean 64): drop −4 -> |drop| 4, the note: they raise
    f = _para([60.0] * 10, [-4.0] * 10)
    paper = [read_paper(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES]
    rows = {r["row_id"]: r for r in C.measure(f, ["m"], ["original", SW], paper, n_boot=50)}
    assert rows["in-07-m"]["effect"] == pytest.approx(4.0)
    assert rows["in-07-m"]["note"] == "signed mean drop -4: the new instructions raise the scores on average"
    assert rows["in-04-m"]["note"] == ""  # not measured: the run has no English cells
    # no drop at all: neither lowered nor raised
    same = _para([60.0] * 10, [0.0] * 10)
    row = {"claim": PARA, "measured": True, "model": "m", "note": "n"}
    assert R.with_signed_drop(row, SPEC[PARA], same, "the new instructions")["note"] == (
        "n; signed mean drop 0: the new instructions leave the scores unchanged on average")
