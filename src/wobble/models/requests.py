"""What a cluster job asks for beyond memory: its time per attempt, under a per-job cap, and the GPU class it needs.

**Time.** A job asks for its estimate (:func:`wobble.models.sizing.job_resources`) times its attempt: a job that
runs out of time or is preempted is submitted again (the SLURM profile's ``retries``) with twice, then three times
the estimate. No attempt asks for more than :func:`max_runtime` minutes (48 h by default, within common partition
limits; ``WOBBLE_MAX_RUNTIME`` sets another). Work estimated longer than the cap runs only where it resumes: a killed
inference, dialogue or finetune job goes on from its ``.partial`` file or checkpoint when run again, so each attempt
does up to the cap's worth; other work estimated over the cap stops the plan in one line.

**GPU class.** A GPU job needs, per GPU, what its model puts there (:func:`gpu_need_gib`): its weights times 1.25
for the KV cache and activations, plus 2 GiB of CUDA context; a model spread by accelerate, its largest ``max_memory``
GPU entry (the config's budget per GPU) plus the context; a finetune, its weights, gradients and optimizer state per
rank (:mod:`wobble.models.training_fit`) plus the context. ``WOBBLE_SLURM_GPU_FEATURES`` names the cluster's GPU node
features and their memory (``a100_40g=40,a100_80g=80,h100=80``, from ``sinfo -o "%f %G"``); each GPU job then asks for
``constraint`` = the features whose GPUs hold its need (``a100_80g|h100``). Unset, no constraint is sent; the need
still shows as ``gpu_mem_gib`` in ``snakemake -n``.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping

from wobble.errors import WobbleError
from wobble.models.fit import GIB, size_bytes
from wobble.models.training_fit import training_memory, zero_settings

#: Minutes one attempt of a job asks for at most: 48 h (``WOBBLE_MAX_RUNTIME`` sets another).
MAX_RUNTIME = 2880
#: Rule kinds whose killed job goes on from its partial state when run again (wobble.runner's ``.partial`` files,
#: the finetune's checkpoints): work longer than the cap runs as several attempts.
RESUMABLE = frozenset({"first_token_infer", "followup_dialogues", "followup_judge", "icl_bias_infer",
                       "instructions_infer", "finetune"})
#: The factor over the weights a GPU holds for the KV cache and activations, and the CUDA context (GiB).
ACTIVATION_FACTOR, CONTEXT_GIB = 1.25, 2.0
FEATURES_ENV = "WOBBLE_SLURM_GPU_FEATURES"


def max_runtime() -> int:
    """The per-attempt cap in minutes: ``WOBBLE_MAX_RUNTIME``, else :data:`MAX_RUNTIME`."""
    value = os.environ.get("WOBBLE_MAX_RUNTIME", "").strip()
    if not value:
        return MAX_RUNTIME
    if not value.isdigit() or int(value) < 10:
        raise WobbleError(f"WOBBLE_MAX_RUNTIME={value!r}: minutes, a whole number of at least 10")
    return int(value)


def attempt_runtime(work: str, minutes: int, attempt: int, retries: int, cap: int | None = None,
                    job: str = "") -> int:
    """The minutes attempt ``attempt`` (1, 2, ...) of a job of kind ``work`` estimated at ``minutes`` asks for: the
    estimate times the attempt, at most the cap. Work over the cap that does not resume, or that needs more
    attempts than ``retries`` + 1 allow, stops in one line naming ``job``."""
    cap = max_runtime() if cap is None else cap
    if minutes > cap:
        needed = math.ceil(minutes / cap)
        what = f"{job or work}: estimated {minutes:,} minutes, over the per-job cap of {cap:,} (WOBBLE_MAX_RUNTIME)"
        if work not in RESUMABLE:
            raise WobbleError(f"{what}, and a killed {work} job starts again from nothing: raise the cap to your "
                              f"partition's limit, or --set-resources {work}:runtime=N")
        if needed > retries + 1:
            raise WobbleError(f"{what}: it resumes, but needs {needed} attempts and the profile allows "
                              f"{retries + 1} (retries: {retries}); raise retries to {needed - 1}")
    return min(cap, minutes * max(1, int(attempt)))


def features() -> dict[str, float]:
    """``{feature: GiB}`` of ``WOBBLE_SLURM_GPU_FEATURES`` (empty when unset); one line for a malformed entry."""
    out = {}
    for item in filter(None, (part.strip() for part in os.environ.get(FEATURES_ENV, "").split(","))):
        name, _, gib = item.partition("=")
        try:
            out[name.strip()] = float(gib)
        except ValueError:
            raise WobbleError(f"{FEATURES_ENV}: {item!r} is not FEATURE=GiB (e.g. a100_80g=80)") from None
        if not name.strip() or out[name.strip()] <= 0:
            raise WobbleError(f"{FEATURES_ENV}: {item!r} is not FEATURE=GiB (e.g. a100_80g=80)")
    return out


def gpu_need_gib(config: Mapping[str, Any], work: str, keys: Iterable[str], gpus: int,
                 sizes: Mapping[str, Any]) -> float | None:
    """GiB a job of kind ``work`` needs on each of its ``gpus`` GPUs for the largest of its models ``keys``
    (``sizes``: their :class:`wobble.models.sizing.Size`, None where unknown); None when none is of known size."""
    known = [(k, sizes[k]) for k in keys if sizes.get(k) is not None]
    if not known or gpus < 1:
        return None
    key, size = max(known, key=lambda item: item[1].bytes)
    spec = config["models"][key]
    if work == "finetune":
        knobs = (config.get("instructions") or {}).get("finetune") or {}
        ft = spec.get("finetune") or {}
        held = training_memory(size.params_b * 1e9, zero=zero_settings(knobs.get("deepspeed")), ranks=gpus,
                               method=ft.get("method", knobs.get("method", "lora"))).gpu
        return round(held / GIB + CONTEXT_GIB, 1)
    entries = [size_bytes(v) for d, v in (spec.get("max_memory") or {}).items() if str(d).isdigit()]
    if entries:  # accelerate fills each GPU up to its max_memory entry: the config's budget, headroom included
        return round(max(entries) / GIB + CONTEXT_GIB, 1)
    return round(ACTIVATION_FACTOR * size.bytes / gpus / GIB + CONTEXT_GIB, 1)


def gpu_constraint(need_gib: float | None, job: str = "") -> str | None:
    """The SLURM constraint of a GPU job needing ``need_gib`` per GPU: the features of :data:`FEATURES_ENV` whose GPUs
    hold it, joined by ``|``; None when the variable is unset or the need unknown; one line when none holds it."""
    table = features()
    if need_gib is None or not table:
        return None
    fit = [name for name, gib in sorted(table.items(), key=lambda item: (item[1], item[0])) if gib >= need_gib]
    if not fit:
        raise WobbleError(f"{job or 'a GPU job'} needs ~{need_gib:g} GiB per GPU; no GPU of {FEATURES_ENV} "
                          f"({', '.join(f'{n}={g:g}' for n, g in table.items())}) holds it: give its model more GPUs "
                          f"(max_memory entries) or add a larger GPU's feature")
    return "|".join(fit)
