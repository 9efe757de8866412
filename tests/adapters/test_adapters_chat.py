"""wobble.adapters.chat: building conversations and the one-line errors for malformed messages."""

from __future__ import annotations

import pytest

from wobble.adapters.chat import add_turn, conversation, last_assistant, validate_messages
from wobble.errors import WobbleError


def test_conversation_and_turns():
    with pytest.raises(WobbleError, match="last message should be a user"):
        conversation([("2+2?", "4")], system="Be brief.")
    msgs = conversation([("2+2?", "4"), "Are you sure?"], system="Be brief.")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    grown = add_turn(msgs, "Yes, 4.", "I don't agree with you. Think again.")
    assert [m["role"] for m in grown][-2:] == ["assistant", "user"] and len(msgs) == 4
    assert last_assistant(grown) == "Yes, 4." and last_assistant(msgs[:2]) is None


@pytest.mark.parametrize("messages, error", [
    ([], "non-empty list"),
    ("hello", "non-empty list"),
    ([{"role": "user"}], "message 0 should be a dict with exactly 'role' and 'content'"),
    ([{"role": "bot", "content": "x"}], "role must be one of"),
    ([{"role": "user", "content": 3}], "content must be a string"),
    ([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}], "message 1 should be an assistant"),
    ([{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}], "message 1 should be a user"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], "last message should be a user"),
])
def test_bad_messages_are_one_clear_error(messages, error):
    with pytest.raises(WobbleError, match=error):
        validate_messages(messages)


def test_a_finished_conversation_is_valid_when_not_generating():
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert validate_messages(msgs, for_generation=False) == msgs
