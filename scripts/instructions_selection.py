"""Snakemake entry point: which SuperNI / Para-Instructions / DiversePrompt tasks the study evaluates."""
from wobble.studies.instructions.pipeline import make_selection
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged

with logged(snakemake), tracked(snakemake, config=snakemake.params.cfg):
    i = snakemake.input
    write_json(snakemake.output[0], make_selection(read_jsonl(i.tasks), read_jsonl(i.para), read_jsonl(i.diverse),
                                                   snakemake.params.cfg))
