"""Snakemake entry point: official SuperNI metrics of one predictions file."""
from wobble.studies.instructions.pipeline import score_predictions
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged

with logged(snakemake), tracked(snakemake, config=snakemake.params.meta):
    write_json(snakemake.output[0], score_predictions(read_jsonl(snakemake.input[0]), snakemake.params.meta))
