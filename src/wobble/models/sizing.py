"""What a job that loads a model asks a cluster for (``mem_mb``, ``disk_mb``, ``runtime``), from the model's size.

The size is :func:`wobble.models.fit.weight_estimate`'s, the one check-config's fit uses: ``weights_gib`` or
``params_b`` in the model's entry, else the tensor headers of its weights on disk. ``W`` below is the weights'
bytes at the compute dtype, ``P`` the billions of parameters. A job's model is the model whose directory is among
its inputs (the largest when there are several: a labelling job may load the judge or the classifier); the
``materialize_model`` job's is its ``{model}`` wildcard.

**Memory** (per family of rules, :data:`FAMILIES`):

* ``materialize``: ``2.4 W + 4 GiB``. The checkpoint is loaded whole at its stored dtype, which may be float32 (the
  google-t5 checkpoints; a GGUF is dequantized to float32), twice a 16-bit ``W``, and saved again (measured: the
  GGUF of Qwen2.5-1.5B, 1.54 B parameters, peaks at 9.0 GB RSS, 1.5x its float32 weights).
* ``inference``: ``W + 4 GiB``: ``from_pretrained`` reads the weights through host memory (a ``device_map`` model
  keeps its CPU share there), plus Python, torch, the tokenizer and the data.
* ``training``: a full finetune ``3 W + 8 GiB`` (fp32 master weights, upcast on the host from the loaded copy),
  LoRA ``W + 8 GiB`` (the base stays in its dtype); times N for a finetune run as N ranks (each loads the model).

**Disk** (``disk_mb``, only where a job writes weights): ``materialize`` ``3 W + 1 GiB`` (the directory at up to
float32, and the GGUF assembled beside it); a full finetune ``14 W + 1 GiB`` (the model in float32 and
``save_total_limit`` = 2 checkpoints of float32 weights and AdamW's two moments), LoRA 1 GiB.

**Runtime** (minutes): ``base + rate x P x units``. ``rate`` (:data:`RATES`) is the minutes per billion parameters
of the rule's largest job at paper scale, from the study's measured CPU-s per item per billion parameters
(docs/<study>.md, "At paper scale") x the items of that job / 100 (one GPU doing the work of 100 CPU threads, the
slow end of the pages' range: an assumption, not a measurement), rounded up. A job that runs out of time is
submitted again with twice, then three times as long, up to a per-job cap (:mod:`wobble.models.requests`). ``units`` is 1, or a followup dialogue job's :func:`dialogue_units`. Materializing
takes ``30 + 1.5`` minutes per GiB of ``W`` (a download at ~20 MB/s of a float32 copy, loading and saving).

A job whose models are all of unknown size (a hub id neither cached nor given ``params_b``, a model not
materialized yet, a server's model without ``params_b``) gets the family's fixed memory (the rules' former
values) and the runtime of a :data:`UNKNOWN_PARAMS_B`-billion-parameter model, the default run's largest; give
such a model ``params_b``. A model behind an API (no weights in the job) is costed as :data:`API_PARAMS_B`. A job
that runs no model (string matching) gets the family's base runtime.
``snakemake --set-resources RULE:mem_mb=N`` (``runtime``, ``disk_mb``) overrides any of these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from wobble import paths
from wobble.errors import WobbleError
from wobble.io import read_json
from wobble.models.fit import DTYPE_BYTES, GIB, compute_dtype, gib, job_capacity, weight_estimate

MIB = 1 << 20
#: Billions of parameters a model of unknown size is sized as (qwen2.5-coder-1.5b-instruct, the default run's largest).
UNKNOWN_PARAMS_B = 1.5
#: Billions of parameters the runtime of a model behind an API (``source: openai`` at a ``base_url``) is costed as:
#: ChatGPT's followup runs then take as long as Vicuna-13B's, 2,270 dialogues (~5,200 requests) in 156 minutes,
#: ~7 s a request at the default concurrency of 4.
API_PARAMS_B = 13.0


@dataclass(frozen=True)
class Family:
    mem_per_weight: float  # host memory per byte of weights
    mem_base_gib: float
    mem_unknown_mb: int  # memory when no model of the job has a known size
    base_minutes: int
    disk_per_weight: float | None = None  # disk_mb per byte of weights (+ 1 GiB); None: the job writes no weights


FAMILIES = {
    "materialize": Family(2.4, 4, 12000, 30, disk_per_weight=3.0),
    "inference": Family(1.0, 4, 8000, 30),
    "training": Family(3.0, 8, 16000, 60, disk_per_weight=14.0),  # a full finetune
    "lora": Family(1.0, 8, 16000, 60, disk_per_weight=0.0),
}

#: Per rule kind: its family and the minutes per billion parameters of one job's work (see the module docstring;
#: the arithmetic is in docs/cluster.md).
RATES = {
    "first_token_infer": ("inference", 5),
    "first_token_label": ("inference", 7),  # a 4-shot judge's rate, above the PEFT classifier's
    "first_token_classifier_eval": ("inference", 7),
    "first_token_peft_train": ("lora", 4),
    "followup_dialogues": ("inference", 6),  # per run of DIALOGUE_RUN_ITEMS dialogues (dialogue_units)
    "followup_judge": ("inference", 7),
    "icl_bias_infer": ("inference", 26),
    "instructions_infer": ("inference", 28),
    "finetune": ("training", 21),
    "probe": ("inference", 1),
}
MATERIALIZE_MINUTES_PER_GIB = 1.5
#: The unit of a followup dialogue job's rate: one run over StrategyQA's 2,270 evaluated items, the largest dataset
#: at paper scale.
DIALOGUE_RUN_ITEMS = 2270


@dataclass(frozen=True)
class Size:
    bytes: float  # the weights at the compute dtype
    params_b: float


def model_size(config: Mapping[str, Any], key: str, root: Path = Path("."),
               known: dict[str, Size] | None = None) -> Size | None:
    """The weights of ``key`` and its parameters in billions, or None when unknown. ``known``: sizes found before
    (a model's weights do not change in a run, while a model of unknown size may be materialized later), filled
    here; Snakemake evaluates a ready job's resources on every pass of its scheduler."""
    if known is not None and key in known:
        return known[key]
    weights = weight_estimate(config, key, root)
    if weights is None:
        return None
    size = Size(weights.bytes, weights.bytes / DTYPE_BYTES[compute_dtype(config["models"], key)] / 1e9)
    if known is not None:
        known[key] = size
    return size


def dialogue_units(runs: int, selection: str | Path) -> float:
    """A followup dialogue job's work in runs of :data:`DIALOGUE_RUN_ITEMS` dialogues: ``runs`` x the evaluated
    items of its dataset's selection (``{"eval": [ids], ...}``, wobble.studies.followup.pipeline) once the
    selection exists, as it does when Snakemake evaluates a job's resources again just before running it; else
    ``runs`` (a dry run: the largest dataset's bound)."""
    path = Path(selection)
    return runs * len(read_json(path)["eval"]) / DIALOGUE_RUN_ITEMS if path.is_file() else runs


def input_models(config: Mapping[str, Any], inputs: Iterable[str]) -> list[str]:
    """The keys of the models whose directories are among ``inputs``."""
    return [key for key in map(paths.input_model_key, inputs) if key in config.get("models", {})]


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def _family(config: Mapping[str, Any], work: str, keys: list[str]) -> str:
    if work == "materialize_model":
        return "materialize"
    family = RATES[work][0]
    if family == "training" and keys and all(config["models"][k].get("finetune", {}).get("method") == "lora"
                                             for k in keys):
        return "lora"
    return family


def _runtime_params_b(config: Mapping[str, Any], keys: list[str], size: Size | None) -> float:
    if size is not None:
        return size.params_b
    models = config["models"]
    behind_api = all(models[k].get("source") == "openai" and not models[k].get("server") for k in keys)
    return API_PARAMS_B if behind_api else UNKNOWN_PARAMS_B


def job_resources(config: Mapping[str, Any], work: str, keys: Iterable[str], units: float = 1, processes: int = 1,
                  root: Path = Path("."), known: dict[str, Size] | None = None) -> dict[str, int]:
    """``mem_mb`` and ``runtime`` (and ``disk_mb`` where the job writes weights) of a job of rule kind ``work`` (a
    key of :data:`RATES`, or ``materialize_model``) that loads the models ``keys`` (a finetune: the finetuned
    model's key) in each of ``processes`` processes (a finetune's ranks), see the module docstring. Memory and disk
    are rounded up to 1,000 MiB, runtime to 10 minutes. ``known``: as for :func:`model_size`."""
    keys = list(dict.fromkeys(keys))
    name = _family(config, work, keys)
    family = FAMILIES[name]
    sizes = [s for s in (model_size(config, k, root, known) for k in keys) if s is not None]
    size = max(sizes, key=lambda s: s.bytes, default=None)
    weights = size.bytes if size else UNKNOWN_PARAMS_B * 1e9 * 2  # unknown: 1.5 B parameters in 16 bits
    mem_mb = (family.mem_per_weight * weights + family.mem_base_gib * GIB) / MIB if size else family.mem_unknown_mb
    out = {"mem_mb": _round_up(processes * mem_mb, 1000)}
    if name == "materialize":
        minutes = family.base_minutes + MATERIALIZE_MINUTES_PER_GIB * weights / GIB
    elif keys:
        minutes = family.base_minutes + RATES[work][1] * _runtime_params_b(config, keys, size) * units
    else:  # string matching: no model runs
        minutes = family.base_minutes
    out["runtime"] = _round_up(minutes, 10)
    if family.disk_per_weight is not None:
        out["disk_mb"] = _round_up((family.disk_per_weight * weights + GIB) / MIB, 1000)
    return out


def inference_mem_mb(config: Mapping[str, Any], key: str, root: Path = Path(".")) -> int:
    """The memory of the inference jobs that load ``key``: the least a job that loads it asks for."""
    return job_resources(config, "first_token_infer", [key], root=root)["mem_mb"]


# --------------------------------------------------------------------------------------------------- check

def misfits(config: Mapping[str, Any], root: Path) -> tuple[list[str], list[str]]:
    """``(lines, sized)``: one line per model of the config whose weights exceed what its jobs request, and the
    keys whose size is known."""
    lines, sized = [], []
    for key in config.get("models", {}):
        weights = weight_estimate(config, key, root)
        if weights is None:
            continue
        sized.append(key)
        cap = job_capacity(config, key, inference_mem_mb(config, key, root))
        if weights.bytes > cap.bytes:
            lines.append(f"model {key} needs ~{gib(weights.bytes)} of weights ({weights.how}); its jobs request "
                         f"{gib(cap.bytes)} (resources {cap.resources})")
    return lines, sized


def check_model_fits(config: Mapping[str, Any], root: Path) -> list[str]:
    """The keys of the models whose weights fit what their jobs request (those of known size); a WobbleError
    naming the first model that does not fit (and the others) instead when one does not."""
    lines, sized = misfits(config, root)
    if lines:
        also = f" (also: {'; '.join(lines[1:])})" if lines[1:] else ""
        raise WobbleError(lines[0] + also)
    return sized
