"""Snakemake entry point: render one table (results/first_token/tables) or one figure together with the
table of its numbers (results/first_token/figures + tables)."""
from pathlib import Path

from wobble.studies.first_token.report import render
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
name = sm.wildcards.get("table") or sm.wildcards.get("figure")
outputs = dict(sm.output.items())
table_stem = Path(outputs["md"]).with_suffix("")
figure_stem = Path(outputs["png"]).with_suffix("") if "png" in outputs else None
with logged(sm), tracked(sm, config=sm.params.context):
    render(name, dict(sm.input.items()), sm.params.context, table_stem=table_stem, figure_stem=figure_stem)
