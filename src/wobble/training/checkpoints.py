"""Checkpoints of a finetune run: where a killed run resumes from, and when it must not.

A checkpoint is resumed only when the run's fingerprint (base weights, training pairs, the config fields
that change the result, the number of ranks) equals the one stored beside the checkpoints; a checkpoint directory a kill cut
short (no trainer state) is ignored. Fields that may change between a kill and its resume (steps, saving
and logging cadence) are left out of the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from wobble.io import dumps_canonical, read_json, write_json
from wobble.training.config import FinetuneConfig

FINGERPRINT_NAME = "wobble-finetune.json"
# Config fields that may change between a killed run and its resume without invalidating checkpoints.
RESUMABLE_FIELDS = ("max_steps", "num_epochs", "save_steps", "save_total_limit", "logging_steps")


def _pairs_sha256(pairs: list) -> str:
    h = hashlib.sha256()
    for p in pairs:
        src, tgt = (p["source"], p["target"]) if isinstance(p, dict) else p
        h.update(dumps_canonical([src, tgt]).encode())
        h.update(b"\n")
    return h.hexdigest()


def numel(param) -> int:
    """A parameter's element count, also when ZeRO-3 holds only this rank's slice of it (``ds_numel``)."""
    return getattr(param, "ds_numel", None) or param.numel()


def partitioned(model) -> bool:
    """Whether DeepSpeed ZeRO-3 partitioned ``model``'s parameters among the ranks as it loaded (``zero.Init``)."""
    return any(hasattr(p, "ds_id") for p in model.parameters())


def _first_tensor_sha256(model) -> str | None:
    """The sha256 of the model's first tensor; under ZeRO-3 the first parameter gathered whole (a collective: every
    rank computes the fingerprint)."""
    import torch

    if partitioned(model):
        import deepspeed

        first = next(iter(model.parameters()))
        with deepspeed.zero.GatheredParameters([first]):
            return hashlib.sha256(first.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()
    first = next(iter(model.state_dict().values()), None)
    return None if first is None else hashlib.sha256(
        first.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes()).hexdigest()


def run_fingerprint(model, kind: str, pairs: list, cfg: FinetuneConfig, world_size: int = 1) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: config (less RESUMABLE_FIELDS), data, base model, and how many
    ranks share each global batch (a checkpoint of N ranks holds N ranks' RNG states and data position)."""
    conf = {k: v for k, v in cfg.to_dict().items() if k not in RESUMABLE_FIELDS}
    n_params = sum(numel(p) for p in model.parameters())
    probe = _first_tensor_sha256(model)
    fp = {"config": conf, "kind": kind, "data_sha256": _pairs_sha256(pairs), "n_pairs": len(pairs),
          "model_class": type(model).__name__, "n_params": n_params, "first_tensor_sha256": probe,
          "world_size": world_size}
    return json.loads(dumps_canonical(fp))  # as it reads back from disk (tuples -> lists)


def _checkpoint_step(path: Path) -> int | None:
    m = re.fullmatch(r"checkpoint-(\d+)", path.name)
    return int(m.group(1)) if m and path.is_dir() else None


def _is_complete(path: Path) -> bool:
    """The Trainer writes ``trainer_state.json`` last (after model, optimizer, scheduler and RNG states)."""
    try:
        with open(path / "trainer_state.json", encoding="utf-8") as f:
            return "global_step" in json.load(f)
    except (OSError, ValueError):
        return False


def last_checkpoint(checkpoint_dir: str | os.PathLike) -> Path | None:
    """The newest *complete* ``checkpoint-<step>`` folder, or None.

    A job killed while writing a checkpoint leaves a folder without a readable ``trainer_state.json``;
    it is skipped (the Trainer's own ``get_last_checkpoint`` would pick it and fail to resume).
    """
    d = Path(checkpoint_dir)
    if not d.is_dir():
        return None
    found = sorted(((step, p) for p in d.iterdir() if (step := _checkpoint_step(p)) is not None), reverse=True)
    return next((p for _, p in found if _is_complete(p)), None)


def _clear_checkpoints(checkpoint_dir: Path) -> None:
    for p in checkpoint_dir.glob("checkpoint-*"):
        if p.is_dir():
            shutil.rmtree(p)


def resume_point(checkpoint_dir: Path, fingerprint: dict, resume: bool) -> Path | None:
    fp_path = checkpoint_dir / FINGERPRINT_NAME
    last = last_checkpoint(checkpoint_dir) if resume else None
    if last is not None:
        old = read_json(fp_path) if fp_path.is_file() else None
        if old == fingerprint:
            for p in checkpoint_dir.iterdir():  # half-written checkpoints past the one resumed
                step = _checkpoint_step(p)
                if step is not None and step > _checkpoint_step(last):
                    shutil.rmtree(p)
            return last
        changed = sorted(k for k in set(fingerprint) | set(old or {}) if (old or {}).get(k) != fingerprint.get(k))
        if old and "config" in changed:
            changed += [f"config.{k}" for k in sorted(set(fingerprint["config"]) | set(old["config"]))
                        if old["config"].get(k) != fingerprint["config"].get(k)]
        print(f"wobble finetune: checkpoints in {checkpoint_dir} are from a different run ({', '.join(changed)} "
              "differ); starting over", file=sys.stderr)
    if any(checkpoint_dir.glob("checkpoint-*")):
        _clear_checkpoints(checkpoint_dir)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    write_json(fp_path, fingerprint)
    return None


