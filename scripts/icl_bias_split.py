"""Snakemake entry point: one pair's split (demonstration / disambiguation / test items, prompt sets)."""
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.icl_bias.layout import split_params_from
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.splits import check_split, split_for_pair

sm = snakemake  # noqa: F821 (injected by Snakemake)
pair, cfg = sm.wildcards.icl_pair, dict(sm.params.splits)
with logged(sm), tracked(sm, config=cfg, seeds=cfg["seed"]):
    datasets = {name: read_jsonl(path) for name, path in sm.input.items()}
    split = split_for_pair(PAIRS[pair], datasets, split_params_from(cfg), prefer=sm.params.prefer)
    problems = check_split(split)
    if problems:
        raise AssertionError(f"{pair}: split invariants violated: {problems}")
    write_json(sm.output[0], split)
    print(f"{pair}: source {split['source']}, available {split['available']} {split['reason']}; {split['counts']}")
