"""The float32 output layer under a bf16 body (wobble.backends.hf_head): logits computed in
float32 from the bf16 hidden states, by hand; the input embeddings stay bf16 and untied; nothing changes for a
float32 model; the spec key reaches the backend."""

from __future__ import annotations

import pytest
import torch

from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.backends.hf_head import float32_output_layer
from wobble.models.tiny import build_tiny

PROMPTS = ["Question: pick one.\nA. yes\nB. no\nAnswer:", "Hello there, how are", "x"]


def bf16_pair():
    model, tok = build_tiny("causal", seed=2)
    model.config.tie_word_embeddings = True
    model.tie_weights()
    return model.to(torch.bfloat16).eval(), tok


def test_float32_head_computes_the_logits_in_float32_from_the_bf16_hidden_states():
    model, tok = bf16_pair()
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight  # tied, as gemma's
    w_bf16 = model.get_output_embeddings().weight.detach().clone()
    assert float32_output_layer(model) is True
    head, emb = model.get_output_embeddings(), model.get_input_embeddings()
    assert head.weight.dtype == torch.float32 and emb.weight.dtype == torch.bfloat16 and head.weight is not emb.weight
    assert torch.equal(head.weight, w_bf16.float())
    ids = torch.tensor([tok("Hello there", add_special_tokens=False)["input_ids"]])
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=True)
        hidden = out.hidden_states[-1]  # after the final norm, bf16
        want = hidden.float() @ w_bf16.float().T
    assert hidden.dtype == torch.bfloat16 and out.logits.dtype == torch.float32
    assert torch.allclose(out.logits, want, atol=1e-5)
    # the bf16 head's logits are that product rounded to bf16: what the float32 head avoids
    assert not torch.equal(out.logits, want.bfloat16().float())
    assert float32_output_layer(model) is False  # already float32: idempotent


def test_float32_model_is_left_alone():
    model, _ = build_tiny("causal", seed=2)
    head = model.get_output_embeddings()
    assert float32_output_layer(model.float()) is False and model.get_output_embeddings() is head


def test_backend_with_float32_head_scores_and_generates_like_the_manual_computation():
    model, tok = bf16_pair()
    plain = HFBackend(model, tok, "causal", "tiny", batch_size=2, progress=False)
    want_text = [g.text for g in plain.generate(PROMPTS, GenParams(max_new_tokens=6))]
    model2, _ = bf16_pair()
    fast = HFBackend(model2, tok, "causal", "tiny", batch_size=2, progress=False, output_fp32=True)
    assert fast.output_fp32 and not plain.output_fp32
    lps = fast.next_token_logprobs(PROMPTS, ["A", "B"])
    for p, lp in zip(PROMPTS, lps):
        ids = torch.tensor([fast.encode_prompt(p)])
        with torch.inference_mode():
            h = model2(input_ids=ids, output_hidden_states=True).hidden_states[-1][0, -1].float()
        ref = torch.log_softmax(h @ model2.get_output_embeddings().weight.T, dim=-1)
        for c in ("A", "B"):
            assert lp[c] == pytest.approx(ref[fast.encode_continuation(c)[0]].item(), abs=1e-4)
    got = fast.generate(PROMPTS, GenParams(max_new_tokens=6))
    assert len(got) == 3 and all(isinstance(g.text, str) for g in got)
    # greedy texts agree with the bf16 head except at near-ties; on this tiny model they agree
    assert [g.text for g in got] == want_text


def test_float32_head_runs_at_scored_positions_and_the_first_generated_token_only():
    """Scoring and a generation's first step use the float32 copy; later decode steps the original bf16 head."""
    from wobble.backends.hf_head import ScoredFloat32Head, decode_steps_head

    model, tok = bf16_pair()
    fast = HFBackend(model, tok, "causal", "tiny", batch_size=4, progress=False, output_fp32=True)
    head = model.get_output_embeddings()
    assert isinstance(head, ScoredFloat32Head) and head.float32
    seen = []
    head.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    fast.next_token_logprobs(PROMPTS, ["A", "B"])
    assert seen and set(seen) == {torch.float32}
    seen.clear()
    gens = fast.generate(PROMPTS[:2], GenParams(max_new_tokens=4, first_token_candidates=("A", "B")))
    # one first step + at most 3 decode steps for 4 new tokens
    assert seen[0] == torch.float32 and 1 < len(seen) <= 4 and set(seen[1:]) == {torch.bfloat16}
    assert all(set(g.first_token_logprobs) == {"A", "B"} for g in gens)
    assert head.float32  # restored after the decode loop
    with decode_steps_head(model):
        assert not head.float32
        ids = torch.tensor([fast.encode_prompt(PROMPTS[0])])
        with torch.inference_mode():
            assert model(input_ids=ids).logits.dtype == torch.bfloat16
    assert head.float32


def test_spec_keys_reach_the_backend(tmp_path):
    from wobble.backends import load_backend
    from wobble.models.materialize import materialize

    materialize("tiny", {"source": "tiny", "kind": "causal", "seed": 0, "dtype": "bfloat16",
                         "output_fp32": True, "prefix_generation": True}, tmp_path / "m")
    backend = load_backend(tmp_path / "m", "tiny", progress=False)
    assert backend.output_fp32 and backend.reuse_prefix_generation
    assert backend.model.get_output_embeddings().weight.dtype == torch.float32
