"""Decoding helpers shared by the backends: the per-prompt sampling seed, one next-token choice
(greedy / temperature / nucleus), and where a stop string cuts a text (see the hf backend's
"Decoding" conventions)."""

from __future__ import annotations

import functools
import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence


def prompt_seed(seed: int, rendered_prompt: str) -> int:
    """The sampling seed of one prompt: a 63-bit number from sha256(seed, rendered prompt)."""
    digest = hashlib.sha256(f"{int(seed)}\x00{rendered_prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def choose_next(logits, temperature: float, top_p: float, generators):
    """Next token per row of ``logits``: argmax at temperature 0, else a draw from
    softmax(logits / temperature) restricted to the smallest set reaching ``top_p``, one seeded CPU
    ``torch.Generator`` per row.

    The draw is the one ``torch.multinomial(probs[row].cpu(), 1, generator=g)`` makes, computed for the
    whole batch on the logits' device: multinomial picks argmax(p / q), q ~ Exp(1) drawn as one
    ``exponential_`` of the row's length and dtype from its generator, so each row's noise comes from
    its own generator on the CPU (rows in parallel, :func:`row_noise`), crosses to the device once, and
    one division and argmax there choose every row's token."""
    import torch

    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, idx = probs.sort(dim=-1, descending=True)
        drop = sorted_p.cumsum(-1) - sorted_p > top_p  # keep the smallest set reaching top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, idx, sorted_p)
    noise = row_noise(probs.shape, probs.dtype, generators, pin=probs.device.type == "cuda")
    picks = (probs / noise.to(probs.device, non_blocking=True)).argmax(dim=-1)
    if not bool(torch.isfinite(probs).all()):
        raise ValueError("sampling: the next-token probabilities contain nan or inf (non-finite logits)")
    return picks


def row_noise(shape, dtype, generators, pin: bool = False):
    """A CPU tensor of ``shape`` (rows, vocabulary) whose row k is ``exponential_(1)`` drawn from
    ``generators[k]``, as ``torch.multinomial`` draws it for one row; rows fill in parallel threads (each
    from its own generator, so the result does not depend on the threads), at most
    ``torch.get_num_threads()`` at once. ``pin``: page-locked, for an asynchronous copy to a GPU."""
    import torch

    with torch.inference_mode(False):  # a plain tensor: the worker threads do not share the caller's mode
        noise = torch.empty(shape, dtype=dtype, pin_memory=pin)
    jobs = list(zip(noise, generators, strict=True))
    workers = min(len(jobs), torch.get_num_threads())
    if workers <= 1:
        for row, gen in jobs:
            row.exponential_(1, generator=gen)
    else:
        list(_pool(workers).map(lambda job: job[0].exponential_(1, generator=job[1]), jobs))
    return noise


@functools.lru_cache(maxsize=None)
def _pool(workers: int) -> ThreadPoolExecutor:
    """One thread pool per size, kept for the process (torch releases the GIL inside ``exponential_``)."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wobble-sampling")


def stop_cut(text: str, stops: Sequence[str]) -> int | None:
    """Index of the earliest stop string in ``text`` (the text is cut before it), or None."""
    hits = [text.find(s) for s in stops if s and s in text]
    return min(hits) if hits else None
