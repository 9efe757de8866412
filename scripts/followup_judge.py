"""Snakemake entry point: the judge's error types of one model's error examples (§3.3, Figure 5), resumable."""

from wobble.backends import backend_from_spec
from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import judge

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
cfg = {"judge": p.judge, "judge_spec": p.spec, "n": p.n, "max_new_tokens": p.max_new_tokens}
with logged(sm), tracked(sm, config=cfg, seeds=p.seed):
    dialogues = [r for path in sm.input.dialogues for r in read_jsonl(path)]
    judge_dir = sm.input.judge if "judge" in sm.input.keys() else None
    backend = backend_from_spec(p.judge, p.spec, judge_dir, batch_size=p.spec.get("batch_size"))
    n = judge(backend, dialogues, sm.output[0], n=p.n, seed=p.seed, max_new_tokens=p.max_new_tokens,
              chunk_size=p.chunk_size)
    print(f"{sm.wildcards.model}: {n} error examples judged by {p.judge}")
