"""Snakemake ``script:``: base model dir (input.model) + {"source","target"} JSONL (input.data) -> finetuned dir,
in this process or as N torchrun ranks when the job's resources ask for N (wobble.training.launch; a killed job
resumes from its checkpoints)."""
from pathlib import Path

from wobble.provenance import tracked
from wobble.snake import logged
from wobble.training.config import FinetuneConfig
from wobble.training.launch import finetune_job, job_ranks

sm = snakemake  # noqa: F821 (injected by Snakemake)
out, p = Path(sm.output[0]), sm.params
cfg = FinetuneConfig.from_dict(p.cfg)
with logged(sm), tracked(sm, config=cfg.to_dict(), seeds=cfg.seed):
    finetune_job(sm.input.model, sm.input.data, out, cfg, ranks=job_ranks(getattr(sm, "resources", {})),
                 threads=getattr(sm, "threads", 1) or 1, key=getattr(p, "key", None) or out.name,
                 spec=getattr(p, "spec", None) or {}, checkpoint_dir=getattr(p, "checkpoint_dir", None))
