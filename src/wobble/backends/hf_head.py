"""The output layer of a transformers causal LM, as wobble's hf backend runs it (issue 13, item 2).

Two adjustments, both applied to a loaded model in place:

* :func:`contiguous_lm_head` feeds the head a contiguous input (a speed fix, same logits);
* :func:`float32_output_layer` runs the head in float32 under a bf16 body: a float32 copy of its weight
  (untied from the input embeddings, which stay bf16) and the hidden states cast up before the matmul,
  so logits, any final soft-capping and the log-softmax after them are computed in float32. Without it a
  bf16 model's logits are rounded to bf16 (steps of 1/16–1/8 nats at typical magnitudes) before wobble's
  ``.float()``: scores come in steps and near-ties tie exactly. Costs a float32 copy of the head
  (gemma-3-270m: 262k x 640, 0.7 GB) and float32 matmuls only at the positions whose logits are kept.
"""

from __future__ import annotations

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


def float32_output_layer(model) -> bool:
    """Replace a reduced-precision output layer by a float32 copy that casts its input up; True if replaced.

    A float32 head (a float32 model, or one already replaced) is left alone. Call before
    :func:`contiguous_lm_head` (the new head gets its own contiguous, float32 input).
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None or head.weight.dtype == torch.float32:
        return False
    new = torch.nn.Linear(head.in_features, head.out_features, bias=head.bias is not None,
                          dtype=torch.float32, device=head.weight.device)
    with torch.no_grad():
        new.weight.copy_(head.weight.float())
        if head.bias is not None:
            new.bias.copy_(head.bias.float())
    new.requires_grad_(False)
    new.register_forward_pre_hook(lambda module, args: (args[0].float().contiguous(), *args[1:]))
    model.set_output_embeddings(new)
    model._wobble_contiguous_head = True  # the pre-hook above already makes the input contiguous
    return True
