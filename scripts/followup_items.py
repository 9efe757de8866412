"""Snakemake entry point: one dataset's evaluated and held-out item ids (seeded)."""
from wobble.io import read_jsonl, write_json
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import select_items

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
with logged(sm), tracked(sm, config={"n_items": p.n_items, "n_heldout": p.n_heldout}, seeds=p.seed):
    chosen = select_items(sm.wildcards.fu_dataset, read_jsonl(sm.input[0]), n_items=p.n_items, n_heldout=p.n_heldout,
                          seed=p.seed)
    write_json(sm.output[0], chosen)
    print(f"{sm.wildcards.fu_dataset}: {len(chosen['eval'])} evaluated, {len(chosen['heldout'])} held out")
