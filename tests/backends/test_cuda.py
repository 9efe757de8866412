"""The hf backend and the finetune on a CUDA GPU (skipped without one; run on a GPU node with
``pytest tests/backends/test_cuda.py``): shared-prefix reuse for scoring and generation equals the plain path, the float32
output layer computes float32 logits from bf16 hidden states, the opt-in ``wobble`` attention equals ``sdpa``,
dialogues with cross-turn KV reuse equal re-encoding every turn, sampled draws equal the CPU's, and a LoRA finetune
with the output layer at target positions equals one with it everywhere — the paper-scale configs run these paths on
GPUs, where kernels (and so rounding) differ from the CPU's."""

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


def test_wobble_attention_kernels_equal_sdpa_on_cuda():
    """The opt-in kernels (hf_attention) on CUDA tensors, float32: as torch's SDPA to 1e-5."""
    from test_backend_hf_attention import _padded_causal, _sdpa

    from wobble.backends import hf_attention

    torch.manual_seed(0)
    cuda = lambda *ts: [t.cuda() for t in ts]  # noqa: E731
    q, k, v = cuda(torch.randn(3, 6, 1, 8), torch.randn(3, 2, 9, 8), torch.randn(3, 2, 9, 8))
    mask = _padded_causal([9, 4, 1], 1, 9).cuda()
    assert torch.allclose(hf_attention.decode_attention(q, k, v, mask, 0.3), _sdpa(q, k, v, mask), atol=1e-5)
    q, k, v = cuda(torch.randn(2, 4, 12, 8), torch.randn(2, 2, 12, 8), torch.randn(2, 2, 12, 8))
    pos = torch.arange(12)
    mask = (_padded_causal([12, 10], 12, 12) & ((pos[:, None] - pos[None, :]) < 5)[None, None]).cuda()
    out = hf_attention.blocked_causal_attention(q, k, v, mask, 0.3, block=3, window=5)
    ref = _sdpa(q, k, v, mask)
    assert out.device.type == "cuda"
    assert torch.allclose(out[0], ref[0], atol=1e-5) and torch.allclose(out[1, :, 2:], ref[1, :, 2:], atol=1e-5)


@pytest.mark.parametrize("arch", ["llama", "gemma3-sliding"])
def test_wobble_attention_models_generate_and_score_as_with_sdpa_on_cuda(arch, monkeypatch):
    """Whole tiny models on CUDA through the hf backend with prefix reuse: ``attention: wobble`` gives the
    texts of ``sdpa`` exactly and its log-probs to 1e-4 (float32; blocked prefill forced on 8-wide heads)."""
    from test_backend_hf_attention import assert_wobble_equals_sdpa
    from test_backend_hf_prefix import tiny_gemma3

    from wobble.backends import hf_attention

    monkeypatch.setattr(hf_attention, "WIDE_HEAD", 0)
    monkeypatch.setattr(hf_attention, "BLOCK", 4)
    model, tok = build_tiny("causal", seed=0) if arch == "llama" else tiny_gemma3()
    assert_wobble_equals_sdpa(model.to("cuda", torch.float32), tok)


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_dialogues_with_turn_reuse_equal_re_encoding_on_cuda(tmp_path, temperature):
    """Cross-turn KV reuse (hf_turns) on CUDA: three-turn dialogues equal re-encoding every turn (texts and
    finish reasons exactly, log-probs to 1e-4; seeded sampling draws on the CPU, so it matches too)."""
    from test_backend_hf_turns import dialogues_both_ways

    model, tok = build_tiny("causal", seed=0)
    fast, _, got, want = dialogues_both_ways(model.to("cuda", torch.float32), tok, tmp_path, temperature)
    assert fast.device.type == "cuda" and fast.turn_stats[0] == 10  # turns 2 and 3 of 5 dialogues continued
    for g, w in zip(got, want):
        for a, b in zip(g["turns"], w["turns"], strict=True):
            assert (a["output"], a["finish_reason"]) == (b["output"], b["finish_reason"])
            assert a["token_logprobs"] == pytest.approx(b["token_logprobs"], abs=1e-4)


def test_sampled_draws_on_cuda_equal_multinomial_on_the_cpu():
    """Sampling on CUDA logits: the batched draw on the GPU (each row's noise from its CPU generator, one copy
    over) picks what ``torch.multinomial`` picks on each row's probabilities copied to the CPU."""
    from test_sampling import assert_draws_equal_multinomial

    assert_draws_equal_multinomial("cuda")


def test_finetune_with_the_output_layer_at_target_positions_on_cuda(tmp_path, monkeypatch):
    """The Trainer on the GPU (bf16 autocast where the GPU has it): the target-positions output layer trains the
    adapter the full one does, to rounding (kernels differ with the number of rows on a GPU)."""
    from safetensors.torch import load_file

    from training.test_finetune_target_logits import finetune_both_ways  # tests/ is on the path (conftest)

    (kept, kept_rows), (full, full_rows) = finetune_both_ways(tmp_path, monkeypatch)
    assert kept["device"].startswith("cuda") and full["device"].startswith("cuda")
    assert [h["loss"] for h in kept["train_loss"]] == pytest.approx([h["loss"] for h in full["train_loss"]], rel=1e-3)
    a, b = (load_file(tmp_path / name / "adapter_model.safetensors") for name in ("kept", "full"))
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], rtol=0, atol=1e-4), key
    assert kept_rows < full_rows / 2
