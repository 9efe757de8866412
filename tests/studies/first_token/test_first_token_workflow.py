"""Config hygiene of the first_token rules, end to end: a rule re-runs only when a key it
reads changes. The prompts and one model's greedy predictions are made for real on configs/smoke.yaml
(tiny-causal); then ``snakemake -n`` shows what a config change would re-run."""

from __future__ import annotations

import pytest
import yaml

from conftest import copy_workflow, run_snakemake
from support import planned_jobs

pytestmark = pytest.mark.e2e

PROMPTS = "results/first_token/splits/prompts.jsonl"
GREEDY = "results/first_token/predictions/tiny-causal/t0.00.jsonl"
SWEEP = "results/first_token/predictions/tiny-causal/t0.90.jsonl"


def _edit(run_yaml, **changes):
    cfg = yaml.safe_load(run_yaml.read_text())
    cfg["first_token"].update(changes)
    run_yaml.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return cfg["first_token"]


def test_adding_a_temperature_plans_its_inference_only(tmp_path, mirror):
    run_yaml = copy_workflow(tmp_path)
    made = run_snakemake(tmp_path, GREEDY, timeout=900)
    assert made.returncode == 0, made.stderr[-4000:]
    assert (tmp_path / PROMPTS).is_file() and planned_jobs(run_snakemake(tmp_path, "-n", GREEDY)) == {}

    # a new sweep temperature, and keys neither the prompts nor the greedy inference read
    section = yaml.safe_load(run_yaml.read_text())["first_token"]
    _edit(run_yaml, temperatures=[*section["temperatures"], 0.9], bootstrap={"n": 77, "seed": 3},
          judge_max_new_tokens=3)
    dry = run_snakemake(tmp_path, "-n", GREEDY, SWEEP)
    assert dry.returncode == 0, dry.stderr[-4000:]
    assert planned_jobs(dry) == {"first_token_infer": 1}

    # a key the prompts read re-plans the prompts and the inference (the check can fail)
    _edit(run_yaml, n_shuffles=section["n_shuffles"] + 1)
    jobs = planned_jobs(run_snakemake(tmp_path, "-n", GREEDY))
    assert {"first_token_prompts", "first_token_infer"} <= set(jobs)
