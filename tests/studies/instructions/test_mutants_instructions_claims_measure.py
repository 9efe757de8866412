"""instructions claims machinery (claims_measure.py): scores per instance and task, the cluster-bootstrap
contrasts and their intersection–union bounds, the floor, a collapsed interval, two task sets, cut generations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.report.claims import Measurement
from wobble.studies.instructions import claims_measure as M

from test_instructions_claims import rec, runs_from  # noqa: E402

WO, W = "wo_exam", "w_exam"


def test_the_interval_texts_and_setting_labels():
    assert M.CLUSTER == "cluster bootstrap over tasks (a task's instances resampled together)"
    assert M.EVERY == ("cluster bootstrap over tasks (a task's instances resampled together); intersection–union: "
                       "the smallest of the contrasts' bounds")
    assert M.TWO_SAMPLE == "bootstrap over tasks, the two task sets resampled separately"
    assert M.SETTING_SHORT == {WO: "WO", W: "W"} and M.SETTING_LABELS == {WO: "INSTRU-WO-EXAM", W: "INSTRU-W-EXAM"}


def test_an_instance_is_scored_with_its_language():
    # ROUGE-L of a non-English prediction tokenizes its script; with no language it is read as English
    r = {"output": "東京 大阪", "references": ["東京 大阪"], "metric": "rougeL", "language": "Japanese"}
    assert M.instance_score(r) == 100.0
    assert M.instance_score({k: v for k, v in r.items() if k != "language"}) == 0.0


def test_seed_means_task_means_and_the_instances_lacking_a_column():
    runs = {("original", WO): [rec(0, True, seed=1), rec(0, False, seed=2), rec(1, True), rec(2, False), rec(3, True)],
            ("shuffle_words", WO): [rec(0, False), rec(1, True), rec(2, True), rec(5, True)]}
    assert M.seed_mean_scores(runs[("original", WO)], M.instance_key) == {
        ("t0", "t0-0"): 50.0, ("t0", "t0-1"): 100.0, ("t1", "t1-2"): 0.0, ("t1", "t1-3"): 100.0}
    table = M.score_table(runs, [("original", WO), ("shuffle_words", WO)])
    # instances 0, 1, 2 have both columns; 3 (original only) and 5 (shuffle words only) are left out
    assert table.matrix.tolist() == [[50.0, 0.0], [100.0, 100.0], [0.0, 100.0]]
    assert table.tasks == ("t0", "t0", "t1") and table.dropped == 2
    assert table.task_means(("original", WO)) == {"t0": 75.0, "t1": 0.0}
    assert table.task_means(("shuffle_words", WO)) == {"t0": 50.0, "t1": 100.0}


def test_a_contrast_is_one_value_unless_it_compares_every_condition():
    c = M.Contrast((("a", W),), lambda m: [m[("a", W)], 1.0])
    assert not c.every and c.point({("a", W): 5.0}) == 5.0
    assert M.Contrast(c.columns, c.fn, every=True).point({("a", W): 5.0}) == 1.0


def _table():
    # 4 tasks of one instance; columns x, y, z
    return M.ScoreTable(np.array([[100.0, 0.0, 70.0], [0.0, 0.0, 30.0], [100.0, 0.0, 70.0], [0.0, 0.0, 30.0]]),
                        ("a", "b", "c", "d"), (("x", W), ("y", W), ("z", W)), 0)


def test_every_contrast_bounds_are_the_smallest_low_and_the_smallest_high_of_its_contrasts():
    table = _table()
    wide = M.Contrast(table.columns, lambda m: m[("x", W)] - m[("y", W)])  # 100 or 0 per task: 50 in [0, 100]
    steady = M.Contrast(table.columns, lambda m: m[("x", W)] - m[("z", W)] + 50)  # 80 or 20 per task: 50 in [20, 80]
    both = M.Contrast(table.columns, lambda m: [wide.fn(m), steady.fn(m)], every=True)
    p1, lo1, hi1 = M.contrast_interval(table, wide, n_boot=200, seed=4)
    p2, lo2, hi2 = M.contrast_interval(table, steady, n_boot=200, seed=4)
    assert (p1, p2) == (pytest.approx(50.0), pytest.approx(50.0))
    assert lo1 < lo2 and hi2 < hi1  # the smallest low bound is one contrast's, the smallest high the other's
    assert M.contrast_interval(table, both, n_boot=200, seed=4) == (pytest.approx(50.0), lo1, hi2)
    # no resamples: the point, and no interval
    point, lo, hi = M.contrast_interval(table, wide, n_boot=0, seed=4)
    assert point == pytest.approx(50.0) and math.isnan(lo) and math.isnan(hi)


def test_off_the_floor_needs_half_the_tasks_above_zero():
    assert M.off_floor({"a": 5.0}) == (1, 1, True)
    assert M.off_floor({"a": 0.5}) == (1, 1, True)
    assert M.off_floor({"a": 0.0}) == (0, 1, False)
    assert M.off_floor({"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.0}) == (3, 4, True)
    assert M.floor_note([("x", {"a": 1.0}), ("y", {"a": 0.0, "b": 0.0})]) == (
        False, "x: above 0 on 1 of 1 tasks; y: above 0 on 0 of 2 tasks")
    assert M.floor_note([]) == (True, "")


def test_an_interval_collapses_only_when_both_bounds_are_equal_numbers():
    assert M._collapsed(5.0, 5.0) and M._collapsed(-2.0, -2.0 + 1e-12)
    assert not M._collapsed(0.0, 1e-9) and not M._collapsed(0.0, 0.5)
    assert not M._collapsed(None, None) and not M._collapsed(None, 1.0) and not M._collapsed(1.0, None)
    assert not M._collapsed(float("nan"), float("nan"))


def test_a_measurement_carries_every_field():
    kw = {"interval": "how", "population": 9, "floor": (False, "floor note"), "note": "n", "diagnostics": "d"}
    assert M.measurement(1.5, 0.5, 2.5, 4, **kw) == Measurement(
        1.5, 0.5, 2.5, 4, degenerate=False, note="n", applicable=False, precondition_note="floor note",
        interval="how", population=9, diagnostics="d")
    # one task with spread in the interval is a measurement like any other
    assert not M.measurement(1.5, 0.5, 2.5, 1, **kw).degenerate
    collapsed = M.measurement(12.5, 12.5, 12.5, 4, **kw)
    assert collapsed == Measurement(
        12.5, None, None, 4, degenerate=True, applicable=False, precondition_note="floor note", interval="how",
        population=9, diagnostics="d",
        note="no spread over tasks: every resample gives 12.5, and an interval [12.5, 12.5] would claim a certainty "
             "the sample does not give; n")
    # no task: no effect, degenerate, the note and bounds as given
    assert M.measurement(3.0, 1.0, 1.0, 0, **kw) == Measurement(
        None, 1.0, 1.0, 0, degenerate=True, note="n", applicable=False, precondition_note="floor note",
        interval="how", population=9, diagnostics="d")


def test_a_contrast_whose_instances_share_no_condition_is_degenerate_with_no_effect():
    runs = {("original", W): [rec(0, True)], ("shuffle_words", W): [rec(1, True)]}
    contrast = M.Contrast(tuple(runs), lambda m: m[("original", W)] - m[("shuffle_words", W)])
    m = M.measure_contrast(runs, contrast, population=23, n_boot=20, seed=0, cap=None)
    assert m == Measurement(None, None, None, 0, degenerate=True, note="no instance has every condition",
                            applicable=False, precondition_note="original, INSTRU-W-EXAM: above 0 on 0 of 0 tasks",
                            interval=M.CLUSTER, population=23,
                            diagnostics="cut generations unknown (the predictions carry no finish_reason)")


def test_a_contrasts_note_counts_instances_tasks_and_those_lacking_a_condition():
    runs = runs_from({("original", WO): 20, ("shuffle_words", WO): 10}, n=20)
    runs[("shuffle_words", WO)] = runs[("shuffle_words", WO)][:18]  # instances 18, 19 (task t9) not run
    contrast = M.Contrast(tuple(runs), lambda m: m[("original", WO)] - m[("shuffle_words", WO)])
    m = M.measure_contrast(runs, contrast, population=119, n_boot=50, seed=0, cap=8, where="English ")
    # drop on t5-t8 (instances 10-17): 100 of 8 tasks' 18 instances -> 8 / 18
    assert m.effect == pytest.approx(100 * 8 / 18) and m.n_items == 9 and m.population == 119
    assert m.note == "18 instance(s) of 9 task(s) (2 lacking a condition left out)"
    assert m.precondition_note == "English original, INSTRU-WO-EXAM: above 0 on 9 of 9 tasks"
    assert m.interval == M.CLUSTER and not m.degenerate and m.applicable


def test_two_task_sets_measure_over_the_smaller_and_none_when_one_is_empty():
    kw = {"floor": (True, "f"), "population": 23, "n_boot": 100, "seed": 0, "note": "n", "diagnostics": ""}
    m = M.measure_two_sample({"x": 10.0, "y": 30.0}, {"p": 0.0, "q": 20.0, "r": 10.0}, M.mean_gap, **kw)
    assert m.effect == pytest.approx(10.0) and m.n_items == 2 and m.interval == M.TWO_SAMPLE
    one = M.measure_two_sample({"x": 10.0}, {"p": 0.0, "q": 20.0}, M.mean_gap, **kw)
    assert one.n_items == 1 and one.effect == pytest.approx(0.0) and not one.degenerate
    empty = M.measure_two_sample({}, {"p": 0.0}, M.mean_gap, **kw)
    assert empty.effect is None and empty.n_items == 0 and empty.degenerate


def test_task_values_spread_over_versions_leaves_out_tasks_with_one_and_means_keep_them():
    scores = {("a", 0): 100.0, ("a", 1): 0.0, ("b", 0): 50.0, ("c", 1): 20.0, ("c", 0): 40.0, ("c", 2): 60.0}
    assert M.task_values(scores, spread=True) == {"a": 50.0, "c": pytest.approx(float(np.std([20, 40, 60])))}
    assert M.task_values(scores, spread=False) == {"a": 50.0, "b": 50.0, "c": 40.0}


def test_version_scores_pool_a_tasks_instances_and_seeds_per_version():
    runs = {"original": [rec(0, True, task="a"), rec(1, False, task="a"), rec(2, True, task="b", seed=1),
                         rec(2, False, task="b", seed=2), rec(3, True, task="b")],
            "paraphrase_1": [rec(0, False, task="a")]}
    # a: instances 100 and 0 -> 50; b: instance 2 over two seeds 50, instance 3 100 -> 75
    assert M.version_scores(runs, ["original", "paraphrase_1", "paraphrase_2"]) == {
        ("a", "original"): 50.0, ("b", "original"): 75.0, ("a", "paraphrase_1"): 0.0}
    records = [rec(0, True, task="x", prompt_index=0), rec(1, False, task="x", prompt_index=0),
               rec(0, True, task="x", prompt_index=2)]
    assert M.prompt_scores(records) == {("x", 0): 50.0, ("x", 2): 100.0}


def test_cut_generations_count_only_records_that_say_why_they_stopped():
    runs = {("original", W): [rec(0, True, finish_reason="length"), rec(1, True)],
            ("x", "other"): [rec(0, True, finish_reason="length"), rec(1, True, finish_reason="stop")],
            ("diverse_prompt", ""): [rec(0, True, finish_reason="stop")]}
    assert M.cut_text(runs, list(runs), None) == (
        "generations cut at max_new_tokens: 2 of 4 (50%); per condition: original/W 1/1, x/other 1/2; "
        "none in the others")
    assert M.cut_text(runs, [("diverse_prompt", "")], 64) == (
        "generations cut at the 64-token cap: 0 of 1 (0%); none in any condition")
    assert M._label(("diverse_prompt", "")) == "diverse_prompt" and M._label(("original", WO)) == "original/WO"


def test_every_generation_cut_is_one_hundred_percent():
    runs = {("original", W): [rec(0, True, finish_reason="length"), rec(1, True, finish_reason="length")]}
    assert M.cut_text(runs, list(runs), 16) == (
        "generations cut at the 16-token cap: 2 of 2 (100%); per condition: original/W 2/2; none in the others")
