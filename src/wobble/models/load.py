"""Load a materialized model directory (see :mod:`wobble.models.materialize`) for inference.

``load_model(model_dir, dtype)`` returns ``(model, tokenizer, manifest)`` with the model in eval mode
on the chosen device. Two kinds of directory:

* a full model (``*.safetensors`` + ``config.json`` + tokenizer files + ``wobble-model.json``);
* a finetuned LoRA adapter: ``adapter_config.json`` + adapter weights + ``wobble-model.json`` whose
  ``base_dir`` names the materialized base model directory (absolute, or relative to the working
  directory, to the adapter directory or to one of its ancestors, such as the checkout it was made in). The base is loaded, the adapter applied with peft and
  merged into the weights (``merge_and_unload``), so inference runs at base-model speed. The
  tokenizer comes from the adapter directory when it holds one, else from the base.

Compute dtype: ``"auto"`` = bfloat16 on CUDA, or on a CPU with native bf16 instructions
(``avx512_bf16`` or ``amx_bf16``), else float32; ``"bfloat16"``/``"float32"``/``"float16"`` force one.

Placement: a model larger than one device is spread by accelerate, from the model spec's ``device_map``
(``auto``, ``balanced``, ``sequential``, or ``{module: device}``), ``max_memory`` (``{0: 70GiB, cpu: 200GiB}``:
what each GPU, the CPU's memory and nothing else may hold) and ``offload_folder`` (where layers that fit
nowhere else go: disk offload), all passed to ``from_pretrained``. Layers offloaded to the CPU or disk are moved
to the computing device as they run, so the model computes what it computes unsplit. Without ``device_map`` the
model is loaded whole and moved to the device (a finetune rank's: ``cuda:LOCAL_RANK``); a model DeepSpeed ZeRO-3
partitioned as it loaded (a finetune's Trainer arguments were built first) stays where ZeRO-3 put its slices. A
finetuned adapter's base takes the adapter's placement when the adapter's spec has one.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Any, Mapping

from wobble.errors import ConfigError, WobbleError
from wobble.io import read_json
from wobble.models.materialize import MANIFEST

log = logging.getLogger(__name__)

DTYPES = ("auto", "bfloat16", "float32", "float16")
#: Model spec keys that say where the weights go (passed to ``from_pretrained``).
PLACEMENT_KEYS = ("device_map", "max_memory", "offload_folder")


@functools.lru_cache(maxsize=1)
def cpu_supports_bf16() -> bool:
    """True if this CPU has native bfloat16 arithmetic (AVX512-BF16 or AMX-BF16)."""
    flags: set[str] = set()
    try:  # Linux: read directly (py-cpuinfo starts a subprocess that costs ~1.5 CPU-s per model job)
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        try:
            import cpuinfo  # py-cpuinfo

            flags = set(cpuinfo.get_cpu_info().get("flags", []))
        except Exception:  # noqa: BLE001 - optional dependency / unusual platform
            pass
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def resolve_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def resolve_dtype(dtype: str | None = "auto", device: str = "cpu"):
    """Map a dtype name (``auto``, ``bfloat16``, ``float32``, ``float16``) to a ``torch.dtype``."""
    import torch

    dtype = dtype or "auto"
    if dtype not in DTYPES:
        raise ConfigError("models.<key>.dtype", f"one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype == "auto":
        if str(device).startswith("cuda") or cpu_supports_bf16():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, dtype)


def read_manifest(model_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(model_dir) / MANIFEST
    if not path.is_file():
        raise WobbleError(f"{model_dir}: not a materialized model directory (no {MANIFEST}); "
                          f"create it with the materialize_model rule")
    return read_json(path)


def _resolve_base(model_dir: Path, base: str) -> Path:
    """The adapter's base model directory: ``base`` as given, else under the adapter directory, else under one of
    its ancestors (the workflow writes ``base`` relative to the checkout the adapter was made in, so an adapter
    loads from any working directory)."""
    for cand in (Path(base), model_dir / base, *(a / base for a in model_dir.resolve().parents)):
        if (cand / MANIFEST).is_file():
            return cand
    raise WobbleError(f"{model_dir}: adapter's base model directory {base!r} not found (or has no {MANIFEST})")


def _has_tokenizer(d: Path) -> bool:
    return any((d / n).is_file() for n in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model"))


def placement(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``from_pretrained`` keywords of a model spec's placement keys (:data:`PLACEMENT_KEYS`): ``{}`` without
    ``device_map``. ``max_memory``'s GPU keys become ints (a manifest's JSON writes them as strings)."""
    spec = spec or {}
    given = {k: spec[k] for k in PLACEMENT_KEYS if spec.get(k) is not None}
    if not given:
        return {}
    key = spec.get("key", "<key>")
    if "device_map" not in given:
        raise ConfigError(f"models.{key}.{next(iter(given))}", "only takes effect with device_map (e.g. device_map: auto)")
    out: dict[str, Any] = {"device_map": given["device_map"]}
    if "max_memory" in given:
        out["max_memory"] = {int(k) if str(k).isdigit() else str(k): v for k, v in given["max_memory"].items()}
    if "offload_folder" in given:
        out["offload_folder"] = str(given["offload_folder"])
    return out


