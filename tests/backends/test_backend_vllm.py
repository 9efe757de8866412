"""VLLMBackend's mapping to and from vLLM's offline engine, with a fake ``vllm`` module (vLLM is not installed here):
the fake ``LLM`` runs a tiny random model with torch and answers in vLLM's shapes (``RequestOutput`` with
``prompt_logprobs``, ``CompletionOutput`` with ``token_ids``, per-position ``{token id: Logprob}``, the end token
kept in ``token_ids``, top-k plus the sampled token), so the backend's answers are checked against the hf backend's
on the same weights. What this does not check (vLLM's own numerics, scheduling, tensor parallelism) is in
docs/models.md."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest
import torch

from wobble.backends.base import Backend, GenParams
from wobble.backends.hf import HFBackend
from wobble.backends.sampling import prompt_seed
from wobble.backends.vllm_engine import VLLMBackend, tensor_parallel_size, visible_gpus
from wobble.errors import ConfigError, WobbleError
from wobble.models.tiny import build_tiny

ATOL = 1e-4
PROMPTS = ["Hi", "The quick brown fox jumps over the lazy dog.", "Q: 2+2? A:", "x"]
CONTINUATIONS = [" there", " And then it slept.", "", "yz"]
CANDIDATES = ["A", " B", "blue", "\n"]
CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which option, A or B?"}]


# ------------------------------------------------------------------------------ the fake vllm module

@dataclass
class Logprob:  # vllm.logprobs.Logprob (vllm.sequence.Logprob in older releases)
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:  # vllm.outputs.CompletionOutput
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:  # vllm.outputs.RequestOutput
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, Logprob] | None] | None
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


class SamplingParams:  # vllm.SamplingParams: the fields the backend uses, checked as vLLM checks them
    def __init__(self, *, n=1, temperature=1.0, top_p=1.0, seed=None, stop=None, stop_token_ids=None,
                 max_tokens=16, logprobs=None, prompt_logprobs=None):
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
        for name, v in (("logprobs", logprobs), ("prompt_logprobs", prompt_logprobs)):
            if v is not None and v < 0:
                raise ValueError(f"{name} must be non-negative, got {v}.")
        self.n, self.temperature, self.top_p, self.seed = n, temperature, top_p, seed
        self.stop = [stop] if isinstance(stop, str) else list(stop or [])
        self.stop_token_ids = list(stop_token_ids or [])
        self.max_tokens, self.logprobs, self.prompt_logprobs = max_tokens, logprobs, prompt_logprobs


class LLM:  # vllm.LLM over a tiny transformers model in float32
    made: list["LLM"] = []
    fail_start: str | None = None

    def __init__(self, model, tokenizer=None, dtype="auto", tensor_parallel_size=1, seed=0, max_logprobs=20,
                 generation_config="auto", max_model_len=None, gpu_memory_utilization=0.9):
        if LLM.fail_start:
            raise RuntimeError(LLM.fail_start)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.args = {"model": model, "tokenizer": tokenizer, "dtype": dtype, "tensor_parallel_size": tensor_parallel_size,
                     "seed": seed, "max_logprobs": max_logprobs, "generation_config": generation_config,
                     "max_model_len": max_model_len, "gpu_memory_utilization": gpu_memory_utilization}
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        self.tok = AutoTokenizer.from_pretrained(tokenizer or model)
        self.max_model_len = max_model_len or 2048
        self.calls: list[tuple[list[list[int]], list[SamplingParams]]] = []
        LLM.made.append(self)

    def get_tokenizer(self):
        return self.tok

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True):
        sps = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
        ids = [list(p["prompt_token_ids"]) for p in prompts]
        self.calls.append((ids, sps))
        self.answers = [self._one(str(i), x, sp) for i, (x, sp) in enumerate(zip(ids, sps, strict=True))]
        return self.answers

    def _entry(self, lp: torch.Tensor, token: int, k: int) -> dict[int, Logprob]:
        """One position's answer: the chosen token first, then the top k (as vLLM lists them)."""
        rank = int((lp > lp[token]).sum()) + 1
        out = {token: Logprob(float(lp[token]), rank, self.tok.decode([token]))}
        values, index = lp.topk(k) if k else (lp[:0], lp[:0].long())
        for r, (v, t) in enumerate(zip(values.tolist(), index.tolist()), start=1):
            out.setdefault(t, Logprob(v, r, self.tok.decode([t])))
        return out

    @torch.no_grad()
    def _one(self, rid: str, ids: list[int], sp: SamplingParams) -> RequestOutput:
        if len(ids) > self.max_model_len:
            raise ValueError(f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of "
                             f"{self.max_model_len}.")
        for n in (sp.logprobs, sp.prompt_logprobs):
            if n is not None and n > self.args["max_logprobs"]:
                raise ValueError(f"Requested sample logprobs of {n}, which is greater than max allowed: "
                                 f"{self.args['max_logprobs']}")
        prompt_lps = None
        if sp.prompt_logprobs is not None:
            lp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
            prompt_lps = [None] + [self._entry(lp[j - 1], ids[j], sp.prompt_logprobs) for j in range(1, len(ids))]
        gen = torch.Generator().manual_seed(sp.seed) if sp.seed is not None else None
        new, lps, reason, why = [], [] if sp.logprobs is not None else None, "length", None
        for _ in range(sp.max_tokens):
            last = self.model(input_ids=torch.tensor([ids + new])).logits[0, -1].float()
            lp = torch.log_softmax(last, dim=-1)
            if sp.temperature == 0:
                t = int(last.argmax())
            else:
                t = int(torch.multinomial(torch.softmax(last / sp.temperature, dim=-1), 1, generator=gen))
            new.append(t)
            if lps is not None:
                lps.append(self._entry(lp, t, sp.logprobs))
            if t in sp.stop_token_ids or t == self.tok.eos_token_id:
                reason, why = "stop", t if t in sp.stop_token_ids else None
                break
            text = self.tok.decode(new, skip_special_tokens=True)
            hit = [s for s in sp.stop if s in text]
            if hit:
                reason, why = "stop", hit[0]
                break
        text = self.tok.decode(new, skip_special_tokens=True)
        if isinstance(why, str):
            text = text[:text.find(why)]
        done = CompletionOutput(0, text, new, None, lps, reason, why)
        return RequestOutput(rid, None, ids, prompt_lps, [done])


