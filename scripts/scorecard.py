"""Snakemake entry point of `scorecard` (rules/report.smk): one model's rows from every enabled study that ran it
(each study's declared scorecard measure), written to <root>/scorecard/<model>.{md,csv,tex,html}."""
from pathlib import Path

from wobble.provenance import tracked
from wobble.report.scorecard import write_scorecard
from wobble.report.views import write_view
from wobble.snake import logged, named_inputs
from wobble.studies import STUDIES, get

sm = snakemake  # noqa: F821 (injected by Snakemake)
model = sm.wildcards.model
with logged(sm), tracked(sm, config={"studies": list(sm.params.studies)}):
    rows = []
    for study in sm.params.studies:
        spec, prefix = get(study).scorecard, f"{study}__"
        given = {k[len(prefix):]: v for k, v in sm.input.items() if k.startswith(prefix)}
        rows += spec.measurer()(named_inputs(given, spec.inputs(sm.config, model)), sm.config, model)
    others = [s for s in STUDIES if s not in sm.params.studies and s in sm.config]
    write_scorecard(model, sm.params.label, rows, Path(sm.output.md).with_suffix(""), others)
    write_view(sm.output.md, sm.output.html)
    print(f"{model}: {len(rows)} rows from {', '.join(sm.params.studies)}")
