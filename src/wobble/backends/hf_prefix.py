"""Exact shared-prefix reuse for causal scoring in the ``hf`` backend.

The studies' scoring requests share long prefixes: every test item of an icl_bias prompt set follows
the same 16 demonstrations (~1,200 tokens), every first_token prompt of a question the same chat
header. Running the prefix once and only the suffixes after it saves most of the compute.

Exactness. The shared prefix is taken from the **full tokenizations** of the requests (the longest
common run of token ids), never from tokenizing a prefix string on its own, so the ids a suffix row
sees are exactly the ids of its full prompt (tokenizing prefix and suffix separately moves label
log-probs: by 0.31 nats in one measured case). Suffixes are **right-padded** after the prefix:
every real token keeps its true position id and its true distance to every earlier token, so
sliding-window layers (gemma-3) see the same keys as in the full forward pass; the score of a row is
read at its own last real token. What remains is float rounding from different matmul shapes
(``tests/backends/test_backend_hf_prefix.py`` checks 1e-4 in float32 against the full forward pass).

The prefix's key/value cache is computed once, kept in a small LRU keyed by its token ids (a prompt
set's items arrive in several runner chunks; 16 entries: icl_bias's 7 prompt sets of similar length
interleave in the runner's longest-first order and thrashed 4 entries), deep-copied and repeated per
batch row.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Callable, Sequence

import torch

from wobble.backends.hf_cache import (MAX_PADDING, MIN_PREFIX_TOKENS, cache_arg, left_padded_cache, new_cache,
                                      padding_parts, returned_cache, sliding_window)


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest run of ids every sequence starts with."""
    if not seqs:
        return 0
    first, n = seqs[0], min(len(s) for s in seqs)
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs):
            return i
    return n


def prefix_groups(seqs: Sequence[Sequence[int]], min_prefix: int = MIN_PREFIX_TOKENS) -> list[tuple[int, list[int]]]:
    """``[(prefix_len, row indices)]``: rows that share at least ``min_prefix`` leading ids, grouped.

    Rows are ordered by their ids (so rows with a common prefix are adjacent) and grouped greedily
    while the group's common prefix stays ``>= min_prefix``; the prefix stops one id short of the
    shortest row so every row keeps at least one suffix token to read its score at. A row that
    shares no long prefix forms a group with ``prefix_len == 0``.
    """
    order = sorted(range(len(seqs)), key=lambda i: (list(seqs[i]), i))
    groups: list[tuple[int, list[int]]] = []
    cur: list[int] = []
    cur_len = 0
    for i in order:
        if cur:
            n = common_prefix_len([seqs[cur[0]], seqs[i]])
            n = min(n, cur_len, len(seqs[i]) - 1)
            # join while the shared run stays long, and not at the price of halving it (two prompt sets
            # that share only an instruction header stay apart: each keeps its own long prefix)
            if n >= min_prefix and (len(cur) == 1 or 2 * n >= cur_len):
                cur.append(i)
                cur_len = n
                continue
            groups.append((cur_len if len(cur) > 1 else 0, cur))
        cur, cur_len = [i], len(seqs[i]) - 1
    if cur:
        groups.append((cur_len if len(cur) > 1 else 0, cur))
    return groups


class PrefixCache:
    """A few prefix KV caches, least recently used dropped first."""

    def __init__(self, size: int = 16):
        self.size = size
        self._items: OrderedDict[tuple[int, ...], object] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def longest_cached(self, ids: Sequence[int], upto: int, at_least: int) -> tuple[int, ...] | None:
        """The longest cached key that ``ids[:upto]`` starts with, if it has ``>= at_least`` ids."""
        best = None
        for key in self._items:
            n = len(key)
            if at_least <= n <= upto and tuple(ids[:n]) == key and (best is None or n > len(best)):
                best = key
        return best

    def __contains__(self, key: tuple[int, ...]) -> bool:
        return key in self._items

    def get(self, key: tuple[int, ...], build: Callable[[], object]) -> object:
        if key in self._items:
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key]
        self.misses += 1
        value = build()
        self._items[key] = value
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


def expanded(cache, rows: int):
    """A copy of a batch-1 cache repeated to ``rows`` rows (the stored cache is never mutated)."""
    out = copy.deepcopy(cache)
    if rows > 1:
        out.batch_repeat_interleave(rows)
    return out


