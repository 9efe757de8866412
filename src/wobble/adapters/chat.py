"""Chat turns: build and check the message lists that backends render with a chat template.

A conversation is ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``: at most one
system message, first; then user and assistant messages alternating, starting with the user. A
prompt to generate from ends with a user message. Multi-turn studies (followup: a question, the
model's answer, then "Are you sure?") grow a conversation one turn at a time with
:func:`add_turn`; :func:`wobble.runner.dialogue.run_dialogues_resumable` runs them.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from wobble.errors import WobbleError

ROLES = ("system", "user", "assistant")


def message(role: str, content: str) -> dict:
    """One checked message."""
    if role not in ROLES:
        raise WobbleError(f"chat message role must be one of {ROLES}, got {role!r}")
    if not isinstance(content, str):
        raise WobbleError(f"chat message content must be a string, got {type(content).__name__}")
    return {"role": role, "content": content}


def validate_messages(messages: Sequence, *, for_generation: bool = True, where: str = "chat prompt") -> list[dict]:
    """The messages as plain dicts, or one WobbleError naming the first message that breaks the rules.

    Rules: a non-empty list; each message a dict with exactly ``role`` and ``content`` (a string);
    a system message only first; then user / assistant alternating from a user message; with
    ``for_generation`` the last message is a user message (the model answers it).
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise WobbleError(f"{where}: expected a non-empty list of chat messages, got {messages!r:.80}")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise WobbleError(f"{where}: message {i} should be a dict with exactly 'role' and 'content', "
                              f"got {m!r:.80}")
        out.append(message(m["role"], m["content"]))
    body = out[1:] if out[0]["role"] == "system" else out
    for i, m in enumerate(body):
        want = "user" if i % 2 == 0 else "assistant"
        if m["role"] != want:
            pos = i + (len(out) - len(body))
            article = "an" if want == "assistant" else "a"
            raise WobbleError(f"{where}: message {pos} should be {article} {want} message (system first, then user and "
                              f"assistant alternating), got role {m['role']!r}")
    if for_generation and (not body or body[-1]["role"] != "user"):
        raise WobbleError(f"{where}: the last message should be a user message for the model to answer")
    return out


def conversation(turns: Iterable[tuple[str, str] | str], system: str | None = None) -> list[dict]:
    """Messages from ``turns``: ``(user, assistant)`` pairs, the last may be a bare user string.

    ``conversation([("2+2?", "4")], "Be brief.")`` + a final ``"Are you sure?"`` gives system, user,
    assistant, user. Checked with :func:`validate_messages` (so it must end with a user message).
    """
    msgs = [message("system", system)] if system is not None else []
    for t in turns:
        if isinstance(t, str):
            msgs.append(message("user", t))
        else:
            user, assistant = t
            msgs += [message("user", user), message("assistant", assistant)]
    return validate_messages(msgs)


def add_turn(messages: Sequence[dict], assistant: str, user: str | None = None) -> list[dict]:
    """A new list: ``messages`` + the model's reply (+ the next user message when given)."""
    out = validate_messages(messages) + [message("assistant", assistant)]
    if user is not None:
        out.append(message("user", user))
    return out


def last_assistant(messages: Sequence[dict]) -> str | None:
    """The content of the last assistant message (the model's latest answer), or ``None``."""
    for m in reversed(messages):
        if m.get("role") == "assistant":
            return m.get("content")
    return None
