"""Word proposers for insertion and replacement (wobble.studies.instructions.proposers): the causal LM's first
alphabetic word, and the masked LM on a tiny BERT and on a scripted tokenizer and model whose scores are set by
hand, so each rule of the docstring (a real, word-initial, alphabetic vocabulary item that is neither the original
nor a neighbour; a long text cut to a window AROUND the mask) decides a visible result."""

from __future__ import annotations

import pytest

from wobble.backends.base import GenParams, Generation
from wobble.seeding import make_rng
from wobble.studies.instructions import insert_replace as IR
from wobble.studies.instructions import perturb as P
from wobble.studies.instructions import proposers as PR
from wobble.studies.instructions.insert_replace import MaskSlot

from instructions_texts import TASK1557

torch = pytest.importorskip("torch")


# -------------------------------------------------------------------------------------- proposers

class FakeBackend:
    model_key = "fake"

    def __init__(self, outputs):
        self.outputs, self.calls = outputs, []

    def generate(self, prompts, params):
        self.calls.append((list(prompts), params))
        return [Generation(text=self.outputs[i % len(self.outputs)], rendered_prompt=p) for i, p in enumerate(prompts)]


def test_causal_lm_proposer_takes_first_alphabetic_word():
    backend = FakeBackend([" 12, Task is", " the input", "!!"])
    prop = PR.CausalLMProposer(backend)
    slots = [IR.MaskSlot("In this ", " task", None), IR.MaskSlot("", " this task", "the"),
             IR.MaskSlot("In this ", ", you", None)]
    # numbers/punctuation are skipped, and so are a neighbour ("Task" before "task") and the word being
    # replaced ("the"); no word at all -> ""
    assert prop.propose_many(slots) == ["is", "input", ""]
    (prompts, params), = backend.calls
    assert prompts == ["In this", "Instruction:", "In this"]  # left context; a fixed prompt at the text start
    assert params == GenParams(max_new_tokens=3, temperature=0.0)
    out = IR.insert_words(TASK1557, make_rng(0), PR.CausalLMProposer(FakeBackend([" maybe"])))
    assert 5 <= P.words(out).count("maybe") <= 10


def test_masked_lm_proposer_with_a_tiny_bert(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "##s", "in", "this", "task", "you",
             "will", "be", "shown", "an", "incorrect", "english", "sentence", "need", "to", "generate", "a",
             "corrected", "form", "of", "the", "input", "zebra", "42"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=64)
    model = transformers.BertForMaskedLM(cfg)
    prop = PR.MaskedLMProposer(model=model, tokenizer=tok, top_k=len(vocab), batch_size=2)
    plan = IR.plan_replace_words(TASK1557, make_rng(0))
    words = prop.propose_many(plan.slots)
    assert len(words) == len(plan)
    for w, slot in zip(words, plan.slots):
        assert w.isalpha() and w in vocab and w.lower() != slot.original.lower()
    assert words == prop.propose_many(plan.slots)  # deterministic
    out = IR.fill_plans([plan], prop)[0]
    assert len(P.words(out)) == len(P.words(TASK1557)) and out != TASK1557
    # a very long context is cut to a window around the mask instead of failing
    long_slot = IR.MaskSlot("this task " * 100, " the input" * 100, None)
    assert prop.propose_many([long_slot])[0].isalpha()


class ScriptedTokenizer:
    """Whitespace tokenizer over a growing vocabulary; [CLS] ... [SEP] around a text with special tokens."""

    mask_token, mask_token_id, pad_token_id, model_max_length = "[MASK]", 3, 0, 10_000

    def __init__(self, marker: str = "", first_word_marked: bool = True):
        self.vocab = ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]
        self.marker, self.first_word_marked = marker, first_word_marked

    def _id(self, piece: str) -> int:
        if piece not in self.vocab:
            self.vocab.append(piece)
        return self.vocab.index(piece)

    def __call__(self, text, add_special_tokens=True):
        words = text.split()
        ids = [self._id(w if w == self.mask_token or (k == 0 and not self.first_word_marked) else self.marker + w)
               for k, w in enumerate(words)]
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
        self.tok, self.ranking, self.seen, self.moved_to, self.training_seen = tok, ranking, [], [], []
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.config = type("Config", (), {"max_position_embeddings": max_position_embeddings})()

    def to(self, device):
        self.moved_to.append(device)
        return self

    def forward(self, input_ids, attention_mask):
        self.seen.append((input_ids.tolist(), attention_mask.tolist()))
        self.training_seen.append(self.training)
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


def test_a_byte_bpe_vocabulary_marks_word_starts_after_the_first_word():
    tok = ScriptedTokenizer("\u0120", first_word_marked=False)  # GPT-2 style: "hello", "\u0120world"
    model = ScriptedModel(tok, ["zebra", "\u0120apple"])
    assert PR.MaskedLMProposer(model=model, tokenizer=tok).propose_many([MaskSlot("In this ", " task", None)]) == [
        "apple"]


def test_the_proposal_keeps_the_vocabularys_case():
    prop, _, _ = _proposer(["Zebra"])
    assert prop.propose_many([MaskSlot("In this ", " is easy", "task")]) == ["Zebra"]


