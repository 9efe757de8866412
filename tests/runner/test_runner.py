"""wobble.runner: every call type (generation, next-token scoring, continuation scoring, multi-turn
dialogues) killed mid-way and resumed gives the records of an uninterrupted run, and never asks the
backend again for what was finished. A scripted backend makes the expected values hand-computable;
a tiny random hf model checks the same on a real backend."""

from __future__ import annotations

import json
import math

import pytest

from wobble.backends.base import Generation, GenParams, render_prompt
from wobble.errors import DataError, WobbleError
from wobble.io import read_jsonl
from wobble.runner import (finish_partial, finished_uids, generate_resumable, partial_path, run_dialogues_resumable,
                           score_continuations_resumable, score_next_token_resumable)
from wobble.runner.partial import load_partial


class Killed(RuntimeError):
    pass


class Scripted:
    """A backend whose answers are simple functions of the prompt; raises Killed at call ``kill_at``."""

    model_key = "scripted"
    supports_first_token_logprobs = False

    def __init__(self, kill_at: int | None = None):
        self.kill_at, self.calls = kill_at, []

    def _call(self, method, prompts, extra=None):
        self.calls.append((method, [render_prompt(self, p) for p in prompts], extra))
        if self.kill_at is not None and len(self.calls) == self.kill_at:
            raise Killed(f"killed at call {self.kill_at}")

    def generate(self, prompts, params):
        self._call("generate", prompts)
        out = []
        for p in prompts:
            text = render_prompt(self, p)
            last = p[-1]["content"] if isinstance(p, list) else p
            out.append(Generation(text=f"{len(p) if isinstance(p, list) else 0}:{last[::-1]}", rendered_prompt=text,
                                  finish_reason="stop"))
        return out

    def next_token_logprobs(self, prompts, candidates):
        self._call("next", prompts, list(candidates))
        # log-prob = -(len(prompt) + len(candidate)) / 10; candidate "never" is outside the top-k: -inf
        return [{c: (-math.inf if c == "never" else -(len(p) + len(c)) / 10) for c in candidates} for p in prompts]

    def continuation_logprobs(self, prompts, continuations):
        self._call("cont", prompts, list(continuations))
        return [[-float(len(p))] + [-0.5] * (len(c) - 1) if c else [] for p, c in zip(prompts, continuations)]


RECORDS = [{"uid": f"r{i}", "prompt": "x" * n} for i, n in enumerate([3, 7, 1, 5, 2])]


def run_killed_then_resumed(run, out, kill_at):
    """Run once with a backend killed at call ``kill_at``, then again to the end; return both backends."""
    first = Scripted(kill_at=kill_at)
    with pytest.raises(Killed):
        run(first, out)
    assert partial_path(out).exists() and not out.exists()
    second = Scripted()
    run(second, out)
    assert not partial_path(out).exists()
    return first, second


# ------------------------------------------------------------------------------------------- partial

def test_partial_cut_last_line_is_dropped_and_truncated(tmp_path):
    out = tmp_path / "pred.jsonl"
    good = json.dumps({"uid": "a", "v": 1}) + "\n" + json.dumps({"uid": "b", "v": 2}) + "\n"
    partial_path(out).write_text(good + '{"uid": "c", "v"')
    assert finished_uids(out) == {"a", "b"}
    assert partial_path(out).read_text() == good  # the cut line is gone: the next append starts a fresh line


def test_partial_keeps_the_last_state_per_uid(tmp_path):
    out = tmp_path / "d.jsonl"
    partial_path(out).write_text('{"uid": "a", "t": 1}\n{"uid": "a", "t": 2}\n')
    assert load_partial(out) == {"a": {"uid": "a", "t": 2}}


def test_duplicate_or_missing_uid_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="r1.*unique 'uid'"):
        generate_resumable(Scripted(), [RECORDS[1], RECORDS[1]], GenParams(), tmp_path / "o.jsonl")
    with pytest.raises(DataError, match="input record 0.*'uid'"):
        generate_resumable(Scripted(), [{"prompt": "p"}], GenParams(), tmp_path / "o.jsonl")


# ------------------------------------------------------------------------------------------ generate

def run_generate(backend, out):
    return generate_resumable(backend, RECORDS, GenParams(max_new_tokens=4), out, chunk_size=2)


