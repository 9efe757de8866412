"""Snakemake entry point: first-token and text answers of one model at one temperature (resumable).

hf backend: both answers from one generate call (letters scored at its first step); other backends:
next_token_logprobs, then generate. At a sweep temperature the first-token answers are copied from
the main-temperature predictions (input.reuse).
"""

from wobble.backends import backend_from_spec
from wobble.studies.first_token.answers import check_prompts, infer
from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
p, w = sm.params, sm.wildcards
cfg = {"constraints": list(p.constraints), "temperature": float(w.ft_temp), "max_new_tokens": p.max_new_tokens,
       "seed": p.seed, "model": p.spec}
with logged(sm), tracked(sm, config=cfg, seeds=p.seed):
    prompts = [r for r in read_jsonl(sm.input.prompts) if r["constraint"] in cfg["constraints"]]
    check_prompts(prompts, sm.input.prompts)
    reuse = read_jsonl(sm.input.reuse) if "reuse" in sm.input.keys() else None
    backend = backend_from_spec(w.model, p.spec, sm.input.model, batch_size=p.spec.get("batch_size"))
    n = infer(backend, prompts, sm.output[0], temperature=cfg["temperature"], max_new_tokens=p.max_new_tokens,
              seed=p.seed, reuse=reuse)
    print(f"{w.model} t={w.ft_temp}: {n} predictions")
