"""The instructions claims on the ledger's engine, on hand-made unit tables and predictions (EM: 100 when
output == reference). Numbers are worked out by hand in the comments: the statistics, the exact intervals over
tasks, the floor and ceiling checks on every arm with the side their failure favours, the paper passing its own
rows, and the wiring from prediction files to the ledger."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

from wobble.errors import DataError
from wobble.report.engine import UnitTable, check_table, measure_claim
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions.claims_measure import COLUMNS

REPO = Path(__file__).resolve().parents[3]
CONDS = ["original", *C.PERTURBATIONS]
SI, SW = "shuffle_instructions", "shuffle_words"
ORDER = {c.id: i for i, c in enumerate(C.CLAIMS, 1)}
SPEC = {c.id: c for c in C.CLAIMS}


def rec(i, correct, task=None, seed=1, **extra):
    task = task or f"t{i // 2}"
    return {"task": task, "instance_id": f"{task}-{i}", "output": "yes" if correct else "no", "references": ["yes"],
            "metric": "exact_match", "language": "English", "seed": seed, "finish_reason": "stop", **extra}


def runs_from(correct_by: dict, n=20):
    """``correct_by[(condition, setting)]``: the indices answered correctly, or k for the first k of n."""
    out = {}
    for col, ok in correct_by.items():
        ok = set(range(ok)) if isinstance(ok, int) else set(ok)
        out[col] = [rec(i, i in ok) for i in range(n)]
    return out


def english_fixture():
    # WO-EXAM: original right on 0..17 (tasks t0-t8), shuffle instructions on 0..1 (t0), every other
    # perturbation on 0..13 (t0-t6). W-EXAM: original and 7 perturbations on 0..17, shuffle instructions on 0..15.
    correct = {(c, "wo_exam"): 14 for c in C.PERTURBATIONS}
    correct.update({(c, "w_exam"): 18 for c in C.PERTURBATIONS})
    correct.update({("original", "wo_exam"): 18, ("original", "w_exam"): 18, ("shuffle_instructions", "wo_exam"): 2,
                    ("shuffle_instructions", "w_exam"): 16})
    return runs_from(correct)


def table(cells: dict[str, list[float]], model: str = "m", prefix: str = "t") -> pd.DataFrame:
    """Unit rows: task ``{prefix}{i}`` scores ``cells[cell][i]`` in each cell (one instance, one seed)."""
    rows = [(f"{prefix}{i}", model, c, c, "i0", 1, float(v), 1.0, 0.0, 1.0) for c, vs in cells.items()
            for i, v in enumerate(vs)]
    return pd.DataFrame(rows, columns=COLUMNS)


def row(claim_id: str, frame: pd.DataFrame, models=("m",), spec=None) -> dict:
    spec = spec or SPEC[claim_id]
    return measure_claim(spec, ORDER[claim_id], UnitTable(frame, "task"), list(models), n_boot=200)[0]


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


# ------------------------------------------------------------------------------------------ the statistics


def test_a_linear_contrast_and_its_exact_interval_over_tasks():
    # C6: score(SI, W) − score(original, WO) per task: 40−10, 20−20, 30−0, 10−10 = 30, 0, 30, 0 -> mean 15
    stat = SPEC["random_instruction_with_examples_beats_correct_without"].statistic
    f = table({"shuffle_instructions/W": [40, 20, 30, 10], "original/WO": [10, 20, 0, 10]})
    assert stat.values(f, "task").tolist() == [30, 0, 30, 0] and stat.point(f, "task") == 15
    sd = np.std([30, 0, 30, 0], ddof=1)  # 17.32
    (lo, hi), how = stat.exact(f, "task", 0.95)
    assert (lo, hi) == pytest.approx((15 - student.ppf(0.975, 3) * sd / 2, 15 + student.ppf(0.975, 3) * sd / 2))
    assert how == "Student t over tasks"
    draws = np.array([[0, 0, 0, 0], [1, 3, 1, 0]])  # resampled tasks: 30 x 4; 0, 0, 0, 30
    assert stat.replicates(f, "task", draws).tolist() == [30.0, 7.5]


def test_the_smallest_contrast_takes_the_least_favourable_bounds():
    # C2 on two word-level others: contrast p = score(p) − score(SW) (the original cancels)
    stat = C.claims(["original", "delete_words", "insert_words", "shuffle_words"])[1].statistic
    f = table({"original/WO": [90, 90, 90, 90], "shuffle_words/WO": [0, 10, 0, 10],
               "delete_words/WO": [50, 60, 40, 50], "insert_words/WO": [10, 20, 30, 0]})
    a, b = np.array([50, 50, 40, 40]), np.array([10, 10, 30, -10])  # delete words 45, insert words 10
    assert stat.point(f, "task") == pytest.approx(10.0)
    (lo, hi), how = stat.exact(f, "task", 0.95)

    def t(x, level):
        half = student.ppf((1 + level) / 2, 3) * np.std(x, ddof=1) / 2
        return x.mean() - half, x.mean() + half

    # low: the smaller of the two 95 % lows; high: the smaller of the two Bonferroni (97.5 %) highs
    assert lo == pytest.approx(min(t(a, 0.95)[0], t(b, 0.95)[0])) == pytest.approx(t(b, 0.95)[0])
    assert hi == pytest.approx(min(t(a, 0.975)[1], t(b, 0.975)[1])) and hi > t(b, 0.95)[1]
    assert "Bonferroni" in how and "k = 2" in how
    draws = np.array([[0, 1, 2, 3], [3, 3, 3, 3]])  # the second: every contrast's value of task 3, 40 and −10
    assert stat.replicates(f, "task", draws).tolist() == pytest.approx([10.0, -10.0])


def test_two_task_sets_their_means_and_spreads():
    # DiversePrompt x: prompts 100, 0 (mean 50, std with n − 1: 70.71); y: 100, 100 (mean 100, std 0)
    dp = pd.DataFrame([(t, "m", "diverse", v, "e", 1, x, 1.0, 0.0, 1.0)
                       for t, v, x in (("x", "0", 100.0), ("x", "1", 0.0), ("y", "0", 100.0), ("y", "1", 100.0))],
                      columns=COLUMNS)
    # Para a: original 80, new 80 70 90 (mean 80, std 10); b: original 80, new 60 60 60 (mean 65, std 0)
    para = table({"para/original": [80, 80], "para/paraphrase_1": [80, 60], "para/paraphrase_2": [70, 60],
                  "para/paraphrase_3": [90, 60]}, prefix="p")
    f = pd.concat([dp, para], ignore_index=True)
    spread, plm = SPEC["no_demonstrations_larger_spread"].statistic, SPEC["plm_prompts_work_poorly"].statistic
    assert spread.point(f, "task") == pytest.approx(np.sqrt(5000) / 2 - 10 / 2)  # 35.36 − 5
    assert plm.point(f, "task") == pytest.approx(75 - 72.5)
    (lo, hi), how = plm.exact(f, "task", 0.95)
    assert how == "Welch t over the two task sets" and lo < 2.5 < hi
    # the route is decided on the smaller set: 2 tasks each (a spread leaves out a task with one version)
    assert plm.decision_units(f, "task") == 2 == spread.decision_units(f, "task")
    assert plm.decision_units(f[f["task"] != "y"], "task") == 1


def test_two_task_sets_are_resampled_each_on_its_own():
    # 2 DiversePrompt tasks (50, 100) and 2 Para-Instructions tasks (80, 65): a resample of the 4 tasks together
    # draws no Para task in 1 of 16 resamples (no difference); each set resampled on its own always has both
    para = table({c: [80, 65] for c in C.PARA}, prefix="p")
    f = pd.concat([table({"diverse": [50, 100]}, prefix="d"), para], ignore_index=True)
    plm = SPEC["plm_prompts_work_poorly"].statistic
    draws = np.random.default_rng(0).integers(0, 4, size=(400, 4))
    reps = plm.replicates(f, "task", draws)
    assert np.isfinite(reps).all()
    assert set(np.round(reps, 6)) <= {round(a - b, 6) for a in (50, 75, 100) for b in (80, 72.5, 65)}
    # each set's resamples: its own tasks, from a seed derived from the draws (deterministic)
    ia, ib = M._stratum_draws(draws, 2, b"a"), M._stratum_draws(draws, 2, b"b")
    assert reps == pytest.approx(np.array([50, 100])[ia].mean(axis=1) - np.array([80, 65])[ib].mean(axis=1))
    assert (M._stratum_draws(draws, 2, b"a") == ia).all() and not (ia == ib).all()
    # the unstratified draws would leave a Para-less resample: rows with no index 2 or 3
    assert (~np.isin(draws, [2, 3])).all(axis=1).any()


# ------------------------------------------------------------------------------------------ floors and ceilings


@pytest.mark.parametrize("sign, pinned, direction, bias", [
    (-1, -1, 1, "toward the claim"),   # the arm the claim predicts low, at the floor
    (1, -1, 1, "against the claim"),   # the arm the claim predicts high, at the floor
    (1, 1, 1, "toward the claim"),     # ... at the ceiling
    (-1, -1, -1, "against the claim"),
    (1, -1, -1, "toward the claim"),   # DiversePrompt at the floor under "works poorly"
    (0, -1, 1, "toward the null"),
    (0, 1, -1, "toward the null"),
])
def test_a_bound_between_task_sets_favours_the_side_it_pins(sign, pinned, direction, bias):
    assert M.bound_bias(sign, pinned, direction) == bias


def test_every_claims_arms_cover_its_cells_on_the_side_its_weights_say():
    for cid, arms in C.claim_arms().items():
        spec = SPEC[cid]
        cells = [c for a in arms for c in a.cells]
        assert sorted(cells) == sorted(spec.cells), cid  # every cell in exactly one arm
        side = {c: a.sign for a in arms for c in a.cells}
        stat = spec.statistic
        if isinstance(stat, M.TwoSets):
            assert {side[c] for c in stat.a} == {1} and {side[c] for c in stat.b} == {-1}
            assert all(a.spread == stat.spread for a in arms)
        else:
            for part in getattr(stat, "parts", (stat,)):
                for c, w in part.weights:
                    assert side[c] == int(np.sign(round(w, 12))) or (w == 0 and side[c] == 0), (cid, c, w)
        names = [p.name for p in spec.preconditions][:2 * len(arms)]
        assert names == [f"premise: {a.label} off the floor" if a.premise and b == "floor" else f"{b} in {a.label}"
                         for a in arms for b in ("floor", "ceiling")]


def test_the_floor_and_ceiling_checks_read_each_cells_mean_over_tasks():
    floor, ceiling = C.arm_checks([M.Arm("x", ("a", "b", "c"), 1)], 1)
    # a: mean 27.5; b: 20 / 4 = 5.0, not above 5 (no room for a drop); c: 96, not below 95
    f = table({"a": [0, 0, 10, 100], "b": [0, 0, 0, 20], "c": [100, 100, 90, 94]})
    assert floor.check(f) == (False, "mean over tasks above 5: a 27.5, b 5.0 ✗, c 96.0")
    assert ceiling.check(f) == (False, "mean over tasks below 95: a 27.5, b 5.0, c 96.0 ✗")
    assert floor.check(table({"a": [0, 0, 0, 21], "b": [6], "c": [50]}))[0]  # 5.25 > 5: met
    # no bias declared (two task sets): from the arm's side
    assert (floor.bias, ceiling.bias) == ("against the claim", "toward the claim")
    assert floor.text == "the mean over tasks lies above 5 in each of x's cells"
    spread = C.arm_checks([M.Arm("x", ("a",), 1, spread=True)], 1)
    assert [p.bias for p in spread] == ["against the claim"] * 2  # either bound pins a spread low
    # the kind of contrast declares it: both bounds alike
    assert [p.bias for p in C.arm_checks([M.Arm("x", ("a",), 1, bias="toward the null")], 1)] == \
        ["toward the null"] * 2
    # a premise replaces the arm's floor check, of unknown bias
    premise, top = C.arm_checks([M.Arm("o", ("a",), 0, bias="toward the null", premise=True)], 1)
    assert (premise.name, premise.bias, top.name, top.bias) == (
        "premise: o off the floor", "unknown", "ceiling in o", "toward the null")
    assert premise.check(table({"a": [0, 0, 0, 20]})) == (False, "mean over tasks above 5: a 5.0 ✗")


SI_CONDS = ["original", "delete_words", SW, SI]


def _si_frame(original: list[float], si: list[float]) -> pd.DataFrame:
    n = len(original)
    return table({"original/WO": original, "delete_words/WO": [50.0 + i % 3 for i in range(n)],
                  "shuffle_words/WO": [45.0 + i % 4 for i in range(n)], "shuffle_instructions/WO": si})


def test_the_target_arm_at_the_floor_leaves_a_reproduced_row_decided():
    spec = C.claims(SI_CONDS)[0]
    # 12 tasks: shuffle instructions/WO at the floor (30 on one task: mean 2.5); delete words 50-52, shuffle words
    # 45-48: every contrast score(p) − score(SI) is about 47, far above 0. A bound on the same tasks can tie two
    # arms, never reverse them (toward the null), so it cannot have produced "reproduced"
    f = _si_frame([60.0] * 12, [30.0] + [0.0] * 11)
    r = row("shuffle_instructions_largest_drop", f, spec=spec)
    assert r["ci_low"] > 0 and r["verdict"] == "reproduced"
    assert r["reason"].startswith("reproduced despite floor in shuffle_instructions/WO")
    assert "floor in shuffle_instructions/WO: not met (mean over tasks above 5: shuffle_instructions/WO 2.5 ✗)" \
        in r["precondition_note"]
    # the sign-based bias of before (the arm the claim predicts low, at the floor: toward the claim) left it NA
    old = replace(spec, preconditions=tuple(replace(p, bias="toward the claim") if p.name.startswith("floor in shuffle")
                                            else p for p in spec.preconditions))
    assert row("shuffle_instructions_largest_drop", f, spec=old)["verdict"] == "not applicable"


def test_a_drop_claim_without_a_working_original_instruction_is_not_applicable():
    spec = C.claims(SI_CONDS)[0]
    # original/WO at the floor (mean 4): each other perturbation 4-5, SI 0; the contrasts (4-7 points) are decided
    # by the interval alone, but a drop presupposes a working instruction (§3.1): the premise, of unknown bias
    f = table({"original/WO": [4.0] * 12, "delete_words/WO": [4.0 + i % 2 for i in range(12)],
               "shuffle_words/WO": [4.0 + i % 3 for i in range(12)], "shuffle_instructions/WO": [0.0] * 12})
    r = row("shuffle_instructions_largest_drop", f, spec=spec)
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "premise: original/WO off the floor (unknown)" in r["reason"]
    for cid in ("shuffle_words_worst_word_level", "sentence_level_less_than_word_level",
                "demonstrations_minimize_perturbations"):
        assert [p.bias for p in SPEC[cid].preconditions if p.name == "premise: original/WO off the floor"] == \
            ["unknown"], cid
    for cid in ("examples_robust_all_perturbations", "random_instruction_with_examples_beats_correct_without"):
        assert not any(p.name.startswith("premise") for p in SPEC[cid].preconditions), cid


TRAINED = {"m": "superni_train"}


def _plm_frame(dp_scores: list[float], para_scores: list[float], control: list[float]) -> pd.DataFrame:
    dp = table({"diverse": dp_scores}, prefix="d")
    para = table({c: para_scores for c in C.PARA}, prefix="p")
    return pd.concat([dp, para, table({"original/WO": control}, prefix="e")], ignore_index=True)


def _plm(frame: pd.DataFrame, trained=TRAINED) -> dict:
    spec = C.claims(CONDS, trained)[8]
    tables = C.unit_tables(frame, [spec])
    return measure_claim(spec, 9, tables[spec.id], ["m"], n_boot=200)[0]


def test_plm_prompts_at_the_floor_are_not_read_as_working_poorly():
    para = [30.0 + (i % 3) for i in range(23)]
    working = [20.0] * 12  # English original/WO: human-written instructions without examples work (mean 20)
    # DiversePrompt 10 on 7 of 24 tasks (mean 2.9: the floor); Para-Instructions 30-32: −27.1, decided below 0 by
    # the interval alone, but the floor on the DiversePrompt side can produce it (toward the claim)
    r = _plm(_plm_frame([10.0] * 7 + [0.0] * 17, para, working))
    assert r["effect"] == pytest.approx(7 * 10 / 24 - 31.0 + 1 / 23) and r["would_be"] == "reproduced"
    assert r["verdict"] == "not applicable" and r["n_items"] == 47  # the control's tasks are not resampled
    assert r["reason"].startswith("not applicable — the interval alone would say reproduced; failed: floor in "
                                  "DiversePrompt (toward the claim)")
    # DiversePrompt off the floor: decided
    r = _plm(_plm_frame([10.0] * 24, para, working))
    assert (r["verdict"], r["effect"]) == ("reproduced", pytest.approx(10 - 31 + 1 / 23))
    # the control at the floor too (mean 2.5): without demonstrations every instruction is at the floor, so
    # "works poorly" is what a floor shows
    r = _plm(_plm_frame([10.0] * 24, para, [30.0] + [0.0] * 11))
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "control: original/WO off the floor (toward the claim)" in r["reason"]
    assert "control: original/WO off the floor: not met (mean over tasks above 5: original/WO 2.5 ✗)" \
        in r["precondition_note"]
    # a model not finetuned on SuperNI's human-oriented instructions: the claim does not speak to it
    r = _plm(_plm_frame([10.0] * 24, para, working), trained={"m": None})
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "trained on superni_train (unknown)" in r["reason"]
    assert "trained on superni_train: not met (finetune data: none declared ✗)" in r["precondition_note"]


def test_the_spread_claim_needs_as_many_instances_per_version_on_both_arms():
    # DiversePrompt: 12 tasks, 2 prompts of 1 instance (0, 60: std 42.4); Para-Instructions: 12 tasks, 3 new
    # instructions of 2 instances (50, 50, 60 and 40, 60, 50: std 5.77, 10)
    dp = pd.DataFrame([(f"d{t}", "m", "diverse", v, "e0", 1, x, 1.0, 0.0, 1.0) for t in range(12)
                       for v, x in (("0", 0.0 + t % 2), ("1", 60.0))], columns=COLUMNS)
    para = pd.DataFrame([(f"p{t}", "m", c, c, i, 1, x, 1.0, 0.0, 1.0) for t in range(12)
                         for c, xs in zip(C.PARA, ((50, 50), (50, 50), (40, 60), (70, 50))) for i, x in zip("ab", xs)],
                        columns=COLUMNS)
    f = pd.concat([dp, para], ignore_index=True)
    assert M.instances_per_version(f, ["diverse"]) == 1.0 and M.instances_per_version(f, C.PARA[1:]) == 2.0
    r = row("no_demonstrations_larger_spread", f)
    # a version mean over 1 instance varies more than one over 2: the spread favours DiversePrompt
    assert r["would_be"] == "reproduced" and r["verdict"] == "not applicable"
    assert "instances per version in DiversePrompt (toward the claim)" in r["reason"]
    assert "instances per version: DiversePrompt 1, the new instructions 2 ✗" in r["precondition_note"]
    pre = {p.name: p for p in SPEC["no_demonstrations_larger_spread"].preconditions}
    other = pre["instances per version in the new instructions"]
    assert other.bias == "against the claim" and other.check(f) == (
        True, "instances per version: the new instructions 2, DiversePrompt 1")


def _random_frame(si_w: list[float], original_wo: list[float]) -> pd.DataFrame:
    return table({"shuffle_instructions/W": si_w, "original/WO": original_wo})


def test_a_bound_on_a_paired_difference_cannot_explain_a_decided_row():
    # original/WO at the floor (8 on 20 of 33 tasks: mean 4.85); SI with examples 30-33: reproduced, and a bound on
    # the same tasks cannot reverse the two arms (toward the null): reproduced despite the floor
    original = [8.0] * 20 + [0.0] * 13
    si = [30.0 + (i % 4) for i in range(33)]
    r = row("random_instruction_with_examples_beats_correct_without", _random_frame(si, original))
    assert r["effect"] == pytest.approx((sum(si) - sum(original)) / 33) and r["ci_low"] > 0
    assert r["verdict"] == "reproduced" and r["reason"].startswith("reproduced despite floor in original/WO")
    assert "original/WO 4.8 ✗" in r["precondition_note"]
    # both at the floor and SI below: contradicted despite both floors
    r = row("random_instruction_with_examples_beats_correct_without", _random_frame([0.0] * 33, original))
    assert r["verdict"] == "contradicted" and r["ci_high"] < 0
    assert r["reason"].startswith("contradicted despite floor in shuffle_instructions/W, floor in original/WO")


def test_a_bound_on_a_close_claim_favours_it_and_on_demonstrations_follows_the_setting():
    bias = {c.id: {p.name: p.bias for p in c.preconditions} for c in C.CLAIMS}
    assert set(bias["examples_robust_all_perturbations"].values()) == {"toward the claim"}
    assert set(bias["paraphrase_keeps_performance"].values()) == {"toward the claim"}
    # W-EXAM drops at most 1 point, original/W at the ceiling (96-98): "robust" is what a ceiling shows
    conds = ["original", SW, SI]
    spec = C.claims(conds)[3]
    f = table({"original/W": [96.0 + i % 3 for i in range(12)], "shuffle_words/W": [95.0 + i % 3 for i in range(12)],
               "shuffle_instructions/W": [96.0 + i % 2 for i in range(12)]})
    r = row("examples_robust_all_perturbations", f, spec=spec)
    assert r["ci_high"] < 5 and (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "ceiling in original/W (toward the claim)" in r["reason"]


def test_gates_are_read_in_every_cell():
    f = _random_frame([30.0 + i % 5 for i in range(20)], [10.0 + i % 3 for i in range(20)])
    f.loc[(f["cell"] == "original/WO") & (f["task"].isin([f"t{i}" for i in range(3)])), "truncated"] = 1.0
    r = row("random_instruction_with_examples_beats_correct_without", f)
    # 3 of 20 original/WO answers cut: 0.15 > 0.1, a gate of unknown bias: gated
    assert r["gate_figures"] == ("shuffle_instructions/W: degenerate 1.00, truncated 0.00; original/WO: degenerate "
                                 "1.00, truncated 0.15 ✗")
    assert r["verdict"] == "inconclusive" and r["reason"].startswith("gated — the interval alone would say reproduced")
    f["truncated"] = 0.0
    assert row("random_instruction_with_examples_beats_correct_without", f)["verdict"] == "reproduced"


def test_the_cut_gate_reads_rouge_l_answers_only():
    gate = C.GATES[1]
    # 4 answers: 2 EM (NaN: not read), 2 ROUGE-L of which 1 cut -> 1 / 2
    cell = pd.DataFrame({"truncated": [np.nan, np.nan, 1.0, 0.0], "rouge_l": [0.0, 0.0, 1.0, 1.0]})
    assert gate.figure(cell) == 0.5 and not gate.passes(gate.figure(cell))
    # only EM answers: nothing to cut (passes); ROUGE-L answers whose stop was not recorded: cannot pass
    assert gate.figure(cell.iloc[:2]) == 0.0 and gate.passes(0.0)
    unknown = pd.DataFrame({"truncated": [np.nan, np.nan], "rouge_l": [1.0, 1.0]})
    assert np.isnan(gate.figure(unknown)) and not gate.passes(gate.figure(unknown))
    assert gate.describe() == ("truncated: share of a cell's ROUGE-L answers cut at the token cap at most 0.1 "
                               "(failure biases unknown)")
    # on the unit frame: an EM answer at the cap is not counted, a ROUGE-L one is
    em_cut = [rec(0, False, finish_reason="length"), rec(1, True)]
    rouge = [rec(2, True, metric="rougeL", references=["a"], output="a", finish_reason=x) for x in ("stop", "stop")]
    f = M.unit_frame({("original", "wo_exam"): em_cut + rouge}, "m", "english")
    assert gate.figure(f) == 0.0


# ------------------------------------------------------------------------------------------ the claims on predictions


def test_english_claims_by_hand_on_ten_tasks():
    f = M.unit_frame(english_fixture(), "m", "english")
    rows = {r["claim"]: r for r in C.measure(f, ["m"], CONDS, _paper(), n_boot=200)}
    # SI: per task, drop(SI) − drop(p) = score(p) − score(SI): t1..t6 100 − 0, the rest 0 -> 60 for each p
    si = rows["shuffle_instructions_largest_drop"]
    v = np.array([0] + [100] * 6 + [0] * 3)
    half, bonf = (student.ppf(q, 9) * v.std(ddof=1) / np.sqrt(10) for q in (0.975, 1 - 0.025 / 7))
    assert (si["effect"], si["ci_low"], si["ci_high"], si["n_items"]) == (
        pytest.approx(60.0), pytest.approx(60 - half), pytest.approx(60 + bonf), 10)
    # SI without examples right on t0 only: mean over tasks 10, off the floor (> 5); every check met: decided
    assert (si["verdict"], si["reason"]) == ("reproduced", "95% CI excludes the null on the predicted side")
    assert "premise: original/WO off the floor: met (mean over tasks above 5: original/WO 90.0)" in si["precondition_note"]
    # W-EXAM drops: 0 for 7 perturbations, 90 − 80 = 10 for SI -> 10 / 8 = 1.25 (close: < 5)
    assert rows["examples_robust_all_perturbations"]["effect"] == pytest.approx(1.25)
    # WO drops 20 x 7 and 90 − 10 = 80 -> 27.5; minus the W mean 1.25 -> 26.25
    assert rows["demonstrations_minimize_perturbations"]["effect"] == pytest.approx(26.25)
    # SI with examples (80) − original without (90) = −10
    assert rows["random_instruction_with_examples_beats_correct_without"]["effect"] == pytest.approx(-10.0)
    assert rows["paraphrase_keeps_performance"]["reason"].startswith("not measured in this run")


def _paper():
    from wobble.report.cells import read_paper

    return [read_paper(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES]


def test_the_paper_passes_its_own_rows():
    empty = pd.DataFrame(columns=COLUMNS)
    rows = C.measure(empty, ["m"], CONDS, _paper(), n_boot=10)
    assert [r["claim"] for r in rows] == [c.id for c in C.CLAIMS]
    assert all(r["evidence"] == "table" and r["paper_verdict"] == "reproduced" for r in rows), \
        [(r["claim"], r["paper_effect"]) for r in rows if r["paper_verdict"] != "reproduced"]
    eff = {r["claim"]: r["paper_effect"] for r in rows}
    # Table 4, T5-3B, means over the 12 categories: SI drop 43.02 − 7.75 = 35.28; next largest (shuffle words)
    # 43.02 − 22.32 = 20.70 -> 14.57
    assert eff["shuffle_instructions_largest_drop"] == pytest.approx(14.567, abs=1e-3)
    # W-EXAM drops 0.75 0.69 0.10 0.94 1.93 0.08 0.11 8.36 -> mean 1.62 (< 5)
    assert eff["examples_robust_all_perturbations"] == pytest.approx(1.621, abs=1e-3)
    # Table 8 T5-3B mean over 24 tasks 14.05; Table 7 T5-3B mean over 4 instructions per category 56.13
    assert eff["plm_prompts_work_poorly"] == pytest.approx(-42.08, abs=0.01)
    assert rows[3]["paper"] == "1.6 (T5-3B, Table 4); T5-11B, Table 5: 3.3"


def _write(path: Path, records):
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _config():
    return {"models": {"main-m": {"source": "tiny", "seed": 0}, "second-m": {"source": "tiny", "seed": 1}},
            "instructions": {"models": ["main-m", "second-m"], "seeds": [1],
                             "conditions": ["original", "shuffle_words", "shuffle_instructions"],
                             "settings": ["wo_exam", "w_exam"], "english": {"n_tasks_per_category": 1,
                                                                            "n_instances_per_task": 2},
                             "xlingual": {"n_tasks_per_category": 1, "n_instances_per_task": 2},
                             "para": {"n_instances_per_task": 10}, "diverse": {"n_examples_per_task": 1},
                             "max_new_tokens": 32, "bootstrap": {"n": 50, "seed": 0}}}


def _inputs(tmp_path, config, second=True):
    root = tmp_path / "results/instructions/predictions"
    inputs = {"english": [], "para": [], "diverse": []} | ({"second_english": []} if second else {})
    for (cond, setting), recs in english_fixture().items():
        if cond in config["instructions"]["conditions"]:
            inputs["english"].append(_write(root / f"main-m/english/{cond}/{setting}/seed1.jsonl", recs))
            if second and setting == "w_exam":
                inputs["second_english"].append(_write(root / f"second-m/english/{cond}/{setting}/seed1.jsonl", recs))
    return inputs | {f"paper_{t}": str(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES}


def test_findings_give_every_model_a_row_per_claim_and_name_what_it_did_not_run(tmp_path):
    from wobble.report.findings import Ledger

    found = C.findings(_inputs(tmp_path, _config()), _config())
    assert isinstance(found, Ledger) and found.title == "Claims ledger: instructions (Gu et al. 2023)"
    rows = found.rows()
    assert [r["row_id"] for r in rows[:4]] == ["in-01-mainm", "in-01-secondm", "in-02-mainm", "in-02-secondm"]
    by = {r["row_id"]: r for r in rows}
    assert by["in-04-secondm"]["effect"] == pytest.approx(by["in-04-mainm"]["effect"])  # the same W-EXAM runs
    assert by["in-01-secondm"]["reason"] == "not measured in this run"  # no WO-EXAM runs
    assert by["in-07-mainm"]["reason"] == "not measured in this run"  # no Para-Instructions runs
    # the paper's effect over this run's two perturbations: W-EXAM drops 1.93 (SW) and 8.36 (SI) -> 5.15; the
    # second model's row reads T5-11B's (Table 5 category means: original 60.458, SW 54.179, SI 49.55 -> 8.59)
    assert by["in-04-mainm"]["paper_effect"] == pytest.approx(5.146, abs=1e-3)
    assert by["in-04-secondm"]["paper_effect"] == pytest.approx(60.4583 - (54.1792 + 49.55) / 2, abs=1e-3)
    assert by["in-04-mainm"]["name"] == "with examples: robust on average over the perturbations"
    assert all(r["freeze"] == C.FREEZE for r in rows)
    assert not any("before any run" in n for n in found.notes)


def test_a_prediction_without_its_fields_is_one_clear_error(tmp_path):
    bad = _write(tmp_path / "results/instructions/predictions/m/english/original/wo_exam/seed1.jsonl",
                 [{"task": "t", "instance_id": "t-0"}])
    with pytest.raises(DataError, match=r"seed1\.jsonl: record line 1: a prediction with fields output"):
        C._by_run([bad])
    with pytest.raises(DataError, match="not-a-run.jsonl"):
        C._by_run([_write(tmp_path / "not-a-run.jsonl", [])])


def test_findings_inputs_name_the_second_models_english_runs():
    import yaml

    from wobble.config import validate_config

    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()), REPO / "schemas" / "config.schema.yaml")
    ins = C.findings_inputs(config)
    second = config["instructions"]["models"][1]
    assert ins["second_english"] and all(f"/{second}/english/" in p and "/w_exam/" in p for p in ins["second_english"])
    assert {"paper_table4", "paper_table5", "paper_table7", "paper_table8"} <= set(ins)
    no_second = {**config, "instructions": {**config["instructions"], "models": config["instructions"]["models"][:1]}}
    assert "second_english" not in C.findings_inputs(no_second)
