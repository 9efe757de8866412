"""wobble.adapters.mcq: option shuffles and letters, the shuffled prompt; permutations written out by hand."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from wobble.adapters.mcq import (apply_permutation, format_options, letter_to_option, option_letters,
                                 option_to_letter, seeded_permutation, shuffle_options, shuffled_mcq)


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
