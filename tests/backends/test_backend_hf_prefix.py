"""Exact shared-prefix reuse (wobble.backends.hf_prefix): the grouping functions on hand-made id lists, and
next-token / continuation log-probs with reuse equal the plain batched path (float32, 1e-4) on a tiny Llama
and on a tiny Gemma-3 whose sliding window (8 tokens) is far shorter than the shared prefix."""

from __future__ import annotations

import pytest
import torch

from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.backends.hf_prefix import (PrefixCache, _encode_prefix, common_prefix_len, generation_groups,
                                      prefix_groups, prefix_layers, sliding_window, suffix_batch)
from wobble.backends.hf_turns import padding_parts
from wobble.models.tiny import build_tiny

from support import tiny_gemma3

ATOL = 1e-4
# 16 "demonstrations" shared by every item (ByT5 bytes: ~330 tokens), then items of different lengths
DEMOS = "".join(f"Review: item number {i} was {'good' if i % 3 else 'bad'}.\nLabel: {i % 2}\n\n" for i in range(16))
ITEMS = ["Review: fine.\nLabel:", "Review: a much longer review that goes on and on.\nLabel:", "Review: ok\nLabel:",
         "[MASK]\n\nLabel:"]
OTHER = ["A different prompt that shares nothing.", "Q: 2+2?\nA:"]


