"""How the followup ledger words its above-chance precondition (:func:`.claims_measure.above_chance` decides it,
unchanged): a one-sided exact binomial test at p < 0.05 on a dataset's items, which on a small sample fails for
want of items more than for want of accuracy (on 12 yes/no items it needs 10 right). Where it fails, the row's
reason says "not shown above chance (12 items per dataset)" (:func:`reworded`), not "above chance" as if the
model had been shown at chance; the ledger's notes say how many right each chance level needs (:func:`note`).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from wobble.stats import binomial_p_above
from wobble.studies.followup.claims_measure import ALPHA, chance, initial_accuracy

#: The precondition's name (:mod:`.claims`) as the engine prints it among a row's failed checks.
NAME = "above chance"
ALL = ""


def _span(ns: Iterable[int]) -> str:
    v = sorted(set(ns))
    return "" if not v else str(v[0]) if len(v) == 1 else f"{v[0]}–{v[-1]}"


def items_per_dataset(scores: Iterable[Mapping[str, Any]], own_temps: Mapping[str, str]) -> dict[str, str]:
    """Model -> the items its datasets' tests rest on ("12", or "12–20" where they differ); :data:`ALL` -> over
    every model (the pooled and existence rows)."""
    scores = list(scores)
    per = {m: [n for _, n in initial_accuracy([s for s in scores if s["model"] == m], own).values()]
           for m, own in own_temps.items()}
    return {**{m: _span(ns) for m, ns in per.items()}, ALL: _span(n for ns in per.values() for n in ns)}


def reworded(reason: str, items: str) -> str:
    """The reason with the failed precondition named "not shown above chance (``items`` items per dataset)"."""
    if not items:
        return reason
    return re.sub(rf"(failed: |despite ){NAME} \(", rf"\1not shown {NAME} ({items} items per dataset) (", reason)


def needed(n: int, p: float) -> int | None:
    """The fewest right of ``n`` that the test shows above chance ``p`` (None: not even ``n``)."""
    return next((k for k in range(n + 1) if binomial_p_above(k, n, p) < ALPHA), None)


def note(n: int, datasets: Iterable[str]) -> str:
    """The notes' line: on ``n`` items per dataset, how many right each chance level of ``datasets`` needs."""
    levels: dict[float, list[str]] = {}
    for d in datasets:
        levels.setdefault(chance(d), []).append(d)
    parts = [f"{needed(n, c)} of {n} right at chance {100 * c:.0f}% ({', '.join(ds)})"
             for c, ds in sorted(levels.items(), reverse=True)]
    return (f"Above chance (the precondition): a one-sided exact binomial test at p < {ALPHA:g} on {n} items per "
            f"dataset, which needs at least " + "; ".join(parts) + ". A model 'not shown above chance' is not shown "
            "at chance either: on so few items the sample's size drives the test.")
