"""wobble.adapters: MCQ shuffles and letters, the class-balanced demonstration sampler and ICL
templates, chat message checks; expected strings and permutations written out by hand."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from wobble.adapters.chat import add_turn, conversation, last_assistant, validate_messages
from wobble.adapters.icl import ICLTemplate, balanced_sample
from wobble.adapters.mcq import (apply_permutation, format_options, letter_to_option, option_letters,
                                 option_to_letter, seeded_permutation, shuffle_options, shuffled_mcq)
from wobble.errors import WobbleError

# ------------------------------------------------------------------------------------------------ mcq


def test_two_option_permutation_by_hand():
    # Fisher-Yates on n=2 draws j in [0, 2) once from sha256(base || counter 0); j == 0 swaps.
    for parts in (("s", 1), ("s", 2), ("t", 7, "q")):
        base = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
        x = int.from_bytes(hashlib.sha256(base + (0).to_bytes(8, "big")).digest()[:8], "big")
        assert seeded_permutation(2, *parts) == ([1, 0] if x % 2 == 0 else [0, 1])


def test_permutations_are_deterministic_and_cover_all_orders():
    assert seeded_permutation(5, "a", 1) == seeded_permutation(5, "a", 1)
    counts = Counter(tuple(seeded_permutation(3, "cover", s)) for s in range(600))
    assert len(counts) == 6 and all(60 <= c <= 140 for c in counts.values())


def test_shuffle_depends_on_the_question_key_and_the_options():
    opts = ["red", "green", "blue", "yellow", "Refused"]
    keys = {tuple(shuffle_options(opts, 0, 0, key=f"q{i}")) for i in range(20)}
    assert len(keys) > 10
    assert shuffle_options(opts, 0, 0, "q") == seeded_permutation(5, "wobble.mcq.shuffle", 0, 0, "q", *opts)


def test_first_token_shuffles_and_option_lines_are_reproduced():
    """first_token could call these with its salt and line format and get the same prompts."""
    ft = pytest.importorskip("wobble.studies.first_token.prompts")
    opts = ["Very likely", "Somewhat likely", "Not very likely", "Not at all likely", "Refused"]
    for seed in range(3):
        for idx in range(10):
            assert shuffle_options(opts, seed, idx, "q7", salt="wobble.first_token.shuffle") == \
                ft.shuffle_options(opts, seed, idx, "q7")
    shown = apply_permutation(opts, shuffle_options(opts, 0, 1, "q7", salt="wobble.first_token.shuffle"))
    text = ft.prompt_text("How likely?", shown, ft.CONSTRAINTS[0])
    assert format_options(shown, line="{letter}. {option} \n") in text


def test_letters_options_and_the_shuffled_prompt():
    assert option_letters(3) == ["A", "B", "C"]
    with pytest.raises(ValueError):
        option_letters(0)
    assert format_options(["cat", "dog"]) == "A. cat\nB. dog\n"
    assert format_options(["cat", "dog"], line="({letter}) {option} ") == "(A) cat (B) dog "
    assert apply_permutation(["a", "b", "c"], [2, 0, 1]) == ["c", "a", "b"]
    with pytest.raises(ValueError):
        apply_permutation(["a", "b"], [0, 0])
    assert letter_to_option(["A", "B"], ["cat", "dog"], " b ") == "dog"
    assert letter_to_option(["A", "B"], ["cat", "dog"], "C") is None
    assert option_to_letter(["A", "B"], ["cat", "dog"], "cat") == "A"

    opts = ["4", "5", "22", "3"]
    m = shuffled_mcq("2+2?", opts, seed=0, shuffle_index=3, key="q1", answer=0)
    perm = shuffle_options(opts, 0, 3, "q1")
    shown = [opts[i] for i in perm]
    assert m["permutation"] == perm and m["shown_options"] == shown
    assert m["text"] == "Question: 2+2?\n" + "".join(f"{lt}. {o}\n" for lt, o in zip("ABCD", shown)) + "Answer:"
    assert letter_to_option(m["letters"], m["shown_options"], m["answer_letter"]) == "4"
    with pytest.raises(ValueError):
        shuffled_mcq("q", opts, 0, 0, answer=4)


# ------------------------------------------------------------------------------------------------ icl

POOL = [{"text": f"t{i}", "h1": i % 2, "h2": (i // 2) % 2} for i in range(40)]


def test_balanced_sample_equal_counts_seeded_and_stable():
    demos = balanced_sample(POOL, 16, lambda x: x["h1"], seed=1, key=lambda x: x["text"])
    assert len(demos) == 16 and Counter(d["h1"] for d in demos) == {0: 8, 1: 8}
    assert len({d["text"] for d in demos}) == 16
    assert demos == balanced_sample(list(reversed(POOL)), 16, lambda x: x["h1"], seed=1, key=lambda x: x["text"])
    assert demos != balanced_sample(POOL, 16, lambda x: x["h1"], seed=2, key=lambda x: x["text"])
    # four (h1, h2) groups, 4 each
    quad = balanced_sample(POOL, 16, lambda x: (x["h1"], x["h2"]), seed=1, key=lambda x: x["text"])
    assert Counter((d["h1"], d["h2"]) for d in quad) == {(0, 0): 4, (0, 1): 4, (1, 0): 4, (1, 1): 4}


def test_balanced_sample_only_the_named_groups():
    agree = balanced_sample(POOL, 8, lambda x: (x["h1"], x["h2"]), seed=0, key=lambda x: x["text"],
                            groups=[(0, 0), (1, 1)])
    assert Counter((d["h1"], d["h2"]) for d in agree) == {(0, 0): 4, (1, 1): 4}


def test_balanced_sample_refuses_an_imbalance():
    with pytest.raises(WobbleError, match="k=15 .* 2 groups"):
        balanced_sample(POOL, 15, lambda x: x["h1"], seed=0, key=lambda x: x["text"])
    with pytest.raises(WobbleError, match="group 1 has 0 items, 2 needed"):
        balanced_sample([p for p in POOL if p["h1"] == 0], 4, lambda x: x["h1"], seed=0, key=lambda x: x["text"],
                        groups=[0, 1])


def test_icl_template_writes_the_prompt_and_label_words():
    t = ICLTemplate(instance="Input: {text}\nLabel:", answer=" {label}", verbalizer={1: "1", 0: "0"},
                    instructions="Classify.")
    demos = [({"text": "good film"}, 1), ({"text": "dull"}, 0)]
    assert t.prompt(demos, {"text": "great"}) == ("Classify.\n\nInput: good film\nLabel: 1\n\n"
                                                  "Input: dull\nLabel: 0\n\nInput: great\nLabel:")
    assert t.candidates() == {1: " 1", 0: " 0"}
    semantic = ICLTemplate(verbalizer={1: "positive", 0: "negative"}, answer=" {label}\n", separator="\n")
    assert semantic.prompt([({"text": "ok"}, 0)], {"text": "N/A"}) == "Input: ok\nLabel: negative\n\nInput: N/A\nLabel:"
    assert semantic.candidates() == {1: " positive", 0: " negative"}
    with pytest.raises(WobbleError, match="no verbalizer word for label 2"):
        t.demonstration({"text": "x"}, 2)
    with pytest.raises(WobbleError, match="needs field 'text'"):
        t.prompt([], {"sentence": "x"})


# ----------------------------------------------------------------------------------------------- chat


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