def test_common_prefix_len_by_hand():
    assert common_prefix_len([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_len([[5, 6], [5, 6]]) == 2
    assert common_prefix_len([[1], [2]]) == 0
    assert common_prefix_len([]) == 0


def test_prefix_groups_by_hand():
    a = [9] * 5 + [1, 2]
    b = [9] * 5 + [3]
    c = [9] * 5          # the whole of c is the shared run: the prefix stops one id short of it
    d = [7, 7, 7]
    groups = prefix_groups([a, d, b, c], min_prefix=3)
    assert sorted((p, sorted(rows)) for p, rows in groups) == [(0, [1]), (4, [0, 2, 3])]
    # below the minimum: every row alone, prefix 0
    assert sorted(prefix_groups([a, b], min_prefix=6)) == [(0, [0]), (0, [1])]
    assert prefix_groups([a], min_prefix=1) == [(0, [0])]


def test_suffix_batch_keeps_true_positions():
    ids, mask, pos = suffix_batch([[4, 5, 6], [7]], prefix_len=10, pad_id=0, device="cpu")
    assert ids.tolist() == [[4, 5, 6], [7, 0, 0]]
    assert mask.tolist() == [[1] * 10 + [1, 1, 1], [1] * 10 + [1, 0, 0]]
    assert pos.tolist() == [[10, 11, 12], [10, 11, 12]]


def test_prefix_cache_is_lru():
    cache, built = PrefixCache(size=2), []
    for key in [(1,), (2,), (1,), (3,), (2,)]:
        cache.get(key, lambda k=key: built.append(k) or k)
    assert built == [(1,), (2,), (3,), (2,)]  # (2,) was dropped when (3,) came, (1,) was used more recently
    assert (cache.hits, cache.misses) == (1, 4)



@pytest.fixture(scope="module", params=["llama", "gemma3-sliding"])
def model_tok(request):
    if request.param == "llama":
        model, tok = build_tiny("causal", seed=0)
        return model.float(), tok
    return tiny_gemma3()


def pair(model_tok, batch_size=3, generation=False):
    model, tok = model_tok
    mk = lambda reuse: HFBackend(model, tok, "causal", "tiny", batch_size=batch_size, progress=False,  # noqa: E731
                                 reuse_prefix=reuse, reuse_prefix_generation=generation)
    return mk(True), mk(False)


def test_next_token_with_reuse_equals_plain_path(model_tok):
    fast, plain = pair(model_tok)
    prompts = [DEMOS + q for q in ITEMS] + OTHER + [DEMOS + q for q in reversed(ITEMS)]
    cands = ["0", "1", " 1", "\n"]
    got, want = fast.next_token_logprobs(prompts, cands), plain.next_token_logprobs(prompts, cands)
    for g, w in zip(got, want):
        for c in cands:
            assert g[c] == pytest.approx(w[c], abs=ATOL)
    assert fast.prefix_cache.misses == 1  # one shared prefix, run once for both halves of the call
    fast.next_token_logprobs(prompts[:2], cands)  # the next call finds it cached
    assert fast.prefix_cache.hits >= 1 and fast.prefix_cache.misses == 1


def test_continuations_with_reuse_equal_plain_path(model_tok):
    fast, plain = pair(model_tok, batch_size=2)
    prompts = [DEMOS + q for q in ITEMS] + OTHER
    conts = [" 1", " 0 because", "", " positive", " 4", " 1"]
    got, want = fast.continuation_logprobs(prompts, conts), plain.continuation_logprobs(prompts, conts)
    for g, w, c in zip(got, want, conts):
        assert len(g) == len(w)
        assert (len(g) == 0) == (c == "")
        assert g == pytest.approx(w, abs=ATOL)


def test_longest_cached_prefix_by_hand():
    cache = PrefixCache(size=4)
    for key in [(1, 2), (1, 2, 3, 4), (9, 9, 9)]:
        cache.get(key, lambda: None)
    assert cache.longest_cached([1, 2, 3, 4, 5], upto=5, at_least=1) == (1, 2, 3, 4)
    assert cache.longest_cached([1, 2, 3, 4, 5], upto=3, at_least=1) == (1, 2)
    assert cache.longest_cached([1, 2, 3, 4, 5], upto=5, at_least=3) == (1, 2, 3, 4)
    assert cache.longest_cached([1, 2, 7], upto=3, at_least=3) is None


def test_groups_do_not_merge_prompt_sets_that_share_only_a_header():
    header = [1] * 10
    set_a = header + [2] * 40
    set_b = header + [3] * 40
    rows = [set_a + [5], set_a + [6, 6], set_b + [7], set_b + [8]]
    groups = sorted((p, sorted(r)) for p, r in prefix_groups(rows, min_prefix=8))
    assert groups == [(50, [0, 1]), (50, [2, 3])]


@pytest.fixture(scope="module")
def llama():
    model, tok = build_tiny("causal", seed=0)
    return model.float(), tok


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_generation_with_reuse_equals_plain_path(llama, temperature):
    """Greedy and seeded sampled texts, first-token log-probs and token log-probs are the plain path's."""
    fast, plain = pair(llama, batch_size=3, generation=True)
    prompts = [DEMOS + q for q in ITEMS] + OTHER + [DEMOS + "Review: the last one.\nLabel:"]
    params = GenParams(max_new_tokens=12, temperature=temperature, seed=3, return_logprobs=True,
                       first_token_candidates=("0", "1"))
    got, want = fast.generate(prompts, params), plain.generate(prompts, params)
    assert fast.prefix_cache.misses == 1 and plain.prefix_cache.misses == 0  # the reuse path did run
    for g, w in zip(got, want):
        assert g.text == w.text and g.finish_reason == w.finish_reason and g.rendered_prompt == w.rendered_prompt
        assert g.token_logprobs == pytest.approx(w.token_logprobs, abs=ATOL)
        assert g.first_token_logprobs == pytest.approx(w.first_token_logprobs, abs=ATOL)


def test_padding_parts_by_hand():
    assert padding_parts([10, 9, 8, 8, 3, 2, 2, 1]) == [range(0, 5), range(5, 8)]  # 6 x 10 x 0.75 = 45 > 40
    assert padding_parts([600, 300, 280, 100, 90, 80, 80, 70, 20]) == [range(0, 2), range(2, 3), range(3, 8),
                                                                         range(8, 9)]
    assert padding_parts([4, 4, 4]) == [range(0, 3)] and padding_parts([]) == []
    assert padding_parts([3, 2, 1], max_padding=0.0) == [range(0, 1), range(1, 2), range(2, 3)]


def test_prefixes_run_together_equal_each_run_alone(llama):
    """prefix_layers runs the prefixes it lacks in one left-padded batch (three lengths, at most 25 % padding
    here): each row's kept slots equal the batch-1 cache of that prefix to 1e-4 in float32; a prefix asked for
    twice runs once, and a second call takes every prefix from the LRU."""
    fast, _ = pair(llama, batch_size=4, generation=True)
    ids = [fast.encode_prompt(DEMOS + q) for q in ITEMS[:3]]
    items = [(ids[0], 300), (ids[1], 290), (ids[2], 280), (ids[0], 300)]
    got = prefix_layers(fast, items)
    assert fast.prefix_cache.misses == 3 and fast.prefix_cache.hits == 1
    for (layers, n), (row, p) in zip(got, items):
        assert n == p
        alone = _encode_prefix(fast, row[:p])
        for (k, v), lay in zip(layers, alone.layers):
            assert k.shape == lay.keys.shape
            assert torch.allclose(k, lay.keys, atol=ATOL) and torch.allclose(v, lay.values, atol=ATOL)
    prefix_layers(fast, items[:3])
    assert fast.prefix_cache.misses == 3 and fast.prefix_cache.hits == 4


@pytest.mark.parametrize("mixed,max_padding", [(True, 0.25), (True, 0.0), (False, 0.25)])
def test_generation_batches_rows_of_several_prefix_groups_together(llama, monkeypatch, mixed, max_padding):
    """Two prompt sets (two shared prefixes, 3 rows each) and one unshared prompt, batch size 4: with mixed
    groups (the default where there is no sliding window) both prefixes run once and their rows fill batches
    of 4 across groups; per group (the sliding-window path) each group is its own batch. Either way the texts
    and log-probs are the plain path's."""
    import wobble.backends.hf as hf_mod

    demos2 = DEMOS.replace("Review", "Comment").replace("Label", "Tag")
    prompts = [DEMOS + q for q in ITEMS[:3]] + [demos2 + q.replace("Review", "Comment").replace("Label", "Tag")
                                                 for q in ITEMS[:3]] + OTHER[:1]
    fast, plain = pair(llama, batch_size=4, generation=True)
    fast.mix_prefix_groups = mixed
    # max_padding 0: every suffix length its own prefill sub-batch, the caches merged again for decoding
    monkeypatch.setattr("wobble.backends.hf_turns.MAX_PADDING", max_padding)
    sizes: list[int] = []
    run = hf_mod.generate_batch

    def spy(backend, ids, *args, **kw):
        if backend is fast:
            sizes.append(len(ids))
        return run(backend, ids, *args, **kw)

    monkeypatch.setattr(hf_mod, "generate_batch", spy)
    params = GenParams(max_new_tokens=10, temperature=0.0, return_logprobs=True, first_token_candidates=("0", "1"))
    got, want = fast.generate(prompts, params), plain.generate(prompts, params)
    assert fast.prefix_cache.misses == 2
    assert sorted(sizes) == ([1, 2, 4] if mixed else [1, 3, 3])
    for g, w in zip(got, want):
        assert g.text == w.text and g.finish_reason == w.finish_reason
        assert g.token_logprobs == pytest.approx(w.token_logprobs, abs=ATOL)
        assert g.first_token_logprobs == pytest.approx(w.first_token_logprobs, abs=ATOL)


def test_generation_reuse_is_off_by_default_and_skips_prefixes_beyond_a_sliding_window():
    model, tok = tiny_gemma3()
    assert sliding_window(model) == 8 and sliding_window(build_tiny("causal", seed=0)[0]) is None
    backend = HFBackend(model, tok, "causal", "tiny", progress=False)
    assert backend.reuse_prefix_generation is False
    backend.reuse_prefix_generation = True
    ids = [backend.encode_prompt(DEMOS + q) for q in ITEMS]
    # the shared prefix (~330 ids) is far beyond the 8-token window: no group keeps it
    assert all(p == 0 for p, _ in generation_groups(backend, ids, max_new_tokens=4))
    out = backend.generate([DEMOS + q for q in ITEMS], GenParams(max_new_tokens=4))
    assert backend.prefix_cache.misses == 0 and len(out) == len(ITEMS)
