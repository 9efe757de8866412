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


def test_a_letter_is_read_in_any_case_with_spaces_around_it():
    assert letter_to_option(["A", "B"], ["Yes", "No"], " b ") == "No"
    assert letter_to_option(["A", "B"], ["Yes", "No"], None) is None
    assert letter_to_option(["A", "B"], ["Yes", "No"], "C") is None


def test_an_option_is_found_under_its_own_letter():
    assert option_to_letter(["A", "B", "C"], ["Yes", "No", "Maybe"], "Maybe") == "C"
    assert option_to_letter(["A", "B"], ["Yes", "No"], "Perhaps") is None


def _reference_permutation(n, *parts):
    """The module docstring's algorithm, written out: Fisher-Yates from the last position, each j drawn by
    rejection sampling below the largest multiple of i + 1 under 2**64 from the sha256 counter stream."""
    base = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    perm, counter = list(range(n)), 0
    for i in range(n - 1, 0, -1):
        m = i + 1
        while True:
            x = int.from_bytes(hashlib.sha256(base + counter.to_bytes(8, "big")).digest()[:8], "big")
            counter += 1
            if x < 2**64 - 2**64 % m:
                break
        j = x % m
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@pytest.mark.parametrize("n", [2, 3, 5, 7, 10, 26])
def test_seeded_permutations_follow_the_documented_algorithm(n):
    for parts in (("s", 0, 0, "q1"), ("wobble.first_token.shuffle", 3, 9, "W2/Q7", "Yes", "No")):
        assert seeded_permutation(n, *parts) == _reference_permutation(n, *parts)


def test_option_letters_from_one_to_twenty_six():
    assert option_letters(1) == ["A"] and option_letters(26)[-1] == "Z"


def test_the_default_question_key_is_empty_and_the_salt_is_passed_on():
    opts = [f"option {i}" for i in range(9)]  # 9! orders: another key or salt gives another one
    assert shuffle_options(opts, 0, 1) == shuffle_options(opts, 0, 1, "")
    assert shuffled_mcq("Q?", opts, 0, 1)["permutation"] == shuffled_mcq("Q?", opts, 0, 1, "")["permutation"]
    assert shuffled_mcq("Q?", opts, 0, 1, "k", salt="s")["permutation"] == shuffle_options(opts, 0, 1, "k", salt="s")


def test_an_answer_letter_only_for_an_answer_in_range():
    assert "answer_letter" not in shuffled_mcq("Q?", ["Yes", "No"], 0, 0)
    with pytest.raises(ValueError, match="answer index 2 out of range for 2 options"):
        shuffled_mcq("Q?", ["Yes", "No"], 0, 0, answer=2)
