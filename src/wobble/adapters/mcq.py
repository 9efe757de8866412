"""Multiple-choice prompts: options shown under letters, in a seeded shuffled order.

A shuffle is a pure function of named parts (study salt, run seed, shuffle index, question key and
the options themselves): a Fisher-Yates shuffle driven by a sha256 counter stream, so the same
parts give the same order on every machine and Python version, and two questions with the same
option list but different keys are shuffled independently. ``shown[i] = options[perm[i]]``.

The first_token study (Wang et al. 2024 §3.1: 10 option shuffles per question) uses exactly this
scheme; ``shuffle_options(options, seed, i, key, salt="wobble.first_token.shuffle")`` reproduces its
permutations, and ``format_options(shown, line="{letter}. {option} \\n")`` its option lines.
"""

from __future__ import annotations

import hashlib
import string
from typing import Any, Sequence

from wobble.seeding import SEP

LETTERS = string.ascii_uppercase
DEFAULT_SALT = "wobble.mcq.shuffle"


def option_letters(n: int) -> list[str]:
    """``["A", "B", ...]`` for ``n`` options (1 to 26)."""
    if not 0 < n <= len(LETTERS):
        raise ValueError(f"need 1..{len(LETTERS)} options, got {n}")
    return list(LETTERS[:n])


def _uniform_below(n: int, counter: list[int], base: bytes) -> int:
    """Unbiased integer in [0, n) from the sha256 counter stream of ``base`` (rejection sampling)."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        block = hashlib.sha256(base + counter[0].to_bytes(8, "big")).digest()
        counter[0] += 1
        x = int.from_bytes(block[:8], "big")
        if x < limit:
            return x % n


def seeded_permutation(n: int, *parts: Any) -> list[int]:
    """A permutation of ``range(n)``: Fisher-Yates on sha256 of ``parts`` joined by U+001F."""
    perm = list(range(n))
    base = hashlib.sha256(SEP.join(str(p) for p in parts).encode("utf-8")).digest()
    counter = [0]
    for i in range(n - 1, 0, -1):
        j = _uniform_below(i + 1, counter, base)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def shuffle_options(options: Sequence[str], seed: int, shuffle_index: int, key: str = "", *,
                    salt: str = DEFAULT_SALT) -> list[int]:
    """The seeded permutation of ``options`` for shuffle number ``shuffle_index`` of question ``key``."""
    return seeded_permutation(len(options), salt, seed, shuffle_index, key, *options)


def apply_permutation(options: Sequence[str], perm: Sequence[int]) -> list[str]:
    """The options in shown order (``shown[i] = options[perm[i]]``)."""
    if sorted(perm) != list(range(len(options))):
        raise ValueError(f"not a permutation of {len(options)} options: {list(perm)}")
    return [options[i] for i in perm]


def format_options(shown: Sequence[str], line: str = "{letter}. {option}\n") -> str:
    """The options under their letters, one ``line`` each (fields ``letter``, ``option``), joined."""
    return "".join(line.format(letter=lt, option=opt) for lt, opt in zip(option_letters(len(shown)), shown))


def letter_to_option(letters: Sequence[str], shown: Sequence[str], letter: str | None) -> str | None:
    """The option that ``letter`` (any case, spaces ignored) stands for, or ``None``."""
    if letter is None:
        return None
    letter = letter.strip().upper()
    return next((opt for lt, opt in zip(letters, shown) if lt == letter), None)


def option_to_letter(letters: Sequence[str], shown: Sequence[str], option: str) -> str | None:
    """The letter ``option`` is shown under, or ``None``."""
    return next((lt for lt, opt in zip(letters, shown) if opt == option), None)


def shuffled_mcq(question: str, options: Sequence[str], seed: int, shuffle_index: int, key: str = "", *,
                 answer: int | None = None, template: str = "Question: {question}\n{options}Answer:",
                 line: str = "{letter}. {option}\n", salt: str = DEFAULT_SALT) -> dict:
    """One shuffled multiple-choice prompt and what scoring it needs.

    ``template`` has the fields ``question`` and ``options`` (the :func:`format_options` block).
    Returns ``{"text", "letters", "shown_options", "permutation"}`` + ``"answer_letter"`` when
    ``answer`` (the index of the correct option in ``options``) is given. ``shuffle_index=0`` is a
    shuffle too; pass ``perm=range(n)`` to :func:`apply_permutation` for the original order.
    """
    perm = shuffle_options(options, seed, shuffle_index, key, salt=salt)
    shown = apply_permutation(options, perm)
    letters = option_letters(len(shown))
    out = {"text": template.format(question=question, options=format_options(shown, line)), "letters": letters,
           "shown_options": shown, "permutation": perm}
    if answer is not None:
        if not 0 <= answer < len(options):
            raise ValueError(f"answer index {answer} out of range for {len(options)} options")
        out["answer_letter"] = letters[perm.index(answer)]
    return out
