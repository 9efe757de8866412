"""Prompt formats shared by studies (HELM's "adapters"): pure functions from an instance to a prompt.

* :mod:`wobble.adapters.mcq` — options under letters, seeded option shuffles, letter <-> option.
* :mod:`wobble.adapters.icl` — seeded class-balanced demonstration sampling, instance templates and
  verbalizers for in-context learning prompts.
* :mod:`wobble.adapters.chat` — chat messages: building, checking, growing a conversation.
"""
