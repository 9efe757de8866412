"""Snakemake entry point of `render_table` / `render_figure` (rules/report.smk): one declared table or
figure of any study, written by wobble.report.render.render, and its view (wobble.report.views)."""
from pathlib import Path

from wobble.provenance import tracked
from wobble.report.render import render
from wobble.report.views import write_view
from wobble.snake import logged, named_inputs
from wobble.studies import get

sm = snakemake  # noqa: F821 (injected by Snakemake)
output = get(sm.wildcards.study).output(sm.wildcards.name)
declared = {**output.inputs(sm.config), **output.paper_inputs()}
stems = {key: Path(path).with_suffix("") for key, path in sm.output.items()}
with logged(sm), tracked(sm, config=sm.params.context):
    render(output, named_inputs(sm.input, declared), sm.params.context,
           table_stem=stems["md"], figure_stem=stems.get("png"))
    write_view(sm.output.md, sm.output.html)
