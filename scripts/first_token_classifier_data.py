"""Snakemake entry point: evaluation / selection / training / judge-shot splits of the paper's annotated responses."""
from wobble.studies.first_token.classifiers import annotated_items, classifier_splits
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
cfg = {"seed": p.seed, "n_eval_per_model": p.n_eval_per_model, "n_shots": p.n_shots, "n_reserved": p.n_reserved}
with logged(sm), tracked(sm, config=cfg, seeds=p.seed):
    items = annotated_items(read_jsonl(sm.input[0]), sm.input[0])
    splits = classifier_splits(items, seed=p.seed, n_eval_per_model=p.n_eval_per_model, n_shots=p.n_shots,
                                n_reserved=p.n_reserved)
    for name in ("test", "test_all", "train", "shots", "select"):
        print(f"{name}: {write_jsonl(sm.output[name], splits[name])} items")
