"""Cluster hygiene of the rules: the steps that need no compute node run in the main Snakemake process
(`localrules`), never one that loads a model; a model job's memory and runtime follow the model's size
(wobble.models.sizing) unless `--set-resources` says otherwise; a paper-scale run refuses hub models not pinned to a
commit before its first job, while a dry run plans them and warns."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import copy_workflow, run_snakemake
from test_slurm import declared_localrules, parse_plan
from wobble.models.sizing import job_resources

pytestmark = pytest.mark.e2e

# Steps that must stay out of SLURM: downloads (compute nodes often have no internet), tables, figures, ledgers,
# scorecards, the provenance bundle.
MUST_BE_LOCAL = {"acquire", "prepare", "render_table", "render_figure", "study_findings", "findings", "scorecard",
                 "provenance_bundle"}
PINNED = "0123456789abcdef0123456789abcdef01234567"  # a well-formed sha for the test's own config: nothing downloads


def test_local_rules_load_no_model(tmp_path, mirror):
    local = declared_localrules()
    assert MUST_BE_LOCAL <= local, MUST_BE_LOCAL - local
    copy_workflow(tmp_path)
    proc = run_snakemake(tmp_path, "-n", timeout=300)  # Snakemake refuses a localrules name that is no rule
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    jobs = parse_plan(proc.stdout)
    planned = {job.rule for job in jobs}
    assert MUST_BE_LOCAL <= planned
    loads_model = {job.rule for job in jobs if job.runs_model} | {"materialize_model"}
    assert not loads_model & local, f"rules that load a model run outside SLURM: {loads_model & local}"
    assert "finetune" in loads_model and any(r.endswith("_infer") for r in loads_model)


def _paper_config(tmp_path, pin: bool) -> None:
    """configs/paper.yaml with every hub model at a commit (``pin``) or at ``main``."""
    copy_workflow(tmp_path, "configs/paper.yaml")
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    for spec in cfg["models"].values():
        if spec.get("source") == "hub":
            spec["revision"] = PINNED if pin else "main"
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_a_70b_models_jobs_ask_more_than_a_7bs_and_set_resources_wins(tmp_path, mirror):
    _paper_config(tmp_path, pin=True)
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    models = ("llama2-70b-chat", "llama2-7b-chat")
    targets = [f"results/first_token/predictions/{m}/t0.00.jsonl" for m in models]
    plan = run_snakemake(tmp_path, "-n", *targets, "--set-resources", "materialize_model:mem_mb=4321", timeout=300)
    assert plan.returncode == 0, (plan.stdout + plan.stderr)[-3000:]
    infer = {job.inputs[0].rsplit("/", 1)[1]: job.resources for job in parse_plan(plan.stdout)
             if job.rule == "first_token_infer"}
    big, small = infer["llama2-70b-chat"], infer["llama2-7b-chat"]
    assert big["mem_mb"] > 7 * small["mem_mb"] and big["runtime"] > 5 * small["runtime"], (big, small)
    for key in models:
        expected = job_resources(cfg, "first_token_infer", [key])
        assert {k: infer[key][k] for k in expected} == expected
    assert big["mem_mb"] == 136000 and small["mem_mb"] == 17000  # 138e9 and 13.4e9 bytes of weights + 4 GiB
    materialize = [job for job in parse_plan(plan.stdout) if job.rule == "materialize_model"]
    assert len(materialize) == 2 and all(job.resources["mem_mb"] == 4321 for job in materialize)
    assert all(job.resources["disk_mb"] >= 40000 for job in materialize)  # sized, not overridden


def test_a_dialogue_jobs_runtime_follows_the_items_of_its_selection(tmp_path, mirror):
    """A dry run bounds a followup dialogue job by the largest dataset (2,270 items a run); once the job's item
    selection exists, Snakemake evaluates its resources again and the job asks for its own items' time."""
    _paper_config(tmp_path, pin=True)
    target = "results/followup/predictions/vicuna-13b-v1.3/T0/strategyqa/direct_CA_none.jsonl"

    def runtime():
        plan = run_snakemake(tmp_path, "-n", target, timeout=300)
        assert plan.returncode == 0, (plan.stdout + plan.stderr)[-3000:]
        (job,) = [job for job in parse_plan(plan.stdout) if job.rule.startswith("followup_infer_vicuna")]
        return job.resources["runtime"]

    assert runtime() == 110  # 30 + 6 min per B x 13 B x 1 run
    selection = tmp_path / "results" / "followup" / "items" / "strategyqa.json"
    selection.parent.mkdir(parents=True)
    selection.write_text(json.dumps({"dataset": "strategyqa", "seed": 0, "eval": list(range(227)), "heldout": []}))
    assert runtime() == 40  # 30 + 6 x 13 x 227 / 2,270 = 37.8


