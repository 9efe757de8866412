"""LlamaCppBackend's letter scoring: the top-k alternatives first, the whole vocabulary only for a prompt whose
candidates they do not settle, with fake server answers (no llama.cpp here; test_models runs a real server)."""

from __future__ import annotations

import logging

import pytest

from wobble.backends.llamacpp import LlamaCppBackend, resolve_in_top
from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.errors import WobbleError

# the fake model's next-token log-probs, the same after every prompt; "Ye" and "Yes" are both tokens
VOCAB = {"A": -0.1, "B": -2.0, "C": -3.0, "Ye": -4.0, " A": -5.0, "Z": -6.0, "Yes": -9.0}


def fake_backend(k: int) -> tuple[LlamaCppBackend, list[dict]]:
    """A LlamaCppBackend without a server: its requests go to a fake ``_post`` that answers from VOCAB in
    llama.cpp's format (``logprobs.content[0].top_logprobs``, on /chat/completions and /completions alike)."""
    b = LlamaCppBackend.__new__(LlamaCppBackend)
    OpenAICompatBackend.__init__(b, "http://127.0.0.1:9", "m", model_key="m", top_logprobs=k, concurrency=1,
                                 max_retries=0, progress=False, cache_dir=None)
    b.vocab_size = len(VOCAB)
    b._init_scoring()
    sent: list[dict] = []

    def post(endpoint, body):
        sent.append({"endpoint": endpoint, **body})
        n = body["top_logprobs"] if endpoint == "chat/completions" else body["logprobs"]
        top = sorted(VOCAB.items(), key=lambda kv: -kv[1])[:n]
        content = [{"token": "A", "logprob": -0.1, "top_logprobs": [{"token": t, "logprob": v} for t, v in top]}]
        return {"choices": [{"message": {"content": "A"}, "text": "A", "logprobs": {"content": content}}]}

    b._post = post
    return b, sent


def asked(sent: list[dict]) -> list[int]:
    return [s.get("top_logprobs", s.get("logprobs")) for s in sent]


def test_candidates_inside_the_top_k_need_no_second_request():
    b, sent = fake_backend(3)
    chats = [[{"role": "user", "content": f"Pick one {i}"}] for i in range(4)]
    got = b.next_token_logprobs(chats, ["A", "B", "C"])
    assert got == [{"A": -0.1, "B": -2.0, "C": -3.0}] * 4
    assert asked(sent) == [3] * 4 and all(s["max_tokens"] == 1 and s["temperature"] == 0 for s in sent)
    assert (b.scored_prompts, b.full_vocab_prompts) == (4, 0)


def test_a_candidate_outside_the_top_k_is_asked_again_for_the_whole_vocabulary(caplog):
    b, sent = fake_backend(3)
    with caplog.at_level(logging.INFO, logger="wobble.backends.llamacpp"):
        got = b.next_token_logprobs(["Answer:", "Answer again:"], ["A", "Z"])
    assert got == [{"A": -0.1, "Z": -6.0}] * 2  # Z's value from the second answer
    assert asked(sent) == [3, 7, 3, 7] and all(s["endpoint"] == "completions" for s in sent)
    assert (b.scored_prompts, b.full_vocab_prompts) == (2, 2)
    assert "2 of 2 prompts asked again for the whole vocabulary (7 tokens)" in caplog.text


def test_a_prefix_match_is_trusted_only_where_the_vocabulary_has_no_longer_prefix():
    """'Yesterday' matches 'Ye' in the top 4, but the vocabulary's longest prefix of it is 'Yes' (outside): the
    whole vocabulary's value is -9, not -4. 'Yeah' has no longer prefix than 'Ye' and is settled by the top 4
    once the vocabulary is known (from the first whole-vocabulary answer)."""
    b, sent = fake_backend(4)
    chat = [[{"role": "user", "content": "Say it"}]]
    assert b.next_token_logprobs(chat, ["Yesterday"]) == [{"Yesterday": -9.0}]
    assert asked(sent) == [4, 7]
    assert b.next_token_logprobs(chat, ["Yeah"]) == [{"Yeah": -4.0}]
    assert asked(sent) == [4, 7, 4]  # settled by the top 4
    assert b.next_token_logprobs(chat, ["Yesterday", "A"]) == [{"Yesterday": -9.0, "A": -0.1}]
    assert asked(sent) == [4, 7, 4, 4, 7] and b.full_vocab_prompts == 2
    # the same values as asking for the whole vocabulary every time
    full, full_sent = fake_backend(len(VOCAB))
    for cands in (["Yesterday"], ["Yeah"], ["A", "Z", " A", "Yes"]):
        assert full.next_token_logprobs(chat, cands) == b.next_token_logprobs(chat, cands)
    assert set(asked(full_sent)) == {7} and full.full_vocab_prompts == 0


def test_resolve_in_top_without_the_vocabulary_trusts_exact_matches_only():
    top = {"A": -0.1, "Ye": -4.0}
    assert resolve_in_top(["A"], top, None) == {"A": -0.1}
    assert resolve_in_top(["A", "Yeah"], top, None) is None
    assert resolve_in_top(["Yeah"], top, frozenset(VOCAB)) == {"Yeah": -4.0}
    assert resolve_in_top(["Yesterday"], top, frozenset(VOCAB)) is None
    assert resolve_in_top(["Q"], top, frozenset(VOCAB)) is None  # no token at all: the whole vocabulary says so


def test_a_candidate_matching_no_token_of_the_vocabulary_is_an_error():
    b, _ = fake_backend(2)
    with pytest.raises(WobbleError, match=r"prompt 0: candidate\(s\) \['Q'\] match no token of the vocabulary"):
        b.next_token_logprobs(["Answer:"], ["A", "Q"])
