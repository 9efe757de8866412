"""Snakemake ``script:``: base model dir (input.model) + {"source","target"} JSONL (input.data) -> finetuned dir.

Checkpoints live in params.checkpoint_dir (default ``<output>.checkpoints``), outside the output, which
Snakemake deletes when a job fails; a rerun of a killed job resumes there. Removed after success.
"""
import shutil
from pathlib import Path

from wobble.io import read_jsonl
from wobble.models.load import load_model
from wobble.models.materialize import write_manifest
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.training.finetune import FinetuneConfig, finetune

sm = snakemake  # noqa: F821 (injected by Snakemake)
out, p = Path(sm.output[0]), sm.params
cfg = FinetuneConfig.from_dict(p.cfg)
ckpt = Path(getattr(p, "checkpoint_dir", None) or f"{out}.checkpoints")
with logged(sm), tracked(sm, config=cfg.to_dict(), seeds=cfg.seed):
    model, tokenizer, base = load_model(sm.input.model)
    pairs = [(r["source"], r["target"]) for r in read_jsonl(sm.input.data)]
    s = finetune(model, tokenizer, base["kind"], pairs, out, cfg, checkpoint_dir=ckpt)
    write_manifest(out, key=getattr(p, "key", None) or out.name, spec=getattr(p, "spec", None) or {}, kind=base["kind"],
                   source="finetune", origin={"base_key": base.get("key"), "base_weights_sha256": base.get("weights_sha256")},
                   dtype=s["dtype"], base_dir=str(sm.input.model),
                   extra={"adapter": cfg.method == "lora", "finetune": cfg.to_dict(), "steps": s["steps"]})
shutil.rmtree(ckpt, ignore_errors=True)
