"""Backends: one interface (base.Backend), several implementations, chosen by a model's config.

* :func:`load_backend` — an :class:`~wobble.backends.hf.HFBackend` over a materialized model
  directory (``resources/models/<key>``, see :mod:`wobble.models.materialize`).
* :func:`backend_from_spec` — the backend a model spec asks for: ``source: openai`` gives an
  :class:`~wobble.backends.openai_compat.OpenAICompatBackend` (no directory), anything else the hf
  backend over ``model_dir``.

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
    """Load a materialized model directory as an :class:`HFBackend`.

    ``batch_size``/``dtype`` default to the model spec recorded in the directory's manifest
    (``batch_size``, ``dtype``; else 8 and ``"auto"``); ``max_length`` comes from the spec too.
    """
    from wobble.backends.hf import HFBackend
    from wobble.models.load import load_model, read_manifest

    spec = read_manifest(model_dir).get("spec") or {}
    model, tok, manifest = load_model(model_dir, dtype=dtype or spec.get("dtype") or "auto", device=device)
    return HFBackend(model, tok, manifest["kind"], model_key,
                     batch_size=batch_size or spec.get("batch_size") or DEFAULT_BATCH_SIZE,
                     max_length=spec.get("max_length"), progress=progress)


def backend_from_spec(model_key: str, spec: Mapping[str, Any], model_dir: str | os.PathLike | None = None,
                      **kwargs):
    """The backend for a config model spec: OpenAI-compatible server or hf over ``model_dir``."""
    if spec.get("source") == "openai":
        from wobble.backends.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend.from_spec(model_key, spec)
    if model_dir is None:
        from wobble.errors import WobbleError

        raise WobbleError(f"model {model_key!r}: the hf backend needs its materialized model directory")
    return load_backend(model_dir, model_key, **kwargs)
