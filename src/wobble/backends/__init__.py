"""Backends: one interface (base.Backend), several implementations, chosen by a model's config."""

from wobble.backends.base import Backend, GenParams, Generation, Prompt, render_chat_fallback

__all__ = ["Backend", "GenParams", "Generation", "Prompt", "render_chat_fallback"]
