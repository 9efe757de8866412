"""What a finetune holds per rank, and whether the plan's GPUs can hold it: ``wobble check-config`` refuses a
finetune that cannot fit before any job runs.

The accounting is the ZeRO paper's (Rajbhandari et al. 2020, §3 and §5) for Adam in mixed precision: per parameter
2 bytes of 16-bit weights, 2 of 16-bit gradients and 12 of optimizer state (fp32 master weights, momentum and
variance), 16 in all. Without DeepSpeed the Trainer keeps fp32 weights (4), fp32 gradients (4) and Adam's two
moments (8): 16 again. On ``N`` ranks, ZeRO stage 1 partitions the optimizer state, stage 2 also the gradients,
stage 3 also the weights, each part divided by ``N``; stage 0 (plain DDP) keeps a whole copy on every rank.
DeepSpeed's ``offload_optimizer`` moves the optimizer state and the gradient partition to host memory (ZeRO-Offload),
``offload_param`` (stage 3) the weight partition. The paper's example, 7.5 B parameters on 64 GPUs, is per GPU
120 GB unpartitioned, 31.4 GB at stage 1, 16.6 GB at stage 2 and 1.9 GB at stage 3 (its Figure 1), as the tests
check.

LoRA trains a few parameters beside a frozen base: the base's weights at its compute dtype (partitioned only at
stage 3), and 16 bytes per trainable parameter as above. The trainable count is taken as
:data:`LORA_FRACTION_PER_RANK` x ``lora_r`` of the parameters (rank 16 on every linear layer: about 2 r / hidden
size, 5 % at gemma-3-270m's hidden size of 640, less for larger models): an upper bound, not a count.

Activations, ZeRO-3's gathered layers (``stage3_max_live_parameters``), communication buckets and the CUDA context come
on top: a fit is necessary, not sufficient.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from wobble import paths
from wobble.errors import ConfigError, WobbleError
from wobble.models.fit import DTYPE_BYTES, GIB, compute_dtype, gib
from wobble.models.sizing import model_size

#: Trainable parameters of a LoRA run per parameter of the base and per unit of ``lora_r`` (an upper bound: 5 % at
#: rank 16).
LORA_FRACTION_PER_RANK = 0.05 / 16
#: Bytes per parameter: (weights, gradients, optimizer state) with DeepSpeed's mixed precision, and without.
MIXED = (2, 2, 12)
FP32 = (4, 4, 8)


@dataclass(frozen=True)
class Zero:
    """What a DeepSpeed config says about memory: its ZeRO stage and what it offloads to the host."""

    stage: int = 0
    offload_optimizer: bool = False
    offload_params: bool = False
    deepspeed: bool = False


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes one rank holds: on its GPU (weights, gradients, optimizer state) and in host memory (offloaded)."""

    weights: float
    gradients: float
    optimizer: float
    host: float = 0.0

    @property
    def gpu(self) -> float:
        return self.weights + self.gradients + self.optimizer


def zero_settings(deepspeed: str | Path | Mapping[str, Any] | None, root: Path = Path(".")) -> Zero:
    """The :class:`Zero` of a DeepSpeed config (a JSON path, relative to ``root``, or its dict); ``Zero()`` without
    one. An unreadable config is one ConfigError line."""
    if deepspeed is None:
        return Zero()
    if isinstance(deepspeed, Mapping):
        ds = deepspeed
    else:
        path = Path(deepspeed) if Path(deepspeed).is_absolute() else root / deepspeed
        try:
            ds = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError("instructions.finetune.deepspeed", f"a readable DeepSpeed JSON config, got {path} "
                                                                 f"({type(e).__name__})") from None
    zero = ds.get("zero_optimization") or {}
    stage = zero.get("stage", 0)
    if stage not in (0, 1, 2, 3):
        raise ConfigError("instructions.finetune.deepspeed", f"zero_optimization.stage 0 to 3, got {stage!r}")

    def offloaded(key: str) -> bool:
        return str((zero.get(key) or {}).get("device", "none")).lower() in ("cpu", "nvme")

    return Zero(stage, offloaded("offload_optimizer"), stage == 3 and offloaded("offload_param"), deepspeed=True)


