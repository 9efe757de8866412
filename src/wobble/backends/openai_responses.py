"""The OpenAI-compatible response formats read into wobble's values: the generated tokens' log-probs, the
alternatives at the first generated position, an echoed prompt's continuation log-probs, and a candidate's
log-prob among returned alternatives (see :mod:`wobble.backends.openai_compat` for what a server must return)."""

from __future__ import annotations

import math
from typing import Mapping

from wobble.errors import WobbleError


def match_candidate(candidate: str, top: Mapping[str, float]) -> float | None:
    """Log-prob of ``candidate``'s first token among the ``top`` alternatives (see module docstring);
    None when no returned token matches it."""
    if candidate in top:
        return float(top[candidate])
    prefixes = [t for t in top if t and candidate.startswith(t)]
    if prefixes:
        longest = max(len(t) for t in prefixes)
        return max(float(top[t]) for t in prefixes if len(t) == longest)
    return None


def sampled_logprobs(lp: dict) -> tuple[list[str], list[float]]:
    """Tokens and log-probs of the generated text: the chat format (``content``: one entry per token,
    also what llama.cpp returns on /completions) or the legacy completions format."""
    if "content" in lp:
        content = lp.get("content") or []
        return [c.get("token", "") for c in content], [float(c.get("logprob")) for c in content]
    return list(lp.get("tokens") or []), [float(x) for x in lp.get("token_logprobs") or []]


def first_top_logprobs(lp: dict) -> dict[str, float] | None:
    """{token: logprob} of the alternatives at the first generated position (max over duplicates), in
    either response format (see :func:`sampled_logprobs`)."""
    if "content" in lp:
        content = lp.get("content") or []
        if not content:
            return None
        items = [(a.get("token", ""), a.get("logprob")) for a in content[0].get("top_logprobs") or []]
    else:
        tops = lp.get("top_logprobs") or []
        if not tops or tops[0] is None:
            return None
        items = list(tops[0].items())
    out: dict[str, float] = {}
    for tok, v in items:
        if v is not None:
            out[tok] = max(float(v), out.get(tok, -math.inf))
    return out


def echo_continuation(lp: dict, prompt: str, full: str, key: str, url: str) -> list[float]:
    tokens = lp.get("tokens") or []
    values = lp.get("token_logprobs") or []
    offsets = lp.get("text_offset")
    if offsets is None:
        offsets, pos = [], 0
        for t in tokens:
            offsets.append(pos)
            pos += len(t)
    covered = [o + len(t) for t, o in zip(tokens, offsets) if o < len(full)]
    if not tokens or len(values) != len(tokens) or len(offsets) != len(tokens) or offsets[0] != 0 \
            or not covered or max(covered) < len(full):
        raise WobbleError(f"model {key!r}: {url} did not echo the prompt's tokens with log-probs; this server "
                          f"does not support echo=True, which continuation_logprobs needs")
    out = []
    for tok, start, v in zip(tokens, offsets, values):
        end = start + len(tok)
        if start >= len(full):  # the generated token after the echo
            break
        if end > len(prompt):
            if v is None:
                raise WobbleError(f"model {key!r}: {url} returned no log-prob for continuation token {tok!r}")
            out.append(float(v))
    return out
