"""Seeds, one copy for every study: every split, sample, shuffle and draw in wobble is a pure function of
named parts (run seed, task, condition, ...) through these helpers, never of Python's salted ``hash()``
or of process state, so the same inputs give byte-identical outputs on any machine."""

from __future__ import annotations

import hashlib
import random
from typing import Any, Callable, Sequence

SEP = "\x1f"


def derive_seed(*parts: Any) -> int:
    """A 64-bit seed from ``parts`` (e.g. run seed, task, condition), stable across processes.

    sha256 of the parts' ``str()`` joined by U+001F, first 8 bytes big-endian.
    """
    payload = SEP.join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(payload).digest()[:8], "big")


def make_rng(*parts: Any) -> random.Random:
    """``random.Random(derive_seed(*parts))``."""
    return random.Random(derive_seed(*parts))


def rank_key(salt: str, seed: int, key: str) -> str:
    """A pseudo-random sort key for ``key`` under ``(salt, seed)``: sha256 hex digest."""
    return hashlib.sha256(f"{salt}{SEP}{seed}{SEP}{key}".encode()).hexdigest()


def seeded_sample(items: Sequence[Any], n: int | None, seed: int, key: Callable[[Any], str], *,
                  salt: str) -> list[Any]:
    """``n`` items chosen by the rank of ``(salt, seed, key(item))``, returned in their input order.

    Adding items never changes which of the old items a smaller sample picks relative to each other
    (the rank of an item depends on that item alone). ``n=None`` or ``n >= len(items)``: all items.
    """
    items = list(items)
    if n is None or n >= len(items):
        return items
    chosen = set(sorted(range(len(items)), key=lambda i: (rank_key(salt, seed, key(items[i])), i))[: int(n)])
    return [x for i, x in enumerate(items) if i in chosen]


def seeded_order(items: Sequence[Any], seed: int, key: Callable[[Any], str], *, salt: str) -> list[Any]:
    """All items in a seeded pseudo-random order (rank of ``(salt, seed, key(item))``)."""
    return sorted(items, key=lambda x: rank_key(salt, seed, key(x)))
