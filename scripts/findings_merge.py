"""Snakemake entry point of `findings` (rules/report.smk): the claims ledgers of every enabled study in one
table with each study's notes (<root>/findings.*, root the run's results folder), and its view (wobble.report.views)."""
from pathlib import Path

from wobble.provenance import tracked
from wobble.report.findings import merge_ledgers
from wobble.report.views import write_view
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
with logged(sm), tracked(sm, config={}):
    merge_ledgers(list(sm.input.csv), Path(sm.output.md).with_suffix(""))
    write_view(sm.output.md, sm.output.html)
