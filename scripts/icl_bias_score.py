"""Snakemake entry point: one model's calibrated answers on one pair (one record per test item and prompt set)."""
from wobble.io import read_json, read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.icl_bias.pipeline import scores

sm = snakemake  # noqa: F821 (injected by Snakemake)
cfg = {"calibrate": bool(sm.params.calibrate)}
with logged(sm), tracked(sm, config=cfg):
    records = scores(read_json(sm.input.requests), read_jsonl(sm.input.predictions), read_json(sm.input.split),
                     calibrate=cfg["calibrate"])
    print(f"{sm.wildcards.model} {sm.wildcards.icl_pair}: {write_jsonl(sm.output[0], records)} answers")
