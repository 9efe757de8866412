"""The output layer of a transformers causal LM, as wobble's hf backend runs it.

Two adjustments, both applied to a loaded model in place:

* :func:`contiguous_lm_head` feeds the head a contiguous input (a speed fix, same logits);
* :func:`float32_output_layer` runs the head in float32 under a bf16 body at every scored position: a
  float32 copy of its weight (the input embeddings stay bf16) and the hidden states cast up before the
  matmul, so logits, any final soft-capping and the log-softmax after them are computed in float32.
  Without it a bf16 model's logits are rounded to bf16 (steps of 1/16–1/8 nats at typical magnitudes)
  before wobble's ``.float()``: scores come in steps and near-ties tie exactly. Costs a float32 copy of the
  head (gemma-3-270m: 262k x 640, 0.7 GB) and float32 matmuls only at the positions whose logits are kept;
  a generation's decode steps after its first token use the original head (:func:`decode_steps_head`).
"""

from __future__ import annotations

import contextlib

import torch


def contiguous_lm_head(model) -> None:
    """Feed the output layer a contiguous input: same logits, ~10x faster for some models.

    With ``logits_to_keep=1`` a causal LM slices the last position (``hidden[:, -1:, :]``, not
    contiguous) before its LM head; when the head's weight does not require grad (e.g. a LoRA model
    merged by :func:`wobble.models.load.load_model`), torch's matmul then takes a ``bmm`` path that
    copies the whole weight per batch row (gemma-3-270m: 262k x 640 per prompt, ~6 s per batch of 8
    on 2 CPU cores instead of ~0.6 s). A forward pre-hook making the input contiguous avoids it; the
    logits are the same up to float summation order. Idempotent.
    """
    if model is None or getattr(model, "_wobble_contiguous_head", False) or not hasattr(model, "get_output_embeddings"):
        return
    head = model.get_output_embeddings()
    if head is None:
        return
    head.register_forward_pre_hook(lambda module, args: (args[0].contiguous(), *args[1:]))
    model._wobble_contiguous_head = True


class ScoredFloat32Head(torch.nn.Module):
    """An output layer with a float32 copy of its weight: logits in float32 from the (cast-up) hidden states,
    except while :attr:`float32` is False, when the original reduced-precision head runs (fed contiguously).

    The hf backend turns :attr:`float32` off only for the decode steps after a generation's first token
    (:func:`decode_steps_head`): every scored position — letter and label-word scoring, continuation
    log-probs, a prompt's first-token log-probs and the first generated token chosen from them — is float32,
    while the later steps of a long generation keep the fast bf16 matmul (for Qwen2.5-0.5B the head is a
    quarter of a decode step's work).
    """

    def __init__(self, head: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = head.in_features, head.out_features
        self.weight = torch.nn.Parameter(head.weight.detach().float().clone(), requires_grad=False)
        self.bias = None if head.bias is None else torch.nn.Parameter(head.bias.detach().float().clone(),
                                                                     requires_grad=False)
        self.low = [head]  # a list: not a submodule (its tied weight would be saved and moved twice)
        self.float32 = True

    def forward(self, x):
        if self.float32:  # .to: a head accelerate placed on another device than the last layer gets its input there
            return torch.nn.functional.linear(x.float().contiguous().to(self.weight.device), self.weight, self.bias)
        return self.low[0](x.contiguous())


def float32_output_layer(model) -> bool:
    """Give a reduced-precision output layer a float32 copy that runs at scored positions; True if replaced.

    A float32 head (a float32 model, or one already replaced) is left alone, and so is a head whose weights
    accelerate offloaded to disk (they are not in memory to copy). Call before :func:`contiguous_lm_head` (the new
    head makes its input contiguous itself). See :class:`ScoredFloat32Head`.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None or head.weight.dtype == torch.float32 or head.weight.device.type == "meta":
        return False
    model.set_output_embeddings(ScoredFloat32Head(head))
    model._wobble_contiguous_head = True
    return True


@contextlib.contextmanager
def decode_steps_head(model):
    """Within this block a :class:`ScoredFloat32Head` runs its original (bf16) head; other heads: no change."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if not isinstance(head, ScoredFloat32Head):
        yield
        return
    before, head.float32 = head.float32, False
    try:
        yield
    finally:
        head.float32 = before
