"""HFBackend on tiny random models: batched results equal an explicit, unpadded, one-prompt-at-a-time
forward pass written here (float32, atol 1e-4), for causal and seq2seq models."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from wobble.backends.base import Backend, GenParams, render_chat_fallback
from wobble.backends.hf import HFBackend
from wobble.models.tiny import build_tiny

ATOL = 1e-4
PROMPTS = [
    "Hi",
    "The quick brown fox jumps over the lazy dog.",
    "Q: 2+2? A:",
    "x",
    "Definition: answer the question with one word.\nInput: What colour is the sky?\nOutput:",
]
CONTINUATIONS = [" there", " And then it slept.", " 4", "yz", " blue"]
CANDIDATES = ["A", " B", "blue", "\n"]
CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which option, A or B?"}]


@pytest.fixture(scope="module", params=["causal", "seq2seq"])
def tiny(request):
    model, tok = build_tiny(request.param, seed=0, chat_template=True)
    return request.param, model.float(), tok


def backend(tiny, batch_size=3):
    kind, model, tok = tiny
    return HFBackend(model, tok, kind, f"tiny-{kind}", batch_size=batch_size, progress=False)


# ------------------------------------------------------------------ reference: explicit forward passes

def ref_prompt_ids(kind, tok, text):
    # ByT5 has no BOS: causal prompts are the bare bytes; T5 encoder inputs end with </s>.
    return tok(text, add_special_tokens=(kind == "seq2seq"))["input_ids"]


def ref_logits(kind, model, tok, text, target_ids):
    """Logits predicting each of target_ids (plus one more position) for one unpadded prompt."""
    p = ref_prompt_ids(kind, tok, text)
    with torch.no_grad():
        if kind == "causal":
            full = torch.tensor([p + list(target_ids)])
            logits = model(input_ids=full).logits[0]
            return logits[len(p) - 1:].float()
        start = model.config.decoder_start_token_id
        dec = torch.tensor([[start] + list(target_ids)])
        return model(input_ids=torch.tensor([p]), decoder_input_ids=dec).logits[0].float()


def ref_next_token(kind, model, tok, text, candidates):
    lp = torch.log_softmax(ref_logits(kind, model, tok, text, [])[0], -1)
    return {c: lp[tok(c, add_special_tokens=False)["input_ids"][0]].item() for c in candidates}


def ref_continuation(kind, model, tok, text, cont):
    ids = tok(cont, add_special_tokens=False)["input_ids"]
    lp = torch.log_softmax(ref_logits(kind, model, tok, text, ids), -1)
    return [lp[j, t].item() for j, t in enumerate(ids)]


def ref_greedy(kind, model, tok, text, max_new):
    """Greedy decoding by full re-forward each step (no cache, no padding)."""
    out, lps = [], []
    for _ in range(max_new):
        lp = torch.log_softmax(ref_logits(kind, model, tok, text, out)[-1], -1)
        t = int(lp.argmax())
        if t == tok.eos_token_id:
            break
        out.append(t)
        lps.append(lp[t].item())
    return tok.decode(out, skip_special_tokens=True), [tok.decode([t]) for t in out], lps


# ------------------------------------------------------------------------------------------- tests

def test_is_a_backend(tiny):
    assert isinstance(backend(tiny), Backend)


def test_next_token_logprobs_batched_equals_reference(tiny):
    kind, model, tok = tiny
    got = backend(tiny).next_token_logprobs(PROMPTS, CANDIDATES)
    assert len(got) == len(PROMPTS)
    for text, row in zip(PROMPTS, got):
        ref = ref_next_token(kind, model, tok, text, CANDIDATES)
        assert list(row) == CANDIDATES
        for c in CANDIDATES:
            assert row[c] == pytest.approx(ref[c], abs=ATOL)


def test_generate_returns_first_step_logprobs_of_the_same_call(tiny):
    """first_token_candidates: next_token_logprobs' numbers from generate's own first step."""
    kind, model, tok = tiny
    be = backend(tiny)
    ref = be.next_token_logprobs(PROMPTS, CANDIDATES)
    for params in (GenParams(max_new_tokens=3), GenParams(max_new_tokens=3, temperature=1.5, seed=4),
                   GenParams(max_new_tokens=0)):
        with_lp = be.generate(PROMPTS, replace(params, first_token_candidates=tuple(CANDIDATES)))
        plain = be.generate(PROMPTS, params)
        for g, p, r in zip(with_lp, plain, ref):
            assert g.text == p.text  # scoring the first step changes nothing in the generation
            assert list(g.first_token_logprobs) == CANDIDATES
            for c in CANDIDATES:
                assert g.first_token_logprobs[c] == pytest.approx(r[c], abs=ATOL)
        assert all(p.first_token_logprobs == {} for p in plain)


def test_continuation_logprobs_batched_equals_reference(tiny):
    kind, model, tok = tiny
    got = backend(tiny).continuation_logprobs(PROMPTS, CONTINUATIONS)
    for text, cont, row in zip(PROMPTS, CONTINUATIONS, got):
        ref = ref_continuation(kind, model, tok, text, cont)
        assert len(row) == len(tok(cont, add_special_tokens=False)["input_ids"])
        assert row == pytest.approx(ref, abs=ATOL)


def test_continuation_empty_and_first_token_consistency(tiny):
    b = backend(tiny)
    assert b.continuation_logprobs(["abc", "de"], ["", "f"])[0] == []
    nt = b.next_token_logprobs(PROMPTS, ["Zebra"])
    ct = b.continuation_logprobs(PROMPTS, ["Zebra"] * len(PROMPTS))
    for a, c in zip(nt, ct):
        assert a["Zebra"] == pytest.approx(c[0], abs=ATOL)


def test_greedy_generate_batched_equals_reference(tiny):
    kind, model, tok = tiny
    params = GenParams(max_new_tokens=12, temperature=0.0, return_logprobs=True)
    got = backend(tiny).generate(PROMPTS, params)
    for text, g in zip(PROMPTS, got):
        ref_text, ref_tokens, ref_lps = ref_greedy(kind, model, tok, text, 12)
        assert g.text == ref_text
        assert g.tokens == ref_tokens
        assert g.rendered_prompt == text
        assert g.token_logprobs == pytest.approx(ref_lps, abs=ATOL)
        assert len(g.tokens) == len(g.token_logprobs)
        assert g.finish_reason in ("stop", "length")


def test_batch_sizes_agree(tiny):
    b1, b3, b8 = backend(tiny, 1), backend(tiny, 3), backend(tiny, 8)
    p = GenParams(max_new_tokens=6)
    assert [g.text for g in b1.generate(PROMPTS, p)] == [g.text for g in b3.generate(PROMPTS, p)] \
        == [g.text for g in b8.generate(PROMPTS, p)]


def test_stop_strings_truncate(tiny):
    # sampled text is varied even from a random model; the same seed replays the same draws
    b = backend(tiny)
    params = GenParams(max_new_tokens=16, temperature=1.0, seed=1)
    full = b.generate(PROMPTS, params)
    checked = 0
    for text, g in zip(PROMPTS, full):
        if len(g.text) < 4:
            continue
        stop = g.text[2:4]
        cut = b.generate([text], GenParams(max_new_tokens=16, temperature=1.0, seed=1, stop=("@@never@@", stop),
                                           return_logprobs=True))[0]
        assert cut.text == g.text[: g.text.index(stop)]
        assert cut.finish_reason == "stop"
        assert len(cut.tokens) == len(cut.token_logprobs) < 16  # generation stopped early
        checked += 1
    assert checked >= 3


def test_chat_template_path(tiny):
    kind, model, tok = tiny
    b = backend(tiny)
    rendered = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
    assert rendered.endswith("<assistant>")
    g = b.generate([CHAT], GenParams(max_new_tokens=4))[0]
    assert g.rendered_prompt == rendered
    got = b.next_token_logprobs([CHAT], CANDIDATES)[0]
    ref = ref_next_token(kind, model, tok, rendered, CANDIDATES)
    assert got == pytest.approx(ref, abs=ATOL)
    # a chat prompt is exactly its rendered text
    assert b.continuation_logprobs([CHAT], [" A"])[0] == pytest.approx(b.continuation_logprobs([rendered], [" A"])[0], abs=ATOL)


def test_chat_fallback_path(tiny):
    kind, model, _ = tiny
    _, tok = build_tiny(kind, seed=0, chat_template=False)
    assert not tok.chat_template
    b = HFBackend(model, tok, kind, "tiny", batch_size=3, progress=False)
    rendered = render_chat_fallback(CHAT)
    assert rendered == "System: Be brief.\n\nUser: Which option, A or B?\n\nAssistant:"
    g = b.generate([CHAT, "plain"], GenParams(max_new_tokens=4))
    assert g[0].rendered_prompt == rendered
    assert g[1].rendered_prompt == "plain"
    got = b.next_token_logprobs([CHAT], CANDIDATES)[0]
    assert got == pytest.approx(ref_next_token(kind, model, tok, rendered, CANDIDATES), abs=ATOL)


def test_seeded_sampling_reproducible(tiny):
    p = GenParams(max_new_tokens=10, temperature=1.5, seed=7)
    a = [g.text for g in backend(tiny, 3).generate(PROMPTS, p)]
    b = [g.text for g in backend(tiny, 3).generate(PROMPTS, p)]
    c = [g.text for g in backend(tiny, 1).generate(PROMPTS[::-1], p)][::-1]
    assert a == b == c  # same seed -> same text, whatever the batch size or order
    other = [g.text for g in backend(tiny, 3).generate(PROMPTS, GenParams(max_new_tokens=10, temperature=1.5, seed=8))]
    assert other != a
    greedy = [g.text for g in backend(tiny, 3).generate(PROMPTS, GenParams(max_new_tokens=10))]
    assert greedy != a


def test_top_p_tiny_is_greedy(tiny):
    # a nucleus smaller than the top token's probability keeps only the argmax token
    greedy = backend(tiny).generate(PROMPTS, GenParams(max_new_tokens=6))
    nucleus = backend(tiny).generate(PROMPTS, GenParams(max_new_tokens=6, temperature=1.0, top_p=1e-6, seed=3))
    assert [g.text for g in greedy] == [g.text for g in nucleus]


def test_max_length_truncates(tiny):
    kind, model, tok = tiny
    b = HFBackend(model, tok, kind, "tiny", batch_size=2, max_length=8, progress=False)
    ids = b.encode_prompt(PROMPTS[4])
    assert len(ids) == 8
    if kind == "causal":
        assert ids == tok(PROMPTS[4], add_special_tokens=False)["input_ids"][-8:]
    else:
        assert ids[-1] == tok.eos_token_id
    assert all(math.isfinite(v) for v in b.next_token_logprobs([PROMPTS[4]], ["A"])[0].values())


def test_bad_inputs(tiny):
    from wobble.errors import WobbleError

    b = backend(tiny)
    with pytest.raises(WobbleError, match="candidate"):
        b.next_token_logprobs(["x"], [""])
    with pytest.raises(WobbleError, match="2 prompts but 1"):
        b.continuation_logprobs(["a", "b"], ["c"])
    with pytest.raises(WobbleError, match="role"):
        b.generate([[{"content": "no role"}]], GenParams())


def test_rows_that_stop_early_leave_the_batch_without_changing_the_others(tiny):
    """A stop string ends one row after a few tokens; the rows still running (the batch shrinks for causal
    models) give exactly the texts and log-probs they give without the stop string."""
    b = backend(tiny, batch_size=8)
    params = GenParams(max_new_tokens=12, temperature=0.0, return_logprobs=True)
    full = b.generate(PROMPTS, params)
    row = next(i for i, g in enumerate(full) if len(g.text) >= 6)
    stop = full[row].text[2:4]
    cut = b.generate(PROMPTS, GenParams(max_new_tokens=12, temperature=0.0, return_logprobs=True, stop=(stop,)))
    assert cut[row].text == full[row].text[: full[row].text.index(stop)] and cut[row].finish_reason == "stop"
    others = [i for i, g in enumerate(full) if stop not in g.text]
    assert others, "every row contains the stop string: pick another"
    for i in others:
        assert cut[i].text == full[i].text and cut[i].finish_reason == full[i].finish_reason
        assert cut[i].token_logprobs == pytest.approx(full[i].token_logprobs, abs=ATOL)