def load_model(model_dir: str | os.PathLike, dtype: str | None = "auto", device: str = "auto",
               place: Mapping[str, Any] | None = None):
    """Return ``(model, tokenizer, manifest)`` for a materialized (or finetuned-adapter) directory.

    ``place``: ``from_pretrained`` placement keywords (:func:`placement`); default: those of the spec recorded in
    the directory's manifest."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    d = Path(model_dir)
    manifest = read_manifest(d)
    kind = manifest.get("kind")
    if kind not in ("causal", "seq2seq"):
        raise WobbleError(f"{d / MANIFEST}: 'kind' should be 'causal' or 'seq2seq', got {kind!r}")
    dev = resolve_device(device)
    tdtype = resolve_dtype(dtype, dev)
    if place is None:
        place = placement({"key": manifest.get("key"), **(manifest.get("spec") or {})})

    if (d / "adapter_config.json").is_file():
        if not manifest.get("base_dir"):
            raise WobbleError(f"{d / MANIFEST}: an adapter directory needs 'base_dir' (the base model directory)")
        from peft import PeftModel

        base_dir = _resolve_base(d, manifest["base_dir"])
        base, base_tok, _ = load_model(base_dir, dtype=dtype, device=dev, place=place or None)
        model = PeftModel.from_pretrained(base, d).merge_and_unload()
        tok = AutoTokenizer.from_pretrained(d) if _has_tokenizer(d) else base_tok
    else:
        cls = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
        try:
            model = cls.from_pretrained(d, dtype=tdtype, **place)
            tok = AutoTokenizer.from_pretrained(d)
        except (OSError, ValueError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise WobbleError(f"{d}: could not load the {kind} model: {first}") from None
    if place:  # accelerate placed the weights (and hooks moving offloaded ones): no .to() on a dispatched model
        where = getattr(model, "hf_device_map", None) or {"": dev}
        log.info("%s placed by device_map %r: %s", manifest.get("key"), place["device_map"], _placement_summary(where))
    elif any(hasattr(p, "ds_id") for p in model.parameters()):
        log.info("%s partitioned among the ranks by DeepSpeed ZeRO-3 as it loaded", manifest.get("key"))
    else:
        model.to(dev)
        if next(model.parameters()).dtype != tdtype:
            model.to(tdtype)
    model.eval()
    log.info("loaded %s (%s) from %s as %s on %s", manifest.get("key"), kind, d, tdtype, dev)
    return model, tok, manifest


def _placement_summary(device_map: Mapping[str, Any]) -> str:
    """``cuda:0 41 modules, cpu 3, disk 2``: how many entries of an accelerate device map each device holds."""
    counts: dict[str, int] = {}
    for device in device_map.values():
        name = f"cuda:{device}" if isinstance(device, int) else str(device)
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} {n}" for name, n in counts.items())
