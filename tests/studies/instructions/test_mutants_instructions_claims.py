"""instructions claims ledger: the finer behaviour of the declared claims, the contrasts each set of conditions
gets, the paper's effects from its tables, the Para-Instructions and DiversePrompt measurements and the
findings() wiring (what a mutation of claims.py / claims_measure.py would change). Numbers by hand in comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M

from test_instructions_claims import CONDS, REPO, _config, _paper, _write, english_fixture, rec, runs_from  # noqa: E402

WO, W = "wo_exam", "w_exam"
SI, SW = "shuffle_instructions", "shuffle_words"


# ------------------------------------------------------------------------------------------ the claims


def test_the_claims_are_declared_per_model_over_tasks_with_their_directions_and_nulls():
    assert [c.id for c in C.CLAIMS] == [
        "shuffle_instructions_largest_drop", "shuffle_words_worst_word_level", "sentence_level_less_than_word_level",
        "examples_robust_all_perturbations", "demonstrations_minimize_perturbations",
        "random_instruction_with_examples_beats_correct_without", "paraphrase_keeps_performance",
        "no_demonstrations_larger_spread", "plm_prompts_work_poorly"]
    assert all((c.study, c.unit_name, c.per_model, c.unit, c.paper_value, c.evidence, c.min_items)
               == ("instructions", "tasks", True, "points", "", "table", 10) for c in C.CLAIMS)
    # "close" claims: below 5 points; the PLM prompts claim: below 0; the rest: above 0
    assert {c.id: (c.direction, c.null) for c in C.CLAIMS if (c.direction, c.null) != (1, 0.0)} == {
        "examples_robust_all_perturbations": (-1, 5.0), "paraphrase_keeps_performance": (-1, 5.0),
        "plm_prompts_work_poorly": (-1, 0.0)}
    assert C.CLOSE == 5.0 and (C.ENGLISH_TASKS, C.PARA_TASKS, C.DIVERSE_TASKS) == (119, 23, 24)


def test_the_claims_sections_statistics_and_floors_read_as_pre_registered():
    floor = ("off the floor: the original instruction scores above 0 on at least half of the tasks{} (below it, "
             "scores sit at 0 with nothing to lose or to vary: a floor, not robustness)")
    wo, para = floor.format(", INSTRU-WO-EXAM"), floor.format(" (Para-Instructions)")
    assert {c.id: (c.section, c.effect, c.precondition) for c in C.CLAIMS} == {
        "shuffle_instructions_largest_drop": (
            "§3.1, Table 4",
            "drop(shuffle instructions) − drop(p) for every other perturbation p, INSTRU-WO-EXAM (smallest shown)", wo),
        "shuffle_words_worst_word_level": (
            "§3.1, Table 4",
            "drop(shuffle words) − drop(p) for every other word-level p, INSTRU-WO-EXAM (smallest shown)", wo),
        "sentence_level_less_than_word_level": (
            "§3.1, Table 4", "mean word-level drop − mean sentence-level drop, INSTRU-WO-EXAM", wo),
        "examples_robust_all_perturbations": (
            "§3.1, Tables 4–5",
            "mean drop over the perturbations, INSTRU-W-EXAM (close: < 5; the mean, as the paper calls shuffle "
            "instructions' 8.4-point drop 'a small extent')", floor.format(", INSTRU-W-EXAM")),
        "demonstrations_minimize_perturbations": (
            "Introduction; §3.1, Table 4",
            "mean over perturbations of drop(INSTRU-WO-EXAM) − drop(INSTRU-W-EXAM) (perturbations only: the run has "
            "no Para-Instructions without examples)", floor.format(" in both settings")),
        "random_instruction_with_examples_beats_correct_without": (
            "§3.1, Table 4", "score(shuffle instructions, INSTRU-W-EXAM) − score(original, INSTRU-WO-EXAM)", wo),
        "paraphrase_keeps_performance": (
            "§3.2, Table 7",
            "original − mean of the 3 new instructions, Para-Instructions, INSTRU-W-EXAM (close: < 5)", para),
        "no_demonstrations_larger_spread": (
            "§3.3, Tables 7–8",
            "mean per-task std over DiversePrompt prompts − over the 3 new Para-Instructions instructions",
            floor.format(" (Para-Instructions), and DiversePrompt (mean over prompts) too")),
        "plm_prompts_work_poorly": (
            "Introduction; §3.3, Tables 7–8",
            "mean DiversePrompt task score (prompts, no examples) − mean Para-Instructions task score (its 4 "
            "human-oriented instructions, with examples, as Table 7 that §3.3 compares with)", para),
    }


def test_the_perturbations_are_the_papers_eight_in_its_levels():
    assert C.WORD_LEVEL == ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
    assert C.SENTENCE_LEVEL == ("repeat_sentences", "shuffle_sentences")
    assert C.PERTURBATIONS == (*C.WORD_LEVEL, *C.SENTENCE_LEVEL, "shuffle_instructions")
    assert C.PARA_CONDITIONS == ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")


# ------------------------------------------------------------------------------------------ the contrasts

#: made-up condition means: WO original 50, W original 60
MEANS = {("original", WO): 50.0, ("original", W): 60.0}
MEANS.update({(c, WO): v for c, v in zip(C.PERTURBATIONS, (45, 44, 48, 47, 30, 49, 46, 10))})
MEANS.update({(c, W): v for c, v in zip(C.PERTURBATIONS, (58, 57, 59, 56, 55, 60, 59, 52))})


def test_each_english_contrast_by_hand_on_made_up_means():
    out = C.english_contrasts(CONDS)
    # drop(SI) − drop(p) = score(p) − score(SI), WO: DS 35, DW 34, IW 38, RW 37, SW 20, RS 39, SS 36
    si = out["shuffle_instructions_largest_drop"]
    assert si.values(MEANS).tolist() == [35, 34, 38, 37, 20, 39, 36] and si.point(MEANS) == 20 and si.every
    assert si.columns == tuple(("original" if i == 0 else C.PERTURBATIONS[i - 1], WO) for i in range(9))
    # score(p) − score(SW) over the other word-level ones: 15, 14, 18, 17
    sw = out["shuffle_words_worst_word_level"]
    assert sw.values(MEANS).tolist() == [15, 14, 18, 17] and sw.point(MEANS) == 14 and sw.every
    assert sw.columns == (("original", WO), *((c, WO) for c in C.WORD_LEVEL))
    # word-level drops 5 6 2 3 20 -> 7.2; sentence-level 1 4 -> 2.5
    sent = out["sentence_level_less_than_word_level"]
    assert sent.point(MEANS) == pytest.approx(4.7) and not sent.every
    assert sent.columns == (("original", WO), *((c, WO) for c in C.WORD_LEVEL + C.SENTENCE_LEVEL))
    # W drops 2 3 1 4 5 0 1 8 -> 24 / 8
    robust = out["examples_robust_all_perturbations"]
    assert robust.point(MEANS) == pytest.approx(3.0) and not robust.every
    assert robust.columns == (("original", W), *((c, W) for c in C.PERTURBATIONS))
    # WO drops 5 6 2 3 20 1 4 40 minus W drops: 3 3 1 -1 15 1 3 32 -> 57 / 8
    demo = out["demonstrations_minimize_perturbations"]
    assert demo.point(MEANS) == pytest.approx(7.125)
    assert demo.columns == (("original", WO), *((c, WO) for c in C.PERTURBATIONS),
                            ("original", W), *((c, W) for c in C.PERTURBATIONS))
    # SI with examples 52 − original without 50
    rnd = out["random_instruction_with_examples_beats_correct_without"]
    assert rnd.point(MEANS) == 2 and rnd.columns == (("original", WO), (SI, W)) and not rnd.every
    assert list(out) == [c.id for c in C.CLAIMS[:6]]


def test_the_paraphrase_contrast_is_the_original_less_the_mean_of_the_three_new_instructions():
    m = {("original", W): 80.0, ("paraphrase_1", W): 70.0, ("paraphrase_2", W): 75.0, ("paraphrase_3", W): 90.0}
    assert C.PARA_CONTRAST.point(m) == pytest.approx(80 - 235 / 3)
    assert C.PARA_CONTRAST.columns == tuple((c, W) for c in C.PARA_CONDITIONS) and not C.PARA_CONTRAST.every


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
def test_a_claim_gets_a_contrast_only_when_the_run_has_its_conditions(conditions, claims):
    assert list(C.english_contrasts(conditions)) == claims


def test_a_contrast_reads_only_the_conditions_the_run_has_in_the_papers_order():
    out = C.english_contrasts([SI, "shuffle_sentences", "original", "delete_words", SW])
    assert out["shuffle_instructions_largest_drop"].columns == (
        ("original", WO), ("delete_words", WO), (SW, WO), ("shuffle_sentences", WO), (SI, WO))
    # drop(SI) − drop(p) for DW, SW, SS: 34, 20, 36
    assert out["shuffle_instructions_largest_drop"].values(MEANS).tolist() == [34, 20, 36]
    assert out["shuffle_words_worst_word_level"].values(MEANS).tolist() == [14]
    # word-level drops DW 6, SW 20 -> 13; sentence-level SS 4
    assert out["sentence_level_less_than_word_level"].point(MEANS) == pytest.approx(9.0)
    # W drops DW 3, SW 5, SS 1, SI 8 -> 17 / 4
    assert out["examples_robust_all_perturbations"].point(MEANS) == pytest.approx(4.25)


# ------------------------------------------------------------------------------------------ the paper


def test_the_paper_column_names_each_table():
    _, texts = C.paper_effects(*_paper(), CONDS)
    assert texts == {
        "shuffle_instructions_largest_drop": "14.6 (T5-3B, Table 4)",
        "shuffle_words_worst_word_level": "14.5 (T5-3B, Table 4)",
        "sentence_level_less_than_word_level": "6.5 (T5-3B, Table 4)",
        "examples_robust_all_perturbations": "1.6 (T5-3B, Table 4); T5-11B, Table 5: 3.3",
        "demonstrations_minimize_perturbations": "7.7 (T5-3B, Table 4)",
        "random_instruction_with_examples_beats_correct_without": "2.5 (T5-3B, Table 4)",
        "paraphrase_keeps_performance": "0.6 (T5-3B, Table 7)",
        "no_demonstrations_larger_spread": "1.4 (T5-3B: std 2.6 in Table 8 vs 1.2 in Table 7)",
        "plm_prompts_work_poorly": "-42.1 (T5-3B: 14.1 in Table 8 vs 56.1 in Table 7)",
    }


# Table 7, T5-3B, the 12 categories (AC CEC CR DAR WA TE DTT GEC TG KT OE QR): original; rephrased mean and std
T7_ORIG = [69.5, 69.2, 58.5, 48.7, 44.5, 44.8, 44.7, 85.0, 25.5, 73.2, 34.7, 81.0]
T7_REPH = [67.3, 69.3, 56.8, 43.3, 43.2, 52.7, 44.2, 84.3, 24.6, 72.0, 32.7, 81.3]
T7_STD = [1.0, 0.2, 1.6, 2.7, 1.9, 5.8, 0.3, 0.3, 0.2, 0.6, 0.1, 0.2]
# Table 8, T5-3B, the 24 DiversePrompt tasks: Σ mean 337.3, Σ std 63.1


def test_the_paper_effects_of_tables_7_and_8_by_hand():
    effects, _ = C.paper_effects(*_paper(), CONDS)
    assert effects["paraphrase_keeps_performance"] == pytest.approx((sum(T7_ORIG) - sum(T7_REPH)) / 12)
    assert effects["no_demonstrations_larger_spread"] == pytest.approx(63.1 / 24 - sum(T7_STD) / 12)
    # the Para-Instructions side: per category the mean over its 4 instructions (original + 3 rephrased)
    para = np.mean([(o + 3 * r) / 4 for o, r in zip(T7_ORIG, T7_REPH)])
    assert effects["plm_prompts_work_poorly"] == pytest.approx(337.3 / 24 - para)


def test_the_paper_effects_of_table_4_are_the_same_contrasts_on_its_category_means():
    t4 = _paper()[0]
    m4 = {(c, {"INSTRU-WO-EXAM": WO, "INSTRU-W-EXAM": W}[s]): g["mean"].astype(float).mean()
          for (s, c), g in t4.groupby(["setting", "condition"])}
    effects, _ = C.paper_effects(*_paper(), CONDS)
    for cid, contrast in C.english_contrasts(CONDS).items():
        assert effects[cid] == pytest.approx(contrast.point(m4)), cid
    assert effects["random_instruction_with_examples_beats_correct_without"] == pytest.approx(45.575 - 43.025)


def test_a_run_without_perturbations_gets_only_the_paraphrase_and_prompt_effects():
    effects, texts = C.paper_effects(*_paper(), ["original"])
    assert set(effects) == set(texts) == {"paraphrase_keeps_performance", "no_demonstrations_larger_spread",
                                          "plm_prompts_work_poorly"}


def _without(t: pd.DataFrame, condition: str) -> pd.DataFrame:
    return t[t["condition"] != condition]


def test_a_paper_table_lacking_a_condition_gives_no_effect_for_the_claims_that_need_it():
    t4, t5, t7, t8 = _paper()
    effects, texts = C.paper_effects(_without(t4, SW), t5, t7, t8, CONDS)
    needs_sw = {"shuffle_instructions_largest_drop", "shuffle_words_worst_word_level",
                "sentence_level_less_than_word_level", "examples_robust_all_perturbations",
                "demonstrations_minimize_perturbations"}
    assert not needs_sw & set(effects) and "random_instruction_with_examples_beats_correct_without" in effects
    # Table 5 without a condition: the W-EXAM row shows no T5-11B value
    _, texts = C.paper_effects(t4, _without(t5, SW), t7, t8, CONDS)
    assert texts["examples_robust_all_perturbations"] == "1.6 (T5-3B, Table 4)"


def test_the_paper_reads_each_tables_model_and_only_its_two_settings():
    t4, t5, t7, t8 = _paper()
    other = t4.assign(model="T5-11B", mean="0")  # another model's rows, and a third setting, are not read
    third = t4.assign(setting="INSTRU-OTHER", mean="0")
    assert C.paper_effects(pd.concat([t4, other, third]), t5, t7, t8, CONDS) == C.paper_effects(t4, t5, t7, t8, CONDS)
    assert C._condition_means(t4, "T5-11B") == {}


# ------------------------------------------------------------------------------------------ measuring a model


def _para(original=(8, 8), new=((8, 8), (7, 7), (9, 9)), **extra):
    """Para-Instructions records of tasks a and b, 10 instances each; ``original``/``new``: right per task."""
    right = (original, *new)
    return {(c, W): [rec(i, i < k[j], task=t, **extra) for j, t in enumerate("ab") for i in range(10)]
            for c, k in zip(C.PARA_CONDITIONS, right)}


def _diverse(**extra):
    # task x: prompts 100 and 0 (std 50, mean 50); task y: 100 and 100 (std 0, mean 100)
    return [rec(0, True, task="x", prompt_index=0, **extra), rec(0, False, task="x", prompt_index=1, **extra),
            rec(0, True, task="y", prompt_index=0, **extra), rec(0, True, task="y", prompt_index=1, **extra)]


def test_the_diverse_prompt_claims_name_their_task_sets_floors_and_population():
    got = C.measure_model({}, _para(), _diverse(), conditions=["original"], n_boot=100)
    spread, plm = got["no_demonstrations_larger_spread"], got["plm_prompts_work_poorly"]
    assert spread.note == plm.note == "2 DiversePrompt tasks vs 2 Para-Instructions tasks"
    assert spread.precondition_note == ("Para-Instructions original: above 0 on 2 of 2 tasks; "
                                        "DiversePrompt: above 0 on 2 of 2 tasks")
    assert plm.precondition_note == "Para-Instructions original: above 0 on 2 of 2 tasks"
    assert spread.population == plm.population == 23  # the smaller of the two task sets that exist
    assert got["paraphrase_keeps_performance"].population == 23
    assert got["paraphrase_keeps_performance"].note.endswith("; 20 instance(s) of 2 task(s)")  # 0 on each task


def test_the_para_floor_reads_the_original_instruction_only():
    # task b: no original answer right, every new instruction right on some
    got = C.measure_model({}, _para(original=(8, 0)), _diverse(), conditions=["original"], n_boot=50)
    assert got["plm_prompts_work_poorly"].precondition_note == "Para-Instructions original: above 0 on 1 of 2 tasks"


def test_the_prompt_spread_is_over_the_three_new_instructions_and_the_prompt_means_over_the_prompts():
    # new instructions: task a 80 70 90, task b 60 60 60 (std 8.165 and 0); DiversePrompt std 50 and 0
    got = C.measure_model({}, _para(new=((8, 6), (7, 6), (9, 6))), _diverse(), conditions=["original"], n_boot=50)
    assert got["no_demonstrations_larger_spread"].effect == pytest.approx(25 - float(np.std([80, 70, 90])) / 2)
    # Para means over 4 instructions: a (80 + 80 + 70 + 90) / 4 = 80, b (80 + 60 · 3) / 4 = 65; DiversePrompt 75
    assert got["plm_prompts_work_poorly"].effect == pytest.approx(75 - 72.5)


def test_diverse_prompt_cut_generations_are_counted_beside_the_para_ones():
    diverse = _diverse(finish_reason="stop")
    diverse[0]["finish_reason"] = "length"
    got = C.measure_model({}, _para(finish_reason="stop"), diverse, conditions=["original"], n_boot=50, cap=32)
    assert got["plm_prompts_work_poorly"].diagnostics == (
        "generations cut at the 32-token cap: 1 of 84 (1%); per condition: diverse_prompt 1/4; none in the others")
    assert got["paraphrase_keeps_performance"].diagnostics == (
        "generations cut at the 32-token cap: 0 of 80 (0%); none in any condition")


def test_claims_whose_runs_are_missing_or_partial_are_not_measured():
    english = runs_from({("original", WO): 20, ("original", W): 20})  # the perturbations were not run
    para = {k: v for k, v in _para().items() if k[0] == "original"}  # the new instructions were not run
    got = C.measure_model(english, para, _diverse(), conditions=CONDS, n_boot=20)
    assert all(v is None for v in got.values())
    # Para-Instructions without DiversePrompt: the two prompt claims are not measured
    got = C.measure_model({}, _para(), [], conditions=["original"], n_boot=20)
    assert got["paraphrase_keeps_performance"] is not None
    assert got["no_demonstrations_larger_spread"] is None and got["plm_prompts_work_poorly"] is None


def test_measure_model_defaults_are_1000_resamples_seed_0_and_pass_both_on(monkeypatch):
    seen = []
    real_cluster, real_two = M.cluster_bootstrap_indices, M.two_sample_difference_ci
    monkeypatch.setattr(M, "cluster_bootstrap_indices",
                        lambda tasks, n, seed: seen.append((n, seed)) or real_cluster(tasks, 5, seed))
    monkeypatch.setattr(M, "two_sample_difference_ci",
                        lambda a, b, n, seed: seen.append((n, seed)) or real_two(a, b, n=5, seed=seed))
    C.measure_model(english_fixture(), _para(), _diverse(), conditions=CONDS)
    assert seen and set(seen) == {(1000, 0)}
    seen.clear()
    C.measure_model(english_fixture(), _para(), _diverse(), conditions=CONDS, n_boot=7, seed=3)
    assert set(seen) == {(7, 3)}


# ------------------------------------------------------------------------------------------ the ledger step


def test_findings_inputs_name_every_run_of_each_task_set_and_the_paper_tables():
    config = {"instructions": {"models": ["a", "b"], "seeds": [1], "conditions": ["original", SW],
                               "settings": [WO, W]}}
    p = "results/instructions/predictions/{}/seed1.jsonl"
    assert C.findings_inputs(config) == {
        "english": [p.format(f"a/english/{c}/{s}") for c in ("original", SW) for s in (WO, W)],
        "para": [p.format(f"a/para/{c}/w_exam") for c in C.PARA_CONDITIONS],
        "diverse": [p.format("a/diverse/diverse_prompt/wo_exam")],
        "second_english": [p.format(f"b/english/{c}/w_exam") for c in ("original", SW)],
        **{f"paper_{t}": f"paper/instructions/{t}.csv" for t in ("table4", "table5", "table7", "table8")},
    }
    # one model: no second model's runs; the main model's task sets are named even when empty
    one = {"instructions": {**config["instructions"], "models": ["a"], "conditions": []}}
    ins = C.findings_inputs(one)
    assert "second_english" not in ins and ins["english"] == [] and len(ins["para"]) == 4


def test_a_diverse_prompt_prediction_needs_its_prompt_index_and_the_others_do_not(tmp_path):
    root = tmp_path / "results/instructions/predictions/m"
    ok = _write(root / "english/original/wo_exam/seed1.jsonl", [rec(0, True)])
    diverse = _write(root / "diverse/diverse_prompt/wo_exam/seed2.jsonl", [rec(0, True, prompt_index=3)])
    assert C._by_run([ok, diverse]) == {("original", WO): [rec(0, True)],
                                        ("diverse_prompt", WO): [rec(0, True, prompt_index=3)]}
    bad = _write(root / "diverse/diverse_prompt/wo_exam/seed1.jsonl", [rec(0, True)])
    with pytest.raises(DataError, match=r"record line 1: a prediction with fields prompt_index$"):
        C._by_run([bad])
    with pytest.raises(DataError, match="seed1.jsonl.bak"):
        C._by_run([_write(root / "english/original/wo_exam/seed1.jsonl.bak", [rec(0, True)])])


def _inputs(tmp_path, config, second=True):
    runs = english_fixture()
    root = tmp_path / "results/instructions/predictions"
    inputs = {"english": [], "para": [], "diverse": []} | ({"second_english": []} if second else {})
    for (cond, setting), recs in runs.items():
        if cond in config["instructions"]["conditions"]:
            inputs["english"].append(_write(root / f"main-m/english/{cond}/{setting}/seed1.jsonl", recs))
            if second and setting == W:
                inputs["second_english"].append(_write(root / f"second-m/english/{cond}/{setting}/seed1.jsonl", recs))
    return inputs | {f"paper_{t}": str(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES}


def test_findings_notes_title_and_the_papers_effects_over_the_runs_conditions(tmp_path):
    from wobble.models.describe import model_label

    config = _config()
    found = C.findings(_inputs(tmp_path, config), config)
    labels = "; ".join(model_label(config["models"], k) for k in ("main-m", "second-m"))
    assert found.title == "Claims ledger: instructions (Gu et al. 2023)" and found.claims == C.CLAIMS
    assert found.notes == (
        f"Ours: {labels}; seeds [1]; the second model runs INSTRU-W-EXAM on the English tasks only (as the paper's "
        "T5-11B), so it has rows for the claims measured there.",
        "Unit: tasks (English: 1 per category x 2 instances; Para-Instructions: 10 instances per task; "
        "DiversePrompt: 1 example(s) per prompt); 95% intervals resample tasks, a task bringing all its instances "
        "and conditions. Population: 119 English test tasks, 23 Para-Instructions tasks, 24 DiversePrompt tasks.",
        "Precondition 'off the floor' (fixed before any run): the original instruction scores above 0 on at least "
        "half of the claim's tasks in every setting it compares; a model below it gets 'not applicable'.",
        "Paper: the same statistic function over the paper's category (Tables 4, 7) or task (Table 8) means of "
        "T5-3B, restricted to the conditions this run has; its verdict is the rule applied to that point.")
    assert (found.paper_effects, found.paper_values) == C.paper_effects(*_paper(), config["instructions"]["conditions"])
    main = C.measure_model(C._by_run(_inputs(tmp_path, config)["english"]), {}, [], conditions=[
        "original", SW, SI], n_boot=50, seed=0, cap=32)
    assert found.measured["shuffle_instructions_largest_drop"] == {"main-m": main["shuffle_instructions_largest_drop"]}


def test_findings_read_a_second_models_runs_only_when_the_config_names_one_and_they_exist(tmp_path):
    from wobble.models.describe import model_label

    config = _config()
    one = {**config, "instructions": {**config["instructions"], "models": ["main-m"]}}
    found = C.findings(_inputs(tmp_path, config), one)  # stray second-model inputs are not read
    assert set(found.measured["examples_robust_all_perturbations"]) == {"main-m"}
    assert found.notes[0].startswith(f"Ours: {model_label(config['models'], 'main-m')}; seeds [1]; ")
    found = C.findings(_inputs(tmp_path, config, second=False), config)  # the second model's runs not given
    assert set(found.measured["examples_robust_all_perturbations"]) == {"main-m"}


def test_an_unreadable_printed_cell_is_left_out_of_its_conditions_mean():
    t4, t5, t7, t8 = _paper()
    t4 = t4.copy()
    first = t4.index[(t4["setting"] == "INSTRU-WO-EXAM") & (t4["condition"] == SI)][0]
    t4.loc[first, "mean"] = "?"
    m4 = C._condition_means(t4, "T5-3B")
    si = t4[(t4["setting"] == "INSTRU-WO-EXAM") & (t4["condition"] == SI)]["mean"].drop(first).astype(float)
    assert m4[(SI, WO)] == pytest.approx(si.mean()) and len(si) == 11
    effects, _ = C.paper_effects(t4, t5, t7, t8, CONDS)
    assert effects["random_instruction_with_examples_beats_correct_without"] == pytest.approx(45.575 - 43.025)
