"""Snakemake entry point: one model's label-word log-probs / explanations on one pair's requests (resumable)."""

from wobble.backends import backend_from_spec
from wobble.io import read_json, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.icl_bias.pipeline import infer

sm = snakemake  # noqa: F821 (injected by Snakemake)
p, w = sm.params, sm.wildcards
cfg = {"max_new_tokens": p.max_new_tokens, "seed": p.seed, "model": p.spec}
with logged(sm), tracked(sm, config=cfg, seeds=p.seed):
    bundle = read_json(sm.input.requests)
    if not bundle["requests"]:  # an unavailable pair: nothing to ask
        n = write_jsonl(sm.output[0], [])
    else:
        backend = backend_from_spec(w.model, p.spec, sm.input.model, batch_size=p.spec.get("batch_size"))
        n = infer(backend, bundle, sm.output[0], max_new_tokens=p.max_new_tokens, seed=p.seed)
    print(f"{w.model} {w.icl_pair}: {n} predictions")
