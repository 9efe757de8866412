"""Seeded perturbations of a task definition (Gu et al. 2023, §2.2 and Table 3).

Every perturbation is a small pure function of the definition text and a ``random.Random``; the
random generator is seeded by :func:`wobble.seeding.derive_seed` from (run seed, task name, condition key), so
the same inputs always give the same text, independently of process, platform or ``PYTHONHASHSEED``.

Words
-----
A *word* is a maximal run of letters and digits (any script), where runs joined by an apostrophe or a
hyphen count as one word ("you're", "O'Neil", "key-value", "B-PER"): regex :data:`WORD_RE`. This is a
context-free definition, so deleting, inserting or replacing one word never changes how the rest of the
text splits into words, and every contract below holds exactly on :func:`words`. (Apart from the
apostrophe/hyphen joining, it is the word split of BERT's basic tokenizer that the authors' fork used:
punctuation and underscores are not words.)

Word level
  * :func:`delete_stopwords` - every word that is a spaCy English stop word (``STOP_WORDS``,
    case-insensitive) is removed; a contraction counts as a stop word when every piece spaCy's
    tokenizer splits it into is one ("you're" -> "you" + "'re", "can't" -> "ca" + "n't").
  * :func:`delete_words` - ``k = rng.randint(5, 10)`` random words removed, capped at ``len(words) - 1``
    for short texts (at least one word always remains). The remaining words keep their order.
  * insert / replace ``k`` words: :mod:`wobble.studies.instructions.insert_replace` (the words come from
    a proposer, :mod:`wobble.studies.instructions.proposers`).
  * :func:`shuffle_words` - the whitespace-separated chunks are permuted and joined by single spaces,
    so punctuation travels with its word, exactly as in the paper's Table 3 example
    ("... need task, In the will ..."). The multiset of words is unchanged.

Sentence level (sentences from spaCy's rule-based ``sentencizer``; stripped, empty ones dropped)
  * :func:`repeat_sentence` - one random sentence is copied right after itself (the authors' fork; the
    paper only says "repeating a random sentence", §3.1).
  * :func:`shuffle_sentences` - the sentences are permuted (a different order whenever the text has
    at least two distinct sentences) and joined by single spaces.
  Both join with one space, as the authors' fork did; a sentence without final punctuation (in SuperNI
  often the last one) then runs into the one after it, and newlines between sentences become spaces.

Instruction level
  * :func:`shuffle_instructions` - the definition of another, randomly chosen task.

Whitespace when deleting: removing a word also removes one of the two whitespace runs around it (the
one with more newlines; the left one on a tie), and none is kept where the word was attached to a
closing punctuation mark on its right ("task," -> ",") or an opening one on its left ("(task" -> "(").
Nothing else in the text changes.

Reference: the paper's authors' fork (jiashenggu/Tk-Instruct ``src/ni_dataset_perturb.py``) used
BERT word pieces and bert-base-multilingual-cased fill-mask with a fixed count of 10; it inserted a
repeated sentence right after its original and could pick the task itself in shuffle_instructions.
This module follows the paper's description where it says something ([5, 10] words; Table 3 examples; a
different task's definition) and the fork where the paper is silent (where the repeated sentence goes); see
``wobble.studies.instructions.conditions`` for the condition registry.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

K_MIN, K_MAX = 5, 10  # the paper's "[5,10] words"

_OPENERS = set("([{“‘\"'")
_CLOSERS = set(",.;:!?)]}”’\"'%")  # an apostrophe before a letter ("'s") is not a closer


# ------------------------------------------------------------------------------------ tokenization

WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


@lru_cache(maxsize=1)
def _nlp():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """spaCy's English stop-word list (lower-case)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def is_stop_word(word: str) -> bool:
    """True if ``word`` (case-insensitive) is a spaCy stop word, or all the pieces spaCy splits it into are."""
    sw = stop_words()
    low = word.lower()
    if low in sw:
        return True
    if not any(ch in "'’" for ch in low):
        return False
    pieces = [t.text for t in _nlp().tokenizer(low) if any(ch.isalnum() for ch in t.text)]
    return bool(pieces) and all(p in sw for p in pieces)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the words of ``text`` (see :data:`WORD_RE`)."""
    return [m.span() for m in WORD_RE.finditer(text)]


def words(text: str) -> list[str]:
    """The words of ``text``, in order (see :data:`WORD_RE`)."""
    return WORD_RE.findall(text)


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` by spaCy's rule-based sentencizer, stripped, empty ones dropped."""
    doc = _nlp()(text)
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def is_single_word(s: str) -> bool:
    """True if ``s`` is exactly one word (a full match of :data:`WORD_RE`)."""
    return bool(s) and WORD_RE.fullmatch(s) is not None


def same_word(a: str, b: str | None) -> bool:
    """``a`` and ``b`` are the same word, ignoring case."""
    return b is not None and a.lower() == b.lower()


# -------------------------------------------------------------------------------------- deletion

