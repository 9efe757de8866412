"""The study's prompts (Wang et al. 2024, §3): a seeded sample of the 414 OpinionQA questions, each under every
constraint level and option shuffle, one record per prompt (see :func:`build_prompts` for the fields)."""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence


from wobble import seeding as _seeding
from wobble.errors import DataError
from wobble.studies.first_token.prompts import (
    LETTERS,
    REFUSED,
    shuffled_prompt,
)
from wobble.studies.first_token.layout import SAMPLE_SALT


# ----------------------------------------------------------------------------------------- prompts


def seeded_sample(items: Sequence[Any], n: int | None, seed: int, key: Callable[[Any], str]) -> list[Any]:
    """``n`` items chosen by the seeded rank of ``key(item)`` (:func:`wobble.seeding.seeded_sample`)."""
    return _seeding.seeded_sample(items, n, seed, key, salt=SAMPLE_SALT)


def seeded_order(items: Sequence[Any], seed: int, key: Callable[[Any], str]) -> list[Any]:
    """All items in a seeded pseudo-random order (:func:`wobble.seeding.seeded_order`)."""
    return _seeding.seeded_order(items, seed, key, salt=SAMPLE_SALT)


def _check_question(rec: Any, path, lineno: int) -> None:
    where = f"line {lineno}"
    if not isinstance(rec, Mapping):
        raise DataError(path, where, "a JSON object (an opinionqa_414 question)")
    for key in ("uid", "question"):
        if not isinstance(rec.get(key), str) or not rec.get(key):
            raise DataError(path, where, f"field '{key}' should be a non-empty string, got {rec.get(key)!r:.60}")
    opts = rec.get("options")
    if not isinstance(opts, list) or not all(isinstance(o, str) and o for o in opts):
        raise DataError(path, where, f"field 'options' should be a list of non-empty strings, got {opts!r:.80}")
    if not 2 <= len(opts) <= len(LETTERS):
        raise DataError(path, where, f"2..{len(LETTERS)} options, got {len(opts)}")
    if len(set(opts)) != len(opts):
        raise DataError(path, where, f"distinct options, got {opts!r:.80}")
    if REFUSED not in opts:
        raise DataError(path, where, f"an options list that includes {REFUSED!r} (the refusal option)")


def sample_questions(records: Sequence[Mapping], n: int | None, seed: int, path: str | os.PathLike = "<opinionqa_414>"
                     ) -> list[dict]:
    """Validate the ``opinionqa_414`` records and return a seeded sample of ``n`` (None = all), file order."""
    seen: set[str] = set()
    for i, rec in enumerate(records, 1):
        _check_question(rec, path, i)
        if rec["uid"] in seen:
            raise DataError(path, f"line {i}", f"a unique 'uid', {rec['uid']!r} repeats")
        seen.add(rec["uid"])
    if not records:
        raise DataError(path, "(file)", "at least one question")
    return [dict(r) for r in seeded_sample(records, n, seed, key=lambda r: r["uid"])]


def build_prompts(questions: Sequence[Mapping], constraints: Sequence[str], n_shuffles: int, seed: int) -> list[dict]:
    """One record per (question, constraint, shuffle), in that nesting order (see module docstring)."""
    out = []
    for q in questions:
        for c in constraints:
            for s in range(int(n_shuffles)):
                sp = shuffled_prompt(q["question"], q["options"], c, seed, s, key=q["uid"])
                out.append({
                    "uid": f"{q['uid']}|{c}|{s}",
                    "question_uid": q["uid"],
                    "qkey": q.get("qkey"),
                    "question": q["question"],
                    "options": list(q["options"]),
                    "constraint": c,
                    "shuffle": s,
                    "letters": sp["letters"],
                    "shown_options": sp["shown_options"],
                    "permutation": sp["permutation"],
                    "refusal_letter": sp["refusal_letter"],
                    "messages": sp["messages"],
                })
    return out
