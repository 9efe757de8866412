"""The icl_bias workflow steps behind ``rules/icl_bias.smk`` (the scripts only read and write):

split (per pair) -> requests (per pair: every condition's prompts, model-independent) -> predictions
(per model x pair: label-word log-probs or generated explanations) -> scores (per model x pair: one
answer per test item and prompt set) -> summary (per model: every level's numbers) -> tables.

Paths and config helpers: :mod:`.layout`. A prediction record is its request (``prefix_id`` + ``query``: the exact prompt is
``requests/<pair>.json``'s ``prefixes[prefix_id] + query``) plus ``model`` and ``logprobs`` (label
word -> log-prob, null for -inf) or ``output`` (the generated text).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any, Mapping, Sequence

from wobble.backends.base import Backend, GenParams
from wobble.runner.partial import finite_or_none, run_resumable
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


def infer(backend: Backend, bundle: Mapping[str, Any], out_path: str | os.PathLike, *, max_new_tokens: int,
          seed: int, chunk_size: int = 8) -> int:
    """Answer every request of a pair (resumable): label-word log-probs, or a greedy generation.

    Stopgap until ``wobble.runner`` has its label-word path: one call per chunk through the shared
    resumable loop, grouped by candidate words; the shared prefix is sent with every query.
    """
    prefixes, model = bundle["prefixes"], getattr(backend, "model_key", None)
    params = GenParams(max_new_tokens=max_new_tokens, temperature=0.0, seed=seed, stop=STOP)

    def prompt(r: Mapping) -> str:
        return prefixes[r["prefix_id"]] + r["query"]

    def call(chunk: list[dict]) -> list[dict]:
        done: dict[str, dict] = {}
        groups: dict[Any, list[dict]] = defaultdict(list)
        for r in chunk:
            groups["generate" if r["generate"] else tuple(r["candidates"])].append(r)
        for key, rs in groups.items():
            if key == "generate":
                gens = backend.generate([prompt(r) for r in rs], params)
                done.update({r["uid"]: {**r, "model": model, "output": g.text, "gen_params": params.to_dict()}
                             for r, g in zip(rs, gens)})
            else:
                lps = backend.next_token_logprobs([prompt(r) for r in rs], list(key))
                done.update({r["uid"]: {**r, "model": model, "logprobs": {w: finite_or_none(lp[w]) for w in key}}
                             for r, lp in zip(rs, lps)})
        return [done[r["uid"]] for r in chunk]

    return run_resumable(bundle["requests"], out_path, call, lambda r: len(prompt(r)), chunk_size,
                         f"icl_bias {bundle['pair']}")


def scores(bundle: Mapping[str, Any], predictions: Sequence[Mapping], split: Mapping, calibrate: bool) -> list[dict]:
    """Score records of one model on one pair (:func:`~wobble.studies.icl_bias.answers.score_records`)."""
    outputs = {p["uid"]: ({"text": p["output"]} if p["generate"] else {"logprobs": p["logprobs"]}) for p in predictions}
    items = {it["uid"]: it for it in split["items"]}
    return score_records(bundle["requests"], outputs, items, calibrate=calibrate)
