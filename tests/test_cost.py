"""What a study will cost before it runs (wobble.cost): model calls counted from a config, a time from measured
per-job seconds scaled by calls and model size, and the GPU-hours of the stated assumption; each against a hand
count."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, SNAKEMAKE
from wobble import cost
from wobble.config import validate_config
from wobble.resolve import resolve_file

SCHEMA = REPO / "schemas" / "config.schema.yaml"


def config(path: str = "config.yaml") -> dict:
    return validate_config(resolve_file(REPO / path), SCHEMA)


def test_first_token_calls_by_hand():
    # 16 questions x 10 shuffles x (5 constraint levels at T=0 + 2 sweep temperatures x 1 level)
    assert cost.model_calls(config(), "first_token") == {"smollm2-135m-instruct": 1120,
                                                         "qwen2.5-coder-0.5b-instruct": 1120}


def test_followup_calls_by_hand():
    # per model: 4 datasets x 12 items; plain runs share one initial answer per dataset and temperature.
    # Per dataset: 1 initial + 6 Direct (3 questions x A, B) + 1 Progressive x 3 + 1 neutral = 11 replies;
    # per focus dataset (3): 2 sweep temperatures x (1 initial + 1), 3 mitigations x 2 (own initial), 1 emotional
    # -> 11 + 4 + 6 + 1 = 22; MMLU 11. (3 x 22 + 11) x 12 = 924
    assert cost.model_calls(config(), "followup")["smollm2-135m-instruct"] == 924


def test_icl_bias_calls_by_hand():
    # 4 pairs x (baseline + 3 interventions x 2 targets) x 1 set x (2 cells x 32 + 3 content-free) = 4 x 7 x 67
    assert cost.model_calls(config(), "icl_bias") == {"gemma-270m": 1876, "gemma-270m-ni": 1876}


def test_instructions_calls_by_hand():
    # English 23 tasks x 1 instance, non-English 3 tasks x 2 instances: 29 prompts x 9 conditions.
    # Main model: x 2 settings = 522, + Para 23 x 3 instances x 4 conditions = 276, + DiversePrompt 186 -> 984;
    # second model (W-EXAM only): 261.
    calls = cost.model_calls(config(), "instructions")
    assert calls == {"gemma-270m-ni": 984, "qwen2.5-coder-0.5b-instruct": 261}


JOBS = {"first_token/infer_big_t0.00": 60.0, "first_token/infer_big_t0.70": 40.0, "first_token/infer_small_t0.00": 7.0,
        "first_token/label_big_t0.00": 10.0, "first_token/label_small_t0.00": 6.0, "first_token/table1": 4.0,
        "first_token/finetune_big": 999.0, "followup/infer_big_T0.5_mmlu": 500.0}


def test_measure_takes_the_largest_model_per_call_per_billion():
    rate = cost.measure(JOBS, "first_token", {"big": 50, "small": 50}, params_b={"big": 2.0, "small": 0.5})
    # (60 + 40) s / 50 calls / 2 B = 1 s per call per B; label jobs 16 s over 2 models; table 4 s once; finetune out
    assert rate == cost.Rate("big", 2.0, 50, 1.0, 8.0, 4.0)


def test_estimate_scales_by_calls_and_size_and_says_extrapolated():
    rate = cost.Rate("big", 2.0, 50, 1.0, 8.0, 4.0)
    est = cost.estimate("first_token", {"mine": 100}, {"mine": 3.0}, rate)
    assert est.job_s == 100 * 1.0 * 3.0 + 8.0 + 4.0  # 312 s
    assert est.wall_min == pytest.approx(312 / 2 / 60)
    assert est.gpu_h == pytest.approx(312 / 100 / 3600)
    assert est.notes == ()
    far = cost.estimate("first_token", {"mine": 1000}, {"mine": 14.0}, rate)
    assert far.notes == ("extrapolated: model size 7x the measured", "extrapolated: calls up to 20x the measured")
    assert cost.estimate("first_token", {"api": 10}, {"api": None}, rate).job_s is None


def test_line_names_calls_time_gpu_and_assumption():
    rate = cost.Rate("big", 2.0, 50, 1.0, 8.0, 4.0)
    text = cost.line(cost.Estimate("first_token", 1840, 2280.0), rate)
    assert text.startswith("first_token: 1,840 model calls, ~19 min on a 2-core CPU, ~0.0063 GPU-h (")
    assert "per-call time of big" in text and "assumes one GPU does the work of 100 CPU threads" in text
    assert "time not estimated" in cost.line(cost.Estimate("followup", 10, None), rate)


def test_reference_run_estimates_its_own_measured_time():
    """Measured against itself, the reference run's estimate is its jobs' seconds within a tenth (the smaller
    models are scaled from the largest by size)."""
    reference = config("configs/reference.yaml")
    jobs = cost.read_benchmarks(REPO / cost.REFERENCE_BENCHMARKS)
    for study in ("first_token", "followup", "icl_bias", "instructions"):
        rate = cost.measure(jobs, study, cost.model_calls(reference, study))
        calls = cost.model_calls(reference, study)
        est = cost.estimate(study, calls, {k: cost.REFERENCE_PARAMS_B[k] for k in calls}, rate)
        measured = sum(s for k, s in jobs.items() if k.startswith(f"{study}/") and "/finetune" not in k)
        assert est.job_s == pytest.approx(measured, rel=0.1), study


def test_check_config_prints_a_cost_line_per_study():
    out = subprocess.run([str(SNAKEMAKE.with_name("wobble")), "check-config", "configs/examples/hub.yaml"],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [x.strip() for x in out.stdout.splitlines() if x.strip().startswith("cost ")]
    assert [x.split(":")[0] for x in lines] == ["cost first_token", "cost followup"]
    assert "extrapolated: model size 4.7x the measured" in lines[0]
