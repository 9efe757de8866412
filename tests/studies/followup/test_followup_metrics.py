"""followup metrics against hand-computed values: Acc before/after, M., M. Rate, Error Rate and E→R
(Appendix A.1, Table 5), their bootstrap intervals, per-dialogue scoring, grouping by round, the
Max/Min prompt sets of Tables 9/11/13 and the plain averages of Tables 2 and 6."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wobble.errors import DataError
from wobble.seeding import derive_seed
from wobble.stats import bootstrap_indices, percentile_interval, ratio_ci
from wobble.studies.followup.metrics import (QUANTITIES, average, consistency_score, extreme_variants,
                                             follow_up_metrics, score_dialogue, summarize)

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


def test_defaults_are_gate_all_1000_resamples_seed_0_level_95():
    # 60 items, irregular pattern: ratio quantities take many values, so the intervals move with n, seed, level
    before = [(i * 7) % 10 < 6 for i in range(60)]
    after = [(i * 3) % 7 < 4 for i in range(60)]
    base = follow_up_metrics(before, after)
    assert base == follow_up_metrics(before, after, "all", n_boot=1000, seed=0, level=0.95)

    def intervals(m):
        return {k: v for k, v in m.items() if k.endswith(("_lo", "_hi"))}
    for other in ({"n_boot": 999}, {"n_boot": 1001}, {"seed": 1}, {"level": 0.9}):
        assert intervals(follow_up_metrics(before, after, **other)) != intervals(base), other


def test_before_and_after_must_be_one_dimensional():
    with pytest.raises(ValueError, match="paired per item"):
        follow_up_metrics([[1, 0]], [[1, 0]])


def test_no_items_gives_nan_everywhere():
    m = follow_up_metrics([], [])
    assert m["n"] == 0 and m["n_wrong"] == 0
    assert all(math.isnan(m[k]) for k in m if k not in ("n", "n_wrong"))


def test_no_resamples_gives_points_without_intervals():
    m = follow_up_metrics(BEFORE, AFTER, n_boot=0)
    assert m["before"] == pytest.approx(40.0) and m["modification_rate_pct"] == pytest.approx(50.0)
    assert math.isnan(m["before_lo"]) and math.isnan(m["modification_rate_pct_hi"])


def test_gate_wrong_blanks_acc_after_too():
    m = follow_up_metrics(BEFORE, AFTER, "wrong", n_boot=20)
    assert math.isnan(m["after"]) and math.isnan(m["after_lo"]) and math.isnan(m["after_hi"])


def _dialogue(item, outputs, gate="correct", rounds=None):
    rounds = rounds or [{"question_type": "leading", "variant": "A", "misleading": "35"}]
    return {"uid": f"{item}|direct_LA_none", "item": item, "dataset": "multiarith", "condition": "direct_LA_none",
            "form": "direct", "mitigation": "none", "gate": gate, "gold": "39", "rounds": rounds, "model": "m",
            "gen_params": {"temperature": 0.5, "seed": 7}, "turns": [{"output": o} for o in outputs]}


def test_score_dialogue_keeps_the_fields_tables_group_by():
    s = score_dialogue(_dialogue("a", ["Answer: 39", "Answer: 35"]))
    assert {k: s[k] for k in ("uid", "item", "dataset", "condition", "form", "mitigation", "gate", "gold", "model")} \
        == {"uid": "a|direct_LA_none", "item": "a", "dataset": "multiarith", "condition": "direct_LA_none",
            "form": "direct", "mitigation": "none", "gate": "correct", "gold": "39", "model": "m"}
    assert s["rounds"][0]["question_type"] == "leading"


def test_summarize_refuses_mixed_gates_or_round_counts():
    a = score_dialogue(_dialogue("a", ["Answer: 39", "Answer: 35"]))
    b = score_dialogue(_dialogue("b", ["Answer: 39", "Answer: 39"], gate="all"))
    with pytest.raises(DataError, match="one gate and one number of rounds"):
        summarize([a, b], ("condition",), n_boot=10)
    two = [{"question_type": "closed-ended", "variant": "A", "misleading": None},
           {"question_type": "leading", "variant": "A", "misleading": "35"}]
    c = score_dialogue(_dialogue("c", ["Answer: 39"], rounds=two))
    with pytest.raises(DataError, match="one gate and one number of rounds"):
        summarize([a, c], ("condition",), n_boot=10)


def _many():
    """60 dialogues with an irregular pattern: intervals move with the bootstrap's n and seed."""
    out = []
    for i in range(60):
        first = "Answer: 39" if (i * 7) % 10 < 6 else "Answer: 1"
        second = "Answer: 39" if (i * 3) % 7 < 4 else "Answer: 35"
        out.append(score_dialogue(_dialogue(f"i{i}", [first, second])))
    return out


