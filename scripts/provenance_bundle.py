"""Snakemake entry point of `provenance_bundle` (rules/report.smk): the chain records a fresh clone audits
(wobble.provenance.chain_records over the study's committed outputs), one JSON line per uncommitted file."""
from wobble.io import write_jsonl
from wobble.paths import results_root
from wobble.provenance import chain_records
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
with logged(sm):
    records = chain_records(list(sm.input), results_root(sm.config))
    print(f"{write_jsonl(sm.output[0], records)} upstream records for {len(list(sm.input))} outputs")
