"""Snakemake entry point: Tk-Instruct finetuning pairs (definition + 2 positive examples -> output)."""
from wobble.studies.instructions.splits import training_pairs
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

cfg = snakemake.params.cfg
with logged(snakemake), tracked(snakemake, config=cfg, seeds=cfg["seed"]):
    pairs = training_pairs(read_jsonl(snakemake.input[0]), cfg["seed"], cfg.get("n_instances_per_task"),
                           cfg.get("max_source_chars"))
    write_jsonl(snakemake.output[0], pairs)
