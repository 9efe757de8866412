"""In-context learning prompts: a seeded class-balanced demonstration sampler and templates.

Sampler: ``k`` demonstrations with the same number from every class (or every (h1, h2) group:
Si et al. 2023 §2 show 16 demonstrations where the task label h1 and a spurious feature h2 agree,
half of each label), each class's share chosen by :func:`wobble.seeding.seeded_sample` and the
whole set put in a seeded order. Unlike HELM's ``sample_examples`` (which cycles through labels by
frequency and may give unequal counts), an exact balance is required: a class with too few items
is an error, not a silent imbalance.

Template: an instance format (fields from the item), the verbalized label that follows it (the
answer the model should continue with), a separator and optional instructions before the
demonstrations. :meth:`ICLTemplate.candidates` gives the label words to score as the next token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Sequence

from wobble.errors import WobbleError
from wobble.seeding import seeded_order, seeded_sample

DEFAULT_SALT = "wobble.icl.demos"


def balanced_sample(items: Sequence[Any], k: int, group_of: Callable[[Any], Hashable], seed: int, *,
                    key: Callable[[Any], str], groups: Sequence[Hashable] | None = None,
                    salt: str = DEFAULT_SALT) -> list[Any]:
    """``k`` items, ``k / len(groups)`` from each group, in a seeded order.

    ``groups`` (default: every group present, sorted) are the classes to balance over; items of
    other groups are never chosen. ``key(item)`` is a stable identity (e.g. the text) that seeds
    the choice, so adding items to a pool leaves the relative ranking of the old ones unchanged.
    """
    by_group: dict[Hashable, list[Any]] = {}
    for item in items:
        by_group.setdefault(group_of(item), []).append(item)
    wanted = list(groups) if groups is not None else sorted(by_group, key=repr)
    if not wanted:
        raise WobbleError("balanced_sample: no groups to sample from")
    if int(k) < 0 or int(k) % len(wanted):
        raise WobbleError(f"balanced_sample: k={k} demonstrations cannot be split equally over {len(wanted)} "
                          f"groups {wanted}")
    per = int(k) // len(wanted)
    chosen: list[Any] = []
    for g in wanted:
        pool = by_group.get(g, [])
        if len(pool) < per:
            raise WobbleError(f"balanced_sample: group {g!r} has {len(pool)} items, {per} needed for k={k}")
        chosen += seeded_sample(pool, per, seed, key, salt=f"{salt}|{g!r}")
    return seeded_order(chosen, seed, key, salt=f"{salt}|order")


def _fill(template: str, values: Mapping[str, Any], what: str) -> str:
    try:
        return template.format_map(values)
    except KeyError as e:
        raise WobbleError(f"{what} template {template!r} needs field {e.args[0]!r}; the item has "
                          f"{sorted(values)}") from None


@dataclass(frozen=True)
class ICLTemplate:
    """How demonstrations and the query are written.

    ``instance``: the item (fields from the item dict, e.g. ``"Input: {text}\\nLabel:"``);
    ``answer``: what follows it in a demonstration, with field ``label`` = the verbalized label
    (``" {label}"``); ``verbalizer``: label -> word (``{1: "1", 0: "0"}``, or a semantic one such
    as ``{1: "positive", 0: "negative"}``); ``separator`` between demonstrations; ``instructions``
    written first (followed by ``separator``) when not empty.
    """

    instance: str = "Input: {text}\nLabel:"
    answer: str = " {label}"
    verbalizer: Mapping[Hashable, str] = field(default_factory=lambda: {1: "1", 0: "0"})
    separator: str = "\n\n"
    instructions: str = ""

    def verbalize(self, label: Hashable) -> str:
        if label not in self.verbalizer:
            raise WobbleError(f"no verbalizer word for label {label!r}; it has {sorted(self.verbalizer, key=repr)}")
        return self.verbalizer[label]

    def demonstration(self, item: Mapping[str, Any], label: Hashable) -> str:
        """One demonstration: the instance, then its verbalized label."""
        return (_fill(self.instance, item, "instance")
                + _fill(self.answer, {"label": self.verbalize(label)}, "answer"))

    def prompt(self, demonstrations: Sequence[tuple[Mapping[str, Any], Hashable]], query: Mapping[str, Any]) -> str:
        """Instructions, the demonstrations ``(item, label)`` in the given order, then the query
        instance, which ends where the model's label word comes next."""
        parts = [self.instructions] if self.instructions else []
        parts += [self.demonstration(item, label) for item, label in demonstrations]
        parts.append(_fill(self.instance, query, "instance"))
        return self.separator.join(parts)

    def candidates(self) -> dict[Hashable, str]:
        """label -> the text scored as the model's next token(s): the answer with that label word
        (trailing whitespace removed; leading whitespace kept: " 1" after "Label:")."""
        return {label: _fill(self.answer, {"label": word}, "answer").rstrip()
                for label, word in self.verbalizer.items()}