@pytest.fixture
def fake_vllm(monkeypatch):
    mod = types.ModuleType("vllm")
    mod.LLM, mod.SamplingParams = LLM, SamplingParams
    outputs = types.ModuleType("vllm.outputs")
    outputs.RequestOutput, outputs.CompletionOutput = RequestOutput, CompletionOutput
    mod.outputs = outputs
    monkeypatch.setitem(sys.modules, "vllm", mod)
    monkeypatch.setitem(sys.modules, "vllm.outputs", outputs)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr(LLM, "made", [])
    monkeypatch.setattr(LLM, "fail_start", None)
    return mod


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    model, tok = build_tiny("causal", seed=0, chat_template=True)
    d = tmp_path_factory.mktemp("tiny-vllm")
    model.float().save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def hf(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    return HFBackend(model, AutoTokenizer.from_pretrained(tiny_dir), "causal", "tiny", batch_size=3, progress=False)


def make(tiny_dir, **kw) -> VLLMBackend:
    return VLLMBackend(tiny_dir, "tiny", progress=False, **kw)


def close(a, b):
    return len(a) == len(b) and all(x == pytest.approx(y, abs=ATOL) for x, y in zip(a, b))


# ------------------------------------------------------------------------------------------ the mapping

def test_engine_arguments_and_interface(fake_vllm, tiny_dir):
    b = make(tiny_dir, dtype="auto", tensor_parallel_size=2, top_logprobs=50, max_model_len=512)
    assert isinstance(b, Backend) and b.supports_first_token_logprobs and b.has_chat_template
    args = LLM.made[0].args
    assert args["model"] == args["tokenizer"] == str(tiny_dir)
    assert (args["dtype"], args["tensor_parallel_size"], args["max_logprobs"], args["max_model_len"]) == \
        ("bfloat16", 2, 50, 512)
    assert args["generation_config"] == "vllm"  # the model's generation_config.json does not change the sampling
    assert b.end_ids == {b.tokenizer.eos_token_id}


def test_next_token_logprobs_match_the_hf_backend_inside_and_outside_the_top_k(fake_vllm, tiny_dir, hf):
    want = hf.next_token_logprobs(PROMPTS + [CHAT], CANDIDATES)
    for k, rescored in ((len(hf.tokenizer), False), (2, True)):  # the whole vocabulary; 2 (a random model)
        b = make(tiny_dir, top_logprobs=k)
        got = b.next_token_logprobs(PROMPTS + [CHAT], CANDIDATES)
        for g, w in zip(got, want):
            assert list(g) == CANDIDATES and close(list(g.values()), list(w.values()))
        calls = LLM.made[-1].calls
        assert len(calls[0][0]) == 5 and all(sp.logprobs == k and sp.max_tokens == 1 and sp.temperature == 0
                                              for sp in calls[0][1])
        assert calls[0][0][4] == hf.encode_prompt(hf.render(CHAT))  # token ids, tokenized as the hf backend does
        assert bool(b.rescored) == bool(rescored)
        if rescored:  # one batched request: prompt + the candidate's first token, prompt log-probs only
            ids, sps = calls[1]
            assert len(calls) == 2 and len(ids) == b.rescored
            assert all(sp.prompt_logprobs == 0 and sp.logprobs is None for sp in sps)
            assert all(x[-1] in set(b.candidate_tokens(CANDIDATES).values()) for x in ids)


def test_continuation_logprobs_match_the_hf_backend(fake_vllm, tiny_dir, hf):
    b = make(tiny_dir)
    got = b.continuation_logprobs(PROMPTS, CONTINUATIONS)
    want = hf.continuation_logprobs(PROMPTS, CONTINUATIONS)
    assert got[2] == [] and all(close(g, w) for g, w in zip(got, want))
    assert sum(got[1]) == pytest.approx(sum(want[1]), abs=ATOL * len(got[1]))
    ids, sps = LLM.made[0].calls[0]
    assert len(ids) == 3 and all(sp.prompt_logprobs == 0 for sp in sps)  # the empty continuation asks nothing
    # next-token and first continuation token agree, as in the hf backend
    first = b.next_token_logprobs(PROMPTS[:1], [CONTINUATIONS[0]])[0][CONTINUATIONS[0]]
    assert first == pytest.approx(got[0][0], abs=ATOL)


@pytest.mark.parametrize("stop", [(), ("e",), ("zz", "o")])
def test_greedy_generation_matches_the_hf_backend(fake_vllm, tiny_dir, hf, stop):
    params = GenParams(max_new_tokens=12, stop=stop, return_logprobs=True)
    got = make(tiny_dir).generate(PROMPTS + [CHAT], params)
    want = hf.generate(PROMPTS + [CHAT], params)
    for g, w in zip(got, want):
        assert (g.text, g.rendered_prompt, g.tokens, g.finish_reason) == (w.text, w.rendered_prompt, w.tokens,
                                                                          w.finish_reason)
        assert close(g.token_logprobs, w.token_logprobs)
    sps = LLM.made[0].calls[0][1]
    assert all(sp.temperature == 0 and sp.seed is None and sp.logprobs == 0 and sp.max_tokens == 12 for sp in sps)
    assert all(sp.stop == list(stop) and sp.stop_token_ids == sorted(hf.end_ids) for sp in sps)


def test_end_token_is_left_out_as_in_the_hf_backend(fake_vllm, tiny_dir, hf):
    """vLLM keeps the end token in token_ids; the Generation does not (text, tokens and log-probs)."""
    b = make(tiny_dir)
    params = GenParams(max_new_tokens=12, return_logprobs=True)
    b.generate(PROMPTS, params)
    end = LLM.made[0].answers[0].outputs[0].token_ids[3]  # the 4th greedy token of the first prompt, made an end token
    kept = hf.end_ids
    b.end_ids = hf.end_ids = kept | {end}
    try:
        got, want = b.generate(PROMPTS, params), hf.generate(PROMPTS, params)
    finally:
        hf.end_ids = kept
    assert LLM.made[0].answers[0].outputs[0].token_ids[-1] == end and len(got[0].tokens) <= 3
    for g, w in zip(got, want):
        assert (g.text, g.tokens, g.finish_reason) == (w.text, w.tokens, w.finish_reason)
        assert len(g.token_logprobs) == len(g.tokens)


def test_first_token_candidates_come_with_the_generation(fake_vllm, tiny_dir, hf):
    params = GenParams(max_new_tokens=4, first_token_candidates=tuple(CANDIDATES))
    b = make(tiny_dir, top_logprobs=2)
    got = b.generate(PROMPTS, params)
    want = hf.generate(PROMPTS, params)
    for g, w in zip(got, want):
        assert g.text == w.text and close(list(g.first_token_logprobs.values()), list(w.first_token_logprobs.values()))
    assert LLM.made[0].calls[0][1][0].logprobs == 2 and b.rescored > 0
    # no new tokens: only the first-token answer, an empty text
    none = b.generate(PROMPTS[:1], GenParams(max_new_tokens=0, first_token_candidates=("A",)))[0]
    assert (none.text, none.finish_reason) == ("", "length") and set(none.first_token_logprobs) == {"A"}
    calls = len(LLM.made[0].calls)
    assert make(tiny_dir).generate(PROMPTS, GenParams(max_new_tokens=0))[0].text == "" and \
        len(LLM.made[0].calls) == calls  # nothing to ask


def test_sampling_seeds_depend_on_the_prompt_not_the_batch(fake_vllm, tiny_dir):
    b = make(tiny_dir)
    params = GenParams(max_new_tokens=8, temperature=1.0, seed=7)
    batch = b.generate(PROMPTS, params)
    alone = b.generate(PROMPTS[2:3], params)
    assert alone[0].text == batch[2].text
    sps = LLM.made[0].calls[0][1]
    assert [sp.seed for sp in sps] == [prompt_seed(7, p) for p in PROMPTS] and sps[0].temperature == 1.0
    other = b.generate(PROMPTS, GenParams(max_new_tokens=8, temperature=1.0, seed=8))
    assert [g.text for g in other] != [g.text for g in batch]


# ------------------------------------------------------------------------------------------ errors: one line

def one_line(excinfo) -> str:
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def test_vllm_not_installed_says_how_to_install_it(monkeypatch, tiny_dir):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm raises ImportError
    with pytest.raises(WobbleError) as e:
        make(tiny_dir)
    assert "pip install vllm" in one_line(e) and "'tiny'" in str(e.value)


def test_engine_errors_are_one_line(fake_vllm, tiny_dir):
    LLM.fail_start = "CUDA out of memory.\nTried to allocate 2.00 GiB"
    with pytest.raises(WobbleError, match="vLLM could not start .*RuntimeError: CUDA out of memory. Tried") as e:
        make(tiny_dir)
    one_line(e)
    LLM.fail_start = None
    b = make(tiny_dir, max_model_len=8)
    with pytest.raises(WobbleError, match="vLLM next-token of 1 prompts failed .*longer than the maximum") as e:
        b.next_token_logprobs([PROMPTS[1]], ["A"])
    one_line(e)
    with pytest.raises(WobbleError, match="2 prompts but 1 continuations"):
        b.continuation_logprobs(PROMPTS[:2], ["a"])
    with pytest.raises(WobbleError, match="tokenizes to no tokens"):
        b.next_token_logprobs(PROMPTS[:1], [""])
    with pytest.raises(WobbleError, match="causal models only"):
        make(tiny_dir, kind="seq2seq")
    with pytest.raises(WobbleError, match="dtype should be one of"):
        make(tiny_dir, dtype="int8")


def test_tensor_parallel_size_from_the_jobs_gpus(monkeypatch):
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,3"}) == 2 and visible_gpus({}) is None
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert tensor_parallel_size("m", {}, {"CUDA_VISIBLE_DEVICES": "2,3,4,5"}) == 4  # the job's GPUs
    assert tensor_parallel_size("m", {"tensor_parallel_size": 2}, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == 2
    with pytest.raises(WobbleError, match="tensor_parallel_size 4 needs 4 GPUs and this job sees 2") as e:
        tensor_parallel_size("m", {"tensor_parallel_size": 4}, {"CUDA_VISIBLE_DEVICES": "0,1"})
    one_line(e)
    with pytest.raises(WobbleError, match="needs a CUDA GPU and this job sees none"):
        tensor_parallel_size("m", {}, {"CUDA_VISIBLE_DEVICES": ""})
    monkeypatch.setattr("wobble.backends.vllm_engine._cuda_device_count", lambda: 8)
    assert tensor_parallel_size("m", {}, {}) == 1  # no CUDA_VISIBLE_DEVICES: one GPU unless the spec asks more


# ------------------------------------------------------------------------------------------ config and dispatch

def test_load_backend_picks_the_engine_and_the_jobs_book_its_gpus(fake_vllm, tmp_path, monkeypatch):
    from wobble.backends import load_backend
    from wobble.models.materialize import materialize
    from wobble.paths import weight_gpus

    spec = {"source": "tiny", "kind": "causal", "chat_template": True, "engine": "vllm", "tensor_parallel_size": 2,
            "top_logprobs": 5, "dtype": "float32"}
    materialize("t", spec, tmp_path / "t")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    b = load_backend(tmp_path / "t", "t", progress=False)
    assert isinstance(b, VLLMBackend) and b.top_logprobs == 5
    assert (LLM.made[0].args["tensor_parallel_size"], LLM.made[0].args["dtype"]) == (2, "float32")
    assert weight_gpus(spec) == 2 and weight_gpus({**spec, "engine": "hf"}) == 1
    for bad, match in (({"source": "tiny", "kind": "seq2seq", "engine": "vllm"}, "'hf' for a seq2seq tiny model"),
                       ({"source": "openai", "model": "m", "base_url": "http://x", "engine": "vllm"}, "engine")):
        with pytest.raises(ConfigError, match=match):
            materialize("x", bad, tmp_path / "x")


def test_check_config_names_a_missing_vllm(monkeypatch):
    import importlib.util

    from wobble import preflight

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    monkeypatch.setattr(preflight, "models_in_use", lambda config: list(config["models"]))
    lines = preflight.missing_commands({"models": {"v": {"source": "hub", "id": "a/b", "engine": "vllm"},
                                                   "h": {"source": "hub", "id": "a/b"}}})
    assert lines == ["models.v.engine: vllm is not installed (pip install vllm, into the jobs' environment on a "
                     "machine with a CUDA GPU; or use engine hf)"]


def test_the_schema_takes_the_engine_and_its_keys():
    from pathlib import Path

    import yaml

    from wobble.config import validate_config

    repo = Path(__file__).resolve().parents[2]
    cfg = yaml.safe_load((repo / "config.yaml").read_text())
    cfg["models"]["v"] = {"source": "hub", "id": "a/b", "revision": "0" * 40, "kind": "causal", "engine": "vllm",
                          "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8, "max_model_len": 4096}
    validate_config(cfg, repo / "schemas" / "config.schema.yaml")
    cfg["models"]["v"]["tensor_parallel_size"] = 0
    with pytest.raises(ConfigError, match="tensor_parallel_size") as e:
        validate_config(cfg, repo / "schemas" / "config.schema.yaml")
    one_line(e)
