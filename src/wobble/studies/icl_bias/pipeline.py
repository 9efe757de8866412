"""The icl_bias workflow steps behind ``rules/icl_bias.smk`` (the scripts only read and write):

split (per pair) -> requests (per pair: every condition's prompts, model-independent) -> predictions
(per model x pair: label-word log-probs or generated explanations) -> scores (per model x pair: one
answer per test item and prompt set) -> summary (per model: every level's numbers) -> tables.

Paths and config helpers: :mod:`.layout`. A prediction record is its request (``prefix_id`` + ``query``; the prompt is
``requests/<pair>.json``'s ``prefixes[prefix_id] + query``) plus the runner's fields:
``rendered_prompt``, ``model`` and ``next_token_logprobs`` (label word -> log-prob, null for -inf) or
``output`` (the generated text).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from wobble.backends.base import Backend, GenParams
from wobble.io import read_jsonl, write_jsonl
from wobble.runner import generate_resumable, score_next_token_resumable
from wobble.studies.icl_bias.answers import score_records
from wobble.studies.icl_bias.interventions import style
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.requests import condition_requests, conditions

STOP = ("\n\n",)  # the authors' stop sequence: an answer ends at the blank line before the next instance


def pair_requests(split: Mapping, texts: Mapping, interventions: Sequence[str],
                  targets: Sequence[str]) -> dict[str, Any]:
    """``{"pair", "available", "prefixes", "requests"}``: every condition's requests of a built split."""
    if not split["available"]:
        return {"pair": split["pair"], "available": False, "prefixes": {}, "requests": []}
    pair = PAIRS[split["pair"]]
    prefixes: dict[str, str] = {}
    reqs: list[dict] = []
    for intervention, target in conditions(interventions, targets):
        st = style(texts, pair, intervention, target)
        pre, rs = condition_requests(split, st)
        prefixes.update(pre)
        reqs += [{**r, "notes": list(st.notes)} for r in rs]
    return {"pair": split["pair"], "available": True, "prefixes": prefixes, "requests": reqs}


def _answered(path: Path, requests: Sequence[Mapping]) -> bool:
    """True when ``path`` already holds a finished answer for exactly ``requests`` (a resumed job)."""
    if not path.is_file():
        return False
    return [r["uid"] for r in read_jsonl(path)] == [r["uid"] for r in requests]


def infer(backend: Backend, bundle: Mapping[str, Any], out_path: str | os.PathLike, *, max_new_tokens: int,
          seed: int, chunk_size: int = 64) -> int:
    """Answer every request of a pair through the shared runner (resumable), in request order.

    Label-word requests: :func:`wobble.runner.score_next_token_resumable` (``next_token_logprobs``);
    explanation requests: :func:`wobble.runner.generate_resumable` (greedy, stops at a blank line;
    ``output``). Each part is written beside the output first, so a killed job resumes per part.
    Chunks of 64: one backend call then holds many items of each prompt set, so the 16 demonstrations
    are run once per set and call (measured on comments_toxicity_length, 581 requests, gemma-270m:
    94 s with chunks of 8, 29 s with 64).
    """
    prefixes, reqs = bundle["prefixes"], list(bundle["requests"])

    def prompt_of(r: Mapping) -> str:
        return prefixes[r["prefix_id"]] + r["query"]

    label = [r for r in reqs if not r["generate"]]
    gen = [r for r in reqs if r["generate"]]
    parts = {"labels": Path(f"{out_path}.labels.jsonl"), "explanations": Path(f"{out_path}.explanations.jsonl")}
    desc = f"icl_bias {bundle['pair']}"
    if label and not _answered(parts["labels"], label):
        score_next_token_resumable(backend, label, lambda r: r["candidates"], parts["labels"], prompt_of,
                                   chunk_size=chunk_size, desc=f"{desc} label words")
    if gen and not _answered(parts["explanations"], gen):
        params = GenParams(max_new_tokens=max_new_tokens, temperature=0.0, seed=seed, stop=STOP)
        generate_resumable(backend, gen, params, parts["explanations"], prompt_of, chunk_size=chunk_size,
                           desc=f"{desc} explanations")
    done = {r["uid"]: r for name, rs in (("labels", label), ("explanations", gen)) if rs
            for r in read_jsonl(parts[name])}
    n = write_jsonl(out_path, [done[r["uid"]] for r in reqs])
    for path in parts.values():
        path.unlink(missing_ok=True)
    return n


def scores(bundle: Mapping[str, Any], predictions: Sequence[Mapping], split: Mapping, calibrate: bool) -> list[dict]:
    """Score records of one model on one pair (:func:`~wobble.studies.icl_bias.answers.score_records`)."""
    outputs = {p["uid"]: ({"text": p["output"]} if p["generate"] else {"logprobs": p["next_token_logprobs"]})
               for p in predictions}
    items = {it["uid"]: it for it in split["items"]}
    return score_records(bundle["requests"], outputs, items, calibrate=calibrate)