def test_generate_longest_first_in_chunks_output_in_input_order(tmp_path):
    b = Scripted()
    assert run_generate(b, tmp_path / "o.jsonl") == 5
    assert [c[1] for c in b.calls] == [["xxxxxxx", "xxxxx"], ["xxx", "xx"], ["x"]]
    recs = read_jsonl(tmp_path / "o.jsonl")
    assert [r["uid"] for r in recs] == ["r0", "r1", "r2", "r3", "r4"]
    assert recs[1] == {"uid": "r1", "prompt": "xxxxxxx", "rendered_prompt": "xxxxxxx", "output": "0:xxxxxxx",
                       "finish_reason": "stop", "model": "scripted", "gen_params": GenParams(max_new_tokens=4).to_dict()}


def test_generate_killed_and_resumed_equals_uninterrupted(tmp_path):
    run_generate(Scripted(), tmp_path / "full.jsonl")
    first, second = run_killed_then_resumed(run_generate, tmp_path / "o.jsonl", kill_at=2)
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "full.jsonl").read_bytes()
    # chunk 1 (r1, r3) was finished before the kill and is not asked again
    assert [c[1] for c in second.calls] == [["xxx", "xx"], ["x"]]


def test_one_job_with_several_outputs_finishes_them_together(tmp_path, capsys):
    """instructions' inference job: every output stays in its .partial until all are done, so a kill (after
    which Snakemake deletes the job's outputs) loses no finished output; then each is written as usual."""
    outs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    run_generate(Scripted(), tmp_path / "full.jsonl")
    for out in outs:
        n = generate_resumable(Scripted(), RECORDS, GenParams(max_new_tokens=4), out, chunk_size=2, finish_now=False)
        assert n == 5 and not out.exists() and partial_path(out).exists()
    capsys.readouterr()
    again = Scripted()  # the job re-run: nothing left to ask, and its log says it resumed
    generate_resumable(again, RECORDS, GenParams(max_new_tokens=4), outs[0], chunk_size=2, finish_now=False)
    assert again.calls == []
    assert "resuming from a.jsonl.partial: 5 record(s) already finished" in capsys.readouterr().err
    for out in outs:
        assert finish_partial(RECORDS, out) == 5
        assert "resuming" not in capsys.readouterr().err  # reading back its own finished part is no resumption
        assert out.read_bytes() == (tmp_path / "full.jsonl").read_bytes() and not partial_path(out).exists()


def test_finish_partial_refuses_an_unfinished_partial(tmp_path):
    out = tmp_path / "o.jsonl"
    generate_resumable(Scripted(), RECORDS[:3], GenParams(max_new_tokens=4), out, chunk_size=2, finish_now=False)
    with pytest.raises(DataError, match="r3"):
        finish_partial(RECORDS, out)
    assert not out.exists()


# ------------------------------------------------------------------------------------- score: next token

def cands(r):
    return ["1", "0"] if r["uid"] != "r3" else ["yes", "never"]


def run_next(backend, out):
    return score_next_token_resumable(backend, RECORDS, cands, out, chunk_size=2,
                                      annotate=lambda r, lp: {"label": max((v, c) for c, v in lp.items()
                                                                           if v is not None)[1]})


def test_next_token_one_call_per_chunk_with_the_union_of_candidates(tmp_path):
    b = Scripted()
    run_next(b, tmp_path / "s.jsonl")
    assert [(c[0], c[2]) for c in b.calls] == [("next", ["1", "0", "yes", "never"]), ("next", ["1", "0"]),
                                               ("next", ["1", "0"])]
    recs = {r["uid"]: r for r in read_jsonl(tmp_path / "s.jsonl")}
    # r1: prompt of 7 chars, candidates of 1 char: -(7+1)/10
    assert recs["r1"]["next_token_logprobs"] == {"1": -0.8, "0": -0.8}
    assert recs["r1"]["score_params"] == {"method": "next_token_logprobs", "candidates": ["1", "0"]}
    assert recs["r1"]["rendered_prompt"] == "xxxxxxx" and recs["r1"]["model"] == "scripted"
    # r3 keeps only its own candidates; -inf (outside the top-k) is written as null
    assert recs["r3"]["next_token_logprobs"] == {"yes": -0.8, "never": None}
    assert recs["r3"]["label"] == "yes"


def test_next_token_killed_and_resumed_equals_uninterrupted(tmp_path):
    run_next(Scripted(), tmp_path / "full.jsonl")
    _, second = run_killed_then_resumed(run_next, tmp_path / "s.jsonl", kill_at=3)
    assert (tmp_path / "s.jsonl").read_bytes() == (tmp_path / "full.jsonl").read_bytes()
    assert [c[1] for c in second.calls] == [["x"]]


