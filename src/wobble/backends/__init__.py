"""Backends: one interface (base.Backend), several implementations, chosen by a model's config.

* :func:`load_backend` — the backend of a materialized model directory (``resources/models/<key>``,
  see :mod:`wobble.models.materialize`): an :class:`~wobble.backends.hf.HFBackend` over its weights (with
  ``engine: llamacpp`` or ``engine: vllm`` in its spec, :mod:`.llamacpp` or :mod:`.vllm_engine` instead), or, for
  a ``source: openai`` directory (a manifest holding the server spec, no weights), an
  :class:`~wobble.backends.openai_compat.OpenAICompatBackend` on that server (started by the job itself when the
  spec has a ``server:`` block: :mod:`wobble.backends.server`).
* :func:`backend_from_spec` — the same from a config spec: the model directory when given, else
  (``source: openai`` only) the server the spec names.

Every backend has ``has_chat_template``: True when chat prompts go through a real chat template (the
tokenizer's, or the server's), False when they use the plain ``User:/Assistant:`` fallback.

torch/transformers are imported lazily, so ``import wobble.backends`` stays cheap.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from wobble.backends.base import Backend, GenParams, Generation, Prompt, render_chat_fallback

__all__ = ["Backend", "GenParams", "Generation", "Prompt", "render_chat_fallback", "load_backend",
           "backend_from_spec", "DEFAULT_BATCH_SIZE"]

DEFAULT_BATCH_SIZE = 8


def load_backend(model_dir: str | os.PathLike, model_key: str, batch_size: int | None = None,
                 dtype: str | None = None, device: str = "auto", progress: bool = True):
    """The backend of a materialized model directory (hf over its weights, llama.cpp over its GGUF when the
    spec says ``engine: llamacpp``, vLLM's offline engine over its weights with ``engine: vllm``, or its openai
    server).

    ``batch_size``/``dtype`` default to the model spec recorded in the directory's manifest
    (``batch_size``, ``dtype``; else 8 and ``"auto"``); ``max_length`` comes from the spec too. A
    server model ignores them (the server batches).
    """
    from wobble.models.load import read_manifest

    manifest = read_manifest(model_dir)
    spec = manifest.get("spec") or {}
    if manifest.get("source") == "openai":
        return _server_backend(model_key, spec, progress=progress)
    if spec.get("engine") == "llamacpp":
        import torch

        from wobble.backends.llamacpp import LlamaCppBackend

        return LlamaCppBackend.from_model_dir(model_dir, model_key, spec, threads=torch.get_num_threads(),
                                              progress=progress)
    if spec.get("engine") == "vllm":
        from wobble.backends.vllm_engine import VLLMBackend

        return VLLMBackend.from_model_dir(model_dir, model_key, spec, kind=manifest.get("kind", "causal"), dtype=dtype,
                                          progress=progress)
    from wobble.backends.hf import HFBackend
    from wobble.models.load import load_model

    model, tok, manifest = load_model(model_dir, dtype=dtype or spec.get("dtype") or "auto", device=device)
    return HFBackend(model, tok, manifest["kind"], model_key,
                     batch_size=batch_size or spec.get("batch_size") or DEFAULT_BATCH_SIZE,
                     max_length=spec.get("max_length"), progress=progress,
                     reuse_prefix_generation=bool(spec.get("prefix_generation", False)),
                     output_fp32=bool(spec.get("output_fp32", False)),
                     reuse_turns=bool(spec.get("turn_reuse", False)), attention=spec.get("attention"))


def backend_from_spec(model_key: str, spec: Mapping[str, Any], model_dir: str | os.PathLike | None = None,
                      **kwargs):
    """The backend for a config model spec: :func:`load_backend` over ``model_dir`` when given, else
    (``source: openai``) the server the spec names."""
    if model_dir is not None:
        return load_backend(model_dir, model_key, **kwargs)
    if spec.get("source") == "openai":
        return _server_backend(model_key, spec)
    from wobble.errors import WobbleError

    raise WobbleError(f"model {model_key!r}: the hf backend needs its materialized model directory")


def _server_backend(model_key: str, spec: Mapping[str, Any], progress: bool = True):
    """The openai backend of a ``source: openai`` spec: on the server its ``server:`` block starts (for this job,
    :mod:`wobble.backends.server`), else on its ``base_url``."""
    if spec.get("server"):
        from wobble.backends.managed import managed_backend

        return managed_backend(model_key, spec, progress=progress)
    from wobble.backends.openai_compat import OpenAICompatBackend

    return OpenAICompatBackend.from_spec(model_key, spec, progress=progress)
