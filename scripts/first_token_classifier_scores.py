"""Snakemake entry point: accuracy / macro-F1 / weighted-F1 per evaluator x annotated model (+ Avg) on the test
responses, the same on the selection responses (training split), and the classifier the study uses (config
first_token.classifier; 'auto' = best Avg accuracy on the selection responses, never on the reported ones)."""
from pathlib import Path

from wobble.studies.first_token.classifiers import classifier_table, select_classifier
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
setting = sm.params.classifier
with logged(sm), tracked(sm, config={"classifier": setting}):
    table = classifier_table({Path(f).stem: read_jsonl(f) for f in sm.input.preds})
    selection = classifier_table({Path(f).stem: read_jsonl(f) for f in sm.input.select})
    chosen = select_classifier(selection, setting)
    write_jsonl(sm.output.scores, [{**r, "setting": setting, "selected": r["evaluator"] == chosen} for r in table])
    write_jsonl(sm.output.selection, [{**r, "setting": setting, "selected": r["evaluator"] == chosen} for r in selection])
    print(f"classifier used: {chosen} (setting {setting}; chosen on {sum(r['n'] for r in selection if r['model'] == 'Avg') // max(1, len({r['evaluator'] for r in selection}))} training responses)")