def test_next_token_rejects_empty_candidates(tmp_path):
    with pytest.raises(DataError, match="r0.*non-empty list of strings as candidates"):
        score_next_token_resumable(Scripted(), RECORDS[:1], lambda r: [], tmp_path / "s.jsonl")


# ----------------------------------------------------------------------------------- score: continuations

def conts(r):
    return [" yes", " no"] if r["uid"] != "r2" else [" maybe"]


def run_cont(backend, out):
    return score_continuations_resumable(backend, RECORDS, conts, out, chunk_size=2)


def test_continuations_flattened_into_one_call_per_chunk(tmp_path):
    b = Scripted()
    run_cont(b, tmp_path / "c.jsonl")
    # longest (prompt + longest continuation) first: r1 (7+4), r3 (5+4) | r0 (3+4), r2 (1+6) | r4
    assert [c[1] for c in b.calls] == [["xxxxxxx"] * 2 + ["xxxxx"] * 2, ["xxx"] * 2 + ["x"], ["xx"] * 2]
    recs = {r["uid"]: r for r in read_jsonl(tmp_path / "c.jsonl")}
    assert recs["r0"]["continuation_logprobs"] == [[-3.0, -0.5, -0.5, -0.5], [-3.0, -0.5, -0.5]]
    assert recs["r2"]["continuation_logprobs"] == [[-1.0, -0.5, -0.5, -0.5, -0.5, -0.5]]
    assert recs["r2"]["score_params"] == {"method": "continuation_logprobs", "continuations": [" maybe"]}


def test_continuations_killed_and_resumed_equals_uninterrupted(tmp_path):
    run_cont(Scripted(), tmp_path / "full.jsonl")
    _, second = run_killed_then_resumed(run_cont, tmp_path / "c.jsonl", kill_at=2)
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "full.jsonl").read_bytes()
    assert len(second.calls) == 2


# ------------------------------------------------------------------------------------------- dialogues

CHALLENGES = ["Are you sure?", "I don't agree with you. Think again."]
DIALOGUES = [
    {"uid": "d0", "messages": [{"role": "user", "content": "2+2?"}], "rounds": 2},
    {"uid": "d1", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}],
     "rounds": 2},
    {"uid": "d2", "messages": [{"role": "user", "content": "Stop early"}], "rounds": 0},
]


def next_turn(dialogue, history):
    """Follow-up k after the k-th reply, for ``rounds`` follow-ups."""
    k = sum(m["role"] == "assistant" for m in history)
    return CHALLENGES[k - 1] if k <= dialogue["rounds"] else None


def run_dialogues(backend, out, chunk_size=32):
    return run_dialogues_resumable(backend, DIALOGUES, next_turn, GenParams(max_new_tokens=8), out,
                                   chunk_size=chunk_size,
                                   annotate_turn=lambda d, t: {"chars": len(t["output"])})


def test_dialogue_turns_build_on_the_previous_reply(tmp_path):
    b = Scripted()
    assert run_dialogues(b, tmp_path / "d.jsonl") == 3
    # one generate call per turn: all dialogues at turn k together, longest history first
    assert [len(c[1]) for c in b.calls] == [3, 2, 2]
    d0, d1, d2 = read_jsonl(tmp_path / "d.jsonl")
    assert d0["history"] == [
        {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "1:?2+2"},
        {"role": "user", "content": "Are you sure?"}, {"role": "assistant", "content": "3:?erus uoy erA"},
        {"role": "user", "content": CHALLENGES[1]}, {"role": "assistant", "content": "5:" + CHALLENGES[1][::-1]},
    ]
    assert [t["turn"] for t in d0["turns"]] == [1, 2, 3]
    assert [t["user"] for t in d0["turns"]] == ["2+2?", *CHALLENGES]
    assert d0["turns"][1]["rendered_prompt"] == json.dumps(d0["history"][:3], sort_keys=True, ensure_ascii=False)
    assert d0["turns"][1]["output"] == "3:?erus uoy erA" and d0["turns"][1]["chars"] == 15
    assert d1["history"][0] == {"role": "system", "content": "Be brief."} and len(d1["turns"]) == 3
    assert len(d2["turns"]) == 1 and d2["history"][-1]["role"] == "assistant"
    assert d0["gen_params"] == GenParams(max_new_tokens=8).to_dict() and d0["model"] == "scripted"
    assert d0["messages"] == DIALOGUES[0]["messages"] and d0["rounds"] == 2


