"""The ``vllm`` engine: a materialized model's weights run by vLLM's offline ``LLM`` engine in the job's own
process (``engine: vllm`` on a causal ``hub``, ``local`` or ``tiny`` model), beside the server route
(``source: openai`` with a ``server:`` running ``vllm serve``).

vLLM is imported only when the engine starts; without it the job stops in one line saying how to install it.

Conventions are the hf backend's (:mod:`wobble.backends.hf`), so the two engines answer the same questions the same
way and differ only by numerics:

* prompts are rendered by the tokenizer's chat template (else the plain fallback) and tokenized here, as the hf
  backend does (no special tokens, the BOS prepended when the tokenizer adds one, ``max_length`` keeping BOS and
  the last tokens); vLLM gets the token ids (``{"prompt_token_ids": ...}``), never a string to tokenize again;
* continuations and candidates are tokenized alone, without special tokens, and appended to the prompt ids;
* decoding ends at the hf backend's end tokens (passed as ``stop_token_ids``; vLLM's copy of the model's
  generation config is off: ``generation_config="vllm"``), at a stop string (the text cut before it) or after
  ``max_new_tokens``; the text and ``tokens`` are decoded here from the generated ids, end tokens left out;
  a sampled prompt's seed is :func:`~wobble.backends.sampling.prompt_seed` of the rendered prompt, so a
  prompt's draw does not depend on its batch (vLLM's draws are not torch's: samples differ from the hf
  backend's, greedy texts agree up to numerics).

Log-probs are vLLM's (raw, before temperature: the V1 engine's default ``logprobs_mode``), keyed by token id:

* ``next_token_logprobs`` and a generation's ``first_token_candidates`` ask for the top ``top_logprobs`` (default
  20) alternatives of the first token (``SamplingParams.logprobs``); a candidate's token outside them is scored
  exactly by a second request over prompt + that token with ``prompt_logprobs=0`` (the log-prob of each prompt
  token), so no value is approximated; ``rescored`` counts those pairs;
* ``continuation_logprobs`` asks for prompt + continuation with ``prompt_logprobs=0`` and reads the continuation's
  positions;
* ``return_logprobs`` asks for the sampled tokens' log-probs (``logprobs=0``).

Batching is vLLM's: every prompt of a call goes to one ``LLM.generate`` (continuous batching), answers in input
order. The engine's tensor parallel size is the job's GPUs (:func:`tensor_parallel_size`). What a check on a GPU
does and does not cover is in docs/models.md ("In-process vLLM").
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from wobble.backends.base import Generation, GenParams, Prompt, render_with_tokenizer
from wobble.backends.sampling import prompt_seed
from wobble.errors import WobbleError

log = logging.getLogger(__name__)

DEFAULT_TOP_K = 20
#: wobble's dtype names as vLLM's ``dtype``: ``auto`` is bfloat16, as the hf backend computes on a GPU.
VLLM_DTYPES = {"auto": "bfloat16", "bfloat16": "bfloat16", "float16": "float16", "float32": "float32"}
INSTALL = "pip install vllm (into the job's environment, on a machine with a CUDA GPU)"


def import_vllm(model_key: str):
    """The ``vllm`` module, or one line saying how to install it."""
    try:
        import vllm
    except ImportError as e:
        raise WobbleError(f"model {model_key!r}: engine vllm needs the vllm package, which does not import here "
                          f"({e}); install it with: {INSTALL}, or use engine hf") from None
    return vllm


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text[:300]}"


def visible_gpus(environ: Mapping[str, str] | None = None) -> int | None:
    """GPUs the job sees through ``CUDA_VISIBLE_DEVICES`` (a scheduler sets it to the job's gpu resource), or None
    when it is not set."""
    value = (os.environ if environ is None else environ).get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return len([d for d in value.split(",") if d.strip() and d.strip() != "-1"])


def _cuda_device_count() -> int:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return 0
    return torch.cuda.device_count()


def tensor_parallel_size(model_key: str, spec: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> int:
    """The engine's tensor parallel size: the spec's ``tensor_parallel_size`` (what its jobs book, see
    :func:`wobble.paths.weight_gpus`), else the GPUs ``CUDA_VISIBLE_DEVICES`` gives the job, else 1; one line when
    the job sees fewer GPUs than that."""
    env = os.environ if environ is None else environ
    listed = visible_gpus(env)
    seen = listed if listed is not None else _cuda_device_count()
    asked = spec.get("tensor_parallel_size")
    size = int(asked) if asked else (listed or 1)
    shown = f"CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES')!r}" if listed is not None else "torch's count"
    if seen == 0:
        raise WobbleError(f"model {model_key!r}: engine vllm needs a CUDA GPU and this job sees none ({shown}); "
                          f"run it in a job with a gpu resource, or use engine hf")
    if size > seen:
        raise WobbleError(f"model {model_key!r}: tensor_parallel_size {size} needs {size} GPUs and this job sees "
                          f"{seen} ({shown}); book them (models.{model_key}.tensor_parallel_size sets the jobs' gpu "
                          f"resource) or lower it")
    return size


def _ids(value) -> set[int]:
    if value is None:
        return set()
    return {int(value)} if isinstance(value, int) else {int(v) for v in value}


def end_ids(model_dir: str | os.PathLike, tokenizer) -> set[int]:
    """The hf backend's end tokens: the eos ids of ``config.json`` and ``generation_config.json`` in the model
    directory, the tokenizer's eos, and the chat end-of-turn tokens its vocabulary has."""
    from wobble.backends.hf import END_OF_TURN_TOKENS

    ends = _ids(getattr(tokenizer, "eos_token_id", None))
    for name in ("config.json", "generation_config.json"):
        path = Path(model_dir) / name
        if path.is_file():
            ends |= _ids(json.loads(path.read_text(encoding="utf-8")).get("eos_token_id"))
    added = tokenizer.get_added_vocab() if hasattr(tokenizer, "get_added_vocab") else {}
    return ends | {added[t] for t in END_OF_TURN_TOKENS if t in added}


class VLLMBackend:
    """A :class:`wobble.backends.base.Backend` over vLLM's offline engine (module docstring)."""

    supports_first_token_logprobs = True

    def __init__(self, model_dir: str | os.PathLike, model_key: str, *, kind: str = "causal", dtype: str | None = None,
                 tensor_parallel_size: int = 1, top_logprobs: int | None = None, max_length: int | None = None,
                 max_model_len: int | None = None, gpu_memory_utilization: float | None = None,
                 progress: bool = True):
        if kind != "causal":
            raise WobbleError(f"model {model_key!r}: engine vllm runs causal models only, got kind {kind!r}; "
                              f"use engine hf")
        if (dtype or "auto") not in VLLM_DTYPES:
            raise WobbleError(f"model {model_key!r}: dtype should be one of {', '.join(VLLM_DTYPES)}, got {dtype!r}")
        self._vllm = import_vllm(model_key)
        self.model_key, self.kind, self.progress = model_key, kind, progress
        self.top_logprobs = int(top_logprobs or DEFAULT_TOP_K)
        self.max_length = int(max_length) if max_length else None
        self.engine_args: dict[str, Any] = {
            "model": str(model_dir), "tokenizer": str(model_dir), "dtype": VLLM_DTYPES[dtype or "auto"],
            "tensor_parallel_size": int(tensor_parallel_size), "seed": 0, "generation_config": "vllm",
            "max_logprobs": max(self.top_logprobs, DEFAULT_TOP_K)}
        if max_model_len:
            self.engine_args["max_model_len"] = int(max_model_len)
        if gpu_memory_utilization:
            self.engine_args["gpu_memory_utilization"] = float(gpu_memory_utilization)
        try:
            self.llm = self._vllm.LLM(**self.engine_args)
        except Exception as e:  # noqa: BLE001 - vLLM's own errors (memory, architecture, tensor parallel split)
            log.debug("vLLM engine start failed", exc_info=True)
            raise WobbleError(f"model {model_key!r}: vLLM could not start on {model_dir} "
                              f"(tensor_parallel_size {tensor_parallel_size}): {_one_line(e)}") from None
        self.tokenizer = self.llm.get_tokenizer()
        tok = self.tokenizer
        self.bos_id = None
        if tok.bos_token_id is not None and tok("x", add_special_tokens=True)["input_ids"][:1] == [tok.bos_token_id]:
            self.bos_id = int(tok.bos_token_id)
        self.end_ids = end_ids(model_dir, tok)
        self.rescored = 0  # (prompt, candidate) pairs outside the top-k, scored again by prompt log-probs
        self._warned_trunc = False

    @classmethod
    def from_model_dir(cls, model_dir: str | os.PathLike, model_key: str, spec: Mapping[str, Any], *,
                       kind: str = "causal", dtype: str | None = None, progress: bool = True) -> "VLLMBackend":
        """The engine over a materialized model directory, its options from the model's spec."""
        import_vllm(model_key)  # before the GPU count: a machine without vllm says how to install it
        return cls(model_dir, model_key, kind=kind, dtype=dtype or spec.get("dtype"),
                   tensor_parallel_size=tensor_parallel_size(model_key, spec), top_logprobs=spec.get("top_logprobs"),
                   max_length=spec.get("max_length"), max_model_len=spec.get("max_model_len"),
                   gpu_memory_utilization=spec.get("gpu_memory_utilization"), progress=progress)

    def close(self) -> None:
        """Drop the engine (its GPU memory goes when the process ends or the collector frees it)."""
        self.llm = None

    # ------------------------------------------------------------------------------ rendering / ids

    @property
    def has_chat_template(self) -> bool:
        """True when chat prompts use the tokenizer's own chat template (else the plain fallback)."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def render(self, prompt: Prompt) -> str:
        """The exact string the model sees (the hf backend's rendering)."""
        return render_with_tokenizer(self.tokenizer, prompt)

    def encode_prompt(self, text: str) -> list[int]:
        """Token ids of a rendered prompt, as the hf backend's causal ``encode_prompt``."""
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if self.bos_id is not None and (not ids or ids[0] != self.bos_id):
            ids = [self.bos_id] + ids
        if not ids:
            raise WobbleError(f"model {self.model_key!r}: empty prompt and no BOS token: nothing to condition on")
        if self.max_length and len(ids) > self.max_length:
            if not self._warned_trunc:
                log.warning("%s: prompt of %d tokens truncated to max_length=%d (further truncations not logged)",
                            self.model_key, len(ids), self.max_length)
                self._warned_trunc = True
            head = [self.bos_id] if self.bos_id is not None else []
            ids = head + ids[len(ids) - (self.max_length - len(head)):]
        return ids

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of a continuation or candidate: tokenized alone, no special tokens."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def candidate_tokens(self, candidates: Sequence[str]) -> dict[str, int]:
        """Candidate -> its first token id."""
        out = {}
        for c in candidates:
            ids = self.encode_continuation(c)
            if not ids:
                raise WobbleError(f"model {self.model_key!r}: candidate {c!r} tokenizes to no tokens")
            out[c] = ids[0]
        return out

    # ------------------------------------------------------------------------------------ engine calls

    def _params(self, **kw):
        """A ``vllm.SamplingParams`` (one line when vLLM refuses the values)."""
        try:
            return self._vllm.SamplingParams(**kw)
        except (TypeError, ValueError) as e:
            raise WobbleError(f"model {self.model_key!r}: vLLM refused the sampling parameters {kw}: "
                              f"{_one_line(e)}") from None

    def _run(self, ids: Sequence[list[int]], params: Sequence[Any], what: str) -> list:
        """One ``LLM.generate`` over token-id prompts, answers in input order."""
        if not ids:
            return []
        try:
            outs = self.llm.generate([{"prompt_token_ids": list(x)} for x in ids], list(params),
                                     use_tqdm=self.progress)
        except Exception as e:  # noqa: BLE001 - vLLM's errors (a prompt over max_model_len, out of memory)
            log.debug("vLLM generate failed", exc_info=True)
            raise WobbleError(f"model {self.model_key!r}: vLLM {what} of {len(ids)} prompts failed "
                              f"(longest {max(map(len, ids))} tokens): {_one_line(e)}") from None
        if len(outs) != len(ids):
            raise WobbleError(f"model {self.model_key!r}: vLLM answered {len(outs)} of {len(ids)} {what} prompts")
        return list(outs)

    def _logprob(self, entry, token: int, where: str) -> float:
        """The log-prob of ``token`` in one position's ``{token id: Logprob}`` of a vLLM answer."""
        got = None if entry is None else entry.get(token)
        if got is None:
            raise WobbleError(f"model {self.model_key!r}: vLLM returned no log-prob for token {token} ({where})")
        return float(getattr(got, "logprob", got))

    def _first_tokens(self, outs: Sequence[Any], ids: Sequence[list[int]],
                      cand_tok: Mapping[str, int]) -> list[dict[str, float]]:
        """Each prompt's candidates' first-token log-probs: from the first generated position's top-k, and for a
        token outside them from one more request with prompt log-probs over prompt + that token."""
        out: list[dict[str, float]] = []
        missing: list[tuple[int, int]] = []  # (prompt, token id) pairs to score again
        for i, o in enumerate(outs):
            lps = o.outputs[0].logprobs if o.outputs else None
            if not lps or lps[0] is None:
                raise WobbleError(f"model {self.model_key!r}: prompt {i}: vLLM returned no log-probs for the first "
                                  f"generated token")
            top = lps[0]
            out.append({c: float(top[t].logprob) for c, t in cand_tok.items() if t in top})
            missing += sorted({(i, t) for c, t in cand_tok.items() if t not in top})
        if missing:
            answers = self._run([ids[i] + [t] for i, t in missing],
                                [self._params(max_tokens=1, temperature=0.0, prompt_logprobs=0)] * len(missing),
                                "first-token rescoring")
            value = {}
            for (i, t), o in zip(missing, answers):
                plp = o.prompt_logprobs
                value[i, t] = self._logprob(plp[-1] if plp else None, t, f"prompt {i}, candidate token {t}")
            for i, row in enumerate(out):
                row.update({c: value[i, t] for c, t in cand_tok.items() if (i, t) in value})
            self.rescored += len(missing)
            log.info("model %r: %d (prompt, candidate) pairs outside the top %d scored again by prompt log-probs",
                     self.model_key, len(missing), self.top_logprobs)
        return [{c: row[c] for c in cand_tok} for row in out]

    # ------------------------------------------------------------------------------------ methods

    def generate(self, prompts: Sequence[Prompt], params: GenParams) -> list[Generation]:
        """Greedy (temperature 0) or seeded sampled generation (module docstring)."""
        from wobble.backends.hf_generate import finish

        if params.max_new_tokens < 0:
            raise WobbleError(f"max_new_tokens must be >= 0, got {params.max_new_tokens}")
        rendered = [self.render(p) for p in prompts]
        ids = [self.encode_prompt(r) for r in rendered]
        stops = [s for s in params.stop if s]
        cand_tok = self.candidate_tokens(params.first_token_candidates)
        want = params.return_logprobs
        if params.max_new_tokens == 0 and not cand_tok:
            return [Generation(text="", rendered_prompt=r) for r in rendered]
        k = self.top_logprobs if cand_tok else (0 if want else None)
        sampled = params.temperature != 0
        sps = [self._params(max_tokens=max(1, params.max_new_tokens), temperature=float(params.temperature),
                            top_p=float(params.top_p), seed=prompt_seed(params.seed, r) if sampled else None,
                            stop=stops or None, stop_token_ids=sorted(self.end_ids), logprobs=k)
               for r in rendered]
        outs = self._run(ids, sps, "generate")
        firsts = self._first_tokens(outs, ids, cand_tok) if cand_tok else [{}] * len(outs)
        gens = []
        for i, (o, first) in enumerate(zip(outs, firsts)):
            c = o.outputs[0]
            new = list(c.token_ids) if params.max_new_tokens else []
            lps = [self._logprob(c.logprobs[j] if c.logprobs else None, t, f"prompt {i}, generated token {j}")
                   for j, t in enumerate(new)] if want else []
            reason = "stop" if c.finish_reason == "stop" and params.max_new_tokens else "length"
            if reason == "stop" and new and new[-1] in self.end_ids:  # vLLM keeps the end token; hf leaves it out
                new, lps = new[:-1], lps[:-1]
            g = finish(self.tokenizer, new, lps, rendered[i], reason, stops, want)
            g.first_token_logprobs = first
            gens.append(g)
        return gens

    def next_token_logprobs(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Log-prob of each candidate's first token as the next token after each prompt."""
        cand_tok = self.candidate_tokens(candidates)
        ids = [self.encode_prompt(self.render(p)) for p in prompts]
        sp = self._params(max_tokens=1, temperature=0.0, logprobs=self.top_logprobs)
        return self._first_tokens(self._run(ids, [sp] * len(ids), "next-token"), ids, cand_tok)

    def continuation_logprobs(self, prompts: Sequence[Prompt], continuations: Sequence[str]) -> list[list[float]]:
        """Per-token log-probs of ``continuations[i]`` (tokenized alone) following ``prompts[i]``."""
        if len(prompts) != len(continuations):
            raise WobbleError(f"continuation_logprobs: {len(prompts)} prompts but {len(continuations)} continuations")
        ids = [self.encode_prompt(self.render(p)) for p in prompts]
        conts = [self.encode_continuation(c) for c in continuations]
        scored = [i for i, c in enumerate(conts) if c]
        sp = self._params(max_tokens=1, temperature=0.0, prompt_logprobs=0)
        outs = self._run([ids[i] + conts[i] for i in scored], [sp] * len(scored), "continuation")
        result: list[list[float]] = [[] for _ in prompts]
        for i, o in zip(scored, outs):
            full, plp = ids[i] + conts[i], o.prompt_logprobs
            if plp is None or len(plp) != len(full):
                raise WobbleError(f"model {self.model_key!r}: prompt {i}: vLLM returned "
                                  f"{'no' if plp is None else len(plp)} prompt log-probs for {len(full)} tokens")
            result[i] = [self._logprob(plp[j], full[j], f"prompt {i}, continuation token {j - len(ids[i])}")
                         for j in range(len(ids[i]), len(full))]
        return result
