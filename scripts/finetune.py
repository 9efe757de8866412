"""Snakemake ``script:``: base model dir (input.model) + {"source","target"} JSONL (input.data) -> finetuned dir
(wobble.training.to_dir.finetune_to_dir; a killed job resumes from its checkpoints)."""
from pathlib import Path

from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.training.finetune import FinetuneConfig
from wobble.training.to_dir import finetune_to_dir

sm = snakemake  # noqa: F821 (injected by Snakemake)
out, p = Path(sm.output[0]), sm.params
cfg = FinetuneConfig.from_dict(p.cfg)
with logged(sm), tracked(sm, config=cfg.to_dict(), seeds=cfg.seed):
    pairs = [(r["source"], r["target"]) for r in read_jsonl(sm.input.data)]
    finetune_to_dir(sm.input.model, pairs, out, cfg, key=getattr(p, "key", None) or out.name,
                    spec=getattr(p, "spec", None) or {}, checkpoint_dir=getattr(p, "checkpoint_dir", None))