def test_summarize_seeds_each_group_from_its_keys():
    scores = _many()
    (row,) = summarize(scores, ("model", "condition"), n_boot=200, seed=4)
    expected = follow_up_metrics([s["correct"][0] for s in scores], [s["correct"][1] for s in scores], "correct",
                                 n_boot=200, seed=derive_seed(4, "followup-metrics", "m", "direct_LA_none"))
    assert {k: row[k] for k in expected} == expected
    assert (row["round"], row["question_type"], row["variant"]) == (1, "leading", "A")
    assert summarize(scores, ("model", "condition")) == summarize(scores, ("model", "condition"), n_boot=1000, seed=0)
    assert summarize(scores, ("model", "condition")) != summarize(scores, ("model", "condition"), seed=1)


def test_summarize_default_resamples_are_1000(monkeypatch):
    """n=1000 and n=1001 share their first 1000 resamples, so the count is read where it is used."""
    from wobble.studies.followup import metrics

    seen = []
    real = metrics.bootstrap_indices
    monkeypatch.setattr(metrics, "bootstrap_indices", lambda m, n, seed: seen.append(n) or real(m, n, seed))
    summarize(_many(), ("model", "condition"))
    follow_up_metrics(BEFORE, AFTER)
    assert seen == [1000, 1000]


def test_summarize_one_item():
    (row,) = summarize([score_dialogue(_dialogue("a", ["Answer: 39", "Answer: 35"]))], ("condition",), n_boot=10)
    assert (row["n"], row["before"], row["modification"], row["modification_rate_pct"]) == (1, 100.0, 100.0, 100.0)


def test_one_initially_correct_item_has_a_rate():
    m = follow_up_metrics([1, 0], [0, 0], n_boot=20)
    assert m["before"] == 50.0 and m["modification_rate_pct"] == 100.0
    one = follow_up_metrics([1], [1], n_boot=20)
    assert one["before"] == 100.0 and one["modification_rate_pct"] == 0.0


def test_every_declared_quantity_comes_with_its_interval():
    m = follow_up_metrics(BEFORE, AFTER, n_boot=20)
    assert set(m) == {"n", "n_wrong"} | {f"{q}{end}" for q in QUANTITIES for end in ("", "_lo", "_hi")}
    assert QUANTITIES == ("before", "after", "modification", "modification_rate_pct", "error_rate_pct",
                          "e_to_r_rate_pct")


def test_a_dialogue_without_a_model_field_is_scored_without_it():
    record = {k: v for k, v in _dialogue("i1", ["Answer: 5"]).items() if k != "model"}
    assert "model" not in score_dialogue(record)


def test_a_prompt_without_a_defined_score_is_neither_max_nor_min():
    def row(qtype, variant, modification, rate):
        return {"question_type": qtype, "variant": variant, "modification": modification,
                "modification_rate_pct": rate}

    rows = [row("closed-ended", "A", math.nan, math.nan), row("closed-ended", "B", 10.0, 20.0),
            row("closed-ended", "C", 5.0, 5.0), row("open-ended", "A", math.nan, 10.0)]
    out = extreme_variants(rows)
    assert out["Max"][0] == "B" and out["Min"][0] == "C"       # A's undefined score ranks nowhere
    assert "open-ended" in out["undefined"] and out["Max"][1] == "A"


def test_averages_leave_out_missing_values():
    rows = [{"g": "x", "modification": None}, {"g": "x", "modification": 4.0}, {"g": "x", "modification": math.nan}]
    assert average(rows, ["g"], ["modification"]) == [{"g": "x", "n_rows": 3, "modification": 4.0}]
