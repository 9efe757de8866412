"""Helpers several test folders share: a tiny Gemma-3 model with sliding-window layers (the backend's and the
finetune's tests) and the job counts of a Snakemake dry run (the studies' workflow tests)."""

from __future__ import annotations

import re

import torch


def tiny_gemma3(seed: int = 0):
    """A 3-layer Gemma-3 (two sliding-window layers of width 8, one full) on ByT5's byte vocabulary, in float32."""
    from transformers import ByT5Tokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    tok = ByT5Tokenizer()
    torch.manual_seed(seed)
    cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                           num_attention_heads=4, num_key_value_heads=1, head_dim=8, sliding_window=8,
                           layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                           max_position_embeddings=4096, pad_token_id=tok.pad_token_id,
                           eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)
    return Gemma3ForCausalLM(cfg).eval().float(), tok


def planned_jobs(proc) -> dict[str, int]:
    """``{rule: count}`` from the "Job stats" table of a dry run ({} when there is nothing to do)."""
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return {}
    block = text.split("Job stats:", 1)[1]
    jobs = {}
    for line in block.splitlines()[3:]:
        m = re.fullmatch(r"\s*([A-Za-z_][\w]*)\s+(\d+)\s*", line)
        if not m or m.group(1) == "total":
            break
        jobs[m.group(1)] = int(m.group(2))
    return jobs
