"""Snakemake entry point: one model's metrics per run and round, with bootstrap intervals over items."""
import pandas as pd

from wobble.io import atomic_write, read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import summary_rows

sm = snakemake  # noqa: F821 (injected by Snakemake)
boot = dict(sm.params.bootstrap)
with logged(sm), tracked(sm, config={"bootstrap": boot}, seeds=boot["seed"]):
    records = [r for path in sm.input for r in read_jsonl(path)]
    rows = summary_rows(records, n_boot=boot["n"], seed=boot["seed"])
    with atomic_write(sm.output[0]) as f:
        pd.DataFrame(rows).to_csv(f, index=False, lineterminator="\n", float_format="%.6f")
    print(f"{sm.wildcards.model}: {len(rows)} summary rows from {len(records)} dialogues")
