"""The instructions claims machinery (claims_measure.py) on hand-made predictions and unit tables (EM: 100 when
output == reference): instance scores and the unit frame with its gate columns, cell names, a task's value in a
cell over its versions, instances and seeds, the statistics' edge cases (a task lacking a cell, a task with one
version, an arm no resampled task has), and the floor and ceiling checks' figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from wobble.report.engine import UnitTable, check_table
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions.claims_measure import COLUMNS

from instructions_claims_tables import SPEC, W, WO, english_fixture, rec, rows, table


# ------------------------------------------------------------------------------------------ scores and rows


def test_instance_score_uses_the_category_metric():
    assert C.instance_score(rec(0, True)) == 100.0
    r = {"output": "the cat sat", "references": ["the cat"], "metric": "rougeL", "language": "English"}
    assert C.instance_score(r) == pytest.approx(100 * 0.8)  # LCS 2, P 2/3, R 1 -> F 0.8


def test_score_matrix_pairs_instances_and_averages_seeds():
    runs = {("original", "wo_exam"): [rec(0, True, seed=1), rec(0, False, seed=2), rec(1, True)],
            ("shuffle_words", "wo_exam"): [rec(0, False)]}
    m, dropped = C.score_matrix(runs, [("original", "wo_exam"), ("shuffle_words", "wo_exam")])
    assert m.tolist() == [[50.0, 0.0]] and dropped == 1


def test_the_unit_frame_has_a_row_per_generation_with_its_gate_columns():
    rouge = {"metric": "rougeL", "references": ["a b"]}
    runs = {("original", "wo_exam"): [rec(0, True), rec(0, False, seed=2, finish_reason="length"),
                                      rec(1, True, **rouge, finish_reason="length", output="a b c")],
            ("shuffle_words", "w_exam"): [rec(2, True, finish_reason=None, output="  ")]}
    f = M.unit_frame(runs, "m", "english")
    assert list(f.columns) == COLUMNS and list(f["cell"]) == ["original/WO"] * 3 + ["shuffle_words/W"]
    assert list(f["task"]) == ["t0", "t0", "t0", "t1"] and list(f["seed"]) == [1, 2, 1, 1]
    # EM 100, 0; ROUGE-L of "a b c" against "a b": P 2/3, R 1 -> 80; "  " is not "yes" -> 0
    assert f["score"].tolist() == pytest.approx([100, 0, 80, 0])
    # cut: read on ROUGE-L answers only (an EM answer at the cap is wrong either way): NaN for the EM ones
    assert np.isnan(f["truncated"].iloc[[0, 1, 3]]).all() and f["truncated"].iloc[2] == 1.0
    assert f["rouge_l"].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert f["answered"].tolist() == [1.0, 1.0, 1.0, 0.0]
    diverse = M.unit_frame({("diverse_prompt", "wo_exam"): [rec(0, True, task="x", prompt_index=3)]}, "m", "diverse")
    assert (diverse["cell"].iloc[0], diverse["version"].iloc[0]) == ("diverse", "3")
    para = M.unit_frame({("paraphrase_2", "w_exam"): [rec(0, True, task="x")]}, "m", "para")
    assert (para["cell"].iloc[0], para["version"].iloc[0]) == ("para/paraphrase_2", "paraphrase_2")


def test_the_table_is_over_tasks_and_a_finer_unit_is_refused():
    f = M.unit_frame(english_fixture(), "m", "english")
    spec = SPEC["random_instruction_with_examples_beats_correct_without"]
    assert check_table(spec, UnitTable(f, "task")) is f
    with pytest.raises(ValueError, match="finer unit"):  # instances nest in tasks
        check_table(spec, UnitTable(f, "instance"))
    with pytest.raises(ValueError, match="repeated observations"):
        check_table(spec, UnitTable(pd.concat([f, f.iloc[:1]]), "task"))


def test_cell_names_and_setting_labels():
    assert M.SETTING_SHORT == {WO: "WO", W: "W"} and (M.FLOOR, M.CEILING) == (5.0, 95.0)
    assert M.cell_name("english", "shuffle_words", WO) == "shuffle_words/WO"
    assert M.cell_name("xlingual", "original", W) == "original/W"
    assert M.cell_name("para", "paraphrase_1", W) == "para/paraphrase_1"
    assert M.cell_name("diverse", "diverse_prompt", WO) == "diverse"


def test_an_instance_is_scored_with_its_language():
    r = {"output": "東京 大阪", "references": ["東京 大阪"], "metric": "rougeL", "language": "Japanese"}
    assert M.instance_score(r) == 100.0
    assert M.instance_score({k: v for k, v in r.items() if k != "language"}) == 0.0


def test_seed_means_and_the_instances_lacking_a_column():
    runs = {("original", WO): [rec(0, True, seed=1), rec(0, False, seed=2), rec(1, True), rec(2, False), rec(3, True)],
            ("shuffle_words", WO): [rec(0, False), rec(1, True), rec(2, True), rec(5, True)]}
    assert M.seed_mean_scores(runs[("original", WO)], lambda r: (r["task"], r["instance_id"])) == {
        ("t0", "t0-0"): 50.0, ("t0", "t0-1"): 100.0, ("t1", "t1-2"): 0.0, ("t1", "t1-3"): 100.0}
    matrix, dropped = M.score_matrix(runs, [("original", WO), ("shuffle_words", WO)])
    assert matrix.tolist() == [[50.0, 0.0], [100.0, 100.0], [0.0, 100.0]] and dropped == 2


def test_a_tasks_value_in_a_cell_is_the_mean_over_versions_instances_and_seeds_in_turn():
    f = rows([("x", "diverse", "0", "e1", 1, 100.0), ("x", "diverse", "0", "e1", 2, 0.0),  # e1: 50 over seeds
              ("x", "diverse", "0", "e2", 1, 100.0),                                         # prompt 0: (50 + 100) / 2
              ("x", "diverse", "1", "e1", 1, 20.0),                                          # prompt 1: 20
              ("y", "diverse", "0", "e1", 1, 60.0), ("y", "other", "0", "e1", 1, 5.0)])
    v = M.version_values(f, "task", ["diverse"])
    assert v[("x", "diverse", "0")] == 75.0 and v[("x", "diverse", "1")] == 20.0 and len(v) == 3
    cv = M.cell_values(f, "task", ["diverse", "other", "absent"])
    assert list(cv.index) == ["x", "y"] and cv.loc["x", "diverse"] == pytest.approx((75 + 20) / 2)
    assert cv.loc["y", "other"] == 5.0 and math.isnan(cv.loc["x", "other"]) and cv["absent"].isna().all()


def test_a_task_lacking_a_weighted_cell_is_left_out_and_a_zero_weight_cell_is_only_read():
    stat = M.Linear((("o", 0.0), ("a", 1.0), ("b", -1.0)))
    f = table({"a": [30.0, 20.0, 10.0], "b": [10.0, 20.0, 0.0]})
    f = f[~((f["task"] == "t2") & (f["cell"] == "b"))]  # t2 lacks b
    assert stat.cells == ("o", "a", "b") and stat.columns == ("score",)
    assert stat.values(f, "task").tolist()[:2] == [20.0, 0.0] and math.isnan(stat.values(f, "task")[2])
    assert stat.point(f, "task") == 10.0
    assert math.isnan(stat.point(f[f["cell"] == "a"], "task"))  # no task has both: undefined
    # a resample of t2 alone has no contrast: NaN (the percentile interval leaves it out)
    reps = stat.replicates(f, "task", np.array([[2, 2, 2], [0, 1, 0]]))
    assert math.isnan(reps[0]) and reps[1] == pytest.approx(40 / 3)


def test_the_smallest_of_one_contrast_is_that_contrast_at_the_95_percent_level():
    part = M.Linear((("a", 1.0), ("b", -1.0)))
    f = table({"a": [30.0, 20.0, 10.0, 25.0], "b": [10.0, 20.0, 0.0, 5.0]})
    one = M.Smallest((part,))
    assert one.cells == ("a", "b") and one.point(f, "task") == part.point(f, "task") == 12.5
    assert one.exact(f, "task", 0.95)[0] == pytest.approx(part.exact(f, "task", 0.95)[0])
    assert "k = 1" in one.exact(f, "task", 0.95)[1]


def test_a_spread_leaves_out_a_task_with_one_version():
    stat = M.TwoSets(("d",), ("p1", "p2"), spread=True)
    f = pd.concat([rows([("x", "d", "0", "e", 1, 100.0), ("x", "d", "1", "e", 1, 0.0), ("z", "d", "0", "e", 1, 40.0)]),
                   table({"p1": [10.0, 50.0], "p2": [30.0, 50.0]}, prefix="p")], ignore_index=True)
    a, b = stat.arm(f, "task", stat.a), stat.arm(f, "task", stat.b)
    # units in order x, z, p0, p1; std with n − 1: x (100, 0) 70.71, z one prompt (left out); p0 (10, 30) 14.14,
    # p1 0
    assert a[0] == pytest.approx(50 * 2 ** 0.5) and np.isnan(a[1:]).all() and np.isnan(b[:2]).all()
    assert b[2:].tolist() == pytest.approx([10 * 2 ** 0.5, 0.0])
    assert stat.point(f, "task") == pytest.approx(50 * 2 ** 0.5 - 5 * 2 ** 0.5)
    assert stat.cells == ("d", "p1", "p2") and stat.decision_units(f, "task") == 1  # x alone on its side
    # each set resampled on its own: x always drawn on its side, so every replicate is 70.71 − (14.14 or 7.07 or 0)
    reps = stat.replicates(f, "task", np.array([[2, 3, 2, 3], [0, 0, 0, 0]]))
    assert set(np.round(reps, 6)) <= {round(50 * 2 ** 0.5 - d * 2 ** 0.5, 6) for d in (10, 5, 0)}
    # no DiversePrompt task with two prompts: no difference (NaN), not a warning
    assert np.isnan(stat.replicates(f[f["task"] != "x"], "task", np.array([[0, 1, 2]]))).all()


def test_the_smallest_contrast_takes_each_contrasts_percentile_bounds_on_the_bootstrap_route():
    from wobble.report.intervals import estimate
    from wobble.stats import bootstrap_indices

    # 40 tasks, two contrasts a − o (about 10) and b − o (about 3): the bootstrap route (>= 30 tasks)
    rng = np.random.default_rng(5)
    f = table({"o": [50.0] * 40, "a": list(60 + rng.normal(0, 8, 40)), "b": list(53 + rng.normal(0, 8, 40))})
    parts = (M.Linear((("a", 1.0), ("o", -1.0))), M.Linear((("b", 1.0), ("o", -1.0))))
    stat = M.Smallest(parts)
    est = estimate(f, "task", stat, n_boot=400, seed=2)
    assert est.method.startswith("cluster bootstrap over 40 tasks")
    draws = bootstrap_indices(40, 400, 2)
    ra, rb = (p.values(f, "task")[draws].mean(axis=1) for p in parts)
    # low: the smaller of the two 2.5 % percentiles; high: the smaller of the two 98.75 % (1 − 0.05 / 2, two-sided)
    lows = [np.percentile(r, 2.5) for r in (ra, rb)]
    highs = [np.percentile(r, 100 * (1 - 0.025 / 2)) for r in (ra, rb)]
    assert (est.low, est.high) == pytest.approx((min(lows), min(highs)))
    assert est.high > np.percentile(np.minimum(ra, rb), 97.5)  # wider than the min's own percentile
    assert est.point == pytest.approx(min(p.point(f, "task") for p in parts))


def test_a_cell_with_no_task_fails_its_check():
    floor, ceiling = M.arm_checks([M.Arm("x", ("a", "b"), -1)], -1)
    f = table({"a": [100.0, 100.0, 50.0]})  # a: mean 83.3; b: no task
    assert floor.check(f) == (False, "mean over tasks above 5: a 83.3, b nan ✗")
    assert ceiling.check(f) == (False, "mean over tasks below 95: a 83.3, b nan ✗")
    assert (floor.bias, ceiling.bias) == ("against the claim", "toward the claim")
    assert floor.name == "floor in x" and ceiling.text == "the mean over tasks lies below 95 in each of x's cells"
    control = M.off_floor("control", "text", ("a",), "toward the claim")
    assert (control.name, control.bias, control.check(f)) == (
        "control", "toward the claim", (True, "mean over tasks above 5: a 83.3"))


def test_instances_per_version_and_their_check():
    f = rows([("x", "d", "0", "e1", 1, 1.0), ("x", "d", "0", "e2", 1, 1.0), ("x", "d", "0", "e2", 2, 1.0),
              ("x", "d", "1", "e1", 1, 1.0), ("y", "p", "0", "e1", 1, 1.0)])
    # x/d/0 rests on 2 instances (seeds do not count), x/d/1 on 1 -> 1.5; y/p/0 on 1
    assert M.instances_per_version(f, ["d"]) == 1.5 and M.instances_per_version(f, ["p"]) == 1.0
    assert math.isnan(M.instances_per_version(f, ["absent"]))
    more = M.no_fewer_instances("D", ("d",), "P", ("p",), "toward the claim")
    fewer = M.no_fewer_instances("P", ("p",), "D", ("d",), "against the claim")
    assert more.check(f) == (True, "instances per version: D 1.5, P 1")
    assert fewer.check(f) == (False, "instances per version: P 1, D 1.5 ✗")
    assert (fewer.name, fewer.bias) == ("instances per version in P", "against the claim")
    assert not more.check(f[f["cell"] == "d"])[0]  # one side absent: cannot hold


def test_the_base_of_contrasts_favours_neither_side_at_either_bound():
    assert [p.bias for p in M.arm_checks([M.Arm("o", ("o",), 0)], 1)] == ["toward the null"] * 2
    assert M.bound_bias(1, -1, 1) == "against the claim" and M.bound_bias(-1, 1, 1) == "against the claim"
