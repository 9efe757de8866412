"""Decoding helpers shared by the backends: the per-prompt sampling seed, one next-token choice
(greedy / temperature / nucleus), and where a stop string cuts a text (see the hf backend's
"Decoding" conventions)."""

from __future__ import annotations

import hashlib
from typing import Sequence


def prompt_seed(seed: int, rendered_prompt: str) -> int:
    """The sampling seed of one prompt: a 63-bit number from sha256(seed, rendered prompt)."""
    digest = hashlib.sha256(f"{int(seed)}\x00{rendered_prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def choose_next(logits, temperature: float, top_p: float, generators):
    """Next token per row of ``logits``: argmax at temperature 0, else a draw from
    softmax(logits / temperature) restricted to the smallest set reaching ``top_p``, one seeded
    ``torch.Generator`` per row."""
    import torch

    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, idx = probs.sort(dim=-1, descending=True)
        drop = sorted_p.cumsum(-1) - sorted_p > top_p  # keep the smallest set reaching top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, idx, sorted_p)
    picks = [torch.multinomial(probs[row].cpu(), 1, generator=g).item() for row, g in enumerate(generators)]
    return torch.tensor(picks, dtype=torch.long, device=logits.device)


def stop_cut(text: str, stops: Sequence[str]) -> int | None:
    """Index of the earliest stop string in ``text`` (the text is cut before it), or None."""
    hits = [text.find(s) for s in stops if s and s in text]
    return min(hits) if hits else None
