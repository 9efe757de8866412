"""The ``wobble`` attention implementation (wobble.backends.hf_attention) equals transformers' ``sdpa``: the
two kernels against torch's scaled_dot_product_attention on random tensors (float32, 1e-5), and whole models
(tiny Llama with grouped-query heads, tiny gemma-3 with sliding windows) through the hf backend: generated
texts exactly, log-probs to 1e-4, with prefix and turn reuse on."""

from __future__ import annotations

import pytest
import torch

from wobble.backends import hf_attention
from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.errors import WobbleError
from wobble.models.tiny import build_tiny

from support import tiny_gemma3

ATOL = 1e-4


def _sdpa(q, k, v, mask):
    rep = q.shape[1] // k.shape[1]
    return torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), attn_mask=mask, scale=0.3)


def _padded_causal(lengths, lq, lk):
    """(B, 1, lq, lk) bool: left padding by row lengths, causal with the queries as the last lq keys."""
    causal = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    valid = torch.stack([torch.arange(lk) >= lk - n for n in lengths])
    return causal[None, None] & valid[:, None, None, :]


def test_decode_attention_equals_sdpa_with_padding_and_grouped_heads():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 6, 1, 8), torch.randn(3, 2, 9, 8), torch.randn(3, 2, 9, 8)
    mask = _padded_causal([9, 4, 1], 1, 9)
    out = hf_attention.decode_attention(q, k, v, mask, 0.3)
    assert torch.allclose(out, _sdpa(q, k, v, mask), atol=1e-5)
    assert torch.allclose(hf_attention.decode_attention(q, k, v, None, 0.3), _sdpa(q, k, v, None), atol=1e-5)


@pytest.mark.parametrize("lq,lk", [(7, 7), (5, 12)])
def test_blocked_causal_attention_equals_sdpa_on_every_real_row(lq, lk):
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 4, lq, 8), torch.randn(2, 1, lk, 8), torch.randn(2, 1, lk, 8)
    lengths = [lk, lk - 3]  # row 1: three padding positions (all-masked query rows when lq == lk)
    mask = _padded_causal(lengths, lq, lk)
    out = hf_attention.blocked_causal_attention(q, k, v, mask, 0.3, block=3)
    ref = _sdpa(q, k, v, mask)
    real = lq - max(0, 3 - (lk - lq))  # row 1's query rows that are not padding are its last `real`
    assert torch.isfinite(out).all()
    assert torch.allclose(out[0], ref[0], atol=1e-5)
    assert torch.allclose(out[1, :, lq - real:], ref[1, :, lq - real:], atol=1e-5)
    if lq == lk:  # no mask passed: the causal pattern
        assert torch.allclose(hf_attention.blocked_causal_attention(q, k, v, None, 0.3, block=3),
                              _sdpa(q, k, v, _padded_causal([lk, lk], lq, lk)), atol=1e-5)


def test_blocked_attention_with_a_sliding_window_skips_keys_the_window_hides():
    torch.manual_seed(2)
    lq = lk = 12
    q, k, v = torch.randn(2, 4, lq, 8), torch.randn(2, 2, lk, 8), torch.randn(2, 2, lk, 8)
    pos = torch.arange(lk)
    mask = _padded_causal([lk, 10], lq, lk) & ((pos[:, None] - pos[None, :]) < 5)[None, None]
    out = hf_attention.blocked_causal_attention(q, k, v, mask, 0.3, block=3, window=5)
    ref = _sdpa(q, k, v, mask)
    assert torch.allclose(out[0], ref[0], atol=1e-5) and torch.allclose(out[1, :, 2:], ref[1, :, 2:], atol=1e-5)


def test_unknown_attention_is_one_clear_error():
    model, _ = build_tiny("causal", seed=0)
    with pytest.raises(WobbleError, match="attention 'flash'"):
        hf_attention.use_attention(model, "flash")


@pytest.fixture(params=["llama", "gemma3-sliding"])
def model_tok(request, monkeypatch):
    # the tiny models' heads are 8 wide: take the blocked prefill path anyway, in blocks of 4 positions
    monkeypatch.setattr(hf_attention, "WIDE_HEAD", 0)
    monkeypatch.setattr(hf_attention, "BLOCK", 4)
    if request.param == "llama":
        model, tok = build_tiny("causal", seed=0)
        return model.float(), tok
    return tiny_gemma3()


PROMPTS = ["Count the apples: 3 + 4 = ", "Count the pears: 10 + 5 = ", "x", "Count the plums and then the figs: 2 + 2 = "]


def _run(model, tok, attention):
    be = HFBackend(model, tok, "causal", "tiny", batch_size=3, progress=False, reuse_prefix_generation=True,
                   attention=attention)
    assert model.config._attn_implementation == attention
    gens = be.generate(PROMPTS, GenParams(max_new_tokens=12, temperature=0, return_logprobs=True))
    scores = be.continuation_logprobs(PROMPTS, [" 7", " 15", "y", " 4"])
    return gens, scores


def assert_wobble_equals_sdpa(model, tok):
    """Texts exactly and log-probs to ``ATOL``: ``attention: wobble`` against ``sdpa`` on the same model."""
    ref_gens, ref_scores = _run(model, tok, "sdpa")
    gens, scores = _run(model, tok, "wobble")
    hf_attention.use_attention(model, "sdpa")
    assert [g.text for g in gens] == [g.text for g in ref_gens]
    for g, r in zip(gens, ref_gens):
        assert g.token_logprobs == pytest.approx(r.token_logprobs, abs=ATOL)
    for s, r in zip(scores, ref_scores):
        assert s == pytest.approx(r, abs=ATOL)


def test_models_generate_and_score_as_with_sdpa(model_tok):
    assert_wobble_equals_sdpa(*model_tok)
