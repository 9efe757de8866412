"""Snakemake entry point: accuracy / macro-F1 / weighted-F1 per evaluator x annotated model (+ Avg) and the
classifier the study uses (config first_token.classifier; 'auto' = best Avg accuracy)."""
from pathlib import Path

from wobble.studies.first_token.classifiers import classifier_table, select_classifier
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
with logged(sm), tracked(sm, config={"classifier": sm.params.classifier}):
    preds = {Path(f).stem: read_jsonl(f) for f in sm.input.preds}
    table = classifier_table(preds)
    chosen = select_classifier(table, sm.params.classifier)
    rows = [{**r, "setting": sm.params.classifier, "selected": r["evaluator"] == chosen} for r in table]
    write_jsonl(sm.output[0], rows)
    print(f"classifier used: {chosen} (setting {sm.params.classifier})")
