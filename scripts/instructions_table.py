"""Snakemake entry point: render one table of the instructions study (wobble.studies.instructions.report)."""
from pathlib import Path

from wobble.studies.instructions.report import render
from wobble.provenance import tracked
from wobble.snake import logged

NAMES = ("scores", "paper", "tasks", "instances", "para", "perturbations", "selection")
inputs = {name: snakemake.input.get(name) for name in NAMES if snakemake.input.get(name) is not None}
if "scores" in inputs:
    inputs["scores"] = [inputs["scores"]] if isinstance(inputs["scores"], str) else list(inputs["scores"])
out_stem = Path(snakemake.output.md).with_suffix("")
with logged(snakemake), tracked(snakemake, config=snakemake.params.context):
    render(snakemake.wildcards.table, inputs, out_stem, snakemake.params.context)
