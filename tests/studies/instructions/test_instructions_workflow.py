"""Config hygiene of the instructions rules, end to end: a rule re-runs only when a key it
reads changes. The English splits and their predictions (one inference job for all conditions) are made for
real on configs/smoke.yaml (tiny-t5, no finetune); then ``snakemake -n`` shows what a config change would
re-run."""

from __future__ import annotations


import pytest
import yaml

from conftest import copy_workflow, run_snakemake
from support import planned_jobs

pytestmark = pytest.mark.e2e

SPLIT = "results/instructions/splits/english/original/w_exam/seed1.jsonl"
PREDICTIONS = "results/instructions/predictions/tiny-t5/english/original/w_exam/seed1.jsonl"




def _edit(run_yaml, **changes):
    cfg = yaml.safe_load(run_yaml.read_text())
    for path, value in changes.items():
        node = cfg["instructions"]
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    run_yaml.write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_generation_change_reruns_inference_only(tmp_path, mirror):
    run_yaml = copy_workflow(tmp_path)
    made = run_snakemake(tmp_path, PREDICTIONS, timeout=900)
    assert made.returncode == 0, made.stderr[-4000:]
    assert (tmp_path / SPLIT).is_file() and (tmp_path / PREDICTIONS).is_file()
    assert planned_jobs(run_snakemake(tmp_path, "-n", PREDICTIONS)) == {}

    # keys no split reads: max_new_tokens (infer), finetune, deviations (footnotes), other task sets' sizes
    _edit(run_yaml, max_new_tokens=5, finetune__max_steps=3, deviations=["changed"],
          diverse__n_examples_per_task=2, para__n_instances_per_task=2)
    dry = run_snakemake(tmp_path, "-n", PREDICTIONS)
    assert dry.returncode == 0, dry.stderr[-4000:]
    assert planned_jobs(dry) == {"instructions_infer_english": 1}  # one job: every English condition

    # a key the selection reads re-plans the selection, the split and the inference (the check can fail)
    _edit(run_yaml, selection_seed=7)
    jobs = planned_jobs(run_snakemake(tmp_path, "-n", PREDICTIONS))
    assert {"instructions_selection", "instructions_split", "instructions_infer_english"} <= set(jobs)
