"""Insert / replace ``k`` words of a definition (Gu et al. 2023, Table 3: "insert [5,10] words",
"replace [5,10] words"; §3.1: "insert masks at random positions and replace with words predicted by
pretrained BERT", "randomly replace words by the predictions of pretrained BERT"), the new words coming from
a *proposer*.

* insert - exactly ``k = rng.randint(5, 10)`` words inserted at distinct random slots (before any word, or
  after the last word); capped at the number of slots (``len(words) + 1``).
* replace - exactly ``k`` distinct random words replaced; capped at ``len(words)``.

Exactly ``k``: the positions are a seeded random order of ALL positions; the first ``k`` are tried, and each
position whose proposal is rejected is replaced by the next one of the order (a redraw) until ``k`` edits
apply or no position is left. A proposal is rejected when it is not a single word
(:func:`~wobble.studies.instructions.perturb.is_single_word`), when it is the word it would replace, or when
it equals (ignoring case) a neighbouring word of the result ("the the"): :meth:`MaskSlot.neighbours`, and for
a replacement next to another replacement, the word accepted there.

The perturbation code treats the proposer as a black box: any object with
``propose_many(slots: Sequence[MaskSlot]) -> list[str]`` (batched; see
:mod:`wobble.studies.instructions.proposers`), or a plain callable
``propose(left_context_words, right_context_words) -> str``. Each slot's left and right text is taken from the
ORIGINAL text, so each position is filled independently of the others. :func:`fill_plans` fills many plans
(of many tasks) with ONE ``propose_many`` call per round of redraws.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from wobble.studies.instructions.perturb import K_MAX, K_MIN, draw_k, is_single_word, same_word, word_spans, words


# ----------------------------------------------------------------------- insertion / replacement

@dataclass(frozen=True)
class MaskSlot:
    """One position to fill: the perturbed text would be ``left + WORD + right``.

    ``left`` / ``right`` are taken from the ORIGINAL text (other positions of the same plan are not
    applied). ``original`` is the word being replaced, or None for an insertion.
    """

    left: str
    right: str
    original: str | None = None

    @property
    def kind(self) -> str:
        return "insert" if self.original is None else "replace"

    @property
    def left_words(self) -> list[str]:
        return words(self.left)

    @property
    def right_words(self) -> list[str]:
        return words(self.right)

    @property
    def neighbours(self) -> list[str]:
        """The words right before and right after the position (a proposal must differ from them)."""
        return self.left_words[-1:] + self.right_words[:1]

    def masked(self, mask_token: str) -> str:
        """The text with ``mask_token`` at this position (input of a masked LM)."""
        return self.left + mask_token + self.right


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    prefix: str = ""
    suffix: str = ""
    index: int = 0  # the word (replace) or slot (insert) number in the text


@dataclass(frozen=True)
class EditPlan:
    """``k`` edits to make on ``text`` and every position in the seeded order they are tried (the first ``k``
    first, the rest as redraws); fill with :func:`fill_plans`."""

    text: str
    kind: str  # "insert" | "replace"
    k: int
    order: tuple[_Edit, ...]

    def slot(self, i: int) -> MaskSlot:
        """The :class:`MaskSlot` of position ``order[i]``."""
        ed = self.order[i]
        original = None if self.kind == "insert" else self.text[ed.start:ed.end]
        return MaskSlot(self.text[:ed.start] + ed.prefix, ed.suffix + self.text[ed.end:], original)

    @property
    def slots(self) -> list[MaskSlot]:
        """The slots of the first draw (the first ``k`` positions)."""
        return [self.slot(i) for i in range(self.k)]

    def __len__(self) -> int:
        return self.k


def insertion_slots(text: str) -> list[tuple[int, int, str, str]]:
    """All places a word may be inserted: before each word, and after the last word.

    Each is ``(start, end, prefix, suffix)`` with ``start == end``: the new text is
    ``text[:start] + prefix + WORD + suffix + text[end:]``.
    """
    spans = word_spans(text)
    slots = [(s, s, "", " ") for s, _ in spans]
    if spans:
        end = spans[-1][1]
        slots.append((end, end, " ", ""))
    return slots


def _plan(text: str, kind: str, positions: list[tuple], rng: random.Random, k_min: int, k_max: int) -> EditPlan:
    k = draw_k(rng, len(positions), k_min, k_max)
    order = rng.sample(range(len(positions)), len(positions))
    return EditPlan(text, kind, k, tuple(_Edit(*positions[i], index=i) for i in order))


def plan_insert_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """``k = rng.randint(k_min, k_max)`` insertions (fewer if the text has fewer slots), slots in random order."""
    return _plan(text, "insert", insertion_slots(text), rng, k_min, k_max)


def plan_replace_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """``k = rng.randint(k_min, k_max)`` replacements (fewer if the text has fewer words), words in random order."""
    return _plan(text, "replace", [(s, e, "", "") for s, e in word_spans(text)], rng, k_min, k_max)


def acceptable(plan: EditPlan, i: int, word: str, accepted: Mapping[int, str]) -> bool:
    """Whether ``word`` may fill position ``order[i]`` of ``plan`` given the words ``accepted`` so far
    (order index -> word): a single word, not the replaced word, not equal to a neighbour of the result."""
    if not is_single_word(word):
        return False
    slot = plan.slot(i)
    if same_word(word, slot.original) or any(same_word(word, n) for n in slot.neighbours):
        return False
    if plan.kind == "replace":  # a neighbour that is itself replaced: compare with its new word
        at = {plan.order[j].index: w for j, w in accepted.items()}
        here = plan.order[i].index
        return not any(same_word(word, at.get(n)) for n in (here - 1, here + 1))
    return True


def apply_words(plan: EditPlan, accepted: Mapping[int, str]) -> str:
    """``plan.text`` with ``accepted[i]`` spliced in at position ``order[i]`` for every accepted ``i``."""
    text = plan.text
    for i in sorted(accepted, key=lambda j: plan.order[j].start, reverse=True):
        ed = plan.order[i]
        text = text[:ed.start] + ed.prefix + accepted[i] + ed.suffix + text[ed.end:]
    return text


# ------------------------------------------------------------------------------------ the proposer

@runtime_checkable
class Proposer(Protocol):
    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        """One word per slot ("" when there is no usable proposal)."""
        ...


class CallableProposer:
    """Adapts ``propose(left_context_words, right_context_words) -> str`` to :class:`Proposer`."""

    def __init__(self, fn: Callable[[list[str], list[str]], str]):
        self.fn = fn

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        return [self.fn(s.left_words, s.right_words) for s in slots]


def as_proposer(proposer: Any) -> Proposer:
    """Accept a :class:`Proposer` or a two-argument callable."""
    if hasattr(proposer, "propose_many"):
        return proposer
    if callable(proposer):
        return CallableProposer(proposer)
    raise TypeError(f"a proposer needs propose_many(slots) or to be callable, got {type(proposer).__name__}")


def fill_plans(plans: Sequence[EditPlan], proposer: Any) -> list[str]:
    """Fill every plan with exactly its ``k`` acceptable words where it has enough positions (module
    docstring); ONE ``propose_many`` call per round for all plans. Returns the perturbed texts in order."""
    p = as_proposer(proposer)
    accepted: list[dict[int, str]] = [{} for _ in plans]
    pending = [list(range(plan.k)) for plan in plans]
    next_free = [plan.k for plan in plans]
    while any(pending):
        asks = [(n, i) for n, todo in enumerate(pending) for i in todo]
        proposals = p.propose_many([plans[n].slot(i) for n, i in asks])
        if len(proposals) != len(asks):
            raise ValueError(f"proposer returned {len(proposals)} words for {len(asks)} slots")
        pending = [[] for _ in plans]
        for (n, i), word in zip(asks, proposals):
            word = (word or "").strip()
            if acceptable(plans[n], i, word, accepted[n]):
                accepted[n][i] = word
            elif next_free[n] < len(plans[n].order):  # redraw: the next position of the seeded order
                pending[n].append(next_free[n])
                next_free[n] += 1
    return [apply_words(plan, acc) for plan, acc in zip(plans, accepted)]


def insert_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Insert exactly ``k = rng.randint(k_min, k_max)`` proposed words at random distinct slots."""
    return fill_plans([plan_insert_words(text, rng, k_min, k_max)], propose)[0]


def replace_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Replace exactly ``k = rng.randint(k_min, k_max)`` random distinct words by proposals for their position."""
    return fill_plans([plan_replace_words(text, rng, k_min, k_max)], propose)[0]


__all__ = ["MaskSlot", "EditPlan", "insertion_slots", "plan_insert_words", "plan_replace_words", "acceptable",
           "apply_words", "Proposer", "CallableProposer", "as_proposer", "fill_plans", "insert_words",
           "replace_words"]