def test_the_defaults_take_the_top_50_in_batches_of_16_in_eval_mode_on_the_models_device():
    tok = ScriptedTokenizer()
    model = ScriptedModel(tok, [str(n) for n in range(50)] + ["zebra"])  # 50 numbers, then a word
    prop = PR.MaskedLMProposer(model=model, tokenizer=tok)
    model.train()
    assert prop.propose_many([MaskSlot("a ", " b", None)] * 17) == [""] * 17  # the word is 51st: not in the top 50
    assert [len(ids) for ids, _ in model.seen] == [16, 1] and model.training_seen == [False, False]
    assert model.moved_to == []  # no device given: the model stays where it is
    moved = ScriptedModel(tok, ["zebra"])
    PR.MaskedLMProposer(model=moved, tokenizer=tok, device="cpu").propose_many([MaskSlot("a ", " b", None)])
    assert moved.moved_to == ["cpu"]


def test_the_top_k_ranges_over_the_vocabulary_not_the_sequence():
    prop, _, _ = _proposer([str(n) for n in range(8)] + ["zebra"], top_k=20)  # the word is 9th; the text is short
    assert prop.propose_many([MaskSlot("a ", " b", None)]) == ["zebra"]


def test_a_model_name_alone_is_enough_to_build_a_proposer():
    assert PR.MaskedLMProposer("bert-base-multilingual-cased").model_name_or_path == "bert-base-multilingual-cased"


@pytest.mark.parametrize("tok_limit, model_limit, expected", [
    (10_000, 4096, 512),   # no smaller limit: 512 tokens
    (8, 4096, 8),          # the tokenizer's model_max_length
    (None, 0, 512),        # no tokenizer limit, an unknown (0) model limit: 512
])
def test_the_length_limit_is_the_smallest_known_one(tok_limit, model_limit, expected):
    tok = ScriptedTokenizer()
    if tok_limit is None:
        tok.model_max_length = None
    else:
        tok.model_max_length = tok_limit
    model = ScriptedModel(tok, ["zebra"], max_position_embeddings=model_limit)
    words = " ".join(f"w{i}" for i in range(600))
    PR.MaskedLMProposer(model=model, tokenizer=tok).propose_many([MaskSlot(words + " ", " " + words, None)])
    (ids, _), = model.seen
    assert len(ids[0]) == expected


def test_padding_uses_the_tokenizers_pad_id_or_zero():
    tok = ScriptedTokenizer()
    tok.pad_token_id = 7
    model = ScriptedModel(tok, ["zebra"])
    slots = [MaskSlot("a ", " b", None), MaskSlot("a b c ", " d", None)] * 2  # two full batches of 2
    PR.MaskedLMProposer(model=model, tokenizer=tok, batch_size=2).propose_many(slots)
    assert [ids[0][-2:] for ids, _ in model.seen] == [[7, 7], [7, 7]]
    tok.pad_token_id = None
    model.seen.clear()
    PR.MaskedLMProposer(model=model, tokenizer=tok, batch_size=2).propose_many(slots[:2])
    assert model.seen[0][0][0][-2:] == [0, 0]


def test_a_tokenizer_that_changes_the_text_beside_its_special_tokens_gets_nothing_before_the_text():
    class Shifting(ScriptedTokenizer):
        def __call__(self, text, add_special_tokens=True):
            out = super().__call__(text, add_special_tokens)
            if add_special_tokens and text == "hello":
                out["input_ids"] = [1, self._id("HELLO"), 2]  # not the plain ids of "hello"
            return out

    tok = Shifting()
    model = ScriptedModel(tok, ["zebra"])
    PR.MaskedLMProposer(model=model, tokenizer=tok).propose_many([MaskSlot("a ", " b", None)])
    (ids, _), = model.seen
    assert [tok.vocab[i] for i in ids[0]] == ["a", "[MASK]", "b", "HELLO", "[SEP]"]


class RecordingBackend:
    def __init__(self, outputs):
        self.outputs, self.calls = outputs, []

    def generate(self, prompts, params):
        self.calls.append((list(prompts), params))
        return list(self.outputs[: len(prompts)])


def test_the_causal_proposer_uses_the_given_params_and_asks_nothing_for_no_slots():
    from wobble.backends.base import GenParams

    params = GenParams(max_new_tokens=5, temperature=0.0)
    backend = RecordingBackend([None])
    prop = PR.CausalLMProposer(backend, params)
    assert prop.propose_many([]) == [] and backend.calls == []
    assert prop.propose_many([MaskSlot("In this ", " task", None)]) == [""]  # no text at all: no word
    assert backend.calls[0][1] is params


def test_what_is_not_given_is_loaded_from_the_path(tmp_path):
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "in", "this", "task", "zebra", "apple"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=32))
    model.eval()
    tok.save_pretrained(tmp_path)
    model.save_pretrained(tmp_path)
    slots = [MaskSlot("in this ", " task", None), MaskSlot("in ", " this task", "zebra")]
    want = PR.MaskedLMProposer(model=model, tokenizer=tok, top_k=len(vocab)).propose_many(slots)
    for kwargs in ({}, {"model": model}, {"tokenizer": tok}):
        assert PR.MaskedLMProposer(str(tmp_path), top_k=len(vocab), **kwargs).propose_many(slots) == want, kwargs
