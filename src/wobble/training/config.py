"""``FinetuneConfig``: every knob of a finetuning run, checked when built (one ConfigError line per bad value).

Its own module because both the run (:mod:`wobble.training.finetune`) and its checkpoints
(:mod:`wobble.training.checkpoints`, whose fingerprint is made of the config) read it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from wobble.errors import ConfigError
from wobble.training.data import TRUNCATION_SIDES


@dataclass
class FinetuneConfig:
    """Every knob of a finetuning run; defaults are the Tk-Instruct recipe on one device."""

    method: str = "lora"  # "full" | "lora"
    # LoRA
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: str | list[str] = "all-linear"
    # optimisation (AdamW)
    learning_rate: float = 5e-5
    lr_scheduler: str = "constant"
    warmup_steps: int = 0
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    # the batch of one optimizer step is per_device_batch_size x gradient_accumulation_steps however many ranks
    # share it (see per_rank)
    per_device_batch_size: int = 1
    gradient_accumulation_steps: int = 8  # effective batch 8
    max_steps: int | None = None  # optimizer steps; overrides num_epochs when set
    num_epochs: float = 2.0
    # checkpoints and logs
    save_steps: int = 500
    save_total_limit: int | None = 2
    logging_steps: int = 10
    seed: int = 42
    # precision, memory, distribution
    bf16: bool | str = "auto"  # True | False | "auto"
    gradient_checkpointing: bool = False
    deepspeed: str | None = None  # path of a DeepSpeed JSON config
    # data
    max_source_length: int = 1024
    max_target_length: int = 128
    truncation_side: str = "right"  # of the source; Tk-Instruct truncates on the right

    def __post_init__(self) -> None:
        def bad(key: str, expected: str):
            raise ConfigError(f"finetune.{key}", f"{expected}, got {getattr(self, key)!r}")

        if self.method not in ("full", "lora"):
            bad("method", "expected 'full' or 'lora'")
        if self.bf16 not in (True, False, "auto"):
            bad("bf16", "expected true, false or 'auto'")
        if self.truncation_side not in TRUNCATION_SIDES:
            bad("truncation_side", f"expected one of {list(TRUNCATION_SIDES)}")
        for key in ("per_device_batch_size", "gradient_accumulation_steps", "save_steps", "logging_steps",
                    "max_source_length", "max_target_length", "lora_r"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 1:
                bad(key, "expected a positive integer")
        if self.max_steps is not None and (not isinstance(self.max_steps, int) or self.max_steps < 1):
            bad("max_steps", "expected a positive integer or null")
        if self.max_steps is None and not self.num_epochs > 0:
            bad("num_epochs", "expected a positive number (or set max_steps)")
        if not self.learning_rate > 0:
            bad("learning_rate", "expected a positive number")
        from transformers.trainer_utils import SchedulerType

        if self.lr_scheduler not in {t.value for t in SchedulerType}:
            bad("lr_scheduler", f"expected one of {sorted(t.value for t in SchedulerType)}")
        if self.deepspeed is not None and not Path(self.deepspeed).is_file():
            bad("deepspeed", "expected the path of an existing DeepSpeed JSON config")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "FinetuneConfig":
        """Build from a plain dict (e.g. ``snakemake.params.cfg``); unknown keys are a ConfigError."""
        d = dict(d or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError("finetune", f"unknown key(s) {unknown}; expected some of {sorted(known)}")
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def per_rank(self, ranks: int) -> tuple[int, int]:
        """``(per-device batch, accumulation steps)`` of each of ``ranks`` ranks, which together take the batch one
        process takes (``per_device_batch_size × gradient_accumulation_steps``): the ranks split the accumulation
        steps first, then the per-device batch. A batch that does not split evenly is a ConfigError."""
        shared = math.gcd(self.gradient_accumulation_steps, ranks)
        rest = ranks // shared
        if self.per_device_batch_size % rest:
            raise ConfigError("finetune.per_device_batch_size",
                              f"a batch of {self.per_device_batch_size} x {self.gradient_accumulation_steps} "
                              f"accumulation steps does not split evenly among {ranks} ranks")
        return self.per_device_batch_size // rest, self.gradient_accumulation_steps // shared
