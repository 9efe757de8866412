"""first_token prompts and inference: the seeded question sample and its prompt records, then the first-token
and text answers on a fake backend and on a tiny model (one call or two, resumed, reused at a sweep
temperature)."""

from __future__ import annotations

import math

import pytest

from first_token_fakes import Q1, Q2, Q3, FakeBackend
from wobble.errors import DataError
from wobble.io import read_jsonl
from wobble.studies.first_token import answers, sampling
from wobble.studies.first_token.prompts import GENERAL_INSTRUCTIONS, REFUSED, letter_to_option


# ---------------------------------------------------------------------------------------------- prompts


def test_sample_questions_is_seeded_and_keeps_file_order():
    qs = [dict(Q1, uid=f"u{i}") for i in range(20)]
    a = sampling.sample_questions(qs, 5, seed=0)
    assert a == sampling.sample_questions(qs, 5, seed=0)
    assert len(a) == 5 and [q["uid"] for q in a] == sorted((q["uid"] for q in a), key=lambda u: int(u[1:]))
    assert sampling.sample_questions(qs, 5, seed=1) != a
    assert sampling.sample_questions(qs, None, seed=0) == qs and sampling.sample_questions(qs, 50, seed=0) == qs
    # a larger sample contains the smaller one (ranks, not a reshuffle)
    assert {q["uid"] for q in a} <= {q["uid"] for q in sampling.sample_questions(qs, 8, seed=0)}


@pytest.mark.parametrize("bad,expect", [
    (dict(Q1, options=["A lot", "A little"]), "Refused"),
    (dict(Q1, options="A lot"), "options"),
    (dict(Q1, question=""), "question"),
    (dict(Q1, options=["x", "x", "Refused"]), "distinct"),
])
def test_sample_questions_rejects_bad_records(bad, expect):
    with pytest.raises(DataError, match=expect) as e:
        sampling.sample_questions([Q2, bad], None, 0, "opinionqa_414.jsonl")
    assert "opinionqa_414.jsonl" in str(e.value) and "line 2" in str(e.value)
    with pytest.raises(DataError, match="unique"):
        sampling.sample_questions([Q1, Q1], None, 0)


def test_build_prompts_records():
    recs = sampling.build_prompts([Q1, Q2], ["medium", "example_abc"], n_shuffles=3, seed=7)
    assert len(recs) == 2 * 2 * 3
    assert len({r["uid"] for r in recs}) == len(recs)
    assert recs[0]["uid"] == "W1/Q1/0|medium|0" and recs[-1]["uid"] == "W1/Q2/1|example_abc|2"
    for r in recs:
        q = Q1 if r["question_uid"] == Q1["uid"] else Q2
        assert sorted(r["shown_options"]) == sorted(q["options"])
        assert r["shown_options"] == [q["options"][i] for i in r["permutation"]]
        assert letter_to_option(r["letters"], r["shown_options"], r["refusal_letter"]) == REFUSED
        text = r["messages"][0]["content"]
        assert r["messages"][0]["role"] == "user" and text.startswith(GENERAL_INSTRUCTIONS[r["constraint"]])
        for lt, opt in zip(r["letters"], r["shown_options"]):
            assert f"\n{lt}. {opt} \n" in text
    # the same shuffle shows the same option order under every constraint level
    by = {(r["question_uid"], r["shuffle"], r["constraint"]): r["shown_options"] for r in recs}
    assert all(by[(q, s, "medium")] == by[(q, s, "example_abc")] for q in (Q1["uid"], Q2["uid"]) for s in range(3))
    assert sampling.build_prompts([Q1, Q2], ["medium", "example_abc"], 3, 7) == recs


# ---------------------------------------------------------------------------------------------- inference


def test_first_token_fields_only_shown_letters_compete():
    f = answers.first_token_fields(["A", "B"], ["Yes", "Refused"], {"A": -2.0, "B": -0.5, "C": -0.1})
    assert f == {"first_token_logprobs": {"A": -2.0, "B": -0.5}, "first_token_letter": "B",
                 "first_token_option": "Refused", "first_token_candidates": ["A", "B"]}


class FakeTokenizing(FakeBackend):
    """Like a SentencePiece vocabulary: "A" and " A" are two tokens; " Z" starts with a shared "▁"."""

    def encode_continuation(self, text):
        if text.startswith(" ") and text.strip() == "Z":
            return [0, 99]
        return [ord(text.strip()) + (1000 if text.startswith(" ") else 0)]


