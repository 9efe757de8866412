"""The finetune's output layer only at target positions (wobble.training.data.target_logits): which positions,
the same loss and gradients as the full output layer, and the same trained weights end to end."""

from __future__ import annotations

import pytest
import torch

from support import tiny_gemma3
from wobble.models.tiny import build_tiny
from wobble.training import finetune as finetune_module
from wobble.training.data import (IGNORE_INDEX, PadCollator, target_logits, target_logits_supported,
                                  tokenize_pairs)
from wobble.training.finetune import finetune, weights_sha256

X = IGNORE_INDEX
PAIRS = [(f"Definition: copy the input. Input: abc{i} {'long ' * i}Output:", f"abc{i}") for i in range(4)]


def test_positions_and_shifted_labels_by_hand():
    labels = torch.tensor([[X, X, 7, 8, X, X],     # targets at 2, 3: predicted at positions 1, 2
                           [X, X, X, X, 5, 6]])    # targets at 4, 5: predicted at 3, 4
    out = target_logits(labels)
    assert out["logits_to_keep"].tolist() == [1, 2, 3, 4]
    assert out["shift_labels"].tolist() == [[7, 8, X, X], [X, X, 5, 6]]
    assert target_logits(torch.full((2, 3), X)) == {}  # no target anywhere: the batch is left as it was


def test_collator_adds_the_keys_only_when_asked():
    _, tok = build_tiny("causal")
    examples = tokenize_pairs(tok, PAIRS[:2], "causal")
    plain = PadCollator.for_tokenizer(tok)(examples)
    fast = PadCollator.for_tokenizer(tok, target_logits_only=True)(examples)
    assert set(plain) == {"input_ids", "attention_mask", "labels"}
    assert set(fast) == set(plain) | {"logits_to_keep", "shift_labels"}
    for key in plain:
        assert torch.equal(plain[key], fast[key])
    # the Trainer counts the loss's items from shift_labels when present: the same count as labels[:, 1:]
    assert int(fast["shift_labels"].ne(X).sum()) == int(plain["labels"][:, 1:].ne(X).sum())


def test_supported_only_for_causal_lms_with_the_causal_loss():
    causal, _ = build_tiny("causal")
    seq2seq, _ = build_tiny("seq2seq")
    assert target_logits_supported(causal, "causal")
    assert target_logits_supported(tiny_gemma3()[0], "causal")
    assert not target_logits_supported(seq2seq, "seq2seq")
    causal.loss_function = lambda *a, **k: None  # a model with its own loss would not read shift_labels
    assert not target_logits_supported(causal, "causal")


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_same_loss_and_gradients_as_the_full_output_layer(arch):
    model, tok = build_tiny("causal") if arch == "llama" else tiny_gemma3()
    model.train()
    examples = tokenize_pairs(tok, PAIRS, "causal")
    batch = PadCollator.for_tokenizer(tok)(examples)
    n_items = batch["labels"][:, 1:].ne(X).sum()

    def loss_and_grads(b):
        model.zero_grad()
        loss = model(**b, num_items_in_batch=n_items).loss
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    full_loss, full_grads = loss_and_grads(batch)
    kept_loss, kept_grads = loss_and_grads({**batch, **target_logits(batch["labels"])})
    assert torch.allclose(kept_loss, full_loss, rtol=0, atol=1e-6)
    assert len(kept_grads) == len(full_grads)
    for a, b in zip(kept_grads, full_grads):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-7)


def finetune_both_ways(tmp_path, monkeypatch):
    """A 3-step LoRA finetune (dropout on) of the tiny Llama through the Trainer with the output layer at target
    positions, then with it over every position: (summaries, rows the output layer saw) of each, in that order."""
    cfg = dict(method="lora", max_steps=3, per_device_batch_size=2, gradient_accumulation_steps=1,
               logging_steps=1, learning_rate=1e-2, save_steps=100)
    out = {}
    for name in ("kept", "full"):
        if name == "full":
            monkeypatch.setattr(finetune_module, "target_logits_supported", lambda model, kind: False)
        rows = []
        model, tok = build_tiny("causal")
        model.lm_head.register_forward_hook(lambda m, args, o: rows.append(args[0].shape[:-1].numel()))
        out[name] = (finetune(model, tok, "causal", PAIRS, tmp_path / name, cfg), sum(rows))
    return out["kept"], out["full"]


def test_finetune_trains_the_same_weights_with_a_smaller_head(tmp_path, monkeypatch):
    """End to end on the CPU: the same adapter bytes either way, and the prompt positions never reached the
    vocabulary projection."""
    (kept, kept_rows), (full, full_rows) = finetune_both_ways(tmp_path, monkeypatch)
    assert [h["loss"] for h in kept["train_loss"]] == pytest.approx([h["loss"] for h in full["train_loss"]], abs=1e-6)
    assert weights_sha256(tmp_path / "kept") == weights_sha256(tmp_path / "full")
    assert kept_rows < full_rows / 2
