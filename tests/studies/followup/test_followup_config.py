"""followup config: the section's schema defaults and the runs a config asks for, the run groups that make each
file with one rule, the judge's runs, the neutral control's, bad configs stopped with one line before any job,
and run labels resolved to conditions."""

from __future__ import annotations

import re

import pytest

from followup_sections import ROOT, section, validated
from wobble.errors import ConfigError
from wobble.studies.followup import layout as L
from wobble.studies.followup.prompts import BENCHMARKS


def test_schema_defaults_and_the_runs_a_default_config_asks_for(monkeypatch):
    sec = validated({"models": ["student"]}, monkeypatch)["followup"]
    assert sec["datasets"] == list(BENCHMARKS) and sec["variants"] == ["A", "B", "C"] and sec["gate"] == "all"
    assert sec["temperature"] == 0.5 and sec["temperatures"] == [0, 1.0] and sec["progressive_sets"] == ["A", "Max", "Min"]
    assert sec["neutral_control"] is True
    runs = L.runs(sec, "student")
    # 8 datasets x (9 direct + 3 progressive); 3 focus datasets x (2 temperatures + 8 mitigations x 3 + 2 + 1);
    # 8 datasets x 1 neutral control
    assert len(runs) == 8 * 12 + 3 * (2 + 24 + 2 + 1) + 8 and len(set(runs)) == len(runs)
    assert L.Run("gsm8k", "direct_NA_none", "0.5") in runs
    assert L.Run("multiarith", "direct_LB_fewshot_cot_followup", "0.5") in runs
    assert L.Run("coin_flip", "direct_OA_none", "1") in runs and L.Run("strategyqa", "direct_EA_none", "0.5") in runs
    assert all(re.fullmatch(r"(direct|progressive)_[A-Za-z.]+_[a-z_]+", r.label) for r in runs)
    assert L.run_path(ROOT, "m", runs[0]) == "results/followup/predictions/m/T0.5/gsm8k/direct_CA_none.jsonl"


def test_mitigation_variants_narrow_only_the_mitigation_runs(monkeypatch):
    """``mitigation_variants`` takes the mitigation runs to its annotators; the plain Direct Form keeps ``variants``."""
    sec = validated(section(datasets=["coin_flip"], variants=["A", "B"], mitigations=["cot_both", "fewshot"],
                            progressive_sets=["A"], progressive_mitigations=[], temperatures=[], emotional=False,
                            neutral_control=False, mitigation_variants=["A"]), monkeypatch)["followup"]
    labels = {r.label for r in L.runs(sec, "student")}
    assert labels == {"direct_CA_none", "direct_CB_none", "direct_OA_none", "direct_OB_none", "direct_LA_none",
                      "direct_LB_none", "progressive_A_none", "direct_OA_cot_both", "direct_OA_fewshot"}
    sec["mitigation_variants"] = None  # the default: every variant, as the paper's Table 6
    labels = {r.label for r in L.runs(sec, "student")}
    assert {"direct_OB_cot_both", "direct_OB_fewshot"} <= labels and len(labels) == 11
    with pytest.raises(ConfigError, match=r"'followup.mitigation_variants\[0\]': expected one of \['A', 'B', 'C'\]"):
        validated(section(mitigation_variants=["D"]), monkeypatch)


