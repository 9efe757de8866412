"""followup metrics against hand-computed values: Acc before/after, M., M. Rate, Error Rate and E→R
(Appendix A.1, Table 5), their bootstrap intervals, per-dialogue scoring, grouping by round, the
Max/Min prompt sets of Tables 9/11/13 and the plain averages of Tables 2 and 6."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.errors import DataError
from wobble.stats import bootstrap_indices, percentile_interval, ratio_ci
from wobble.studies.followup.metrics import (average, consistency_score, extreme_variants, follow_up_metrics,
                                             score_dialogue, summarize)

# 10 items: 4 correct at first (0-3); items 1 and 2 turn wrong; item 4 (initially wrong) turns right.
BEFORE = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
AFTER = [1, 0, 0, 1, 1, 0, 0, 0, 0, 0]


def test_follow_up_metrics_hand_computed():
    m = follow_up_metrics(BEFORE, AFTER, "all", n_boot=200, seed=3)
    assert m["n"] == 10 and m["n_wrong"] == 6
    assert m["before"] == pytest.approx(40.0)
    assert m["after"] == pytest.approx(20.0)  # items 0 and 3; item 4 was never questioned in the paper's protocol
    assert m["modification"] == pytest.approx(20.0)  # = 40 - 20
    assert m["modification_rate_pct"] == pytest.approx(50.0)  # 2 of the 4 initially correct
    assert m["error_rate_pct"] == pytest.approx(60.0)
    assert m["e_to_r_rate_pct"] == pytest.approx(100.0 / 6)  # 1 of the 6 initially wrong
    for q in ("before", "after", "modification", "modification_rate_pct", "error_rate_pct", "e_to_r_rate_pct"):
        assert m[f"{q}_lo"] <= m[q] <= m[f"{q}_hi"]


def test_intervals_are_the_item_bootstrap_of_wobble_stats():
    m = follow_up_metrics(BEFORE, AFTER, "all", n_boot=300, seed=11)
    b, a = np.array(BEFORE, bool), np.array(AFTER, bool)
    idx = bootstrap_indices(10, 300, 11)
    lo, hi = percentile_interval(100.0 * (b & ~a)[idx].mean(axis=1))
    assert (m["modification_lo"], m["modification_hi"]) == pytest.approx((lo, hi))
    lo, hi = ratio_ci((b & ~a).astype(float), b.astype(float), idx)
    assert (m["modification_rate_pct_lo"], m["modification_rate_pct_hi"]) == pytest.approx((100 * lo, 100 * hi))
    assert follow_up_metrics(BEFORE, AFTER, "all", n_boot=300, seed=11) == m  # deterministic


def test_gate_blanks_what_the_run_cannot_measure():
    only_correct = follow_up_metrics(BEFORE, AFTER, "correct", n_boot=50)
    assert math.isnan(only_correct["e_to_r_rate_pct"]) and only_correct["modification"] == pytest.approx(20.0)
    only_wrong = follow_up_metrics(BEFORE, AFTER, "wrong", n_boot=50)
    assert math.isnan(only_wrong["modification"]) and math.isnan(only_wrong["modification_rate_pct"])
    assert only_wrong["e_to_r_rate_pct"] == pytest.approx(100.0 / 6)
    none_right = follow_up_metrics([0, 0], [0, 1], "all", n_boot=50)
    assert math.isnan(none_right["modification_rate_pct"]) and none_right["e_to_r_rate_pct"] == pytest.approx(50.0)
    with pytest.raises(ValueError, match="paired per item"):
        follow_up_metrics([1, 0], [1], "all")


def dialogue(item, outputs, rounds=1, gate="correct", condition="direct_LA_none", gold="39"):
    specs = [{"question_type": q, "variant": "A", "misleading": None}
             for q in ("closed-ended", "open-ended", "leading")[:rounds]] if rounds > 1 else \
        [{"question_type": "leading", "variant": "A", "misleading": "35"}]
    return {"uid": f"{item}|{condition}", "item": item, "dataset": "multiarith", "condition": condition,
            "form": "direct" if rounds == 1 else "progressive", "mitigation": "none", "gate": gate, "gold": gold,
            "rounds": specs, "model": "m", "gen_params": {"temperature": 0.5, "seed": 7},
            "turns": [{"output": o} for o in outputs]}


def test_score_dialogue_reads_every_reply_and_carries_the_last_answer():
    s = score_dialogue(dialogue("a", ["Answer: 39", "Answer: 35"]))
    assert s["answers"] == ["39", "35"] and s["correct"] == [True, False]
    assert (s["temperature"], s["sample_seed"], s["asked_rounds"]) == (0.5, 7, 1)
    p = score_dialogue(dialogue("b", ["Answer: 40"], rounds=3, condition="progressive_CA.OA.LA_none"))
    assert p["answers"] == ["40"] * 4 and p["correct"] == [False] * 4 and p["asked_rounds"] == 0
    with pytest.raises(DataError, match="record a\\|direct_LA_none: at most 2 replies"):
        score_dialogue(dialogue("a", ["Answer: 39"] * 3))
    with pytest.raises(DataError, match="at least the initial reply"):
        score_dialogue(dialogue("a", []))


def test_summarize_groups_by_condition_and_round():
    direct = [score_dialogue(dialogue(i, o)) for i, o in
              [("a", ["Answer: 39", "Answer: 35"]), ("b", ["Answer: 39", "Answer: 39"]), ("c", ["Answer: 1"]),
               ("d", ["Answer: 39", "I am not sure."])]]
    prog = [score_dialogue(dialogue(i, o, rounds=3, condition="progressive_CA.OA.LA_none")) for i, o in
            [("a", ["Answer: 39", "Answer: 39", "Answer: 38", "Answer: 35"]),
             ("b", ["Answer: 39", "Answer: 39", "Answer: 39", "Answer: 39"])]]
    rows = summarize(direct + prog, ("model", "dataset", "condition"), n_boot=100, seed=0)
    assert [(r["condition"], r["round"], r["question_type"]) for r in rows] == [
        ("direct_LA_none", 1, "leading"), ("progressive_CA.OA.LA_none", 1, "closed-ended"),
        ("progressive_CA.OA.LA_none", 2, "open-ended"), ("progressive_CA.OA.LA_none", 3, "leading")]
    d = rows[0]  # 3 of 4 correct at first; a and d (no answer) turn wrong
    assert (d["n"], d["before"], d["after"], d["modification"]) == (4, 75.0, 25.0, 50.0)
    assert d["modification_rate_pct"] == pytest.approx(200.0 / 3)
    assert [r["modification"] for r in rows[1:]] == [0.0, 50.0, 50.0]
    assert [r["modification_rate_pct"] for r in rows[1:]] == [0.0, 50.0, 50.0]
    with pytest.raises(DataError, match="one score per item"):
        summarize(direct + direct[:1], ("condition",), n_boot=10)


def test_max_min_prompt_sets_by_half_m_plus_half_rate():
    def row(q, v, m, rate):
        return {"question_type": q, "variant": v, "modification": m, "modification_rate_pct": rate}
    rows = [row("closed-ended", "A", 10, 20), row("closed-ended", "B", 30, 40), row("closed-ended", "C", 5, 5),
            row("open-ended", "A", 10, 10), row("open-ended", "B", 10, 10), row("open-ended", "C", 0, 30),
            row("leading", "A", 50, 60), row("leading", "B", float("nan"), float("nan")), row("leading", "C", 40, 90)]
    assert consistency_score(rows[1]) == 35.0
    # closed: A 15, B 35, C 5; open: A 10, B 10, C 15; leading: A 55, C 65 (B undefined)
    assert extreme_variants(rows) == {"Max": ("B", "C", "C"), "Min": ("C", "A", "A"), "undefined": ()}
    # no leading rows (or none with an initially correct item): annotator A there, and said so
    assert extreme_variants(rows[:6]) == {"Max": ("B", "C", "A"), "Min": ("C", "A", "A"), "undefined": ("leading",)}


def test_average_over_datasets_or_prompts():
    rows = [{"task_type": "Math", "modification": 10.0, "modification_rate_pct": 20.0},
            {"task_type": "Math", "modification": 20.0, "modification_rate_pct": float("nan")},
            {"task_type": "Sym", "modification": 1.0, "modification_rate_pct": 3.0}]
    assert average(rows, ("task_type",)) == [
        {"task_type": "Math", "n_rows": 2, "modification": 15.0, "modification_rate_pct": 20.0},
        {"task_type": "Sym", "n_rows": 1, "modification": 1.0, "modification_rate_pct": 3.0}]