def suffix_batch(suffixes: Sequence[Sequence[int]], prefix_len: int, pad_id: int, device):
    """Right-padded suffix ids, the full attention mask (prefix + suffix) and true position ids."""
    width = max(len(s) for s in suffixes)
    n = len(suffixes)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, prefix_len + width), dtype=torch.long)
    mask[:, :prefix_len] = 1
    for row, s in enumerate(suffixes):
        ids[row, : len(s)] = torch.tensor(list(s), dtype=torch.long)
        mask[row, prefix_len: prefix_len + len(s)] = 1
    pos = torch.arange(prefix_len, prefix_len + width, dtype=torch.long).expand(n, width).clone()
    return ids.to(device), mask.to(device), pos.to(device)


def _cached_key(backend, ids: Sequence[int], p: int) -> tuple[int, ...]:
    """The prefix to use for ``ids[:p]``: a cached one that is at least ``MIN_PREFIX_TOKENS`` long and within
    ``MIN_PREFIX_TOKENS`` of ``p`` (the next chunk of a prompt set may share a few more ids by chance), else
    ``ids[:p]``."""
    key = backend.prefix_cache.longest_cached(ids, p, max(MIN_PREFIX_TOKENS, p - MIN_PREFIX_TOKENS))
    return key if key is not None else tuple(ids[:p])


def _encode_prefix(backend, prefix: Sequence[int]):
    """The KV cache (batch 1) of ``prefix``, one forward pass."""
    ids = torch.tensor([list(prefix)], dtype=torch.long, device=backend.device)
    kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "use_cache": True,
          **cache_arg(backend.model, new_cache(backend.model))}
    if backend.takes_logits_to_keep:
        kw["logits_to_keep"] = 1
    return returned_cache(backend.model(**kw))


def _prefix_kv(backend, ids: Sequence[int], p: int):
    """``(kv, n)``: the KV cache (batch 1) of ``ids[:n]``, ``n <= p`` (:func:`_cached_key`), from the LRU or
    computed in one forward pass."""
    key = _cached_key(backend, ids, p)
    return backend.prefix_cache.get(key, lambda: _encode_prefix(backend, key)), len(key)


def tail_logits(backend, seqs: Sequence[Sequence[int]], keeps: Sequence[int], desc: str) -> list[torch.Tensor]:
    """For each causal sequence, the float32 logits at its last ``keeps[i]`` positions, ``(keeps[i], vocab)``.

    Rows sharing a long prefix (:func:`prefix_groups` on the part up to the first kept position) run
    the prefix once and their suffixes in batches of ``backend.batch_size``; the other rows go through
    the backend's plain left-padded batches. Either way row ``i``'s result is what a forward pass over
    ``seqs[i]`` alone computes, up to float rounding.
    """
    out: list[torch.Tensor | None] = [None] * len(seqs)
    heads = [list(s[: len(s) - k + 1]) for s, k in zip(seqs, keeps)]
    groups = prefix_groups(heads) if backend.reuse_prefix else [(0, list(range(len(seqs))))]
    plain = [i for p, rows in groups if p == 0 for i in rows]
    shared = [(p, rows) for p, rows in groups if p > 0]
    if plain:
        for chunk in backend.batches([len(seqs[i]) for i in plain], desc):
            rows = [plain[j] for j in chunk]
            k = max(keeps[i] for i in rows)
            logits, _ = backend.causal_logits(*backend.left_pad([seqs[i] for i in rows]), keep=k)
            for r, i in enumerate(rows):
                out[i] = logits[r, k - keeps[i]:]
    for p, rows in shared:
        kv, p = _prefix_kv(backend, seqs[rows[0]], p)
        rows = sorted(rows, key=lambda i: (-len(seqs[i]), i))
        for start in range(0, len(rows), backend.batch_size):
            batch = rows[start: start + backend.batch_size]
            suffixes = [seqs[i][p:] for i in batch]
            ids, mask, pos = suffix_batch(suffixes, p, backend.pad_id, backend.device)
            # only the positions some row reads: logits over a 262k vocabulary for every suffix position
            # of a batch would take gigabytes
            wanted = sorted({j for i, s in zip(batch, suffixes) for j in range(len(s) - keeps[i], len(s))})
            res, at = backend.forward_at(ids, mask, pos, expanded(kv, len(batch)), wanted)
            for r, (i, s) in enumerate(zip(batch, suffixes)):
                cols = [at[j] for j in range(len(s) - keeps[i], len(s))]
                out[i] = res.logits[r, cols].float()
    return out  # type: ignore[return-value]


