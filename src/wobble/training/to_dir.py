"""Finetune a materialized model and write the result as a model directory (one copy for every study):
base dir + (source, target) pairs -> finetuned dir with a ``wobble-model.json`` manifest naming its base.

Checkpoints live outside the output (Snakemake deletes a failed job's output); a rerun of a killed job
resumes from them, and they are removed after success. Run as one of N ranks, only rank 0 writes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

from wobble.models.load import load_model
from wobble.models.materialize import write_manifest
from wobble.training.finetune import FinetuneConfig, finetune


def finetune_to_dir(base_dir: str | Path, pairs: Sequence[tuple[str, str]], out: str | Path, cfg: FinetuneConfig, *,
                    key: str, spec: Mapping[str, Any], checkpoint_dir: str | Path | None = None,
                    extra: Mapping[str, Any] | None = None) -> dict | None:
    """Finetune the model in ``base_dir`` on ``pairs`` into ``out``; returns the finetune summary (None on
    ranks other than 0). The base computes in ``spec``'s ``dtype`` (the finetuned model's; ``auto`` when unset)."""
    out = Path(out)
    ckpt = Path(checkpoint_dir or f"{out}.checkpoints")
    model, tokenizer, base = load_model(base_dir, dtype=spec.get("dtype"))
    summary = finetune(model, tokenizer, base["kind"], pairs, out, cfg, checkpoint_dir=ckpt)
    if summary is None:
        return None
    write_manifest(out, key=key, spec=dict(spec), kind=base["kind"], source="finetune",
                   origin={"base_key": base.get("key"), "base_weights_sha256": base.get("weights_sha256")},
                   dtype=summary["dtype"], base_dir=str(base_dir),
                   extra={"adapter": cfg.method == "lora", "finetune": cfg.to_dict(), "steps": summary["steps"],
                          **dict(extra or {})})
    shutil.rmtree(ckpt, ignore_errors=True)
    return summary
