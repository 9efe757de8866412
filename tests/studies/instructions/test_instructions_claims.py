"""The instructions claims on the ledger's engine: the declared claims (ids, directions, nulls, gates, the side
each check's failure favours) and the statistic each set of conditions gets (linear contrasts and their exact
intervals over tasks, the smallest contrast, two task sets), numbers worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions.claims_measure import COLUMNS

from instructions_claims_tables import SI, SPEC, SW, table


# ------------------------------------------------------------------------------------------ the declarations


def test_the_claims_are_declared_per_model_over_tasks_with_their_directions_and_nulls():
    assert [c.id for c in C.CLAIMS] == [
        "shuffle_instructions_largest_drop", "shuffle_words_worst_word_level", "sentence_level_less_than_word_level",
        "examples_robust_all_perturbations", "demonstrations_minimize_perturbations",
        "random_instruction_with_examples_beats_correct_without", "paraphrase_keeps_performance",
        "no_demonstrations_larger_spread", "plm_prompts_work_poorly"]
    assert all((c.study, c.unit, c.scope, c.scale, c.evidence, c.min_units, c.freeze, c.paper_effect)
               == ("instructions", "task", "per_model", "points", "table", 10, C.FREEZE, None) for c in C.CLAIMS)
    assert all(c.observation == ("version", "instance", "seed") for c in C.CLAIMS)
    # "close" claims: below 5 points; the PLM prompts claim: below 0; the rest: above 0
    assert {c.id: (c.direction, c.null) for c in C.CLAIMS if (c.direction, c.null) != (1, 0.0)} == {
        "examples_robust_all_perturbations": (-1, 5.0), "paraphrase_keeps_performance": (-1, 5.0),
        "plm_prompts_work_poorly": (-1, 0.0)}
    assert C.CLOSE == 5.0 and (C.ENGLISH_TASKS, C.PARA_TASKS, C.DIVERSE_TASKS) == (119, 23, 24)


def test_every_claim_has_the_answered_and_cut_gates_in_every_cell():
    assert isinstance(C.GATES[1], M.CutGate)
    assert [(g.name, g.column, g.test, g.threshold, g.bias) for g in C.GATES] == [
        ("degenerate", "answered", "share at least", 0.5, "unknown"),
        ("truncated", "truncated", "share at most", 0.1, "unknown")]
    assert all(c.gates == C.GATES for c in C.CLAIMS)


def test_the_sections_and_statistics_read_as_declared():
    assert {c.id: (c.section, c.effect) for c in C.CLAIMS} == {
        "shuffle_instructions_largest_drop": (
            "§3.1, Table 4", "drop(shuffle_instructions) − drop(p) for each of the 7 other perturbations p, "
                             "INSTRU-WO-EXAM (the smallest)"),
        "shuffle_words_worst_word_level": (
            "§3.1, Table 4", "drop(shuffle_words) − drop(p) for each of the 4 other word-level perturbations p, "
                             "INSTRU-WO-EXAM (the smallest)"),
        "sentence_level_less_than_word_level": (
            "§3.1, Table 4", "mean word-level drop − mean sentence-level drop, INSTRU-WO-EXAM"),
        "examples_robust_all_perturbations": (
            "§3.1, Tables 4–5", "|mean drop| over the 8 perturbations, INSTRU-W-EXAM (the larger of the mean drop "
                                "and its negative, each part's interval at 97.5 %, Bonferroni): robust when the mean "
                                "drop lies within ±5, i.e. its interval inside (−5, 5); contradicted when it lies "
                                "beyond −5 or beyond 5"),
        "demonstrations_minimize_perturbations": (
            "Introduction; §3.1, Table 4",
            "mean over the 8 perturbations of drop(INSTRU-WO-EXAM) − drop(INSTRU-W-EXAM) (perturbations only: the run "
            "has no Para-Instructions without examples)"),
        "random_instruction_with_examples_beats_correct_without": (
            "§3.1, Table 4", "score(shuffle instructions, INSTRU-W-EXAM) − score(original, INSTRU-WO-EXAM)"),
        "paraphrase_keeps_performance": (
            "§3.2, Table 7", "|mean drop| from the original to the 3 new instructions, Para-Instructions, "
                             "INSTRU-W-EXAM (the larger of the mean drop and its negative, each part's interval at "
                             "97.5 %, Bonferroni): the performance kept when the mean drop lies within ±5, i.e. its "
                             "interval inside (−5, 5); contradicted when it lies beyond −5 or beyond 5"),
        "no_demonstrations_larger_spread": (
            "§3.3, Tables 7–8", "mean per-task std over DiversePrompt prompts (no examples) − over the 3 new "
                                "Para-Instructions instructions (with examples)"),
        "plm_prompts_work_poorly": (
            "Introduction; §3.3, Tables 7–8",
            "mean DiversePrompt task score (prompts, no examples) − mean Para-Instructions task score (its 4 "
            "human-oriented instructions, with examples, as Table 7 that §3.3 compares with)"),
    }


def test_each_check_states_the_side_its_failure_favours():
    bias = {c.id: {p.name: p.bias for p in c.preconditions} for c in C.CLAIMS}
    null, claim, against = "toward the null", "toward the claim", "against the claim"
    premise = {"premise: original/WO off the floor": "unknown"}
    # simple paired differences on the same tasks: a bound ties arms, never reverses them; a drop needs a
    # working original instruction (the premise, of unknown bias)
    assert bias["shuffle_instructions_largest_drop"] == {
        "floor in shuffle_instructions/WO": null, "ceiling in shuffle_instructions/WO": null,
        "floor in the other perturbations/WO": null, "ceiling in the other perturbations/WO": null,
        **premise, "ceiling in original/WO": null}
    assert bias["shuffle_words_worst_word_level"] == {
        "floor in shuffle_words/WO": null, "ceiling in shuffle_words/WO": null,
        "floor in the other word-level perturbations/WO": null,
        "ceiling in the other word-level perturbations/WO": null, **premise, "ceiling in original/WO": null}
    assert bias["sentence_level_less_than_word_level"] == {
        "floor in the sentence-level perturbations/WO": null, "ceiling in the sentence-level perturbations/WO": null,
        "floor in the word-level perturbations/WO": null, "ceiling in the word-level perturbations/WO": null,
        **premise, "ceiling in original/WO": null}
    assert bias["random_instruction_with_examples_beats_correct_without"] == {
        "floor in shuffle_instructions/W": null, "ceiling in shuffle_instructions/W": null,
        "floor in original/WO": "toward the claim", "ceiling in original/WO": null}
    # "close" claims: a bound shrinks the drop toward 0, below the 5-point null
    assert bias["examples_robust_all_perturbations"] == {
        "floor in original/W": claim, "ceiling in original/W": claim,
        "floor in the perturbations/W": claim, "ceiling in the perturbations/W": claim}
    assert bias["paraphrase_keeps_performance"] == {
        "floor in para/original": claim, "ceiling in para/original": claim,
        "floor in the new instructions": claim, "ceiling in the new instructions": claim}
    # demonstrations: a bound without examples shrinks the drops examples would shrink; with examples, the drops
    # they leave
    assert bias["demonstrations_minimize_perturbations"] == {
        **premise, "ceiling in original/WO": against,
        "floor in the perturbations/WO": against, "ceiling in the perturbations/WO": against,
        "floor in original/W": claim, "ceiling in original/W": claim,
        "floor in the perturbations/W": claim, "ceiling in the perturbations/W": claim}
    # two task sets: the side each arm is on; a spread is pinned low at either bound
    assert bias["no_demonstrations_larger_spread"] == {
        "floor in DiversePrompt": against, "ceiling in DiversePrompt": against,
        "floor in the new instructions": claim, "ceiling in the new instructions": claim,
        "instances per version in DiversePrompt": claim, "instances per version in the new instructions": against}
    assert bias["plm_prompts_work_poorly"] == {
        "floor in DiversePrompt": claim, "ceiling in DiversePrompt": against,
        "floor in Para-Instructions": against, "ceiling in Para-Instructions": claim,
        "control: original/WO off the floor": claim, "trained on superni_train": "unknown"}


def test_the_plm_claim_reads_its_control_and_the_models_training():
    assert C.CONTROL_CELLS == {"plm_prompts_work_poorly": ("original/WO",)} and C.SUPERNI == "superni_train"
    trained = {p.name: p for p in C.claims(trained={"a": "superni_train", "b": "other"})[8].preconditions}
    check = trained["trained on superni_train"].check
    assert check(table({"x": [1.0]}, model="a")) == (True, "finetune data: superni_train")
    assert check(table({"x": [1.0]}, model="b")) == (False, "finetune data: other ✗")
    assert check(table({"x": [1.0]}, model="c")) == (False, "finetune data: none declared ✗")
    assert not SPEC["plm_prompts_work_poorly"].preconditions[-1].check(table({"x": [1.0]}))[0]  # none declared
    # the control's rows travel in the claim's table only
    f = pd.concat([table({"original/WO": [1.0]}, prefix="e"), table({"diverse": [1.0]}, prefix="d")])
    tables = C.unit_tables(f, C.CLAIMS)
    assert set(tables["plm_prompts_work_poorly"].frame["cell"]) == {"original/WO", "diverse"}
    assert set(tables["no_demonstrations_larger_spread"].frame["cell"]) == {"diverse"}


def test_the_perturbations_are_the_papers_eight_in_its_levels():
    assert C.WORD_LEVEL == ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
    assert C.SENTENCE_LEVEL == ("repeat_sentences", "shuffle_sentences")
    assert C.PERTURBATIONS == (*C.WORD_LEVEL, *C.SENTENCE_LEVEL, "shuffle_instructions")
    assert C.PARA_CONDITIONS == ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
    assert C.PARA == ("para/original", "para/paraphrase_1", "para/paraphrase_2", "para/paraphrase_3")


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


#: made-up condition means of one task: WO original 50, W original 60
MEANS = {"original/WO": [50.0], "original/W": [60.0]}
MEANS.update({f"{c}/WO": [v] for c, v in zip(C.PERTURBATIONS, (45, 44, 48, 47, 30, 49, 46, 10))})
MEANS.update({f"{c}/W": [v] for c, v in zip(C.PERTURBATIONS, (58, 57, 59, 56, 55, 60, 59, 52))})


def test_each_english_statistic_by_hand_on_made_up_means():
    f = table(MEANS)
    point = {c.id: c.statistic.point(f, "task") for c in C.CLAIMS[:6]}
    # drop(SI) − drop(p) = score(p) − score(SI), WO: DS 35, DW 34, IW 38, RW 37, SW 20, RS 39, SS 36 -> 20
    assert [p.point(f, "task") for p in SPEC["shuffle_instructions_largest_drop"].statistic.parts] == [
        35, 34, 38, 37, 20, 39, 36] and point["shuffle_instructions_largest_drop"] == 20
    # score(p) − score(SW) over the other word-level ones: 15, 14, 18, 17 -> 14
    assert point["shuffle_words_worst_word_level"] == 14
    # word-level drops 5 6 2 3 20 -> 7.2; sentence-level 1 4 -> 2.5
    assert point["sentence_level_less_than_word_level"] == pytest.approx(4.7)
    # W drops 2 3 1 4 5 0 1 8 -> 24 / 8
    assert point["examples_robust_all_perturbations"] == pytest.approx(3.0)
    # WO drops 5 6 2 3 20 1 4 40 minus W drops 2 3 1 4 5 0 1 8: 3 3 1 −1 15 1 3 32 -> 57 / 8
    assert point["demonstrations_minimize_perturbations"] == pytest.approx(7.125)
    # SI with examples 52 − original without 50
    assert point["random_instruction_with_examples_beats_correct_without"] == 2
    assert SPEC["random_instruction_with_examples_beats_correct_without"].cells == (f"{SI}/W", "original/WO")


def test_the_paraphrase_statistic_is_the_original_less_the_mean_of_the_three_new_instructions():
    f = table({"para/original": [80.0], "para/paraphrase_1": [70.0], "para/paraphrase_2": [75.0],
               "para/paraphrase_3": [90.0]})
    assert SPEC["paraphrase_keeps_performance"].statistic.point(f, "task") == pytest.approx(80 - 235 / 3)
    assert SPEC["paraphrase_keeps_performance"].cells == C.PARA


@pytest.mark.parametrize("conditions, claims", [
    (["shuffle_words", "delete_words"], []),  # no original: nothing to drop from
    (["original"], []),
    (["original", SI], ["examples_robust_all_perturbations", "demonstrations_minimize_perturbations",
                        "random_instruction_with_examples_beats_correct_without"]),
    (["original", SW], ["examples_robust_all_perturbations", "demonstrations_minimize_perturbations"]),
    (["original", "repeat_sentences", SI], ["shuffle_instructions_largest_drop", "examples_robust_all_perturbations",
                                            "demonstrations_minimize_perturbations",
                                            "random_instruction_with_examples_beats_correct_without"]),
    (["original", "delete_words", SW], ["shuffle_words_worst_word_level", "examples_robust_all_perturbations",
                                        "demonstrations_minimize_perturbations"]),
    (["original", "delete_words", "shuffle_sentences"], ["sentence_level_less_than_word_level",
                                                         "examples_robust_all_perturbations",
                                                         "demonstrations_minimize_perturbations"]),
])
def test_a_claim_reads_only_cells_the_run_has_when_its_conditions_form_it(conditions, claims):
    run = {f"{c}/{s}" for c in conditions for s in ("WO", "W")}
    specs = C.claims(conditions)
    assert [c.id for c in specs] == [c.id for c in C.CLAIMS]  # every claim keeps its place (its row ids)
    assert [c.id for c in specs[:6] if set(c.cells) <= run] == claims


def test_a_statistic_reads_the_runs_conditions_in_the_papers_order():
    specs = {c.id: c for c in C.claims([SI, "shuffle_sentences", "original", "delete_words", SW])}
    assert specs["shuffle_instructions_largest_drop"].cells == (
        "original/WO", f"{SI}/WO", "delete_words/WO", f"{SW}/WO", "shuffle_sentences/WO")
    f = table(MEANS)
    # drop(SI) − drop(p) for DW, SW, SS: 34, 20, 36
    assert [p.point(f, "task") for p in specs["shuffle_instructions_largest_drop"].statistic.parts] == [34, 20, 36]
    assert specs["shuffle_words_worst_word_level"].statistic.point(f, "task") == 14
    # word-level drops DW 6, SW 20 -> 13; sentence-level SS 4
    assert specs["sentence_level_less_than_word_level"].statistic.point(f, "task") == pytest.approx(9.0)
    # W drops DW 3, SW 5, SS 1, SI 8 -> 17 / 4
    assert specs["examples_robust_all_perturbations"].statistic.point(f, "task") == pytest.approx(4.25)
