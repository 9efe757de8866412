"""Snakemake entry point of `run_page` (rules/report.smk): a named run's own page, <root>/README.md,
and its view (wobble.report.views)."""


from wobble.report.run_page import write_page
from wobble.report.views import write_view
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
with logged(sm):
    models = dict(sm.params.models)
    cards = dict(zip(models, sm.input.scorecards))
    ledger = sm.input.ledger[0] if sm.input.ledger else None
    write_page(sm.output.md, sm.params.name, list(sm.params.studies), models, cards, ledger, sm.params.benchmarks)
    write_view(sm.output.md, sm.output.html)
