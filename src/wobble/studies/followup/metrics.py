"""The paper's metrics (Appendix A.1), per item and per group, with 95% bootstrap intervals over items.

For a group of items Q questioned the same way (dataset, model, condition, temperature, ...):

* Acc_before = share of Q answered correctly at first;
* Acc_after (round r) = share of Q correct after round r. Only initially correct items are questioned
  (§3.1), so an initially wrong item counts as wrong after (the paper's A.1 over all of Q);
* M. = Acc_before − Acc_after = share of Q correct at first and wrong after round r;
* M. Rate = M. / Acc_before = share of the initially correct items that turned wrong;
* Error Rate = 1 − Acc_before; E→R Rate = share of the initially WRONG items correct after round r
  (Table 5: the mechanism applied to initially wrong answers).

All in percent, as the paper prints them. Which of these a run can give depends on its ``gate``
(:mod:`.mechanism`): ``correct`` gives no E→R, ``wrong`` no M., ``all`` both; the others are NaN.
Intervals: percentile bootstrap over items (:mod:`wobble.stats`), one set of resamples per group
(shared by its rounds and quantities, so intervals of one group are coherent).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np

from wobble.errors import DataError
from wobble.seeding import derive_seed
from wobble.stats import bootstrap_indices, percentile_interval, ratio_ci
from wobble.studies.followup.extractors import extract_answer, is_correct
from wobble.studies.followup.prompts import BENCHMARKS, PROGRESSIVE_ORDER, VARIANTS

NAN = float("nan")
#: The quantities of one group and round, each with an interval (``<name>_lo``, ``<name>_hi``).
QUANTITIES = ("before", "after", "modification", "modification_rate_pct", "error_rate_pct", "e_to_r_rate_pct")


def score_dialogue(record: Mapping) -> dict:
    """One finished dialogue -> its item score: the answer read from every reply (re-extracted from the
    raw ``output``, so a fixed extractor needs no new model run) and whether it is correct after the
    initial answer (index 0) and after each round; a round the gate did not ask keeps the last answer."""
    turns = record.get("turns") or []
    if not turns:
        raise DataError("(dialogues)", record.get("uid", "?"), "at least the initial reply in 'turns'")
    benchmark = BENCHMARKS[record["dataset"]]
    answers = [extract_answer(benchmark, t["output"]) for t in turns]
    n_rounds = len(record["rounds"])
    if len(turns) > n_rounds + 1:
        raise DataError("(dialogues)", record["uid"], f"at most {n_rounds + 1} replies, got {len(turns)}")
    carried = [answers[min(k, len(answers) - 1)] for k in range(n_rounds + 1)]
    keep = ("uid", "item", "dataset", "condition", "form", "mitigation", "gate", "gold", "rounds", "model")
    return {**{k: record[k] for k in keep if k in record},
            "temperature": (record.get("gen_params") or {}).get("temperature"),
            "sample_seed": (record.get("gen_params") or {}).get("seed"),
            "answers": carried, "correct": [is_correct(a, record["gold"]) for a in carried],
            "asked_rounds": len(turns) - 1}


def _pct(x: float) -> float:
    return 100.0 * x


def follow_up_metrics(before: Sequence[bool], after: Sequence[bool], gate: str = "all", *, n_boot: int = 1000,
                      seed: int = 0, level: float = 0.95) -> dict:
    """The A.1 metrics of one group and round from per-item correctness before and after, with intervals.

    Returns ``n``, ``n_wrong`` and for each of :data:`QUANTITIES` its value and ``<name>_lo`` /
    ``<name>_hi`` (percent); M.-side quantities are NaN for ``gate='wrong'``, E→R for ``gate='correct'``.
    """
    b, a = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    if b.shape != a.shape or b.ndim != 1:
        raise ValueError(f"before/after must be paired per item, got shapes {b.shape} and {a.shape}")
    m = b.size
    flip, kept, wrong, fixed = b & ~a, b & a, ~b, ~b & a
    idx = bootstrap_indices(m, n_boot, seed)

    def mean(x):
        if m == 0:
            return NAN, NAN, NAN
        lo, hi = percentile_interval(100.0 * x[idx].mean(axis=1), level) if idx.size else (NAN, NAN)
        return _pct(float(x.mean())), lo, hi

    def ratio(num, den):
        if den.sum() == 0:
            return NAN, NAN, NAN
        lo, hi = ratio_ci(num.astype(float), den.astype(float), idx, level) if idx.size else (NAN, NAN)
        return _pct(float(num.sum() / den.sum())), _pct(lo), _pct(hi)

    values = {"before": mean(b), "after": mean(kept), "modification": mean(flip),
              "modification_rate_pct": ratio(flip, b), "error_rate_pct": mean(wrong),
              "e_to_r_rate_pct": ratio(fixed, wrong)}
    blocked = {"wrong": ("after", "modification", "modification_rate_pct"), "correct": ("e_to_r_rate_pct",)}
    for name in blocked.get(gate, ()):
        values[name] = (NAN, NAN, NAN)
    out: dict = {"n": int(m), "n_wrong": int(wrong.sum())}
    for name, (v, lo, hi) in values.items():
        out.update({name: v, f"{name}_lo": lo, f"{name}_hi": hi})
    return out


def summarize(scores: Iterable[Mapping], by: Sequence[str], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """One row per group (the values of ``by``) and round: the group's keys, ``round`` (1-based),
    ``question_type``, ``variant`` and :func:`follow_up_metrics`. Groups in first-seen order; an item
    twice in one group is a DataError (its items are the unit resampled)."""
    groups: dict[tuple, list[Mapping]] = defaultdict(list)
    for s in scores:
        groups[tuple(s.get(k) for k in by)].append(s)
    rows = []
    for key, items in groups.items():
        seen, gates = set(), {s["gate"] for s in items}
        for s in items:
            if s["item"] in seen:
                raise DataError("(scores)", s["uid"], f"one score per item in group {dict(zip(by, key))}")
            seen.add(s["item"])
        rounds = items[0]["rounds"]
        if len(gates) != 1 or any(len(s["rounds"]) != len(rounds) for s in items):
            raise DataError("(scores)", str(dict(zip(by, key))), "one gate and one number of rounds per group")
        (gate,) = gates
        group_seed = derive_seed(seed, "followup-metrics", *key)
        for r, spec in enumerate(rounds, start=1):
            row = {**dict(zip(by, key)), "round": r, "question_type": spec["question_type"], "variant": spec["variant"]}
            row.update(follow_up_metrics([s["correct"][0] for s in items], [s["correct"][r] for s in items], gate,
                                         n_boot=n_boot, seed=group_seed))
            rows.append(row)
    return rows


def consistency_score(row: Mapping) -> float:
    """0.5·M. + 0.5·M. Rate, how Tables 9/11/13 rank the annotators' prompts (higher = less consistent)."""
    return 0.5 * row["modification"] + 0.5 * row["modification_rate_pct"]


