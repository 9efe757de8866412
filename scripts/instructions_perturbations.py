"""Snakemake entry point: every perturbation applied by our code to task1557's definition (Table 3)."""
from wobble.studies.instructions.pipeline import TABLE3_TASK, make_proposer, perturbation_examples
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged

p = snakemake.params
with logged(snakemake), tracked(snakemake, config={"masked_lm": p.masked_lm, "proposer": p.proposer_key}, seeds=p.seed):
    tasks = {t["task"]: t for t in read_jsonl(snakemake.input.tasks)}
    pool = {t: r["definition"] for t, r in tasks.items() if r["definition"] and r["split"] == "default"}
    proposer = make_proposer(p.masked_lm, snakemake.input.get("proposer"), p.proposer_key)
    write_json(snakemake.output[0], perturbation_examples(tasks[TABLE3_TASK], pool, p.seed, proposer))
