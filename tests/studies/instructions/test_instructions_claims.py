"""The instructions study's claims measured on hand-made predictions (EM: 100 when output == reference).

Instance ``i`` belongs to task ``t{i // 2}`` (two instances per task, as the default run), so 20 instances
make 10 tasks; numbers below are worked out by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wobble.errors import DataError
from wobble.report.claims import verdict
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M

REPO = Path(__file__).resolve().parents[3]
CONDS = ["original", *C.PERTURBATIONS]
CLAIM = {c.id: c for c in C.CLAIMS}


def rec(i, correct, task=None, seed=1, **extra):
    task = task or f"t{i // 2}"
    return {"task": task, "instance_id": f"{task}-{i}", "output": "yes" if correct else "no", "references": ["yes"],
            "metric": "exact_match", "language": "English", "seed": seed, **extra}


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


def test_instance_score_uses_the_category_metric():
    assert C.instance_score(rec(0, True)) == 100.0
    r = {"output": "the cat sat", "references": ["the cat"], "metric": "rougeL", "language": "English"}
    assert C.instance_score(r) == pytest.approx(100 * 0.8)  # LCS 2, P 2/3, R 1 -> F 0.8


def test_score_matrix_pairs_instances_and_averages_seeds():
    runs = {("original", "wo_exam"): [rec(0, True, seed=1), rec(0, False, seed=2), rec(1, True)],
            ("shuffle_words", "wo_exam"): [rec(0, False)]}
    m, dropped = C.score_matrix(runs, [("original", "wo_exam"), ("shuffle_words", "wo_exam")])
    assert m.tolist() == [[50.0, 0.0]] and dropped == 1


def test_english_claims_by_hand_on_ten_tasks():
    got = C.measure_model(english_fixture(), {}, [], conditions=CONDS, n_boot=300, seed=0, cap=32)
    # SI: per task, drop(SI) - drop(p) = score(p) - score(SI): t1..t6 100 - 0, the rest 0 -> mean 60 for each p
    m = got["shuffle_instructions_largest_drop"]
    assert m.effect == pytest.approx(60.0) and m.n_items == 10 and m.population == 119 and m.applicable
    assert m.ci_low > 0 and verdict(CLAIM["shuffle_instructions_largest_drop"], m)[0] == "reproduced"
    assert "intersection" in m.interval and "cluster bootstrap over tasks" in m.interval
    assert m.precondition_note == "original, INSTRU-WO-EXAM: above 0 on 9 of 10 tasks"
    # W-EXAM drops: 0 for 7 perturbations, 90 - 80 = 10 for SI -> mean 10 / 8 = 1.25 (close: < 5)
    r = got["examples_robust_all_perturbations"]
    assert r.effect == pytest.approx(1.25)
    # WO drops 20 x 7 and 90 - 10 = 80 -> mean 27.5; minus the W mean 1.25 -> 26.25
    assert got["demonstrations_minimize_perturbations"].effect == pytest.approx(26.25)
    assert verdict(CLAIM["demonstrations_minimize_perturbations"], got["demonstrations_minimize_perturbations"])[0] \
        == "reproduced"
    # SI with examples (80) - original without (90) = -10
    assert got["random_instruction_with_examples_beats_correct_without"].effect == pytest.approx(-10.0)
    assert got["paraphrase_keeps_performance"] is None and got["plm_prompts_work_poorly"] is None


def test_a_contrast_equal_on_every_task_is_degenerate_not_certain():
    # every word- and sentence-level perturbation scores alike on every task: the contrast is 0 on each task, so
    # every resample gives 0 and the interval [0, 0] would claim certainty
    got = C.measure_model(english_fixture(), {}, [], conditions=CONDS, n_boot=100, seed=0)
    for cid in ("sentence_level_less_than_word_level", "shuffle_words_worst_word_level"):
        m = got[cid]
        assert m.effect == pytest.approx(0.0) and m.degenerate and m.note.startswith("no spread over tasks")
        assert m.ci_low is None and m.ci_high is None  # no zero-width interval, so no "detectable 0.00"
        assert verdict(CLAIM[cid], m)[0] == "inconclusive"


def test_the_bootstrap_resamples_tasks_not_instances():
    # task a: both instances gain 100 under the perturbation's complement; task b: none. Resampling the 2 tasks
    # gives a mean of 0, 50 or 100 only; resampling the 4 instances would also give 25 and 75.
    table = M.ScoreTable(np.array([[100.0, 0.0], [100.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), ("a", "a", "b", "b"),
                         (("original", "w_exam"), ("shuffle_words", "w_exam")), 0)
    contrast = M.Contrast(table.columns, lambda m: m[("original", "w_exam")] - m[("shuffle_words", "w_exam")])
    point, lo, hi = M.contrast_interval(table, contrast, n_boot=400, seed=1)
    assert point == pytest.approx(50.0) and (lo, hi) == (pytest.approx(0.0), pytest.approx(100.0))


def test_every_contrast_takes_the_smallest_bounds():
    # WO: original right everywhere; shuffle words on 0..9 (t0-t4); delete words everywhere; delete stopwords on
    # 10..19 (t5-t9). drop(SW) - drop(DW) = score(DW) - score(SW): 0 on t0-t4, 100 on t5-t9 -> 50;
    # drop(SW) - drop(DS): -100 on t0-t4, +100 on t5-t9 -> 0. Smallest: 0, and its low bound is below 0.
    runs = runs_from({("original", "wo_exam"): 20, ("shuffle_words", "wo_exam"): range(10),
                      ("delete_words", "wo_exam"): 20, ("delete_stopwords", "wo_exam"): range(10, 20)})
    conds = ["original", "shuffle_words", "delete_words", "delete_stopwords"]
    m = C.measure_model(runs, {}, [], conditions=conds, n_boot=400, seed=0)["shuffle_words_worst_word_level"]
    assert m.effect == pytest.approx(0.0) and m.ci_low < 0 < m.ci_high and not m.degenerate
    one = C.measure_model(runs, {}, [], conditions=["original", "shuffle_words", "delete_words"], n_boot=400,
                          seed=0)["shuffle_words_worst_word_level"]
    assert one.effect == pytest.approx(50.0) and one.ci_low > 0 and m.ci_high <= one.ci_high


def test_off_the_floor_means_at_least_half_the_tasks_above_zero():
    assert M.off_floor({"a": 0.0, "b": 5.0}) == (1, 2, True)
    assert M.off_floor({"a": 0.0, "b": 0.0, "c": 1.0}) == (1, 3, False)
    assert M.off_floor({}) == (0, 0, False)


def test_a_model_at_the_floor_without_examples_gets_not_applicable():
    # WO original right only on instances 0..3 (t0, t1): 2 of 10 tasks above 0 -> the WO claims do not apply;
    # the W-EXAM claim still does
    runs = english_fixture()
    runs[("original", "wo_exam")] = [rec(i, i < 4) for i in range(20)]
    got = C.measure_model(runs, {}, [], conditions=CONDS, n_boot=50, seed=0)
    m = got["shuffle_instructions_largest_drop"]
    assert not m.applicable and verdict(CLAIM["shuffle_instructions_largest_drop"], m)[0] == "not applicable"
    assert "above 0 on 2 of 10 tasks" in m.precondition_note
    d = got["demonstrations_minimize_perturbations"]  # both settings compared: the WO one fails
    assert not d.applicable and "INSTRU-W-EXAM: above 0 on 9 of 10" in d.precondition_note
    assert got["examples_robust_all_perturbations"].applicable


def test_cut_generations_per_condition():
    runs = {("original", "w_exam"): [rec(0, True, finish_reason="length"), rec(1, True, finish_reason="stop")],
            ("shuffle_words", "w_exam"): [rec(0, True, finish_reason="stop"), rec(1, True, finish_reason="stop")]}
    text = M.cut_text(runs, list(runs), 32)
    assert text == ("generations cut at the 32-token cap: 1 of 4 (25%); per condition: original/W 1/2; "
                    "none in the others")
    assert "no finish_reason" in M.cut_text({("original", "w_exam"): [rec(0, True)]}, [("original", "w_exam")], 32)


def test_paraphrase_spread_and_prompt_claims_by_hand():
    # Para: tasks a, b with 10 instances; original 8 right, new instructions 8, 7, 9 -> per task 80 vs 80, 70, 90
    para = {(c, "w_exam"): [rec(i, i < k, task=t) for t in ("a", "b") for i in range(10)]
            for c, k in zip(C.PARA_CONDITIONS, (8, 8, 7, 9))}
    # DiversePrompt: task x prompts 100 and 0 (std 50, mean 50); task y 100 and 100 (std 0, mean 100)
    diverse = [rec(0, True, task="x", prompt_index=0), rec(0, False, task="x", prompt_index=1),
               rec(0, True, task="y", prompt_index=0), rec(0, True, task="y", prompt_index=1)]
    got = C.measure_model({}, para, diverse, conditions=["original"], n_boot=200)
    p = got["paraphrase_keeps_performance"]
    assert p.effect == pytest.approx(80.0 - 80.0) and p.n_items == 2 and p.population == 23
    assert p.precondition_note == "Para-Instructions original, INSTRU-W-EXAM: above 0 on 2 of 2 tasks"
    s = got["no_demonstrations_larger_spread"]
    para_std = float(np.std([80, 70, 90]))  # 8.165: over the 3 new instructions, as Table 7's "reph." std
    assert s.effect == pytest.approx(25.0 - para_std) and s.n_items == 2 and s.applicable
    # PLM prompts: DiversePrompt mean (50 + 100) / 2 = 75; Para mean over 4 instructions (80+80+70+90)/4 = 80
    assert got["plm_prompts_work_poorly"].effect == pytest.approx(-5.0)
    assert got["examples_robust_all_perturbations"] is None


def test_missing_conditions_give_no_measurement():
    got = C.measure_model(runs_from({("original", "wo_exam"): 5}), {}, [], conditions=["original"], n_boot=10)
    assert all(v is None for v in got.values())


def _paper():
    from wobble.report.cells import read_paper

    return [read_paper(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES]


def test_the_paper_passes_its_own_rows():
    from wobble.report.claims import Findings

    effects, texts = C.paper_effects(*_paper(), CONDS)
    assert set(effects) == {c.id for c in C.CLAIMS}
    found = Findings("t", C.CLAIMS, {}, texts, (), effects)
    assert found.paper_failures() == []
    # Table 4, T5-3B, means over the 12 categories: SI drop 43.02 - 7.75 = 35.28; next largest (shuffle words)
    # 43.02 - 22.32 = 20.70 -> 14.57
    assert effects["shuffle_instructions_largest_drop"] == pytest.approx(14.567, abs=1e-3)
    # W-EXAM drops 0.75 0.69 0.10 0.94 1.93 0.08 0.11 8.36 -> mean 1.62 (< 5); T5-11B (Table 5) 3.3
    assert effects["examples_robust_all_perturbations"] == pytest.approx(1.621, abs=1e-3)
    assert texts["examples_robust_all_perturbations"].endswith("T5-11B, Table 5: 3.3")
    # Table 8 T5-3B mean over 24 tasks 14.05; Table 7 T5-3B mean over 4 instructions per category 56.13
    assert effects["plm_prompts_work_poorly"] == pytest.approx(-42.08, abs=0.01)


def test_the_paper_effect_uses_only_the_conditions_the_run_has():
    # without shuffle words the next largest WO drop is delete stopwords': 43.02 - 36.81 = 6.21 -> 35.28 - 6.21
    effects, _ = C.paper_effects(*_paper(), ["original", "delete_stopwords", "shuffle_instructions"])
    assert effects["shuffle_instructions_largest_drop"] == pytest.approx(35.28 - 6.21, abs=0.02)
    assert "sentence_level_less_than_word_level" not in effects and "shuffle_words_worst_word_level" not in effects


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


def test_findings_give_the_second_model_rows_for_the_claims_it_ran(tmp_path):
    config = _config()
    runs = english_fixture()
    root = tmp_path / "results/instructions/predictions"
    inputs = {"english": [], "second_english": [], "para": [], "diverse": []}
    for (cond, setting), recs in runs.items():
        if cond in config["instructions"]["conditions"]:
            inputs["english"].append(_write(root / f"main-m/english/{cond}/{setting}/seed1.jsonl", recs))
            if setting == "w_exam":
                inputs["second_english"].append(_write(root / f"second-m/english/{cond}/{setting}/seed1.jsonl", recs))
    inputs.update({f"paper_{t}": str(REPO / "paper" / "instructions" / f"{t}.csv") for t in C.PAPER_TABLES})
    found = C.findings(inputs, config)
    assert set(found.measured["examples_robust_all_perturbations"]) == {"main-m", "second-m"}
    assert set(found.measured["shuffle_instructions_largest_drop"]) == {"main-m"}
    assert found.measured["paraphrase_keeps_performance"] == {"main-m": None}
    rows = found.rows()
    robust = [r for r in rows if r["claim"] == "examples_robust_all_perturbations"]
    assert [r["model"] for r in robust] == ["main-m", "second-m"] and robust[0]["population"] == 119
    # the paper's effect over this run's two perturbations: W-EXAM drops 1.93 (SW) and 8.36 (SI) -> 5.15
    assert found.paper_effects["examples_robust_all_perturbations"] == pytest.approx(5.146, abs=1e-3)


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
