"""Where the workflow keeps things: one function per kind of path, shared by rules and studies."""

from __future__ import annotations

from typing import Any, Mapping

PAPER_DIR = "paper"


def prepared(dataset: str) -> str:
    """The normalized JSONL of a prepared dataset."""
    return f"resources/prepared/{dataset}.jsonl"


def study_root(study: str) -> str:
    return f"results/{study}"


def paper_csv(study: str, stem: str) -> str:
    return f"{PAPER_DIR}/{study}/{stem}.csv"


def model_dir(config: Mapping[str, Any], key: str) -> str:
    """Directory of a materialized (or finetuned) model key; a ``source: openai`` model's directory holds only
    its manifest (the server spec, never a key), so every rule's ``model`` input looks the same."""
    spec = config["models"][key]
    if "finetune" in spec:
        return f"resources/models/finetuned/{key}"
    return f"resources/models/{key}"