def _delete_span(text: str, start: int, end: int) -> str:
    """Remove ``text[start:end]`` (one word) and tidy the whitespace around it (module docstring)."""
    ls = start
    while ls > 0 and text[ls - 1].isspace():
        ls -= 1
    re_ = end
    while re_ < len(text) and text[re_].isspace():
        re_ += 1
    left_ws, right_ws = text[ls:start], text[end:re_]
    a = text[ls - 1] if ls > 0 else None
    b = text[re_] if re_ < len(text) else None
    if a is None:
        gap = left_ws          # keep any leading whitespace of the text
    elif b is None:
        gap = right_ws         # keep any trailing whitespace of the text
    elif not left_ws and not right_ws:
        gap = ""
    elif left_ws and right_ws:
        gap = right_ws if right_ws.count("\n") > left_ws.count("\n") else left_ws
    else:
        attached_closer = not right_ws and b in _CLOSERS and not (
            b in "'’" and re_ + 1 < len(text) and text[re_ + 1].isalnum())
        attached_opener = not left_ws and a in _OPENERS
        gap = "" if (attached_closer or attached_opener) else (left_ws or right_ws)
    return text[:ls] + gap + text[re_:]


def _delete_word_indices(text: str, spans: Sequence[tuple[int, int]], indices: Iterable[int]) -> str:
    for i in sorted(set(indices), reverse=True):  # right to left: earlier offsets stay valid
        s, e = spans[i]
        text = _delete_span(text, s, e)
    return text


def delete_stopwords(text: str) -> str:
    """Remove every word whose lower-case form is in spaCy's English ``STOP_WORDS``."""
    spans = word_spans(text)
    drop = [i for i, (s, e) in enumerate(spans) if is_stop_word(text[s:e])]
    return _delete_word_indices(text, spans, drop)


def draw_k(rng: random.Random, available: int, k_min: int = K_MIN, k_max: int = K_MAX) -> int:
    k = rng.randint(k_min, k_max)  # always drawn, so the rng stream does not depend on the text length
    return max(0, min(k, available))


def delete_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Remove ``k = rng.randint(k_min, k_max)`` random words (at most ``len(words) - 1``)."""
    spans = word_spans(text)
    k = draw_k(rng, len(spans) - 1, k_min, k_max)
    drop = rng.sample(range(len(spans)), k)
    return _delete_word_indices(text, spans, drop)



# ------------------------------------------------------------------------------------ permutations

def _permute_differently(items: list, rng: random.Random, tries: int = 100) -> list:
    """A random permutation of ``items``; different from the input whenever two items differ."""
    perm = list(items)
    if len(set(items)) < 2:
        rng.shuffle(perm)
        return perm
    for _ in range(tries):
        rng.shuffle(perm)
        if perm != items:
            return perm
    return items[1:] + items[:1]  # a rotation always differs when two items differ


def shuffle_words(text: str, rng: random.Random) -> str:
    """Permute the whitespace-separated chunks (words with their attached punctuation)."""
    chunks = text.split()
    return " ".join(_permute_differently(chunks, rng))


def repeat_sentence(text: str, rng: random.Random) -> str:
    """Copy one random sentence right after itself; the sentences are joined by single spaces.

    The paper (§3.1): "sentence-level perturbations, such as i) repeating a random sentence"; its Table 3
    example repeats the last sentence of task1557 at the end, which fits either placement. Where the copy
    goes is the authors' fork (jiashenggu/Tk-Instruct ``src/ni_dataset_perturb.py``,
    ``DataAugmentation.repeat_sentences``): ``sents[:index] + [sents[index]] + sents[index:]``, joined with
    ``" "``.
    """
    sents = sentences(text)
    if not sents:
        return text
    i = rng.randrange(len(sents))
    return " ".join(sents[:i + 1] + sents[i:])


def shuffle_sentences(text: str, rng: random.Random) -> str:
    """Permute the sentences (a different order whenever possible), joined by single spaces."""
    sents = sentences(text)
    if len(sents) < 2:
        return text
    return " ".join(_permute_differently(sents, rng))


def pick_other_task(task: str, tasks: Iterable[str], rng: random.Random,
                    definitions_by_task: Mapping[str, str] | None = None) -> str:
    """A random task other than ``task`` (preferring one whose definition text differs)."""
    others = sorted(t for t in set(tasks) if t != task)
    if not others:
        raise ValueError(f"shuffle_instructions needs at least one task other than {task!r}")
    if definitions_by_task is not None and task in definitions_by_task:
        own = definitions_by_task[task].strip()
        differing = [t for t in others if definitions_by_task[t].strip() != own]
        others = differing or others
    return rng.choice(others)


def shuffle_instructions(task: str, definitions_by_task: Mapping[str, str], rng: random.Random) -> str:
    """The definition of a different, randomly chosen task of ``definitions_by_task``."""
    other = pick_other_task(task, definitions_by_task.keys(), rng, definitions_by_task)
    return definitions_by_task[other]


__all__ = [
    "K_MIN", "K_MAX", "WORD_RE", "words", "word_spans", "sentences", "stop_words",
    "is_stop_word", "is_single_word", "same_word", "delete_stopwords", "delete_words", "shuffle_words",
    "repeat_sentence", "shuffle_sentences", "pick_other_task", "shuffle_instructions",
]
