"""Snakemake entry point: run the backend probe (wobble.probe) for one model."""
from wobble.backends import load_backend
from wobble.io import read_jsonl, write_jsonl
from wobble.probe import run_probe, select_records
from wobble.provenance import tracked
from wobble.snake import logged

with logged(snakemake), tracked(snakemake, config={"probe": snakemake.params.probe, "model": snakemake.params.spec}):
    cfg = snakemake.params.probe
    backend = load_backend(snakemake.input.model, snakemake.wildcards.model,
                           batch_size=snakemake.params.spec.get("batch_size"))
    records = select_records(read_jsonl(snakemake.input.data), cfg["n_records"], snakemake.input.data)
    write_jsonl(snakemake.output[0], run_probe(backend, records, cfg["max_new_tokens"]))
