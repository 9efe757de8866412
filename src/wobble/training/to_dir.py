"""Finetune a materialized model and write the result as a model directory (one copy for every study):
base dir + (source, target) pairs -> finetuned dir with a ``wobble-model.json`` manifest naming its base.

Checkpoints live outside the output (Snakemake deletes a failed job's output); a rerun of a killed job
resumes from them, and they are removed after success. Run as one of N ranks, only rank 0 writes.

Order, for N ranks on N GPUs: the Trainer's arguments first (:func:`wobble.training.finetune.training_args`: this
rank's GPU becomes torch's current device, torch.distributed starts, and a ZeRO-3 config has ``from_pretrained``
partition the weights as it reads them), then the model, loaded onto this rank's device; a full finetune loads
it in float32 (its master weights), so no rank holds a second, upcast copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

from wobble.models.load import load_model
from wobble.models.materialize import write_manifest
from wobble.training.distributed import rank_device, world_size
from wobble.training.finetune import FinetuneConfig, finetune, training_args


def finetune_to_dir(base_dir: str | Path, pairs: Sequence[tuple[str, str]], out: str | Path, cfg: FinetuneConfig, *,
                    key: str, spec: Mapping[str, Any], checkpoint_dir: str | Path | None = None,
                    extra: Mapping[str, Any] | None = None) -> dict | None:
    """Finetune the model in ``base_dir`` on ``pairs`` into ``out``; returns the finetune summary (None on
    ranks other than 0). A LoRA base computes in ``spec``'s ``dtype`` (the finetuned model's; ``auto`` when unset);
    a full finetune trains float32 master weights. One process keeps the base's ``device_map`` placement; ranks and
    DeepSpeed take the whole model on each rank's device (or its ZeRO-3 slice)."""
    out = Path(out)
    ckpt = Path(checkpoint_dir or f"{out}.checkpoints")
    args = training_args(cfg, ckpt)  # before the model: this rank's device, and ZeRO-3's partitioning at load
    dtype = "float32" if cfg.method == "full" else spec.get("dtype")
    place = {} if world_size() > 1 or cfg.deepspeed else None
    model, tokenizer, base = load_model(base_dir, dtype=dtype, device=rank_device(), place=place)
    summary = finetune(model, tokenizer, base["kind"], pairs, out, cfg, checkpoint_dir=ckpt, args=args)
    if summary is None:
        return None
    write_manifest(out, key=key, spec=dict(spec), kind=base["kind"], source="finetune",
                   origin={"base_key": base.get("key"), "base_weights_sha256": base.get("weights_sha256")},
                   dtype=summary["dtype"], base_dir=str(base_dir),
                   extra={"adapter": cfg.method == "lora", "finetune": cfg.to_dict(), "steps": summary["steps"],
                          **dict(extra or {})})
    shutil.rmtree(ckpt, ignore_errors=True)
    return summary
