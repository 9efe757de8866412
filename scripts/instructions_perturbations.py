"""Snakemake entry point: every perturbation applied by our code to task1557's definition (Table 3)."""
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.instructions.pipeline import TABLE3_TASK, make_proposer, perturbation_examples
from wobble.studies.instructions.splits import shuffle_pool

p = snakemake.params.cfg
with logged(snakemake), tracked(snakemake, config=p, seeds=p["seed"]):
    tasks = {t["task"]: t for t in read_jsonl(snakemake.input.tasks)}
    proposer = make_proposer(snakemake.input.get("masked_lm"), snakemake.input.get("proposer"), p["proposer_model"])
    pool = shuffle_pool(tasks, "english")
    write_json(snakemake.output[0], perturbation_examples(tasks[TABLE3_TASK], pool, p["seed"], proposer))
