"""Resumable, batched scoring: label words / option letters as the next token, and continuations.

Scoring is how a study reads a model's choice without generating: the log-prob of each label word
("1"/"0", " A"/" B") as the next token (icl_bias: Si et al. 2023 §3 pick the label word with the
highest next-token probability; first_token: Wang et al. 2024 §2 the first-token answer), or the
log-probs of whole continuations (an option text after the question). Both runners share the loop
of :func:`wobble.runner.partial.run_resumable`: records not yet in ``<out>.partial`` are sorted
longest prompt first, cut into chunks, and each chunk is ONE backend call.

Every output record = the input record + ``rendered_prompt`` (the exact text scored, from
:func:`wobble.backends.base.render_prompt`), ``model``, ``score_params`` (the call: method and the
record's candidates / continuations) and the raw scores. A log-prob that is not finite (``-inf``:
a candidate outside an API server's top-k) is written as ``null``.
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Sequence

from wobble.backends.base import Backend, render_prompt
from wobble.errors import DataError
from wobble.runner.partial import finite_or_none, run_resumable


def _strings(value, out_path, rec: Mapping, what: str) -> list[str]:
    items = list(value)
    if not items or not all(isinstance(x, str) for x in items):
        raise DataError(out_path, rec.get("uid"), f"a non-empty list of strings as {what}, got {value!r:.80}")
    return items


def _union(lists: Sequence[Sequence[str]]) -> list[str]:
    """All strings of ``lists`` once, in first-seen order."""
    return list(dict.fromkeys(x for xs in lists for x in xs))


def _score_resumable(backend: Backend, records: Sequence[dict], targets_of: Callable[[dict], Sequence[str]],
                     out_path: str | os.PathLike, prompt_of: Callable[[dict], object], chunk_size: int, desc: str,
                     annotate: Callable | None, method: str, targets_key: str,
                     score_chunk: Callable[[list, list[list[str]]], list], length_of: Callable[[dict], int]) -> int:
    """The loop both scorers share: ``score_chunk(prompts, targets per record)`` -> scores per record."""
    model = getattr(backend, "model_key", None)

    def call(chunk: list[dict]) -> list[dict]:
        targets = [_strings(targets_of(r), out_path, r, targets_key) for r in chunk]
        prompts = [prompt_of(r) for r in chunk]
        out = []
        for rec, prompt, own, scores in zip(chunk, prompts, targets, score_chunk(prompts, targets)):
            scored = dict(rec)
            scored.update(rendered_prompt=render_prompt(backend, prompt), model=model,
                          score_params={"method": method, targets_key: own}, **{method: scores})
            if annotate is not None:
                scored.update(annotate(rec, scores))
            out.append(scored)
        return out

    return run_resumable(records, out_path, call, length_of, chunk_size, desc)


def score_next_token_resumable(backend: Backend, records: Sequence[dict], candidates_of: Callable[[dict], Sequence[str]],
                               out_path: str | os.PathLike, prompt_of: Callable[[dict], object] = lambda r: r["prompt"],
                               chunk_size: int = 32, desc: str = "next-token",
                               annotate: Callable[[dict, dict], dict] | None = None) -> int:
    """Log-prob of each candidate's first token as the next token after each record's prompt.

    One ``next_token_logprobs`` call per chunk, asked for the union of the chunk's candidates (a
    candidate's log-prob does not depend on the other candidates asked for); each record keeps
    only its own: ``next_token_logprobs = {candidate: log-prob}``. ``annotate(record, logprobs)``
    adds derived fields (e.g. the chosen label).
    """
    def score_chunk(prompts: list, own: list[list[str]]) -> list[dict]:
        lps = backend.next_token_logprobs(prompts, _union(own))
        return [{c: finite_or_none(lp[c]) for c in cands} for cands, lp in zip(own, lps)]

    return _score_resumable(backend, records, candidates_of, out_path, prompt_of, chunk_size, desc, annotate,
                            "next_token_logprobs", "candidates", score_chunk, lambda r: len(str(prompt_of(r))))


def score_continuations_resumable(backend: Backend, records: Sequence[dict],
                                  continuations_of: Callable[[dict], Sequence[str]], out_path: str | os.PathLike,
                                  prompt_of: Callable[[dict], object] = lambda r: r["prompt"], chunk_size: int = 32,
                                  desc: str = "continuations",
                                  annotate: Callable[[dict, list[list[float | None]]], dict] | None = None) -> int:
    """Per-token log-probs of each of a record's continuations after its prompt.

    One ``continuation_logprobs`` call per chunk over every (record, continuation) pair of the
    chunk; each record keeps ``continuation_logprobs = [[per-token log-prob, ...] per continuation]``
    in the order of ``continuations_of(record)``. ``annotate(record, logprobs)`` adds derived fields.
    """
    def score_chunk(prompts: list, conts: list[list[str]]) -> list[list[list[float | None]]]:
        flat = backend.continuation_logprobs([p for p, cs in zip(prompts, conts) for _ in cs],
                                             [c for cs in conts for c in cs])
        scores, at = [], 0
        for cs in conts:
            scores.append([[finite_or_none(x) for x in lp] for lp in flat[at:at + len(cs)]])
            at += len(cs)
        return scores

    def length_of(r: dict) -> int:
        return len(str(prompt_of(r))) + max((len(c) for c in continuations_of(r)), default=0)

    return _score_resumable(backend, records, continuations_of, out_path, prompt_of, chunk_size, desc, annotate,
                            "continuation_logprobs", "continuations", score_chunk, length_of)
