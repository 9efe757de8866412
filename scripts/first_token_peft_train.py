"""Snakemake entry point: LoRA-finetune the response classifier (classifier_input -> gold letter) on the
first n training items; the output directory is an adapter with a wobble-model.json (base_dir = input.model)."""
import shutil
from pathlib import Path

import torch

from wobble.studies.first_token.pipeline import peft_pairs
from wobble.io import read_jsonl, write_jsonl
from wobble.models.load import load_model
from wobble.models.materialize import write_manifest
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.training.finetune import FinetuneConfig, finetune

sm = snakemake  # noqa: F821 (injected by Snakemake)
out, n = Path(sm.output[0]), int(sm.wildcards.n_train)
cfg = FinetuneConfig.from_dict({**sm.params.cfg, "method": "lora"})
ckpt = Path(f"{out}.checkpoints")
with logged(sm), tracked(sm, config={"n_train": n, "finetune": cfg.to_dict(), "max_response_chars": sm.params.max_chars},
                         seeds=cfg.seed):
    torch.set_num_threads(sm.threads)
    pairs = peft_pairs(read_jsonl(sm.input.train), n, sm.params.max_chars)
    model, tokenizer, base = load_model(sm.input.model)
    s = finetune(model, tokenizer, base["kind"], pairs, out, cfg, checkpoint_dir=ckpt)
    write_jsonl(out / "train_pairs.jsonl", pairs)
    write_manifest(out, key=f"first_token-classifier-peft{n}", spec={"finetune": {"base": sm.params.base_key,
                   "data": f"opinionqa_annotated train ({n})", "method": "lora"}}, kind=base["kind"],
                   source="finetune", origin={"base_key": base.get("key"),
                                              "base_weights_sha256": base.get("weights_sha256")},
                   dtype=s["dtype"], base_dir=str(sm.input.model),
                   extra={"adapter": True, "finetune": cfg.to_dict(), "steps": s["steps"], "n_pairs": len(pairs)})
    print(f"peft_{n}: {s['steps']} steps, final loss {s['final_train_loss']:.4f}, {s['wall_time_s']} s")
shutil.rmtree(ckpt, ignore_errors=True)
