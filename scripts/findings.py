"""Snakemake entry point of `study_findings` (rules/report.smk): one study's claims ledger
(<root>/<study>/findings.*), measured by the study's declared measure, files by wobble.report.findings, its view
by wobble.report.views."""
from pathlib import Path

from wobble.provenance import tracked
from wobble.report.findings import write_findings
from wobble.report.views import write_view
from wobble.snake import logged, named_inputs
from wobble.studies import get

sm = snakemake  # noqa: F821 (injected by Snakemake)
spec = get(sm.wildcards.study).findings
with logged(sm), tracked(sm, config=sm.config.get(sm.wildcards.study, {})):
    found = spec.measurer()(named_inputs(sm.input, spec.inputs(sm.config)), sm.config)
    rows = found.rows()
    write_findings(rows, Path(sm.output.md).with_suffix(""), found.title, found.notes)
    write_view(sm.output.md, sm.output.html)
    print(f"{len(rows)} claims: {[r['verdict'] for r in rows]}")