# ---------------------------------------------------------------------------------- generation

def generation_groups(backend, prompt_ids: Sequence[Sequence[int]], max_new_tokens: int) -> list[tuple[int, list[int]]]:
    """:func:`prefix_groups` for generation, where a shared prefix is safe to reuse.

    Rows of a group are right-padded after the prefix, so a short row's new tokens sit behind padding;
    the padding is masked and every token keeps its true position id, but a sliding-window layer counts
    its window in cache slots, not positions. A group is therefore kept only when its longest prompt plus
    ``max_new_tokens`` fits the window (or the model has none); otherwise its rows go the plain way.
    """
    window = sliding_window(backend.model)
    out = []
    for p, rows in prefix_groups(prompt_ids):
        if p and window and max(len(prompt_ids[i]) for i in rows) + max_new_tokens > window:
            p = 0
        out.append((p, rows))
    return out


def prefix_layers(backend, items: Sequence[tuple[Sequence[int], int]]) -> list[tuple[list, int]]:
    """For each ``(ids, p)``: ``(layers, n)``, the prefix cache of ``ids[:n]`` (``n <= p``, :func:`_cached_key`;
    batch 1) as per-layer ``(keys, values)``, the form :func:`.hf_turns.continuation_start` batches rows of
    different prefixes from (it pads and concatenates copies; the cached prefix is never written to).

    The prefixes not in the LRU run **together**, left-padded in batches of ``backend.batch_size`` with at
    most :data:`.hf_cache.MAX_PADDING` of padding (longest first), not in one batch-1 pass each (six ~80-token
    prefixes of first_token's SmolLM2 prompts: see benchmarks/README.md); each row keeps its valid slots, whose
    keys were written at their true positions. Only for models without sliding-window layers (a sliding layer
    keeps the last slots of the padded width, not of the row): the caller checks :func:`sliding_window`.
    """
    keys = [_cached_key(backend, ids, p) for ids, p in items]
    missing = sorted({k for k in keys if k not in backend.prefix_cache}, key=lambda k: (-len(k), k))
    built = {}
    for part in padding_parts([len(k) for k in missing], MAX_PADDING):
        for start in range(part.start, part.stop, backend.batch_size):
            batch = missing[start: min(start + backend.batch_size, part.stop)]
            ids, mask, pos = backend.left_pad(batch)
            _, past = backend.causal_logits(ids, mask, pos, keep=1, past=new_cache(backend.model))
            width = ids.shape[1]
            for r, key in enumerate(batch):
                rows = [(lay.keys[r:r + 1, :, width - len(key):], lay.values[r:r + 1, :, width - len(key):])
                        for lay in past.layers]
                built[key] = left_padded_cache(backend.model, [rows], [0])
    out = []
    for key in keys:
        kv = backend.prefix_cache.get(key, lambda: built[key] if key in built else _encode_prefix(backend, key))
        out.append(([(lay.keys, lay.values) for lay in kv.layers], len(key)))
    return out


def prefix_start(backend, prompt_ids: Sequence[Sequence[int]], p: int):
    """The first step of a generation batch whose rows share ``prompt_ids[r][:p]``.

    The prefix's cache comes from the backend's LRU (one forward pass per distinct prefix), is copied to
    the batch's rows, and only the suffixes run: ``(logits (n, 1, vocab) float32 at each row's last
    prompt token, cache, attention mask (n, p + width), position ids (n, 1) of those tokens)``.
    """
    kv, p = _prefix_kv(backend, prompt_ids[0], p)
    suffixes = [list(s[p:]) for s in prompt_ids]
    ids, mask, pos = suffix_batch(suffixes, p, backend.pad_id, backend.device)
    wanted = sorted({len(s) - 1 for s in suffixes})
    res, at = backend.forward_at(ids, mask, pos, expanded(kv, len(suffixes)), wanted)
    cols = torch.tensor([at[len(s) - 1] for s in suffixes], device=backend.device)
    logits = res.logits[torch.arange(len(suffixes), device=backend.device), cols][:, None].float()
    last_pos = torch.tensor([[p + len(s) - 1] for s in suffixes], dtype=torch.long, device=backend.device)
    return logits, returned_cache(res), mask, last_pos
