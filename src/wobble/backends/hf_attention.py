"""Attention for CPU inference: the ``wobble`` attention implementation of the ``hf`` backend (opt-in).

PyTorch's CPU flash-attention kernel (what transformers' ``sdpa`` runs here) is slow at two shapes the
studies spend time in (``benchmarks/README.md``, "Attention kernels"):

* **decode steps** (one query per row against the whole cache): the query heads of a grouped-query model
  packed per key/value head (as transformers' ``pack_gqa``), then two matmuls and a float32 softmax;
* **prefill with wide heads** (head_dim ≥ ``WIDE_HEAD``: gemma-3's 256): causal attention over query blocks
  of ``BLOCK`` positions, each block against only the keys it can see (up to its last position, from the
  first its sliding window reaches), the key/value heads shared by their query heads without copies. At
  head_dim 64 (SmolLM2, Qwen2.5) the flash kernel is the faster one, so those prefills keep it.

The price is precision: scores and probabilities are rounded to the model's dtype around a float32
softmax — transformers' ``eager`` attention's numerics, not the flash kernel's float32 accumulation. In
bf16 that is up to ~4× the flash kernel's error per attention output, and on icl_bias label scoring it moved
the agreement with a float32 reference from 47/48 to 45/48 argmax; upcasting to float32 keeps the
precision but also takes the speed away. So ``sdpa`` stays the default and ``attention: wobble`` in a
model spec is a choice of speed over precision, measured in the benchmarks. In float32 it equals ``sdpa``
to float rounding (``tests/backends/test_backend_hf_attention.py``).

Everything else (narrow-head prefills, bidirectional attention, additive float masks, position biases,
soft-capping, dropout) goes to transformers' ``sdpa``. Both paths take the boolean mask transformers builds
for ``sdpa`` (True = attend; padding, causality and sliding windows already in it) or, where it passes
none, the causal pattern aligned to the end of the keys. A query row with every key masked (a padding
position) gets a finite average instead of NaN: its output is never read, and a NaN would reach real rows
through the value product of the next layer.
"""

from __future__ import annotations

import torch

NAME = "wobble"
IMPLEMENTATIONS = ("sdpa", "eager", NAME)
# prefill runs blocked only from this head width on: 2.3x faster than sdpa at 256 (gemma-3), 1.7-1.9x slower
# at 64 (SmolLM2, Qwen2.5), bf16 attention alone on 2 threads
WIDE_HEAD = 128
BLOCK = 128  # query positions per prefill block


def _probs(scores: torch.Tensor, allowed: torch.Tensor | None, scaling: float) -> torch.Tensor:
    """softmax(scores · scaling) over the allowed keys, in float32, cast back to the scores' dtype; masked
    entries at float32's minimum (not -inf, so an all-masked row stays finite)."""
    s = scores.float().mul_(scaling)
    if allowed is not None:
        s.masked_fill_(~allowed, torch.finfo(torch.float32).min)
    return s.softmax(-1).to(scores.dtype)


def decode_attention(query, key, value, mask, scaling):
    """One query per row: ``query (B, H, 1, D)``, ``key``/``value (B, Hkv, L, D)``, ``mask (B, 1, 1, L)``
    bool or None → ``(B, H, 1, D)``. Query head ``h`` reads key/value head ``h // (H / Hkv)``."""
    b, h, _, d = query.shape
    hkv = key.shape[1]
    q = query.reshape(b, hkv, h // hkv, d)
    allowed = mask[:, :, :1] if mask is not None else None  # (B, 1, 1, L) against (B, Hkv, R, L)
    probs = _probs(torch.matmul(q, key.transpose(-1, -2)), allowed, scaling)
    return torch.matmul(probs, value).reshape(b, h, 1, d)


def blocked_causal_attention(query, key, value, mask, scaling, block: int = BLOCK, window: int | None = None):
    """Causal attention over query blocks: ``query (B, H, Lq, D)``, ``key``/``value (B, Hkv, Lk, D)``
    (the queries are the last ``Lq`` of the ``Lk`` positions), ``mask (B, 1, Lq, Lk)`` bool or None →
    ``(B, H, Lq, D)``. Block ``[s, e)`` attends to keys
    ``[k0, Lk - Lq + e)`` only: ``k0`` is 0, or with a sliding ``window`` the first key its first query can
    see (the mask still decides every entry)."""
    b, h, lq, d = query.shape
    hkv, lk = key.shape[1], key.shape[2]
    rep = h // hkv
    q = query.view(b, hkv, rep, lq, d)
    out = query.new_empty(b, hkv, rep, lq, d)
    offset = lk - lq
    for s in range(0, lq, block):
        e = min(lq, s + block)
        ke = offset + e
        k0 = max(0, offset + s - window + 1) if window else 0
        n = rep * (e - s)
        qb = q[:, :, :, s:e].reshape(b, hkv, n, d)
        scores = torch.matmul(qb, key[:, :, k0:ke].transpose(-1, -2))  # (B, Hkv, R·block, keys)
        if mask is not None:
            allowed = mask[:, :, None, s:e, k0:ke]
        else:
            allowed = torch.ones(e - s, ke - k0, dtype=torch.bool, device=query.device).tril(offset + s - k0)
        probs = _probs(scores.view(b, hkv, rep, e - s, ke - k0), allowed, scaling).view(b, hkv, n, -1)
        out[:, :, :, s:e] = torch.matmul(probs, value[:, :, k0:ke]).view(b, hkv, rep, e - s, d)
    return out.view(b, h, lq, d)


def wobble_attention_forward(module, query, key, value, attention_mask, dropout: float = 0.0,
                             scaling: float | None = None, is_causal: bool | None = None, **kwargs):
    """transformers' attention-interface signature; returns ``(B, Lq, H, D)`` contiguous and no weights."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    plain = (causal and dropout == 0.0 and kwargs.get("softcap") is None and kwargs.get("position_bias") is None
             and (attention_mask is None or attention_mask.dtype == torch.bool)
             and query.shape[1] % key.shape[1] == 0)
    lq = query.shape[2]
    if plain and (lq == 1 or query.shape[-1] >= WIDE_HEAD):
        scale = scaling if scaling is not None else query.shape[-1] ** -0.5
        if lq == 1:
            out = decode_attention(query, key, value, attention_mask, scale)
        else:
            out = blocked_causal_attention(query, key, value, attention_mask, scale, BLOCK,
                                           kwargs.get("sliding_window"))
        return out.transpose(1, 2).contiguous(), None
    return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                  is_causal=is_causal, **kwargs)


def register() -> None:
    """Make ``wobble`` a transformers attention implementation (with ``sdpa``'s boolean masks); idempotent."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, wobble_attention_forward)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_attention(model, name: str | None) -> None:
    """Switch ``model`` to the attention implementation ``name`` (``sdpa``, ``eager`` or ``wobble``)."""
    if not name or name == getattr(model.config, "_attn_implementation", None):
        return
    if name not in IMPLEMENTATIONS:
        from wobble.errors import WobbleError

        raise WobbleError(f"attention {name!r}: expected one of {', '.join(IMPLEMENTATIONS)}")
    if name == NAME:
        register()
    model.set_attn_implementation(name)
