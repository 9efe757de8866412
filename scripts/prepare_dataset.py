"""Snakemake entry point: write the normalized JSONL of one dataset from its acquired source folders."""
import logging

from wobble.data.prepare import prepare
from wobble.provenance import tracked
from wobble.snake import logged

dataset = snakemake.wildcards.dataset
keys, dirs = list(snakemake.params.sources), [str(p) for p in snakemake.input]
if len(keys) != len(dirs):
    raise ValueError(f"prepare {dataset}: params.sources {keys} and inputs {dirs} differ in length")
with logged(snakemake), tracked(snakemake, config={"dataset": dataset, "sources": keys}):
    try:
        prepare(dataset, dict(zip(keys, dirs)), snakemake.output[0])
    except Exception as exc:
        logging.getLogger("prepare_dataset").error("%s", exc)
        raise
