"""The one backend interface every study uses (DESIGN.md "Models and backends").

A :class:`Prompt` is either plain text or a list of chat messages; a backend renders chat messages
with the model's chat template (or a plain "User:/Assistant:" fallback). Backends are batched.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol, Sequence, Union, runtime_checkable

from wobble.io import dumps_canonical

Message = dict  # {"role": "system"|"user"|"assistant", "content": str}
Prompt = Union[str, Sequence[Message]]


@dataclass(frozen=True)
class GenParams:
    """Decoding parameters; ``temperature == 0`` means greedy."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    return_logprobs: bool = False  # per-token log-probs of the generated tokens
    # Candidates whose first-token log-prob at the FIRST generation step is returned with each
    # generation (Generation.first_token_logprobs): the next-token answer and the text answer from
    # one model call. Only backends with ``supports_first_token_logprobs`` accept it.
    first_token_candidates: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        d["first_token_candidates"] = list(self.first_token_candidates)
        if not d["first_token_candidates"]:
            del d["first_token_candidates"]  # predictions made without it keep their recorded params
        return d


@dataclass
class Generation:
    """One generated answer: the text, the exact rendered prompt, and optional per-token log-probs."""

    text: str
    rendered_prompt: str
    tokens: list[str] = field(default_factory=list)
    token_logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "length"
    first_token_logprobs: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@runtime_checkable
class Backend(Protocol):
    """Batched model calls. Optional: ``render(prompt) -> str``, the exact text the model sees
    (:func:`render_prompt` falls back to the text itself, or the messages' canonical JSON)."""

    model_key: str
    # True when generate() honours GenParams.first_token_candidates (one call for both answers).
    supports_first_token_logprobs: bool

    def generate(self, prompts: Sequence[Prompt], params: GenParams) -> list[Generation]: ...

    def next_token_logprobs(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Log-prob of each candidate's first token as the next token after each prompt."""
        ...

    def continuation_logprobs(self, prompts: Sequence[Prompt], continuations: Sequence[str]) -> list[list[float]]:
        """Per-token log-probs of ``continuations[i]`` following ``prompts[i]``."""
        ...


def render_prompt(backend, prompt: Prompt) -> str:
    """The exact text ``backend`` sees for ``prompt`` (what runners record as ``rendered_prompt``).

    ``backend.render(prompt)`` when the backend has it (hf: the chat template or the fallback);
    otherwise text prompts as they are and chat messages as their canonical JSON (what is sent when
    a server applies a chat template the client cannot see).
    """
    render = getattr(backend, "render", None)
    if callable(render):
        return render(prompt)
    if isinstance(prompt, str):
        return prompt
    return dumps_canonical([dict(m) for m in prompt])


def render_chat_fallback(messages: Sequence[Message], add_generation_prompt: bool = True) -> str:
    """Plain "System:/User:/Assistant:" rendering for models with no chat template."""
    lines = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    text = "\n\n".join(lines)
    if add_generation_prompt:
        text += "\n\nAssistant:"
    return text


def render_with_tokenizer(tokenizer, prompt: "Prompt") -> str:
    """The exact string a tokenizer-driven backend (hf, vLLM) feeds its model: a plain prompt as it is, chat
    messages through the tokenizer's chat template, or :func:`render_chat_fallback` where it has none."""
    if isinstance(prompt, str):
        return prompt
    messages = list(prompt)
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            from wobble.errors import WobbleError

            raise WobbleError(f"chat prompt message {i} should be a dict with 'role' and 'content', got {m!r:.80}")
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return render_chat_fallback(messages)
