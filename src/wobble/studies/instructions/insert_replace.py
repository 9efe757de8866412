"""Insert / replace ``k`` words of a definition (Gu et al. 2023, Table 3: "insert [5,10] words",
"replace [5,10] words"), the new words coming from a *proposer*.

* insert - ``k = rng.randint(5, 10)`` words inserted at ``k`` distinct random slots (before any word, or
  after the last word); capped at the number of slots (``len(words) + 1``).
* replace - ``k`` distinct random words replaced; capped at ``len(words)``.

The perturbation code treats the proposer as a black box: any object with
``propose_many(slots: Sequence[MaskSlot]) -> list[str]`` (batched; see
:mod:`wobble.studies.instructions.proposers`), or a plain callable
``propose(left_context_words, right_context_words) -> str``.

For batching, insertion and replacement are split into a plan and an application:
``plan = plan_insert_words(text, rng)`` draws the positions, ``plan.slots`` lists one
:class:`MaskSlot` per position (the exact text left and right of the masked position, computed on the
ORIGINAL text, so each position is filled independently of the others), and
``apply_plan(plan, proposals)`` splices the words in. :func:`propose_for_plans` fills many plans (of
many tasks) with ONE proposer call. A proposal that is not a single word (see
:func:`~wobble.studies.instructions.perturb.is_single_word`) leaves its position unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from wobble.studies.instructions.perturb import K_MAX, K_MIN, draw_k, is_single_word, word_spans, words


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

    def masked(self, mask_token: str) -> str:
        """The text with ``mask_token`` at this position (input of a masked LM)."""
        return self.left + mask_token + self.right


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class EditPlan:
    """Positions drawn for :func:`insert_words` / :func:`replace_words` on ``text``; fill with :func:`apply_plan`."""

    text: str
    kind: str  # "insert" | "replace"
    edits: tuple[_Edit, ...] = field(default_factory=tuple)

    @property
    def slots(self) -> list[MaskSlot]:
        out = []
        for ed in self.edits:
            original = None if self.kind == "insert" else self.text[ed.start:ed.end]
            out.append(MaskSlot(self.text[:ed.start] + ed.prefix, ed.suffix + self.text[ed.end:], original))
        return out

    def __len__(self) -> int:
        return len(self.edits)


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


def plan_insert_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """Draw ``k = rng.randint(k_min, k_max)`` distinct insertion slots (fewer if the text has fewer)."""
    slots = insertion_slots(text)
    k = draw_k(rng, len(slots), k_min, k_max)
    chosen = sorted(rng.sample(range(len(slots)), k))
    return EditPlan(text, "insert", tuple(_Edit(*slots[i]) for i in chosen))


def plan_replace_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """Draw ``k = rng.randint(k_min, k_max)`` distinct replaceable words (fewer if the text has fewer)."""
    spans = word_spans(text)
    k = draw_k(rng, len(spans), k_min, k_max)
    chosen = sorted(rng.sample(range(len(spans)), k))
    return EditPlan(text, "replace", tuple(_Edit(*spans[i]) for i in chosen))


def apply_plan(plan: EditPlan, proposals: Sequence[str]) -> str:
    """Splice ``proposals[i]`` into position ``i`` of ``plan``; a non-word proposal leaves it unchanged."""
    if len(proposals) != len(plan.edits):
        raise ValueError(f"plan has {len(plan.edits)} positions but {len(proposals)} proposals were given")
    text = plan.text
    for ed, word in sorted(zip(plan.edits, proposals), key=lambda p: p[0].start, reverse=True):
        word = (word or "").strip()
        if not is_single_word(word):
            continue
        text = text[:ed.start] + ed.prefix + word + ed.suffix + text[ed.end:]
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


def propose_for_plans(plans: Sequence[EditPlan], proposer: Any) -> list[str]:
    """Fill all ``plans`` with ONE ``propose_many`` call; returns the perturbed texts in order."""
    p = as_proposer(proposer)
    slots = [slot for plan in plans for slot in plan.slots]
    proposals = p.propose_many(slots) if slots else []
    if len(proposals) != len(slots):
        raise ValueError(f"proposer returned {len(proposals)} words for {len(slots)} slots")
    out, i = [], 0
    for plan in plans:
        out.append(apply_plan(plan, proposals[i:i + len(plan)]))
        i += len(plan)
    return out


def insert_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Insert ``k = rng.randint(k_min, k_max)`` proposed words at random distinct slots."""
    return propose_for_plans([plan_insert_words(text, rng, k_min, k_max)], propose)[0]


def replace_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Replace ``k = rng.randint(k_min, k_max)`` random distinct words by proposals for their position."""
    return propose_for_plans([plan_replace_words(text, rng, k_min, k_max)], propose)[0]


__all__ = ["MaskSlot", "EditPlan", "insertion_slots", "plan_insert_words", "plan_replace_words", "apply_plan",
           "Proposer", "CallableProposer", "as_proposer", "propose_for_plans", "insert_words", "replace_words"]