def test_a_paper_scale_run_refuses_unpinned_hub_models_before_any_job(tmp_path, mirror):
    target = "resources/prepared/gsm8k.jsonl"
    _paper_config(tmp_path, pin=False)
    plan = run_snakemake(tmp_path, "-n", target, timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "scale 'paper' with hub models not pinned to a commit: t5-3b (main)" in plan.stdout + plan.stderr
    run = run_snakemake(tmp_path, target, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert ("config error at 'models.t5-3b.revision': scale 'paper' needs every hub model pinned to a 40-hex "
            "commit sha, got 'main' (also unpinned: t5-11b 'main'") in out, out[-3000:]
    assert not (tmp_path / "resources" / "data").exists()  # no job ran

    pinned = tmp_path / "pinned"
    pinned.mkdir()
    _paper_config(pinned, pin=True)
    run = run_snakemake(pinned, target, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "not pinned" not in run.stdout + run.stderr and (pinned / target).is_file()


def test_a_compute_node_job_runs_with_the_hub_offline_and_names_the_fetch_command(tmp_path, mirror):
    """A job as a cluster node runs it (Snakemake's remote mode) gets HF_HUB_OFFLINE=1 from the workflow: a hub model
    not fetched first stops in one line naming `wobble fetch-models` with the run's config, no traceback."""
    import os
    import subprocess

    from conftest import SNAKEMAKE

    copy_workflow(tmp_path)
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    cfg["models"]["hubm"] = {"source": "hub", "id": "wobble-tests/not-fetched", "revision": PINNED, "kind": "causal"}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"} | {"HF_HOME": str(tmp_path / "hf")}
    job = subprocess.run([str(SNAKEMAKE), "--mode", "remote", "--target-jobs", "materialize_model:model=hubm",
                          "--cores", "1", "--nolock", "--configfile", "run.yaml"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert job.returncode != 0
    line = ("wobble: model 'hubm': could not get 'wobble-tests/not-fetched' at revision '" + PINNED + "' from the "
            "Hugging Face Hub: not in the local Hugging Face cache and HF_HUB_OFFLINE is set; run `wobble "
            "fetch-models --configfile run.yaml` on a machine with internet (a login node) first")
    assert line in job.stderr and "Traceback" not in job.stderr, job.stderr[-3000:]
    assert (tmp_path / "logs" / "models" / "hubm.log").read_text().strip().startswith(line)


# The plan's GPU-hours at the slow end (docs/cluster.md, "Compute plan at paper scale"): 211, plus the 2-GPU models'
# second GPU (232), with followup's replies at the 256-token cap (110 in place of 41): 301.
PLAN_GPU_HOURS_HIGH = 301
#: The jobs' first attempts ask for at least the plan's slow end and at most this factor over it (each rule's jobs
# sized as its largest, a dry run's dialogue jobs as 2,270 items a run, 30 minutes to start and load each).
REQUEST_FACTOR = 2.5


def test_the_paper_plans_gpu_hours_and_its_jobs_requests_agree(tmp_path, mirror):
    _paper_config(tmp_path, pin=True)
    plan = run_snakemake(tmp_path, "-n", "--profile", "profiles/slurm", timeout=300)
    assert plan.returncode == 0, (plan.stdout + plan.stderr)[-3000:]
    gpu_jobs = [job for job in parse_plan(plan.stdout) if job.resources.get("gpu")]
    hours = sum(job.resources["runtime"] * job.resources["gpu"] for job in gpu_jobs) / 60
    assert len(gpu_jobs) == 146
    assert PLAN_GPU_HOURS_HIGH <= hours <= REQUEST_FACTOR * PLAN_GPU_HOURS_HIGH, hours
    assert max(job.resources["runtime"] for job in parse_plan(plan.stdout)) <= 2880  # the per-job cap
    assert all(job.resources.get("gpu_mem_gib") for job in gpu_jobs)