def test_letter_variants_and_their_summed_probability():
    assert answers.letter_variants(FakeBackend(), ["A", "B"]) == {"A": ["A"], "B": ["B"]}  # no tokenizer: bare letters
    assert answers.letter_variants(FakeTokenizing(), ["A", "B"]) == {"A": ["A", " A"], "B": ["B", " B"]}
    # " Z" is two tokens, but its first one still differs from " A"'s: the prefix stays usable
    assert answers.letter_variants(FakeTokenizing(), ["A", "Z"]) == {"A": ["A", " A"], "Z": ["Z", " Z"]}

    class SharedSpace(FakeTokenizing):  # ByT5-like: " X" starts with the space byte for every letter
        def encode_continuation(self, text):
            return [32, ord(text[1])] if text.startswith(" ") else [ord(text)]

    assert answers.letter_variants(SharedSpace(), ["A", "B"]) == {"A": ["A"], "B": ["B"]}
    # P(A) = e^-3 + e^-1 beats P(B) = e^-2 + e^-2.5 although "B" alone beats "A" alone
    lp = {"A": -3.0, " A": -1.0, "B": -2.0, " B": -2.5}
    f = answers.first_token_fields(["A", "B"], ["Yes", "Refused"], lp, {"A": ["A", " A"], "B": ["B", " B"]})
    assert f["first_token_letter"] == "A" and f["first_token_candidates"] == [" A", " B", "A", "B"]
    assert f["first_token_logprobs"]["A"] == pytest.approx(math.log(math.exp(-3) + math.exp(-1)))
    be = FakeTokenizing()
    answers.first_token_answers(be, sampling.build_prompts([Q2], ["low"], 1, 0))
    assert be.calls[0][2] == (" A", " B", " C", "A", "B", "C")


def test_infer_two_calls_and_reuse(tmp_path):
    prompts = sampling.build_prompts([Q1, Q2], ["medium"], n_shuffles=2, seed=0)
    be = FakeBackend()
    out = tmp_path / "t0.00.jsonl"
    assert answers.infer(be, prompts, out, temperature=0.0, max_new_tokens=5) == 4
    assert [c[0] for c in be.calls] == ["next_token_logprobs", "generate"]
    assert be.calls[0][2] == ("A", "B", "C", "D")  # every letter shown anywhere, one call
    preds = read_jsonl(out)
    for p, r in zip(preds, prompts):
        assert p["uid"] == r["uid"] and p["messages"] == r["messages"] and p["output"] == "C. answer"
        assert p["first_token_letter"] == "C"
        assert set(p["first_token_logprobs"]) == set(r["letters"])
        assert p["first_token_option"] == letter_to_option(r["letters"], r["shown_options"], "C")
        assert p["gen_params"]["temperature"] == 0.0 and p["gen_params"]["max_new_tokens"] == 5
        assert p["model"] == "fake"
    # a sweep temperature copies the first-token answers (no next_token_logprobs call)
    be2 = FakeBackend("B")
    answers.infer(be2, prompts, tmp_path / "t1.00.jsonl", temperature=1.0, max_new_tokens=5, reuse=preds)
    assert [c[0] for c in be2.calls] == ["generate"] and be2.calls[0][2] == 1.0
    hot = read_jsonl(tmp_path / "t1.00.jsonl")
    assert [h["first_token_logprobs"] for h in hot] == [p["first_token_logprobs"] for p in preds]
    with pytest.raises(DataError, match="same messages"):
        answers.infer(FakeBackend(), sampling.build_prompts([Q1], ["high"], 1, 0), tmp_path / "x.jsonl", temperature=1.0,
                max_new_tokens=2, reuse=preds)


def test_infer_resumes_from_partial(tmp_path):
    prompts = sampling.build_prompts([Q1], ["medium"], n_shuffles=3, seed=0)
    out = tmp_path / "p.jsonl"
    answers.infer(FakeBackend(), prompts[:1], out, temperature=0.0, max_new_tokens=2)
    out.rename(str(out) + ".partial")  # as if killed after the first chunk
    be = FakeBackend()
    answers.infer(be, prompts, out, temperature=0.0, max_new_tokens=2)
    assert be.calls[0] == ("next_token_logprobs", 2, ("A", "B", "C", "D"))
    assert [p["uid"] for p in read_jsonl(out)] == [p["uid"] for p in prompts]


