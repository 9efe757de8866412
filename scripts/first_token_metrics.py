"""Snakemake entry point: metrics with bootstrap intervals, choice distributions and the paper's
per-shuffle summary, per (model, constraint, temperature)."""
from wobble.studies.first_token.aggregate import cell_metrics, choice_rows, mapping_rows
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
boot = sm.params.bootstrap
with logged(sm), tracked(sm, config={"bootstrap": boot}, seeds=boot["seed"]):
    records = [r for f in sm.input.labeled for r in read_jsonl(f)]
    write_jsonl(sm.output.metrics, cell_metrics(records, n_boot=boot["n"], seed=boot["seed"]))
    write_jsonl(sm.output.choices, choice_rows(records, n_boot=boot["n"], seed=boot["seed"]))
    write_jsonl(sm.output.mapping, mapping_rows(records))
