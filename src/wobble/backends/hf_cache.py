"""Key/value caches of the ``hf`` backend: what shared-prefix reuse (:mod:`.hf_prefix`) and cross-turn reuse
(:mod:`.hf_turns`) both build on.

* the keyword a model's forward takes its cache by (:func:`cache_arg`) and the cache a forward returned
  (:func:`returned_cache`), across transformers versions;
* a fresh cache (:func:`new_cache`) and one made of several parts' per-layer keys and values, left-padded to a
  common width (:func:`left_padded_cache`);
* sub-batches of rows whose right-padding stays small (:func:`padding_parts`, :data:`MAX_PADDING`);
* the attention window of sliding-window layers (:func:`sliding_window`), where neither reuse applies as is.
"""

from __future__ import annotations

import functools
import inspect
from typing import Sequence

import torch

#: Shared runs of ids shorter than this are not worth a separate forward pass (a shared prefix, a kept turn).
MIN_PREFIX_TOKENS = 64

#: A continuation prefill pads its rows' new ids to the longest; rows are split into sub-batches so that padding
#: stays under this share of the positions run (the sub-batches' caches are merged again for decoding).
MAX_PADDING = 0.25


def cache_arg(model, cache) -> dict:
    """``cache`` as the keyword ``model``'s forward takes it: ``cache`` where the forward has it (transformers
    5.24 deprecates ``past_key_values`` and announces its removal for 5.40), else ``past_key_values``."""
    return {_cache_keyword(type(model)): cache}


@functools.lru_cache(maxsize=None)
def _cache_keyword(cls) -> str:
    return "cache" if "cache" in inspect.signature(cls.forward).parameters else "past_key_values"


def returned_cache(output):
    """The KV cache a forward returned: ``output.cache`` (recent transformers, None when no cache was asked for;
    reading its deprecated alias would log a warning) or ``past_key_values``."""
    cache = getattr(output, "cache", None)
    if cache is not None or hasattr(type(output), "cache"):
        return cache
    return getattr(output, "past_key_values", None)


def new_cache(model):
    """A fresh KV cache for ``model`` (DynamicCache built from its config, e.g. sliding-window layers)."""
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:
        return DynamicCache()


def left_padded_cache(model, parts: Sequence[Sequence[tuple]], pads: Sequence[int]):
    """A new cache holding ``parts`` (each a list of per-layer ``(keys, values)``, any batch size) one after
    another along the batch, each left-padded with ``pads[j]`` zero slots to a common width (the caller masks
    them). The parts' tensors are copied, never written to."""
    cache = new_cache(model)
    for li in range(len(parts[0])):
        ks = [torch.nn.functional.pad(layers[li][0], (0, 0, p, 0)) for layers, p in zip(parts, pads)]
        vs = [torch.nn.functional.pad(layers[li][1], (0, 0, p, 0)) for layers, p in zip(parts, pads)]
        cache.update(torch.cat(ks, 0), torch.cat(vs, 0), li)
    return cache


def padding_parts(lengths: Sequence[int], max_padding: float = MAX_PADDING) -> list[range]:
    """Contiguous runs of rows (in the given order; longest first is best) whose right-padded width wastes at
    most ``max_padding`` of the positions a forward pass over them runs: a run grows while
    ``rows * width <= (sum of lengths) / (1 - max_padding)``."""
    parts: list[range] = []
    start, width, total = 0, 0, 0
    for i, n in enumerate(lengths):
        w, t = max(width, n), total + n
        if i > start and (i - start + 1) * w * (1 - max_padding) > t:
            parts.append(range(start, i))
            start, w, t = i, n, n
        width, total = w, t
    if len(lengths):
        parts.append(range(start, len(lengths)))
    return parts


def sliding_window(model) -> int | None:
    """The attention window of ``model``'s sliding-window layers, or None when it has none."""
    cfg = getattr(model, "config", None)
    cfg = getattr(cfg, "text_config", None) or cfg
    window = getattr(cfg, "sliding_window", None)
    types = getattr(cfg, "layer_types", None)
    if types is not None:
        return window if window and "sliding_attention" in types else None
    return window if window and getattr(cfg, "use_sliding_window", True) else None
