"""Snakemake entry point: LoRA-finetune the response classifier (classifier_input -> gold letter) on the
first n training items; the output directory is an adapter with a wobble-model.json (base_dir = input.model)."""
from pathlib import Path


from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.first_token.classifiers import peft_pairs
from wobble.training.finetune import FinetuneConfig
from wobble.training.to_dir import finetune_to_dir

sm = snakemake  # noqa: F821 (injected by Snakemake)
out, n = Path(sm.output[0]), int(sm.wildcards.n_train)
cfg = FinetuneConfig.from_dict({**sm.params.cfg, "method": "lora"})
with logged(sm), tracked(sm, config={"n_train": n, "finetune": cfg.to_dict(), "max_response_chars": sm.params.max_chars},
                         seeds=cfg.seed):
    pairs = peft_pairs(read_jsonl(sm.input.train), n, sm.params.max_chars)
    s = finetune_to_dir(sm.input.model, pairs, out, cfg, key=f"first_token-classifier-peft{n}",
                        spec={"finetune": {"base": sm.params.base_key, "data": f"opinionqa_annotated train ({n})",
                                           "method": "lora"}},
                        extra={"n_pairs": len(pairs)})
    write_jsonl(out / "train_pairs.jsonl", pairs)
    print(f"peft_{n}: {s['steps']} steps, final loss {s['final_train_loss']:.4f}, {s['wall_time_s']} s")