def test_every_run_has_one_job_rule_a_run_group_a_sweep_group_or_followup_infer(monkeypatch):
    """One job per model and dataset asks every run at the model's own temperature except the Max / Min
    Progressive ones (they wait for the extremes of these), the neutral control included; one job per model,
    dataset and other temperature asks the sweep's runs there; rule followup_infer (its run wildcard limited to
    Max / Min) makes the rest, so each file has exactly one rule."""
    sec = validated(section(datasets=["coin_flip", "gsm8k"], variants=["A", "B"], mitigations=["cot_both"],
                            progressive_sets=["A", "Max"], temperatures=[0, 1], mitigation_variants=["A"]),
                    monkeypatch)["followup"]
    groups = L.run_groups(sec)
    assert [(m, d) for m, d, _ in groups] == [("student", "coin_flip"), ("student", "gsm8k")]
    grouped = [r for _, _, rs in groups for r in rs]
    assert len(grouped) == len(set(grouped)) and {r.temperature for r in grouped} == {"0.5"}
    assert {r.label for r in groups[1][2]} == {"direct_CA_none", "direct_CB_none", "direct_OA_none",
                                               "direct_OB_none", "direct_LA_none", "direct_LB_none",
                                               "progressive_A_none", "direct_NA_none"}
    assert L.sweep_groups(sec) == [("student", "coin_flip", [L.Run("coin_flip", "direct_OA_none", "0")]),
                                   ("student", "coin_flip", [L.Run("coin_flip", "direct_OA_none", "1")])]
    jobs = L.infer_groups(sec)
    assert [name for name, *_ in jobs] == ["followup_infer_student_coin_flip", "followup_infer_student_gsm8k",
                                           "followup_infer_student_coin_flip_T0", "followup_infer_student_coin_flip_T1"]
    in_jobs = [r for *_, rs in jobs for r in rs]
    assert len(in_jobs) == len(set(in_jobs))
    alone = set(L.runs(sec, "student")) - set(in_jobs)
    assert alone == {L.Run("coin_flip", "progressive_Max_none", "0.5"), L.Run("gsm8k", "progressive_Max_none", "0.5")}
    assert all(re.fullmatch(L.EXTREMES_RUN, r.label) for r in alone)
    assert not any(re.fullmatch(L.EXTREMES_RUN, r.label) for r in in_jobs)
    assert L.group_rule_name("qwen2.5-coder-0.5b-instruct", "coin_flip") == (
        "followup_infer_qwen2_5_coder_0_5b_instruct_coin_flip")
    assert L.group_rule_name("student", "coin_flip", "0.7") == "followup_infer_student_coin_flip_T0_7"


def test_the_judges_runs_are_asked_even_where_the_config_runs_no_such_question(monkeypatch):
    """Figure 5's judge labels the focus question's runs; a config without that question type still gets them
    asked, in the model's run group (no other rule makes them)."""
    sec = validated(section(datasets=["coin_flip"], question_types=["closed-ended"], variants=["A"],
                            progressive_sets=["A"]),
                    monkeypatch)["followup"]
    assert sec["judge_model"]
    judged = L.judge_runs(sec, "student")
    assert judged and not set(judged) <= set(L.runs(sec, "student"))
    assert set(judged) <= {r for _, _, rs in L.run_groups(sec) for r in rs}
    assert not set(judged) & {r for _, _, rs in L.run_groups({**sec, "judge_model": None}) for r in rs}


def test_the_neutral_control_is_one_run_of_each_models_run_group_on_every_dataset(monkeypatch):
    """followup.neutral_control (default on): on every dataset, focus or not, for every model, one run
    direct_NA_none at the model's own temperature, inside the run group of that model and dataset (no job of
    its own), never at Table 3's other temperatures, never judged; off, no such run."""
    keys = ("student", "tutor")
    sec = validated(section(models=list(keys), datasets=["mmlu", "coin_flip"], model_temperature={"tutor": 0.7},
                            temperatures=[0]), monkeypatch, keys)["followup"]
    groups = L.run_groups(sec)
    assert [(m, d) for m, d, _ in groups] == [(m, d) for m in keys for d in ("mmlu", "coin_flip")]
    grouped = {r for _, _, rs in groups for r in rs}
    for model, dataset, group in groups:
        control = [r for r in group if r.label == "direct_NA_none"]
        base = "0.7" if model == "tutor" else "0.5"
        assert control == [L.Run(dataset, "direct_NA_none", base)], (model, dataset)
        assert control[0] not in L.judge_runs(sec, model)
    assert all(r in grouped for m in keys for r in L.runs(sec, m) if r.label == "direct_NA_none")
    assert L.neutral_label() == "direct_NA_none"
    off = validated(section(models=list(keys), datasets=["mmlu", "coin_flip"], neutral_control=False), monkeypatch,
                    keys)["followup"]
    assert all(r.label != "direct_NA_none" for m in keys for r in L.runs(off, m))
    # the control adds one run to each group and changes no other run
    assert [[r for r in rs if r.label != "direct_NA_none"] for _, _, rs in groups] == [
        rs for _, _, rs in L.run_groups({**sec, "neutral_control": False})]


