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


def _scored(backend: Backend, rec: dict, prompt, method: str, targets_key: str, targets: list[str],
            scores_key: str, scores) -> dict:
    out = dict(rec)
    out.update(rendered_prompt=render_prompt(backend, prompt), model=getattr(backend, "model_key", None),
               score_params={"method": method, targets_key: targets}, **{scores_key: scores})
    return out


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
    def call(chunk: list[dict]) -> list[dict]:
        own = [_strings(candidates_of(r), out_path, r, "candidates") for r in chunk]
        prompts = [prompt_of(r) for r in chunk]
        lps = backend.next_token_logprobs(prompts, _union(own))
        out = []
        for rec, prompt, cands, lp in zip(chunk, prompts, own, lps):
            scores = {c: finite_or_none(lp[c]) for c in cands}
            scored = _scored(backend, rec, prompt, "next_token_logprobs", "candidates", cands,
                             "next_token_logprobs", scores)
            if annotate is not None:
                scored.update(annotate(rec, scores))
            out.append(scored)
        return out

    return run_resumable(records, out_path, call, lambda r: len(str(prompt_of(r))), chunk_size, desc)


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
    def call(chunk: list[dict]) -> list[dict]:
        conts = [_strings(continuations_of(r), out_path, r, "continuations") for r in chunk]
        prompts = [prompt_of(r) for r in chunk]
        flat_prompts = [p for p, cs in zip(prompts, conts) for _ in cs]
        flat = backend.continuation_logprobs(flat_prompts, [c for cs in conts for c in cs])
        out, at = [], 0
        for rec, prompt, cs in zip(chunk, prompts, conts):
            scores = [[finite_or_none(x) for x in lp] for lp in flat[at:at + len(cs)]]
            at += len(cs)
            scored = _scored(backend, rec, prompt, "continuation_logprobs", "continuations", cs,
                             "continuation_logprobs", scores)
            if annotate is not None:
                scored.update(annotate(rec, scores))
            out.append(scored)
        return out

    def length_of(r: dict) -> int:
        return len(str(prompt_of(r))) + max((len(c) for c in continuations_of(r)), default=0)

    return run_resumable(records, out_path, call, length_of, chunk_size, desc)
