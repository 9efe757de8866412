"""Cross-turn KV reuse for dialogues in the ``hf`` backend: the conversation so far, per dialogue turn.

A dialogue's turn k+1 prompt is its turn-k prompt + the model's reply + the next user message, rendered
again by the chat template. Re-encoding the whole conversation at every turn repeats work the previous
turn did: here, while a :meth:`HFBackend.dialogue_session` is open, every generated row's key/value
cache (its prompt and the tokens it fed back) is kept, keyed by those token ids; a later prompt whose
ids start with a kept sequence (the longest common run of ids, at least ``MIN_PREFIX_TOKENS``) runs only
the ids after it.

Exactness. The reused run is taken from the full tokenization of the new prompt, never from tokenizing
the reply on its own: where the re-rendered reply tokenizes differently from the ids the model
generated, the common run simply stops there, and the rest is computed. A kept cache holds only the
row's valid slots (padding dropped) with the keys as the model wrote them at their true positions;
rows of a batch with kept runs of different lengths are left-padded with masked zeros to a common
length and their suffixes right-padded after it, every token at its true position id. What remains is
float rounding from different matmul shapes (tests/backends/test_backend_hf_turns.py: 1e-4 in float32 against
re-encoding). Sliding-window models are excluded: their caches keep only the window, so slots and
positions no longer line up.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

import numpy as np
import torch

from wobble.backends.hf_cache import (MAX_PADDING, MIN_PREFIX_TOKENS, left_padded_cache, padding_parts,
                                      returned_cache)

#: Default bound on the bytes of kept caches (least recently used dropped first).
MAX_BYTES = 2 << 30


def _lcp(a: np.ndarray, b: np.ndarray) -> int:
    m = min(len(a), len(b))
    eq = a[:m] == b[:m]
    return m if eq.all() else int(eq.argmin())


class TurnCache:
    """Per-row KV caches of finished generations, keyed by the token ids they hold; LRU, bounded in bytes."""

    def __init__(self, max_bytes: int = MAX_BYTES, min_prefix: int = MIN_PREFIX_TOKENS):
        self.max_bytes = int(max_bytes)
        self.min_prefix = int(min_prefix)
        self._items: OrderedDict[tuple[int, ...], tuple[np.ndarray, list, int]] = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.reused_tokens = 0

    def __len__(self) -> int:
        return len(self._items)

    def store(self, past, mask: torch.Tensor, rows: Sequence[int], seqs: Sequence[Sequence[int]]) -> None:
        """Keep batch rows ``rows`` of cache ``past`` (attention ``mask`` aligned with its slots): row ``rows[j]``
        holds the ids ``seqs[j]`` in its valid slots."""
        layers = getattr(past, "layers", None)
        if not layers or any(lay.keys is None or lay.keys.shape[-2] != mask.shape[1] for lay in layers):
            return  # not a plain full-attention cache: nothing to keep
        for k, ids in zip(rows, seqs):
            valid = mask[k].bool().cpu()  # a CPU index serves layers on any device (a model spread over GPUs)
            if int(valid.sum()) != len(ids) or len(ids) < self.min_prefix:
                continue
            kv = [(lay.keys[k:k + 1][:, :, valid].clone(), lay.values[k:k + 1][:, :, valid].clone()) for lay in layers]
            size = sum(a.numel() * a.element_size() + b.numel() * b.element_size() for a, b in kv)
            key = tuple(int(t) for t in ids)
            if key in self._items:
                self.bytes -= self._items.pop(key)[2]
            self._items[key] = (np.asarray(key, dtype=np.int64), kv, size)
            self.bytes += size
            while self.bytes > self.max_bytes and self._items:
                self.bytes -= self._items.popitem(last=False)[1][2]

    def keep(self, past, mask: torch.Tensor, batch_rows: Sequence[int], active: Sequence[int],
             prompt_ids: Sequence[Sequence[int]], new: Sequence[Sequence[int]]) -> None:
        """:meth:`store` for a generation batch: tensor row ``k`` of ``batch_rows`` is prompt ``active[k]``, holding
        its prompt ids and the new tokens fed back so far (as many as its valid slots say)."""
        fed = mask.sum(dim=1).tolist()
        seqs = [list(prompt_ids[active[k]]) + list(new[active[k]][: int(fed[k]) - len(prompt_ids[active[k]])])
                for k in batch_rows]
        self.store(past, mask, batch_rows, seqs)

    def take(self, prompt_ids: Sequence[Sequence[int]]) -> dict[int, tuple[list, int]]:
        """``{row: (kept layers, n)}`` for prompts that start with ``n >= min_prefix`` ids of a kept sequence
        (the longest such run; at least one prompt id is left to run). A kept sequence that a prompt continues
        to within ``min_prefix`` ids of its end is dropped (its dialogue moved on and keeps a longer one); one
        that a prompt only shares a start with (another dialogue with the same system prompt) stays."""
        out: dict[int, tuple[list, int]] = {}
        for row, ids in enumerate(prompt_ids):
            a = np.asarray(ids, dtype=np.int64)
            best, best_n = None, 0
            for key, (arr, _, _) in self._items.items():
                n = _lcp(a, arr)
                if n > best_n:
                    best, best_n = key, n
            n = min(best_n, len(ids) - 1)
            if best is None or n < self.min_prefix:
                continue
            kv = self._items[best][1]
            if n >= len(best) - self.min_prefix:
                self.bytes -= self._items.pop(best)[2]
            out[row] = ([(k[:, :, :n], v[:, :, :n]) for k, v in kv], n)
            self.hits += 1
            self.reused_tokens += n
        return out


def continuation_start(backend, prompt_ids: Sequence[Sequence[int]], kept: Sequence[tuple[list, int]]):
    """The first step of a generation batch whose row ``r`` continues ``kept[r] = (layers, n_r)``, the cache of
    ``prompt_ids[r][:n_r]``: ``(logits (n, 1, vocab) float32 at each row's last prompt token, cache, attention
    mask, position ids (n, 1) of those tokens)`` — the same contract as :func:`.hf_prefix.prefix_start`.

    Rows whose new ids differ much in length run in sub-batches (:func:`padding_parts`), and their caches are
    merged into one batch for the decoding steps (left-padded with masked zeros to a common width): the decode
    steps, which read every weight once per step whatever the batch, stay few."""
    parts = padding_parts([len(ids) - n for ids, (_, n) in zip(prompt_ids, kept)], MAX_PADDING)
    if len(parts) == 1:
        return _continue_rows(backend, prompt_ids, kept)
    outs = [_continue_rows(backend, [prompt_ids[r] for r in part], [kept[r] for r in part]) for part in parts]
    width = max(out[2].shape[1] for out in outs)
    pads = [width - out[2].shape[1] for out in outs]
    cache = left_padded_cache(backend.model, [[(lay.keys, lay.values) for lay in out[1].layers] for out in outs],
                              pads)
    mask = torch.cat([torch.nn.functional.pad(out[2], (p, 0)) for out, p in zip(outs, pads)], 0)
    return torch.cat([out[0] for out in outs], 0), cache, mask, torch.cat([out[3] for out in outs], 0)


def _continue_rows(backend, prompt_ids: Sequence[Sequence[int]], kept: Sequence[tuple[list, int]]):
    """:func:`continuation_start` for one forward pass over all ``prompt_ids`` (suffixes right-padded)."""
    lens = [n for _, n in kept]
    width_kept = max(lens)
    suffixes = [list(ids[n:]) for ids, n in zip(prompt_ids, lens)]
    width = max(len(s) for s in suffixes)
    rows = len(suffixes)
    cache = left_padded_cache(backend.model, [layers for layers, _ in kept], [width_kept - n for n in lens])
    ids = torch.full((rows, width), backend.pad_id, dtype=torch.long)
    mask = torch.zeros((rows, width_kept + width), dtype=torch.long)
    pos = torch.zeros((rows, width), dtype=torch.long)
    for r, (s, n) in enumerate(zip(suffixes, lens)):
        ids[r, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, width_kept - n: width_kept + len(s)] = 1
        pos[r] = torch.arange(n, n + width)
    dev = backend.device
    ids, mask, pos = ids.to(dev), mask.to(dev), pos.to(dev)
    wanted = sorted({len(s) - 1 for s in suffixes})
    res, at = backend.forward_at(ids, mask, pos, cache, wanted)
    cols = torch.tensor([at[len(s) - 1] for s in suffixes], device=dev)
    logits = res.logits[torch.arange(rows, device=dev), cols][:, None].float()
    last_pos = torch.tensor([[n + len(s) - 1] for s, n in zip(suffixes, lens)], dtype=torch.long, device=dev)
    return logits, returned_cache(res), mask, last_pos
