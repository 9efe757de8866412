"""wobble.studies.instructions.proposers: behaviour the mutation run (tests/tools/mutate.py) found untested.

The masked-LM proposer is run on a scripted tokenizer and model whose scores are set by hand, so each rule of
the docstring (a real, word-initial, alphabetic vocabulary item that is neither the original nor a neighbour;
a long text cut to a window AROUND the mask) decides a visible result.
"""

from __future__ import annotations

import pytest

from wobble.studies.instructions import proposers as PR
from wobble.studies.instructions.insert_replace import MaskSlot

torch = pytest.importorskip("torch")


class ScriptedTokenizer:
    """Whitespace tokenizer over a growing vocabulary; [CLS] ... [SEP] around a text with special tokens."""

    mask_token, mask_token_id, pad_token_id, model_max_length = "[MASK]", 3, 0, 10_000

    def __init__(self, marker: str = ""):
        self.vocab = ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]
        self.marker = marker

    def _id(self, piece: str) -> int:
        if piece not in self.vocab:
            self.vocab.append(piece)
        return self.vocab.index(piece)

    def __call__(self, text, add_special_tokens=True):
        ids = [self._id(w if w == self.mask_token else self.marker + w) for w in text.split()]
        return {"input_ids": [1, *ids, 2] if add_special_tokens else ids}

    def convert_ids_to_tokens(self, ids):
        return [self.vocab[i] for i in ids] if isinstance(ids, list) else self.vocab[ids]

    def decode(self, ids):
        text = "".join(self.vocab[i] for i in ids)
        return (text.replace(self.marker, " ") if self.marker else text).replace("##", "")


class ScriptedModel(torch.nn.Module):
    """Scores ``ranking`` (vocabulary pieces, best first) at every position; records what it was given."""

    def __init__(self, tok: ScriptedTokenizer, ranking: list[str], max_position_embeddings: int = 512):
        super().__init__()
        self.tok, self.ranking, self.seen = tok, ranking, []
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.config = type("Config", (), {"max_position_embeddings": max_position_embeddings})()

    def forward(self, input_ids, attention_mask):
        self.seen.append((input_ids.tolist(), attention_mask.tolist()))
        ids = [self.tok._id(p) for p in self.ranking]
        logits = torch.zeros(*input_ids.shape, len(self.tok.vocab))
        for rank, i in enumerate(ids):
            logits[..., i] = float(len(ids) - rank)
        return type("Out", (), {"logits": logits})()


def _proposer(ranking, marker="", **kwargs):
    tok = ScriptedTokenizer(marker)
    model = ScriptedModel(tok, [marker + w if w.isalpha() and not w.startswith("#") else w for w in ranking])
    return PR.MaskedLMProposer(model=model, tokenizer=tok, **kwargs), model, tok


def test_the_best_real_new_word_is_proposed_not_pieces_numbers_the_original_or_neighbours():
    # ranked: a word piece, a number, the word being replaced (any case), a neighbour, then a real new word
    prop, _, _ = _proposer(["##ing", "1990", "Task", "this", "zebra", "apple"])
    slot = MaskSlot("In this ", " is easy", "task")
    assert prop.propose_many([slot]) == ["zebra"]


def test_with_a_sentencepiece_vocabulary_only_word_initial_pieces_are_words():
    tok = ScriptedTokenizer("\u2581")
    model = ScriptedModel(tok, ["zebra", "\u2581apple"])  # "zebra" has no word-start marker: a continuation
    prop = PR.MaskedLMProposer(model=model, tokenizer=tok)
    assert prop.propose_many([MaskSlot("In this ", " is easy", "task")]) == ["apple"]


def test_no_usable_word_in_the_top_k_is_an_empty_proposal():
    prop, _, _ = _proposer(["1990", "zebra"], top_k=1)
    assert prop.propose_many([MaskSlot("In this ", " is easy", "task")]) == [""]


def test_a_long_text_is_cut_to_a_window_around_the_mask():
    prop, model, tok = _proposer(["zebra"], max_length=8)  # [CLS] + 6 words + [SEP]
    words = [f"w{i}" for i in range(20)]
    slot = MaskSlot(" ".join(words[:10]) + " ", " " + " ".join(words[10:]), None)
    assert prop.propose_many([slot]) == ["zebra"]
    (ids, mask), = model.seen
    pieces = [tok.vocab[i] for i in ids[0]]
    # 6 of the 21 pieces: the mask in the middle (3 before it), not starting at it
    assert pieces == ["[CLS]", "w7", "w8", "w9", "[MASK]", "w10", "w11", "[SEP]"] and mask == [[1] * 8]


def test_a_window_near_either_end_of_the_text_keeps_the_budget():
    prop = PR.MaskedLMProposer(model=object(), tokenizer=object())
    ids = list(range(20))
    assert prop._window(ids, 1, 6) == [0, 1, 2, 3, 4, 5]
    assert prop._window(ids, 18, 6) == [14, 15, 16, 17, 18, 19]
    assert prop._window(ids, 10, 6) == [7, 8, 9, 10, 11, 12]
    assert prop._window(ids[:6], 2, 6) == [0, 1, 2, 3, 4, 5]


def test_slots_of_different_lengths_are_padded_and_masked_in_one_batch():
    prop, model, tok = _proposer(["zebra"], batch_size=2)
    slots = [MaskSlot("a ", " b", None), MaskSlot("a b c ", " d e", None), MaskSlot("x ", "", None)]
    assert prop.propose_many(slots) == ["zebra", "zebra", "zebra"]
    assert [len(ids) for ids, _ in model.seen] == [2, 1]  # batches of 2 then 1
    (ids, mask), _ = model.seen
    assert [len(row) for row in ids] == [8, 8] and ids[0][5:] == [0, 0, 0]
    assert mask == [[1, 1, 1, 1, 1, 0, 0, 0], [1] * 8]


def test_a_proposer_needs_a_model_name_or_both_model_and_tokenizer():
    for kwargs in ({"model": object()}, {"tokenizer": object()}):
        with pytest.raises(ValueError, match="needs model_name_or_path or both model and tokenizer"):
            PR.MaskedLMProposer(**kwargs)
    assert PR.MaskedLMProposer(model=object(), tokenizer=object()).propose_many([]) == []  # nothing loaded