def extreme_variants(direct_rows: Iterable[Mapping]) -> dict[str, tuple[str, ...]]:
    """The Progressive Form's "Max" and "Min" prompt sets (Tables 9, 11, 13): for each follow-up type in
    the Progressive order, the annotator whose Direct-Form prompt gives the highest / lowest
    :func:`consistency_score` (rows of one dataset; ties go to the earlier of A, B, C). A type with no
    defined score (no run, or no initially correct item) gets annotator A and is listed in ``"undefined"``."""
    best: dict[str, dict[str, float]] = defaultdict(dict)
    for row in direct_rows:
        score = consistency_score(row)
        if not math.isnan(score):
            best[row["question_type"]][row["variant"]] = score
    out: dict[str, tuple[str, ...]] = {"undefined": tuple(q for q in PROGRESSIVE_ORDER if not best.get(q))}
    for label, sign in (("Max", -1.0), ("Min", 1.0)):
        out[label] = tuple(min(best[q], key=lambda v: (sign * best[q][v], VARIANTS.index(v))) if best.get(q) else "A"
                           for q in PROGRESSIVE_ORDER)
    return out


def average(rows: Iterable[Mapping], by: Sequence[str], values: Sequence[str] = ("modification",
            "modification_rate_pct")) -> list[dict]:
    """Plain means of ``values`` per group of ``by`` (Table 2: over the datasets of a task type; Table 6:
    over the prompts A/B/C), with ``n_rows``; NaN values are left out (NaN when none is left)."""
    groups: dict[tuple, list[Mapping]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in by)].append(row)
    out = []
    for key, items in groups.items():
        row = {**dict(zip(by, key)), "n_rows": len(items)}
        for v in values:
            xs = [float(r[v]) for r in items if r.get(v) is not None and not math.isnan(float(r[v]))]
            row[v] = sum(xs) / len(xs) if xs else NAN
        out.append(row)
    return out
