"""wobble.adapters.mcq: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

import hashlib

import pytest

from wobble.adapters.mcq import (letter_to_option, option_letters, option_to_letter, seeded_permutation,
                                 shuffle_options, shuffled_mcq)


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
