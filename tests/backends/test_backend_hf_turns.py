"""Cross-turn KV reuse in dialogues (wobble.backends.hf_turns): the kept-cache bookkeeping by hand, and
multi-turn dialogues with reuse equal re-encoding every turn (texts exactly, log-probs to 1e-4 in float32)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.backends.hf_turns import TurnCache
from wobble.io import read_jsonl
from wobble.models.tiny import build_tiny
from wobble.runner.dialogue import run_dialogues_resumable

from support import tiny_gemma3

ATOL = 1e-4
SYSTEM = "You answer questions about numbers. Think about each one, then give the answer on its own line. "


def _fake_cache(rows: int, slots: int):
    """A stand-in cache: one layer whose key at (row, slot) is row * 100 + slot."""
    keys = (torch.arange(rows)[:, None] * 100 + torch.arange(slots)[None]).float()[:, None, :, None]
    return SimpleNamespace(layers=[SimpleNamespace(keys=keys, values=-keys)])


def test_store_keeps_valid_slots_and_take_finds_the_longest_run():
    cache = TurnCache(min_prefix=3)
    mask = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    cache.store(_fake_cache(2, 5), mask, [0, 1], [[7, 8, 9, 10], [7, 8, 5, 5]])
    assert len(cache) == 2
    kept = cache.take([[7, 8, 9, 10, 11, 12], [7, 8, 5, 6], [1, 2, 3, 4]])
    assert sorted(kept) == [0, 1]  # [1, 2, 3, 4] shares no id with either
    layers, n = kept[0]
    assert n == 4 and layers[0][0].flatten().tolist() == [1, 2, 3, 4]  # row 0's valid slots 1..4
    assert layers[0][1].flatten().tolist() == [-1, -2, -3, -4]
    layers, n = kept[1]  # 3 ids in common with [7, 8, 5, 5] (not [7, 8, 9, 10]: 2), its slots 0..2
    assert n == 3 and layers[0][0].flatten().tolist() == [100, 101, 102]


def test_take_keeps_one_id_to_run_and_needs_min_prefix():
    cache = TurnCache(min_prefix=3)
    cache.store(_fake_cache(1, 4), torch.ones(1, 4, dtype=torch.long), [0], [[1, 2, 3, 4]])
    assert cache.take([[1, 2, 3, 4]])[0][1] == 3  # the whole kept run equals the prompt: its last id runs again
    cache.store(_fake_cache(1, 4), torch.ones(1, 4, dtype=torch.long), [0], [[1, 2, 3, 4]])
    assert cache.take([[1, 2, 9, 9]]) == {}  # 2 common ids < min_prefix


def test_a_continued_run_is_dropped_a_shared_start_is_not():
    cache = TurnCache(min_prefix=2)
    cache.store(_fake_cache(1, 6), torch.ones(1, 6, dtype=torch.long), [0], [[1, 2, 3, 4, 5, 6]])
    assert cache.take([[1, 2, 9, 9, 9]])[0][1] == 2 and len(cache) == 1  # another dialogue, same system prompt
    assert cache.take([[1, 2, 3, 4, 5, 7, 8]])[0][1] == 5 and len(cache) == 0  # its own next turn


def test_kept_bytes_are_bounded_oldest_dropped_first():
    one = 2 * 4 * 4  # keys + values, 4 float32 slots
    cache = TurnCache(max_bytes=2 * one, min_prefix=1)
    for first in (1, 2, 3):
        cache.store(_fake_cache(1, 4), torch.ones(1, 4, dtype=torch.long), [0], [[first, 0, 0, 0]])
    assert len(cache) == 2 and cache.bytes == 2 * one
    assert cache.take([[1, 0, 0, 0, 5]]) == {} and sorted(cache.take([[3, 0, 0, 0, 5]])) == [0]


def test_a_cache_whose_slots_do_not_match_the_mask_is_not_kept():
    cache = TurnCache(min_prefix=1)
    cache.store(_fake_cache(1, 3), torch.ones(1, 4, dtype=torch.long), [0], [[1, 2, 3, 4]])  # a window-cut cache
    assert len(cache) == 0


def _dialogues(n=5):
    return [{"uid": f"d{i}", "messages": [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": f"What is {i} + {i * 3}? " * (1 + i % 3)}]}
            for i in range(n)]


def _next_turn(dialogue, history):
    asked = sum(m["role"] == "user" for m in history)
    return ["Are you sure?", "I don't agree with you. Think again."][asked - 1] if asked < 3 else None


def dialogues_both_ways(model, tok, tmp_path, temperature: float):
    """The five 3-turn dialogues with and without turn reuse: ``(fast, plain, fast records, plain records)``."""
    mk = lambda reuse: HFBackend(model, tok, "causal", "tiny", batch_size=2, progress=False,  # noqa: E731
                                 reuse_turns=reuse)
    fast, plain = mk(True), mk(False)
    params = GenParams(max_new_tokens=10, temperature=temperature, seed=5, return_logprobs=True)
    for backend, name in ((fast, "fast"), (plain, "plain")):
        run_dialogues_resumable(backend, _dialogues(), _next_turn, params, tmp_path / f"{name}.jsonl")
    return fast, plain, read_jsonl(tmp_path / "fast.jsonl"), read_jsonl(tmp_path / "plain.jsonl")


@pytest.fixture(scope="module")
def llama():
    model, tok = build_tiny("causal", seed=0)
    return model.float(), tok


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_dialogues_with_turn_reuse_equal_re_encoding(llama, tmp_path, temperature):
    fast, plain, got, want = dialogues_both_ways(*llama, tmp_path, temperature)
    assert fast.turn_stats[0] == 10 and fast.turn_stats[1] > 10 * 64  # turns 2 and 3 of 5 dialogues reused
    assert plain.turn_stats == (0, 0) and fast.turn_cache is None  # the session ended, its caches are gone
    for g, w in zip(got, want):
        assert len(g["turns"]) == len(w["turns"]) == 3
        for a, b in zip(g["turns"], w["turns"]):
            assert (a["output"], a["finish_reason"], a["rendered_prompt"]) == (b["output"], b["finish_reason"],
                                                                               b["rendered_prompt"])
            assert a["token_logprobs"] == pytest.approx(b["token_logprobs"], abs=ATOL)


def test_outside_a_session_and_for_sliding_window_models_nothing_is_kept(llama):
    model, tok = llama
    backend = HFBackend(model, tok, "causal", "tiny", progress=False, reuse_turns=True)
    backend.generate([SYSTEM * 2], GenParams(max_new_tokens=3))
    assert backend.turn_cache is None
    gemma, gtok = tiny_gemma3()
    sliding = HFBackend(gemma, gtok, "causal", "tiny", progress=False, reuse_turns=True)
    with sliding.dialogue_session():
        assert sliding.reuse_turns is False and sliding.turn_cache is None
