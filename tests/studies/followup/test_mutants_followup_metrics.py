"""followup metrics: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

import math

import pytest

from wobble.errors import DataError
from wobble.seeding import derive_seed
from wobble.studies.followup.metrics import (QUANTITIES, average, extreme_variants, follow_up_metrics, score_dialogue,
                                             summarize)

BEFORE = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
AFTER = [1, 0, 0, 1, 1, 0, 0, 0, 0, 0]


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