def test_first_token_on_tiny_model_equals_explicit_forward_pass():
    import torch

    from wobble.backends.hf import HFBackend
    from wobble.models.tiny import build_tiny

    model, tok = build_tiny("causal", seed=0, chat_template=True)
    be = HFBackend(model, tok, "causal", "tiny", batch_size=3, progress=False)
    prompts = sampling.build_prompts([Q1, Q2, Q3], ["high", "example"], n_shuffles=2, seed=1)
    got = answers.first_token_answers(be, prompts)
    for p in prompts:
        text = tok.apply_chat_template(p["messages"], add_generation_prompt=True, tokenize=False)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1].float()
        lp = torch.log_softmax(logits, -1)
        scores = {lt: lp[tok(lt, add_special_tokens=False)["input_ids"][0]].item() for lt in p["letters"]}
        best = max(p["letters"], key=lambda lt: (scores[lt], -ord(lt)))
        assert got[p["uid"]]["first_token_letter"] == best
        assert all(abs(got[p["uid"]]["first_token_logprobs"][lt] - scores[lt]) < 1e-4 for lt in p["letters"])


def test_infer_one_call_equals_two_calls_on_tiny_model(tmp_path):
    """The hf backend's one-call path gives the two-call path's first-token and text answers."""
    from wobble.backends.hf import HFBackend
    from wobble.models.tiny import build_tiny

    model, tok = build_tiny("causal", seed=3, chat_template=True)
    be = HFBackend(model, tok, "causal", "tiny", batch_size=3, progress=False)
    prompts = sampling.build_prompts([Q1, Q2, Q3], ["medium", "example_abc"], n_shuffles=2, seed=0)
    calls = []
    be_ntl = be.next_token_logprobs
    be.next_token_logprobs = lambda *a: calls.append("next_token_logprobs") or be_ntl(*a)
    answers.infer(be, prompts, tmp_path / "one.jsonl", temperature=0.0, max_new_tokens=4)
    assert calls == []  # no separate next-token call
    one = read_jsonl(tmp_path / "one.jsonl")
    two_calls = answers.first_token_answers(be, prompts)
    for o in one:
        t = two_calls[o["uid"]]
        assert o["first_token_letter"] == t["first_token_letter"]
        assert o["first_token_candidates"] == t["first_token_candidates"]
        assert all(abs(o["first_token_logprobs"][lt] - v) < 1e-4 for lt, v in t["first_token_logprobs"].items())
        assert set(o["first_token_candidates"]) <= set(o["gen_params"]["first_token_candidates"])
    be.supports_first_token_logprobs = False  # the two-call path: same generate batches, same texts
    answers.infer(be, prompts, tmp_path / "two.jsonl", temperature=0.0, max_new_tokens=4)
    assert calls == ["next_token_logprobs", "next_token_logprobs"]
    two = read_jsonl(tmp_path / "two.jsonl")
    assert [o["output"] for o in one] == [t["output"] for t in two]
    assert [o["first_token_letter"] for o in one] == [t["first_token_letter"] for t in two]


def test_contiguous_lm_head_keeps_logits_and_first_token_answers():
    import torch

    from wobble.backends.hf import HFBackend
    from wobble.backends.hf_head import contiguous_lm_head
    from wobble.models.tiny import build_tiny

    model, tok = build_tiny("causal", seed=2, chat_template=True)
    model.requires_grad_(False)  # as a merged LoRA model comes out of load_model
    be = HFBackend(model, tok, "causal", "tiny", batch_size=4, progress=False)
    model.get_output_embeddings()._forward_pre_hooks.clear()  # undo HFBackend's hook: "before" is the bare model
    model._wobble_contiguous_head = False
    prompts = sampling.build_prompts([Q1, Q2], ["low"], n_shuffles=2, seed=0)
    before = answers.first_token_answers(be, prompts)
    x = torch.randint(0, 200, (3, 9))
    with torch.inference_mode():
        ref = model(input_ids=x, logits_to_keep=1).logits
    contiguous_lm_head(model)
    contiguous_lm_head(model)  # idempotent: one hook
    assert len(model.get_output_embeddings()._forward_pre_hooks) == 1
    with torch.inference_mode():
        assert torch.allclose(model(input_ids=x, logits_to_keep=1).logits, ref, atol=1e-6, rtol=0)
    after = answers.first_token_answers(be, prompts)
    assert [a["first_token_letter"] for a in after.values()] == [b["first_token_letter"] for b in before.values()]
    assert all(abs(after[u]["first_token_logprobs"][lt] - v) < 1e-5
               for u, b in before.items() for lt, v in b["first_token_logprobs"].items())
    contiguous_lm_head(None)  # no hf model: nothing to do
