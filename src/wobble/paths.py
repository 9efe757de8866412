"""Where the workflow keeps things: one function per kind of path, shared by rules and studies."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

PAPER_DIR = "paper"
#: The default run's results folder; its logs stay in ``logs/``, its Snakemake benchmarks go to ``results/benchmarks/``.
RESULTS = "results"


def prepared(dataset: str) -> str:
    """The normalized JSONL of a prepared dataset."""
    return f"resources/prepared/{dataset}.jsonl"


def results_root(config: Mapping[str, Any]) -> str:
    """The folder a run writes its results under (config ``results_root``): every study's folder, the merged
    ledger, the scorecards and the probe; ``results`` for the default run, ``results/reference`` for the
    reference run. A config not validated (a hand-made one, without the schema's defaults) is the default run's."""
    return config.get("results_root", RESULTS)


def study_root(config: Mapping[str, Any], study: str) -> str:
    return f"{results_root(config)}/{study}"


def log_dir(config: Mapping[str, Any]) -> str:
    """The folder of the run's job logs: ``logs`` for the default root, ``<root>/logs`` for any other."""
    root = results_root(config)
    return "logs" if root == RESULTS else f"{root}/logs"


def benchmark_dir(config: Mapping[str, Any]) -> str:
    """The folder of the run's Snakemake benchmarks (per-job wall time, CPU time, peak memory): ``<root>/benchmarks``
    for every root (``results/benchmarks`` for the default run), never beside the benchmark scripts."""
    return f"{results_root(config)}/benchmarks"


def paper_csv(study: str, stem: str) -> str:
    return f"{PAPER_DIR}/{study}/{stem}.csv"


def model_dir(config: Mapping[str, Any], key: str) -> str:
    """Directory of a materialized (or finetuned) model key; a ``source: openai`` model's directory holds only
    its manifest (the server spec, never a key), so every rule's ``model`` input looks the same."""
    spec = config["models"][key]
    if "finetune" in spec:
        return f"resources/models/finetuned/{key}"
    return f"resources/models/{key}"


def weight_gpus(spec: Mapping[str, Any]) -> int:
    """GPUs a job that loads a model's weights books: ``tensor_parallel_size`` for ``engine: vllm``, one per GPU entry
    of the spec's ``max_memory`` (a model spread over several GPUs by accelerate, wobble.models.load), else one."""
    if spec.get("engine") == "vllm" and spec.get("tensor_parallel_size"):
        return int(spec["tensor_parallel_size"])
    return sum(1 for device in (spec.get("max_memory") or {}) if str(device).isdigit()) or 1


def input_model_key(path) -> str | None:
    """The model key of a model directory (:func:`model_dir`) or a path inside one; None for any other path."""
    parts = str(path).split("/")
    if parts[:2] != ["resources", "models"] or len(parts) < 3:
        return None
    return parts[3] if parts[2] == "finetuned" and len(parts) > 3 else parts[2]


def gpus_for_inputs(config: Mapping[str, Any], inputs: Iterable[str]) -> int:
    """GPUs a job asks for (its rule's ``gpu`` resource): one when it loads a model's weights, i.e. one of its
    inputs is a model directory (:func:`model_dir`) of a model that is not an OpenAI-compatible server (whose
    directory holds only a manifest); a server the job starts itself (``server:``) books its ``gpus``; none
    otherwise (string matching, scoring, a job that calls a server). A model spread over GPUs (:func:`weight_gpus`)
    books one per GPU entry of its ``max_memory``."""
    models = config.get("models", {})
    gpus = 0
    for key in filter(None, map(input_model_key, inputs)):
        spec = models.get(key, {})
        server = int((spec.get("server") or {}).get("gpus", 0))
        gpus = max(gpus, weight_gpus(spec) if spec.get("source") != "openai" else server)
    return gpus


def with_ext(stem, ext: str):
    """``stem`` + ``ext`` as a Path. Not ``Path.with_suffix``: a stem such as ``qwen2.5-coder-0.5b-instruct``
    has a "suffix" (``.5b-instruct``) that with_suffix would replace."""
    from pathlib import Path

    stem = Path(stem)
    return stem.with_name(stem.name + ext)
