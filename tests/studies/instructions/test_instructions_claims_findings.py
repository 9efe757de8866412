"""The instructions claims against the paper and from prediction files: the English claims by hand on ten tasks,
the paper's effects from its tables (claims_paper.py) and the paper passing its own rows, and the wiring of
findings() from the runs and the config to the ledger."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

from wobble.errors import DataError
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions import claims_paper as P
from wobble.studies.instructions.claims_measure import COLUMNS

from instructions_claims_tables import CONDS, SI, SW, W, WO, english_fixture, rec, table

REPO = Path(__file__).resolve().parents[3]


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


def test_findings_read_each_models_training_from_its_model_spec(tmp_path, monkeypatch):
    config = _config()
    config["models"]["main-m"] = {"finetune": {"base": "tiny", "data": "superni_train", "method": "lora"}}
    rows = {r["row_id"]: r for r in C.findings(_inputs(tmp_path, config), config).rows()}
    assert "trained on superni_train" in rows["in-09-mainm"]["precondition"]  # declared on every row
    seen, measure = [], C.measure
    monkeypatch.setattr(C, "measure", lambda *a, **k: seen.append(k["trained"]) or measure(*a, **k))
    C.findings(_inputs(tmp_path, config), config)
    assert seen == [{"main-m": "superni_train", "second-m": None}]


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
