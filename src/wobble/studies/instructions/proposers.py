"""Word proposers for insert/replace words (:mod:`wobble.studies.instructions.insert_replace`): a masked LM
(the paper: "pretrained BERT", §3.1; the authors' fork: bert-base-multilingual-cased) or, offline, a causal
LM continuing the left context. Both implement
``propose_many(slots) -> list[str]`` (one word per slot, "" when there is no usable proposal).
"""

from __future__ import annotations

import re
from typing import Sequence

from wobble.studies.instructions.insert_replace import MaskSlot
from wobble.studies.instructions.perturb import is_single_word, same_word

_ALPHA_WORD_RE = re.compile(r"[^\W\d_]+")


def _new_word(word: str, slot: MaskSlot) -> bool:
    """A single word that is neither the word being replaced nor a neighbour (the fill rejects those)."""
    return is_single_word(word) and not any(same_word(word, w) for w in [slot.original, *slot.neighbours])


class MaskedLMProposer:
    """Fill each slot with a masked LM's best prediction that is a real word, not the original, not a neighbour.

    ``model_name_or_path`` is loaded lazily with ``AutoTokenizer`` / ``AutoModelForMaskedLM`` on the
    first call (the authors' fork used bert-base-multilingual-cased); a ready ``model`` and ``tokenizer`` may be
    passed instead. A "real word" is an alphabetic, word-initial vocabulary item (not a "##" piece, and a
    "▁"/"Ġ"-marked piece for SentencePiece/byte-BPE vocabularies) that :func:`is_single_word` accepts.
    Long texts are cut to a window of tokens around the mask.
    """

    def __init__(self, model_name_or_path: str | None = None, *, model=None, tokenizer=None, top_k: int = 50,
                 batch_size: int = 16, device: str | None = None, max_length: int | None = None):
        if model_name_or_path is None and (model is None or tokenizer is None):
            raise ValueError("MaskedLMProposer needs model_name_or_path or both model and tokenizer")
        self.model_name_or_path = model_name_or_path
        self._model, self._tok = model, tokenizer
        self.top_k, self.batch_size, self.device, self.max_length = top_k, batch_size, device, max_length
        self._marker: str | None = None
        self._affixes: tuple[list[int], list[int]] = ([], [])

    def _load(self):
        if self._model is None or self._tok is None:
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            self._tok = self._tok or AutoTokenizer.from_pretrained(self.model_name_or_path)
            self._model = self._model or AutoModelForMaskedLM.from_pretrained(self.model_name_or_path)
        self._model.eval()
        if self.device:
            self._model.to(self.device)
        if self._marker is None:
            pieces = self._tok.convert_ids_to_tokens(self._tok("hello world", add_special_tokens=False)["input_ids"])
            self._marker = next((m for m in ("▁", "Ġ") if any(p.startswith(m) for p in pieces)), "")
            # the special tokens the tokenizer adds around a text ([CLS] ... [SEP], <s> ... </s>)
            plain = self._tok("hello", add_special_tokens=False)["input_ids"]
            full = self._tok("hello", add_special_tokens=True)["input_ids"]
            i = next((j for j in range(len(full) - len(plain) + 1) if full[j:j + len(plain)] == plain), 0)
            self._affixes = (full[:i], full[i + len(plain):])
        return self._model, self._tok

    def _window(self, ids: list[int], mask_pos: int, budget: int) -> list[int]:
        if len(ids) <= budget:
            return ids
        lo = max(0, min(mask_pos - budget // 2, len(ids) - budget))
        return ids[lo:lo + budget]

    def _candidate(self, raw: str, decoded: str, slot: MaskSlot) -> str | None:
        if raw.startswith("##"):
            return None
        if self._marker and not raw.startswith(self._marker):
            return None
        word = decoded.strip()
        if not word.isalpha() or not _new_word(word, slot):
            return None
        return word

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        if not slots:
            return []
        import torch

        model, tok = self._load()
        limits = [512, getattr(tok, "model_max_length", None), getattr(model.config, "max_position_embeddings", None)]
        max_len = self.max_length or min(x for x in limits if isinstance(x, int) and x > 0)
        head, tail = self._affixes
        budget = max_len - len(head) - len(tail)
        out: list[str] = []
        for b in range(0, len(slots), self.batch_size):
            batch = slots[b:b + self.batch_size]
            seqs, positions = [], []
            for slot in batch:
                ids = tok(slot.masked(tok.mask_token), add_special_tokens=False)["input_ids"]
                mask_pos = ids.index(tok.mask_token_id)
                ids = list(head) + self._window(ids, mask_pos, budget) + list(tail)
                seqs.append(ids)
                positions.append(ids.index(tok.mask_token_id))
            width = max(len(s) for s in seqs)
            pad = tok.pad_token_id if tok.pad_token_id is not None else 0
            input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs])
            attn = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
            device = next(model.parameters()).device
            with torch.no_grad():
                logits = model(input_ids=input_ids.to(device), attention_mask=attn.to(device)).logits
            for i, slot in enumerate(batch):
                top = torch.topk(logits[i, positions[i]], k=min(self.top_k, logits.shape[-1])).indices.tolist()
                chosen = ""
                for tid in top:
                    word = self._candidate(tok.convert_ids_to_tokens(tid), tok.decode([tid]), slot)
                    if word:
                        chosen = word
                        break
                out.append(chosen)
        return out


class CausalLMProposer:
    """Propose the next word after the left context with a :class:`wobble.backends.base.Backend`.

    Each slot becomes the prompt ``slot.left.rstrip()`` (or ``empty_context_prompt`` when the slot is at
    the start of the text); one batched ``backend.generate(prompts, params)`` call with greedy decoding
    of 3 new tokens; the proposal is the first alphabetic word of the output that differs from the word
    being replaced and from its neighbours ("" if none).
    """

    def __init__(self, backend, params=None, empty_context_prompt: str = "Instruction:"):
        if params is None:
            from wobble.backends.base import GenParams

            params = GenParams(max_new_tokens=3, temperature=0.0)
        self.backend, self.params, self.empty_context_prompt = backend, params, empty_context_prompt

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        if not slots:
            return []
        prompts = [s.left.rstrip() or self.empty_context_prompt for s in slots]
        gens = self.backend.generate(prompts, self.params)
        out = []
        for slot, gen in zip(slots, gens):
            text = getattr(gen, "text", gen)
            word = next((w for w in _ALPHA_WORD_RE.findall(text or "")
                         if _new_word(w, slot)), "")
            out.append(word)
        return out


__all__ = ["MaskedLMProposer", "CausalLMProposer"]
