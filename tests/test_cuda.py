"""The hf backend on a CUDA GPU (skipped without one; run on a GPU node with ``pytest tests/test_cuda.py``):
shared-prefix reuse for scoring and generation equals the plain path, and the float32 output layer computes
float32 logits from bf16 hidden states — the paper-scale configs run these paths on GPUs, where kernels (and
so rounding) differ from the CPU's."""

from __future__ import annotations

import pytest
import torch

from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.models.tiny import build_tiny

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

DEMOS = "".join(f"Review: item number {i} was {'good' if i % 3 else 'bad'}.\nLabel: {i % 2}\n\n" for i in range(16))
ITEMS = ["Review: fine.\nLabel:", "Review: a much longer review that goes on and on.\nLabel:", "Review: ok\nLabel:"]
PROMPTS = [DEMOS + q for q in ITEMS] + ["A different prompt that shares nothing.", DEMOS + "Review: last.\nLabel:"]


def backends(dtype, **kw):
    model, tok = build_tiny("causal", seed=0)
    model = model.to("cuda", dtype).eval()
    mk = lambda reuse: HFBackend(model, tok, "causal", "tiny", batch_size=3, progress=False,  # noqa: E731
                                 reuse_prefix=reuse, reuse_prefix_generation=reuse, **kw)
    return mk(True), mk(False)


def test_scoring_and_generation_with_reuse_equal_the_plain_path_on_cuda():
    fast, plain = backends(torch.float32)
    assert fast.device.type == "cuda"
    got, want = fast.next_token_logprobs(PROMPTS, ["0", "1"]), plain.next_token_logprobs(PROMPTS, ["0", "1"])
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-4)
    params = GenParams(max_new_tokens=10, temperature=0.0, return_logprobs=True, first_token_candidates=("0", "1"))
    for g, w in zip(fast.generate(PROMPTS, params), plain.generate(PROMPTS, params)):
        assert g.text == w.text and g.token_logprobs == pytest.approx(w.token_logprobs, abs=1e-4)
        assert g.first_token_logprobs == pytest.approx(w.first_token_logprobs, abs=1e-4)
    assert fast.prefix_cache.misses == 1


def test_float32_output_layer_on_cuda_bf16():
    fast, _ = backends(torch.bfloat16, output_fp32=True)
    model = fast.model
    assert fast.output_fp32 and model.get_output_embeddings().weight.dtype == torch.float32
    ids = torch.tensor([fast.encode_prompt(PROMPTS[0])], device="cuda")
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=True)
        want = out.hidden_states[-1].float() @ model.get_output_embeddings().weight.T
    assert out.logits.dtype == torch.float32 and torch.allclose(out.logits, want, atol=1e-4)
    gens = fast.generate(PROMPTS, GenParams(max_new_tokens=6))
    assert len(gens) == len(PROMPTS)
