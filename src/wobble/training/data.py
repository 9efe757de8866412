"""Tokenize (source, target) text pairs for instruction finetuning, and pad them into batches.

The prompt text (definition, positive examples, instance input — Tk-Instruct's ``Definition: …
Positive Example 1 – … Now complete the following example – Input: … Output:``) is built elsewhere;
here a pair is just two strings.

Two layouts, one per model kind:

* ``seq2seq`` (T5): ``input_ids`` = tokenized source (with the tokenizer's own special tokens, i.e.
  the trailing ``</s>``), truncated to ``max_source_length`` tokens; ``labels`` = tokenized target,
  truncated to ``max_target_length`` (``</s>`` included). The model shifts the labels right itself to
  build ``decoder_input_ids``.
* ``causal`` (decoder-only): ``input_ids`` = [BOS if the tokenizer adds one] + source + target + EOS.
  ``labels`` are the same ids with every prompt position (BOS + source) set to ``-100``, so the loss
  is on the answer and its EOS only. Source and target are tokenized separately and concatenated as
  ids, so the prompt/answer boundary is exact whatever the tokenizer merges across it.

Truncation. Tk-Instruct truncates the *source* (the tokenizer's default right-side truncation at
``max_source_length=1024``; its collator first drops demonstrations to fit, which the prompt builder
does here) and never the target beyond ``max_target_length=128``. We do the same by default
(``truncation_side="right"``: the head of the prompt — the task definition — survives, the tail is
cut). ``truncation_side="left"`` keeps the tail instead (the instance input and the ``Output:`` cue,
which a decoder-only model continues from); it is an option, not the recipe. The target is always
truncated on the right and, for causal models, keeps its EOS.

Padding (:class:`PadCollator`) is to the longest example of the batch, on the right, with the
tokenizer's pad id (EOS when it has none) for ``input_ids``, 0 for ``attention_mask`` and ``-100``
for ``labels``: a pure function of the batch, so batches are deterministic.

Output layer only where there is a target (``target_logits_only``, causal models whose forward takes
``logits_to_keep`` and uses transformers' causal-LM loss, see :func:`target_logits_supported`): the batch also
carries ``logits_to_keep`` (the positions whose next token is a target in some row) and ``shift_labels``
(the shifted labels at those positions), so the model computes its vocabulary projection, log-softmax and
loss on those few positions instead of every prompt token. Same loss, same items counted
(``num_items_in_batch``), same gradients: a SuperNI answer is ~11 of ~220 tokens, and gemma-3's 262k-word
head (projection, float32 log-softmax and their backward) over every position is most of a LoRA step
without it (``benchmarks/bench_finetune_head.py``: forward + backward 2.73x faster on 4 batches of the
instructions study's pairs, adapter gradients bit-identical, loss within 5e-7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

IGNORE_INDEX = -100
KINDS = ("seq2seq", "causal")
TRUNCATION_SIDES = ("right", "left")


def _ids(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def special_layout(tokenizer) -> tuple[list[int], list[int]]:
    """The ids a tokenizer puts before and after a text when it adds special tokens.

    E.g. ``([], [</s>])`` for T5/ByT5, ``([<bos>], [])`` for Gemma/Llama, ``([], [])`` for GPT-2.
    Found by probing, so it works for slow and fast tokenizers alike.
    """
    probe = "a"
    plain = _ids(tokenizer, probe)
    full = list(tokenizer(probe, add_special_tokens=True)["input_ids"])
    for i in range(len(full) - len(plain) + 1):
        if full[i:i + len(plain)] == plain:
            return full[:i], full[i + len(plain):]
    return [], []


def _truncate(ids: list[int], n: int, side: str) -> list[int]:
    if n <= 0:
        return []
    if len(ids) <= n:
        return ids
    return ids[-n:] if side == "left" else ids[:n]


def tokenize_seq2seq(tokenizer, source: str, target: str, max_source_length: int = 1024,
                     max_target_length: int = 128, truncation_side: str = "right",
                     layout: tuple[list[int], list[int]] | None = None) -> dict[str, list[int]]:
    """One T5 example: source ids and target ids (labels), each with the tokenizer's special tokens.

    Truncation keeps the special tokens (T5's trailing ``</s>``), as the tokenizer's own does.
    """
    pre, suf = layout if layout is not None else special_layout(tokenizer)
    room = len(pre) + len(suf)
    src = pre + _truncate(_ids(tokenizer, source), max_source_length - room, truncation_side) + suf
    tgt = pre + _truncate(_ids(tokenizer, target), max_target_length - room, "right") + suf
    return {"input_ids": src, "attention_mask": [1] * len(src), "labels": tgt}


def tokenize_causal(tokenizer, source: str, target: str, max_source_length: int = 1024,
                    max_target_length: int = 128, truncation_side: str = "right",
                    layout: tuple[list[int], list[int]] | None = None) -> dict[str, list[int]]:
    """One decoder-only example: ``[BOS] source target EOS``; labels are -100 on ``[BOS] source``."""
    if tokenizer.eos_token_id is None:
        raise ValueError("causal finetuning needs a tokenizer with an EOS token")
    pre, _ = layout if layout is not None else special_layout(tokenizer)
    src = pre + _truncate(_ids(tokenizer, source), max_source_length - len(pre), truncation_side)
    tgt = _truncate(_ids(tokenizer, target), max_target_length - 1, "right") + [tokenizer.eos_token_id]
    ids = src + tgt
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": [IGNORE_INDEX] * len(src) + tgt}


def tokenize_pairs(tokenizer, pairs: Iterable[tuple[str, str] | Sequence[str] | dict], kind: str,
                   max_source_length: int = 1024, max_target_length: int = 128,
                   truncation_side: str = "right") -> list[dict[str, list[int]]]:
    """Tokenize every pair (a ``(source, target)`` tuple or a ``{"source", "target"}`` dict), in order."""
    if kind not in KINDS:
        raise ValueError(f"model kind must be one of {KINDS}, got {kind!r}")
    if truncation_side not in TRUNCATION_SIDES:
        raise ValueError(f"truncation_side must be one of {TRUNCATION_SIDES}, got {truncation_side!r}")
    fn = tokenize_seq2seq if kind == "seq2seq" else tokenize_causal
    layout = special_layout(tokenizer)
    out = []
    for i, pair in enumerate(pairs):
        source, target = (pair["source"], pair["target"]) if isinstance(pair, dict) else pair
        if not isinstance(source, str) or not isinstance(target, str):
            raise ValueError(f"pair {i}: source and target must be strings")
        out.append(fn(tokenizer, source, target, max_source_length, max_target_length, truncation_side, layout))
    return out


def training_dataset(examples: list[dict[str, list[int]]]):
    """The tokenized examples as a ``datasets.Dataset`` (what the Trainer's sampler indexes and, with several
    ranks, shards), each row with its position in ``examples`` as ``index`` (see :class:`ShardRecorder`)."""
    from datasets import Dataset

    return Dataset.from_list([{**ex, "index": i} for i, ex in enumerate(examples)])


class ShardRecorder:
    """A collator wrapper that notes the ``index`` of every example this process's data loader hands it (in
    order) and passes the rest to ``collate``: with N ranks, the record of which shard each rank read (the loader
    reads one batch ahead, so a run stopped inside an epoch lists one batch it did not train on)."""

    def __init__(self, collate):
        self.collate = collate
        self.seen: list[int] = []

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        self.seen += [int(f["index"]) for f in features]
        return self.collate([{k: v for k, v in f.items() if k != "index"} for f in features])


@dataclass
class PadCollator:
    """Right-pad a list of examples to the batch's longest; returns ``torch.long`` tensors."""

    pad_token_id: int
    label_pad_token_id: int = IGNORE_INDEX
    pad_to_multiple_of: int | None = None
    target_logits_only: bool = False

    @classmethod
    def for_tokenizer(cls, tokenizer, pad_to_multiple_of: int | None = None,
                      target_logits_only: bool = False) -> "PadCollator":
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if pad is None:
            raise ValueError("tokenizer has neither a pad nor an EOS token to pad with")
        return cls(pad_token_id=pad, pad_to_multiple_of=pad_to_multiple_of, target_logits_only=target_logits_only)

    def _width(self, n: int) -> int:
        m = self.pad_to_multiple_of
        return n if not m else -(-n // m) * m

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        pads = {"input_ids": self.pad_token_id, "attention_mask": 0, "labels": self.label_pad_token_id}
        batch = {}
        for key in features[0]:
            if key not in pads:
                continue
            seqs = [list(f[key]) for f in features]
            width = self._width(max(len(s) for s in seqs))
            batch[key] = torch.tensor([s + [pads[key]] * (width - len(s)) for s in seqs], dtype=torch.long)
        if self.target_logits_only and "labels" in batch:
            batch.update(target_logits(batch["labels"], self.label_pad_token_id))
        return batch


def target_logits(labels, ignore_index: int = IGNORE_INDEX) -> dict[str, Any]:
    """``logits_to_keep`` (positions whose next label is a target in some row) and ``shift_labels`` there.

    A causal LM predicts ``labels[:, p + 1]`` at position ``p``; transformers' causal-LM loss shifts the labels
    that way itself unless given ``shift_labels``. Empty when no row has a target (the batch is left as is).
    """
    import torch

    shifted = torch.nn.functional.pad(labels[:, 1:], (0, 1), value=ignore_index)
    keep = (shifted != ignore_index).any(dim=0).nonzero().squeeze(1)
    if keep.numel() == 0:
        return {}
    return {"logits_to_keep": keep, "shift_labels": shifted[:, keep].contiguous()}


def target_logits_supported(model, kind: str) -> bool:
    """Whether ``model`` computes its loss from :func:`target_logits`'s keys: a causal LM whose forward takes
    ``logits_to_keep`` and whose loss is transformers' ``ForCausalLMLoss`` (which reads ``shift_labels``)."""
    import inspect

    if kind != "causal":
        return False
    try:
        from transformers.loss.loss_utils import ForCausalLMLoss
    except ImportError:
        return False
    return ("logits_to_keep" in inspect.signature(model.forward).parameters
            and getattr(model, "loss_function", None) is ForCausalLMLoss
            and "shift_labels" in inspect.signature(ForCausalLMLoss).parameters)