def test_judge_runs_are_the_focus_question_of_every_annotator_at_the_models_temperature(monkeypatch):
    """Figure 5's error examples (§3.3): StrategyQA closed-ended, CoinFlip open-ended, MultiArith leading, each
    prompt of followup.variants; a non-focus dataset (MMLU) and the other temperatures give none."""
    sec = validated(section(datasets=["mmlu", "coin_flip", "multiarith"], variants=["A", "B"], temperatures=[0]),
                    monkeypatch)["followup"]
    assert L.judge_runs(sec, "student") == [L.Run("coin_flip", "direct_OA_none", "0.5"),
                                            L.Run("coin_flip", "direct_OB_none", "0.5"),
                                            L.Run("multiarith", "direct_LA_none", "0.5"),
                                            L.Run("multiarith", "direct_LB_none", "0.5")]
    assert set(L.judge_runs(sec, "student")) <= set(L.runs(sec, "student"))


@pytest.mark.parametrize("override, expected", [
    ({"datasets": ["gsm9k"]}, r"'followup.datasets\[0\]': expected one of \['gsm8k', 'svamp'"),
    ({"question_types": ["sneaky"]}, r"'followup.question_types\[0\]': expected one of \['closed-ended'"),
    ({"variants": ["D"]}, r"'followup.variants\[0\]': expected one of \['A', 'B', 'C'\]"),
    ({"mitigations": ["prayer"]}, r"'followup.mitigations\[0\]': expected one of \['emotion_initial'"),
    ({"progressive_sets": ["Median"]}, r"'followup.progressive_sets\[0\]': expected one of \['A', 'B', 'C', 'Max'"),
    ({"paper_models": {"student": "GPT-5"}}, r"'followup.paper_models.student': expected one of \['ChatGPT'"),
    ({"paper_models": {"other": "ChatGPT"}}, r"'followup.paper_models.other': a model of followup.models"),
    ({"question_types": ["leading"]}, r"'followup.progressive_sets': Max / Min need followup.question_types"),
    ({"n_heldout": 2}, r"'followup.n_heldout': at least followup.shots \(4\) held-out items"),
    ({"temperature": 0, "temperatures": [0, 1]}, r"'followup.temperatures': the sweep's other temperatures only"),
    ({"judge": "student"}, r"^config: followup.judge is retired: use followup.judge_model$"),
    ({"models": ["nope"]}, r"'followup.models\[0\]': model key 'nope' is not defined"),
    ({"judge_model": "nope"}, r"'followup.judge_model': model key 'nope' is not defined"),
    ({"neutral_control": "yes"}, r"'followup.neutral_control': expected boolean, got str 'yes'"),
])
def test_bad_config_stops_before_any_job_with_one_line(monkeypatch, override, expected):
    with pytest.raises(ConfigError, match=expected):
        validated(section(**override), monkeypatch)


def test_model_keys_equal_but_for_punctuation_stop_before_any_job(monkeypatch):
    """Two keys that give one run-group rule name (layout.group_rule_name) would make Snakemake fail on a
    duplicate rule, far from the config; the config check names the second key instead."""
    keys = ("student", "stu.dent", "stu-dent")
    validated(section(models=["student", "stu.dent"]), monkeypatch, keys)
    with pytest.raises(ConfigError, match=r"'followup.models\[2\]': a model key that differs from 'stu.dent' "
                                          r"in more than punctuation .*got 'stu-dent'"):
        validated(section(models=list(keys)), monkeypatch, keys)


def test_resolving_run_labels():
    c, s = L.resolve("progressive_B_cot_both")
    assert c.id == "progressive_CB.OB.LB_cot_both" and s == "B"
    c, s = L.resolve("progressive_Max_none", {"Max": ["C", "A", "B"], "Min": ["A", "A", "A"]})
    assert c.id == "progressive_CC.OA.LB_none" and s == "Max"
    with pytest.raises(ConfigError, match="Direct-Form results to choose the Min set"):
        L.resolve("progressive_Min_none", {"Max": [], "Min": []})
    assert L.resolve("direct_EA_none")[0].rounds == (("emotional", "A"),)
