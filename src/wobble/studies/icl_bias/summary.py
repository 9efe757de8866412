"""One model's score records -> the study's tidy numbers, at every level the paper reports.

Levels: ``pair`` (one dataset / feature pair: Table 3, Figure 2), ``row`` (the pairs sharing a row
of Tables 4-5, e.g. the two MNLI genre pairs), ``dataset`` (the "Aggregate" rows of Tables 4-5 and
Figure 3: mean over the dataset's pairs, so a feature with two pairs counts twice, as the paper's NLI
aggregate does) and ``all`` (Table 2: mean over every available pair; the paper does not state its
exact averaging). For each group and condition: h1-, h2- and neither-accuracy (%), and for an
intervention its effect on the intended feature's accuracy (points) against the baseline, each with a
bootstrap 95 % interval over test items (:mod:`.metrics`).

A row: ``{"level", "group", "code", "condition", "intervention", "target", "measure" ("h1" | "h2" |
"neither" | "effect"), "value", "ci_low", "ci_high", "n_pairs", "n_items"}``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np

from wobble.seeding import derive_seed
from wobble.studies.icl_bias.metrics import MEASURES, accuracy, effect, mean_accuracy, mean_effect, outcome_matrix
from wobble.studies.icl_bias.pairs import PAIRS

LEVELS = ("pair", "row", "dataset", "all")


class PairScores:
    """A pair's score records as items x prompt-set matrices per condition and measure."""

    def __init__(self, records: Sequence[Mapping]):
        self.records = list(records)
        self.uids = list(dict.fromkeys(r["uid"] for r in records))
        self.sets = sorted({r["set"] for r in records})
        self._by_cond: dict[str, list[Mapping]] = defaultdict(list)
        self.meta: dict[str, tuple[str, str | None]] = {}
        for r in records:
            self._by_cond[r["condition"]].append(r)
            self.meta[r["condition"]] = (r["intervention"], r["target"])

    @property
    def conditions(self) -> list[str]:
        return list(self._by_cond)

    def matrix(self, condition: str, measure: str) -> np.ndarray:
        return outcome_matrix(self._by_cond[condition], self.uids, self.sets, measure)


def groups(pairs: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """``{(level, group): [pair, ...]}`` for the available ``pairs`` (group names as in the paper's tables)."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key in pairs:
        p = PAIRS[key]
        for level, group in (("pair", key), ("row", f"{p.code}/{p.row}"), ("dataset", p.code), ("all", "all")):
            out[(level, group)].append(key)
    return dict(out)


def _row(level, group, members, condition, meta, measure, triple, n_items) -> dict:
    intervention, target = meta
    return {"level": level, "group": group, "code": PAIRS[members[0]].code if level != "all" else "all",
            "condition": condition, "intervention": intervention, "target": target, "measure": measure,
            "value": triple[0], "ci_low": triple[1], "ci_high": triple[2], "n_pairs": len(members),
            "n_items": n_items}


def summarize(records: Iterable[Mapping], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Every level's rows (module docstring) from one model's score records of all its pairs."""
    by_pair: dict[str, list[Mapping]] = defaultdict(list)
    for r in records:
        by_pair[r["pair"]].append(r)
    scores = {k: PairScores(v) for k, v in by_pair.items()}
    rows: list[dict] = []
    for (level, group), members in groups(scores).items():
        conds = [c for c in scores[members[0]].conditions if all(c in scores[m].conditions for m in members)]
        n_items = sum(len(scores[m].uids) for m in members)
        for cond in conds:
            meta = scores[members[0]].meta[cond]
            for measure in MEASURES:
                mats = [scores[m].matrix(cond, measure) for m in members]
                s = derive_seed(seed, level, group, cond, measure)
                triple = accuracy(mats[0], n=n_boot, seed=s) if len(mats) == 1 else mean_accuracy(mats, n=n_boot, seed=s)
                rows.append(_row(level, group, members, cond, meta, measure, triple, n_items))
            target = meta[1]
            if target is None or "baseline" not in conds:
                continue
            pairs = [(scores[m].matrix(cond, target), scores[m].matrix("baseline", target)) for m in members]
            s = derive_seed(seed, level, group, cond, "effect")
            triple = effect(*pairs[0], n=n_boot, seed=s) if len(pairs) == 1 else mean_effect(pairs, n=n_boot, seed=s)
            rows.append(_row(level, group, members, cond, meta, "effect", triple, n_items))
    return rows