@pytest.mark.parametrize("chunk_size, kill_at", [(32, 2), (32, 3), (1, 5)])
def test_dialogue_killed_mid_way_resumes_at_the_turn_where_it_stopped(tmp_path, chunk_size, kill_at):
    full = Scripted()
    run_dialogues(full, tmp_path / "full.jsonl", chunk_size)
    first, second = run_killed_then_resumed(lambda b, o: run_dialogues(b, o, chunk_size), tmp_path / "d.jsonl",
                                            kill_at)
    assert (tmp_path / "d.jsonl").read_bytes() == (tmp_path / "full.jsonl").read_bytes()
    # what finished before the kill is never asked again: the two runs together make exactly the calls
    # of the uninterrupted run (the killed call is redone)
    asked = [p for c in first.calls[:-1] + second.calls for p in c[1]]
    assert sorted(asked) == sorted(p for c in full.calls for p in c[1])


def test_dialogue_max_turns_and_bad_input(tmp_path):
    b = Scripted()
    run_dialogues_resumable(b, DIALOGUES[:1], next_turn, GenParams(), tmp_path / "m.jsonl", max_turns=2)
    assert len(read_jsonl(tmp_path / "m.jsonl")[0]["turns"]) == 2
    bad = [{"uid": "x", "messages": [{"role": "assistant", "content": "hi"}]}]
    with pytest.raises(WobbleError, match="dialogue x: message 0 should be a user message"):
        run_dialogues_resumable(b, bad, next_turn, GenParams(), tmp_path / "b.jsonl")
    clash = [{"uid": "y", "messages": [{"role": "user", "content": "q"}], "turns": []}]
    with pytest.raises(DataError, match="record y: no field named 'turns'"):
        run_dialogues_resumable(b, clash, next_turn, GenParams(), tmp_path / "b.jsonl")


# --------------------------------------------------------------------------------- a real (tiny) backend

@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("torch")
    from wobble.backends.hf import HFBackend
    from wobble.models.tiny import build_tiny

    model, tok = build_tiny("causal", seed=0, chat_template=True)
    return HFBackend(model.float(), tok, "causal", "tiny-causal", batch_size=2, progress=False)


class KillAfter:
    """Delegates to ``backend``; the ``n``-th model call raises Killed."""

    def __init__(self, backend, n):
        self.backend, self.n, self.calls = backend, n, 0
        self.model_key = backend.model_key
        self.render = backend.render

    def __getattr__(self, name):
        method = getattr(self.backend, name)

        def call(*args):
            self.calls += 1
            if self.calls == self.n:
                raise Killed(name)
            return method(*args)
        return call


def test_tiny_model_every_call_type_resumes_to_the_uninterrupted_records(tmp_path, tiny):
    recs = [{"uid": f"t{i}", "prompt": p, "messages": [{"role": "user", "content": p}]}
            for i, p in enumerate(["Label: ", "Is it true? Answer:", "Q: 2+2? A:", "x"])]
    runs = {
        "gen": lambda b, o: generate_resumable(b, recs, GenParams(max_new_tokens=3), o, chunk_size=2,
                                               prompt_of=lambda r: r["messages"]),
        "next": lambda b, o: score_next_token_resumable(b, recs, lambda r: ["1", "0"], o, chunk_size=2),
        "cont": lambda b, o: score_continuations_resumable(b, recs, lambda r: [" yes", " no"], o, chunk_size=2),
        "dia": lambda b, o: run_dialogues_resumable(b, recs, lambda d, h: "Sure?" if len(h) < 4 else None,
                                                    GenParams(max_new_tokens=3), o, chunk_size=2),
    }
    for name, run in runs.items():
        run(tiny, tmp_path / f"{name}-full.jsonl")
        with pytest.raises(Killed):
            run(KillAfter(tiny, 2), tmp_path / f"{name}.jsonl")
        run(tiny, tmp_path / f"{name}.jsonl")
        assert read_jsonl(tmp_path / f"{name}.jsonl") == read_jsonl(tmp_path / f"{name}-full.jsonl"), name
    nxt = read_jsonl(tmp_path / "next.jsonl")
    direct = tiny.next_token_logprobs([r["prompt"] for r in recs], ["1", "0"])
    for rec, lp in zip(nxt, direct):
        assert rec["next_token_logprobs"] == pytest.approx(lp, abs=1e-5)
    dia = read_jsonl(tmp_path / "dia.jsonl")
    assert all(len(d["turns"]) == 2 for d in dia)
    assert dia[0]["turns"][1]["rendered_prompt"] == tiny.render(dia[0]["history"][:3])
    assert dia[0]["turns"][1]["rendered_prompt"].startswith("<user>Label: </user>\n<assistant>")
