"""first_token pipeline: prompt records, inference (fake backend and a tiny model), classifier splits and
evaluation, labelling, metrics with bootstrap intervals, config; and an end-to-end scratch snakemake run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from wobble.backends.base import Generation
from wobble.errors import ConfigError, DataError
from wobble.studies.first_token import aggregate, answers, classifiers, layout, sampling
from wobble.studies.first_token.classify import MULTIPLE, REFUSAL, UNKNOWN
from wobble.stats import bootstrap_ci
from wobble.studies.first_token.metrics import consistency_entropy, mismatch_rate
from wobble.studies.first_token.prompts import GENERAL_INSTRUCTIONS, REFUSED, letter_to_option
from wobble.io import read_jsonl

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "first_token"

Q1 = {"uid": "W1/Q1/0", "qkey": "Q1", "question": "Do you worry?", "options": ["A lot", "A little", "Not at all", "Refused"]}
Q2 = {"uid": "W1/Q2/1", "qkey": "Q2", "question": "Is it good?", "options": ["Good", "Bad", "Refused"]}
Q3 = {"uid": "W2/Q3/2", "qkey": "Q3", "question": "How often?", "options": ["Often", "Never", "Refused"]}


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


class FakeBackend:
    """Scores letter 'C' (or the last letter) highest; answers with a fixed text; records every call."""

    model_key = "fake"

    def __init__(self, text="C. answer"):
        self.text = text
        self.calls = []

    def next_token_logprobs(self, prompts, candidates):
        self.calls.append(("next_token_logprobs", len(prompts), tuple(candidates)))
        return [{c: (-0.1 if c == "C" else -1.0 - 0.1 * i) for i, c in enumerate(candidates)} for _ in prompts]

    def generate(self, prompts, params):
        self.calls.append(("generate", len(prompts), params.temperature))
        return [Generation(text=self.text, rendered_prompt=json.dumps(p)) for p in prompts]


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


# ---------------------------------------------------------------------------------------------- classifiers


def _annotated():
    return classifiers.annotated_items(read_jsonl(FIX / "annotated.jsonl"), "annotated.jsonl")


def test_annotated_items_and_gold():
    items = _annotated()
    assert [i["uid"] for i in items[:2]] == ["llama2-7b/train/0", "llama2-7b/train/1"]
    assert [i["gold"] for i in items] == ["C", "C", MULTIPLE, UNKNOWN, "A", "D", "B", "A"]
    assert items[0]["response"] == "Response 0" and items[0]["letters"] == ["A", "B", "C", "D"]
    with pytest.raises(DataError, match="annotated.jsonl: record line 1: field 'response'"):
        classifiers.annotated_items([{**read_jsonl(FIX / "annotated.jsonl")[0], "response": None}], "annotated.jsonl")


def test_classifier_splits():
    items = _annotated()
    s = classifiers.classifier_splits(items, seed=0, n_shots=2)
    assert [x["uid"] for x in s["test"]] == [i["uid"] for i in items if i["split"] == "test"]
    assert sorted(x["uid"] for x in s["train"]) == sorted(i["uid"] for i in items if i["split"] == "train")
    assert s == classifiers.classifier_splits(items, seed=0, n_shots=2)
    # the shots include a refusal (llama2-7b train, "C. Refused")
    assert len(s["shots"]) == 2 and any(x["gold"] == "C" and x["model"] == "llama2-7b" for x in s["shots"])
    small = classifiers.classifier_splits(items, seed=0, eval_per_model=1, n_shots=0)
    assert [x["model"] for x in small["test"]] == ["llama2-7b", "mixtral"] and small["shots"] == []
    # ambiguous gold never trains the classifier
    many = items + [{**items[2], "split": "train", "uid": "llama2-7b/train/9"}]
    assert all(x["gold"] not in (MULTIPLE, UNKNOWN) for x in classifiers.classifier_splits(many, seed=0)["train"])


def test_selection_split_is_held_out_from_training_shots_and_test():
    """The classifier is chosen on training responses that neither train the PEFT classifier, nor are judge
    shots, nor are the test items it is reported on."""
    items = _annotated()
    items += [{**it, "split": "train", "uid": f"{it['model']}/train/{10 + k}", "row": 10 + k}
              for k, it in enumerate(items * 2)]
    s = classifiers.classifier_splits(items, seed=0, n_shots=2, eval_per_model=3, n_reserved=4)
    reserved = {x["uid"] for x in s["train"][:4]} | {x["uid"] for x in s["shots"]}
    sel = [x["uid"] for x in s["select"]]
    assert sel and not set(sel) & reserved and not set(sel) & {x["uid"] for x in s["test_all"]}
    assert all(x["split"] == "train" for x in s["select"])
    assert {m: sum(x["model"] == m for x in s["select"]) for m in ("llama2-7b", "mixtral")} == {"llama2-7b": 3, "mixtral": 3}
    # every gold kept (as in the test split): multiple/unknown are outcomes the classifier must handle
    assert s["test_all"] == [x for x in items if x["split"] == "test"] and len(s["test"]) <= len(s["test_all"])
    assert s == classifiers.classifier_splits(items, seed=0, n_shots=2, eval_per_model=3, n_reserved=4)


def test_auto_choice_reads_selection_not_test_scores():
    """select_classifier on the selection table; the label rule reads the flag the scores rule wrote."""
    def avg(ev, acc):
        return {"evaluator": ev, "model": "Avg", "accuracy": acc, "macro_f1": acc, "weighted_f1": acc, "n": 10}
    test_table = [avg("paper_regex", 0.9), avg("judge_4shot", 0.5)]
    selection = [avg("paper_regex", 0.4), avg("judge_4shot", 0.7)]
    assert classifiers.select_classifier(test_table, "auto") == "paper_regex"
    chosen = classifiers.select_classifier(selection, "auto")
    assert chosen == "judge_4shot"
    flagged = [{**r, "selected": r["evaluator"] == chosen} for r in test_table]
    assert classifiers.chosen_classifier(flagged) == "judge_4shot"
    with pytest.raises(DataError, match="exactly one evaluator flagged"):
        classifiers.chosen_classifier(test_table)
    # a configured classifier needs no selection scores
    assert classifiers.select_classifier([], "peft_80") == "peft_80"


def test_peft_pairs_nested_and_cut():
    train = classifiers.classifier_splits(_annotated(), seed=3)["train"]
    pairs = classifiers.peft_pairs(train, 3, max_chars=4)
    assert len(pairs) == 3 and classifiers.peft_pairs(train, 2, max_chars=4) == pairs[:2]
    assert pairs[0]["source"].startswith("Classify the response. Resp\nReferences:")
    assert pairs[0]["source"].endswith(" \nAnswer:") and pairs[0]["target"] in "ABCD"
    with pytest.raises(DataError, match="at least 9"):
        classifiers.peft_pairs(train, 9)


def test_classify_texts_each_evaluator():
    items = [{"question": "Q?", "shown_options": ["Yes", "No", "Refused"], "letters": ["A", "B", "C"],
              "response": "I cannot answer that."},
             {"question": "Q?", "shown_options": ["Yes", "No", "Refused"], "letters": ["A", "B", "C"],
              "response": "B. No"}]
    assert [x["label"] for x in classifiers.classify_texts(items, "string_match")] == [REFUSAL, "B"]
    assert [x["label"] for x in classifiers.classify_texts(items, "paper_regex")] == [UNKNOWN, "B"]
    be = FakeBackend(text=" C")
    shots = [{**items[1], "gold": "B", "model": "m"}] * 4
    out = classifiers.classify_texts(items, "judge_4shot", backend=be, shots=shots, max_new_tokens=3)
    assert [x["label"] for x in out] == ["C", "C"] and out[0]["raw_output"] == " C"
    assert be.calls == [("generate", 2, 0.0)]
    out = classifiers.classify_texts(items, "peft_80", backend=FakeBackend(text="Z"), max_chars=5)
    assert [x["label"] for x in out] == [UNKNOWN, UNKNOWN]
    with pytest.raises(DataError, match="4 demonstrations"):
        classifiers.classify_texts(items, "judge_4shot", backend=be, shots=shots[:1])
    with pytest.raises(ValueError):
        classifiers.classify_texts(items, "judge_0shot")


def test_classifier_table_and_selection():
    def item(model, gold, pred):
        return {"model": model, "gold": gold, "pred": pred}

    preds = {
        "string_match": [item("m1", "A", "A"), item("m1", "B", "A"), item("m2", "C", "C"), item("m2", "C", "C")],
        "judge_0shot": [item("m1", "A", "A"), item("m1", "B", "B"), item("m2", "C", "A"), item("m2", "C", "C")],
    }
    table = classifiers.classifier_table(preds)
    assert [(r["evaluator"], r["model"]) for r in table] == [
        ("string_match", "m1"), ("string_match", "m2"), ("string_match", "Avg"),
        ("judge_0shot", "m1"), ("judge_0shot", "m2"), ("judge_0shot", "Avg")]
    sm_avg = table[2]
    # m1: 1/2, m2: 2/2 -> Avg accuracy 0.75; m1 macro-F1: A 2/3, B 0 -> 1/3; m2: 1 -> Avg (1/3 + 1)/2
    assert sm_avg["accuracy"] == pytest.approx(0.75) and sm_avg["n"] == 4
    assert sm_avg["macro_f1"] == pytest.approx((1 / 3 + 1) / 2)
    # tie on accuracy (0.75 both); macro-F1: judge m1 = 1, m2: C 2/3, A 0 -> 1/3 -> Avg 2/3 = string_match's -> cheaper wins
    assert table[5]["accuracy"] == pytest.approx(0.75)
    assert classifiers.select_classifier(table, "auto") == "string_match"
    assert classifiers.select_classifier(table, "judge_0shot") == "judge_0shot"
    better = classifiers.classifier_table({**preds, "peft_8": [item("m1", "A", "A"), item("m1", "B", "B"),
                                                      item("m2", "C", "C"), item("m2", "C", "C")]})
    assert classifiers.select_classifier(better, "auto") == "peft_8"
    with pytest.raises(DataError):
        classifiers.select_classifier(table, "peft_80")


def test_label_predictions_maps_to_original_options():
    preds = sampling.build_prompts([Q1], ["medium"], n_shuffles=2, seed=0)
    for p in preds:
        p["output"] = "[INST] x [/INST] I cannot."
    labels = [{"label": REFUSAL, "raw_output": None}, {"label": MULTIPLE, "raw_output": "AB"}]
    out = classifiers.label_predictions(preds, "string_match", labels)
    assert out[0]["text_option"] == REFUSED and out[0]["text_letter"] == preds[0]["refusal_letter"]
    assert out[0]["response"] == "I cannot." and out[0]["output"].startswith("[INST]")
    assert out[1]["text_option"] is None and out[1]["text_letter"] is None and out[1]["text_label"] == MULTIPLE
    letter = preds[1]["letters"][1]
    out = classifiers.label_predictions(preds[1:], "judge_0shot", [{"label": letter, "raw_output": letter}])
    assert out[0]["text_option"] == preds[1]["shown_options"][1] and out[0]["classifier"] == "judge_0shot"


# ---------------------------------------------------------------------------------------------- metrics


def _rec(q, shuffle, ft, tx, *, ft_letter="A", tx_letter="A", constraint="medium", t=0.0, response="A",
         finish="stop"):
    return {"model": "m", "constraint": constraint, "question_uid": q, "shuffle": shuffle,
            "gen_params": {"temperature": t}, "letters": ["A", "B", "C"], "first_token_option": ft,
            "text_option": tx, "first_token_letter": ft_letter, "text_letter": tx_letter, "response": response,
            "classifier": "string_match", "finish_reason": finish,
            "first_token_logprobs": {"A": math.log(0.5), "B": math.log(0.25), "C": math.log(0.125)}}


def _fixture_records():
    """Two questions x 4 shuffles (hand-computed below)."""
    return [
        # q1: first token x,x,y,y ; text x,x,x,Refused
        _rec("q1", 0, "x", "x", ft_letter="A", tx_letter="A"),
        _rec("q1", 1, "x", "x", ft_letter="C", tx_letter="C", response="Sure"),
        _rec("q1", 2, "y", "x", ft_letter="B", tx_letter="A"),
        _rec("q1", 3, "y", "Refused", ft_letter="C", tx_letter="B", response="I cannot"),
        # q2: first token z x4 ; text z, None, z, z
        _rec("q2", 0, "z", "z", ft_letter="C", tx_letter="C", response="C"),
        _rec("q2", 1, "z", None, ft_letter="C", tx_letter=None, response="B or C", finish="length"),
        _rec("q2", 2, "z", "z", ft_letter="C", tx_letter="C", response="C."),
        _rec("q2", 3, "Refused", "z", ft_letter="A", tx_letter="C", response="C"),
    ]


def test_cell_metrics_hand_computed():
    rows = {r["metric"]: r for r in aggregate.cell_metrics(_fixture_records(), n_boot=200, seed=0)}
    assert set(rows) == set(aggregate.METRICS)
    # mismatches: q1 shuffles 2, 3; q2 shuffles 1 (None), 3 -> 4/8
    assert rows["mismatch_rate"]["value"] == pytest.approx(0.5)
    # refusal part: text refuses, first token not: q1 s3 -> 1/8
    assert rows["refusal_mismatch_rate"]["value"] == pytest.approx(0.125)
    assert rows["refusal_rate_text"]["value"] == pytest.approx(0.125)
    assert rows["refusal_rate_first_token"]["value"] == pytest.approx(0.125)
    assert rows["unmapped_rate"]["value"] == pytest.approx(0.125)
    # the third part of the mismatch: the text names another (non-refusal) option: q1 s2 (y/x), q2 s3 (Refused/z)
    assert rows["different_option_rate"]["value"] == pytest.approx(0.25)
    assert sum(rows[m]["value"] for m in ("refusal_mismatch_rate", "unmapped_rate", "different_option_rate")) \
        == pytest.approx(rows["mismatch_rate"]["value"])
    assert rows["letter_mass"]["value"] == pytest.approx(0.875)  # 0.5 + 0.25 + 0.125 on every prompt
    assert rows["top_letter_share"]["value"] == pytest.approx(5 / 8)  # first-token letter C on 5 of 8 prompts
    assert rows["cut_rate"]["value"] == pytest.approx(1 / 8)  # q2 s1 ran into max_new_tokens
    # entropy first token: q1 {x:2, y:2} = ln 2; q2 {z:3, Refused:1} = -(.75 ln .75 + .25 ln .25) = 0.562335
    assert rows["entropy_first_token"]["value"] == pytest.approx((math.log(2) + 0.562335) / 2, abs=1e-6)
    # entropy text: q1 {x:3, Refused:1} = 0.562335; q2 {z:3} (None dropped) = 0
    assert rows["entropy_text"]["value"] == pytest.approx(0.562335 / 2, abs=1e-6)
    # no option as an outcome: q2 {z:3, None:1} = 0.562335 too
    assert rows["entropy_text_none"]["value"] == pytest.approx(0.562335, abs=1e-6)
    r = rows["mismatch_rate"]
    assert (r["n_prompts"], r["n_questions"], r["classifier"], r["temperature"]) == (8, 2, "string_match", 0.0)
    assert (r["n_text_mapped"], r["n_questions_mapped"]) == (7, 2)  # q2 s1 names no option
    assert r["ci_low"] <= r["value"] <= r["ci_high"]


def test_cluster_bootstrap_equals_bootstrap_ci_over_questions():
    recs = _fixture_records() + [_rec("q3", s, "x", "y" if s % 2 else "x") for s in range(4)]
    groups = {}
    for r in recs:
        groups.setdefault(r["question_uid"], []).append(r)
    qs = [groups[k] for k in sorted(groups)]
    rows = {r["metric"]: r for r in aggregate.cell_metrics(recs, n_boot=300, seed=5)}
    pooled = lambda gs: mismatch_rate([(r["first_token_option"], r["text_option"]) for g in gs for r in g])  # noqa: E731
    assert (rows["mismatch_rate"]["ci_low"], rows["mismatch_rate"]["ci_high"]) == \
        pytest.approx(bootstrap_ci(qs, pooled, n=300, seed=5))
    ent = lambda gs: consistency_entropy([[r["text_option"] for r in g] for g in gs])  # noqa: E731
    assert (rows["entropy_text"]["ci_low"], rows["entropy_text"]["ci_high"]) == \
        pytest.approx(bootstrap_ci(qs, ent, n=300, seed=5))


def test_choice_rows_hand_computed():
    rows = aggregate.choice_rows(_fixture_records(), n_boot=100, seed=0)
    ft = {r["letter"]: r for r in rows if r["answer_by"] == "first_token"}
    tx = {r["letter"]: r for r in rows if r["answer_by"] == "text"}
    # first-token letters A, C, B, C, C, C, C, A -> A 2/8, B 1/8, C 5/8
    assert {k: v["share"] for k, v in ft.items()} == {"A": 0.25, "B": 0.125, "C": 0.625}
    # text letters A, C, A, B, C, None, C, C -> A 2/8, B 1/8, C 4/8, none 1/8
    assert {k: v["share"] for k, v in tx.items()} == {"A": 0.25, "B": 0.125, "C": 0.5, "none": 0.125}
    assert tx["C"]["count"] == 4 and tx["C"]["n_prompts"] == 8 and tx["C"]["ci_low"] <= 0.5 <= tx["C"]["ci_high"]


def test_mapping_rows_per_shuffle():
    rows = aggregate.mapping_rows(_fixture_records())
    assert [r["shuffle"] for r in rows] == [0, 1, 2, 3]
    s1 = rows[1]  # q1: ft x (letter C), text x, response "Sure"; q2: text None -> mismatch, "B or C" not C
    assert (s1["total"], s1["total_mis"], s1["total_first_token_mismatch"], s1["same_but_not_first"]) == (2, 1, 2, 1)
    s3 = rows[3]  # q1 refuses in text; q2: ft Refused (A) vs text z
    assert (s3["total_refuse"], s3["total_mis"]) == (1, 2)


# ---------------------------------------------------------------------------------------------- config


def _section(**section):
    """A first_token section validated against the schema fragment (defaults filled) in the smoke config."""
    from wobble.config import validate_config

    repo = Path(__file__).resolve().parents[3]
    cfg = yaml.safe_load((repo / "configs" / "smoke.yaml").read_text())
    cfg["models"].update({k: {"source": "tiny", "kind": "causal"} for k in ("m", "a", "b", "j", "c")})
    cfg["first_token"] = section
    return validate_config(cfg, repo / "schemas" / "config.schema.yaml")["first_token"]


def test_schema_defaults_and_cross_field_checks():
    cfg = _section(models=["m"])
    assert cfg["n_shuffles"] == 10 and cfg["constraints"] == ["low", "medium", "high", "example", "example_abc"]
    assert layout.evaluator_names(cfg) == ["paper_regex", "string_match"]
    layout.check_section(cfg)  # the schema's defaults make a section the pipeline accepts
    cfg = _section(models=["m"], judge_model="j", classifier_base="c", judge_shots=[4, 0], peft_train_sizes=[1000, 80],
                   peft={"max_steps": 3}, classifier="peft_80")
    assert layout.evaluator_names(cfg) == ["paper_regex", "string_match", "judge_0shot", "judge_4shot", "peft_80", "peft_1000"]
    assert cfg["peft"]["max_steps"] == 3 and cfg["peft"]["lora_r"] == 8  # nested default from the schema
    for bad, key in [({"classifier": "peft_80"}, "classifier"), ({"temperatures": [0.7, 0.701]}, "temperatures"),
                     ({"temperatures": [0.001, 0.7]}, "the main one \\(first_token.temperature 0.0\\) is not listed"),
                     ({"sweep_constraints": ["high"], "constraints": ["low"]}, "sweep_constraints")]:
        with pytest.raises(ConfigError, match=key):
            layout.check_section(_section(models=["m"], **bad))
    for bad, key in [({"constraints": ["extreme"]}, "constraints"), ({"paper_models": {"m": "gpt-4"}}, "paper_models"),
                     ({"colour": 1}, "colour")]:
        with pytest.raises(ConfigError, match=key):
            _section(models=["m"], **bad)


def test_paths_inputs_and_targets():
    from wobble.studies.first_token.spec import SPEC

    cfg = _section(models=["a", "b"], temperatures=[0.7], judge_model="j", judge_shots=[0], classifier_base="c",
                   peft_train_sizes=[80])
    assert layout.runs(cfg) == [("a", "0.00"), ("a", "0.70"), ("b", "0.00"), ("b", "0.70")]
    assert layout.run_constraints(cfg, "0.70") == ["medium"] and len(layout.run_constraints(cfg, "0.00")) == 5
    md = lambda k: f"resources/models/{k}"  # noqa: E731
    root = "results/first_token"
    assert "reuse" not in layout.infer_inputs(cfg, root, "a", "0.00", md)
    assert layout.infer_inputs(cfg, root, "a", "0.70", md)["reuse"] == "results/first_token/predictions/a/t0.00.jsonl"
    inputs = layout.label_inputs(cfg, root, "a", "0.00", md)
    assert inputs["judge_judge_0shot"] == "resources/models/j"
    assert inputs["classifier_peft_80"] == "results/first_token/finetune/classifier_peft_80"
    only_sm = layout.label_inputs({**cfg, "classifier": "string_match"}, root, "a", "0.00", md)
    assert set(only_sm) == {"predictions", "scores"}
    config = {"first_token": cfg, "results_root": "results"}
    targets = SPEC.targets(config)
    assert "results/first_token/tables/table5.md" in targets and "results/first_token/figures/figure7.png" in targets
    assert "results/first_token/findings.md" in targets
    ri = SPEC.output("figure2").inputs(config)
    assert ri["paper_mapping"] == "resources/prepared/opinionqa_paper_mapping.jsonl" and "metrics" in ri
    assert ri["metrics"] == "results/first_token/scores/metrics.jsonl"
    reference = {"first_token": cfg, "results_root": "results/reference"}
    targets = SPEC.targets(reference)
    assert "results/reference/first_token/tables/table5.md" in targets
    assert "results/reference/first_token/findings.md" in targets
    assert SPEC.output("figure2").inputs(reference)["metrics"] == "results/reference/first_token/scores/metrics.jsonl"


# ---------------------------------------------------------------------------------------------- end to end


@pytest.mark.e2e
def test_end_to_end_smoke_run(smoke_run):
    """The first_token rules on configs/smoke.yaml's tiny models, in the session's smoke run (a scratch copy of
    the workflow that ran every study; one smoke-scale run fewer than a first_token-only copy)."""
    from conftest import run_snakemake

    run = smoke_run
    section = yaml.safe_load((run / "run.yaml").read_text())["first_token"]
    from wobble.studies.first_token.spec import SPEC

    targets = [t for t in SPEC.targets({"first_token": section}) if "findings" not in t]
    ft = run / "results" / "first_token"
    for t in targets:
        assert (run / t).is_file(), t
    preds = read_jsonl(ft / "predictions" / "tiny-causal" / "t0.00.jsonl")
    cfg = _section(**section)
    assert len(preds) == cfg["n_questions"] * len(cfg["constraints"]) * cfg["n_shuffles"]
    assert all(p["first_token_letter"] in p["letters"] and isinstance(p["output"], str) for p in preds)
    labeled = read_jsonl(ft / "scores" / "labeled" / "tiny-t5" / f"t{layout.temp_tag(cfg['temperatures'][-1])}.jsonl")
    assert {r["constraint"] for r in labeled} == set(cfg["sweep_constraints"])
    assert all("output" in r and "text_label" in r for r in labeled)
    scores = read_jsonl(ft / "scores" / "classifiers.jsonl")
    assert sum(r["selected"] for r in scores if r["model"] == "Avg") == 1
    assert "Ours: model(s) tiny-causal" in (ft / "tables" / "table3.md").read_text()
    assert (run / "logs" / "first_token" / "prompts.log").is_file()
    assert (run / "results" / "benchmarks" / "first_token" / "prompts.tsv").is_file()
    # same inputs -> byte-identical outputs: re-run the metrics and every table/figure
    before = {p: p.read_bytes() for p in [*(ft / "scores").glob("*.jsonl"), *(ft / "tables").glob("*"),
                                          *(ft / "figures").glob("*")] if not p.name.endswith(".prov.json")}
    proc = run_snakemake(run, *targets, "--forcerun", "first_token_metrics", "render_table", "render_figure")
    assert proc.returncode == 0, proc.stderr[-3000:]
    changed = [p.name for p, b in before.items() if p.read_bytes() != b]
    assert not changed, changed
