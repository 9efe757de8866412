"""instructions claims ledger: the finer behaviour of the declared claims (ids, directions, nulls, gates, checks),
the statistic each set of conditions gets, the paper's effects from its tables (claims_paper.py) and the
findings() wiring (what a mutation of claims.py / claims_paper.py would change). Numbers by hand in comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions import claims_paper as P

from test_instructions_claims import CONDS, _config, _inputs, _paper, _write, rec, table  # noqa: E402
from wobble.studies.instructions.claims_measure import COLUMNS

WO, W = "wo_exam", "w_exam"
SI, SW = "shuffle_instructions", "shuffle_words"
SPEC = {c.id: c for c in C.CLAIMS}


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
            "§3.1, Tables 4–5", "mean drop over the 8 perturbations, INSTRU-W-EXAM (close: < 5)"),
        "demonstrations_minimize_perturbations": (
            "Introduction; §3.1, Table 4",
            "mean over the 8 perturbations of drop(INSTRU-WO-EXAM) − drop(INSTRU-W-EXAM) (perturbations only: the run "
            "has no Para-Instructions without examples)"),
        "random_instruction_with_examples_beats_correct_without": (
            "§3.1, Table 4", "score(shuffle instructions, INSTRU-W-EXAM) − score(original, INSTRU-WO-EXAM)"),
        "paraphrase_keeps_performance": (
            "§3.2, Table 7", "original − mean of the 3 new instructions, Para-Instructions, INSTRU-W-EXAM (close: < 5)"),
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
        "floor in original/WO": null, "ceiling in original/WO": null}
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


def test_findings_read_each_models_training_from_its_model_spec(tmp_path, monkeypatch):
    config = _config()
    config["models"]["main-m"] = {"finetune": {"base": "tiny", "data": "superni_train", "method": "lora"}}
    rows = {r["row_id"]: r for r in C.findings(_inputs(tmp_path, config), config).rows()}
    assert "trained on superni_train" in rows["in-09-mainm"]["precondition"]  # declared on every row
    seen, measure = [], C.measure
    monkeypatch.setattr(C, "measure", lambda *a, **k: seen.append(k["trained"]) or measure(*a, **k))
    C.findings(_inputs(tmp_path, config), config)
    assert seen == [{"main-m": "superni_train", "second-m": None}]


def test_the_perturbations_are_the_papers_eight_in_its_levels():
    assert C.WORD_LEVEL == ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
    assert C.SENTENCE_LEVEL == ("repeat_sentences", "shuffle_sentences")
    assert C.PERTURBATIONS == (*C.WORD_LEVEL, *C.SENTENCE_LEVEL, "shuffle_instructions")
    assert C.PARA_CONDITIONS == ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
    assert C.PARA == ("para/original", "para/paraphrase_1", "para/paraphrase_2", "para/paraphrase_3")


# ------------------------------------------------------------------------------------------ the statistics

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


# ------------------------------------------------------------------------------------------ the paper


def test_the_paper_column_names_each_table():
    effects, texts = P.paper_effects(C.CLAIMS, *_paper())
    assert texts == {
        "shuffle_instructions_largest_drop": "14.6 (T5-3B, Table 4)",
        "shuffle_words_worst_word_level": "14.5 (T5-3B, Table 4)",
        "sentence_level_less_than_word_level": "6.5 (T5-3B, Table 4)",
        "examples_robust_all_perturbations": "1.6 (T5-3B, Table 4); T5-11B, Table 5: 3.3",
        "demonstrations_minimize_perturbations": "7.7 (T5-3B, Table 4)",
        "random_instruction_with_examples_beats_correct_without": f"{effects['random_instruction_with_examples_beats_correct_without']:.1f} (T5-3B, Table 4)",
        "paraphrase_keeps_performance": "0.6 (T5-3B, Table 7)",
        "no_demonstrations_larger_spread": "1.4 (T5-3B: std 2.6 in Table 8 vs 1.2 in Table 7)",
        "plm_prompts_work_poorly": "-42.1 (T5-3B: mean 14.1 in Table 8 vs 56.1 in Table 7)",
    }


# Table 7, T5-3B, the 12 categories (AC CEC CR DAR WA TE DTT GEC TG KT OE QR): original; rephrased mean and std
T7_ORIG = [69.5, 69.2, 58.5, 48.7, 44.5, 44.8, 44.7, 85.0, 25.5, 73.2, 34.7, 81.0]
T7_REPH = [67.3, 69.3, 56.8, 43.3, 43.2, 52.7, 44.2, 84.3, 24.6, 72.0, 32.7, 81.3]
T7_STD = [1.0, 0.2, 1.6, 2.7, 1.9, 5.8, 0.3, 0.3, 0.2, 0.6, 0.1, 0.2]
# Table 8, T5-3B, the 24 DiversePrompt tasks: Σ mean 337.3, Σ std 63.1


def test_the_second_models_robustness_row_reads_t5_11b():
    # Table 5, T5-11B, W-EXAM category means: original 60.458; DS 56.765 DW 58.695 IW 58.625 RW 58.705 SW 54.179
    # RS 60.586 SS 60.349 SI 49.55 -> mean 57.182, drop 3.277 (< 5: the paper passes the second model's row too)
    effects, texts = P.paper_effects(C.CLAIMS, *_paper(), models=["a", "b"])
    robust = effects["examples_robust_all_perturbations"]
    assert robust == {"a": pytest.approx(1.621, abs=1e-3), "b": pytest.approx(3.277, abs=1e-3)}
    assert isinstance(effects["shuffle_instructions_largest_drop"], float)  # one model's paper: T5-3B
    assert texts["examples_robust_all_perturbations"] == "1.6 (T5-3B, Table 4); T5-11B, Table 5: 3.3"
    assert P.paper_effects(C.CLAIMS, *_paper(), models=["a"])[0]["examples_robust_all_perturbations"] == \
        pytest.approx(1.621, abs=1e-3)
    rows = C.measure(pd.DataFrame(columns=COLUMNS), ["a", "b"], CONDS, _paper(), n_boot=10)
    by = {(r["claim"], r["model"]): r for r in rows}
    assert [by[("examples_robust_all_perturbations", m)]["paper_verdict"] for m in "ab"] == ["reproduced"] * 2
    assert by[("examples_robust_all_perturbations", "b")]["paper_effect"] == pytest.approx(3.277, abs=1e-3)


def test_the_paper_effects_of_tables_7_and_8_by_hand():
    effects, _ = P.paper_effects(C.CLAIMS, *_paper())
    assert effects["paraphrase_keeps_performance"] == pytest.approx((sum(T7_ORIG) - sum(T7_REPH)) / 12)
    assert effects["no_demonstrations_larger_spread"] == pytest.approx(63.1 / 24 - sum(T7_STD) / 12)
    # the Para-Instructions side: per category the mean over its 4 instructions (original + 3 rephrased)
    para = np.mean([(o + 3 * r) / 4 for o, r in zip(T7_ORIG, T7_REPH)])
    assert effects["plm_prompts_work_poorly"] == pytest.approx(337.3 / 24 - para)


def test_a_printed_mean_and_std_become_three_versions_with_them():
    # 8, 10, 12: squared deviations 4 + 0 + 4 over n − 1 = 2 -> std 2, the statistic's (and the printed) one
    assert P._versions(10.0, 2.0) == [8.0, 10.0, 12.0]
    assert np.std(P._versions(10.0, 2.0), ddof=1) == pytest.approx(2.0) and P._versions(5.0, float("nan")) == [5.0] * 3
    f = P.prompt_frame(*_paper()[2:])
    assert set(f["cell"]) == {*C.PARA, "diverse"} and set(f["model"]) == {"paper"}
    assert len(f[f["cell"] == "diverse"]) == 24 * 3 and len(f[f["cell"] == "para/original"]) == 12


def test_the_paper_effects_of_table_4_are_the_same_statistics_on_its_category_means():
    t4 = _paper()[0]
    t4 = t4[t4["model"] == "T5-3B"]
    setting = {"INSTRU-WO-EXAM": "WO", "INSTRU-W-EXAM": "W"}
    means = {f"{c}/{setting[s]}": [g["mean"].astype(float).mean()] for (s, c), g in t4.groupby(["setting", "condition"])}
    effects, _ = P.paper_effects(C.CLAIMS, *_paper())
    for c in C.CLAIMS[:6]:  # linear in the means: the statistic of the category means is the mean over categories
        assert effects[c.id] == pytest.approx(c.statistic.point(table(means), "task")), c.id
    assert effects["random_instruction_with_examples_beats_correct_without"] == pytest.approx(45.575 - 43.025)


def _without(t: pd.DataFrame, condition: str) -> pd.DataFrame:
    return t[t["condition"] != condition]


def test_a_paper_table_lacking_a_condition_gives_no_effect_for_the_claims_that_need_it():
    t4, t5, t7, t8 = _paper()
    effects, texts = P.paper_effects(C.CLAIMS, _without(t4, SW), t5, t7, t8)
    needs_sw = {"shuffle_instructions_largest_drop", "shuffle_words_worst_word_level",
                "sentence_level_less_than_word_level", "examples_robust_all_perturbations",
                "demonstrations_minimize_perturbations"}
    assert not needs_sw & set(effects) and "random_instruction_with_examples_beats_correct_without" in effects
    _, texts = P.paper_effects(C.CLAIMS, t4, _without(t5, SW), t7, t8)  # no T5-11B value shown
    assert texts["examples_robust_all_perturbations"] == "1.6 (T5-3B, Table 4)"


def test_the_paper_reads_each_tables_model_and_only_its_two_settings():
    t4, t5, t7, t8 = _paper()
    other = t4.assign(model="T5-11B", mean="0")  # another model's rows, and a third setting, are not read
    third = t4.assign(setting="INSTRU-OTHER", mean="0")
    assert P.paper_effects(C.CLAIMS, pd.concat([t4, other, third]), t5, t7, t8) == \
        P.paper_effects(C.CLAIMS, t4, t5, t7, t8)
    assert P.english_frame(t4, "T5-11B").empty


def test_an_unreadable_printed_cell_leaves_its_category_out_of_the_contrasts_that_read_it():
    t4, t5, t7, t8 = _paper()
    t4 = t4.copy()
    first = t4.index[(t4["setting"] == "INSTRU-WO-EXAM") & (t4["condition"] == "original") & (t4["model"] == "T5-3B")][0]
    cat = t4.loc[first, "category"]
    t4.loc[first, "mean"] = "?"
    f = P.english_frame(t4, "T5-3B")
    assert not ((f["task"] == cat) & (f["cell"] == "original/WO")).any() and len(f) == 12 * 18 - 1
    effects, _ = P.paper_effects(C.CLAIMS, t4, t5, t7, t8)
    keep = _paper()[0]
    keep = keep[(keep["model"] == "T5-3B") & (keep["category"] != cat)]
    wo = keep[keep["setting"] == "INSTRU-WO-EXAM"].groupby("condition")["mean"].apply(lambda s: s.astype(float).mean())
    w = keep[keep["setting"] == "INSTRU-W-EXAM"].groupby("condition")["mean"].apply(lambda s: s.astype(float).mean())
    assert effects["random_instruction_with_examples_beats_correct_without"] == pytest.approx(w[SI] - wo["original"])


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


def test_findings_notes_say_what_was_run_and_claim_no_wider_pre_registration(tmp_path):
    from wobble.models.describe import model_label

    config = _config()
    found = C.findings(_inputs(tmp_path, config), config)
    labels = "; ".join(model_label(config["models"], k) for k in ("main-m", "second-m"))
    assert found.notes[0] == (f"Ours: {labels}; seeds [1]; the second model runs INSTRU-W-EXAM on the English tasks "
                              "only (as the paper's T5-11B), so its other rows are not measured.")
    assert found.notes[1].startswith("Unit: tasks (English: 1 per category x 2 instances; Para-Instructions: 10 "
                                     "instances per task; DiversePrompt: 1 example(s) per prompt)")
    assert "32 new tokens" in found.notes[3] and "ROUGE-L answers" in found.notes[3]
    assert "T5-11B's, Table 5" in found.notes[4]
    assert found.notes[5].startswith("Multiple comparisons: 9 claims x 2 model(s), each row at 95 %, with no "
                                     "family-wise correction across rows")
    assert not any("before any run" in n or "pre-regist" in n for n in found.notes)


def test_findings_read_a_second_models_runs_only_when_the_config_names_one_and_they_exist(tmp_path):
    config = _config()
    one = {**config, "instructions": {**config["instructions"], "models": ["main-m"]}}
    rows = C.findings(_inputs(tmp_path, config), one).rows()  # stray second-model inputs are not read
    assert {r["model"] for r in rows} == {"main-m"}
    rows = C.findings(_inputs(tmp_path, config, second=False), config).rows()  # its runs not given
    second = [r for r in rows if r["model"] == "second-m"]
    assert len(second) == len(C.CLAIMS) and all(r["reason"] == "not measured in this run" for r in second)
