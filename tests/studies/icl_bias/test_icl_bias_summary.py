"""icl_bias summary rows (wobble.studies.icl_bias.summary).

Every row is checked against the metric functions it rests on (:mod:`wobble.studies.icl_bias.metrics`):
one pair's matrices give :func:`accuracy` / :func:`effect`, several pairs' give :func:`mean_accuracy` /
:func:`mean_effect`, each from the seed derived from the row's level, group, condition and measure.
"""

from __future__ import annotations

import pytest

from wobble.seeding import derive_seed
from wobble.studies.icl_bias import summary as S
from wobble.studies.icl_bias.metrics import accuracy, effect, mean_accuracy, mean_effect, outcome_matrix

A, B = "nli_entailment_length", "nli_entailment_negation"   # both NLI, rows NLI/length and NLI/negation


def _rec(pair, condition, uid, s, h1, pred):
    intervention, _, target = condition.partition("-")
    return {"pair": pair, "condition": condition, "intervention": intervention, "target": target or None, "set": s,
            "uid": uid, "h1": h1, "h2": 1 - h1, "pred": pred}


def _answer(k):
    return (None, 0, 1, 1, 0, 1, 0)[k % 7]


def _records():
    """Pairs A and B, 14 items x 3 prompt sets each, answers varied so that every interval is wide."""
    recs = []
    for s in (0, 1, 2):
        for i in range(14):
            h1 = (i * 5 + 1) % 3 % 2
            recs.append(_rec(A, "baseline", f"a{i}", s, h1, _answer(i * 3 + s)))
            recs.append(_rec(A, "verbalizer-h2", f"a{i}", s, h1, _answer(i * 5 + 2 * s + 1)))
            recs.append(_rec(B, "baseline", f"b{i}", s, h1, _answer(i + 4 * s + 2)))
            recs.append(_rec(B, "verbalizer-h2", f"b{i}", s, h1, _answer(i * 2 + s + 3)))
        recs.append(_rec(A, "instruction-h1", "a0", s, 1, s % 2))  # asked of pair A only
    return recs


def _matrix(recs, pair, condition, measure):
    mine = [r for r in recs if r["pair"] == pair]
    uids = list(dict.fromkeys(r["uid"] for r in mine))
    sets = sorted({r["set"] for r in mine})
    return outcome_matrix([r for r in mine if r["condition"] == condition], uids, sets, measure)


def _expected(recs, row, n, seed):
    members = {"pair": {A: [A], B: [B]}, "row": {"NLI/length": [A], "NLI/negation": [B]},
               "dataset": {"NLI": [A, B]}, "all": {"all": [A, B]}}[row["level"]][row["group"]]
    s = derive_seed(seed, row["level"], row["group"], row["condition"], row["measure"])
    if row["measure"] == "effect":
        pairs = [(_matrix(recs, m, row["condition"], row["target"]), _matrix(recs, m, "baseline", row["target"]))
                 for m in members]
        return effect(*pairs[0], n=n, seed=s) if len(pairs) == 1 else mean_effect(pairs, n=n, seed=s)
    mats = [_matrix(recs, m, row["condition"], row["measure"]) for m in members]
    return accuracy(mats[0], n=n, seed=s) if len(mats) == 1 else mean_accuracy(mats, n=n, seed=s)


def test_every_row_is_its_metric_with_the_rows_own_seed():
    recs = _records()
    rows = S.summarize(recs, n_boot=150, seed=4)
    assert len(rows) == 2 * 2 * (2 * 3 + 1) + 2 * (2 * 3 + 1) + 2 * (3 + 1)  # pair+row levels, then dataset, all
    for row in rows:
        assert (row["value"], row["ci_low"], row["ci_high"]) == pytest.approx(_expected(recs, row, 150, 4),
                                                                            nan_ok=True), row
    assert S.summarize(recs) == S.summarize(recs, n_boot=1000, seed=0)
    assert S.summarize(recs) != S.summarize(recs, n_boot=1001, seed=0)


def test_a_rows_fields_and_conditions_shared_by_every_member():
    rows = S.summarize(_records(), n_boot=50, seed=0)
    first = rows[0]
    assert {k: first[k] for k in ("level", "group", "code", "condition", "intervention", "target", "measure",
                                  "n_pairs", "n_items")} == {
        "level": "pair", "group": A, "code": "NLI", "condition": "baseline", "intervention": "baseline",
        "target": None, "measure": "h1", "n_pairs": 1, "n_items": 14}
    assert first["ci_low"] <= first["value"] <= first["ci_high"] and first["ci_low"] < first["ci_high"]
    assert {r["code"] for r in rows if r["level"] == "all"} == {"all"}
    assert {r["code"] for r in rows if r["level"] != "all"} == {"NLI"}
    # instruction-h1 was asked of pair A only: no row of a group that holds pair B
    assert {(r["level"], r["group"]) for r in rows if r["condition"] == "instruction-h1"} == {
        ("pair", A), ("row", "NLI/length")}
    assert {r["level"] for r in rows} <= set(S.LEVELS) and S.LEVELS == ("pair", "row", "dataset", "all")


def test_without_a_baseline_there_is_no_effect():
    recs = [r for r in _records() if r["condition"] != "baseline"]
    assert not [r for r in S.summarize(recs, n_boot=20, seed=0) if r["measure"] == "effect"]