def training_memory(params: float, *, zero: Zero = Zero(), ranks: int = 1, method: str = "full",
                    base_bytes: float = 2, lora_r: int = 16) -> TrainingMemory:
    """What each of ``ranks`` ranks holds to finetune a model of ``params`` parameters (see the module docstring).
    ``base_bytes``: bytes per parameter of a LoRA run's frozen base (its compute dtype)."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, got {ranks}")
    w, g, o = MIXED if zero.deepspeed else FP32
    if method == "lora":
        trainable = params * LORA_FRACTION_PER_RANK * lora_r
        weights, gradients, optimizer = params * base_bytes + trainable * w, trainable * g, trainable * o
    elif method == "full":
        weights, gradients, optimizer = params * w, params * g, params * o
    else:
        raise ValueError(f"method is 'full' or 'lora', got {method!r}")
    if zero.stage >= 1:
        optimizer /= ranks
    if zero.stage >= 2:
        gradients /= ranks
    if zero.stage >= 3:
        weights /= ranks
    host = 0.0
    if zero.offload_optimizer:
        host, optimizer, gradients = optimizer + gradients, 0.0, 0.0
    if zero.offload_params:
        host, weights = host + weights, 0.0
    return TrainingMemory(weights, gradients, optimizer, host)


def ranks_needed(params: float, gpu_bytes: float, *, zero: Zero = Zero(), method: str = "full",
                 base_bytes: float = 2, lora_r: int = 16, most: int = 64) -> int | None:
    """The fewest ranks (one GPU each, up to ``most``) whose GPUs of ``gpu_bytes`` hold the finetune; None when
    no count does (stage 0, or a model too large even for ``most``)."""
    for n in range(1, most + 1):
        if training_memory(params, zero=zero, ranks=n, method=method, base_bytes=base_bytes,
                           lora_r=lora_r).gpu <= gpu_bytes:
            return n
    return None


# ---------------------------------------------------------------------------------------------------- check

def training_misfits(config: Mapping[str, Any], root: Path = Path("."),
                     ranks: Mapping[str, int] | None = None) -> tuple[list[str], list[str]]:
    """``(lines, sized)``: one line per finetuned model of the config whose training state exceeds its GPUs, and
    the finetuned keys of known size. A finetune runs one rank per GPU its job books (``ranks[key]`` when given,
    e.g. from ``--set-resources finetune:gpu=N``; else its ``finetune.gpus``; else the job's ``gpu`` resource), each
    GPU holding ``gpu_mem_gib`` (80 by default)."""
    models = config.get("models") or {}
    knobs = (config.get("instructions") or {}).get("finetune") or {}
    zero = zero_settings(knobs.get("deepspeed"), root)
    gpu_bytes = float(config.get("gpu_mem_gib", 80)) * GIB
    lines, sized = [], []
    for key, spec in models.items():
        if not isinstance(spec, Mapping) or "finetune" not in spec:
            continue
        size = model_size(config, key, root)
        if size is None:
            continue
        sized.append(key)
        ft = spec["finetune"]
        method = ft.get("method", knobs.get("method", "lora"))
        n = int((ranks or {}).get(key) or ft.get("gpus") or
                paths.gpus_for_inputs(config, [paths.model_dir(config, ft["base"])]) or 1)
        params = size.params_b * 1e9
        base_bytes = DTYPE_BYTES[compute_dtype(models, key)]
        lora_r = int(knobs.get("lora_r", 16))
        need = training_memory(params, zero=zero, ranks=n, method=method, base_bytes=base_bytes, lora_r=lora_r)
        if need.gpu <= gpu_bytes:
            continue
        how = f"ZeRO-{zero.stage}" if zero.deepspeed else "no DeepSpeed"
        enough = ranks_needed(params, gpu_bytes, zero=zero, method=method, base_bytes=base_bytes, lora_r=lora_r)
        fix = (f"it needs {enough} GPUs" if enough else "no GPU count holds it without ZeRO-3 (or offload)")
        lines.append(f"finetune of {key} ({method}, {size.params_b:g}B parameters, {how}) needs ~{gib(need.gpu)} "
                     f"per GPU for weights, gradients and optimizer state on {n} GPU{'s' * (n > 1)} of "
                     f"{gib(gpu_bytes)}; {fix} (--set-resources finetune:gpu=N)")
    return lines, sized


def check_training_fits(config: Mapping[str, Any], root: Path = Path("."),
                        ranks: Mapping[str, int] | None = None) -> list[str]:
    """The finetuned keys whose training state fits their GPUs (those of known size); a WobbleError naming the first
    that does not (and the others) instead when one does not."""
    lines, sized = training_misfits(config, root, ranks)
    if lines:
        also = f" (also: {'; '.join(lines[1:])})" if lines[1:] else ""
        raise WobbleError(lines[0] + also)
    return sized
