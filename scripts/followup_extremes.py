"""Snakemake entry point: the Max / Min Progressive prompt sets of one model and dataset (Tables 9/11/13)."""
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import extremes

sm = snakemake  # noqa: F821 (injected by Snakemake)
with logged(sm), tracked(sm):
    chosen = extremes(r for path in sm.input for r in read_jsonl(path))
    write_json(sm.output[0], chosen)
    print(f"{sm.wildcards.model} {sm.wildcards.fu_dataset}: Max {chosen['Max']}, Min {chosen['Min']}")
