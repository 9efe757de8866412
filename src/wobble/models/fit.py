"""Do a model's weights fit what the jobs that load it request? The sizes and capacities; the check itself,
which ``wobble check-config`` runs before any job, is :func:`wobble.models.sizing.check_model_fits` (it needs the
jobs' resources, which :mod:`wobble.models.sizing` derives from these sizes).

**Weights** (:func:`weight_estimate`), from what is known without downloading, first found wins:

1. the spec's ``weights_gib`` (GiB at the compute dtype) or ``params_b`` (billions of parameters) x the compute
   dtype's bytes;
2. the parameter count read from the tensor headers of weights already on disk: the materialized model
   directory (``resources/models/<key>``), a ``local`` spec's ``path`` (safetensors, or its ``gguf_file``), or a
   ``hub`` id's files in the Hugging Face cache; x the compute dtype's bytes.

``dtype: auto`` counts 2 bytes (bfloat16, as on a GPU). A finetuned key weighs what its base weighs. Every model
the config defines is checked (a defined model could be named by any study), except one of unknown size (a hub id
neither cached nor sized in its spec, a model not materialized yet) and a ``source: openai`` model (its weights
are the server's).

**What a job gets** (:func:`job_capacity`): a rule that loads a model asks for ``gpu`` GPUs
(:func:`wobble.paths.gpus_for_inputs`) and ``mem_mb`` of memory, from the weights' size
(:func:`wobble.models.sizing.inference_mem_mb`: the least any job that loads the model asks for). The weights may
fill the GPUs, ``max_memory``'s GPU entries when given, else ``gpu_mem_gib`` each; with a ``device_map`` also the
CPU's memory within ``mem_mb`` (and within ``max_memory['cpu']``, none where ``max_memory`` has no cpu entry); with
an ``offload_folder`` the rest goes to disk, which has no limit here. Activations and the KV cache come on top of
the weights, so a fit is necessary, not sufficient.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from wobble import paths
from wobble.errors import WobbleError

GIB = 1 << 30
#: Bytes per parameter of each compute dtype (``auto``: bfloat16, as on a GPU).
DTYPE_BYTES = {"auto": 2, "bfloat16": 2, "float16": 2, "float32": 4}
_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
#: A ``max_memory`` size as the schema takes it (accelerate reads the same strings).
SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(KB|MB|GB|KiB|MiB|GiB)$")


def size_bytes(value: int | str) -> int:
    """Bytes of a ``max_memory`` value: an integer (bytes) or ``"70GiB"``, ``"80GB"``, ``"512MiB"`` (``GB`` = 10^9,
    ``GiB`` = 2^30, as accelerate's ``convert_file_size_to_int`` reads them)."""
    if isinstance(value, int):
        return value
    m = SIZE.match(str(value))
    if not m:
        raise WobbleError(f"{value!r} is not a memory size (bytes, or a number with KB, MB, GB, KiB, MiB or GiB)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


# ---------------------------------------------------------------------------------------------------- weights

def _safetensors_params(files) -> int:
    from safetensors import safe_open

    total = 0
    for path in files:
        with safe_open(str(path), framework="numpy") as f:
            total += sum(math.prod(f.get_slice(name).get_shape()) for name in f.keys())
    return total


def _gguf_params(path) -> int:
    import gguf

    try:
        return sum(int(t.n_elements) for t in gguf.GGUFReader(str(path)).tensors)
    except (ValueError, IndexError, OSError) as e:  # cut short, or not a GGUF at all
        raise WobbleError(f"{path}: not a readable GGUF file ({type(e).__name__}: {e})") from None


def _dir_params(d: Path, gguf_file: str | None = None) -> int | None:
    if gguf_file:
        return _gguf_params(d / gguf_file) if (d / gguf_file).is_file() else None
    files = sorted(d.glob("*.safetensors")) if d.is_dir() else []
    return _safetensors_params(files) if files else None


def _hub_cache_params(model_id: str, revision: str) -> int | None:
    """Parameters of a hub model whose safetensors files are all in the Hugging Face cache, else None."""
    from huggingface_hub import try_to_load_from_cache

    def cached(name):
        path = try_to_load_from_cache(model_id, name, revision=revision)
        return path if isinstance(path, str) else None

    index = cached("model.safetensors.index.json")
    names = sorted(set(json.loads(Path(index).read_text())["weight_map"].values())) if index else ["model.safetensors"]
    files = [cached(n) for n in names]
    return _safetensors_params(files) if files and all(files) else None


@dataclass(frozen=True)
class Weights:
    bytes: int
    how: str  # where the estimate comes from, for the message


def compute_dtype(models: Mapping[str, Any], key: str) -> str:
    """The dtype ``key`` computes in: its own, its base's for a finetuned key, else ``auto``."""
    spec = models[key]
    if spec.get("dtype"):
        return spec["dtype"]
    return compute_dtype(models, spec["finetune"]["base"]) if "finetune" in spec else "auto"


def weight_estimate(config: Mapping[str, Any], key: str, root: Path = Path(".")) -> Weights | None:
    """The bytes of ``key``'s weights at its compute dtype, or None when unknown (see the module docstring)."""
    models = config["models"]
    spec = models[key]
    per = DTYPE_BYTES[compute_dtype(models, key)]
    if spec.get("weights_gib") is not None:
        return Weights(int(spec["weights_gib"] * GIB), f"weights_gib {spec['weights_gib']}")
    if spec.get("params_b") is not None:
        return Weights(int(spec["params_b"] * 1e9 * per), f"params_b {spec['params_b']} x {per} bytes")
    if "finetune" in spec:
        base = weight_estimate(config, spec["finetune"]["base"], root)
        return None if base is None else Weights(base.bytes, f"its base's {base.how}")
    source = spec.get("source")
    if source == "openai":
        return None
    params = _dir_params(root / paths.model_dir(config, key))
    if params is None and source == "local":
        params = _dir_params(root / spec["path"], spec.get("gguf_file"))
    if params is None and source == "hub":
        params = _hub_cache_params(spec["id"], str(spec.get("revision", "main")))
    if params is None:
        return None
    return Weights(params * per, f"{params / 1e9:.2f}B parameters x {per} bytes")


# ------------------------------------------------------------------------------------------------ requests

@dataclass(frozen=True)
class Capacity:
    bytes: float  # math.inf with disk offload
    resources: str  # what the jobs request, for the message


def job_capacity(config: Mapping[str, Any], key: str, mem_mb: int | None) -> Capacity:
    """What the weights of ``key`` may fill in one job that loads it (see the module docstring)."""
    spec = config["models"][key]
    gpus = paths.gpus_for_inputs(config, [paths.model_dir(config, key)])
    max_memory = {str(k): v for k, v in (spec.get("max_memory") or {}).items()}
    gpu_entries = {k: size_bytes(v) for k, v in max_memory.items() if k.isdigit()}
    parts = [f"gpu={gpus}"]
    if len(gpu_entries) > gpus:
        raise WobbleError(f"model {key} has max_memory for {len(gpu_entries)} GPUs; its jobs request gpu={gpus}")
    if gpu_entries:
        total = float(sum(gpu_entries.values()))
        parts.append("max_memory " + ", ".join(f"{k}: {max_memory[k]}" for k in gpu_entries))
    else:
        per_gpu = float(config.get("gpu_mem_gib", 80))
        total = gpus * per_gpu * GIB
        parts.append(f"gpu_mem_gib {per_gpu:g} each")
    if spec.get("device_map"):
        # accelerate offloads to the CPU what max_memory's cpu entry allows (all the RAM it sees without a
        # max_memory, none with one that has no cpu entry); the job's mem_mb bounds it either way
        cpu = mem_mb * (1 << 20) if mem_mb is not None else 0
        if "cpu" in max_memory:
            cpu = min(cpu, size_bytes(max_memory["cpu"]))
            parts.append(f"max_memory cpu: {max_memory['cpu']}")
        elif max_memory:
            cpu = 0
        total += cpu
        if mem_mb is not None:
            parts.append(f"mem_mb={mem_mb}")
        if spec.get("offload_folder"):
            total = math.inf
            parts.append(f"offload_folder {spec['offload_folder']}")
    return Capacity(total, ", ".join(parts))
